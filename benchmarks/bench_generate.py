"""Benchmark: questionnaires per second for `surveykit generate`, against plain str.format.

Run:  python benchmarks/bench_generate.py [--respondents 100000] [--format html|markdown]
                                         [--survey FILE]

Generates the sample survey's questionnaires (or those of --survey FILE, e.g.
tests/surveys/groups.toml, a two-group survey of four designs; slips mode: an
answer sheet and a private slip per respondent) into a temporary folder and
records the
generation in a temporary SQLite database, exactly as the command does. The
baseline, in the same process, writes the same pages with ``str.format`` (the
first sheet and slip pages turned into format strings, one id and one slip's
rules substituted per respondent) into the same number of files: the cost of
formatting and writing the bytes with no template engine, no randomizer and no
database. Prints both rates, their ratio, surveykit's CPU time (on a shared
machine steadier than the wall-clock time, which includes waiting for the
disk) and the peak memory of the process. The baseline substitutes the
generalized Warner's three rule texts; for other designs it writes the first
slip again and again.
"""

from __future__ import annotations

import argparse
import re
import resource
import tempfile
import time
from pathlib import Path

import numpy as np
from markupsafe import escape

from surveykit.definition.survey import load_survey_file
from surveykit.resources import locate_resource
from surveykit.store import add_survey, init_database, open_engine
from surveykit.workflows.generate import generate_questionnaires


def peak_rss_mb() -> float:
    # ru_maxrss is in kilobytes on Linux
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_surveykit(folder: Path, respondents: int, fmt: str, per_file: int, survey_file: Path):
    engine = open_engine(str(folder / "bench.db"))
    init_database(engine)
    survey = load_survey_file(survey_file)
    add_survey(engine, survey)
    start, cpu = time.perf_counter(), time.process_time()
    result = generate_questionnaires(engine, survey.name, respondents=respondents,
                                     out_dir=folder / "surveykit", fmt=fmt, per_file=per_file)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    engine.dispose()
    return seconds, cpu, result


def first_page(path: Path, fmt: str) -> tuple[str, str, str]:
    """(head, one page, tail) of a generated file."""
    text = path.read_text(encoding="utf-8")
    if fmt == "html":
        start = text.index("<section")
        end = text.index("</section>") + len("</section>\n")
        return text[:start], text[start:end], text[text.rindex("</section>") + 11:]
    separator = '<div style="page-break-after: always"></div>'
    end = text.index(separator) + len(separator) + len("\n\n* * *\n\n")
    return "", text[:end], ""


def run_baseline(folder: Path, result, respondents: int, fmt: str, per_file: int) -> float:
    ext = "html" if fmt == "html" else "md"
    head, sheet, tail = first_page(result.out_dir / f"sheets-00001.{ext}", fmt)
    _, slip, _ = first_page(result.out_dir / f"slips-00001.{ext}", fmt)
    first_id = result.respondent_ids[0]
    sheet_format = sheet.replace("{", "{{").replace("}", "}}").replace(first_id, "{0}")
    rules = ["Answer truthfully.", "Give the opposite of the true answer.",
             "Answer \"don't know\", whatever the truth is."]
    if fmt == "html":
        rules = [str(escape(rule)) for rule in rules]
    escaped = slip.replace("{", "{{").replace("}", "}}")
    slip_format, slots = re.subn("|".join(map(re.escape, rules)), "{}", escaped)
    out = folder / "baseline"
    out.mkdir()
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for batch, first in enumerate(range(0, respondents, per_file), start=1):
        size = min(per_file, respondents - first)
        ids = [f"{i:04d}-AAAA-BBBB-CC" for i in range(first, first + size)]
        choice = rng.integers(0, 3, size=(size, max(slots, 1)))
        with open(out / f"sheets-{batch:05d}.{ext}", "w", encoding="utf-8") as stream:
            stream.write(head)
            stream.writelines(sheet_format.format(i) for i in ids)
            stream.write(tail)
        with open(out / f"slips-{batch:05d}.{ext}", "w", encoding="utf-8") as stream:
            stream.write(head)
            stream.writelines(slip_format.format(*(rules[c] for c in row[:slots]))
                              for row in choice.tolist())
            stream.write(tail)
    return time.perf_counter() - start


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.iterdir())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--respondents", type=int, default=100_000)
    parser.add_argument("--format", dest="fmt", choices=["html", "markdown"], default="html")
    parser.add_argument("--per-file", type=int, default=500)
    parser.add_argument("--survey", type=Path,
                        default=locate_resource("sample_data") / "academic_integrity.toml")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rss_before = peak_rss_mb()
        ours, cpu, result = run_surveykit(folder, args.respondents, args.fmt, args.per_file,
                                          args.survey)
        rss_after = peak_rss_mb()
        base = run_baseline(folder, result, args.respondents, args.fmt, args.per_file)
        ours_bytes = folder_bytes(folder / "surveykit")
        base_bytes = folder_bytes(folder / "baseline")

    n = args.respondents
    print(f"generate {n:,} questionnaires of {args.survey.name} ({args.fmt}, slips mode: "
          f"sheet + slip each, {args.per_file} per file)")
    print(f"  surveykit generate  {ours:7.2f} s  {n / ours:9,.0f} questionnaires/s  "
          f"{ours_bytes / 1e6:7.1f} MB written")
    print(f"  (surveykit's time includes recording the ids and instruction totals in SQLite; "
          f"CPU {cpu:.2f} s)")
    print(f"  str.format baseline {base:7.2f} s  {n / base:9,.0f} questionnaires/s  "
          f"{base_bytes / 1e6:7.1f} MB written")
    print(f"  ratio {ours / base:.2f}x the baseline's time")
    print(f"  peak memory (max RSS) {rss_before:.0f} MB before, {rss_after:.0f} MB after "
          "generating")


if __name__ == "__main__":
    main()
