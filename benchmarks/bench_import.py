"""Benchmark: importing a long-format response CSV, against a raw sqlite3 baseline.

Writes a CSV of ``--rows`` long-format responses (respondent_id, question_id,
answer) into a temporary directory, then in this one process:

1. times ``surveykit.store.importer.import_responses`` into a fresh, migrated SQLite
   database (everything included: hashing, validation, answer normalization,
   conflict detection, foreign keys, the import record);
2. times a raw ``sqlite3`` baseline on the same file: ``csv.reader`` feeding
   one ``executemany`` INSERT, in one transaction, into a table with the same
   columns and the same primary key (WITHOUT ROWID, like surveykit's), WAL on;
3. prints both, their ratio (goal: <= 2.5) and the process's peak memory
   (ru_maxrss) after the surveykit import (goal for 10,000,000 rows: < 300 MB).

Usage::

    python benchmarks/bench_import.py                 # 1,000,000 rows
    python benchmarks/bench_import.py --rows 10000000 # the memory check

This is a script, not a test: timings depend on the machine.
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
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="surveykit-bench-") as tmp:
        workdir = Path(tmp)
        csv_path = workdir / "responses.csv"
        start = time.perf_counter()
        write_csv(csv_path, args.rows)
        size_mb = csv_path.stat().st_size / 1e6
        print(f"wrote {args.rows:,} rows ({size_mb:.1f} MB) in {time.perf_counter() - start:.1f} s")
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
