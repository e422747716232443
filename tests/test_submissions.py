"""Web submissions in the store: one transaction, idempotent, issued ids, groups, day records.

Every test runs on a migrated SQLite file and on a PostgreSQL schema.
"""

from __future__ import annotations

import os
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine, select, text

from surveykit import store
from surveykit.definition.survey import parse_survey
from surveykit.store import database
from surveykit.store.importer import import_responses
from surveykit.store.submissions import (
    NotIssuedError,
    SubmissionConflict,
    SubmissionError,
    open_submissions,
    record_submission,
)
from tests.store_support import checked_counts
from tests.web_support import ANSWERS, snapshot

NOON = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
TWO_GROUPS = """
name = "groups"
title = "Two groups"
[design]
model = "sld"
p = [0.2, 0.8]
groups = ["short", "long"]
[[questions]]
id = "q1"
text = "Ever?"
[[questions]]
id = "q2"
text = "Twice?"
"""


def test_a_submission_stores_every_answer_and_counts_see_it_like_an_import(
        survey_engine: Engine, sample_survey, tmp_path: Path):
    result = record_submission(survey_engine, "academic_integrity", "web-1", ANSWERS, now=NOON)
    assert (result.answers, result.already_recorded, result.group) == (4, False, 1)
    # the same answers imported from a file into a twin survey count the same
    twin = parse_survey(sample_survey.source.replace('name = "academic_integrity"',
                                                     'name = "twin"'))
    store.add_survey(survey_engine, twin)
    csv = tmp_path / "twin.csv"
    csv.write_text("respondent_id," + ",".join(ANSWERS) + "\nweb-1,"
                   + ",".join(ANSWERS.values()) + "\n", encoding="utf-8")
    import_responses(survey_engine, csv, "twin")
    web = checked_counts(survey_engine, "academic_integrity")
    imported = checked_counts(survey_engine, "twin")
    assert [(q.counts, q.missing) for q in web] == [(q.counts, q.missing) for q in imported]
    assert [q.answers() for q in web] == [{"yes": 1}, {"no": 1}, {"dont_know": 1}, {"no": 1}]


def test_the_same_answers_again_change_nothing(survey_engine: Engine):
    first = record_submission(survey_engine, "academic_integrity", "web-1", ANSWERS, now=NOON)
    before = snapshot(survey_engine)
    again = record_submission(survey_engine, "academic_integrity", "web-1", dict(ANSWERS),
                              now=NOON + timedelta(days=1))
    assert again.already_recorded and again.answers == 0
    assert again.import_id == first.import_id
    assert snapshot(survey_engine) == before


def test_different_answers_for_a_recorded_respondent_are_a_conflict(survey_engine: Engine):
    record_submission(survey_engine, "academic_integrity", "web-1", ANSWERS, now=NOON)
    before = snapshot(survey_engine)
    for changed in ({**ANSWERS, "plagiarism": "yes"},
                    {"exam_cheating": "yes"}):  # fewer answers is different too
        with pytest.raises(SubmissionConflict, match="different answers are already recorded"):
            record_submission(survey_engine, "academic_integrity", "web-1", changed, now=NOON)
    assert snapshot(survey_engine) == before


def test_answers_from_an_earlier_import_count_as_recorded(survey_engine: Engine,
                                                          tmp_path: Path):
    csv = tmp_path / "paper.csv"
    csv.write_text("respondent_id,question_id,answer\np-7,exam_cheating,yes\n",
                   encoding="utf-8")
    import_responses(survey_engine, csv, "academic_integrity")
    same = record_submission(survey_engine, "academic_integrity", "p-7",
                             {"exam_cheating": "yes"})
    assert same.already_recorded
    with pytest.raises(SubmissionConflict):
        record_submission(survey_engine, "academic_integrity", "p-7", {"exam_cheating": "no"})


def test_once_ids_are_issued_only_issued_ids_are_accepted_as_typed(survey_engine: Engine):
    issued = "7KQ2-M9XD-4FRT-8B"
    database.record_generation(survey_engine, "academic_integrity", [issued], {})
    before = snapshot(survey_engine)
    with pytest.raises(NotIssuedError, match="was not issued for survey 'academic_integrity'"):
        record_submission(survey_engine, "academic_integrity", "7KQ2-M9XD-4FRT-8C", ANSWERS)
    assert snapshot(survey_engine) == before
    # typed in lower case with spaces and I for 1: read as the issued id
    result = record_submission(survey_engine, "academic_integrity", "7kq2 m9xd 4frt 8b", ANSWERS)
    assert result.respondent_id == issued


def test_a_mistyped_web_id_is_called_a_typo_and_no_issued_id_is_revealed(survey_engine: Engine):
    issued = "7KQ2-M9XD-4FRT-8BT"  # its check symbol is T
    database.record_generation(survey_engine, "academic_integrity", [issued], {})
    before = snapshot(survey_engine)
    with pytest.raises(NotIssuedError) as caught:
        record_submission(survey_engine, "academic_integrity", "7KQ2-M9XD-4FRT-8CT", ANSWERS)
    assert str(caught.value) == ("this respondent id has a typo: its check symbol (the last) "
                                 "does not match the others; copy it again from the answer "
                                 "sheet")
    assert issued not in str(caught.value)
    assert snapshot(survey_engine) == before


def test_the_group_comes_from_the_issued_id(engine: Engine):
    store.add_survey(engine, parse_survey(TWO_GROUPS))
    database.record_generation(engine, "groups", ["A-1", "B-1"], {}, groups=[1, 2])
    submissions = open_submissions(engine, "groups")
    assert submissions.check("B-1").group == 2
    submissions.record("B-1", {"q1": "yes", "q2": "no"})
    counts = checked_counts(engine, "groups")
    assert counts[0].counts.to_dict() == {"2": {"yes": 1}}


def test_a_multi_group_survey_without_issued_ids_refuses_submissions(engine: Engine):
    store.add_survey(engine, parse_survey(TWO_GROUPS))
    with pytest.raises(NotIssuedError, match="multi-group designs and no issued ids"):
        record_submission(engine, "groups", "anyone", {"q1": "yes"})


@pytest.mark.parametrize("respondent_id, answers, message", [
    ("web-1", {"exam_cheating": "maybe"}, "must be one of its design's labels"),
    ("web-1", {"exam_cheating": "Yes"}, "must be one of its design's labels"),  # labels only
    ("web-1", {"exam_cheating": ["yes"]}, "must be one of its design's labels"),
    ("web-1", {"nonexistent": "yes"}, "does not have; its questions are exam_cheating"),
    ("web-1", {}, "one question or more"),
    ("web-1", ["yes"], "must map question ids to answers"),
    ("<script>alert(1)</script>", ANSWERS, "respondent_id must be 1 to 200 letters"),
    ("", ANSWERS, "respondent_id must be 1 to 200"),
    ("x" * 201, ANSWERS, "respondent_id must be 1 to 200"),
    (17, ANSWERS, "respondent_id must be a text"),
])
def test_malformed_submissions_are_refused_and_change_nothing(survey_engine: Engine,
                                                              respondent_id, answers, message):
    before = snapshot(survey_engine)
    with pytest.raises(SubmissionError, match=message) as caught:
        record_submission(survey_engine, "academic_integrity", respondent_id, answers)
    assert "<script>" not in str(caught.value)  # messages never repeat what was sent
    assert snapshot(survey_engine) == before


def test_web_answers_go_to_one_import_record_per_utc_day(survey_engine: Engine):
    record_submission(survey_engine, "academic_integrity", "a", ANSWERS, now=NOON)
    record_submission(survey_engine, "academic_integrity", "b", {"exam_cheating": "no"},
                      now=NOON + timedelta(hours=11))  # 23:00 UTC, same day
    record_submission(survey_engine, "academic_integrity", "c", ANSWERS,
                      now=NOON + timedelta(hours=13))  # the next day
    imports = database.imports
    with survey_engine.connect() as conn:
        rows = conn.execute(select(imports.c.file_name, imports.c.file_format,
                                   imports.c.rows_read, imports.c.imported, imports.c.missing,
                                   imports.c.imported_at)
                            .order_by(imports.c.id)).all()
    assert [tuple(row[:5]) for row in rows] == [("web 2026-11-23", "web", 2, 5, 3),
                                                ("web 2026-11-24", "web", 1, 4, 0)]
    # dated by the day only: no stored time tells when a respondent answered
    assert [database.as_utc(row[5]) for row in rows] == [
        datetime(2026, 11, 23, tzinfo=UTC), datetime(2026, 11, 24, tzinfo=UTC)]
    summary = store.list_surveys(survey_engine)[0]
    assert (summary.respondents, summary.answers, summary.imports) == (3, 9, 2)
    with survey_engine.connect() as conn:
        versions = conn.execute(select(imports.c.survey_version)).scalars().all()
    assert versions == [1, 1]  # the survey definition the answers were read with


@pytest.mark.parametrize("earlier", [0, 1], ids=["first_of_the_day", "later_in_the_day"])
def test_concurrent_copies_of_one_submission_store_it_once(survey_engine: Engine, earlier: int):
    """Also once the day's import record exists (PostgreSQL then writes in one statement)."""
    submissions = open_submissions(survey_engine, "academic_integrity")
    for number in range(earlier):
        submissions.record(f"earlier-{number}", ANSWERS, now=NOON)
    results, errors = [], []
    barrier = threading.Barrier(8)

    def send() -> None:
        barrier.wait()
        try:
            results.append(submissions.record("twin", ANSWERS, now=NOON))
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=send) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert sorted(r.already_recorded for r in results) == [False] + [True] * 7
    assert checked_counts(survey_engine, "academic_integrity")[0].answered == 1 + earlier


def test_concurrent_respondents_from_the_day_s_first_on_all_store_without_deadlock(
        survey_engine: Engine):
    """Writers of the day's first submissions (a transaction) and later ones (one statement
    on PostgreSQL) lock rows in one order: in opposite orders PostgreSQL found deadlocks."""
    submissions = open_submissions(survey_engine, "academic_integrity")
    errors = []
    barrier = threading.Barrier(12)

    def send(thread: int) -> None:
        barrier.wait()
        for number in range(5):
            try:
                submissions.record(f"r-{thread}-{number}", ANSWERS, now=NOON)
            except Exception as exc:  # noqa: BLE001 - collected and asserted below
                errors.append(exc)

    threads = [threading.Thread(target=send, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    submissions.close()
    assert errors == []
    assert checked_counts(survey_engine, "academic_integrity")[0].answered == 60


def test_repeats_and_conflicts_later_in_the_day_change_nothing(survey_engine: Engine):
    """The common case after the day's first submission (one statement on PostgreSQL)."""
    submissions = open_submissions(survey_engine, "academic_integrity")
    submissions.record("web-1", ANSWERS, now=NOON)  # creates the day's import record
    second = submissions.record("web-2", {**ANSWERS, "plagiarism": "yes"}, now=NOON)
    assert (second.answers, second.already_recorded) == (4, False)
    before = snapshot(survey_engine)
    again = submissions.record("web-2", {**ANSWERS, "plagiarism": "yes"}, now=NOON)
    assert again.already_recorded and again.import_id == second.import_id
    with pytest.raises(SubmissionConflict, match="different answers are already recorded"):
        submissions.record("web-2", ANSWERS, now=NOON)
    submissions.close()
    assert snapshot(survey_engine) == before
    counted = checked_counts(survey_engine, "academic_integrity")
    assert counted[0].answered == 2
    assert [q.answers() for q in counted][1] == {"no": 1, "yes": 1}


def test_web_import_records_name_the_survey_version_they_read_answers_with(tmp_path):
    from datetime import UTC, datetime

    from surveykit.store.submissions import web_import_name

    moment = datetime(2026, 11, 23, 12, tzinfo=UTC)
    first, updated = web_import_name(moment, 1), web_import_name(moment, 2)
    assert first[0] == updated[0] == "web 2026-11-23"
    assert first[1] != updated[1]  # a survey update during the day starts a new record


# -- group commit (issue 25): several submissions in one transaction ----------------------


def outcome_of(call) -> tuple:
    """What a submission did, comparable between a group commit and one call each: a
    result's (id, group, answers stored, repeat) or the exception's class and message."""
    try:
        outcome = call()
    except Exception as exc:  # noqa: BLE001 - the outcome compared
        outcome = exc
    if isinstance(outcome, Exception):
        return (type(outcome).__name__, str(outcome).replace("'twin'", "'academic_integrity'"))
    return (outcome.respondent_id, outcome.group, outcome.answers, outcome.already_recorded)


def day_record(engine: Engine, survey: str) -> tuple[int, int, int]:
    """rows_read, imported and missing of the survey's web import records, summed."""
    imports, surveys = database.imports, database.surveys
    with engine.connect() as conn:
        rows = conn.execute(select(imports.c.rows_read, imports.c.imported, imports.c.missing)
                            .join(surveys, surveys.c.id == imports.c.survey_id)
                            .where(surveys.c.name == survey)).all()
    return tuple(sum(row[i] for row in rows) for i in range(3))


ISSUED_IDS = [f"ID-{number}" for number in range(8)]
# (id, answers): new ids, a copy and a change of one of them later in the same batch, an
# earlier respondent sent again and changed, an id not issued, a wrong label, a missing
# question, an id the batch already refused; each must fare as if sent alone, in this order
MIXED_BATCH = [
    ("ID-1", ANSWERS),
    ("ID-2", {**ANSWERS, "plagiarism": "yes"}),
    ("ID-1", ANSWERS),
    ("ID-1", {**ANSWERS, "exam_cheating": "no"}),
    ("ID-0", ANSWERS),
    ("ID-0", {**ANSWERS, "plagiarism": "dont_know"}),
    ("NOT-ISSUED", ANSWERS),
    ("ID-3", {**ANSWERS, "plagiarism": "perhaps"}),
    ("ID-4", {"exam_cheating": "no", "plagiarism": "yes"}),
    ("ID-3", ANSWERS),
    ("ID-2", {**ANSWERS, "plagiarism": "yes"}),
]
# new ids only, and one refused (PostgreSQL writes such a batch in one statement)
NEW_BATCH = [(f"ID-{number}", {**ANSWERS, "plagiarism": ("yes", "no")[number % 2]})
             for number in range(1, 8)] + [("NOT-ISSUED", ANSWERS)]


@pytest.mark.parametrize("batch", [MIXED_BATCH, NEW_BATCH], ids=["mixed", "new_only"])
def test_a_group_commit_treats_each_submission_as_if_sent_alone(survey_engine: Engine,
                                                                 sample_survey, batch):
    """The oracle: a twin survey gets the same submissions one record() at a time."""
    twin = parse_survey(sample_survey.source.replace('name = "academic_integrity"',
                                                     'name = "twin"'))
    store.add_survey(survey_engine, twin)
    handles = {}
    for name in ("academic_integrity", "twin"):
        database.record_generation(survey_engine, name, ISSUED_IDS, {})
        handles[name] = open_submissions(survey_engine, name)
        handles[name].record("ID-0", ANSWERS, now=NOON)  # an earlier respondent
    one_by_one = [outcome_of(lambda i=i, a=a: handles["twin"].record(i, a, now=NOON))
                  for i, a in batch]
    grouped = handles["academic_integrity"].record_batch(batch, now=NOON)
    for handle in handles.values():
        handle.close()
    assert [outcome_of(lambda o=o: o) for o in grouped] == one_by_one
    if batch is MIXED_BATCH:  # what the oracle itself must say
        assert [o[3] if len(o) == 4 else o[0] for o in one_by_one] == [
            False, False, True, "SubmissionConflict", True, "SubmissionConflict",
            "NotIssuedError", "SubmissionError", False, False, True]
    # kept counts equal a fresh GROUP BY of the answers (checked_counts), and the twin's
    counts = {name: [(q.counts, q.missing, q.answered)
                     for q in checked_counts(survey_engine, name)]
              for name in handles}
    assert counts["academic_integrity"] == counts["twin"]
    assert day_record(survey_engine, "academic_integrity") == day_record(survey_engine, "twin")
    summaries = {s.name: (s.respondents, s.answers) for s in store.list_surveys(survey_engine)}
    assert summaries["academic_integrity"] == summaries["twin"]


def test_a_group_commit_of_refused_submissions_only_changes_nothing(survey_engine: Engine):
    database.record_generation(survey_engine, "academic_integrity", ISSUED_IDS, {})
    submissions = open_submissions(survey_engine, "academic_integrity")
    submissions.record("ID-0", ANSWERS, now=NOON)
    before = snapshot(survey_engine)
    outcomes = submissions.record_batch([("NOT-ISSUED", ANSWERS), ("ID-0", ANSWERS),
                                         ("ID-0", {**ANSWERS, "plagiarism": "yes"}),
                                         ("ID-1", {"exam_cheating": "maybe"})], now=NOON)
    submissions.close()
    assert [type(o).__name__ for o in outcomes] == [
        "NotIssuedError", "SubmissionResult", "SubmissionConflict", "SubmissionError"]
    assert snapshot(survey_engine) == before


def test_concurrent_group_commits_of_overlapping_ids_store_each_respondent_once(
        survey_engine: Engine):
    """Two servers' writers at once, half their ids shared: on PostgreSQL the later
    writer's one statement fails on the primary key and its batch is written again with a
    savepoint each; every id is stored once, each of its copies answered."""
    writers = [open_submissions(survey_engine, "academic_integrity") for _ in range(2)]
    for writer in writers:
        writer.record("opening", ANSWERS, now=NOON)  # the day's record exists
    batches = [[(f"shared-{n}", ANSWERS) for n in range(20)]
               + [(f"own-{w}-{n}", ANSWERS) for n in range(10)] for w in range(2)]
    outcomes: list[list] = [[], []]
    barrier = threading.Barrier(2)

    def write(number: int) -> None:
        barrier.wait()
        for start in range(0, 30, 5):
            outcomes[number] += writers[number].record_batch(batches[number][start:start + 5],
                                                             now=NOON)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    for writer in writers:
        writer.close()
    assert all(not isinstance(o, Exception) for both in outcomes for o in both), outcomes
    shared = [o for both in outcomes for o in both if o.respondent_id.startswith("shared")]
    assert sorted(o.already_recorded for o in shared) == [False] * 20 + [True] * 20
    counted = checked_counts(survey_engine, "academic_integrity")
    assert counted[0].answered == 1 + 20 + 2 * 10
    assert day_record(survey_engine, "academic_integrity") == (41, 41 * 4, 0)


@pytest.mark.postgres
@pytest.mark.skipif(os.environ.get("SURVEYKIT_TEST_POSTGRES_URL") is None,
                    reason="SURVEYKIT_TEST_POSTGRES_URL is not set")
@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_a_group_commit_whose_insert_meets_another_writer_s_row_is_written_one_by_one(
        survey_engine: Engine):
    """PostgreSQL: another writer (here a session of ours, as ``surveykit import`` or a second
    server would) stores ID-1 with its kept counts between the batch's check and its insert.
    The batch's insert waits for that writer, fails on the primary key once it commits, and
    the batch is written again a submission at a time: ID-1 is then a repeat, its changed
    copy a conflict, the other ids are stored; the kept counts equal a fresh GROUP BY.
    (On SQLite the batch holds the write lock from its check to its commit: nobody comes
    between, so there is nothing to test there: PostgreSQL only.)"""
    database.record_generation(survey_engine, "academic_integrity", ISSUED_IDS, {})
    submissions = open_submissions(survey_engine, "academic_integrity")
    submissions.record("ID-0", ANSWERS, now=NOON)  # the day's record; ID-1 copies its rows
    # a copy of ID-1 makes the batch one that the one-statement path (all new, once each)
    # leaves to the checked transaction, whose insert then meets the other writer's rows
    batch = [("ID-1", ANSWERS), ("ID-2", ANSWERS), ("ID-1", {**ANSWERS, "plagiarism": "yes"}),
             ("ID-3", {**ANSWERS, "plagiarism": "yes"}), ("ID-2", ANSWERS)]
    cells = ("FROM responses WHERE respondent_id = 'ID-0' AND survey_id = (SELECT id FROM "
             "surveys WHERE name = 'academic_integrity')")
    outcomes: list = []
    with survey_engine.connect() as other:
        other.execute(text(
            "INSERT INTO responses (survey_id, question_id, respondent_id, answer, "
            f"group_number, import_id) SELECT survey_id, question_id, 'ID-1', answer, "
            f"group_number, import_id {cells}"))
        other.execute(text(f"INSERT INTO known_respondents (survey_id, respondent_id) "
                           f"SELECT DISTINCT survey_id, 'ID-1' {cells}"))
        other.execute(text("UPDATE surveys SET known_respondents = known_respondents + 1 "
                           "WHERE name = 'academic_integrity'"))
        other.execute(text(f"UPDATE answer_counts SET count = count + 1 WHERE (survey_id, "
                           f"question_id, group_number, answer) IN (SELECT survey_id, "
                           f"question_id, group_number, answer {cells})"))
        me = other.execute(text("SELECT pg_backend_pid()")).scalar_one()
        writer = threading.Thread(target=lambda: outcomes.extend(
            submissions.record_batch(batch, now=NOON)))
        writer.start()
        with survey_engine.connect() as watcher:  # until the batch's insert waits for us
            deadline = datetime.now(UTC) + timedelta(seconds=120)
            while not watcher.execute(text(
                    "SELECT count(*) FROM pg_stat_activity WHERE :me = ANY("
                    "pg_blocking_pids(pid))"), {"me": me}).scalar_one():
                watcher.rollback()
                assert writer.is_alive() and datetime.now(UTC) < deadline, outcomes
        other.commit()
    writer.join(timeout=120)
    submissions.close()
    assert [outcome_of(lambda o=o: o) for o in outcomes] == [
        ("ID-1", 1, 0, True),
        ("ID-2", 1, 4, False),
        ("SubmissionConflict", "different answers are already recorded for this respondent "
                               "in survey 'academic_integrity'; nothing was changed"),
        ("ID-3", 1, 4, False),
        ("ID-2", 1, 0, True)]
    assert checked_counts(survey_engine, "academic_integrity")[0].answered == 4
    assert day_record(survey_engine, "academic_integrity") == (3, 12, 0)
