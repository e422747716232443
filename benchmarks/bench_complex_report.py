"""Benchmark: the report of a sampled survey (strata, clusters, weights) from weighted counts.

Run:  python benchmarks/bench_complex_report.py [--small 100000] [--large 10000000]
      [--store 10000,100000] [--repeats 3]

A synthetic stratified cluster sample (40 strata x 25 PSUs, unequal weights, a
Warner and a Mangat question) is written as a Parquet file of answers, one row
per (respondent, question), at two sizes. For each size, in the same process:

* **GROUP BY**: DuckDB runs the one GROUP BY of docs/complex-samples.md over the
  Parquet file (sums of weights per question, stratum, PSU, group, response):
  the baseline, what any engine must at least do once;
* **report**: ``surveykit report --counts-file`` on the table it made
  (:func:`surveykit.workflows.complex_samples.complex_report_for_counts_file`,
  rendered as JSON): design-based estimates, linearized SEs, deff, totals.

It prints both and the ratio report(large) / report(small); the goal (issue 21
item 5): the large report is not slower than the small one beyond the GROUP BY,
that is the ratio stays near 1 (the cells, not the answers, grow the work).

With ``--store SMALL,LARGE`` (default 10000,100000; 0 to skip) it also imports
that many respondents into two SQLite files and times, interleaved, the stored
report (:func:`surveykit.workflows.complex_samples.complex_report_for_survey`,
which reads the kept weighted cells: :mod:`surveykit.store.kept_cells`) beside the
baseline, the store's SQL GROUP BY over every respondent x question
(:func:`surveykit.store.design_values.weighted_cells`, what the report ran before
the cells were kept), and prints the report's ratio large / small: near 1 when
the report reads cells, not respondents.

Exits with status 1 if a ratio is above ``MAX_RATIO``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from timing import best_of

from surveykit.counting.weighted_table import write_weighted_table
from surveykit.definition.survey import parse_survey
from surveykit.store import engine_for, init_database
from surveykit.store.database import add_survey
from surveykit.workflows.complex_samples import (
    complex_report_for_counts_file,
    complex_report_for_survey,
    render_complex_report,
)

#: The goal: the report from 100x the answers within this factor of the small one's.
MAX_RATIO = 1.5
STRATA, PSUS_PER_STRATUM = 40, 25
SURVEY = """name = "bench"
title = "Complex sample benchmark"

[[questions]]
id = "warner"
text = "Warner?"
design = { model = "warner", p = 0.7 }

[[questions]]
id = "mangat"
text = "Mangat?"
design = { model = "mangat", p = 0.8 }

[sampling]
weight = "w"
strata = "stratum"
clusters = ["psu"]
"""
GROUP_BY = """
SELECT question, stratum, psu, 1 AS "group", response,
       SUM(w) AS weight, COUNT(*) AS n
FROM read_parquet('{path}')
GROUP BY question, stratum, psu, response
"""


def answers(respondents: int, seed: int = 2026):
    """Columns of the answers, one row per (respondent, question): stratum, psu, w,
    question, response."""
    rng = np.random.default_rng(seed)
    psu = rng.integers(0, STRATA * PSUS_PER_STRATUM, respondents)
    stratum = psu // PSUS_PER_STRATUM
    weight = rng.gamma(4.0, 25.0, respondents) * (1 + stratum / STRATA)
    truth = rng.random(respondents) < 0.2 + 0.4 * (psu % 7) / 7
    warner = np.where(rng.random(respondents) < 0.7, truth, ~truth)
    mangat = truth | (rng.random(respondents) < 0.2)
    return {"stratum": np.tile(stratum, 2), "psu": np.tile(psu, 2), "w": np.tile(weight, 2),
            "question": np.repeat(["warner", "mangat"], respondents),
            "response": np.where(np.concatenate([warner, mangat]), "yes", "no")}


def write_parquet(columns, path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table(columns), path)


def group_by(path: Path):
    import duckdb

    with duckdb.connect() as con:
        return con.execute(GROUP_BY.format(path=path)).df()


def report(db: str, counts_file: Path) -> str:
    return render_complex_report(complex_report_for_counts_file(db, counts_file), "json")


def make_counts_file(folder: Path, answers_count: int, repeats: int) -> tuple[float, Path]:
    """The answers as Parquet, DuckDB's GROUP BY over them (timed) and its weighted counts
    file."""
    survey = parse_survey(SURVEY, "bench.toml")
    parquet = folder / f"answers_{answers_count}.parquet"
    write_parquet(answers(answers_count // 2), parquet)
    grouping, cells = best_of(repeats, group_by, parquet)
    parquet.unlink()
    counts_file = folder / f"weighted_{answers_count}.csv"
    with counts_file.open("w", encoding="utf-8", newline="") as stream:
        write_weighted_table(stream, survey, cells)
    print(f"{answers_count:>12,} answers: GROUP BY {grouping:8.3f} s ({len(cells):,} cells)")
    return grouping, counts_file


def interleaved(repeats: int, db: str, files: list[Path]) -> list[float]:
    """The best time of the report from each file, the files taking turns (so that the rest
    of a shared machine weighs on all alike)."""
    best = [float("inf")] * len(files)
    for _ in range(repeats):
        for i, path in enumerate(files):
            start = time.perf_counter()
            report(db, path)
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def store_database(folder: Path, respondents: int) -> tuple[str, float]:
    """An SQLite file with ``respondents`` imported (their answers and design values), and
    the import's time."""
    import pandas as pd

    from surveykit.store.importer import import_responses

    survey = parse_survey(SURVEY, "bench.toml")
    columns = answers(respondents, seed=7)
    frame = pd.DataFrame({"respondent_id": [f"r{i}" for i in range(respondents)],
                          "stratum": columns["stratum"][:respondents],
                          "psu": columns["psu"][:respondents],
                          "w": columns["w"][:respondents],
                          "warner": columns["response"][:respondents],
                          "mangat": columns["response"][respondents:]})
    csv_path = folder / f"answers_{respondents}.csv"
    frame.to_csv(csv_path, index=False)
    url = f"sqlite:///{folder / f'store_{respondents}.db'}"
    with engine_for(url) as engine:
        init_database(engine)
        add_survey(engine, survey)
        start = time.perf_counter()
        import_responses(engine, csv_path, "bench")
        imported = time.perf_counter() - start
    csv_path.unlink()
    return url, imported


def stored_report(url: str) -> str:
    """The stored report (from the kept weighted cells), rendered as JSON."""
    return render_complex_report(complex_report_for_survey(url, "bench"), "json")


def store_group_by(url: str):
    """The baseline: the store's GROUP BY over every respondent x question (what the report
    ran before the cells were kept)."""
    from surveykit.store.design_values import weighted_cells

    with engine_for(url) as engine:
        return weighted_cells(engine, "bench")


def measure_store(folder: Path, sizes: list[int], repeats: int) -> float:
    """The stored report's time at each size (interleaved best of ``repeats``) beside the
    GROUP BY's; returns the report's ratio largest / smallest."""
    databases = []
    for respondents in sizes:
        url, imported = store_database(folder, respondents)
        databases.append(url)
        print(f"store, {respondents:,} respondents x 2 questions: import {imported:.1f} s")
    report_times = [float("inf")] * len(sizes)
    group_by_times = [float("inf")] * len(sizes)
    reports = []
    for _ in range(repeats):
        for i, url in enumerate(databases):
            start = time.perf_counter()
            text = stored_report(url)
            report_times[i] = min(report_times[i], time.perf_counter() - start)
            start = time.perf_counter()
            store_group_by(url)
            group_by_times[i] = min(group_by_times[i], time.perf_counter() - start)
            if len(reports) < len(databases):
                reports.append(text)
    for respondents, report_time, group_by_time in zip(sizes, report_times, group_by_times,
                                                       strict=True):
        print(f"store, {respondents:>9,} respondents: report (kept cells) "
              f"{report_time:.3f} s; SQL GROUP BY over the respondents {group_by_time:.3f} s")
    ratio = report_times[-1] / report_times[0]
    print(f"stored report ratio {sizes[-1]:,} / {sizes[0]:,} respondents: {ratio:.2f} "
          f"(goal <= {MAX_RATIO}); GROUP BY ratio "
          f"{group_by_times[-1] / group_by_times[0]:.1f}")
    return ratio


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=100_000)
    parser.add_argument("--large", type=int, default=10_000_000)
    parser.add_argument("--store", default="10000,100000",
                        help="SMALL,LARGE respondents of the stored report (0: skip)")
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-complex-") as name:
        folder = Path(name)
        db = f"sqlite:///{folder / 'survey.db'}"
        with engine_for(db) as engine:
            init_database(engine)
            add_survey(engine, parse_survey(SURVEY, "bench.toml"))
        report(db, _warm(folder))  # imports and caches out of the timings
        small_group_by, small_file = make_counts_file(folder, options.small, options.repeats)
        large_group_by, large_file = make_counts_file(folder, options.large, options.repeats)
        small, large = interleaved(max(options.repeats, 5), db, [small_file, large_file])
        ratio = large / small
        print(f"report from the counts file: {small:.3f} s ({options.small:,} answers), "
              f"{large:.3f} s ({options.large:,} answers)")
        print(f"report ratio {options.large:,} / {options.small:,} answers: {ratio:.2f} "
              f"(goal <= {MAX_RATIO}); GROUP BY ratio {large_group_by / small_group_by:.1f}")
        if options.store != "0":
            sizes = [int(size) for size in options.store.split(",")]
            store_ratio = measure_store(folder, sizes, max(options.repeats, 3))
            ratio = max(ratio, store_ratio)
    return 0 if ratio <= MAX_RATIO else 1


def _warm(folder: Path) -> Path:
    survey = parse_survey(SURVEY, "bench.toml")
    parquet = folder / "warm.parquet"
    write_parquet(answers(5_000, seed=1), parquet)
    path = folder / "warm.csv"
    with path.open("w", encoding="utf-8", newline="") as stream:
        write_weighted_table(stream, survey, group_by(parquet))
    return path


if __name__ == "__main__":
    sys.exit(main())
