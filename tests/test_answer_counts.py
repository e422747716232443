"""Kept counts: every write path keeps answer_counts and the known respondents with the answers;
`surveykit check` recomputes them. Real databases (SQLite and PostgreSQL), real processes."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import migrated
import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, text

from surveykit.cli import main
from surveykit.definition.survey import parse_survey
from surveykit.errors import CsvImportError
from surveykit.resources import locate_resource
from surveykit.store import database as store
from surveykit.store import migrate
from surveykit.store.answer_counts import check_counts, rebuild_counts
from surveykit.store.importer import import_responses
from surveykit.store.submissions import SubmissionConflict, record_submission
from tests.store_support import (
    add_sample_survey,
    add_sample_survey_and_answers,
    checked_counts,
    run_cli,
)

SURVEY = "academic_integrity"
QUESTIONS = ("exam_cheating", "plagiarism", "contract_cheating", "fabricated_data")
SAMPLE = locate_resource("sample_data")
LONG_HEADER = "respondent_id,question_id,answer\n"


def write(path: Path, content: str) -> Path:
    path.write_text(content, encoding="utf-8")
    return path


def long_rows(respondents: range, questions=QUESTIONS, answer: str = "yes") -> str:
    return LONG_HEADER + "".join(f"R{r:07d},{q},{answer}\n" for r in respondents
                                 for q in questions)


def recounted(engine, survey: str = SURVEY) -> dict:
    """The counts from the answers themselves (the GROUP BY of surveykit 0.1), with missing."""
    with engine.connect() as conn:
        key = store.survey_id(conn, survey)
        names = {k: n for n, k in store.question_ids(conn, key).items()}
        known = conn.execute(store.known_respondents_statement(key)).scalar_one()
        cells = {(names[q], str(g), a): int(n)
                 for q, g, a, n in conn.execute(store.counts_statement(key))}
    return {"cells": cells, "known": known}


def kept(engine, survey: str = SURVEY) -> dict:
    counts = checked_counts(engine, survey)
    cells = {(c.question_id, g, a): n for c in counts for g, a, n in c.counts}
    known = {c.missing + c.answered for c in counts}
    return {"cells": cells, "known": known}


def assert_kept_equals_recounted(engine, survey: str = SURVEY) -> None:
    mine, truth = kept(engine, survey), recounted(engine, survey)
    assert mine["cells"] == truth["cells"]
    assert mine["known"] == {truth["known"]}


# -- every write path ---------------------------------------------------------------------


def test_imports_replacements_and_refusals_keep_the_counts(survey_engine, tmp_path):
    import_responses(survey_engine, write(tmp_path / "a.csv", long_rows(range(30))), SURVEY)
    assert_kept_equals_recounted(survey_engine)
    # a wide file with new and known respondents, empty cells and other spellings
    wide = write(tmp_path / "b.csv", "respondent_id;exam_cheating;plagiarism\n"
                                     "R0000100;no;dk\nR0000101;;Y\n")
    import_responses(survey_engine, wide, SURVEY)
    assert_kept_equals_recounted(survey_engine)
    # --replace moves answers between cells and adds new ones
    changed = write(tmp_path / "c.csv", LONG_HEADER + "R0000000,exam_cheating,no\n"
                    "R0000001,plagiarism,dont_know\nR0000200,plagiarism,no\n")
    result = import_responses(survey_engine, changed, SURVEY, replace=True)
    assert (result.imported, result.unchanged, result.replaced) == (1, 0, 2)
    assert_kept_equals_recounted(survey_engine)
    assert kept(survey_engine)["cells"][("exam_cheating", "1", "yes")] == 29
    # refused, dry-run and skip-invalid imports
    before = kept(survey_engine)
    with pytest.raises(CsvImportError):
        import_responses(survey_engine, write(tmp_path / "d.csv", long_rows(range(300, 310))
                                              + "Z,exam_cheating,perhaps\n"), SURVEY)
    assert import_responses(survey_engine, write(tmp_path / "e.csv", long_rows(range(400, 410))),
                            SURVEY, dry_run=True).imported == 40
    assert kept(survey_engine) == before
    rejects = tmp_path / "rejects.csv"
    import_responses(survey_engine, write(tmp_path / "f.csv", long_rows(range(500, 505))
                                          + "R0000000,plagiarism,yes\nZ,plagiarism,maybe\n"),
                     SURVEY, skip_invalid=True, rejects_path=rejects)
    assert_kept_equals_recounted(survey_engine)
    assert kept(survey_engine)["known"] == {before["known"].pop() + 5}


def test_replacing_every_answer_of_a_cell_removes_the_cell(survey_engine, tmp_path):
    import_responses(survey_engine, write(tmp_path / "a.csv", long_rows(range(3), ["plagiarism"])),
                     SURVEY)
    import_responses(survey_engine, write(tmp_path / "b.csv", long_rows(
        range(3), ["plagiarism"], answer="no")), SURVEY, replace=True)
    assert_kept_equals_recounted(survey_engine)
    with survey_engine.connect() as conn:
        cells = conn.execute(text("SELECT answer, count FROM answer_counts")).all()
    assert [tuple(c) for c in cells] == [("no", 3)]


def test_web_submissions_keep_the_counts(survey_engine, tmp_path):
    import_responses(survey_engine, write(tmp_path / "a.csv", long_rows(range(2))), SURVEY)
    record_submission(survey_engine, SURVEY, "W1", {"exam_cheating": "no", "plagiarism": "yes"})
    record_submission(survey_engine, SURVEY, "W1", {"exam_cheating": "no", "plagiarism": "yes"})
    with pytest.raises(SubmissionConflict):
        record_submission(survey_engine, SURVEY, "R0000000", {"exam_cheating": "no"})
    assert_kept_equals_recounted(survey_engine)
    assert kept(survey_engine)["known"] == {3}


def test_two_groups_are_kept_apart(engine, tmp_path):
    survey = parse_survey("""
name = "groups"
title = "Groups"
[design]
model = "sld"
p = [0.2, 0.8]
[[questions]]
id = "q"
text = "Ever?"
""")
    store.add_survey(engine, survey)
    import_responses(engine, write(tmp_path / "g.csv", "respondent_id,group,q\n"
                                   "a,1,yes\nb,2,yes\nc,2,no\nd,1,\n"), "groups")
    assert_kept_equals_recounted(engine, "groups")
    assert kept(engine, "groups")["cells"] == {("q", "1", "yes"): 1, ("q", "2", "yes"): 1,
                                               ("q", "2", "no"): 1}


def test_concurrent_imports_of_the_same_respondents_count_each_once(engine, tmp_path):
    """Two files answer different questions of the same 2,000 respondents at the same time:
    each respondent is new to one of them only (PostgreSQL: the key of known_respondents)."""
    files = [write(tmp_path / f"{q}.csv", long_rows(range(2000), [q]))
             for q in ("exam_cheating", "plagiarism", "contract_cheating")]
    store.add_survey(engine, parse_survey((SAMPLE / "academic_integrity.toml").read_text("utf-8")))
    errors: list[BaseException] = []

    def run(path: Path) -> None:
        try:
            import_responses(engine, path, SURVEY)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(path,)) for path in files]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert errors == []
    assert_kept_equals_recounted(engine)
    assert kept(engine)["known"] == {2000}
    assert kept(engine)["cells"] == {(q, "1", "yes"): 2000 for q in QUESTIONS[:3]}


def test_concurrent_web_submissions_keep_the_counts(survey_engine):
    errors: list[BaseException] = []

    def send(start: int) -> None:
        try:
            for i in range(start, start + 25):
                record_submission(survey_engine, SURVEY, f"W{i}",
                                  {"exam_cheating": "yes" if i % 2 else "no",
                                   "plagiarism": "dont_know"})
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=send, args=(25 * k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert errors == []
    assert_kept_equals_recounted(survey_engine)
    assert kept(survey_engine)["cells"][("plagiarism", "1", "dont_know")] == 100


# -- reading and checking ---------------------------------------------------------------------


def test_counts_read_the_kept_counts_not_the_answers(survey_engine, tmp_path):
    import_responses(survey_engine, write(tmp_path / "a.csv", long_rows(range(5))), SURVEY)
    with survey_engine.begin() as conn:  # an answer deleted behind surveykit's back
        conn.execute(text("DELETE FROM responses WHERE respondent_id = 'R0000000' AND "
                          "question_id = (SELECT id FROM questions WHERE name = 'plagiarism')"))
    counts = {c.question_id: c for c in store.count_responses(survey_engine, SURVEY)}
    assert counts["plagiarism"].yes == 5  # the kept count, not a recount
    check = check_counts(survey_engine, SURVEY)
    assert not check.ok
    assert [(d.question, d.group, d.answer, d.kept, d.counted) for d in check.differences] == [
        ("plagiarism", 1, "yes", 5, 4)]
    assert check.summary() == (
        "the kept counts of survey 'academic_integrity' differ from its answers in 1 cell; "
        "rebuild them from the answers with 'surveykit check --survey academic_integrity "
        "--repair'")
    assert rebuild_counts(survey_engine, SURVEY) == check
    assert check_counts(survey_engine, SURVEY).ok
    assert {c.question_id: c.yes for c in store.count_responses(survey_engine, SURVEY)}[
        "plagiarism"] == 4


def test_the_kept_counts_are_read_along_their_key(sqlite_url):
    """A few rows of one survey, found by the primary key: no scan of any table."""
    import sqlite3

    engine = store.open_engine(sqlite_url)
    store.init_database(engine)
    answers = store.answer_counts
    sql = str(answers.select().where(answers.c.survey_id == 1).compile(
        dialect=engine.dialect, compile_kwargs={"literal_binds": True}))
    plan = "\n".join(row[3] for row in sqlite3.connect(engine.url.database).execute(
        "EXPLAIN QUERY PLAN " + sql))
    assert "SEARCH answer_counts USING INDEX sqlite_autoindex_answer_counts_1 (survey_id=?)" \
        in plan
    engine.dispose()


def cli(*args: str):
    return CliRunner().invoke(main, list(args), prog_name="surveykit")


def test_cli_check_lists_the_differing_cells_and_exits_1_then_repairs(tmp_path):
    url = migrated.copy_filled(f"sqlite:///{tmp_path / 'c.db'}", add_sample_survey_and_answers)
    good = cli("check", "--survey", SURVEY, "--db", url)
    assert (good.exit_code, good.stdout) == (0, (
        "The kept counts of survey 'academic_integrity' agree with its answers: 12 cells, "
        "1,172 answers, 300 respondents.\n"))
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("UPDATE answer_counts SET count = count + 2 WHERE question_id = 1 "
                          "AND answer = 'yes'"))
        conn.execute(text("UPDATE surveys SET known_respondents = 299"))
    engine.dispose()
    bad = cli("check", "--survey", SURVEY, "--db", url)
    assert bad.exit_code == 1
    assert bad.stdout.splitlines() == [
        "question       group  answer  kept  counted",
        "exam_cheating      1     yes    94       92",
        "respondents                    299      300"]
    assert bad.stderr == (
        "Error: the kept counts of survey 'academic_integrity' differ from its answers in 1 "
        "cell and the respondents (300 with answers, kept 299, listed 300); rebuild them from "
        "the answers with 'surveykit check --survey academic_integrity --repair'\n")
    data = json.loads(cli("check", "--survey", SURVEY, "--db", url, "--format", "json").stdout)
    assert (data["ok"], data["differences"][0]["kept"], data["kept_respondents"]) == (
        False, 94, 299)
    repaired = cli("check", "--survey", SURVEY, "--db", url, "--repair")
    assert repaired.exit_code == 0
    assert repaired.stdout.splitlines()[-1] == (
        "Rebuilt the kept counts of survey 'academic_integrity' from its answers: 12 cells, "
        "1,172 answers, 300 respondents.")
    assert cli("check", "--survey", SURVEY, "--db", url).exit_code == 0
    assert cli("check", "--survey", "nope", "--db", url).stderr.startswith(
        "Error: no survey named 'nope' in the database")


def test_check_has_help():
    result = cli("check", "--help")
    assert result.exit_code == 0
    assert "--repair" in result.stdout and "SURVEYKIT_DB" in result.stdout


# -- a killed import on PostgreSQL --------------------------------------------------------------


def surveykit_command() -> list[str]:
    found = shutil.which("surveykit")
    return [found] if found else [sys.executable, "-m", "surveykit"]


@pytest.mark.postgres
@pytest.mark.skipif(os.environ.get("SURVEYKIT_TEST_POSTGRES_URL") is None,
                    reason="SURVEYKIT_TEST_POSTGRES_URL is not set")
@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_a_killed_import_into_postgresql_leaves_the_counts_with_the_answers(
        database_url, tmp_path):
    """The SQLite kill is in tests/test_import.py. Only the killed import needs a process of
    its own; the steps around it run in this process (run_cli disposes their engines)."""
    run = surveykit_command()
    small = write(tmp_path / "small.csv", long_rows(range(10_000_000, 10_000_010)))
    migrated.copy_filled(database_url, add_sample_survey)
    done = run_cli("import", str(small), "--survey", SURVEY, "--db", database_url)
    assert done.exit_code == 0, done.output
    big = write(tmp_path / "big.csv", long_rows(range(250_000)))
    process = subprocess.Popen([*run, "import", str(big), "--survey", SURVEY, "--db",
                                database_url], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    watcher = store.open_engine(database_url)
    deadline = time.monotonic() + 120
    try:
        # wait until the import is COPYing rows into its staging table
        while time.monotonic() < deadline and process.poll() is None:
            with watcher.connect() as conn:
                busy = conn.execute(text(
                    "SELECT count(*) FROM pg_stat_activity WHERE query LIKE "
                    "'COPY surveykit_incoming%' AND pid <> pg_backend_pid()")).scalar_one()
            if busy:
                break
            time.sleep(0.01)
        assert process.poll() is None, "the import finished before it could be killed"
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        # the server notices the lost client and rolls its transaction back
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with watcher.connect() as conn:
                if not conn.execute(text(
                        "SELECT count(*) FROM pg_stat_activity WHERE query LIKE "
                        "'COPY surveykit_incoming%' AND pid <> pg_backend_pid()")).scalar_one():
                    break
            time.sleep(0.05)
        assert_kept_equals_recounted(watcher)
        assert kept(watcher)["cells"] == {(q, "1", "yes"): 10 for q in QUESTIONS}
    finally:
        watcher.dispose()
    check = run_cli("check", "--survey", SURVEY, "--db", database_url)
    assert check.exit_code == 0, check.stderr


# -- the migration -----------------------------------------------------------------------------


def test_a_0004_database_gets_its_counts_from_its_answers(database_url, tmp_path):
    engine = store.open_engine(database_url)
    migrate.upgrade(engine, "0004")
    survey = (SAMPLE / "academic_integrity.toml").read_text("utf-8")
    twin = survey.replace('name = "academic_integrity"', 'name = "twin"')
    with engine.begin() as conn:  # what surveykit at 0004 wrote: two surveys, answers
        for key, (name, source) in enumerate([(SURVEY, survey), ("twin", twin)], start=1):
            conn.execute(text("INSERT INTO surveys (id, name, title, language, created_at) "
                              "VALUES (:id, :name, 'T', 'en', CURRENT_TIMESTAMP)"),
                         {"id": key, "name": name})
            conn.execute(text("INSERT INTO survey_versions VALUES (:id, 1, :source, "
                              "CURRENT_TIMESTAMP)"), {"id": key, "source": source})
            for position, question in enumerate(QUESTIONS):
                conn.execute(text(
                    "INSERT INTO questions (id, survey_id, position, name, text, design) "
                    "VALUES (:id, :survey, :position, :name, 'T', '{}')"),
                    {"id": 4 * (key - 1) + position + 1, "survey": key, "position": position,
                     "name": question})
            conn.execute(text(
                "INSERT INTO imports (id, survey_id, survey_version, file_name, sha256, "
                "file_format, rows_read, imported, replaced, rejected, missing, imported_at) "
                "VALUES (:id, :id, 1, 'old.csv', 'x', 'long', 0, 0, 0, 0, 0, "
                "CURRENT_TIMESTAMP)"), {"id": key})
        rows = [{"survey": 1 + i % 2, "question": 4 * (i % 2) + 1 + i % 3, "respondent": f"r{i}",
                 "answer": ("yes", "no", "dont_know")[i % 5 % 3], "group": 1}
                for i in range(500)]
        conn.execute(text("INSERT INTO responses (survey_id, question_id, respondent_id, "
                          "answer, group_number, import_id) VALUES (:survey, :question, "
                          ":respondent, :answer, :group, :survey)"), rows)
    migrate.upgrade(engine, "head")  # 0005 builds the counts; 0006 leaves them alone
    migrate.check(engine)
    for name in (SURVEY, "twin"):
        assert check_counts(engine, name).ok
        assert_kept_equals_recounted(engine, name)
    assert kept(engine, "twin")["known"] == {250}
    migrate.downgrade(engine, "0004")
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM responses")).scalar_one() == 500
    migrate.upgrade(engine, "head")
    assert check_counts(engine, SURVEY).ok
    engine.dispose()
