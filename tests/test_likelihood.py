"""The general maximum-likelihood machinery (surveykit.estimation.likelihood) on hard cases."""

import numpy as np

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
