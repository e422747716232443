"""The error contract, command by command (issue 11): every failure a user can cause prints
one line, ``Error: ...``, that names the thing (file, option, value), says why and how to fix
it; the exit status is 1 for data and environment problems and 2 for usage; files and the
database are left exactly as they were; never a traceback.

Each case runs a real command (Click's runner, in this process) in a folder prepared the way
the README leaves it: a database with the example survey, its answer files. Permissions need
a user that file modes bind: as root the commands run under ``setpriv`` without the
capabilities that override file modes. A last test checks that every command of the command
line has cases here, so a new command cannot skip the contract.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import click
import openpyxl
import pytest
from click.testing import CliRunner
from migrated import migrated_sqlite

from surveykit.cli import main
from surveykit.resources import locate_resource

SURVEY = "academic_integrity"
SAMPLE = locate_resource("sample_data")
ROOT = Path(__file__).resolve().parent.parent
# The snapshot skips SQLite's own side files: they come and go with every connection.
_SIDE_FILES = ("-wal", "-shm", "-journal")


# -- the folder a user works in ------------------------------------------------------------


def prepare(folder: Path) -> None:
    """The README's first steps, and the odd files users pass by mistake."""
    for name in ("academic_integrity.toml", "responses_long.csv", "responses_wide.csv"):
        shutil.copy(SAMPLE / name, folder / name)
    migrated_sqlite(folder / "surveykit.db")    # what init makes, copied
    runner = CliRunner()
    for args in (["survey", "add", "academic_integrity.toml"],
                 ["import", "responses_long.csv", "--survey", SURVEY]):
        result = runner.invoke(main, args, catch_exceptions=False)
        assert result.exit_code == 0, result.output
    (folder / "notes.txt").write_text("not a database\n", encoding="utf-8")
    with sqlite3.connect(folder / "other.db") as conn:
        conn.execute("CREATE TABLE t (x)")
    (folder / "somefolder").mkdir()
    (folder / "binary.bin").write_bytes(bytes(range(256)) * 64)
    book = openpyxl.Workbook()
    book.active.append(["name", "title"])
    book.save(folder / "survey.xlsx")
    (folder / "latin1.toml").write_bytes('name = "caf\xe9"\n'.encode("latin-1"))
    (folder / "broken.toml").write_text('name = "x"\ntitle = \n', encoding="utf-8")
    (folder / "huge.toml").write_text("# " + "x" * 1_100_000 + "\n", encoding="utf-8")
    other = (SAMPLE / "academic_integrity.toml").read_text(encoding="utf-8").replace(
        'name = "academic_integrity"', 'name = "second_survey"')
    (folder / "second.toml").write_text(other, encoding="utf-8")
    # survey files that used to pass 'survey add' and fail later in generate or report
    for name, text in {
        "spaced_id.toml": other.replace('id = "plagiarism"', 'id = "plagiarism "'),
        "tiny_p.toml": other.replace("p = 0.7\nq = 0.15", "p = 1e-300\nq = 0"),
        "wording_typo.toml": other.replace("reminder = ", "remindr = "),
        "nested.toml": other + "\n[questions.wording]\nintro = " + "[" * 2000 + "]" * 2000,
        "nested_inline.toml": other + "\nextra = " + "{a = " * 2000 + "1" + "}" * 2000,
        "escape_title.toml": other.replace('title = "Academic integrity survey, spring term"',
                                           'title = "Academic \\u001b]0;owned\\u0007"'),
        "escape_alias.toml": other.replace('"made up" = "yes"', '"made \\u001b[2Jup" = "yes"'),
    }.items():
        (folder / name).write_text(text + "\n", encoding="utf-8")
    (folder / "empty.csv").write_text("", encoding="utf-8")
    (folder / "regress.csv").write_text("answer,age\nyes,20\nno,30\n", encoding="utf-8")
    # the commands' engines die with their last reference; then the database is one file
    gc.collect()
    with sqlite3.connect(folder / "surveykit.db") as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("contract-template")
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        prepare(folder)
    finally:
        os.chdir(cwd)
    return folder


@pytest.fixture
def place(template, tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "work"
    shutil.copytree(template, folder, ignore=shutil.ignore_patterns(*(f"*{side}" for side in
                                                                        _SIDE_FILES)))
    monkeypatch.chdir(folder)
    monkeypatch.delenv("SURVEYKIT_DB", raising=False)
    monkeypatch.delenv("SURVEYKIT_DEBUG", raising=False)
    return folder


_DUMPS: dict[tuple[bytes | None, ...], tuple[str, ...]] = {}


def rows(path: Path) -> tuple[str, ...]:
    """The SQLite file's rows (its dump). Every test snapshots a copy of the same template
    before and after: the same bytes, with the same side files (a WAL holds rows too), are
    the same rows, so each content is dumped once."""
    key = tuple(hashlib.sha256(side.read_bytes()).digest() if side.exists() else None
                for side in (path, *(path.with_name(path.name + s) for s in ("-wal", "-journal"))))
    if key not in _DUMPS:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            _DUMPS[key] = tuple(conn.iterdump())
        conn.close()
    return _DUMPS[key]


def snapshot(folder: Path) -> dict[str, object]:
    """Every file's bytes (an SQLite file's rows instead: its bytes may be rewritten by a
    checkpoint that changes nothing) and every folder, relative to ``folder``."""
    state: dict[str, object] = {}
    for path in sorted(folder.rglob("*")):
        name = str(path.relative_to(folder))
        if path.is_dir():
            state[name] = "folder"
        elif name.endswith(_SIDE_FILES):
            continue
        elif path.suffix == ".db" and path.read_bytes()[:16] == b"SQLite format 3\x00":
            state[name] = rows(path)
        else:
            state[name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return state


# -- running a command ---------------------------------------------------------------------


@dataclass
class Outcome:
    status: int
    stdout: str
    stderr: str


def run(args: list[str]) -> Outcome:
    result = CliRunner().invoke(main, args, catch_exceptions=True, prog_name="surveykit")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception  # a traceback: the contract is broken
    return Outcome(result.exit_code, result.stdout, result.stderr)


def unprivileged() -> list[str]:
    """The prefix that makes file modes bind (none for an ordinary user)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: file modes cannot be tested")
    caps = "-dac_override,-dac_read_search,-fowner"
    return ["setpriv", "--bounding-set", caps, "--inh-caps", caps]


# Runs commands with Click's runner, one after another, in the unprivileged process; prints
# their outcomes as JSON. A Python exception is reported as a traceback in stderr.
_UNPRIVILEGED_BATCH = """
import json, sys, traceback
from click.testing import CliRunner
from surveykit.cli import main
outcomes = []
for args in json.loads(sys.stdin.read()):
    result = CliRunner().invoke(main, args, catch_exceptions=True, prog_name="surveykit")
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "".join(traceback.format_exception(result.exception))
    outcomes.append([result.exit_code, result.stdout, stderr])
print(json.dumps(outcomes))
"""


def run_unprivileged(commands: list[list[str]], cwd: Path) -> list[Outcome]:
    """Run each command in turn in one process without the capabilities that override file
    modes (the process is the point: as root file modes bind only there); one process for
    all of them, since each surveykit process costs a second of start-up."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("SURVEYKIT_DB", None)
    result = subprocess.run([*unprivileged(), sys.executable, "-c", _UNPRIVILEGED_BATCH],
                            input=json.dumps(commands), cwd=cwd, env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return [Outcome(*outcome) for outcome in json.loads(result.stdout)]


def assert_contract(outcome: Outcome, status: int, message: str, *, lines: int = 1) -> None:
    """Exit ``status``; stderr is ``lines`` line(s), the first ``Error: `` and matching
    ``message``; no traceback, no internal error."""
    assert outcome.status == status, (outcome.status, outcome.stdout, outcome.stderr)
    shown = outcome.stderr.splitlines()
    assert shown and shown[0].startswith("Error: "), outcome.stderr
    assert len(shown) == lines, outcome.stderr
    assert re.search(message, shown[0]), (message, shown[0])
    everything = outcome.stdout + outcome.stderr
    assert "Traceback" not in everything and "failed unexpectedly" not in everything


# -- the cases -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """A command that must fail: its arguments, exit status and message (a regex)."""

    name: str
    args: tuple[str, ...]
    status: int
    message: str
    setup: str | None = None
    lines: int = 1
    tags: tuple[str, ...] = field(default=())


GENERATE = ("generate", "--survey", SURVEY, "--respondents", "3", "--out", "forms")
EXPORT = ("export", "xlsform", "--survey", SURVEY, "--out", "form.xlsx")
SERVE = ("serve", "--survey", SURVEY, "--port", "0")
IMPORT = ("import", "responses_wide.csv", "--survey", SURVEY)
COUNTS = ("counts", "--survey", SURVEY)
REPORT = ("report", "--survey", SURVEY)
ADD = ("survey", "add", "second.toml")
UPDATE = ("survey", "update", "academic_integrity.toml")
LIST = ("survey", "list")
CHECK = ("check", "--survey", SURVEY)
JOINT = ("joint", "--survey", SURVEY, "--questions", "exam_cheating,plagiarism")
# every command that reads or writes the database, with arguments that work on a good one
STORE_COMMANDS = {"generate": GENERATE, "export xlsform": EXPORT, "serve": SERVE,
                  "import": IMPORT, "counts": COUNTS, "report": REPORT, "survey add": ADD,
                  "survey update": UPDATE, "survey list": LIST, "check": CHECK,
                  "joint": JOINT}
WRITERS = {"generate": GENERATE, "import": IMPORT, "survey add": ADD}

CASES: list[Case] = []
for command, args in STORE_COMMANDS.items():
    CASES += [
        Case(f"{command}: --db is a text file", (*args, "--db", "notes.txt"), 1,
             r"^Error: notes.txt is not an SQLite database \(file is not a database\): give "
             r"the surveykit database with --db"),
        Case(f"{command}: --db does not exist", (*args, "--db", "missing.db"), 1,
             r"^Error: no surveykit database at .*missing.db: run 'surveykit init' there "
             r"first, or choose another database"),
        Case(f"{command}: --db is another application's", (*args, "--db", "other.db"), 1,
             r"^Error: other.db is not a surveykit database \(it holds other tables: t\)"),
        Case(f"{command}: --db is a folder", (*args, "--db", "somefolder"), 1,
             r"^Error: --db somefolder is a folder, not a database file"),
        Case(f"{command}: --db is not a URL", (*args, "--db", "nosuch+driver://x/y"), 1,
             r"^Error: no database driver for 'nosuch\+driver'"),
    ]
for command, args in WRITERS.items():
    CASES.append(Case(f"{command}: the database is locked",
                      (*args, "--db", "sqlite:///surveykit.db?timeout=0.5"), 1,
                      r"^Error: the database surveykit.db is locked by another program "
                      r"\(waited 0.5 s\); nothing was changed: let the other import or "
                      r"generate finish", setup="lock"))
CASES += [
    # init
    Case("init: another application's SQLite file", ("init", "--db", "other.db"), 1,
         r"^Error: sqlite:///other.db already holds tables that are not surveykit's \(t\); "
         r"surveykit keeps its data in a database of its own and changed nothing"),
    Case("init: a text file", ("init", "--db", "notes.txt"), 1,
         r"^Error: notes.txt is not an SQLite database"),
    Case("init: a folder that does not exist", ("init", "--db", "nodir/s.db"), 1,
         r"^Error: cannot create the database nodir/s.db: the folder nodir does not exist; "
         r"create it first \(mkdir -p nodir\)"),
    Case("init: a folder", ("init", "--db", "somefolder"), 1,
         r"^Error: --db somefolder is a folder, not a database file; give a file name"),
    Case("init --example: a different file in the way", ("init", "--example"), 1,
         r"^Error: responses_long.csv already exists and is not surveykit's example; nothing "
         r"was written", setup="change responses_long.csv"),
    # survey files
    # a missing input file is a usage error (status 2, issue 22)
    Case("survey add: no such file", ("survey", "add", "nope.toml"), 2,
         r"^Error: Invalid value for 'FILE': File 'nope.toml' does not exist. \(see "
         r"'surveykit survey add --help'\)"),
    Case("survey update: no such file", ("survey", "update", "nope.toml"), 2,
         r"^Error: Invalid value for 'FILE': File 'nope.toml' does not exist"),
    Case("survey add: a folder", ("survey", "add", "somefolder"), 2,
         r"^Error: Invalid value for 'FILE': File 'somefolder' is a directory. \(see "
         r"'surveykit survey add --help'\)"),
    Case("survey add: an Excel file", ("survey", "add", "survey.xlsx"), 1,
         r"^Error: survey.xlsx: this is a binary file \(a spreadsheet or an archive\?\), not "
         r"a survey file"),
    Case("survey add: not UTF-8", ("survey", "add", "latin1.toml"), 1,
         r"^Error: latin1.toml: byte 11 is not UTF-8; save the file as UTF-8"),
    Case("survey add: not TOML", ("survey", "add", "broken.toml"), 1,
         r"^Error: broken.toml: not valid TOML: .*line 2"),
    Case("survey add: over 1 MB", ("survey", "add", "huge.toml"), 1,
         r"^Error: huge.toml: the file has 1,100,003 bytes; a survey file may have at most "
         r"1,000,000"),
    # checked completely at the door (issue 11), each refusal naming the key path
    Case("survey add: a question id with a trailing space", ("survey", "add", "spaced_id.toml"),
         1, r"^Error: spaced_id.toml: questions\[1\].id: 'plagiarism ' has spaces at its start "
            r"or end; write 'plagiarism'"),
    Case("survey add: p = 1e-300", ("survey", "add", "tiny_p.toml"), 1,
         r"^Error: tiny_p.toml: questions\[1\].mechanism: .* with probability 1e-300: below one "
         r"in a million"),
    Case("survey add: an unknown wording key", ("survey", "add", "wording_typo.toml"), 1,
         r"^Error: wording_typo.toml: questions\[2\].wording.remindr: unknown wording key "
         r"'remindr' \(keys like it: reminder\)"),
    Case("survey add: deeply nested arrays", ("survey", "add", "nested.toml"), 1,
         r"^Error: nested.toml: arrays or tables are nested too deeply to read"),
    Case("survey add: deeply nested inline tables", ("survey", "add", "nested_inline.toml"), 1,
         r"^Error: nested_inline.toml: arrays or tables are nested too deeply to read"),
    Case("survey add: a terminal escape in the title", ("survey", "add", "escape_title.toml"), 1,
         r"^Error: escape_title.toml: title: holds the control character \\x1b at position 10"),
    Case("survey add: a terminal escape in an alias", ("survey", "add", "escape_alias.toml"), 1,
         r"^Error: escape_alias.toml: questions\[3\].aliases.\"made \\x1b\[2Jup\": holds the "
         r"control character \\x1b"),
    Case("survey update: a different survey under the name", ("survey", "update",
                                                              "second.toml"), 1,
         r"^Error: no survey 'second_survey'|^Error: .*second_survey"),
    # response files
    Case("import: no such file", ("import", "nope.csv", "--survey", SURVEY), 2,
         r"^Error: Invalid value for 'FILE': File 'nope.csv' does not exist"),
    Case("import: a folder", ("import", "somefolder", "--survey", SURVEY), 2,
         r"^Error: Invalid value for 'FILE': File 'somefolder' is a directory"),
    Case("import: a binary file", ("import", "binary.bin", "--survey", SURVEY), 1,
         r"^Error: .*binary.bin"),
    Case("import: an empty file", ("import", "empty.csv", "--survey", SURVEY), 1,
         r"^Error: .*empty.csv.*empty"),
    Case("import: an unknown survey", ("import", "responses_wide.csv", "--survey", "nope"),
         1, r"^Error: .*'nope'"),
    Case("import: --rejects in a missing folder",
         ("import", "responses_wide.csv", "--survey", SURVEY, "--skip-invalid", "--rejects",
          "nodir/rejects.csv"), 1,
         r"^Error: --rejects nodir/rejects.csv: the folder nodir does not exist; create it"),
    Case("counts --data: no such file", ("counts", "--survey", SURVEY, "--data", "nope.csv"),
         2, r"^Error: --data 'nope.csv': no such file or directory; check the path$"),
    Case("report --data: no such file", ("report", "--survey", SURVEY, "--data", "nope.csv"),
         2, r"^Error: --data 'nope.csv': no such file or directory; check the path$"),
    Case("report --counts-file: no such file", ("report", "--counts-file", "nope.csv"), 2,
         r"^Error: --counts-file 'nope.csv': no such file; check the path$"),
    Case("estimate --counts-file: no such file", ("estimate", "--counts-file", "nope.csv"), 2,
         r"^Error: --counts-file 'nope.csv': no such file; check the path$"),
    Case("generate --templates: no such folder",
         ("generate", "--survey", SURVEY, "--respondents", "3", "--out", "forms",
          "--templates", "nodir"), 2,
         r"^Error: Invalid value for '--templates': Directory 'nodir' does not exist"),
    # outputs
    Case("generate: --out in a missing folder",
         ("generate", "--survey", SURVEY, "--respondents", "3", "--out", "nodir/forms"), 1,
         r"^Error: --out nodir/forms: the folder nodir does not exist; create it \(mkdir -p "
         r"nodir\) or choose another path"),
    Case("generate: --out is a file",
         ("generate", "--survey", SURVEY, "--respondents", "3", "--out", "notes.txt"), 2,
         r"^Error: Invalid value for '--out': Directory 'notes.txt' is a file"),
    Case("generate: --key-file in a missing folder",
         (*GENERATE, "--key-file", "nodir/key.csv"), 1,
         r"^Error: --key-file nodir/key.csv: the folder nodir does not exist"),
    Case("report: --out in a missing folder", (*REPORT, "--out", "nodir/report.html",
                                               "--format", "html"), 1,
         r"^Error: --out nodir/report.html: the folder nodir does not exist; create it"),
    Case("report: --out is a folder", (*REPORT, "--out", "somefolder"), 1,
         r"^Error: --out somefolder is a folder; give a file name inside it"),
    Case("design: --plot in a missing folder",
         ("design", "--epsilon", "1", "--plot", "nodir/d.png"), 1,
         r"^Error: --plot nodir/d.png: the folder nodir does not exist; create it"),
    Case("design: --plot of an unknown kind", ("design", "--epsilon", "1", "--plot", "d.gif"),
         2, r"^Error: --plot d.gif must end in .png, .svg or .pdf"),
    Case("export xlsform: --out in a missing folder",
         ("export", "xlsform", "--survey", SURVEY, "--out", "nodir/form.xlsx"), 1,
         r"^Error: --out nodir/form.xlsx: the folder nodir does not exist"),
    Case("reproduce: --out in a missing folder", ("reproduce", "--out", "nodir/figures"), 1,
         r"^Error: --out nodir/figures: the folder nodir does not exist"),
    Case("reproduce: --out is a file", ("reproduce", "--out", "notes.txt"), 2,
         r"^Error: Invalid value for '--out': Directory 'notes.txt' is a file"),
    Case("demo: --dir in a missing folder", ("demo", "--dir", "nodir/demo"), 1,
         r"^Error: --dir nodir/demo: the folder nodir does not exist"),
    Case("demo: --dir not empty", ("demo", "--dir", "."), 2,
         r"^Error: --dir '.' is not empty: the demo needs a fresh folder"),
    # usage: exit 2
    Case("estimate: p out of range", ("estimate", "--yes", "3", "--no", "4",
                                      "--dont-know-count", "1", "--p", "1.5", "--q", "0.2"), 2,
         r"^Error: p \(1.5\)"),
    Case("estimate: a count that is no number", ("estimate", "--design", "warner", "--param",
                                                 "p=0.7", "--counts", "yes=x"), 2,
         r"^Error: .*the count of 'yes' \('x'\) must be a whole number"),
    Case("design: a negative budget", ("design", "--epsilon", "-1"), 2,
         r"^Error: .*epsilon.*-1"),
    Case("regress: no such file", ("regress", "nope.csv", "--formula", "answer ~ age",
                                   "--sensitive", "answer", "--design", "warner", "--param",
                                   "p=0.7"), 2, r"^Error: .*nope.csv"),
    Case("regress: an unknown column", ("regress", "regress.csv", "--formula", "answer ~ nope",
                                        "--sensitive", "answer", "--design", "warner",
                                        "--param", "p=0.7"), 2, r"^Error: .*nope"),
    Case("power: alpha out of range", ("power", "--design", "warner", "--param", "p=0.7",
                                       "--pi", "0.3", "--null", "0.1", "--n", "500",
                                       "--alpha", "2"), 2,
         r"^Error: alpha \(2\) must be strictly between 0 and 1$"),
    Case("power: an unknown design", ("power", "--design", "nosuch", "--pi", "0.3", "--n",
                                      "100"), 2, r"^Error: unknown design 'nosuch'"),
    Case("power: only one of --pi, --n and --power", ("power", "--design", "warner",
                                                      "--param", "p=0.7", "--pi", "0.3"), 2,
         r"^Error: give two of --pi, --n and --power"),
    Case("correlate: no such file", ("correlate", "nope.csv", "--sensitive", "x", "--design",
                                     "warner", "--param", "p=0.7", "--with", "y"), 2,
         r"^Error: .*nope.csv"),
    Case("correlate: an unknown column", ("correlate", "regress.csv", "--sensitive", "nope",
                                          "--design", "warner", "--param", "p=0.7", "--with",
                                          "age"), 2, r"^Error: .*nope"),
    Case("check: an unknown survey", ("check", "--survey", "nope"), 1, r"^Error: .*nope"),
    Case("joint: an unknown survey", ("joint", "--survey", "nope", "--questions", "a,b"), 1,
         r"^Error: no survey named 'nope'"),
    Case("joint: a misspelt question", ("joint", "--survey", SURVEY, "--questions",
                                        "exam_cheating,plagiarsm"), 2,
         r"^Error: question 'plagiarsm' is not in survey .*did you mean 'plagiarism'\?"),
    Case("docs: an unknown guide", ("docs", "nope"), 2, r"^Error: no guide 'nope'"),
    Case("schema: --out in a folder that does not exist", ("schema", "--out", "no/such/s.json"),
         1, r"^Error: --out no/such/s.json: the folder no/such does not exist"),
    Case("serve: a host on the network without --public",
         ("serve", "--survey", SURVEY, "--host", "0.0.0.0"), 2,
         r"^Error: --host 0.0.0.0 is not a loopback address"),
    Case("survey: an unknown subcommand", ("survey", "nope"), 2,
         r"^Error: No such command 'nope'"),
]


def _lock(folder: Path):
    """Another program holding the write lock (a writer in the middle of a transaction)."""
    conn = sqlite3.connect(folder / "surveykit.db", timeout=0, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    return conn


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_every_failure_is_one_line_with_the_right_status_and_changes_nothing(place, case):
    held = None
    if case.setup == "lock":
        held = _lock(place)
    elif case.setup and case.setup.startswith("change "):
        (place / case.setup.split(" ", 1)[1]).write_text("changed\n", encoding="utf-8")
    before = snapshot(place)
    try:
        outcome = run(list(case.args))
    finally:
        if held is not None:
            held.rollback()
            held.close()
    assert_contract(outcome, case.status, case.message, lines=case.lines)
    assert snapshot(place) == before


def test_every_command_has_contract_cases():
    """A command added later without cases here fails this test."""
    def leaves(group: click.Group, prefix: str = "") -> list[str]:
        names = []
        for name, command in group.commands.items():
            if isinstance(command, click.Group):
                names += leaves(command, f"{prefix}{name} ")
            else:
                names.append(f"{prefix}{name}")
        return names

    covered = {" ".join(case.args[:2]) if case.args[0] in ("survey", "export")
               else case.args[0] for case in CASES}
    missing = [name for name in leaves(main) if name not in covered]
    assert not missing, f"commands without error-contract cases: {missing}"


def test_every_command_refuses_an_unknown_option_with_status_2(place):
    for name in ("demo", "design", "init", "survey add", "survey update", "survey list",
                 "generate", "export xlsform", "serve", "import", "counts", "report",
                 "estimate", "regress", "reproduce", "docs"):
        outcome = run([*name.split(), "--no-such-option"])
        assert_contract(outcome, 2, rf"^Error: No such option '--no-such-option'. \(see "
                                    rf"'surveykit {name} --help'\)")


# -- permissions: a read-only database, a folder that cannot be written ------------------------


@pytest.mark.parametrize("where", ["file", "folder"])
def test_a_read_only_database_refuses_writes_in_one_line_and_serves_reads(place, where):
    data = place / "data"
    data.mkdir()
    shutil.move(place / "surveykit.db", data / "surveykit.db")
    before = snapshot(place)
    # reading the snapshot left SQLite's side files; with them a folder is writable enough
    for side in data.glob("surveykit.db-*"):
        side.unlink()
    locked = data / "surveykit.db" if where == "file" else data
    locked.chmod(0o444 if where == "file" else 0o555)
    try:
        db = ["--db", "data/surveykit.db"]
        why = (r"the file is read-only; nothing was changed: make it writable" if where ==
               "file" else r"its folder data is not writable .*; nothing was changed: copy "
                           r"the database to a folder you can write to")
        writes = (["import", "responses_wide.csv", "--survey", SURVEY],
                  ["survey", "add", "second.toml"],
                  ["generate", "--survey", SURVEY, "--respondents", "3", "--out", "forms"])
        # reading needs no write access (issue 11: counts failed in a read-only folder)
        reads = (["counts", "--survey", SURVEY], ["report", "--survey", SURVEY],
                 ["survey", "list"])
        outcomes = run_unprivileged([[*args, *db] for args in (*writes, *reads)], place)
        for outcome in outcomes[:len(writes)]:
            assert_contract(outcome, 1, rf"^Error: cannot write to the database "
                                        rf"data/surveykit.db: {why}")
        assert not (place / "forms").exists() and not list(place.glob(".forms.*"))
        for args, outcome in zip(reads, outcomes[len(writes):], strict=True):
            assert outcome.status == 0, (args, outcome.stderr)
    finally:
        locked.chmod(0o755 if where == "folder" else 0o644)
    assert snapshot(place) == before


def test_outputs_in_a_folder_that_cannot_be_written_are_refused_up_front(place):
    sealed = place / "sealed"
    sealed.mkdir()
    sealed.chmod(0o555)
    try:
        before = snapshot(place)
        cases = ((["report", "--survey", SURVEY, "--out", "sealed/r.txt"], "--out"),
                 (["generate", "--survey", SURVEY, "--respondents", "2", "--out",
                   "sealed/forms"], "--out"),
                 (["design", "--epsilon", "1", "--plot", "sealed/d.png"], "--plot"),
                 (["init", "--db", "sealed/new.db"], None))
        outcomes = run_unprivileged([args for args, _ in cases], place)
        for (_, option), outcome in zip(cases, outcomes, strict=True):
            message = (rf"^Error: {option} sealed/\S+: the folder sealed is not writable"
                       if option else r"^Error: cannot open the database sealed/new.db: its "
                                      r"folder sealed is not writable")
            assert_contract(outcome, 1, message)
        assert snapshot(place) == before
    finally:
        sealed.chmod(0o755)


# -- interrupted runs ------------------------------------------------------------------------


def _start(args: list[str], cwd: Path) -> subprocess.Popen:
    """``surveykit ARGS`` as a terminal's foreground command: Ctrl+C's default action restored.

    A suite started in the background (``pytest &`` in a script) runs with SIGINT ignored,
    as POSIX shells start background jobs, and a child inherits that: Python then keeps
    ignoring Ctrl+C, and the interrupted command ran to its end instead of stopping.
    """
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "surveykit", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_foreground_signals)


def _foreground_signals() -> None:
    # runs in the child between fork and exec: only async-signal-safe work
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _catches_sigterm(pid: int) -> bool:
    """Whether the process has a handler for SIGTERM (the SigCgt mask of /proc/PID/status)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(mask, 16) >> (signal.SIGTERM - 1) & 1)


def _cpu_seconds(pid: int) -> float:
    """User and system CPU time the process has used so far (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _wait_for(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the command never reached the point to interrupt it")
        time.sleep(0.02)


@pytest.mark.parametrize(("signal_number", "status"), [(signal.SIGINT, 130),
                                                       (signal.SIGTERM, 143)],
                         ids=["ctrl-c", "kill"])
def test_an_interrupted_generate_leaves_no_files_and_issues_no_ids(place, signal_number,
                                                                   status):
    # the exit status is 128 + the signal's number, as shells report it (issue 22)
    before = snapshot(place)
    process = _start(["generate", "--survey", SURVEY, "--respondents", "200000", "--per-file",
                      "200", "--out", "forms"], place)
    try:
        # interrupt while files are being written into the staging folder
        _wait_for(lambda: any(len(list(p.iterdir())) > 2 for p in place.glob(".forms.partial-*")))
        process.send_signal(signal_number)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == status, stderr
    assert stderr.splitlines()[-1] == (
        "Error: interrupted before the command finished; database changes were rolled back "
        "and partly written files removed")
    assert "Traceback" not in stderr
    assert snapshot(place) == before


def test_an_interrupted_import_changes_nothing(place):
    big = place / "big.csv"
    rows = ["respondent_id,question_id,answer"] + [
        f"B-{i},exam_cheating,{'yes' if i % 3 else 'no'}" for i in range(400_000)]
    big.write_text("\n".join(rows) + "\n", encoding="utf-8")
    before = snapshot(place)
    process = _start(["import", "big.csv", "--survey", SURVEY], place)
    try:
        # Signal once the command has taken over SIGTERM and spent a while importing: a fixed
        # sleep signalled a slow-starting process (a loaded machine) before its handler was
        # there, and the default action killed it (-15) instead of interrupting the import.
        _wait_for(lambda: process.poll() is not None or _catches_sigterm(process.pid))
        started = _cpu_seconds(process.pid)
        _wait_for(lambda: process.poll() is not None
                  or _cpu_seconds(process.pid) - started > 0.3)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    if process.returncode == 0:
        pytest.skip("the import finished before it could be interrupted")
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert stderr.splitlines()[-1].startswith("Error: interrupted before the command finished")
    assert snapshot(place) == before


def test_escape_sequences_stored_in_the_database_reach_the_terminal_escaped(place):
    # issue 11: a title with terminal escapes reached the terminal raw through 'survey list'
    # and 'report'. survey add refuses such titles now (a case above); a database written
    # otherwise (an older surveykit, a hand edit) still prints them escaped.
    with sqlite3.connect(place / "surveykit.db") as conn:
        conn.execute("UPDATE surveys SET title = 'Evil \x1b]0;owned\x07 title'")
        source = conn.execute("SELECT source FROM survey_versions").fetchone()[0]
        conn.execute("UPDATE survey_versions SET source = ?", (source.replace(
            "Academic integrity survey, spring term", "Evil \\u001b]0;owned\\u0007 title"),))
    listed = run(["survey", "list"])
    assert listed.status == 0, listed.stderr
    assert "Evil \\x1b]0;owned\\x07 title" in listed.stdout
    assert "\x1b" not in listed.stdout + listed.stderr
    report = run(["report", "--survey", SURVEY])
    assert_contract(report, 1, r"^Error: survey 'academic_integrity' stored in .*: title: holds "
                               r"the control character \\x1b at position 6")
    assert "\x1b" not in report.stdout + report.stderr
