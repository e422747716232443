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

Then the store commands, which need SQLAlchemy and so have their own baseline,
``python -c "import numpy, sqlalchemy"``: ``surveykit counts --survey`` and the
text ``surveykit report --survey`` on a small SQLite database the benchmark
builds first in a temporary folder (``init``, ``survey add`` of the sample
survey, ``import`` of its 1,172 answers; untimed). Their ratios are printed
against that baseline; issue 25 sets no goal for them, so they never change the
exit status.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
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


def _sample_store(surveykit: list[str], folder: Path) -> str:
    """The URL of an SQLite database in ``folder`` with the sample survey and its answers."""
    samples = Path(__file__).resolve().parent.parent / "sample_data"
    url = f"sqlite:///{folder / 'bench.db'}"
    for argv in (["init", "--db", url],
                 ["survey", "add", str(samples / "academic_integrity.toml"), "--db", url],
                 ["import", str(samples / "responses_long.csv"), "--survey", "academic_integrity",
                  "--db", url]):
        subprocess.run([*surveykit, *argv], check=True, capture_output=True, env=_ENV)
    return url


def _time(commands: dict[str, list[str]], repeats: int
          ) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Wall and CPU seconds of ``repeats`` interleaved rounds of ``commands``, after one
    untimed run of each (it warms the file cache and writes bytecode)."""
    for argv in commands.values():
        _run(argv)
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(repeats):
        for name, argv in commands.items():
            wall, cpu = _run(argv)
            walls[name].append(wall)
            cpus[name].append(cpu)
    return walls, cpus


def _table(walls: dict[str, list[float]], cpus: dict[str, list[float]]
           ) -> dict[str, float]:
    """Print each command's median wall and CPU time and ratios to the first (the baseline);
    returns each command's ratio of wall time."""
    baseline = next(iter(walls))
    base_wall = statistics.median(walls[baseline])
    base_cpu = statistics.median(cpus[baseline])
    print(f"{'command':36s} {'wall s':>8s} {'ratio':>6s} {'cpu s':>8s} {'ratio':>6s}")
    ratios = {}
    for name in walls:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        ratios[name] = wall / base_wall
        print(f"{name:36s} {wall:8.3f} {ratios[name]:6.2f} {cpu:8.3f} {cpu / base_cpu:6.2f}")
    return ratios


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
    walls, cpus = _time(commands, args.repeats)
    print(f"median of {args.repeats} interleaved runs")
    ratios = _table(walls, cpus)
    missed = [f"{name}: {ratio:.2f}x the baseline's wall time (goal <= {MAX_RATIO}x)"
              for name, ratio in list(ratios.items())[1:] if ratio > MAX_RATIO]

    with tempfile.TemporaryDirectory() as folder:
        url = _sample_store(surveykit, Path(folder))
        survey = ["--survey", "academic_integrity", "--db", url]
        store_commands = {
            'python -c "import numpy, sqlalchemy"': [sys.executable, "-c",
                                                     "import numpy, sqlalchemy"],
            "surveykit counts --survey": [*surveykit, "counts", *survey],
            "surveykit report --survey (text)": [*surveykit, "report", *survey],
        }
        walls, cpus = _time(store_commands, args.repeats)
    print("store commands on a small SQLite database (no goal in issue 25)")
    _table(walls, cpus)
    for line in missed:
        print(f"MISSED {line}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
