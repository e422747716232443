"""`surveykit generate` end to end: real CLI invocations on real SQLite files.

The database after a generation holds the issued ids and, for runs of at least
AUDIT_MINIMUM_PER_GROUP respondents per group, aggregate code counts per question,
and nothing that pairs a respondent with a code.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import sqlite3
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from migrated import sqlite_with_survey
from terminal import run_on_a_terminal

from surveykit.cli import main
from surveykit.collection.randomizer import SEED_WARNING
from surveykit.collection.respondent_ids import ID_PATTERN
from surveykit.definition.limits import AUDIT_MINIMUM_PER_GROUP
from surveykit.store import open_engine

SURVEY_TOML = (Path(__file__).parent / "surveys" / "integrity.toml").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def database_template(tmp_path_factory) -> Path:
    """A database at head holding integrity.toml, built once per module (tests copy it)."""
    return sqlite_with_survey(tmp_path_factory.mktemp("database") / "template.db", SURVEY_TOML,
                              "integrity.toml")


@pytest.fixture
def database(database_template, tmp_path) -> Path:
    path = tmp_path / "survey.db"
    shutil.copyfile(database_template, path)
    return path


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def generate(database: Path, out: Path, *extra: str, respondents: int = 40):
    return run("generate", "--survey", "integrity", "--respondents", str(respondents),
               "--out", str(out), "--db", str(database), *extra)


def every_table(path: Path) -> dict[str, tuple[list[str], list[tuple]]]:
    """Every table of the SQLite file: its column names and all its rows."""
    with sqlite3.connect(path) as conn:
        names = [row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        tables = {}
        for name in names:
            cursor = conn.execute(f'SELECT * FROM "{name}"')
            tables[name] = ([d[0] for d in cursor.description], cursor.fetchall())
    return tables


# the store names the instructions the questionnaires letter T, L, D
NAMES = {"T": "truthful", "L": "opposite", "D": "dont_know"}


def key_file_totals(key: Path) -> dict[tuple[str, int, str], int]:
    """(question, group, code) -> how many respondents the key file gives that code."""
    with key.open(newline="", encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream))
    return dict(Counter((r["question_id"], int(r["group"]), r["code"]) for r in rows))


def stored_totals(database: Path) -> dict[tuple[str, int, str], int]:
    with sqlite3.connect(database) as conn:
        return {(q, g, c): n for q, g, c, n in conn.execute(
            "SELECT questions.name, group_number, code, count FROM code_tallies "
            "JOIN questions ON questions.id = code_tallies.question_id")}


def test_database_after_generate_holds_issued_ids_and_aggregate_counts_only(database, tmp_path):
    key = tmp_path / "vault" / "key.csv"
    key.parent.mkdir()
    result = generate(database, tmp_path / "out", "--seed", "5", "--output", "json",
                      "--key-file", str(key), respondents=AUDIT_MINIMUM_PER_GROUP + 10)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert SEED_WARNING in result.stderr
    assert summary["audit"] == {"tallied": True, "minimum_per_group": AUDIT_MINIMUM_PER_GROUP}
    printed_id = re.compile(ID_PATTERN.pattern.strip("^$"))
    ids = set()
    for name in summary["files"]:
        if Path(name).name.startswith("sheets-"):
            ids |= set(printed_id.findall(Path(name).read_text(encoding="utf-8")))
    assert len(ids) == AUDIT_MINIMUM_PER_GROUP + 10

    tables = every_table(database)
    # Which tables hold an issued id anywhere? Only the register of issued ids.
    holding_ids = {name for name, (_, rows) in tables.items()
                   if any(cell in ids for row in rows for cell in row)}
    assert holding_ids == {"respondents"}
    columns, rows = tables["respondents"]
    assert set(columns) == {"survey_id", "respondent_id", "issued_at", "group_number"}
    assert {row[columns.index("respondent_id")] for row in rows} == ids
    # Codes appear only as totals: one row per (question, group, code), no respondent column,
    # and they are the totals of the codes the key file gives the respondents.
    columns, rows = tables["code_tallies"]
    assert set(columns) == {"question_id", "group_number", "code", "count"}
    assert len(rows) == 2 * 3
    assert stored_totals(database) == key_file_totals(key)
    # No other table has a column that could carry a code.
    for name, (columns, rows) in tables.items():
        if name == "code_tallies":
            continue
        for j, column in enumerate(columns):
            values = {row[j] for row in rows}
            assert not (values and values <= {"T", "L", "D", *NAMES.values()}), (name, column)


def test_a_second_generation_adds_ids_and_counts_of_runs_large_enough(database, tmp_path):
    keys = [tmp_path / f"key-{name}.csv" for name in "abc"]
    sizes = (AUDIT_MINIMUM_PER_GROUP, AUDIT_MINIMUM_PER_GROUP + 15, AUDIT_MINIMUM_PER_GROUP - 1)
    for key, size in zip(keys, sizes, strict=True):
        result = generate(database, tmp_path / key.stem, "--key-file", str(key),
                          respondents=size)
        assert result.exit_code == 0, result.output
    tables = every_table(database)
    assert len(tables["respondents"][1]) == sum(sizes)
    # the two runs of at least AUDIT_MINIMUM_PER_GROUP add up; the small one adds no counts
    assert stored_totals(database) == dict(
        Counter(key_file_totals(keys[0])) + Counter(key_file_totals(keys[1])))


def test_text_summary_names_the_files_and_says_whether_totals_were_kept(database, tmp_path):
    result = generate(database, tmp_path / "out", "--seed", "1", "--per-file", "15")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines == [
        f"wrote 3 sheets file(s) to {tmp_path / 'out'}: sheets-00001.html ... sheets-00003.html",
        f"wrote 3 slips file(s) to {tmp_path / 'out'}: slips-00001.html ... slips-00003.html",
        f"issued 40 respondent ids for survey 'integrity' in sqlite:///{database}",
        f"instruction totals not kept: with fewer than {AUDIT_MINIMUM_PER_GROUP} respondents "
        "they would reveal this run's instructions; the randomizer audit leaves the run out",
        "Print sheets-* and slips-* separately and shuffle the printed slips; each respondent "
        "keeps a slip and hands in only the sheet ('surveykit docs questionnaires').",
    ]
    large = generate(database, tmp_path / "large", respondents=AUDIT_MINIMUM_PER_GROUP)
    assert large.exit_code == 0, large.output
    assert large.stdout.splitlines()[3] == (
        "instruction totals kept for the randomizer audit (runs of at least "
        f"{AUDIT_MINIMUM_PER_GROUP} respondents)")


def test_key_file_is_written_only_on_request_with_a_loud_warning(database, tmp_path):
    key = tmp_path / "vault" / "key.csv"
    key.parent.mkdir()
    result = generate(database, tmp_path / "out", "--key-file", str(key), "--output", "json",
                      respondents=12)
    assert result.exit_code == 0, result.output
    assert "undoes the protection of randomized response" in result.stderr
    with key.open(newline="", encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream))
    assert len(rows) == 24 and {r["code"] for r in rows} <= set(NAMES.values())
    assert {r["group"] for r in rows} == {"1"}
    ids = {r["respondent_id"] for r in rows}
    # the database still pairs no id with a code
    tables = every_table(database)
    assert {name for name, (_, rs) in tables.items()
            if any(cell in ids for r in rs for cell in r)} == {"respondents"}
    # and nothing in the output folder pairs them either: slips carry no id
    for path in (tmp_path / "out").iterdir():
        text = path.read_text(encoding="utf-8")
        if path.name.startswith("slips-"):
            assert not any(i in text for i in ids)


def test_die_mode_records_ids_and_no_code_counts(database, tmp_path):
    result = generate(database, tmp_path / "out", "--mode", "die", "--format", "markdown",
                      "--output", "json", respondents=5)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert [Path(f).name for f in summary["files"]] == ["forms-00001.md"]
    tables = every_table(database)
    assert len(tables["respondents"][1]) == 5 and tables["code_tallies"][1] == []


@pytest.mark.parametrize(("args", "status", "message"), [
    (["--survey", "nope"], 1, "Error: "),
    (["--key-file", "{out}/key.csv"], 2, "Error: --key-file '{out}/key.csv' is inside the --out "
                                          "folder"),
    (["--mode", "die", "--key-file", "{tmp}/k.csv"], 2, "Error: --key-file needs --mode slips"),
    (["--respondents", "0"], 2, "Error: Invalid value for '--respondents'"),
    (["--format", "pdf"], 2, "Error: Invalid value for '--format'"),
])
def test_bad_options_exit_with_one_line_errors_and_record_nothing(database, tmp_path, args,
                                                                  status, message):
    out = tmp_path / "out"
    values = {"--survey": "integrity", "--respondents": "3", "--out": str(out),
              "--db": str(database)}
    extra = []
    for i in range(0, len(args), 2):
        value = args[i + 1].format(out=out, tmp=tmp_path)
        if args[i] in values:
            values[args[i]] = value
        else:
            extra += [args[i], value]
    command = ["generate"] + [x for pair in values.items() for x in pair] + extra
    result = run(*command)
    assert result.exit_code == status, result.output
    stderr_lines = result.stderr.strip().splitlines()
    assert stderr_lines[-1].startswith(message.format(out=out, tmp=tmp_path)), result.stderr
    assert "Traceback" not in result.output
    assert every_table(database)["respondents"][1] == []
    assert not out.exists() or not list(out.iterdir())


def test_generate_without_a_database_says_how_to_create_one(tmp_path):
    result = generate(tmp_path / "missing.db", tmp_path / "out")
    assert result.exit_code == 1
    assert "run 'surveykit init'" in result.stderr


def test_generate_help_documents_every_option():
    result = run("generate", "--help")
    assert result.exit_code == 0
    for option in ("--survey", "--respondents", "--out", "--mode", "--format", "--key-file",
                   "--seed", "--templates", "--per-file", "--db", "--output"):
        assert option in result.output


def test_installed_command_in_a_pipe_prints_no_progress_bar(database, tmp_path):
    executable = shutil.which("surveykit")
    assert executable, "surveykit is not installed (pip install -e '.[test]')"
    completed = subprocess.run(
        [executable, "generate", "--survey", "integrity", "--respondents", "3", "--out",
         str(tmp_path / "out"), "--db", str(database)],
        capture_output=True, text=True, timeout=120, check=False)
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""  # no seed, no key file: no warnings, and no bar in a pipe
    assert completed.stdout.startswith("wrote 1 sheets file(s)")


def test_imports_accept_issued_ids_and_reject_ids_never_issued(database, tmp_path):
    from surveykit.errors import CsvImportError
    from surveykit.store.importer import import_responses

    result = generate(database, tmp_path / "out", "--output", "json", respondents=3)
    assert result.exit_code == 0, result.output
    sheets = (tmp_path / "out" / "sheets-00001.html").read_text(encoding="utf-8")
    issued = re.findall(ID_PATTERN.pattern.strip("^$"), sheets)
    assert len(issued) == 3
    never_issued = "ZZZZ-ZZZZ-ZZZZ-ZZ"
    assert never_issued not in issued

    bad = tmp_path / "bad.csv"
    bad.write_text("respondent_id,question_id,answer\n"
                   f"{issued[0]},exam,yes\n{never_issued},exam,no\n", encoding="utf-8")
    engine = open_engine(str(database))
    with pytest.raises(CsvImportError) as caught:
        import_responses(engine, bad, "integrity")
    assert f"line 3, column respondent_id, value {never_issued!r}" in str(caught.value)
    assert "not issued" in str(caught.value)
    assert every_table(database)["responses"][1] == []

    good = tmp_path / "good.csv"
    good.write_text("respondent_id,question_id,answer\n"
                    + "".join(f"{rid},exam,yes\n{rid},paid,dont_know\n" for rid in issued),
                    encoding="utf-8")
    import_responses(engine, good, "integrity")
    engine.dispose()
    assert len(every_table(database)["responses"][1]) == 6


def test_a_failing_database_write_removes_the_files_and_the_key_file(database, tmp_path):
    from sqlalchemy.exc import OperationalError

    from surveykit.workflows.generate import generate_questionnaires

    with sqlite3.connect(database) as conn:  # break the register of issued ids
        conn.execute("DROP TABLE respondents")
    engine = open_engine(str(database))
    key = tmp_path / "key.csv"
    with pytest.raises(OperationalError, match="respondents"):
        generate_questionnaires(engine, "integrity", respondents=4, out_dir=tmp_path / "out",
                                key_file=key, seed=1)
    engine.dispose()
    assert not (tmp_path / "out").exists()
    assert not key.exists()
    assert every_table(database)["code_tallies"][1] == []


def test_installed_command_on_a_terminal_shows_a_progress_bar(database, tmp_path):
    completed, shown = run_on_a_terminal(
        "generate", "--survey", "integrity", "--respondents", "1200",
        "--out", str(tmp_path / "out"), "--db", str(database))
    assert completed.returncode == 0
    assert b"Generating" in shown and b"100%" in shown
    assert completed.stdout.startswith("wrote 3 sheets file(s)")  # stdout stays clean


def test_imports_read_issued_ids_the_way_people_type_them(database, tmp_path):
    """Lower case, spaces for dashes, O for 0 and I/L for 1 all mean the issued id."""
    from surveykit.store import count_responses
    from surveykit.store.importer import import_responses

    result = generate(database, tmp_path / "out", "--seed", "3", "--output", "json",
                      respondents=2)
    assert result.exit_code == 0, result.output
    sheets = (tmp_path / "out" / "sheets-00001.html").read_text(encoding="utf-8")
    first, second = re.findall(ID_PATTERN.pattern.strip("^$"), sheets)
    typed = first.lower().replace("-", " ").replace("0", "o").replace("1", "l")
    answers = tmp_path / "typed.csv"
    answers.write_text("respondent_id,question_id,answer\n"
                       f"{typed},exam,yes\n{second},exam,no\n", encoding="utf-8")
    engine = open_engine(str(database))
    import_responses(engine, answers, "integrity")
    stored = every_table(database)["responses"]
    columns, rows = stored
    ids = {row[columns.index("respondent_id")] for row in rows}
    assert ids == {first, second}
    assert {c.question_id: (c.yes, c.no) for c in count_responses(engine, "integrity")}["exam"] \
        == (1, 1)
    engine.dispose()


# -- multi-group surveys and every design ----------------------------------------------------

GROUPS_TOML = (Path(__file__).parent / "surveys" / "groups.toml").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def groups_database_template(tmp_path_factory) -> Path:
    """A database at head holding groups.toml, built once per module: the tests work on copies."""
    return sqlite_with_survey(tmp_path_factory.mktemp("groups_database") / "template.db",
                              GROUPS_TOML, "groups.toml")


@pytest.fixture
def groups_database(groups_database_template, tmp_path) -> Path:
    path = tmp_path / "groups.db"
    shutil.copyfile(groups_database_template, path)
    return path


def test_multi_group_generation_stores_groups_with_ids_and_instructions_only_as_totals(
        groups_database, tmp_path):
    key = tmp_path / "vault" / "key.csv"
    key.parent.mkdir()
    respondents = 2 * AUDIT_MINIMUM_PER_GROUP + 1
    result = run("generate", "--survey", "groups", "--respondents", str(respondents), "--out",
                 str(tmp_path / "out"), "--db", str(groups_database), "--seed", "8",
                 "--key-file", str(key), "--output", "json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert sorted(summary["groups"].values()) == [AUDIT_MINIMUM_PER_GROUP,
                                                  AUDIT_MINIMUM_PER_GROUP + 1]
    assert set(summary["groups"]) == {"short", "long"}
    assert summary["audit"]["tallied"] is True
    with key.open(newline="", encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream))
    ids = {r["respondent_id"] for r in rows}
    assert len(ids) == respondents

    tables = every_table(groups_database)
    holding_ids = {name for name, (_, rs) in tables.items()
                   if any(cell in ids for r in rs for cell in r)}
    assert holding_ids == {"respondents"}
    columns, stored_respondents = tables["respondents"]
    groups_of = {row[columns.index("respondent_id")]: row[columns.index("group_number")]
                 for row in stored_respondents}
    # the database keeps each id's group (a form version), the one the key file and sheets show
    assert groups_of == {r["respondent_id"]: int(r["group"]) for r in rows}
    # instructions only as totals per question, group and code, those of the key file
    columns, tally_rows = tables["code_tallies"]
    assert set(columns) == {"question_id", "group_number", "code", "count"}
    stored = stored_totals(groups_database)
    assert stored == key_file_totals(key)
    # one-group questions (crosswise, Kuk) are counted per group too: every group adds up
    number = {"short": 1, "long": 2}
    for question in ("drugs", "tax", "shoplift", "fare"):
        for name, issued in summary["groups"].items():
            assert sum(n for (q, g, _), n in stored.items()
                       if q == question and g == number[name]) == issued, (question, name)
    # no other table has a column whose values could be instruction codes
    codes = {c for _, _, c in stored}
    for name, (columns, rs) in tables.items():
        if name == "code_tallies":
            continue
        for j, column in enumerate(columns):
            values = {row[j] for row in rs}
            assert not (values and values <= codes | {"T", "L", "D"}), (name, column)


def test_text_summary_of_a_multi_group_survey_prints_groups_and_no_instruction_counts(
        groups_database, tmp_path):
    result = run("generate", "--survey", "groups", "--respondents", "10", "--out",
                 str(tmp_path / "out"), "--db", str(groups_database), "--seed", "2")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[3:] == [
        "groups (form versions): short 5, long 5",
        f"instruction totals not kept: with fewer than {AUDIT_MINIMUM_PER_GROUP} respondents "
        "per form version they would reveal this run's instructions; the randomizer audit "
        "leaves the run out",
        "Print sheets-* and slips-* separately and shuffle the printed slips within each form "
        "version; each respondent keeps a slip and hands in only the sheet ('surveykit docs "
        "questionnaires').",
        "Give each respondent a sheet and a slip of the same form version.",
    ]
    assert every_table(groups_database)["code_tallies"][1] == []


def test_die_mode_of_a_multi_group_survey_stores_the_groups_and_no_counts(groups_database,
                                                                         tmp_path):
    result = run("generate", "--survey", "groups", "--respondents", "6", "--mode", "die",
                 "--out", str(tmp_path / "out"), "--db", str(groups_database), "--output",
                 "json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["groups"] == {"short": 3, "long": 3}
    assert summary["audit"]["tallied"] is False
    tables = every_table(groups_database)
    columns, rows = tables["respondents"]
    assert sorted(row[columns.index("group_number")] for row in rows) == [1, 1, 1, 2, 2, 2]
    assert tables["code_tallies"][1] == []
    forms = (tmp_path / "out" / "forms-00001.html").read_text(encoding="utf-8")
    assert re.findall(r'<span class="group-name">(\w+)</span>', forms) == ["short"] * 3 + [
        "long"] * 3
