"""Start-up (issue 25): a command imports only what it uses.

Each command runs in a fresh interpreter (the start-up is the point, so a separate process
is), exactly as the console script runs it, and prints the modules it imported. A command that
computes from numbers given on the command line must not pay for ``scipy.stats`` (about 1 s of
CPU: a normal quantile or a chi-square tail comes from surveykit.estimation.distributions) nor
for pandas, SQLAlchemy, Jinja, matplotlib or DuckDB, which only reading a database or
rendering needs. ``--help`` and the one-group estimate below import no scipy at all: that is
what keeps them within 3x of ``python -c "import numpy"`` (benchmarks/bench_startup.py).

The store commands that neither render nor fit (``counts``, ``check``, ``survey list``, the text
``report``) need SQLAlchemy and nothing else heavy: they run on a small real SQLite database
(the sample survey and its 1,172 answers, made by tests/migrated.py and tests/store_support.py)
and must not import pandas, scipy.stats, Jinja, matplotlib or DuckDB.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.migrated import filled_database
from tests.store_support import add_sample_survey_and_answers

ROOT = Path(__file__).resolve().parent.parent

#: What no command of the list below may import.
HEAVY = ("scipy.stats", "pandas", "sqlalchemy", "jinja2", "matplotlib", "duckdb")

_PROBE = """
import json, sys
from surveykit.cli import main
try:
    main(args=json.loads(sys.argv[1]), prog_name="surveykit")
except SystemExit as stop:
    code = stop.code or 0
else:
    code = 0
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""

ESTIMATE = ["estimate", "--design", "warner", "--param", "p=0.6", "--counts", "yes=30,no=50"]

# one fresh interpreter each (a second or so apiece): the commands of the issue, and the
# estimate with a don't-know share, which adds the exact binomial test
COMMANDS = {
    "help": (["--help"], ("scipy",)),
    "estimate": (ESTIMATE, ("scipy",)),
    "estimate-dont-know": (["estimate", "--design", "gw", "--param", "p=0.6", "--param", "q=0.2",
                            "--counts", "yes=30,no=50,dont_know=20"], ()),
    "design": (["design", "--epsilon", "1.1", "--dont-know", "0.2", "--target-se", "0.03"], ()),
    "power": (["power", "--design", "mirrored", "--param", "p=0.7", "--pi", "0.2", "--null", "0",
               "--n", "500"], ()),
}


def imported_by(args: list[str]) -> tuple[int, set[str]]:
    """Run ``surveykit ARGS`` in a fresh interpreter; its exit status and imported modules."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    report = json.loads(done.stderr.strip().splitlines()[-1])
    return report["code"], set(report["modules"])


def _loaded(prefix: str, modules: set[str]) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for name in modules)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_command_imports_no_heavy_module(name):
    args, also_forbidden = COMMANDS[name]
    code, modules = imported_by(args)
    assert code == 0, (name, code)
    heavy = sorted(m for m in (*HEAVY, *also_forbidden) if _loaded(m, modules))
    assert not heavy, f"surveykit {' '.join(args)} imported {heavy}"


#: What the store commands below may not import: SQLAlchemy they need.
STORE_HEAVY = ("scipy.stats", "pandas", "jinja2", "matplotlib", "duckdb")

SURVEY = ["--survey", "academic_integrity"]
STORE_COMMANDS = {
    "counts": ["counts", *SURVEY],
    "check": ["check", *SURVEY],
    "survey-list": ["survey", "list"],
    "report-text": ["report", *SURVEY],
}


@pytest.fixture(scope="module")
def sample_store(tmp_path_factory):
    """The URL of an SQLite database holding the sample survey and its answers."""
    with filled_database("sqlite", add_sample_survey_and_answers,
                         tmp_path_factory.mktemp("startup-store")) as url:
        yield url


@pytest.mark.parametrize("name", list(STORE_COMMANDS))
def test_store_command_imports_no_pandas_jinja_or_duckdb(name, sample_store):
    args = [*STORE_COMMANDS[name], "--db", sample_store]
    code, modules = imported_by(args)
    assert code == 0, (name, code)
    assert _loaded("sqlalchemy", modules)  # it did read the database
    heavy = sorted(m for m in STORE_HEAVY if _loaded(m, modules))
    assert not heavy, f"surveykit {' '.join(args)} imported {heavy}"


def test_the_probe_sees_a_heavy_import():
    # the same probe on a command that does read a database: it must see SQLAlchemy, or the
    # test above could not fail
    code, modules = imported_by(["counts", "--survey", "x", "--db", "sqlite:///:memory:"])
    assert _loaded("sqlalchemy", modules), code
