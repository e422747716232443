"""No instruction leaks from a `generate` run (issue 19): not through the terminal, the JSON
summary or the database, however small the run.

The channels an observer of a run has are its standard output and error, and the change
of every table of the database from before to after the run. Runs of 1 to 5 respondents
are generated on real databases (an SQLite file and PostgreSQL) with seeds that draw
different instructions; after the respondent ids and the time of issue are set aside
(random, and drawn independently of the instructions), every channel is the same
whatever instructions the slips show. The randomizer audit still works on runs of at
least AUDIT_MINIMUM_PER_GROUP respondents per group, and the report says whom it covers.
docs/questionnaires.md ("Threat model") states what K = AUDIT_MINIMUM_PER_GROUP protects,
with numbers this file recomputes by exact enumeration.
"""

from __future__ import annotations

import csv
import json
import math
import re
import weakref
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import MetaData, inspect, select

from surveykit import store
from surveykit.cli import main
from surveykit.definition.limits import AUDIT_MINIMUM_PER_GROUP
from surveykit.definition.survey import load_survey_file
from surveykit.designs.warner import GeneralizedWarner
from surveykit.reporting.report import render_report
from surveykit.workflows.report import report_for_survey

SURVEYS = Path(__file__).parent / "surveys"
DOCS = Path(__file__).resolve().parent.parent / "docs" / "questionnaires.md"
# Drawn independently of the instructions (ids from the secure generator before any
# instruction; the time is that of the run): set aside before runs are compared.
INDEPENDENT = {"respondents": ("respondent_id", "issued_at")}


_REFLECTED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def snapshot(engine) -> dict[str, Counter]:
    """Every table of the database as a multiset of rows, each row a tuple of (column,
    value) pairs, with the independent columns blanked.

    The schema is reflected once per engine (reflection was most of a run's observation);
    each snapshot checks the database still has exactly the reflected tables, so a table a
    run adds is not missed."""
    names = frozenset(inspect(engine).get_table_names())
    if engine not in _REFLECTED or _REFLECTED[engine][0] != names:
        metadata = MetaData()
        metadata.reflect(engine)
        _REFLECTED[engine] = (names, metadata)
    metadata = _REFLECTED[engine][1]
    assert set(metadata.tables) == names
    tables = {}
    with engine.connect() as conn:
        for name, table in metadata.tables.items():
            blank = INDEPENDENT.get(name, ())
            columns = [c.name for c in table.columns]
            tables[name] = Counter(
                tuple((column, "*" if column in blank else value)
                      for column, value in zip(columns, row, strict=True))
                for row in conn.execute(select(table)))
    return tables


def change(before: dict[str, Counter], after: dict[str, Counter]) -> dict:
    """What a run changed: per table, the rows added and the rows removed."""
    return {name: (sorted((after[name] - before.get(name, Counter())).items(), key=repr),
                   sorted((before.get(name, Counter()) - after[name]).items(), key=repr))
            for name in sorted(after)}


def observe_run(engine, url: str, survey: str, respondents: int, seed: int, folder: Path,
                *extra: str, before: dict[str, Counter] | None = None) -> dict:
    """Run generate in ``folder`` (a relative --out, so paths print the same); return what an
    observer sees (stdout, stderr, the database's change) and what the slips hold.
    ``before``: the database's snapshot if already taken (the previous run's ``tables``,
    when nothing wrote in between)."""
    folder.mkdir()
    if before is None:
        before = snapshot(engine)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        result = CliRunner().invoke(main, [
            "generate", "--survey", survey, "--respondents", str(respondents), "--out",
            "forms", "--seed", str(seed), "--db", url, *extra])
    assert result.exit_code == 0, result.output
    after = snapshot(engine)
    slips = "".join(path.read_text(encoding="utf-8")
                    for path in sorted((folder / "forms").glob("slips-*")))
    groups = sorted(str(dict(row)["group_number"])
                    for row in (after["respondents"] - before["respondents"]).elements())
    return {"seen": (result.stdout, result.stderr, change(before, after)),
            "slips": slips, "groups": tuple(groups), "tables": after}


@pytest.fixture
def issued_engine(engine):
    for name in ("integrity", "groups"):
        store.add_survey(engine, load_survey_file(SURVEYS / f"{name}.toml"))
    return engine


@pytest.mark.parametrize("survey", ["integrity", "groups"])
def test_runs_of_one_to_five_show_the_same_whatever_instructions_were_drawn(
        issued_engine, database_url, survey, tmp_path):
    """Same size (and, with groups, the same form versions, which are no secret): the same
    output and the same change of every table, while the slips differ. On surveykit before
    issue 19 the printed counts and the code_tallies rows told the instructions apart."""
    tables = None
    for respondents in range(1, 6):
        runs = []
        for seed in range(10 * respondents, 10 * respondents + 6):
            runs.append(observe_run(issued_engine, database_url, survey, respondents, seed,
                                    tmp_path / f"run-{seed}", before=tables))
            tables = runs[-1]["tables"]
        by_groups: dict[tuple, list[dict]] = {}
        for run in runs:
            by_groups.setdefault(run["groups"], []).append(run)
        drew_differently = False
        for same in by_groups.values():
            for run in same[1:]:
                assert run["seen"] == same[0]["seen"], (respondents, run["groups"])
            drew_differently |= len({run["slips"] for run in same}) > 1
        # the test has power: runs that look the same did draw different instructions
        assert drew_differently, respondents
    # none of these runs kept instruction totals
    assert not snapshot(issued_engine)["code_tallies"]


def test_a_run_of_one_prints_no_instruction_and_adds_no_totals(issued_engine, database_url,
                                                               tmp_path):
    """The regression of issue 19: generate --respondents 1 printed 'instructions for q:
    truthful 1, opposite 0, dont_know 0' and added the same to code_tallies."""
    for seed, output in enumerate(("text", "json")):
        run = observe_run(issued_engine, database_url, "integrity", 1, seed, tmp_path / output,
                          "--output", output)
        stdout, _, changed = run["seen"]
        codes = re.findall(r'class="rule rule-(\w+)"', run["slips"])
        assert len(codes) == 2
        assert changed["code_tallies"] == ([], [])
        assert not any(code in stdout for code in ("truthful", "opposite", "dont_know"))
        assert [name for name, (added, removed) in changed.items() if added or removed] == [
            "respondents"]
    summary = json.loads(stdout)
    assert "instruction_tallies" not in summary and "code_tallies" not in summary
    assert summary["audit"] == {"tallied": False, "minimum_per_group": AUDIT_MINIMUM_PER_GROUP}


@pytest.mark.parametrize(("survey", "groups"), [("integrity", 1), ("groups", 2)])
def test_totals_are_kept_from_minimum_per_group_respondents_in_every_group(
        issued_engine, database_url, survey, groups, tmp_path):
    key = tmp_path / "key.csv"
    below = observe_run(issued_engine, database_url, survey,
                        groups * AUDIT_MINIMUM_PER_GROUP - 1, 1, tmp_path / "below")
    assert below["seen"][2]["code_tallies"] == ([], [])
    at = observe_run(issued_engine, database_url, survey, groups * AUDIT_MINIMUM_PER_GROUP, 2,
                     tmp_path / "at", "--key-file", str(key))
    assert "instruction totals kept for the randomizer audit" in at["seen"][0]
    added, removed = at["seen"][2]["code_tallies"]
    assert not removed
    # the kept totals are the run's: those the key file gives its respondents
    names = {dict(row)["id"]: dict(row)["name"] for row in at["tables"]["questions"]}
    kept = Counter()
    for row, times in added:
        cells = dict(row)
        kept[(names[cells["question_id"]], cells["group_number"], cells["code"])] += (
            cells["count"] * times)
    with key.open(newline="", encoding="utf-8") as stream:
        codes = Counter((r["question_id"], int(r["group"]), r["code"])
                        for r in csv.DictReader(stream))
    assert kept == codes


def test_the_audit_covers_the_large_runs_and_says_why_not_the_small_ones(issued_engine,
                                                                         database_url,
                                                                         tmp_path):
    observe_run(issued_engine, database_url, "integrity", AUDIT_MINIMUM_PER_GROUP + 30, 3,
                tmp_path / "large")
    report = report_for_survey(issued_engine, "integrity")
    assert (report.issued, report.audited) == (AUDIT_MINIMUM_PER_GROUP + 30,) * 2
    assert "Questionnaires issued: 80. The randomizer audit covers all of them." in \
        " ".join(render_report(report, "text").split())
    # an honest secure randomizer passes (seeded here; p-values are those of a fair draw)
    assert all(q.codes_pvalue is not None and q.codes_pvalue > 0.01 for q in report.questions)
    for respondents, seed in ((3, 4), (1, 5)):
        observe_run(issued_engine, database_url, "integrity", respondents, seed,
                    tmp_path / f"small-{seed}")
    observe_run(issued_engine, database_url, "integrity", 2, 6, tmp_path / "die",
                "--mode", "die")
    report = report_for_survey(issued_engine, "integrity")
    assert (report.issued, report.audited) == (86, 80)
    sentence = ("Questionnaires issued: 86. The randomizer audit covers 80 of them; the other "
                "6 were issued in die mode or in runs of fewer than 50 respondents per form "
                "version, whose instruction totals are not kept (they would reveal the runs' "
                "instructions).")
    for fmt in ("text", "markdown", "html"):
        assert sentence.replace("'", "&#39;" if fmt == "html" else "'") in " ".join(
            render_report(report, fmt).split()), fmt
    data = report.to_dict()
    assert (data["respondents_issued"], data["respondents_audited"]) == (86, 80)


def test_the_audit_flags_a_biased_randomizer_in_a_large_run(issued_engine):
    """A run of 600 whose 'exam' codes come out 70/15/15 instead of the design's 60/20/20
    (chi-square 25 on 2 df, p = exp(-12.5) = 3.7e-6), recorded through the store: the
    report warns."""
    ids = [f"B-{i:04d}" for i in range(600)]
    store.record_generation(issued_engine, "integrity", ids, {
        "exam": {1: {"truthful": 420, "opposite": 90, "dont_know": 90}},
        "paid": {1: {"truthful": 300, "opposite": 150, "dont_know": 150}}})
    report = report_for_survey(issued_engine, "integrity")
    by_id = {q.id: q for q in report.questions}
    assert by_id["exam"].codes_pvalue == pytest.approx(math.exp(-12.5))
    assert any(w.startswith("The issued instructions (truthful 70.0%, opposite 15.0%, "
                            "dont_know 15.0%; design truthful 60.0%")
               for w in by_id["exam"].warnings)
    assert by_id["paid"].codes_pvalue == pytest.approx(1.0)  # exactly the design's shares
    assert report.audited == 600


def test_generate_help_names_the_minimum_run():
    result = CliRunner().invoke(main, ["generate", "--help"])
    assert f"at least {AUDIT_MINIMUM_PER_GROUP} respondents per form version" in " ".join(
        result.output.split())


# -- the numbers of docs/questionnaires.md, "Threat model" -----------------------------------


def realized_loss_quantiles(n: int, p: Fraction, q: Fraction, levels=(0.95, 0.99)):
    """Quantiles of |ln(n_T / n_O)| and P(it is infinite), by exact enumeration of a run of
    n generalized-Warner draws (truthful p, opposite q, don't know 1 - p - q): the Shafer
    loss of a respondent to whoever knows the run's totals (each respondent's instruction is
    then truthful with probability n_T / n, opposite with n_O / n). Integer arithmetic:
    every probability is a whole number over m^n, m the common denominator."""
    m = math.lcm(p.denominator, q.denominator)
    a, b = int(p * m), int(q * m)
    c = m - a - b
    weights: dict[float, int] = {}
    # the powers once, not per term (the double loop has (n + 1)(n + 2)/2 terms)
    powers_a, powers_b, powers_c = ([base ** i for i in range(n + 1)] for base in (a, b, c))
    for truthful in range(n + 1):
        first = math.comb(n, truthful) * powers_a[truthful]
        for opposite in range(n + 1 - truthful):
            rest = n - truthful - opposite
            weight = first * math.comb(n - truthful, opposite) * powers_b[opposite] \
                * powers_c[rest]
            if truthful == opposite:
                loss = 0.0
            elif min(truthful, opposite) == 0:
                loss = math.inf
            else:
                loss = abs(math.log(truthful / opposite))
            weights[loss] = weights.get(loss, 0) + weight
    total = m ** n
    assert sum(weights.values()) == total
    ordered = sorted(weights.items())
    quantiles = []
    for level in levels:
        # the smallest loss x with P(loss <= x) >= level, compared exactly
        needed = Fraction(level).limit_denominator(1000) * total
        cumulative = 0
        for loss, weight in ordered:
            cumulative += weight
            if cumulative >= needed:
                quantiles.append(loss)
                break
    return quantiles, weights.get(math.inf, 0) / total


def test_closed_form_loss_is_the_generalized_warner_loss():
    """The oracle's loss, ln(n_T / n_O), is the design's Shafer loss at the run's shares."""
    for truthful, opposite in ((30, 10), (35, 6), (28, 12)):
        design = GeneralizedWarner(p=truthful / 50, q=opposite / 50)
        assert design.epsilon_shafer == pytest.approx(math.log(truthful / opposite))


def test_threat_model_numbers_are_exact():
    section = DOCS.read_text(encoding="utf-8").split("## Threat model", 1)[1]
    rows = re.findall(r"^\| ([\d,]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.e\-−]+|[\d.]+) \|$",
                      section, re.M)
    assert [int(r[0]) for r in rows] == [AUDIT_MINIMUM_PER_GROUP, 100, 200, 500]
    for size, q95, q99, infinite in rows:
        (exact95, exact99), exact_infinite = realized_loss_quantiles(
            int(size), Fraction(3, 5), Fraction(1, 5))
        assert (float(q95), float(q99)) == (round(exact95, 2), round(exact99, 2)), size
        assert float(infinite.replace("−", "-")) == pytest.approx(exact_infinite, rel=0.01)
        assert exact_infinite == pytest.approx(0.8 ** int(size))  # no "opposite" in the run
    assert f"0.5 / sqrt({AUDIT_MINIMUM_PER_GROUP}) = 0.071" in section
    assert 0.5 / math.sqrt(AUDIT_MINIMUM_PER_GROUP) == pytest.approx(0.0707, abs=5e-5)
