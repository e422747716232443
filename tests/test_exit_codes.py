"""Exit statuses and a clean stderr in real processes (issue 22, item 11): a missing extra is
status 1 in every command that needs one, and no library warning reaches the user
(SQLAlchemy's for ``?mode=ro`` URLs). Ctrl+C (130) and kill (143) are checked on real
processes in tests/test_error_contract.py, missing input files (status 2) there too.

A missing extra is made real by a folder first on PYTHONPATH whose module of that name
fails to import as a missing package does (ModuleNotFoundError).
"""

from __future__ import annotations

import gc
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from migrated import migrated_sqlite
from store_support import run_cli

from surveykit.cli import main
from surveykit.resources import locate_resource

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = locate_resource("sample_data")
SURVEY = "academic_integrity"


def surveykit(args: list[str], cwd: Path, *, blocked: Path | None = None
              ) -> subprocess.CompletedProcess:
    path = [str(blocked)] if blocked else []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*path, str(ROOT)])}
    env.pop("SURVEYKIT_DB", None)
    return subprocess.run([sys.executable, "-m", "surveykit", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """The README's first steps: a database with the example survey and its answers."""
    place = tmp_path_factory.mktemp("exit")
    for name in ("academic_integrity.toml", "responses_long.csv", "responses_wide.csv"):
        shutil.copy(SAMPLE / name, place / name)
    # the set-up is not what these tests check: Click's runner in this process (a real
    # process per command cost three start-ups); the tests below run real processes
    migrated_sqlite(place / "surveykit.db")     # what init makes, copied
    runner = CliRunner()
    cwd = os.getcwd()
    os.chdir(place)
    try:
        for args in (["survey", "add", "academic_integrity.toml"],
                     ["import", "responses_long.csv", "--survey", SURVEY]):
            result = runner.invoke(main, args, env={"SURVEYKIT_DB": None},
                                   catch_exceptions=False)
            assert result.exit_code == 0, result.output
    finally:
        os.chdir(cwd)
    # as after the processes ended: no connection left open, the database one file
    gc.collect()
    with sqlite3.connect(place / "surveykit.db") as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    import pandas as pd

    pd.read_csv(place / "responses_long.csv").astype(str).to_parquet(place / "answers.parquet")
    return place


def block(folder: Path, modules: tuple[str, ...]) -> Path:
    """A folder of modules that fail to import as packages that are not installed do."""
    for module in modules:
        (folder / f"{module}.py").write_text(
            f"raise ModuleNotFoundError(\"No module named '{module}'\", name={module!r})\n",
            encoding="utf-8")
    return folder


# the command, the modules missing, the extra the message names
EXTRAS = {
    "counts --data": (["counts", "--survey", SURVEY, "--data", "responses_wide.csv"],
                      ("duckdb", "pyarrow"), "surveykit[duckdb]"),
    "report --data": (["report", "--survey", SURVEY, "--data", "responses_wide.csv"],
                      ("duckdb", "pyarrow"), "surveykit[duckdb]"),
    "counts --engine dask": (["counts", "--survey", SURVEY, "--engine", "dask", "--data",
                              "responses_wide.csv"], ("dask",), "surveykit[dask]"),
    "import parquet": (["import", "answers.parquet", "--survey", SURVEY], ("pyarrow",),
                       "surveykit[duckdb]"),
    "serve": (["serve", "--survey", SURVEY], ("starlette", "uvicorn"), "surveykit[web]"),
    "postgresql --db": (["survey", "list", "--db", "postgresql://nobody@127.0.0.1:1/none"],
                        ("psycopg",), "surveykit[postgres]"),
}


@pytest.mark.parametrize("case", EXTRAS, ids=list(EXTRAS))
def test_a_missing_extra_is_status_1_and_one_line_in_every_command(case, folder, tmp_path):
    args, modules, extra = EXTRAS[case]
    result = surveykit(args, folder, blocked=block(tmp_path, modules))
    assert result.returncode == 1, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert extra in lines[0]


def test_a_read_only_url_reads_without_warnings_and_refuses_writes_in_one_line(folder,
                                                                              monkeypatch):
    url = "sqlite:///surveykit.db?mode=ro"
    # the reads through Click's runner in this process, where pytest turns any warning into
    # an error (stricter than a process, which shows a warning once); the refusal below is
    # the real entry point's status and stderr
    monkeypatch.chdir(folder)
    for args in (["survey", "list", "--db", url], ["report", "--survey", SURVEY, "--db", url],
                 ["counts", "--survey", SURVEY, "--db", url, "--format", "json"]):
        result = run_cli(*args)
        assert result.exit_code == 0, result.output
        assert result.stderr == ""
    with sqlite3.connect(folder / "surveykit.db") as conn:
        before = conn.execute("SELECT count(*) FROM responses").fetchone()[0]
    refused = surveykit(["import", "responses_wide.csv", "--survey", SURVEY, "--db", url],
                        folder)
    assert refused.returncode == 1
    assert refused.stderr.startswith("Error: cannot write to the database")
    assert len(refused.stderr.splitlines()) == 1 and "Warning" not in refused.stderr
    with sqlite3.connect(folder / "surveykit.db") as conn:
        assert conn.execute("SELECT count(*) FROM responses").fetchone()[0] == before
