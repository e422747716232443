"""Benchmark: how long the command line takes to start, against ``python -c "import numpy"``.

Run:  python benchmarks/bench_startup.py [--repeats 5]

Runs, interleaved (one of each per round, so a busy machine slows all of them
alike), ``repeats`` rounds of

* ``python -c "import numpy"`` (the baseline: every surveykit command needs numpy),
* ``surveykit --help``,
* ``surveykit estimate --design warner --param p=0.6 --counts yes=30,no=50``,

each as a fresh process of this interpreter (the installed console script when
it is next to ``sys.executable``, else ``python -m surveykit``) with bytecode
caching on (an untimed first run writes it, as installing does), and prints the
median wall time and the median CPU time (user + system of the child) of each,
and each command's ratio to the baseline. The goal (issue 25): both commands
within 3x of the baseline, in wall time. CPU time is printed too because on a
loaded machine wall time includes waiting for a core. Exits with status 1 if a
goal is missed, so CI can run it.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

#: The goal from issue 25's "Done when": each command within this multiple of the baseline.
MAX_RATIO = 3.0


def _surveykit() -> list[str]:
    script = Path(sys.executable).parent / "surveykit"
    return [str(script)] if script.exists() else [sys.executable, "-m", "surveykit"]


#: The children's environment: bytecode is written and read, as an installed copy has it (pip
#: compiles on install); PYTHONDONTWRITEBYTECODE would make every run compile surveykit anew,
#: while numpy, the baseline, comes compiled.
_ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def _run(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one run of ``argv``, which must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                   env=_ENV)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    surveykit = _surveykit()
    commands = {
        'python -c "import numpy"': [sys.executable, "-c", "import numpy"],
        "surveykit --help": [*surveykit, "--help"],
        "surveykit estimate (warner)": [*surveykit, "estimate", "--design", "warner",
                                        "--param", "p=0.6", "--counts", "yes=30,no=50"],
    }
    env_note = os.environ.get("PYTHONPATH", "")
    print(f"interpreter {sys.executable}" + (f"  PYTHONPATH={env_note}" if env_note else ""))
    for argv in commands.values():  # warm the file cache and write bytecode once, untimed
        _run(argv)
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.repeats):
        for name, argv in commands.items():
            wall, cpu = _run(argv)
            walls[name].append(wall)
            cpus[name].append(cpu)

    baseline = next(iter(commands))
    base_wall = statistics.median(walls[baseline])
    base_cpu = statistics.median(cpus[baseline])
    print(f"median of {args.repeats} interleaved runs")
    print(f"{'command':32s} {'wall s':>8s} {'ratio':>6s} {'cpu s':>8s} {'ratio':>6s}")
    missed: list[str] = []
    for name in commands:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        ratio = wall / base_wall
        print(f"{name:32s} {wall:8.3f} {ratio:6.2f} {cpu:8.3f} {cpu / base_cpu:6.2f}")
        if name != baseline and ratio > MAX_RATIO:
            missed.append(f"{name}: {ratio:.2f}x the baseline's wall time (goal <= {MAX_RATIO}x)")
    for line in missed:
        print(f"MISSED {line}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
