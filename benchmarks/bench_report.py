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
kept included). Each figure is the best of ``--repeats`` runs, the sizes
interleaved run by run; the report's CPU time is printed beside its wall
clock, as it is less disturbed by other work on the machine.
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
from surveykit.reporting.report import build_report, render_report
from surveykit.resources import locate_resource
from surveykit.store.importer import import_responses
from surveykit.workflows.report import report_for_survey

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


def build(size: int, tmp: Path):
    """A database with ``size`` stored answers, built by surveykit's import; returns
    (engine, path, answers imported, import seconds)."""
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
    return survey, engine, database, imported.imported, seconds


def timed(function) -> tuple[float, float]:
    """(wall-clock, CPU) seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    function()
    return time.perf_counter() - wall, time.process_time() - cpu


def measure(built: list, repeats: int) -> list[dict[str, float]]:
    """Every figure of every size, the sizes interleaved run by run (so that a busy moment
    of the machine does not fall on one size only); the best of ``repeats`` runs each."""
    runs = []
    for survey, engine, database, answers, seconds in built:
        counts = store.count_responses(engine, survey.name)
        connection = sqlite3.connect(database)
        runs.append({
            "report": lambda s=survey, e=engine: render_report(report_for_survey(e, s.name),
                                                               "text"),
            "baseline": lambda s=survey, c=counts: render_report(build_report(s, c), "text"),
            "read": lambda c=connection: (c.execute(KEPT).fetchall(),
                                          c.execute(KNOWN).fetchone()),
            "connection": connection, "answers": answers, "import": seconds})
    for run in runs:  # warm: imports of scipy and the templates are not the report's cost
        run["report"](), run["baseline"]()
    best = [{name: (float("inf"), float("inf")) for name in ("report", "baseline", "read")}
            for _ in runs]
    for _ in range(repeats):
        for run, figures in zip(runs, best, strict=True):
            for name in figures:
                wall, cpu = timed(run[name])
                figures[name] = (min(figures[name][0], wall), min(figures[name][1], cpu))
    results = []
    for run, figures in zip(runs, best, strict=True):
        connection = run["connection"]
        group_by, _ = best_of(3, lambda c=connection: (c.execute(RECOUNT).fetchall(),
                                                       c.execute(DISTINCT).fetchone()))
        connection.close()
        results.append({"answers": run["answers"], "import": run["import"],
                        "report": figures["report"][0], "report_cpu": figures["report"][1],
                        "baseline": figures["baseline"][0], "read": figures["read"][0],
                        "group_by": group_by})
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000,10000000",
                        help="stored answers per run, comma-separated")
    parser.add_argument("--repeats", type=int, default=25)
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        built = []
        for size in sizes:
            built.append(build(size, Path(tmp)))
            _, _, _, answers, seconds = built[-1]
            print(f"built {answers:>11,} answers: import {seconds:6.1f} s "
                  f"({answers / seconds:,.0f} answers/s, kept counts included)")
        results = measure(built, args.repeats)
        for _, engine, *_ in built:
            engine.dispose()
    first, first_cpu = results[0]["report"], results[0]["report_cpu"]
    print()
    print(f"{'answers':>11}  {'report':>7}  {'(CPU)':>7}  {'baseline':>8}  {'ratio':>5}  "
          f"{'vs smallest':>11}  {'kept read':>9}  {'GROUP BY (0004)':>15}")
    for r in results:
        print(f"{r['answers']:>11,}  {r['report'] * 1e3:5.1f}ms  {r['report_cpu'] * 1e3:5.1f}ms  "
              f"{r['baseline'] * 1e3:6.1f}ms  {r['report'] / r['baseline']:4.2f}x  "
              f"{r['report'] / first:5.2f}x/{r['report_cpu'] / first_cpu:4.2f}x  "
              f"{r['read'] * 1e3:7.3f}ms  {r['group_by'] * 1e3:13.0f}ms")
    print()
    print("report: report_for_survey + text rendering (wall clock, and CPU time); baseline: the "
          "same\nreport from the same counts in memory (no database); vs smallest: wall/CPU; "
          "kept read:\nbare sqlite3 read of the kept counts; GROUP BY (0004): the recount the "
          "report ran\nbefore counts were kept. Goal: the largest report within 1.2x of the "
          "smallest.")


if __name__ == "__main__":
    main()
