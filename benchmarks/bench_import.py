"""Benchmark: importing a long-format response CSV, against a raw baseline on the same database.

Writes a CSV of ``--rows`` long-format responses (respondent_id, question_id,
answer) into a temporary directory, then in this one process:

SQLite (default):

1. times ``surveykit.store.importer.import_responses`` into a fresh, migrated SQLite
   database (everything included: hashing, validation, answer normalization,
   conflict detection, foreign keys, the import record);
2. times a raw ``sqlite3`` baseline on the same file: ``csv.reader`` feeding
   one ``executemany`` INSERT, in one transaction, into a table with the same
   columns and the same primary key (WITHOUT ROWID, like surveykit's), WAL on;
3. prints both, their ratio (goal: <= 2.5) and the process's peak memory
   (ru_maxrss) after the surveykit import (goal for 10,000,000 rows: < 300 MB).

PostgreSQL (``--postgres URL``), each run in a fresh schema built by the migrations:

1. times ``import_responses`` as above;
2. times a raw ``COPY responses (...) FROM STDIN`` of the same rows, already in
   the table's form (survey, question and import keys resolved, not timed),
   into the same table, foreign keys and all, in one transaction;
3. prints both, the speed ratio (goal: surveykit at least half of COPY's speed)
   and, to show where the time goes, a COPY into the same table without its
   foreign keys (PostgreSQL checks each foreign key row by row).

Usage::

    python benchmarks/bench_import.py                 # 1,000,000 rows into SQLite
    python benchmarks/bench_import.py --rows 10000000 # the memory check
    python benchmarks/bench_import.py --postgres postgresql://postgres@127.0.0.1:54329/db

This is a script, not a test: timings depend on the machine. Each figure is the
best of ``--repeats`` runs, the runs of surveykit and baseline interleaved.
"""

from __future__ import annotations

import argparse
import csv
import random
import resource
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from surveykit.definition.survey import parse_survey
from surveykit.store import database as store
from surveykit.store.importer import import_responses

QUESTIONS = ("exam_cheating", "plagiarism", "contract_cheating", "fabricated_data")
SURVEY = f"""
name = "bench"
title = "Benchmark survey"
[mechanism]
p = 0.6
q = 0.2
{"".join(f'[[questions]]{chr(10)}id = "{q}"{chr(10)}text = "Question {q}?"{chr(10)}'
         for q in QUESTIONS)}
"""
BASELINE_TABLE = """
CREATE TABLE responses (
    survey_id INTEGER NOT NULL,
    question_id INTEGER NOT NULL,
    respondent_id VARCHAR(200) NOT NULL,
    answer VARCHAR(9) NOT NULL,
    import_id INTEGER NOT NULL,
    PRIMARY KEY (survey_id, question_id, respondent_id)
) WITHOUT ROWID
"""


def write_csv(path: Path, rows: int, seed: int = 1) -> None:
    """Long-format responses: each respondent answers every question, in order."""
    rng = random.Random(seed)
    answers = ("yes", "no", "dont_know")
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["respondent_id", "question_id", "answer"])
        batch = []
        for i in range(rows):
            batch.append((f"R{i // len(QUESTIONS):08d}", QUESTIONS[i % len(QUESTIONS)],
                          answers[rng.randrange(3)]))
            if len(batch) == 100_000:
                writer.writerows(batch)
                batch.clear()
        writer.writerows(batch)


def time_surveykit(csv_path: Path, workdir: Path) -> tuple[float, int]:
    engine = store.open_engine(f"sqlite:///{workdir / 'surveykit.db'}")
    store.init_database(engine)
    store.add_survey(engine, parse_survey(SURVEY, "bench"))
    start = time.perf_counter()
    result = import_responses(engine, csv_path, "bench")
    elapsed = time.perf_counter() - start
    engine.dispose()
    return elapsed, result.imported


def time_baseline(csv_path: Path, workdir: Path) -> tuple[float, int]:
    connection = sqlite3.connect(workdir / "baseline.db", isolation_level=None)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute(BASELINE_TABLE)
    question_keys = {name: index + 1 for index, name in enumerate(QUESTIONS)}
    start = time.perf_counter()
    with csv_path.open(newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        next(reader)
        connection.execute("BEGIN")
        connection.executemany(
            "INSERT INTO responses VALUES (?, ?, ?, ?, ?)",
            ((1, question_keys[question], respondent, answer, 1)
             for respondent, question, answer in reader))
        connection.execute("COMMIT")
    elapsed = time.perf_counter() - start
    count = connection.execute("SELECT count(*) FROM responses").fetchone()[0]
    connection.close()
    return elapsed, count


COPY_COLUMNS = "survey_id, question_id, respondent_id, answer, group_number, import_id"


def _fresh_schema(url: str):
    """An engine on a new, migrated PostgreSQL schema holding the survey; and a dropper."""
    import uuid

    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    schema = f"bench_{uuid.uuid4().hex[:10]}"
    admin = create_engine(store.resolve_url(url))
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    engine = store.open_engine(make_url(store.resolve_url(url)).update_query_dict(
        {"options": f"-csearch_path={schema}"}).render_as_string(hide_password=False))
    store.init_database(engine)
    store.add_survey(engine, parse_survey(SURVEY, "bench"))

    def drop() -> None:
        engine.dispose()
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()

    return engine, drop


def time_postgres_surveykit(csv_path: Path, url: str) -> float:
    engine, drop = _fresh_schema(url)
    try:
        start = time.perf_counter()
        import_responses(engine, csv_path, "bench")
        return time.perf_counter() - start
    finally:
        drop()


def time_postgres_copy(csv_path: Path, url: str, *, foreign_keys: bool = True) -> float:
    """A raw COPY of the same rows, in the table's own form, into the same table."""
    from sqlalchemy import text

    engine, drop = _fresh_schema(url)
    try:
        with engine.begin() as conn:
            key = conn.execute(text("SELECT id FROM surveys")).scalar_one()
            import_id = conn.execute(text(
                "INSERT INTO imports (survey_id, survey_version, file_name, sha256, file_format,"
                " rows_read, imported, replaced, rejected, missing, imported_at) VALUES "
                "(:key, 1, 'raw', 'raw', 'long', 0, 0, 0, 0, 0, now()) RETURNING id"),
                {"key": key}).scalar_one()
            question_keys = dict(conn.execute(text("SELECT name, id FROM questions")).all())
            if not foreign_keys:
                for (name,) in conn.execute(text(
                        "SELECT conname FROM pg_constraint WHERE contype = 'f' AND "
                        "conrelid = 'responses'::regclass")).all():
                    conn.execute(text(f"ALTER TABLE responses DROP CONSTRAINT {name}"))
        with csv_path.open(newline="", encoding="utf-8") as handle:
            reader = csv.reader(handle)
            next(reader)
            data = "".join(f"{key}\t{question_keys[q]}\t{r}\t{a}\t1\t{import_id}\n"
                           for r, q, a in reader).encode()
        with engine.connect() as conn:
            raw = conn.connection.dbapi_connection
            start = time.perf_counter()
            with raw.cursor() as cursor, cursor.copy(
                    f"COPY responses ({COPY_COLUMNS}) FROM STDIN") as copy:
                for offset in range(0, len(data), 1 << 20):
                    copy.write(data[offset:offset + (1 << 20)])
            raw.commit()
            return time.perf_counter() - start
    finally:
        drop()


def main_postgres(csv_path: Path, rows: int, url: str, repeats: int) -> None:
    ours = baseline = float("inf")
    for _ in range(repeats):
        ours = min(ours, time_postgres_surveykit(csv_path, url))
        baseline = min(baseline, time_postgres_copy(csv_path, url))
    bare = time_postgres_copy(csv_path, url, foreign_keys=False)
    print(f"surveykit import:         {ours:8.2f} s  ({rows / ours:,.0f} rows/s)")
    print(f"raw COPY, same table:     {baseline:8.2f} s  ({rows / baseline:,.0f} rows/s)")
    print(f"speed surveykit / COPY: {baseline / ours:.2f} (goal: >= 0.5)")
    print(f"raw COPY without the table's foreign keys: {bare:8.2f} s  ({rows / bare:,.0f} "
          "rows/s; PostgreSQL checks foreign keys row by row)")


def peak_memory_mb() -> float:
    # ru_maxrss is in kilobytes on Linux (bytes on macOS).
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000,
                        help="long-format rows to generate (default 1,000,000)")
    parser.add_argument("--skip-baseline", action="store_true",
                        help="only the surveykit import (e.g. for the memory check)")
    parser.add_argument("--postgres", metavar="URL", default=None,
                        help="benchmark PostgreSQL at URL against a raw COPY instead of SQLite")
    parser.add_argument("--repeats", type=int, default=1,
                        help="runs of each measurement; the best is printed (default 1)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="surveykit-bench-") as tmp:
        workdir = Path(tmp)
        csv_path = workdir / "responses.csv"
        start = time.perf_counter()
        write_csv(csv_path, args.rows)
        size_mb = csv_path.stat().st_size / 1e6
        print(f"wrote {args.rows:,} rows ({size_mb:.1f} MB) in {time.perf_counter() - start:.1f} s")
        if args.postgres:
            main_postgres(csv_path, args.rows, args.postgres, args.repeats)
            return
        ours, imported = time_surveykit(csv_path, workdir)
        peak = peak_memory_mb()
        print(f"surveykit import:      {ours:8.2f} s  ({imported:,} answers, "
              f"{args.rows / ours:,.0f} rows/s)")
        print(f"peak memory (ru_maxrss) after the surveykit import: {peak:.0f} MB "
              "(goal: < 300 MB)")
        if args.skip_baseline:
            return
        baseline, count = time_baseline(csv_path, workdir)
        print(f"raw sqlite3 baseline:  {baseline:8.2f} s  ({count:,} rows)")
        print(f"ratio surveykit / baseline: {ours / baseline:.2f}x (goal: <= 2.5x)")


if __name__ == "__main__":
    main()
