"""Benchmark: the report of a survey with 1,000,000 stored responses.

Run:  python benchmarks/bench_report.py [--respondents 250000]

Builds a database through surveykit's own import (4 questions x 250,000
respondents = 1,000,000 answers), then times the whole report (one SQL
aggregation, the estimates, the checks and the text) next to a bare sqlite3
GROUP BY over the same table (the floor: the report must at least count), and
prints the ratio. The issue's goal is a report under 2 s.
"""

from __future__ import annotations

import argparse
import csv
import sqlite3
import tempfile
import time
from pathlib import Path

import numpy as np
from timing import best_of

from surveykit import store
from surveykit.definition.survey import load_survey_file
from surveykit.reporting.report import render_report, report_for_survey
from surveykit.resources import locate_resource
from surveykit.store.importer import import_responses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--respondents", type=int, default=250_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    survey = load_survey_file(locate_resource("sample_data") / "academic_integrity.toml")
    question_ids = [q.id for q in survey.questions]
    with tempfile.TemporaryDirectory() as tmp:
        database = Path(tmp) / "bench.db"
        responses = Path(tmp) / "responses.csv"
        rng = np.random.default_rng(1)
        answers = np.array(["yes", "no", "dont_know"])[
            rng.choice(3, size=(args.respondents, len(question_ids)), p=[0.35, 0.45, 0.2])]
        with responses.open("w", newline="", encoding="utf-8") as stream:
            writer = csv.writer(stream)
            writer.writerow(["respondent_id", *question_ids])
            for i, row in enumerate(answers):
                writer.writerow([f"R{i:08d}", *row])
        engine = store.open_engine(f"sqlite:///{database}")
        store.init_database(engine)
        store.add_survey(engine, survey)
        start = time.perf_counter()
        imported = import_responses(engine, responses, survey.name)
        print(f"setup: imported {imported.imported:,} answers in "
              f"{time.perf_counter() - start:.1f} s")

        def full_report():
            return render_report(report_for_survey(engine, survey.name), "text")

        ours, _ = best_of(args.repeats, full_report)
        connection = sqlite3.connect(database)

        def bare_group_by():
            return connection.execute(
                "SELECT question_id, answer, COUNT(*) FROM responses GROUP BY question_id, answer"
            ).fetchall()

        base, _ = best_of(args.repeats, bare_group_by)
        connection.close()
        engine.dispose()
    print(f"report of {imported.imported:,} stored responses")
    print(f"  bare sqlite3 GROUP BY  {base * 1e3:8.1f} ms")
    print(f"  surveykit report       {ours * 1e3:8.1f} ms   ratio {ours / base:.2f}x "
          f"(goal: under 2 s)")


if __name__ == "__main__":
    main()
