"""`surveykit report` for every design: each question's default interval, and --method only
where the design has it (issue 22, item 1).

The SLD survey is the minarets data (tests/data/README.md): Radukic and Musch's
respondents in conditions 1 and 2 (p = 2/12 and 10/12), stored by real CLI runs.
"""

from __future__ import annotations

import csv
import html
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from migrated import migrated_sqlite

from surveykit import estimate, make_design
from surveykit.cli import main

MINARETS = Path(__file__).parent / "data" / "minarets.csv"

SLD_SURVEY = """
name = "minarets"
title = "Ban on minarets"
[design]
model = "sld"
p = [0.1666667, 0.8333333]
[[questions]]
id = "rrt"
text = "Did you vote for the ban on minarets?"
"""

# one-group yes/no (warner), two-group (sld) and three-category (fr) designs in one survey
MIXED_SURVEY = """
name = "designs"
title = "Three designs"
[design]
model = "warner"
p = 0.7
[[questions]]
id = "plain"
text = "A Warner question?"
[[questions]]
id = "liar"
text = "An SLD question?"
[questions.design]
model = "sld"
p = [0.2, 0.8]
[[questions]]
id = "often"
text = "How often?"
[questions.design]
model = "fr"
p = [0.1, 0.1, 0.1]
categories = ["never", "once", "often"]
"""
# question -> group -> answer -> count
MIXED_COUNTS = {
    "plain": {"1": {"yes": 130, "no": 170}},
    "liar": {"1": {"yes": 90, "no": 110}, "2": {"yes": 70, "no": 130}},
    "often": {"1": {"never": 150, "once": 90, "often": 60}},
}


def run(args: list[str]):
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return result


def minarets_counts() -> dict[str, dict[str, int]]:
    counts = {"1": {"yes": 0, "no": 0}, "2": {"yes": 0, "no": 0}}
    with MINARETS.open(encoding="utf-8") as stream:
        for row in csv.DictReader(stream):
            if row["condition"] in counts:
                counts[row["condition"]]["yes" if row["rrt"] == "1" else "no"] += 1
    return counts


@pytest.fixture(scope="module")
def minarets(tmp_path_factory):
    """A database holding the minarets survey and its answers, and the answers file (built
    once: the tests only report from them)."""
    tmp_path = tmp_path_factory.mktemp("minarets")
    (tmp_path / "minarets.toml").write_text(SLD_SURVEY, encoding="utf-8")
    answers = tmp_path / "answers.csv"
    with MINARETS.open(encoding="utf-8") as source, answers.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["respondent_id", "group", "rrt"])
        for number, row in enumerate(csv.DictReader(source)):
            if row["condition"] in ("1", "2"):  # condition 0 was asked directly
                writer.writerow([f"M{number:04d}", row["condition"],
                                 "yes" if row["rrt"] == "1" else "no"])
    db = migrated_sqlite(tmp_path / "minarets.db")
    run(["survey", "add", str(tmp_path / "minarets.toml"), "--db", db])
    run(["import", str(answers), "--survey", "minarets", "--db", db])
    return db, answers


def test_stored_sld_survey_reports_in_every_format_with_the_likelihood_ratio_interval(
        minarets, tmp_path):
    db, _ = minarets
    expected = estimate(design=make_design("sld", p=[0.1666667, 0.8333333]),
                        counts=minarets_counts())
    low, high = expected.confidence_interval(0.95, "likelihood-ratio")
    data = json.loads(run(["report", "--survey", "minarets", "--db", db,
                           "--format", "json"]).output)
    question = data["questions"][0]
    assert question["ci_method"] == "likelihood-ratio"
    assert question["pi_mle"] == pytest.approx(expected.pi_mle, abs=1e-9)
    assert (question["ci_low"], question["ci_high"]) == pytest.approx((low, high), abs=1e-9)
    assert data["ci_method_note"] is None
    text = run(["report", "--survey", "minarets", "--db", db]).output
    assert "Intervals: likelihood-ratio;" in text
    assert f"[{low:.4f}, {high:.4f}]" in text
    page = run(["report", "--survey", "minarets", "--db", db, "--format", "html"]).output
    assert "confidence intervals (likelihood-ratio)" in page and f"{high:.4f}" in page


def test_sld_report_from_files_and_from_a_counts_table(minarets, tmp_path):
    db, answers = minarets
    stored = json.loads(run(["report", "--survey", "minarets", "--db", db,
                             "--format", "json"]).output)["questions"][0]
    table = tmp_path / "counts.csv"
    table.write_text(run(["counts", "--survey", "minarets", "--db", db, "--data", str(answers),
                          "--format", "csv"]).output, encoding="utf-8")
    for source in (["--data", str(answers)], ["--counts-file", str(table)]):
        for fmt in ("text", "html", "json"):
            output = run(["report", "--survey", "minarets", "--db", db, *source,
                          "--format", fmt]).output
            if fmt == "json":
                question = json.loads(output)["questions"][0]
                assert question["ci_method"] == "likelihood-ratio"
                assert (question["ci_low"], question["ci_high"]) == (stored["ci_low"],
                                                                     stored["ci_high"])


def test_method_applies_where_the_design_has_it_and_a_note_names_the_others(tmp_path):
    (tmp_path / "designs.toml").write_text(MIXED_SURVEY, encoding="utf-8")
    answers = tmp_path / "answers.csv"
    with answers.open("w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["respondent_id", "group", "question_id", "answer"])
        for question, groups in MIXED_COUNTS.items():
            number = 0
            for group, row in groups.items():
                for label, n in row.items():
                    for _ in range(n):
                        number += 1
                        writer.writerow([f"r{number:04d}", group, question, label])
    db = migrated_sqlite(tmp_path / "designs.db")
    run(["survey", "add", str(tmp_path / "designs.toml"), "--db", db])
    run(["import", str(answers), "--survey", "designs", "--db", db])

    data = json.loads(run(["report", "--survey", "designs", "--db", db, "--method", "wilson-cc",
                           "--format", "json"]).output)
    by_id = {q["id"]: q for q in data["questions"]}
    assert {k: q["ci_method"] for k, q in by_id.items()} == {
        "plain": "wilson-cc", "liar": "likelihood-ratio", "often": "likelihood-ratio"}
    warner = estimate(design=make_design("warner", p=0.7), counts=MIXED_COUNTS["plain"])
    assert (by_id["plain"]["ci_low"], by_id["plain"]["ci_high"]) == pytest.approx(
        warner.confidence_interval(0.95, "wilson-cc"), abs=1e-12)
    sld = estimate(design=make_design("sld", p=[0.2, 0.8]), counts=MIXED_COUNTS["liar"])
    assert (by_id["liar"]["ci_low"], by_id["liar"]["ci_high"]) == pytest.approx(
        sld.confidence_interval(0.95, "likelihood-ratio"), abs=1e-9)
    note = ("The interval method wilson-cc needs a one-group yes/no design, so liar (sld), "
            "often (fr) use likelihood-ratio, the design's default.")
    assert data["ci_method_note"] == note

    text = run(["report", "--survey", "designs", "--db", db, "--method", "wilson-cc"]).output
    assert " ".join(text.split()).count(note) == 1
    assert "Intervals: wilson-cc (plain), likelihood-ratio (liar, often);" in text
    for fmt in ("html", "markdown"):
        output = run(["report", "--survey", "designs", "--db", db, "--method", "wilson-cc",
                      "--format", fmt]).output
        assert " ".join(html.unescape(output).split()).count(note) == 1
    # without --method every question has its design's default and there is no note
    data = json.loads(run(["report", "--survey", "designs", "--db", db,
                           "--format", "json"]).output)
    assert [q["ci_method"] for q in data["questions"]] == [
        "wilson-cc", "likelihood-ratio", "likelihood-ratio"]
    assert data["ci_method_note"] is None
