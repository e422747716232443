"""The mechanism layer: validation, belief/plausibility, privacy losses, composition."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from surveykit import EvidentialMechanism, GeneralizedWarner, ParameterError, Warner
from surveykit.designs.warner import estimate_redistributed
from surveykit.estimation.binomial import conditional_variance
from surveykit.estimation.exact import nu_optimistic, nu_walley, warner_variance
from surveykit.privacy.bounds import (
    tradeoff_f2_op,
    tradeoff_f2_pe,
    tradeoff_f_op,
    tradeoff_f_pe,
    tradeoff_U,
    tradeoff_u,
    tradeoff_U2,
    tradeoff_u2,
)
from surveykit.privacy.evidential import compose, post_process

YN = ("yes", "no")
FOCAL = [{"yes"}, {"no"}, {"yes", "no"}]


def make(masses, focal=FOCAL, inputs=("x1", "x2")):
    return EvidentialMechanism(inputs=inputs, outputs=YN, focal_sets=focal, masses=masses)


# -- validation ----------------------------------------------------------------------


def test_row_that_does_not_sum_to_one_is_named():
    with pytest.raises(ParameterError, match=r"row 'x2': masses sum to 0\.9"):
        make([[0.6, 0.2, 0.2], [0.2, 0.5, 0.2]])


def test_negative_mass_is_named_with_its_focal_set():
    with pytest.raises(ParameterError, match=r"row 'x1': mass -0\.1 on \['no'\] is negative"):
        make([[1.1, -0.1, 0.0], [0.2, 0.6, 0.2]])


def test_mass_on_the_empty_set_is_refused():
    with pytest.raises(ParameterError, match="row 'x1': mass 0.1 on the empty set"):
        make([[0.5, 0.4, 0.1], [0.5, 0.4, 0.1]], focal=[{"yes"}, {"no"}, set()])


def test_focal_set_outside_the_outputs_is_refused():
    with pytest.raises(ParameterError, match=r"contains \['maybe'\]"):
        make([[1.0], [1.0]], focal=[{"maybe"}])


def test_wrong_shape_is_refused():
    with pytest.raises(ParameterError, match=r"shape \(2, 2\), expected \(2, 3\)"):
        make([[0.5, 0.5], [0.5, 0.5]])


@pytest.mark.parametrize(
    ("p", "q", "message"),
    [
        (0.3, 0.4, r"p \(0\.3\) must be greater than q \(0\.4\)"),
        (0.4, 0.4, r"p \(0\.4\) must be greater than q \(0\.4\)"),
        (0.7, 0.4, r"p \+ q \(0\.7 \+ 0\.4 = 1\.1\) must be at most 1"),
        (1.2, 0.0, r"p \(1\.2\) must be a probability between 0 and 1"),
        (0.5, -0.1, r"q \(-0\.1\) must be a probability between 0 and 1"),
        (float("nan"), 0.1, r"p \(nan\) must be a probability"),
        ("0.6", 0.1, r"p \('0\.6'\) must be a number"),
    ],
)
def test_generalized_warner_refuses_bad_parameters(p, q, message):
    with pytest.raises(ParameterError, match=message):
        GeneralizedWarner(p=p, q=q)


def test_mechanisms_are_frozen_and_keyword_only():
    gw = GeneralizedWarner(p=0.6, q=0.2)
    with pytest.raises(AttributeError):
        gw.p = 0.7  # type: ignore[misc]
    with pytest.raises(TypeError):
        GeneralizedWarner(0.6, 0.2)  # type: ignore[misc]
    assert repr(gw) == "GeneralizedWarner(p=0.6, q=0.2)"
    assert repr(Warner(p=0.75)) == "Warner(p=0.75, dont_know=0.0)"


# -- belief and plausibility -----------------------------------------------------------


def test_belief_and_plausibility_of_the_generalized_warner_rows():
    m = GeneralizedWarner(p=0.5, q=0.2).to_evidential()
    # bel counts only {yes}; pl adds the don't-know mass on {yes, no}
    assert m.belief("yes", {"yes"}) == pytest.approx(0.5)
    assert m.plausibility("yes", {"yes"}) == pytest.approx(0.8)
    assert m.belief("no", {"yes"}) == pytest.approx(0.2)
    assert m.plausibility("no", {"yes"}) == pytest.approx(0.5)
    assert m.belief("yes", {"yes", "no"}) == pytest.approx(1.0)
    assert m.mass("yes", {"yes", "no"}) == pytest.approx(0.3)


def test_belief_never_exceeds_plausibility_on_random_mechanisms():
    rng = np.random.default_rng(7)
    for _ in range(50):
        m = make(rng.dirichlet(np.ones(3), size=2))
        for x in m.inputs:
            for event in ({"yes"}, {"no"}, {"yes", "no"}):
                assert m.belief(x, event) <= m.plausibility(x, event) + 1e-15


# -- privacy losses ---------------------------------------------------------------------


@pytest.mark.parametrize(("p", "q"), [(0.6, 0.2), (0.75, 0.25), (0.5, 0.1), (0.9, 0.05)])
def test_closed_form_losses_equal_the_general_definitions(p, q):
    gw = GeneralizedWarner(p=p, q=q)
    m = gw.to_evidential()
    assert m.epsilon_shafer() == pytest.approx(math.log(p / q), rel=1e-14)
    assert gw.epsilon_shafer == pytest.approx(m.epsilon_shafer(), rel=1e-14)
    # Walley: max pl_x(E)/bel_x'(E) is reached at E = {yes}: (p + q3) / q = (1 - q) / q
    assert m.epsilon_walley() == pytest.approx(math.log((1 - q) / q), rel=1e-14)
    assert gw.epsilon_walley == pytest.approx(m.epsilon_walley(), rel=1e-14)


def test_unbounded_losses_are_infinite_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gw = GeneralizedWarner(p=0.8, q=0.0)
        assert gw.epsilon_shafer == math.inf
        assert gw.epsilon_walley == math.inf
        m = gw.to_evidential()
        assert m.epsilon_shafer() == math.inf
        assert m.epsilon_walley() == math.inf
        assert m.epsilon_bel() == math.inf


def test_zero_over_zero_is_skipped_not_infinite():
    # no don't-know mass in either row: the column {yes, no} is 0/0 and says nothing
    m = Warner(p=0.75).to_evidential()
    assert m.epsilon_shafer() == pytest.approx(math.log(3))


def test_a_mechanism_that_ignores_its_input_loses_nothing():
    m = make([[0.3, 0.3, 0.4], [0.3, 0.3, 0.4]])
    for semantics in ("shafer", "bel", "pl", "walley"):
        if semantics == "walley":
            # pl/bel of the same row still differs by the don't-know mass
            assert m.epsilon(semantics) == pytest.approx(math.log(0.7 / 0.3))
        else:
            assert m.epsilon(semantics) == 0.0


def test_unknown_semantics_is_named():
    with pytest.raises(ParameterError, match="semantics 'renyi' is not one of"):
        GeneralizedWarner(p=0.6, q=0.2).to_evidential().epsilon("renyi")  # type: ignore[arg-type]


mass_rows = st.lists(st.floats(min_value=0.01, max_value=1.0), min_size=3, max_size=3)


def mechanism_from(rows):
    masses = np.array(rows, dtype=float)
    masses /= masses.sum(axis=1, keepdims=True)
    return make(masses)


@settings(max_examples=60, deadline=None)
@given(st.lists(mass_rows, min_size=2, max_size=2))
def test_bel_and_pl_losses_never_exceed_the_shafer_loss(rows):
    """Lemma 3.2: eps_bel <= eps_S and eps_pl <= eps_S."""
    m = mechanism_from(rows)
    assert m.epsilon_bel() <= m.epsilon_shafer() + 1e-12
    assert m.epsilon_pl() <= m.epsilon_shafer() + 1e-12


@settings(max_examples=40, deadline=None)
@given(st.lists(mass_rows, min_size=2, max_size=2), st.lists(mass_rows, min_size=2, max_size=2))
def test_composition_losses_add_at_most(rows1, rows2):
    """Lemmas 3.3 and 3.15: the product mechanism is (eps1 + eps2)-private in both semantics."""
    a, b = mechanism_from(rows1), mechanism_from(rows2)
    ab = compose(a, b)
    assert ab.masses.sum(axis=1) == pytest.approx([1.0, 1.0])
    assert ab.epsilon_shafer() <= a.epsilon_shafer() + b.epsilon_shafer() + 1e-12
    assert ab.epsilon_walley() <= a.epsilon_walley() + b.epsilon_walley() + 1e-12


@settings(max_examples=30, deadline=None)
@given(st.floats(0.35, 0.95), st.floats(0.01, 0.3))
def test_composing_a_question_with_itself_doubles_the_shafer_loss(p, q):
    if p + q > 1 or p <= q:
        return
    m = GeneralizedWarner(p=p, q=q).to_evidential()
    assert compose(m, m).epsilon_shafer() == pytest.approx(2 * m.epsilon_shafer(), rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(mass_rows, min_size=2, max_size=2), st.sampled_from(["merge", "swap", "collapse"]))
def test_post_processing_never_increases_a_loss(rows, kind):
    """Lemmas 3.4 and 3.16, for deterministic maps f: Y -> Z."""
    m = mechanism_from(rows)
    f = {
        "merge": lambda y: "answered",
        "swap": lambda y: {"yes": "no", "no": "yes"}[y],
        "collapse": lambda y: "yes",
    }[kind]
    processed = post_process(m, f)
    for semantics in ("shafer", "bel", "pl", "walley"):
        assert processed.epsilon(semantics) <= m.epsilon(semantics) + 1e-12


def test_composition_needs_the_same_inputs():
    a = make([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2]])
    b = make([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2]], inputs=("u", "v"))
    with pytest.raises(ParameterError, match="compose needs the same inputs"):
        compose(a, b)


# -- design helpers ------------------------------------------------------------------------


@pytest.mark.parametrize("epsilon", [0.1, 0.5, math.log(3), 2.0, 5.0])
@pytest.mark.parametrize("dont_know", [0.0, 0.1, 0.4])
def test_optimal_mechanism_spends_the_budget_at_the_given_dont_know_rate(epsilon, dont_know):
    gw = GeneralizedWarner.optimal(epsilon=epsilon, dont_know=dont_know)
    assert gw.epsilon_shafer == pytest.approx(epsilon, rel=1e-12)
    assert gw.dont_know == pytest.approx(dont_know, abs=1e-12)


def test_optimal_mechanism_has_the_smallest_variance_within_the_budget():
    """Corollary 3.12: with p + q = c fixed, no eps-SLDP mechanism beats Q_GWR."""
    epsilon, c, n = 1.0, 0.8, 200
    best = GeneralizedWarner.optimal(epsilon=epsilon, dont_know=1 - c)
    best_var = conditional_variance(best, pi=0.3, n=n)
    for p in np.linspace(c / 2 + 1e-3, c, 200):
        q = c - p
        if q <= 0 or math.log(p / q) > epsilon + 1e-12:
            continue
        assert conditional_variance(GeneralizedWarner(p=p, q=q), pi=0.3, n=n) >= best_var * (
            1 - 1e-12
        )


def test_walley_budget_design_spends_the_walley_budget():
    gw = GeneralizedWarner.for_walley_budget(epsilon=1.5, dont_know=0.2)
    assert gw.epsilon_walley == pytest.approx(1.5, rel=1e-12)
    assert gw.dont_know == pytest.approx(0.2, abs=1e-12)
    with pytest.raises(ParameterError, match="dont_know .* is too large"):
        GeneralizedWarner.for_walley_budget(epsilon=0.2, dont_know=0.5)


@pytest.mark.parametrize("epsilon", [0, -1, float("inf")])
def test_budget_must_be_positive_and_finite(epsilon):
    with pytest.raises(ParameterError, match="epsilon"):
        GeneralizedWarner.optimal(epsilon=epsilon)


# -- Walley's redistributions Q_lambda (Section 3.2) ------------------------------------------


def test_q_lambda_losses_and_variances_fill_the_rectangle():
    gw = GeneralizedWarner(p=0.6, q=0.15)
    n, pi = 100, 0.3
    losses, variances = [], []
    for lam in np.linspace(0, 1, 21):
        w = gw.redistribute(lam=lam)
        losses.append(w.epsilon_shafer)
        variances.append(warner_variance(pi=pi, p=w.p, n=n))
    assert min(losses) == pytest.approx(gw.epsilon_optimistic, rel=1e-12)
    assert max(losses) == pytest.approx(gw.epsilon_walley, rel=1e-12)
    assert min(variances) == pytest.approx(nu_optimistic(gw, pi=pi, n=n), rel=1e-12)
    assert max(variances) == pytest.approx(nu_walley(gw, pi=pi, n=n), rel=1e-12)


@pytest.mark.parametrize("lam", [0.0, 0.3, 1.0])
def test_q_lambda_estimator_is_unbiased(lam):
    """E[pi_hat] = pi exactly, summing over Binomial(n, yes-probability of Q_lambda)."""
    from scipy import stats

    gw = GeneralizedWarner(p=0.6, q=0.15)
    n, pi = 40, 0.35
    t = gw.p + lam * gw.dont_know
    yes_probability = pi * t + (1 - pi) * (1 - t)
    k = np.arange(n + 1)
    weights = stats.binom.pmf(k, n, yes_probability)
    values = [estimate_redistributed(yes=int(y), n=n, mechanism=gw, lam=lam) for y in k]
    assert float(np.dot(weights, values)) == pytest.approx(pi, rel=1e-12)


def test_nu_walley_is_infinite_when_some_q_lambda_is_uninformative():
    assert nu_walley(GeneralizedWarner(p=0.45, q=0.1), pi=0.5, n=10) == math.inf


# -- hypothesis-testing trade-off bounds ------------------------------------------------------

ALPHA = np.linspace(0, 1, 101)


@pytest.mark.parametrize("epsilon", [0.2, 1.0, 2.5])
def test_sldp_bounds_are_ordered_and_pass_through_the_corners(epsilon):
    u, U = tradeoff_u(ALPHA, epsilon), tradeoff_U(ALPHA, epsilon)
    assert np.all(u <= U + 1e-15)
    assert u[0] == pytest.approx(1.0) and u[-1] == pytest.approx(0.0)
    # u is the eps-DP trade-off curve, which is symmetric: u(u(alpha)) = alpha
    assert tradeoff_u(u, epsilon) == pytest.approx(ALPHA, abs=1e-12)


@pytest.mark.parametrize("epsilon", [0.2, 1.0, 2.5])
def test_warner_neyman_pearson_errors_lie_on_the_lower_bound(epsilon):
    """Theorem 3.5 for a Bayesian mechanism: Warner's best tests meet u exactly at its kinks."""
    w = GeneralizedWarner.optimal(epsilon=epsilon)
    # rejecting on "yes" (H0: x = no): type I = q, type II = 1 - p
    assert 1 - w.p == pytest.approx(float(tradeoff_u(w.q, epsilon)), rel=1e-12)


@pytest.mark.parametrize("epsilon", [0.2, 1.0, 2.5])
def test_lower_bounds_lie_below_upper_bounds_in_one_fold(epsilon):
    assert np.all(tradeoff_f_pe(ALPHA, epsilon) <= tradeoff_f_op(ALPHA, epsilon) + 1e-12)
    # two eps-mechanisms are at most 2 eps-private: u2 is at least the 2 eps-DP curve
    assert np.all(tradeoff_u2(ALPHA, epsilon) >= tradeoff_u(ALPHA, 2 * epsilon) - 1e-12)
    assert np.all(tradeoff_f2_pe(ALPHA, epsilon) >= tradeoff_f_pe(ALPHA, 2 * epsilon) - 1e-12)


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.5])
def test_printed_two_fold_upper_bounds_exclude_the_test_that_never_rejects(epsilon):
    """Erratum (docs/errata.md, item 8): Corollaries 3.6 and 3.19 as printed.

    The rule that never rejects has type I error 0 and type II error 1, so any
    valid upper bound must be 1 at alpha = 0. The printed third term
    -alpha + (3 - e^-2eps)/(e^eps + 1) is below 1 there once eps >= 0.5, and
    then even below the printed lower bound. We keep the functions as printed
    (they are the paper's) and document that they are not valid bounds.
    """
    assert tradeoff_U2(0.0, epsilon) < 1.0
    assert tradeoff_f2_op(0.0, epsilon) < 1.0
    assert tradeoff_U2(0.0, epsilon) < tradeoff_u2(0.0, epsilon)
    # the one-fold bounds of Theorems 3.5 and 3.18 do not have this defect
    assert tradeoff_U(0.0, epsilon) == pytest.approx(1.0)
    assert tradeoff_f_op(0.0, epsilon) == pytest.approx(1.0)


def test_tradeoff_functions_are_vectorized():
    assert tradeoff_u(ALPHA, 1.0).shape == ALPHA.shape
    assert np.ndim(tradeoff_f_op(0.3, 1.0)) == 0
