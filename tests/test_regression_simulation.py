"""Monte Carlo checks of the regression for every design family (slow: run with -m slow).

For each case, 500 simulated surveys of 10,000 rows from known coefficients
(x1 ~ N(0, 1), x2 ~ Bernoulli(1/2)); every fit must converge, the mean
estimate of every parameter (coefficients and nuisance parameters) must lie
within 3 Monte Carlo standard errors (spread / sqrt(500)) of the truth (the
assertion allows 3.5, see BIAS_TOLERANCE), and
the mean standard error within 10% of the spread of the estimates (500
replications measure a spread to about 3.2%). The rows are many because
maximum likelihood is biased by O(1/n) away from zero: with 1,000 surveys of
4,000 rows that bias (about a tenth of a standard error) shows as up to 3.2
Monte Carlo standard errors for the SLD. Seeds are fixed per case. Each case
prints its numbers (pytest -s).
Results of the last run: docs/regression.md.
"""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest
from regression_simulation import simulate_rows

from surveykit.designs import make_design
from surveykit.estimation.regression import regress

REPLICATIONS = 500
ROWS = 10000
# 3 Monte Carlo SE per parameter is the target; over the grid's 126 parameters a correct
# estimator exceeds it somewhere with probability 0.29, so the assertion allows 3.5 (familywise
# 6%, Bonferroni). Observed: 125 of 126 within 3, cdm-dk's intercept at -3.05 (1.11 with
# another seed).
BIAS_TOLERANCE = 3.5
BETA = [-0.5, 0.8, -0.6]

# (case id, design name, parameters, truth of the nuisance parameters, cheater share, share
# asked directly)
OUTCOME_CASES = [
    ("warner", "warner", {"p": 0.8}, None, 0.0, 0.0),
    ("warner-dk", "warner", {"p": 0.8, "dont_know": 0.2}, None, 0.0, 0.0),
    ("warner+direct", "warner", {"p": 0.8}, None, 0.0, 0.3),
    ("generalized_warner", "generalized_warner", {"p": 0.6, "q": 0.2}, None, 0.0, 0.0),
    ("fr", "fr", {"p": [0.1, 0.2]}, None, 0.0, 0.0),
    ("fr-dk", "fr", {"p": [0.1, 0.2], "dont_know": 0.2}, None, 0.0, 0.0),
    ("mangat-dk", "mangat", {"p": 0.6, "dont_know": 0.2}, None, 0.0, 0.0),
    ("kuk", "kuk", {"p": [0.7, 0.3]}, None, 0.0, 0.0),
    ("kuk3-dk", "kuk", {"p": [0.7, 0.3], "repetitions": 3, "dont_know": 0.2}, None, 0.0, 0.0),
    ("uqtknown", "uqtknown", {"p": [0.7, 0.3]}, None, 0.0, 0.0),
    ("uqtknown-dk", "uqtknown", {"p": [0.7, 0.3], "dont_know": 0.2}, None, 0.0, 0.0),
    ("crosswise", "crosswise", {"p": 0.25}, None, 0.0, 0.0),
    ("crosswise-dk", "crosswise", {"p": 0.25, "dont_know": 0.2}, None, 0.0, 0.0),
    ("triangular", "triangular", {"p": 0.25}, None, 0.0, 0.0),
    ("triangular-dk", "triangular", {"p": 0.25, "dont_know": 0.2}, None, 0.0, 0.0),
    ("custom", "custom", {"matrix": [[0.8, 0.3], [0.2, 0.7]], "states": ["no", "yes"],
                          "responses": ["no", "yes"]}, None, 0.0, 0.0),
    ("direct", "direct", {}, None, 0.0, 0.0),
    ("uqtunknown", "uqtunknown", {"p": [0.8, 0.3]}, [0.3], 0.0, 0.0),
    ("uqtunknown-dk", "uqtunknown", {"p": [0.8, 0.3], "dont_know": 0.2}, [0.3], 0.0, 0.0),
    ("sld", "sld", {"p": [0.2, 0.8]}, [0.7], 0.0, 0.0),
    ("sld-dk", "sld", {"p": [0.2, 0.8], "dont_know": 0.2}, [0.7], 0.0, 0.0),
    ("sld+direct", "sld", {"p": [0.2, 0.8]}, [0.7], 0.0, 0.2),
    ("cdm", "cdm", {"p": [0.3, 0.7]}, None, 0.1, 0.0),
    ("cdm-dk", "cdm", {"p": [0.3, 0.7], "dont_know": 0.2}, None, 0.1, 0.0),
    ("cdmsym", "cdmsym", {"p": [0.2, 0.1, 0.1, 0.2]}, None, 0.1, 0.0),
    ("grr3", "grr", {"p": 0.7, "categories": ["a", "b", "c"]}, None, 0.0, 0.0),
    ("grr3-dk", "grr", {"p": 0.7, "categories": ["a", "b", "c"], "dont_know": 0.2}, None, 0.0,
     0.0),
    ("fr3", "fr", {"p": [0.1, 0.1, 0.1], "categories": ["a", "b", "c"]}, None, 0.0, 0.0),
]

PREDICTOR_CASES = [
    ("warner-gaussian", "warner", {"p": 0.8}, None, "gaussian"),
    ("warner-dk-binomial", "warner", {"p": 0.8, "dont_know": 0.2}, None, "binomial"),
    ("sld-dk-gaussian", "sld", {"p": [0.2, 0.8], "dont_know": 0.1}, [0.7], "gaussian"),
    ("uqtunknown-gaussian", "uqtunknown", {"p": [0.8, 0.3]}, [0.3], "gaussian"),
]


def _check(case: str, estimates: np.ndarray, ses: np.ndarray, truth: np.ndarray) -> None:
    spread = estimates.std(axis=0, ddof=1)
    bias_z = (estimates.mean(axis=0) - truth) / (spread / math.sqrt(len(estimates)))
    ratio = ses.mean(axis=0) / spread
    detail = f"{case}: bias in MC SE {np.round(bias_z, 2)}, mean SE / spread {np.round(ratio, 3)}"
    print(detail)
    assert np.all(np.abs(bias_z) < BIAS_TOLERANCE), detail
    assert np.all(np.abs(ratio - 1) < 0.10), detail


def _seed(case: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(case.encode()))


@pytest.mark.slow
@pytest.mark.parametrize(("case", "name", "parameters", "nuisance", "gamma", "direct"),
                         OUTCOME_CASES, ids=[c[0] for c in OUTCOME_CASES])
def test_logistic_regression_recovers_known_coefficients(case, name, parameters, nuisance,
                                                         gamma, direct):
    design = make_design(name, **parameters)
    k = len(design.category_labels)
    beta = np.array(BETA if k == 2 else [[0.2, -0.4], [0.8, -0.5], [-0.6, 0.3]])
    truth = list(beta.T.ravel()) if k > 2 else list(beta)
    if gamma:
        truth.append(gamma)
    truth += list(nuisance or [])
    grouped = len(design.group_names) > 1 or direct > 0
    rng = _seed(case)
    estimates, ses = [], []
    for _ in range(REPLICATIONS):
        frame = simulate_rows(design, n=ROWS, beta=beta, rng=rng, nuisance=nuisance,
                              gamma=gamma, direct_share=direct)
        fit = regress(frame, "rrt ~ x1 + x2", sensitive="rrt", design=design,
                      group="group" if grouped else None)
        assert fit.converged, case
        values = list(fit.params) + [v["estimate"] for v in fit.nuisance.values()]
        errors = list(fit.bse) + [v["se"] for v in fit.nuisance.values()]
        estimates.append(values)
        ses.append(errors)
    _check(case, np.array(estimates), np.array(ses), np.array(truth))


@pytest.mark.slow
@pytest.mark.parametrize(("case", "name", "parameters", "nuisance", "family"),
                         PREDICTOR_CASES, ids=[c[0] for c in PREDICTOR_CASES])
def test_sensitive_predictor_recovers_known_coefficients(case, name, parameters, nuisance,
                                                         family):
    design = make_design(name, **parameters)
    b, sigma = [1.0, 1.5, -0.5], 1.2
    truth = list(b) + [-0.3, 0.7]                   # outcome, then the true answer's model
    if family == "gaussian":
        truth.append(sigma)
    truth += list(nuisance or [])
    rng = _seed(case)
    estimates, ses = [], []
    for _ in range(REPLICATIONS):
        frame = simulate_rows(design, n=ROWS, beta=[-0.3, 0.7, 0.0], rng=rng,
                              nuisance=nuisance, outcome=(family, b, sigma))
        fit = regress(frame, "y ~ rrt + x1", sensitive="rrt", design=design, family=family,
                      sensitive_formula="~ x1",
                      group="group" if len(design.group_names) > 1 else None)
        assert fit.converged, case
        values = (list(fit.params) + list(fit.sensitive_params)
                  + [v["estimate"] for v in fit.nuisance.values()])
        errors = (list(fit.bse) + list(fit.sensitive_bse)
                  + [v["se"] for v in fit.nuisance.values()])
        estimates.append(values)
        ses.append(errors)
    _check(case, np.array(estimates), np.array(ses), np.array(truth))
