"""Concurrent imports of overlapping answers (issue 19, item 7): real ``surveykit import``
processes started together, two rounds, on SQLite and on PostgreSQL. Where the files give
the shared respondents different answers, one import wins and the others get the conflict
refusal (never a deadlock that ends in the catch-all); where they give the same answers (the
cumulative exports of issue 22), every import succeeds and the shared answers are unchanged.
Either way nothing is lost and nothing is counted twice."""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import text

from surveykit.store import database as store
from surveykit.store.answer_counts import check_counts
from surveykit.store.importer import import_responses

SURVEY = "academic_integrity"
QUESTIONS = ("exam_cheating", "plagiarism", "contract_cheating", "fabricated_data")
ROOT = Path(__file__).resolve().parent.parent
REFUSAL = re.compile(r"^Error: (\d+) bad rows? in (\S+) \((\d+) changes an earlier answer\); "
                     r"nothing was imported \(")
SUMMARY = re.compile(r"^Imported \S+ \(long layout\) into 'academic_integrity' as import #\d+: "
                     r"(\d+) rows read, (\d+) answers added, (\d+) unchanged, 0 replaced, ")


def start(args: list[str]) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("SURVEYKIT_DEBUG", None)
    return subprocess.Popen([sys.executable, "-m", "surveykit", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def answers_file(path: Path, respondents: list[str], seed: int | None = None,
                 shift: int = 0) -> Path:
    """A long file answering every question for ``respondents``, respondent by respondent,
    or in an order of its own (shuffled with ``seed``); files of other ``shift`` give the
    same respondent other answers."""
    rows = [f"{respondent},{question},{('yes', 'no', 'dont_know')[(i + j + shift) % 3]}\n"
            for i, respondent in enumerate(respondents) for j, question in enumerate(QUESTIONS)]
    if seed is not None:
        random.Random(seed).shuffle(rows)
    path.write_text("respondent_id,question_id,answer\n" + "".join(rows), encoding="utf-8")
    return path


@contextmanager
def barrier(engine, count: int):
    """On PostgreSQL, make the imports start writing together: a session of ours keeps new
    rows out of ``imports`` (the first table an import writes) until ``count`` import
    sessions wait for a lock, then lets them go. Process start-up takes seconds on a busy
    machine, far longer than a small import. On SQLite the imports simply run."""
    if engine.dialect.name != "postgresql":
        yield lambda processes: None
        return
    with engine.connect() as gate:
        gate.execute(text("LOCK TABLE imports IN SHARE MODE"))

        def wait(processes) -> None:
            deadline = time.monotonic() + 300
            with engine.connect() as watcher:
                while time.monotonic() < deadline:
                    assert all(process.poll() is None for process in processes)
                    waiting = watcher.execute(text(
                        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                        "AND pid <> pg_backend_pid()")).scalar_one()
                    watcher.rollback()
                    if waiting >= count:
                        return
                    time.sleep(0.05)
            raise AssertionError("the imports never reached their first write")

        yield wait
        gate.commit()


def test_concurrent_overlapping_imports_end_in_one_import_and_conflict_refusals(
        database_url, survey_engine, tmp_path):
    engine = survey_engine
    imported = 0
    # two rounds: one into an empty database, one into a database holding the first
    # round's answers (a third round met the same state again with another shuffle)
    for round_number in range(2):
        shared = [f"S{round_number}-{i:05d}" for i in range(600)]
        files = [answers_file(tmp_path / f"r{round_number}-{k}.csv",
                              shared + [f"O{round_number}-{k}-{i:05d}" for i in range(200)],
                              seed=100 * round_number + k, shift=k) for k in range(3)]
        with barrier(engine, len(files)) as wait:
            processes = [start(["import", str(path), "--survey", SURVEY, "--db",
                                database_url]) for path in files]
            wait(processes)
        outcomes = []
        for process in processes:
            stdout, stderr = process.communicate(timeout=600)
            outcomes.append((process.returncode, stdout, stderr))
        for _, _, stderr in outcomes:
            assert "failed unexpectedly" not in stderr and "Traceback" not in stderr, stderr
        winners = [out for out in outcomes if out[0] == 0]
        losers = [out for out in outcomes if out[0] != 0]
        # every two files give 600 shared respondents different answers: the first to
        # commit wins, the others meet its answers and are refused as on SQLite, naming the
        # shared answers
        assert len(winners) == 1, outcomes
        assert winners[0][1].startswith("Imported ")
        for status, _, stderr in losers:
            assert status == 1, stderr
            found = REFUSAL.match(stderr.splitlines()[0])
            assert found, stderr.splitlines()[0]
            assert int(found.group(1)) == int(found.group(3)) == 600 * len(QUESTIONS)
        imported += 800 * len(QUESTIONS)
        check = check_counts(engine, SURVEY)
        assert check.ok, check.to_dict()
        assert (check.answers, check.respondents) == (imported, imported // len(QUESTIONS))


def test_concurrent_imports_of_the_same_answers_all_succeed_and_count_them_once(
        database_url, survey_engine, tmp_path):
    """Three exports that share 600 respondents' answers, imported at once: each adds its
    own 200 respondents, the first to commit adds the shared ones and the others find them
    unchanged, whatever order the database lets them in."""
    engine = survey_engine
    shared = [f"S-{i:05d}" for i in range(600)]
    files = [answers_file(tmp_path / f"same-{k}.csv",
                          shared + [f"O-{k}-{i:05d}" for i in range(200)], seed=k)
             for k in range(3)]
    with barrier(engine, len(files)) as wait:
        processes = [start(["import", str(path), "--survey", SURVEY, "--db", database_url])
                     for path in files]
        wait(processes)
    summaries = []
    for process in processes:
        stdout, stderr = process.communicate(timeout=600)
        assert process.returncode == 0, stderr
        found = SUMMARY.match(stdout)
        assert found, stdout
        summaries.append(tuple(int(n) for n in found.groups()))
    questions = len(QUESTIONS)
    # (rows read, added, unchanged): one import added the shared answers, two found them
    assert sorted(summaries) == sorted([(800 * questions, 800 * questions, 0)]
                                       + [(800 * questions, 200 * questions,
                                           600 * questions)] * 2)
    check = check_counts(engine, SURVEY)
    assert check.ok, check.to_dict()
    assert (check.answers, check.respondents) == (1200 * questions, 1200)


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_an_import_chosen_as_a_deadlock_victim_runs_again(database_url, survey_engine,
                                                          tmp_path):
    """Another writer (here a session of our own, as a web submission would) holds an answer
    the import needs and then waits for one the import holds: PostgreSQL rolls the import
    back to break the deadlock (its check runs first: the other session's deadlock_timeout is
    a minute), and the import runs again once the other writer is done."""
    engine = survey_engine
    first = import_responses(engine, answers_file(tmp_path / "first.csv", ["F-1"]), SURVEY)
    with engine.connect() as conn:
        key = store.survey_id(conn, SURVEY)
        questions = store.question_ids(conn, key)
    # the file's first rows answer every question for B-00000, exam_cheating first
    low, high = questions[QUESTIONS[0]], questions[QUESTIONS[-1]]
    big = answers_file(tmp_path / "big.csv", [f"B-{i:05d}" for i in range(3000)])
    other = engine.connect()
    other.execute(text("SET deadlock_timeout = '60s'"))
    row = ("INSERT INTO responses (survey_id, question_id, respondent_id, answer, "
           "group_number, import_id) VALUES (:key, :question, 'B-00000', 'yes', 1, "
           ":import_id)")
    process = None
    try:
        other.execute(text(row), {"key": key, "question": high, "import_id": first.import_id})
        process = start(["import", str(big), "--survey", SURVEY, "--db", database_url])
        deadline = time.monotonic() + 120
        with engine.connect() as watcher:
            while time.monotonic() < deadline and process.poll() is None:
                waiting = watcher.execute(text(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                    "AND query LIKE 'INSERT INTO responses%' AND pid <> pg_backend_pid()")
                ).scalar_one()
                watcher.rollback()
                if waiting:
                    break
                time.sleep(0.02)
        assert process.poll() is None, process.communicate()
        # the import holds (low, B-00000) and waits for (high, B-00000): close the cycle
        other.execute(text(row), {"key": key, "question": low, "import_id": first.import_id})
        other.rollback()
        stdout, stderr = process.communicate(timeout=300)
    finally:
        other.close()
        if process is not None and process.poll() is None:
            process.kill()
    assert process.returncode == 0, stderr
    assert stdout.startswith("Imported ") and "12000 answers added" in stdout
    check = check_counts(engine, SURVEY)
    assert check.ok and check.answers == 12004, check.to_dict()
