"""Benchmark: the report on 10^5, 10^6 and 10^7 stored answers; flat, because counts are kept.

Run:  python benchmarks/bench_report.py [--sizes 100000,1000000,10000000] [--repeats 7]

For each size, builds a fresh SQLite database through surveykit's own import
(a wide file: 4 questions x size/4 respondents, answers drawn with a fixed
seed), then, in this one process:

1. times the whole report: ``report_for_survey`` (kept counts, issued ids,
   the estimates and every check) and its text rendering;
2. times the baseline: the same report built from the same counts already in
   memory (``build_report`` and the rendering, no database), the work a
   report does whatever the store;
3. times a bare ``sqlite3`` SELECT of the survey's kept counts and its number
   of known respondents (what the report reads);
4. times what the report did before counts were kept (schema 0004): the bare
   GROUP BY over ``responses`` and the count of distinct respondents.

It prints each figure, the report's ratio to the baseline, and the report's
ratio to the report on the smallest size (the goal: 10^7 within 1.2 of 10^5).
The import time of each database is printed too (rows/s, the counts table
kept included). Each figure is the best of ``--repeats`` runs.
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
from surveykit.reporting.report import build_report, render_report, report_for_survey
from surveykit.resources import locate_resource
from surveykit.store.importer import import_responses

KEPT = ("SELECT question_id, group_number, answer, count FROM answer_counts "
        "WHERE survey_id = 1")
KNOWN = "SELECT known_respondents FROM surveys WHERE id = 1"
RECOUNT = ("SELECT question_id, group_number, answer, count(*) FROM responses "
           "WHERE survey_id = 1 GROUP BY question_id, group_number, answer")
DISTINCT = "SELECT count(DISTINCT respondent_id) FROM responses WHERE survey_id = 1"


def write_answers(path: Path, respondents: int, questions: list[str], seed: int = 1) -> None:
    """A wide CSV: respondent_id and one column per question (35% yes, 45% no, 20% dk)."""
    rng = np.random.default_rng(seed)
    labels = np.array(["yes", "no", "dont_know"])
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(["respondent_id", *questions])
        for start in range(0, respondents, 100_000):
            block = labels[rng.choice(3, size=(min(100_000, respondents - start),
                                               len(questions)), p=[0.35, 0.45, 0.2])]
            writer.writerows([f"R{start + i:08d}", *row] for i, row in enumerate(block))


def measure(size: int, repeats: int, tmp: Path) -> dict[str, float]:
    survey = load_survey_file(locate_resource("sample_data") / "academic_integrity.toml")
    questions = [q.id for q in survey.questions]
    database = tmp / f"bench_{size}.db"
    responses = tmp / f"responses_{size}.csv"
    write_answers(responses, size // len(questions), questions)
    engine = store.open_engine(f"sqlite:///{database}")
    store.init_database(engine)
    store.add_survey(engine, survey)
    start = time.perf_counter()
    imported = import_responses(engine, responses, survey.name)
    seconds = time.perf_counter() - start
    responses.unlink()

    def full_report() -> str:
        return render_report(report_for_survey(engine, survey.name), "text")

    full_report()  # warm: imports of scipy and the templates are not the report's cost
    report, _ = best_of(repeats, full_report)
    counts = store.count_responses(engine, survey.name)

    def in_memory() -> str:
        return render_report(build_report(survey, counts), "text")

    in_memory()
    baseline, _ = best_of(repeats, in_memory)
    connection = sqlite3.connect(database)

    def kept() -> tuple:
        return connection.execute(KEPT).fetchall(), connection.execute(KNOWN).fetchone()

    def recount() -> tuple:
        return (connection.execute(RECOUNT).fetchall(),
                connection.execute(DISTINCT).fetchone())

    read, _ = best_of(repeats, kept)
    group_by, _ = best_of(max(1, min(repeats, 3)), recount)
    connection.close()
    engine.dispose()
    database.unlink()
    return {"answers": imported.imported, "import": seconds, "report": report,
            "baseline": baseline, "read": read, "group_by": group_by}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000,10000000",
                        help="stored answers per run, comma-separated")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            results.append(measure(size, args.repeats, Path(tmp)))
            r = results[-1]
            print(f"built {r['answers']:>11,} answers: import {r['import']:6.1f} s "
                  f"({r['answers'] / r['import']:,.0f} answers/s, kept counts included)")
    first = results[0]["report"]
    print()
    print(f"{'answers':>11}  {'report':>8}  {'baseline':>8}  {'ratio':>5}  {'vs smallest':>11}"
          f"  {'kept read':>9}  {'GROUP BY (0004)':>15}")
    for r in results:
        print(f"{r['answers']:>11,}  {r['report'] * 1e3:6.1f}ms  {r['baseline'] * 1e3:6.1f}ms  "
              f"{r['report'] / r['baseline']:4.2f}x  {r['report'] / first:10.2f}x  "
              f"{r['read'] * 1e3:7.3f}ms  {r['group_by'] * 1e3:13.0f}ms")
    print()
    print("report: report_for_survey + text rendering; baseline: the same report from the "
          "same counts\nin memory (no database); kept read: bare sqlite3 read of the kept "
          "counts; GROUP BY\n(0004): the recount the report ran before counts were kept. "
          "Goal: the largest report\nwithin 1.2x of the smallest.")


if __name__ == "__main__":
    main()
