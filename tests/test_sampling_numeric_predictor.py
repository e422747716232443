"""A numeric question as a predictor under a complex sample: the weighted method-of-moments
correction (Fuller 1987) with the design-based sandwich.

Oracles: the point estimate is fit_linear's weighted corrected estimate exactly (the same
estimating equations); with every respondent its own PSU, one stratum and no fpc the
linearization of the estimating equations (which sum to 0) is n / (n - 1) times White's HC0
sandwich A^-1 (sum psi psi') A^-1, computed here from the equations written out; and a
seeded simulation: the corrected slope is unbiased where least squares on the transform is
attenuated.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from surveykit.designs.quantitative import Additive
from surveykit.estimation.quantitative_regression import fit_linear
from surveykit.sampling import SamplingDesign, survey_linear_regress

DESIGN = Additive(mu=0, sigma=20, scrambler="normal")


def sample(seed: int, n: int = 600) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    income = rng.uniform(20, 60, n)
    return pd.DataFrame({
        "income": DESIGN.simulate(income, rng=rng).answers,
        "age": rng.uniform(20, 70, n),
        "satisfaction": 2.0 + 0.5 * income + rng.normal(0, 3, n),
        "psu": np.repeat(np.arange(n // 6), 6),
        "w": np.repeat(rng.uniform(1, 4, n // 6), 6)})


def test_predictor_estimate_is_the_weighted_correction_with_the_closed_form_sandwich():
    frame = sample(5)
    fit = survey_linear_regress(frame, "satisfaction ~ income + age", scrambled="income",
                                design=DESIGN, sampling=SamplingDesign(weight="w"))
    srs = fit_linear(frame, "satisfaction ~ income + age", design=DESIGN, scrambled="income",
                     weights="w", cov_type="HC0")
    assert fit.params.to_numpy() == pytest.approx(srs.params.to_numpy(), rel=1e-12)
    # the estimating equations written out: psi_i = w_i (x_i (y_i - x_i'b) + v_i b_j e_j)
    w = frame["w"].to_numpy()
    r = DESIGN.transform(frame["income"].to_numpy())
    v = DESIGN.transform_variance(r)
    X = np.column_stack([np.ones(len(frame)), r, frame["age"]])
    y = frame["satisfaction"].to_numpy()
    A = X.T @ (w[:, None] * X)
    A[1, 1] -= w @ v
    b = np.linalg.solve(A, X.T @ (w * y))
    psi = (w * (y - X @ b))[:, None] * X
    psi[:, 1] += w * v * b[1]
    assert np.abs(psi.sum(axis=0)).max() < 1e-6 * np.abs(psi).sum()
    inverse = np.linalg.inv(A)
    n = len(frame)
    expected = n / (n - 1) * inverse @ psi.T @ psi @ inverse
    assert fit.params.to_numpy() == pytest.approx(b, rel=1e-10)
    assert np.asarray(fit.covariance) == pytest.approx(expected, rel=1e-9)
    assert np.asarray(fit.covariance) == pytest.approx(
        srs.covariance.to_numpy() * n / (n - 1), rel=1e-9)


@pytest.mark.slow
def test_clustered_predictor_slope_is_unbiased_where_the_plain_transform_is_attenuated():
    """100 seeded samples of 3,000 in 500 clusters: the corrected slope's mean lies within 3
    standard errors (of the mean over the samples) of 0.5 (a ratio's O(1/n) bias is below
    that at this n; at n = 600 it is 3.5 standard errors); least squares on the transform
    is attenuated by Var(x) / (Var(x) + 400) = 0.25 (x ~ U(20, 60): Var 133.3)."""
    slopes, naive = [], []
    sampling = SamplingDesign(weight="w", clusters=("psu",))
    for seed in range(100):
        frame = sample(1000 + seed, n=3000)
        fit = survey_linear_regress(frame, "satisfaction ~ income", scrambled="income",
                                    design=DESIGN, sampling=sampling)
        slopes.append(float(fit.params["income"]))
        r = DESIGN.transform(frame["income"].to_numpy())
        naive.append(float(np.polyfit(r, frame["satisfaction"], 1)[0]))
    slopes = np.array(slopes)
    assert abs(slopes.mean() - 0.5) < 3 * slopes.std(ddof=1) / np.sqrt(slopes.size)
    assert np.mean(naive) == pytest.approx(0.5 * 133.33 / (133.33 + 400), rel=0.1)
