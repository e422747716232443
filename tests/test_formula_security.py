"""A formula is data, never code (issue 19): hostile formulas through every door.

formulaic evaluated formulas as Python with the builtins reachable, so a formula on the
command line, in ``--sensitive-formula``, or in a survey file's ``[[models]]`` (run by
``report`` on the machine of everyone who shares the survey) could run any command. Here a
corpus of hostile formulas (dunder chains, builtins, ``open``, ``eval``/``exec``, lambdas,
comprehensions, generators, walrus, f-strings, subscripts, attribute access, huge
exponents, deep nesting, huge interactions, ``|``, look-alike and control characters, very
long formulas) goes through

* ``regress DATA --formula`` and ``--sensitive-formula``,
* ``survey add`` with the formula in ``[[models]]``,
* ``report`` on a database that holds such a survey (as an older surveykit accepted it),

and each run must end with status 2 (1 for a stored survey) and one line, ``Error: ...``,
write no file (the payloads would create a marker file), and finish: the corpus runs in a
child process with a time limit as a guard (no timing assertion). The whole corpus runs
through Click's runner in that child (one start-up for all); the payloads that ran on
formulaic run once more each as a whole regress command in this process, and one through
``survey add`` and ``report`` as their own ``surveykit`` processes (the installed console
script on a machine that received a hostile survey).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from migrated import migrated_sqlite
from store_support import run_cli

from surveykit.cli import main
from surveykit.resources import locate_resource

SAMPLE = locate_resource("sample_data") / "academic_integrity.toml"
SURVEY = "academic_integrity"
MARKER = "pwned-marker"
GUARD = 180        # seconds: a guard against a hang, not a performance limit
GOOD = "age + C(faculty)"
# Python's builtins, reached from the column age (a pandas Series under formulaic)
BUILTINS = "age.__class__.__init__.__globals__['__builtins__']"
RUN = f"{BUILTINS}['__import__']('os').system('touch {MARKER}')"
IMPORT = f"__import__('os').system('touch {MARKER}')"

# Right-hand sides over the columns age (a number) and faculty (text). Those marked * ran
# their payload (created the marker) through regress under formulaic (main before issue 19).
CORPUS = {
    "dunder chain*": f"I({RUN})",
    "dunder chain, bare": RUN,
    "__import__": IMPORT,
    "__import__ in I()": f"I({IMPORT})",
    "open*": f"I(open('{MARKER}', 'w').close())",
    "open via builtins*": f"I({BUILTINS}['open']('{MARKER}', 'w').close())",
    "eval via builtins*": f"I({BUILTINS}['eval'](\"{IMPORT}\"))",
    "exec via builtins*": f"I({BUILTINS}['exec'](\"{IMPORT}\"))",
    "eval": f"I(eval(\"{IMPORT}\"))",
    "exec": f"I(exec(\"{IMPORT}\"))",
    "compile": f"I(exec(compile(\"{IMPORT}\", 'f', 'exec')))",
    "factor wrapper*": f"factor({RUN})",
    "C wrapper*": f"C({RUN})",
    "sqrt wrapper*": f"sqrt({RUN} + 1)",
    "log wrapper*": f"log({RUN} + 1)",
    "keyword payload*": f"C(faculty, levels={RUN})",
    "getattr": f"I(getattr(__import__('os'), 'system')('touch {MARKER}'))",
    "globals": "I(globals()['__builtins__'])",
    "vars": "I(vars())",
    "builtins name": "__builtins__",
    "lambda": f"I((lambda: {RUN})())",
    "comprehension": f"I([{RUN} for _ in [1]][0])",
    "generator": f"I(list({RUN} for _ in [1])[0])",
    "walrus": f"I((m := {RUN}))",
    "f-string": "I(f'{" + RUN + "}')",
    "conditional*": f"I(age if {RUN} else age)",
    "subclasses": "I(age.__class__.__bases__[0].__subclasses__())",
    "subscript": "I(age[0])",
    "attribute": "I(age.__class__)",
    "attribute of a call": "log(age).real",
    "call chain": "I(age)(1)",
    "statement": "age; import os",
    "comment": "age # " + IMPORT,
    "huge exponent": "I(9**9**9)",
    "huge exponent, R spelling": "I(9^9^9)",
    "exponent of a column": "I(age^age)",
    "string times a power": "I('a' * 10**9)",
    "huge number": "I(age * 1e999)",
    "huge poly degree": "poly(age, 10**9)",
    "huge levels": "factor(age, levels=range(10**9))",
    "deep nesting": "I(" * 300 + "age" + ")" * 300,
    "deep parentheses": "(" * 300 + "age" + ")" * 300,
    "deep signs": "I(" + "-" * 300 + "age)",
    "huge interaction power": "(age + faculty + age:faculty)^50",
    "bar": "age | faculty",
    "look-alike exec": "\uff45\uff58\uff45\uff43('" + IMPORT + "')",
    "look-alike I": "\u0406(age)",
    "NUL": "age\x00",
    "escape sequence": "age\x1b[2J",
    "bidi override": "age\u202e",
    "zero-width space": "age\u200b",
    "very long": " + ".join(["age"] * 3000),
}


def _toml_string(text: str) -> str:
    """``text`` as a TOML basic string."""
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif ord(char) < 0x20 or ord(char) == 0x7f:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def survey_file(rhs: str) -> str:
    return (SAMPLE.read_text("utf-8") + '\n[covariates]\nage = "number"\nfaculty = "category"\n'
            "\n[[models]]\nformula = " + _toml_string(f"exam_cheating ~ {rhs}") + "\n")


def answers(path: Path, rows: int = 300) -> Path:
    """Answers to exam_cheating with age and faculty, so that a declared model is fitted."""
    rng = np.random.default_rng(19)
    pd.DataFrame({"respondent_id": [f"R{i:04d}" for i in range(rows)],
                  "exam_cheating": rng.choice(["yes", "no"], rows),
                  "age": rng.integers(18, 40, rows).astype(float),
                  "faculty": rng.choice(["arts", "law"], rows)}).to_csv(path, index=False)
    return path


def files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (SQLite's side files come and go: left out)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.name.endswith(("-wal", "-shm", "-journal"))}


def batch(runs: dict[str, tuple[Path, list[dict]]]) -> dict[str, list[dict]]:
    """Run each entry's steps (``{"cli": args}`` through Click's runner, ``{"sql": [db,
    statement, params]}`` on an SQLite file) in its folder, all in one child process with a
    time limit (one start-up, not one per entry): name -> the results of its CLI steps."""
    steps = []
    for name, (folder, entry) in runs.items():
        steps += [{"cd": str(folder), "name": name}, *entry]
    done = subprocess.run([sys.executable, __file__], input=json.dumps(steps),
                          capture_output=True, text=True, timeout=GUARD * len(runs),
                          env={**os.environ, "SURVEYKIT_DEBUG": ""})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def _child() -> None:
    results: dict[str, list[dict]] = {}
    for step in json.load(sys.stdin):
        if "cd" in step:
            os.chdir(step["cd"])
            current = results.setdefault(step["name"], [])
            continue
        if "sql" in step:
            database, statement, params = step["sql"]
            with sqlite3.connect(database) as conn:
                conn.execute(statement, params)
            conn.close()
            continue
        current.append(as_result(CliRunner().invoke(main, step["cli"])))
    json.dump(results, sys.stdout)


def assert_one_line(result: dict, status: int, start: str, name: str) -> None:
    assert result["escaped"] is None, (name, result)
    assert result["status"] == status, (name, result)
    assert result["stdout"] == "", (name, result)
    lines = result["stderr"].split("\n")
    assert len(lines) == 2 and lines[1] == "", (name, result["stderr"])
    assert lines[0].startswith(start), (name, lines[0])
    assert "unexpectedly" not in lines[0] and "Traceback" not in lines[0], (name, lines[0])
    assert "\x1b" not in lines[0] and "\x00" not in lines[0], (name, lines[0])


def write_data(folder: Path) -> Path:
    """``folder`` with data.csv, the answers regress reads."""
    (folder / "data.csv").write_text(
        "q,y,age,faculty\n" + "".join(f"{'yes' if i % 3 else 'no'},{i % 7},{20 + i % 30},"
                                      f"{'law' if i % 2 else 'arts'}\n" for i in range(120)),
        encoding="utf-8")
    return folder


@pytest.fixture
def folder(tmp_path) -> Path:
    return write_data(tmp_path)


REGRESS = ["regress", "data.csv", "--sensitive", "q", "--design", "warner", "--param", "p=0.8"]
OPTIONS = ("--formula", "--sensitive-formula")


def _regress_args(option: str, rhs: str) -> list[str]:
    if option == "--formula":
        return [*REGRESS, "--formula", f"q ~ {rhs}"]
    return [*REGRESS, "--formula", "y ~ q + age", "--sensitive-formula", f"~ {rhs}"]


def _survey_add_steps(folder: Path) -> list[dict]:
    url = migrated_sqlite(folder / "surveykit.db")
    for k, rhs in enumerate(CORPUS.values()):
        (folder / f"survey{k}.toml").write_text(survey_file(rhs), encoding="utf-8")
    return [{"cli": ["survey", "add", f"survey{k}.toml", "--db", url]}
            for k in range(len(CORPUS))]


def _report_steps(folder: Path) -> list[dict]:
    url = migrated_sqlite(folder / "surveykit.db")
    (folder / "good.toml").write_text(survey_file(GOOD), encoding="utf-8")
    runner = CliRunner()
    for args in (["survey", "add", str(folder / "good.toml"), "--db", url],
                 ["import", str(answers(folder / "wave.csv")), "--survey", SURVEY, "--db", url]):
        assert runner.invoke(main, args).exit_code == 0
    with sqlite3.connect(folder / "surveykit.db") as conn:
        (source,) = conn.execute("SELECT source FROM survey_versions").fetchone()
    conn.close()
    steps = []
    for rhs in CORPUS.values():
        # what an older surveykit stored: the survey file as written, hostile model and all
        steps.append({"sql": ["surveykit.db", "UPDATE survey_versions SET source = ?",
                              [source.replace(_toml_string(f"exam_cheating ~ {GOOD}"),
                                              _toml_string(f"exam_cheating ~ {rhs}"))]]})
        steps.append({"cli": ["report", "--survey", SURVEY, "--db", url]})
    return steps


@dataclass(frozen=True)
class Door:
    """The corpus through one door, in its own folder: the folder's files before the run,
    and one result per formula."""

    folder: Path
    before: dict[str, bytes]
    results: list[dict]


@pytest.fixture(scope="module")
def doors(tmp_path_factory) -> dict[str, Door]:
    """The whole corpus through every door (regress with each option, survey add, report),
    each in a folder of its own, all in one child process."""
    runs = {}
    for option in OPTIONS:
        folder = write_data(tmp_path_factory.mktemp("regress"))
        runs[option] = (folder, [{"cli": _regress_args(option, rhs)} for rhs in CORPUS.values()])
    folder = write_data(tmp_path_factory.mktemp("survey-add"))
    runs["survey add"] = (folder, _survey_add_steps(folder))
    folder = write_data(tmp_path_factory.mktemp("report"))
    runs["report"] = (folder, _report_steps(folder))
    before = {name: files(folder) for name, (folder, _) in runs.items()}
    results = batch(runs)
    return {name: Door(folder=folder, before=before[name], results=results[name])
            for name, (folder, _) in runs.items()}


@pytest.mark.parametrize("option", OPTIONS)
def test_hostile_formulas_are_refused_by_regress_in_one_line(doors, option):
    door = doors[option]
    start = "Error: formula " if option == "--formula" else "Error: sensitive formula "
    for name, result in zip(CORPUS, door.results, strict=True):
        assert_one_line(result, 2, start, name)
    assert not (door.folder / MARKER).exists()
    assert files(door.folder) == door.before


def test_survey_add_refuses_hostile_models_and_stores_nothing(doors):
    door = doors["survey add"]
    for k, (name, result) in enumerate(zip(CORPUS, door.results, strict=True)):
        assert_one_line(result, 1, f"Error: survey{k}.toml: models[0].formula: ", name)
    assert not (door.folder / MARKER).exists()
    assert files(door.folder) == door.before


def test_report_never_runs_a_hostile_formula_stored_by_an_older_version(doors):
    door = doors["report"]
    url = f"sqlite:///{door.folder / 'surveykit.db'}"
    for name, result in zip(CORPUS, door.results, strict=True):
        assert_one_line(result, 1, f"Error: survey {SURVEY!r} stored in {url}: "
                                   "models[0].formula: ", name)
    assert not (door.folder / MARKER).exists()


# -- the payloads that ran under formulaic, each as a whole command -------------------------

def surveykit(folder: Path, *args: str) -> subprocess.CompletedProcess:
    command = shutil.which("surveykit")
    assert command is not None, "the surveykit console script is not installed"
    return subprocess.run([command, *args], cwd=folder, capture_output=True, text=True,
                          timeout=GUARD, env={**os.environ, "SURVEYKIT_DEBUG": ""})


def assert_refused(done: subprocess.CompletedProcess, status: int, start: str) -> None:
    assert done.returncode == status, done.stderr
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(start), done.stderr


@pytest.mark.parametrize("name", ["dunder chain*", "open*", "factor wrapper*"])
def test_regress_in_this_process_runs_no_payload(folder, name, monkeypatch):
    # the parser is the point, not the process: Click's runner calls the same main (its
    # one-line errors and statuses); the corpus child above guards against a hang
    monkeypatch.setenv("SURVEYKIT_DEBUG", "")
    monkeypatch.chdir(folder)
    done = run_cli(*REGRESS, "--formula", f"q ~ {CORPUS[name]}")
    assert_one_line(as_result(done), 2, "Error: formula ", name)
    assert not (folder / MARKER).exists()
    done = run_cli(*REGRESS, "--formula", "y ~ q + age", "--sensitive-formula",
                   f"~ {CORPUS[name]}")
    assert_one_line(as_result(done), 2, "Error: sensitive formula ", name)
    assert not (folder / MARKER).exists()


def as_result(outcome) -> dict:
    """A Click runner's outcome as the corpus child reports it."""
    escaped = outcome.exception if not isinstance(outcome.exception, SystemExit) else None
    return {"status": outcome.exit_code, "stdout": outcome.stdout, "stderr": outcome.stderr,
            "escaped": repr(escaped) if escaped else None}


def test_survey_add_and_report_in_their_own_processes_run_no_payload(folder):
    url = migrated_sqlite(folder / "surveykit.db")
    (folder / "bad.toml").write_text(survey_file(CORPUS["dunder chain*"]), encoding="utf-8")
    (folder / "good.toml").write_text(survey_file(GOOD), encoding="utf-8")
    runner = CliRunner()
    assert_refused(surveykit(folder, "survey", "add", "bad.toml", "--db", url), 1,
                   "Error: bad.toml: models[0].formula: ")
    for args in (["survey", "add", str(folder / "good.toml"), "--db", url],
                 ["import", str(answers(folder / "wave.csv")), "--survey", SURVEY, "--db", url]):
        assert runner.invoke(main, args).exit_code == 0
    with sqlite3.connect(folder / "surveykit.db") as conn:
        conn.execute("UPDATE survey_versions SET source = ?",
                     [(folder / "bad.toml").read_text(encoding="utf-8")])
    conn.close()
    assert_refused(surveykit(folder, "report", "--survey", SURVEY, "--db", url), 1,
                   f"Error: survey {SURVEY!r} stored in {url}: models[0].formula: ")
    assert not (folder / MARKER).exists()


if __name__ == "__main__":
    _child()
