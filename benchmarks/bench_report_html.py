"""Benchmark: the HTML report (inline SVG plots) against the text report of the same survey.

Run:  python benchmarks/bench_report_html.py [--repeats 5]

Builds an SQLite database through surveykit's own import (the sample survey
``sample_data/academic_integrity.toml`` with ``sample_data/responses_wide.csv``),
then, in this one process, runs ``repeats`` rounds, each of them

* the text report: ``report_for_survey`` and ``render_report(..., "text")``,
* the HTML report: ``report_for_survey`` and ``render_report(..., "html")``
  (the forest plot and one privacy-accuracy curve per question),

interleaved (one of each per round, so a busy moment of the machine slows both
alike), after one untimed run of each (imports of matplotlib, scipy and the
templates, and matplotlib's font cache, are not the report's cost). It prints
the median CPU time (``time.process_time``, less disturbed by other work on a
shared machine than the wall clock, which is printed too) of each and the
HTML report's ratio to the text report. The goal (issue 25): the HTML report
within about 2x the text report's CPU.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from surveykit import store
from surveykit.definition.survey import load_survey_file
from surveykit.reporting.report import render_report
from surveykit.resources import locate_resource
from surveykit.store.importer import import_responses
from surveykit.workflows.report import report_for_survey

#: The goal: the HTML report's CPU within this multiple of the text report's.
GOAL = 2.0


def build(tmp: Path):
    """The sample survey with its sample answers imported; returns (engine, survey name)."""
    sample = locate_resource("sample_data")
    survey = load_survey_file(sample / "academic_integrity.toml")
    engine = store.open_engine(f"sqlite:///{tmp / 'bench_html.db'}")
    store.init_database(engine)
    store.add_survey(engine, survey)
    import_responses(engine, sample / "responses_wide.csv", survey.name)
    return engine, survey.name


def timed(function) -> tuple[float, float]:
    """(wall-clock, CPU) seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    function()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        engine, name = build(Path(tmp))
        try:
            runs = {fmt: (lambda f=fmt: render_report(report_for_survey(engine, name), f))
                    for fmt in ("text", "html")}
            for run in runs.values():  # warm
                run()
            figures: dict[str, list[tuple[float, float]]] = {fmt: [] for fmt in runs}
            for _ in range(args.repeats):
                for fmt, run in runs.items():
                    figures[fmt].append(timed(run))
        finally:
            engine.dispose()
    median = {fmt: (statistics.median(w for w, _ in values),
                    statistics.median(c for _, c in values))
              for fmt, values in figures.items()}
    for fmt, (wall, cpu) in median.items():
        print(f"{fmt:>5} report: CPU {cpu * 1e3:8.1f} ms   wall {wall * 1e3:8.1f} ms")
    ratio = median["html"][1] / median["text"][1]
    print(f"html / text (CPU, median of {args.repeats} interleaved): {ratio:.2f}x "
          f"(goal <= {GOAL:g}x: {'met' if ratio <= GOAL else 'missed'})")


if __name__ == "__main__":
    main()
