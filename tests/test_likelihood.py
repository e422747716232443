"""The general maximum-likelihood machinery (surveykit.estimation.likelihood) on hard cases."""

import numpy as np
import pytest

from surveykit.designs import StochasticLieDetector
from surveykit.estimation.likelihood import LikelihoodProblem, maximize


def _problem(design, counts):
    s = design.structure
    low = np.array([p.low for p in s.nuisance])
    high = np.array([p.high for p in s.nuisance])
    return LikelihoodProblem(s.base, s.slopes, np.asarray(counts), low, high)


def test_newton_stops_when_rounding_noise_is_all_that_is_left():
    # A profile fit (pi pinned at 0.8) from t = 0.1: near the maximum the Newton step
    # (1.5e-13) is rounding noise; the line search used to accept steps that moved nothing
    # and ran into the iteration limit (500 iterations, converged=False), which made every
    # profile-likelihood interval of a two-group design ~10 times slower.
    problem = _problem(StochasticLieDetector(p=[0.2, 0.8]), [[250, 250, 0], [150, 350, 0]])
    fit = maximize(problem, fixed={0: 0.8}, start=[0.8, 0.2, 0.1])
    assert fit.converged
    assert fit.iterations < 50
    best = maximize(problem, fixed={0: 0.8})
    assert abs(fit.eta[0] - best.eta[0]) < 1e-10


def test_profile_interval_of_a_share_pinned_where_answers_are_impossible():
    # The CDM's profile at pi = 1 leaves no honest non-carriers or cheaters, so the "no"
    # answers are impossible: the profile is -inf there. It used to divide by zero
    # (a RuntimeWarning, an error in this suite) before the interval was found.
    from scipy import stats

    from surveykit.designs import CheatingDetection
    from surveykit.estimation import estimate

    design = CheatingDetection(p=[0.3, 0.7])
    counts = {1: {"yes": 218, "no": 282}, 2: {"yes": 315, "no": 185}}
    result = estimate(design=design, counts=counts)
    assert maximize(_problem(design, [[218, 282, 0], [315, 185, 0]]),
                    fixed={0: 1.0}).loglik == -np.inf
    low, high = result.confidence_interval()
    assert 0 < low < result.pi_mle < high < 1
    cutoff = result.loglik - stats.chi2.isf(0.05, 1) / 2
    problem = _problem(design, [[218, 282, 0], [315, 185, 0]])
    for end in (low, high):
        assert abs(maximize(problem, fixed={0: end}).loglik - cutoff) < 1e-8


def test_newton_never_lands_on_a_bound_where_an_observed_answer_is_impossible():
    # Triangular: carriers never answer no. With 1272 yes and 1 no the Newton step toward
    # pi = 1 was accepted at a share of no of 7e-18 (rounding), then snapped to the bound
    # 0, where the one "no" is impossible: the estimate came out as pi = 1 with loglik -inf
    # (and division by zero). The maximum is inside: pi = (1272/1273 - 0.25) / 0.75.
    from surveykit.designs import Triangular
    from surveykit.estimation import estimate

    result = estimate(design=Triangular(p=0.25, dont_know=0.2),
                      counts={"yes": 1272, "no": 1, "dont_know": 1145})
    assert abs(result.pi_mle - (1272 / 1273 - 0.25) / 0.75) < 1e-12
    assert np.isfinite(result.loglik)


def test_sld_pi_hat_is_the_closed_form_also_when_it_is_negative():
    # The unconstrained maximum of the SLD (RRreg's moment estimator) is
    # pi = 1 - (l1 - l2) / (p2 - p1) = -0.2228 here. Newton in (pi, t) must cross pi = 0,
    # where t is not identified, and wandered off (pi_hat was None); in (pi, a = pi t) the
    # problem is concave.
    from surveykit.designs import StochasticLieDetector
    from surveykit.estimation import estimate

    y1, m1, y2, m2, p1, p2 = 68, 538, 2289, 2431, 5 / 6, 1 / 6
    result = estimate(design=StochasticLieDetector(p=[p1, p2]),
                      counts={1: {"yes": y1, "no": m1 - y1}, 2: {"yes": y2, "no": m2 - y2}})
    assert abs(result.pi_hat - (1 - (y1 / m1 - y2 / m2) / (p2 - p1))) < 1e-10


def test_standard_errors_at_a_boundary_estimate_come_from_fishers_information():
    # SLD with t at its bound 1 and pi = 0.097 inside: the observed information is
    # indefinite there (the score is not zero), which left every variance undefined: se was
    # None and a warning claimed t could not be estimated "e.g. when nobody has the trait".
    # Fisher's information at the estimate, written from the model: J_g = (t - (1 - p_g), pi).
    from surveykit.designs import StochasticLieDetector
    from surveykit.estimation import estimate

    table = [(68, 538, 5 / 6), (2289, 2431, 1 / 6)]
    result = estimate(design=StochasticLieDetector(p=[5 / 6, 1 / 6]),
                      counts={g + 1: {"yes": y, "no": m - y} for g, (y, m, _) in enumerate(table)})
    pi, t = result.pi_mle, result.parameters["t"]["estimate"]
    assert t == 1.0 and 0.05 < pi < 0.15
    information = np.zeros((2, 2))
    for _, m, p in table:
        mu = pi * t + (1 - pi) * (1 - p)
        gradient = np.array([t - (1 - p), pi])
        information += m * np.outer(gradient, gradient) / (mu * (1 - mu))
    inverse = np.linalg.inv(information)
    assert abs(result.se - np.sqrt(inverse[0, 0])) < 1e-12
    assert abs(result.parameters["t"]["se"] - np.sqrt(inverse[1, 1])) < 1e-12
    assert result.warnings == ()


def test_profile_interval_ends_sit_on_the_chi_square_cutoff_of_an_independent_profile():
    # The unrelated question with unknown innocuous share u: for fixed pi the log-likelihood
    # is concave in u, so scipy's bounded scalar search gives the profile independently.
    from scipy import optimize, special, stats

    from surveykit.designs import UnrelatedQuestionUnknown
    from surveykit.estimation import estimate

    p = np.array([0.8, 0.3])
    yes, no = np.array([250, 150]), np.array([250, 350])

    def profile(pi):
        def minus(u):
            share = p * pi + (1 - p) * u
            return -float(np.sum(special.xlogy(yes, share) + special.xlogy(no, 1 - share)))
        return -optimize.minimize_scalar(minus, bounds=(0, 1), method="bounded",
                                         options={"xatol": 1e-12}).fun

    result = estimate(design=UnrelatedQuestionUnknown(p=list(p)),
                      counts={1: {"yes": 250, "no": 250}, 2: {"yes": 150, "no": 350}})
    peak = profile(result.pi_mle)
    for level in (0.9, 0.95, 0.99):
        low, high = result.confidence_interval(level)
        for end in (low, high):
            assert 2 * (peak - profile(end)) == pytest.approx(stats.chi2.isf(1 - level, 1),
                                                              abs=1e-6)


def test_an_estimate_on_the_boundary_is_exactly_on_it():
    # The direct question with only "no" answers: Newton's step to pi = 0 stopped 5.6e-17
    # short of it (rounding in the step), so pi_mle was 5.6e-17 with se 2.4e-9, not 0 and 0.
    from surveykit.designs import Direct
    from surveykit.estimation import estimate

    result = estimate(design=Direct(), counts={"yes": 0, "no": 10})
    assert result.pi_mle == 0.0 and result.pi_hat == 0.0 and result.se == 0.0
