"""The report's checks (issue 22, item 10): the randomizer audit keeps its false-alarm rate
at ALPHA over all the questions it audits (Holm), one line per test, no line for a branch
the design lacks, and counts in the singular where there is one."""

from __future__ import annotations

import math

import numpy as np
import pytest
from click.testing import CliRunner

from surveykit import GeneralizedWarner, estimate, make_design
from surveykit.cli import main
from surveykit.counts import Counts
from surveykit.reporting.report import (
    ALPHA,
    QuestionReport,
    audit_codes,
    holm_adjusted,
    question_facts,
)

DESIGNS = {
    "q1": GeneralizedWarner(p=0.6, q=0.2),
    "q2": GeneralizedWarner(p=0.7, q=0.15),
    "q3": make_design("sld", p=[0.2, 0.8]),
    "q4": make_design("fr", p=[0.1, 0.2]),
    "q5": GeneralizedWarner(p=0.65, q=0.15),
    "q6": make_design("crosswise", p=0.25),
}
PER_GROUP = 500


def protocol_shares(design, group: int) -> dict[str, float]:
    shares: dict[str, float] = {}
    for instruction in design.protocol.for_group(group):
        shares[instruction.code] = shares.get(instruction.code, 0.0) + float(
            instruction.probability)
    return shares


def draw_tallies(rng, shift: dict[str, float] | None = None):
    """Instructions issued as a correct randomizer issues them (``shift`` moves a share of
    one question's first code to its last, as a faulty one would)."""
    tallies = {}
    for qid, design in DESIGNS.items():
        groups = {}
        for g in range(len(design.group_names)):
            shares = protocol_shares(design, g)
            codes, p = list(shares), np.array(list(shares.values()))
            if shift and qid in shift:
                p[0] -= shift[qid]
                p[-1] += shift[qid]
            groups[g + 1] = dict(zip(codes, rng.multinomial(PER_GROUP, p / p.sum()).tolist(),
                                     strict=True))
        tallies[qid] = groups
    return tallies


def test_holm_adjusted_p_values_equal_their_definition():
    # by hand: m = 4, sorted 0.001, 0.01, 0.02, 0.5 -> 0.004, 0.03, 0.04, 0.5
    adjusted = holm_adjusted({"a": 0.02, "b": 0.001, "c": 0.5, "d": 0.01})
    assert adjusted == {"b": 0.004, "d": 0.03, "a": 0.04, "c": 0.5}
    # monotone: a larger p-value never gets a smaller adjusted one
    assert holm_adjusted({"a": 0.02, "b": 0.021}) == {"a": 0.04, "b": 0.04}


@pytest.mark.slow
def test_the_audit_of_a_correct_randomizer_raises_a_false_alarm_in_at_most_alpha_of_reports():
    """Seeded simulation, 4,000 reports of 5 audited questions (crosswise issues one
    instruction: nothing to test): Holm's family-wise rate is 1 - (1 - alpha/5)^5 = 0.00996
    for independent checks, the uncorrected one 1 - (1 - alpha)^5 = 0.049; each within 3
    standard errors. Slow: scipy's chisquare costs about 7 ms a call on a loaded machine."""
    rng = np.random.default_rng(20261127)
    reps = 4000
    corrected = uncorrected = 0
    for _ in range(reps):
        audit = audit_codes(draw_tallies(rng), DESIGNS)
        corrected += any(warning for _, _, warning in audit.values())
        uncorrected += any(p < ALPHA for p, _, _ in audit.values())
    m = len(audit)
    assert m == 5 and "q6" not in audit
    for count, expected in ((corrected, 1 - (1 - ALPHA / m) ** m),
                            (uncorrected, 1 - (1 - ALPHA) ** m)):
        se = math.sqrt(expected * (1 - expected) / reps)
        assert abs(count / reps - expected) <= 3 * se, (count / reps, expected)


def test_each_audit_p_value_is_pearsons_chi_square_summed_over_the_groups():
    # scipy as the oracle: per group, chisquare of the issued codes against the protocol's
    # shares times the group's total; the statistics and degrees of freedom add up over the
    # groups, and the p-value is chi2's upper tail (sld and fr: two groups)
    from scipy import stats

    rng = np.random.default_rng(20261128)
    for shift in (None, {"q1": 0.05, "q3": 0.2, "q4": 0.3}):
        tallies = draw_tallies(rng, shift)
        audit = audit_codes(tallies, DESIGNS)
        assert set(audit) == {"q1", "q2", "q3", "q4", "q5"}
        for qid, (pvalue, _, _) in audit.items():
            statistic = df = 0
            for group, counts in tallies[qid].items():
                shares = protocol_shares(DESIGNS[qid], group - 1)
                total = sum(counts.values())
                result = stats.chisquare([counts[c] for c in shares],
                                         [shares[c] * total for c in shares])
                statistic += result.statistic
                df += len(shares) - 1
            assert pvalue == pytest.approx(stats.chi2.sf(statistic, df), rel=1e-9, abs=1e-300)


def test_a_faulty_randomizer_is_still_caught_after_the_correction():
    rng = np.random.default_rng(7)
    audit = audit_codes(draw_tallies(rng, shift={"q2": 0.12}), DESIGNS)
    pvalue, holm, warning = audit["q2"]
    assert holm >= pvalue
    assert holm < ALPHA and "after Holm's correction over the 5 questions audited" in warning
    assert [qid for qid, (_, _, w) in audit.items() if w] == ["q2"]


def _report(design, counts: dict) -> QuestionReport:
    result = estimate(design=design, counts=counts)
    return QuestionReport(id="q", text="Q?", design=design, counts=Counts.from_mapping(counts),
                          missing=0, estimate=result, interval=result.confidence_interval(),
                          method=result.default_method(),
                          dont_know_designed=float(design.designed_dont_know),
                          dont_know_pvalue=0.5, codes_issued=None, codes_pvalue=None)


def test_no_dont_know_line_for_a_design_without_that_branch_and_one_line_per_test():
    sld = _report(make_design("sld", p=[0.2, 0.8]),
                  {"1": {"yes": 90, "no": 110}, "2": {"yes": 70, "no": 130}})
    assert "don't know" not in [label for label, _ in question_facts(sld)]
    # the generalized Warner's G2 (df 1) is the don't-know test: one line, not two
    warner = _report(GeneralizedWarner(p=0.6, q=0.2),
                     {"1": {"yes": 156, "no": 210, "dont_know": 119}})
    labels = [label for label, _ in question_facts(warner)]
    assert "don't know" in labels and "fit" not in labels


def test_one_question_is_singular(tmp_path):
    (tmp_path / "one.toml").write_text(
        'name = "one"\ntitle = "One"\n[design]\nmodel = "warner"\np = 0.7\n'
        '[[questions]]\nid = "q"\ntext = "Q?"\n', encoding="utf-8")
    db = f"sqlite:///{tmp_path / 'one.db'}"
    runner = CliRunner()
    assert runner.invoke(main, ["init", "--db", db]).exit_code == 0
    added = runner.invoke(main, ["survey", "add", str(tmp_path / "one.toml"), "--db", db])
    assert added.stdout.startswith("Added survey 'one' (1 question) to ")
    text = runner.invoke(main, ["report", "--survey", "one", "--db", db]).stdout
    assert "who answered the 1 question:" in " ".join(text.split())
    assert "1 questions" not in " ".join(text.split())
