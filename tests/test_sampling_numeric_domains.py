"""A numeric question's mean and total under a complex sample, overall and per domain, with
the linearization and the jackknife, and mix_unknown's two-group estimator.

Reference values: R survey 4.1.1 (tests/reference/survey_api/numeric_domains.json, made by
tools/r_reference/survey_api_numeric_domains.R): svymean, svytotal and svyby on Eriksson's
unbiased transform of the api samples' answers (stratified, one-stage and two-stage
clusters, with and without fpc), the jackknife of as.svrepdesign(type = "auto"), and
mix_unknown's mean as svycontrast of svyby's group means, all to 1e-6 relative.

With an fpc, surveykit's linearization adds the randomization term sum w v (the scrambling
is as random when every unit is drawn; RRTCS's Estimator) that svymean does not have: the
tests take it off with the design's own per-answer variance and compare the rest.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from surveykit.designs.quantitative import Eriksson, MixUnknown
from surveykit.errors import ParameterError
from surveykit.sampling import SamplingDesign
from surveykit.sampling.numeric import NO_FPC_NOTE, survey_numeric_estimate
from surveykit.sampling.rows import design_rows

ROOT = Path(__file__).resolve().parent / "reference" / "survey_api"
REFERENCE = json.loads((ROOT / "numeric_domains.json").read_text(encoding="utf-8"))
SAMPLINGS = {
    "apistrat": SamplingDesign(weight="pw", strata="stype", fpc=("fpc",)),
    "apiclus1": SamplingDesign(weight="pw", clusters=("dnum",), fpc=("fpc",)),
    "apiclus2": SamplingDesign(weight="pw", clusters=("dnum", "snum"), fpc=("fpc1", "fpc2")),
}
NO_FPC = {
    "apistrat": SamplingDesign(weight="pw", strata="stype"),
    "apiclus1": SamplingDesign(weight="pw", clusters=("dnum",)),
    # without fpc survey's variance of a two-stage design is the first stage's (ultimate
    # clusters); surveykit checks the second stage's lonely units even then, so it is
    # declared with its first stage only
    "apiclus2": SamplingDesign(weight="pw", clusters=("dnum",)),
}
ERIKSSON_CASES = [(case["sample"], case["fpc"]) for case in REFERENCE["eriksson"]["cases"]]


def eriksson() -> Eriksson:
    spec = REFERENCE["eriksson"]
    return Eriksson(p=spec["p"], scrambler=spec["scrambler"], dont_know=spec["dont_know"])


def case_of(sample: str, fpc: bool) -> dict:
    return next(c for c in REFERENCE["eriksson"]["cases"]
                if c["sample"] == sample and c["fpc"] == fpc)


def eriksson_frame(sample: str) -> pd.DataFrame:
    frame = pd.read_csv(ROOT / f"numeric_answers_{sample}.csv", dtype={"answer": str})
    frame["by"] = np.where(frame["meals"] >= 50, "high", "low")
    return frame


def estimate(sample: str, fpc: bool, variance: str = "linearization"):
    frame = eriksson_frame(sample)
    sampling = (SAMPLINGS if fpc else NO_FPC)[sample]
    rows = design_rows(frame, sampling, keep_respondents=True)
    dont_know = (frame["answer"] == "dont_know").to_numpy()
    values = np.where(dont_know, np.nan, pd.to_numeric(frame["answer"], errors="coerce"))
    return frame, rows, survey_numeric_estimate(
        eriksson(), values, rows=rows, dont_know=dont_know, domains=frame["by"].tolist(),
        variance=variance)


def assert_replicate_domains(result, case: dict) -> None:
    """Each domain's mean and total, and their SEs, equal R's svyby to 1e-6, and each names
    the result's replicate method."""
    for i, label in enumerate(case["by_mean"]["domains"]):
        domain = result.domains[label]
        assert (domain.mean, domain.se) == pytest.approx(
            (case["by_mean"]["estimate"][i], case["by_mean"]["se"][i]), rel=1e-6)
        assert (domain.total, domain.total_se) == pytest.approx(
            (case["by_total"]["estimate"][i], case["by_total"]["se"][i]), rel=1e-6)
        assert domain.variance_method == result.variance_method


def randomization_terms(frame: pd.DataFrame, rows, inside: np.ndarray) -> tuple[float, float]:
    """What an fpc adds to the variance of the Hajek mean and of the total over ``inside``:
    sum w v / W^2 over the answers (v the unbiased estimate of Var(r | y)) and sum w v' over
    everyone (v' = (v + d (r^2 - v)) / (1 - d)^2 for an answer, 0 for "don't know")."""
    design = eriksson()
    d = REFERENCE["eriksson"]["dont_know"]
    answered = (frame["answer"] != "dont_know").to_numpy() & inside
    r = design.transform(frame.loc[answered, "answer"].astype(float).to_numpy())
    v = design.transform_variance(r)
    w = rows.weight[answered]
    v_prime = (v + d * (r ** 2 - v)) / (1 - d) ** 2
    return float(w @ v) / float(w.sum()) ** 2, float(w @ v_prime)


@pytest.mark.parametrize(("sample", "fpc"), ERIKSSON_CASES)
def test_mean_total_and_domains_equal_svymean_svytotal_svyby(sample, fpc):
    case = case_of(sample, fpc)["linearization"]
    frame, rows, result = estimate(sample, fpc)
    everyone = np.ones(len(frame), dtype=bool)
    mean_term, total_term = randomization_terms(frame, rows, everyone) if fpc else (0.0, 0.0)
    whole = result.estimate
    assert whole.mean == pytest.approx(case["mean"]["estimate"], rel=1e-9)
    assert whole.variance - mean_term == pytest.approx(case["mean"]["se"] ** 2, rel=1e-6)
    assert whole.total == pytest.approx(case["total"]["estimate"], rel=1e-9)
    assert whole.total_variance - total_term == pytest.approx(case["total"]["se"] ** 2,
                                                              rel=1e-6)
    assert sorted(result.domains) == case["by_mean"]["domains"] == case["by_total"]["domains"]
    for i, label in enumerate(case["by_mean"]["domains"]):
        inside = (frame["by"] == label).to_numpy()
        mean_term, total_term = randomization_terms(frame, rows, inside) if fpc else (0.0, 0.0)
        domain = result.domains[label]
        assert domain.mean == pytest.approx(case["by_mean"]["estimate"][i], rel=1e-9)
        assert domain.variance - mean_term == pytest.approx(case["by_mean"]["se"][i] ** 2,
                                                            rel=1e-6)
        assert domain.total == pytest.approx(case["by_total"]["estimate"][i], rel=1e-9)
        assert domain.total_variance - total_term == pytest.approx(
            case["by_total"]["se"][i] ** 2, rel=1e-6)
    assert result.variance_method == "linearization"
    assert result.df == rows.counts.degrees_of_freedom


@pytest.mark.parametrize(("sample", "fpc"), ERIKSSON_CASES)
def test_jackknife_equals_svrepdesign(sample, fpc):
    reference = case_of(sample, fpc)
    case = reference["jackknife"]
    _, _, result = estimate(sample, fpc, variance="jackknife")
    assert result.variance_method == reference["replicate_type"]
    whole = result.estimate
    assert (whole.mean, whole.total) == pytest.approx(
        (case["mean"]["estimate"], case["total"]["estimate"]), rel=1e-9)
    assert (whole.se, whole.total_se) == pytest.approx(
        (case["mean"]["se"], case["total"]["se"]), rel=1e-6)
    assert_replicate_domains(result, case)


MIX = REFERENCE["mix_unknown"]


def mix_frame(sample: str) -> pd.DataFrame:
    frame = pd.read_csv(ROOT / f"numeric_mix_unknown_{sample}.csv")
    frame["by"] = np.where(frame["meals"] >= 50, "high", "low")
    return frame


@pytest.mark.parametrize("case", MIX["cases"], ids=lambda c: c["sample"])
def test_mix_unknown_mean_equals_the_contrast_of_svyby_group_means(case):
    frame = mix_frame(case["sample"])
    rows = design_rows(frame, NO_FPC[case["sample"]], keep_respondents=True)
    result = survey_numeric_estimate(MixUnknown(p=MIX["p"]), frame["z"].to_numpy(),
                                     rows=rows, groups=frame["group"].tolist(),
                                     domains=frame["by"].tolist())
    assert result.estimate.mean == pytest.approx(case["mean"]["estimate"], rel=1e-9)
    assert result.estimate.se == pytest.approx(case["mean"]["se"], rel=1e-6)
    for label, expected in case["domains"].items():
        assert result.domains[label].mean == pytest.approx(expected["estimate"], rel=1e-9)
        assert result.domains[label].se == pytest.approx(expected["se"], rel=1e-6)
    assert result.estimate.notes == ()


def test_mix_unknown_total_is_the_weights_times_the_mean_with_its_linearized_variance():
    """Closed form on four respondents, each its own PSU, one stratum, with replacement:
    T = N_hat mu_hat, Var = n / (n - 1) sum (t_i - tbar)^2 with t_i = w_i (mu + N_hat u_i),
    u_i = c_g (z_i - m_g) / W_g."""
    frame = pd.DataFrame({"w": [1.0, 2.0, 3.0, 4.0, 2.0, 2.0]})
    z = np.array([1.0, 3.0, 2.0, 6.0, 4.0, 5.0])
    group = np.array([1, 1, 1, 2, 2, 2])
    rows = design_rows(frame, SamplingDesign(weight="w"), keep_respondents=True)
    p1, p2 = 0.8, 0.3
    result = survey_numeric_estimate(MixUnknown(p=[p1, p2]), z, rows=rows,
                                     groups=group.tolist()).estimate
    w = frame["w"].to_numpy()
    c = {1: (1 - p2) / (p1 - p2), 2: -(1 - p1) / (p1 - p2)}
    W = {g: w[group == g].sum() for g in (1, 2)}
    m = {g: (w[group == g] @ z[group == g]) / W[g] for g in (1, 2)}
    mu = c[1] * m[1] + c[2] * m[2]
    u = np.array([c[g] * (zi - m[g]) / W[g] for zi, g in zip(z, group, strict=True)])
    N = w.sum()
    t = w * (mu + N * u)
    assert result.mean == pytest.approx(mu, rel=1e-12)
    assert result.total == pytest.approx(N * mu, rel=1e-12)
    assert result.total_variance == pytest.approx(6 / 5 * np.sum((t - t.mean()) ** 2),
                                                  rel=1e-12)
    assert result.variance == pytest.approx(6 / 5 * np.sum((w * u - (w * u).mean()) ** 2),
                                            rel=1e-12)


def test_mix_unknown_with_an_fpc_leaves_the_fpc_out_and_says_so():
    frame = mix_frame("apistrat")
    with_fpc = design_rows(frame, SAMPLINGS["apistrat"], keep_respondents=True)
    without = design_rows(frame, NO_FPC["apistrat"], keep_respondents=True)
    args = dict(groups=frame["group"].tolist())
    design = MixUnknown(p=MIX["p"])
    result = survey_numeric_estimate(design, frame["z"].to_numpy(), rows=with_fpc, **args)
    plain = survey_numeric_estimate(design, frame["z"].to_numpy(), rows=without, **args)
    assert result.estimate.variance == pytest.approx(plain.estimate.variance, rel=1e-12)
    assert result.estimate.notes == (NO_FPC_NOTE.format(model="mix_unknown"),)


def test_an_unknown_variance_method_is_refused_with_the_allowed_ones():
    frame = eriksson_frame("apistrat")
    rows = design_rows(frame, NO_FPC["apistrat"], keep_respondents=True)
    with pytest.raises(ParameterError, match=r"variance \('taylor'\) must be one of "
                                             r"linearization, "):
        survey_numeric_estimate(eriksson(), np.ones(len(frame)), rows=rows, variance="taylor")


@pytest.mark.parametrize("case", REFERENCE["bootstrap"]["cases"], ids=lambda c: c["sample"])
def test_producer_replicate_weights_equal_svrepdesign(case):
    """survey's bootstrap weights given as the producer's (variance = "replicates")."""
    from surveykit.sampling import ReplicateWeights

    frame = eriksson_frame(case["sample"])
    weights = pd.read_csv(ROOT / case["replicate_weights"])
    frame = pd.concat([frame, weights], axis=1)
    spec = ReplicateWeights(type="bootstrap", pattern="rep*", scale=case["scale"],
                            rscales=tuple(case["rscales"]), mse=case["mse"])
    base = SAMPLINGS[case["sample"]]
    sampling = SamplingDesign(weight=base.weight, strata=base.strata, clusters=base.clusters,
                              fpc=base.fpc, replicate_weights=spec)
    rows = design_rows(frame, sampling, keep_respondents=True)
    dont_know = (frame["answer"] == "dont_know").to_numpy()
    values = np.where(dont_know, np.nan, pd.to_numeric(frame["answer"], errors="coerce"))
    result = survey_numeric_estimate(eriksson(), values, rows=rows, dont_know=dont_know,
                                     domains=frame["by"].tolist(), variance="replicates")
    assert result.variance_method == "replicates (bootstrap)"
    whole = result.estimate
    assert (whole.mean, whole.se) == pytest.approx(
        (case["mean"]["estimate"], case["mean"]["se"]), rel=1e-6)
    assert (whole.total, whole.total_se) == pytest.approx(
        (case["total"]["estimate"], case["total"]["se"]), rel=1e-6)
    assert_replicate_domains(result, case)


@pytest.mark.parametrize("case", MIX["regression"], ids=lambda c: c["sample"])
def test_mix_unknown_as_a_regression_outcome_equals_svyglm_of_its_group_system(case):
    from surveykit.sampling import survey_linear_regress

    frame = mix_frame(case["sample"])
    fit = survey_linear_regress(frame, "z ~ meals", scrambled="z",
                                design=MixUnknown(p=MIX["p"]), group="group",
                                sampling=NO_FPC[case["sample"]])
    assert fit.params.index.tolist() == case["terms"][:2]   # theta is part "unrelated"
    assert fit.params.to_numpy() == pytest.approx(case["coefficients"][:2], rel=1e-6)
    assert fit.bse.to_numpy() == pytest.approx(case["se"][:2], rel=1e-6)
    assert fit.x == pytest.approx(case["coefficients"], rel=1e-6)
    assert np.sqrt(np.diag(fit.covariance)) == pytest.approx(case["se"], rel=1e-6)
    unrelated = [p for p in fit.to_dict()["coefficients"] if p["part"] == "unrelated"]
    assert [p["term"] for p in unrelated] == ["(unrelated mean)"]


def test_mix_unknown_as_a_predictor_or_without_its_groups_is_refused():
    from surveykit.sampling import survey_linear_regress

    frame = mix_frame("apistrat")
    with pytest.raises(ParameterError, match="cannot be a predictor .* use it as the outcome"):
        survey_linear_regress(frame, "meals ~ z", scrambled="z", design=MixUnknown(p=MIX["p"]),
                              group="group", sampling=NO_FPC["apistrat"])
    with pytest.raises(ParameterError, match="has 2 groups; give the column of each "):
        survey_linear_regress(frame, "z ~ meals", scrambled="z", design=MixUnknown(p=MIX["p"]),
                              sampling=NO_FPC["apistrat"])
