"""Joint analysis of several questions (surveykit.estimation.joint): closed forms for direct
questions, the product likelihood against the one-question likelihood and numerical
derivatives, seeded simulations that recover a known joint distribution, and one-line errors.

Simulations draw every respondent's true states and each question's instruction row by row
with a seeded numpy Generator (not through the product matrix the estimator uses).
Tolerances are stated in standard errors.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from surveykit.designs import make_design
from surveykit.errors import EstimationError, ParameterError
from surveykit.estimation.joint import ProductLikelihood, _Question, joint, joint_from_counts
from surveykit.estimation.likelihood import LikelihoodProblem
from surveykit.joint_counts import JointCounts

DIRECT = make_design("direct")
WARNER = make_design("warner", p=0.8)
SLD = make_design("sld", p=[1 / 6, 5 / 6])


# -- simulation of respondents --------------------------------------------------------------


def _truth(rng, n: int, joint_shares: dict[tuple[str, ...], float]) -> list[np.ndarray]:
    """True states per question, drawn from a joint distribution over yes/no tuples."""
    keys = list(joint_shares)
    draws = rng.choice(len(keys), size=n, p=[joint_shares[k] for k in keys])
    return [np.array([keys[d][j] for d in draws]) for j in range(len(keys[0]))]


def _answers(rng, design, truth: np.ndarray, groups: np.ndarray | None = None,
             nuisance: dict | None = None) -> np.ndarray:
    """Each respondent's answer: a draw from the design's column of their state (and group)."""
    matrix = design.matrix(None if nuisance is None else [nuisance[p.name]
                                                          for p in design.nuisance])
    groups = np.zeros(truth.size, dtype=int) if groups is None else groups - 1
    states = np.array([design.state_labels.index(s) for s in truth])
    columns = matrix[groups, :, states]                   # (n, responses)
    cumulative = np.cumsum(columns, axis=1)
    u = rng.random(truth.size)[:, None]
    index = np.minimum((u > cumulative).sum(axis=1), columns.shape[1] - 1)
    return np.array(design.response_labels)[index]


TRUE = {("yes", "yes"): 0.15, ("yes", "no"): 0.15, ("no", "yes"): 0.10, ("no", "no"): 0.60}


def _true_quantities() -> dict[str, float]:
    p11, p10, p01, p00 = (TRUE[k] for k in [("yes", "yes"), ("yes", "no"), ("no", "yes"),
                                            ("no", "no")])
    pa, pb = p11 + p10, p11 + p01
    return {"both": p11, "a_not_b": p10, "b_given_a": p11 / pa,
            "odds_ratio": p11 * p00 / (p10 * p01),
            "phi": (p11 * p00 - p10 * p01) / math.sqrt(pa * (1 - pa) * pb * (1 - pb))}


def _simulated_frame(rng, n: int) -> pd.DataFrame:
    a, b = _truth(rng, n, TRUE)
    groups = rng.integers(1, 3, size=n)
    return pd.DataFrame({"a": _answers(rng, WARNER, a),
                         "b": _answers(rng, SLD, b, groups, {"t": 0.85}), "g": groups})


# -- direct questions: the observed table ---------------------------------------------------


@pytest.fixture(scope="module")
def direct_frame() -> pd.DataFrame:
    rng = np.random.default_rng(24)
    a, b = _truth(rng, 500, TRUE)
    return pd.DataFrame({"a": a, "b": b})


def test_direct_questions_give_the_observed_shares_and_pearson_s_correlation(direct_frame):
    result = joint(direct_frame, {"a": DIRECT, "b": DIRECT})
    table = pd.crosstab(direct_frame.a, direct_frame.b)
    n = len(direct_frame)
    pair = result.pair("a", "b")
    for (sa, sb), quantity in pair.cells.items():
        observed = table.loc[sa, sb] / n
        assert quantity.estimate == pytest.approx(observed, abs=1e-9)
        # the multinomial standard error of a cell share
        assert quantity.se == pytest.approx(math.sqrt(observed * (1 - observed) / n), rel=1e-6)
    x, y = (direct_frame.a == "yes").astype(float), (direct_frame.b == "yes").astype(float)
    assert pair["phi"].estimate == pytest.approx(np.corrcoef(x, y)[0, 1], abs=1e-9)
    n11, n10, n01, n00 = (table.loc["yes", "yes"], table.loc["yes", "no"],
                          table.loc["no", "yes"], table.loc["no", "no"])
    assert pair["odds_ratio"].estimate == pytest.approx(n11 * n00 / (n10 * n01), rel=1e-9)
    # Woolf's standard error of the log odds ratio
    woolf = math.sqrt(1 / n11 + 1 / n10 + 1 / n01 + 1 / n00)
    assert pair["odds_ratio"].se / pair["odds_ratio"].estimate == pytest.approx(woolf, rel=1e-6)
    assert pair["b_given_a"].estimate == pytest.approx(n11 / (n11 + n10), abs=1e-9)
    pa = (n11 + n10) / n
    p = n11 / (n11 + n10)
    assert pair["b_given_a"].se == pytest.approx(math.sqrt(p * (1 - p) / (n * pa)), rel=1e-6)


def test_direct_questions_independence_test_is_the_g2_of_the_table(direct_frame):
    result = joint(direct_frame, {"a": DIRECT, "b": DIRECT})
    table = pd.crosstab(direct_frame.a, direct_frame.b).to_numpy()
    g2, p_value, df, _ = stats.chi2_contingency(table, correction=False,
                                                lambda_="log-likelihood")
    assert result.independence.lr == pytest.approx(g2, rel=1e-8)
    assert result.independence.df == df == 1
    assert result.independence.p_value == pytest.approx(p_value, rel=1e-6)


def test_the_delta_method_gradient_of_phi_matches_numerical_differences(direct_frame):
    """phi's standard error uses an analytic gradient; with a direct table the covariance of
    the cells is the multinomial one, so the delta method can be redone numerically."""
    result = joint(direct_frame, {"a": DIRECT, "b": DIRECT})
    pair = result.pair("a", "b")
    p = np.array([pair.cells[k].estimate for k in [("yes", "yes"), ("yes", "no"),
                                                   ("no", "yes"), ("no", "no")]])
    cov = (np.diag(p) - np.outer(p, p)) / len(direct_frame)

    def phi(q):
        pa, pb = q[0] + q[1], q[0] + q[2]
        return (q[0] * q[3] - q[1] * q[2]) / math.sqrt(pa * (1 - pa) * pb * (1 - pb))

    h = 1e-7
    gradient = np.array([(phi(p + h * e) - phi(p - h * e)) / (2 * h) for e in np.eye(4)])
    assert pair["phi"].se == pytest.approx(math.sqrt(gradient @ cov @ gradient), rel=1e-5)


def test_missing_answers_leave_the_respondent_out(direct_frame):
    frame = direct_frame.copy()
    frame.loc[:9, "b"] = None
    result = joint(frame, {"a": DIRECT, "b": DIRECT})
    assert result.n == len(frame) - 10
    assert result.left_out == {"missing answers": 10}


# -- the product likelihood -----------------------------------------------------------------


def test_one_question_s_product_likelihood_is_its_own_likelihood():
    rng = np.random.default_rng(5)
    counts = rng.integers(5, 60, size=(2, 3))
    counts[:, 2] = 0  # no don't know
    s = SLD.structure
    single = LikelihoodProblem(s.base, s.slopes, counts, np.array([0.0]), np.array([1.0]))
    product = ProductLikelihood([_Question.of("q", SLD, False)], counts)
    x = np.array([0.3, 0.7, 0.8])
    assert product.loglik(x) == pytest.approx(single.loglik(x), rel=1e-12)
    for ours, theirs in zip(product.derivatives(x), single.derivatives(x), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10)
    np.testing.assert_allclose(product.expected_information(x),
                               single.expected_information(x), rtol=1e-10)


def test_with_one_nuisance_question_the_product_is_the_kronecker_design():
    """With nuisance parameters in one question only, the product is affine in them: the
    likelihood of the Kronecker product of the matrices (slopes: kron(A, B))."""
    rng = np.random.default_rng(6)
    w, s = WARNER.structure, SLD.structure
    counts = rng.integers(1, 40, size=(1, 2, 3, 3))
    counts[:, :, 2, :] = 0
    counts[:, :, :, 2] = 0
    base = np.stack([np.kron(w.base[0], s.base[g]) for g in range(2)])
    slopes = np.stack([np.stack([np.kron(w.base[0], s.slopes[0, g]) for g in range(2)])])
    flat = counts.reshape(2, 9)   # groups of the SLD question, then the 3 x 3 responses
    kron = LikelihoodProblem(base, slopes, flat, np.array([0.0]), np.array([1.0]))
    product = ProductLikelihood([_Question.of("a", WARNER, False), _Question.of("b", SLD, False)],
                                counts)
    x = np.array([0.1, 0.2, 0.3, 0.4, 0.75])
    assert product.loglik(x) == pytest.approx(kron.loglik(x), rel=1e-12)
    for ours, theirs in zip(product.derivatives(x), kron.derivatives(x), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-9)


def test_multilinear_nuisance_derivatives_match_numerical_differences():
    """Two questions with nuisance parameters (the product is bilinear in them)."""
    rng = np.random.default_rng(7)
    questions = [_Question.of("a", make_design("uqtunknown", p=[0.2, 0.8]), False),
                 _Question.of("b", SLD, False),
                 _Question.of("c", make_design("warner", p=0.7, dont_know=0.1), False)]
    counts = rng.integers(1, 50, size=(2, 2, 1, 3, 3, 3))
    counts[:, :, :, 2] = 0
    counts[:, :, :, :, 2] = 0
    problem = ProductLikelihood(questions, counts)
    x = np.array([0.05, 0.1, 0.15, 0.1, 0.2, 0.1, 0.1, 0.2, 0.7, 0.6])
    gradient, hessian = problem.derivatives(x)
    h, unit = 1e-6, np.eye(x.size)
    numeric = np.array([(problem.loglik(x + h * e) - problem.loglik(x - h * e)) / (2 * h)
                        for e in unit])
    second = np.array([(problem.derivatives(x + h * e)[0] - problem.derivatives(x - h * e)[0])
                       / (2 * h) for e in unit])
    np.testing.assert_allclose(gradient, numeric, rtol=1e-7, atol=1e-6)
    np.testing.assert_allclose(hessian, second, rtol=1e-6, atol=1e-3)


# -- randomized questions: recovering a known joint distribution ----------------------------


def test_a_seeded_survey_recovers_the_joint_distribution_within_3_se():
    rng = np.random.default_rng(2024)
    result = joint(_simulated_frame(rng, 4000), {"a": WARNER, "b": SLD}, groups={"b": "g"})
    pair = result.pair("a", "b")
    for name, truth in _true_quantities().items():
        quantity = pair[name]
        assert abs(quantity.estimate - truth) < 3 * quantity.se, (name, quantity, truth)
    assert abs(result.nuisance["b.t"] - 0.85) < 3 * math.sqrt(result.covariance[4, 4])
    assert result.independence.p_value < 0.01      # the truth is far from independence


def test_three_questions_with_two_honesty_parameters_recover_the_joint_distribution():
    rng = np.random.default_rng(99)
    shares = {(a, b, c): 1 / 8 for a in ("yes", "no") for b in ("yes", "no")
              for c in ("yes", "no")}
    shares[("yes", "yes", "yes")] += 0.1
    shares[("no", "no", "no")] -= 0.1
    truth = _truth(rng, 6000, shares)
    g1, g2 = rng.integers(1, 3, size=6000), rng.integers(1, 3, size=6000)
    frame = pd.DataFrame({
        "a": _answers(rng, SLD, truth[0], g1, {"t": 0.9}),
        "b": _answers(rng, SLD, truth[1], g2, {"t": 0.7}),
        "c": _answers(rng, make_design("fr", p=[0.1, 0.2], dont_know=0.1), truth[2]),
        "g1": g1, "g2": g2})
    designs = {"a": SLD, "b": SLD, "c": make_design("fr", p=[0.1, 0.2], dont_know=0.1)}
    result = joint(frame, designs, groups={"a": "g1", "b": "g2"})
    assert result.converged
    for i, state in enumerate(result.states):
        se = math.sqrt(result.covariance[i, i])
        assert abs(result.shares[i] - shares[state]) < 3 * se, (state, result.shares[i], se)
    for name, true in (("a.t", 0.9), ("b.t", 0.7)):
        index = 8 + list(result.nuisance).index(name)
        assert abs(result.nuisance[name] - true) < 3 * math.sqrt(result.covariance[index, index])
    assert set(result.pair_tests) == {("a", "b"), ("a", "c"), ("b", "c")}
    assert result.share(a="yes", c="yes").estimate == pytest.approx(
        sum(v for s, v in zip(result.states, result.shares, strict=True)
            if s[0] == "yes" and s[2] == "yes"))


def test_a_k_category_question_with_a_yes_no_question():
    rng = np.random.default_rng(31)
    grr = make_design("grr", p=0.7, categories=["low", "mid", "high"])
    n = 5000
    level = rng.choice(["low", "mid", "high"], size=n, p=[0.5, 0.3, 0.2])
    cheated = rng.random(n) < np.where(level == "high", 0.6, 0.2)
    frame = pd.DataFrame({"level": _answers(rng, grr, level),
                          "cheated": _answers(rng, WARNER, np.where(cheated, "yes", "no"))})
    result = joint(frame, {"level": grr, "cheated": WARNER})
    pair = result.pair("level", "cheated")
    expected = {("high", "yes"): 0.2 * 0.6, ("low", "yes"): 0.5 * 0.2, ("mid", "no"): 0.3 * 0.8}
    for key, truth in expected.items():
        assert abs(pair.cells[key].estimate - truth) < 3 * pair.cells[key].se
    assert pair.quantities == {}      # odds ratios and phi are for yes/no pairs
    assert pair.independence.df == 2


@pytest.mark.slow
def test_intervals_cover_93_to_97_percent():
    """1,500 seeded surveys of 3,000 respondents (Warner x SLD): the 95% intervals of the
    joint share, the conditional share, the odds ratio and phi cover the truth in 93-97% of
    them (Monte Carlo SE of a coverage 0.56 points)."""
    rng = np.random.default_rng(95)
    truth = _true_quantities()
    hits = {name: 0 for name in truth}
    reps = 1500
    for _ in range(reps):
        pair = joint(_simulated_frame(rng, 3000), {"a": WARNER, "b": SLD},
                     groups={"b": "g"}).pair("a", "b")
        for name, value in truth.items():
            q = pair[name]
            hits[name] += q.low is not None and q.low <= value <= q.high
    for name, count in hits.items():
        assert 0.93 <= count / reps <= 0.97, (name, count / reps)


# -- counts and errors ----------------------------------------------------------------------


def test_counts_and_rows_give_the_same_estimate():
    rng = np.random.default_rng(8)
    frame = _simulated_frame(rng, 1000)
    from_rows = joint(frame, {"a": WARNER, "b": SLD}, groups={"b": "g"})
    counts = JointCounts.from_rows(["a", "b"], list(zip(frame.a, frame.b, strict=True)),
                                   [("1", str(g)) for g in frame.g])
    from_counts = joint_from_counts(counts, {"a": WARNER, "b": SLD})
    np.testing.assert_allclose(from_counts.shares, from_rows.shares, atol=1e-12)


def test_respondents_asked_directly_join_as_group_0():
    rng = np.random.default_rng(9)
    frame = _simulated_frame(rng, 2000)
    frame.loc[:299, "g"] = 0
    a, b = _truth(rng, 300, TRUE)
    frame.loc[:299, "b"] = b
    result = joint(frame, {"a": WARNER, "b": SLD}, groups={"b": "g"})
    assert result.n == 2000 and result.converged


@pytest.mark.parametrize(("frame", "designs", "groups", "error", "message"), [
    (pd.DataFrame({"a": ["yes", None] * 20, "b": [None, "no"] * 20}),
     {"a": DIRECT, "b": DIRECT}, None, EstimationError,
     "questions 'a' and 'b' have no respondent in common: they were asked of different "
     "respondents, so nothing says how their answers go together"),
    (pd.DataFrame({"a": ["yes", "no"] * 5, "b": ["no", "no"] * 5}),
     {"a": DIRECT, "b": DIRECT}, None, EstimationError,
     "too few answers for a joint analysis of a, b: 10 respondent(s) answered all of them, "
     "fewer than 5 per joint state (4 states need at least 20); add answers or analyse "
     "fewer questions"),
    (pd.DataFrame({"a": ["yes", "no"] * 30, "b": ["no", "yes"] * 30, "g": [1] * 60}),
     {"a": DIRECT, "b": SLD}, {"b": "g"}, EstimationError,
     "the answers to a, b do not identify their joint shares: the designs need answers from "
     "every group combination; group combination 1 x 2 has none"),
    (pd.DataFrame({"a": ["yes"] * 30, "b": ["no"] * 30}),
     {"a": DIRECT, "b": make_design("cdm", p=[0.3, 0.7])}, None, ParameterError,
     "question 'b': design 'cdm' has the state 'cheater' besides its answers; a joint analysis "
     "takes designs whose true states are the answers"),
    (pd.DataFrame({"a": ["yes"] * 30}), {"a": DIRECT}, None, ParameterError,
     "a joint analysis takes 2 to 4 questions, not 1"),
    (pd.DataFrame({"a": ["yes"] * 30}), {"a": DIRECT, "c": DIRECT}, None, ParameterError,
     "question column 'c' is not in the data; the columns are a"),
    (pd.DataFrame({"a": ["yes", "maybe"] * 15, "b": ["no"] * 30}),
     {"a": DIRECT, "b": DIRECT}, None, ParameterError,
     "column 'a' holds 'maybe', which is not an answer of design 'direct'; its answers are "
     "yes, no, dont_know"),
])
def test_bad_input_is_one_line(frame, designs, groups, error, message):
    with pytest.raises(error) as raised:
        joint(frame, designs, groups=groups)
    assert str(raised.value) == message


def test_joint_counts_check_their_cells():
    with pytest.raises(ParameterError, match=r"must list one label per question \(2\)"):
        JointCounts.from_mapping(("a", "b"), {("1",): {("yes", "no"): 1}})
    with pytest.raises(ParameterError, match=r"must not be negative"):
        JointCounts.from_mapping(("a", "b"), {("1", "1"): {("yes", "no"): -1}})
    counts = JointCounts.from_mapping(("a", "b"), {("1", "1"): {("yes", "no"): 2}})
    assert counts.to_dict() == {"questions": ["a", "b"], "cells": [
        {"groups": ["1", "1"], "responses": ["yes", "no"], "count": 2}]}
