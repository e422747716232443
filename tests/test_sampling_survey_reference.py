"""The direct question under survey's api designs equals R's survey 4.1-1 to 1e-6: means,
totals, domains (svyby), design effects, degrees of freedom and svyciprop's intervals, under
linearization (one stage, stratified, two stages with fpc), JK1/JKn and BRR/Fay made from the
PSUs, the producer's replicate weights (BRR, bootstrap, JK1) and every lonely-PSU option.

Reference values: tests/reference/survey_api/*.json, made by tools/r_reference/survey_api.R
(provenance in each file). "direct" is surveykit's direct-question design, whose
pseudo-maximum-likelihood estimate is the weighted proportion svymean computes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sampling_support import (
    DESIGNS,
    REFERENCE,
    pairs_sample,
    reference,
    sample,
    statistic,
    with_replicates,
)

from surveykit.designs.registry import make_design
from surveykit.errors import EstimationError, ParameterError
from surveykit.sampling import ReplicateWeights, SamplingDesign, survey_estimate, weighted_counts
from surveykit.sampling.replicates import brr, jackknife

DIRECT = make_design("direct")
TOLERANCE = 1e-6


def close(value, expected, tolerance=TOLERANCE):
    return value == pytest.approx(expected, rel=tolerance, abs=tolerance * 1e-3)


def _estimate(name: str, variance: str = "linearization", **kw):
    data, design = DESIGNS[name]
    counts = weighted_counts(sample(data), design, design=DIRECT, answer="awards_yes",
                             domain="stype", keep_respondents=variance != "linearization")
    return survey_estimate(DIRECT, counts, variance=variance, **kw)


@pytest.mark.parametrize("name", list(DESIGNS))
def test_mean_total_deff_and_df_equal_survey(name):
    e = _estimate(name)
    mean = statistic(name, "mean")
    total = statistic(name, "total")
    assert close(e.estimate, mean["estimate"]["awards_yes"])
    assert close(e.se, mean["se"]["awards_yes"])
    assert close(e.deff(), mean["deff"]["awards_yes"])
    assert close(e.n_effective(), e.n / mean["deff"]["awards_yes"])
    assert close(e.total(), total["estimate"]["awards_yes"])
    assert close(e.total_se(), total["se"]["awards_yes"])
    assert e.df == statistic(name, "degrees of freedom") == reference(name)["summary"]["degf"]
    assert e.n == reference(name)["summary"]["n"]
    assert close(e.sum_weights, reference(name)["summary"]["sum_weights"])


@pytest.mark.parametrize("name", list(DESIGNS))
def test_domains_keep_the_full_design_as_svyby(name):
    e = _estimate(name)
    means = statistic(name, "domain means by stype")
    totals = statistic(name, "domain totals by stype")
    assert {d.domain for d in e.domains} == {"E", "H", "M"}
    for d in e.domains:
        key = f"{d.domain}:awards_yes"
        assert close(d.estimate, means["estimate"][key])
        assert close(d.se, means["se"][key])
        assert close(d.total(), totals["estimate"][key])
        assert close(d.total_se(), totals["se"][key])


@pytest.mark.parametrize("name", list(DESIGNS))
@pytest.mark.parametrize(("method", "label"), [("logit", "svyciprop logit"),
                                               ("beta", "svyciprop beta"),
                                               ("wald", "svyciprop mean")])
def test_intervals_equal_svyciprop(name, method, label):
    e = _estimate(name)
    expected = statistic(name, label)
    low, high = e.confidence_interval(0.95, method)
    assert close(low, expected["ci_low"]) and close(high, expected["ci_high"])


@pytest.mark.parametrize("name", list(DESIGNS))
def test_to_dict_carries_the_issue_keys(name):
    data = _estimate(name).to_dict()
    for key in ("estimate", "se", "ci_low", "ci_high", "deff", "n_effective", "total",
                "total_se", "variance_method", "domains"):
        assert key in data, key
    assert data["estimate"] == data["pi_mle"]
    assert data["variance_method"] == "linearization"
    assert sorted(d["domain"] for d in data["domains"]) == ["E", "H", "M"]
    mean = statistic(name, "mean")
    assert close(data["se"], mean["se"]["awards_yes"])
    assert data["psus"] - data["strata"] == data["df"]


@pytest.mark.parametrize(("name", "base"), [("dstrat_jkn", "dstrat"), ("dclus1_jk1", "dclus1"),
                                            ("dclus2_jk1", "dclus2")])
def test_jackknife_made_from_the_psus_equals_as_svrepdesign(name, base):
    e = _estimate(base, "jackknife")
    mean = statistic(name, "mean")
    total = statistic(name, "total")
    summary = reference(name)["summary"]
    assert e.variance_method == summary["type"]
    assert e.replicates == summary["replicates"]
    assert e.df == summary["degf"]
    assert close(e.estimate, mean["estimate"]["awards_yes"])
    assert close(e.se, mean["se"]["awards_yes"])
    assert close(e.deff(), mean["deff"]["awards_yes"])
    assert close(e.total_se(), total["se"]["awards_yes"])
    by = statistic(name, "domain means by stype")
    for d in e.domains:
        assert close(d.se, by["se"][f"{d.domain}:awards_yes"])


@pytest.mark.parametrize(("name", "base"), [("dclus1_jk1", "dclus1"), ("dclus2_jk1", "dclus2")])
def test_jackknife_replicate_weights_are_surveys(name, base):
    data, design = DESIGNS[base]
    counts = weighted_counts(sample(data), design, design=DIRECT, answer="awards_yes",
                             keep_respondents=True)
    replicates = jackknife(counts)
    stored = pd.read_csv(REFERENCE / f"{name}_repweights.csv")
    # one cell per school here (every school answered), so cells are rows after sorting
    frame = sample(data)
    psu = frame[design.clusters[0]].astype(str).map(
        {label: k for k, label in enumerate(counts.unit_labels[0])}).to_numpy()
    weights = stored["sampling_weight"].to_numpy()
    factors = replicates.factors[np.searchsorted(replicates.psus, psu)]
    expected = stored[[f"rep{r + 1}" for r in range(replicates.count)]].to_numpy()
    assert np.allclose(weights[:, None] * factors, expected, rtol=1e-12, atol=1e-9)
    assert close(replicates.scale, reference(name)["summary"]["scale"], 1e-12)


def _pairs_counts():
    design = SamplingDesign(weight="pw", strata="pair", clusters=("snum",))
    return weighted_counts(pairs_sample(), design, design=DIRECT, answer="awards_yes")


@pytest.mark.parametrize(("name", "kw"), [("dpairs_lin", {}), ("dpairs_brr", {"variance": "brr"}),
                                          ("dpairs_fay", {"variance": "brr", "rho": 0.3})])
def test_brr_and_fay_made_from_pairs_equal_survey(name, kw):
    e = survey_estimate(DIRECT, _pairs_counts(), **kw)
    mean = statistic(name, "mean")
    total = statistic(name, "total")
    assert close(e.estimate, mean["estimate"]["awards_yes"])
    assert close(e.se, mean["se"]["awards_yes"])
    assert close(e.total_se(), total["se"]["awards_yes"])
    assert e.df == reference(name)["summary"]["degf"]
    if kw:
        assert e.replicates == reference(name)["summary"]["replicates"]
        assert close(brr(_pairs_counts(), kw.get("rho", 0.0)).scale,
                     reference(name)["summary"]["scale"], 1e-12)


def test_brr_replicate_weights_are_surveys_paley_matrix():
    counts = _pairs_counts()
    replicates = brr(counts)
    frame = pairs_sample()
    stored = pd.read_csv(REFERENCE / "dpairs_brr_repweights.csv")
    psu = frame["snum"].astype(str).map(
        {label: k for k, label in enumerate(counts.unit_labels[0])}).to_numpy()
    factors = replicates.factors[np.searchsorted(replicates.psus, psu)]
    expected = stored[[f"rep{r + 1}" for r in range(replicates.count)]].to_numpy()
    assert np.allclose(frame["pw"].to_numpy()[:, None] * factors, expected, rtol=1e-12)


@pytest.mark.parametrize(("name", "data", "type_"), [
    ("dpairs_brr", "pairs", "BRR"), ("dstrat_boot", "apistrat", "bootstrap"),
    ("dclus1_boot", "apiclus1", "bootstrap"), ("dclus2_boot", "apiclus2", "bootstrap"),
    ("dclus1_jk1", "apiclus1", "JK1"), ("dclus2_jk1", "apiclus2", "JK1")])
def test_producer_replicate_weights_equal_svrepdesign(name, data, type_):
    frame = pairs_sample() if data == "pairs" else sample(data)
    frame = with_replicates(frame, f"{name}_repweights.csv")
    summary = reference(name)["summary"]
    spec = ReplicateWeights(type=type_, pattern="rep*", scale=summary["scale"],
                            rscales=tuple(summary["rscales"]))
    design = SamplingDesign(weight="full_weight", replicate_weights=spec)
    counts = weighted_counts(frame, design, design=DIRECT, answer="awards_yes", domain="stype")
    e = survey_estimate(DIRECT, counts, variance="replicates")
    mean = statistic(name, "mean")
    assert e.variance_method == f"replicates ({type_})"
    assert e.df == summary["degf"]
    assert close(e.estimate, mean["estimate"]["awards_yes"])
    assert close(e.se, mean["se"]["awards_yes"])
    assert close(e.deff(), mean["deff"]["awards_yes"])
    assert close(e.total_se(), statistic(name, "total")["se"]["awards_yes"])
    by = statistic(name, "domain means by stype")
    for d in e.domains:
        assert close(d.se, by["se"][f"{d.domain}:awards_yes"])


def test_default_replicate_scales_are_svrepdesigns():
    assert ReplicateWeights(type="BRR", pattern="r*").factors(4) == (0.25, (1.0,) * 4)
    assert ReplicateWeights(type="JK1", pattern="r*").factors(5)[0] == pytest.approx(0.8)
    assert ReplicateWeights(type="bootstrap", pattern="r*").factors(51)[0] == pytest.approx(0.02)
    assert ReplicateWeights(type="Fay", pattern="r*", rho=0.5).factors(4)[0] == pytest.approx(1.0)


def _lonely_data(certain: bool) -> pd.DataFrame:
    lonely = reference("lonely_psu")
    frame = sample("apistrat")
    frame["stratum"] = frame["stype"]
    frame.loc[lonely["lonely_row"] - 1, "stratum"] = "H-lonely"
    if certain:
        frame.loc[frame["stratum"] == "H-lonely", "fpc"] = 1
    return frame


def _lonely_case(option: str, design: str) -> dict:
    cases = [c for c in reference("lonely_psu")["cases"]
             if c["option"] == option and c["design"] == design]
    assert len(cases) == 1
    return {s["label"]: s for s in cases[0]["statistics"]}


@pytest.mark.parametrize("option", ["certainty", "adjust", "average", "remove"])
@pytest.mark.parametrize("design_name", ["dlonely", "dcertain"])
def test_lonely_psu_options_equal_survey(option, design_name):
    frame = _lonely_data(design_name == "dcertain")
    design = SamplingDesign(weight="pw", strata="stratum", fpc=("fpc",), lonely_psu=option)
    counts = weighted_counts(frame, design, design=DIRECT, answer="awards_yes", domain="stype")
    e = survey_estimate(DIRECT, counts)
    case = _lonely_case(option, design_name)
    mean = case["mean"]["value"]
    assert close(e.estimate, mean["estimate"]["awards_yes"])
    assert close(e.se, mean["se"]["awards_yes"])
    assert close(e.total_se(), case["total"]["value"]["se"]["awards_yes"])
    by = case["domain means by stype"]["value"]
    for d in e.domains:
        assert close(d.se, by["se"][f"{d.domain}:awards_yes"])
    assert e.df == case["degrees of freedom"]["value"]


def test_a_lonely_psu_under_fail_is_refused_at_the_door_naming_the_stratum():
    frame = _lonely_data(certain=False)
    design = SamplingDesign(weight="pw", strata="stratum", fpc=("fpc",))
    with pytest.raises(ParameterError) as error:
        weighted_counts(frame, design, design=DIRECT, answer="awards_yes")
    message = str(error.value)
    assert "stratum stratum = 'H-lonely' has only one PSU" in message
    assert "\n" not in message
    assert _lonely_case("fail", "dlonely")["mean"]["error"] == \
        "Stratum (H-lonely) has only one PSU at stage 1"


def test_a_certainty_stratum_is_no_lonely_psu_under_fail():
    frame = _lonely_data(certain=True)
    design = SamplingDesign(weight="pw", strata="stratum", fpc=("fpc",))
    counts = weighted_counts(frame, design, design=DIRECT, answer="awards_yes")
    e = survey_estimate(DIRECT, counts)
    assert close(e.se, _lonely_case("fail", "dcertain")["mean"]["value"]["se"]["awards_yes"])


def test_jackknife_refuses_brr_without_pairs():
    data, design = DESIGNS["dstrat"]
    counts = weighted_counts(sample(data), design, design=DIRECT, answer="awards_yes",
                             keep_respondents=True)
    with pytest.raises(EstimationError, match="BRR needs two PSUs per stratum"):
        survey_estimate(DIRECT, counts, variance="brr")


def test_replicates_from_psus_need_the_respondents_when_there_are_no_clusters():
    data, design = DESIGNS["dstrat"]
    counts = weighted_counts(sample(data), design, design=DIRECT, answer="awards_yes")
    with pytest.raises(ParameterError, match="keep_respondents=True"):
        survey_estimate(DIRECT, counts, variance="jackknife")


def test_cells_per_stratum_give_the_same_variance_as_cells_per_respondent():
    data, design = DESIGNS["dstrat"]
    frame = sample(data)
    aggregated = weighted_counts(frame, design, design=DIRECT, answer="awards_yes",
                                 domain="stype")
    per_school = weighted_counts(frame, design, design=DIRECT, answer="awards_yes",
                                 domain="stype", keep_respondents=True)
    assert aggregated.weight.size < 20 < per_school.weight.size
    a, b = survey_estimate(DIRECT, aggregated), survey_estimate(DIRECT, per_school)
    assert a.se == pytest.approx(b.se, rel=1e-12)
    assert a.total_se() == pytest.approx(b.total_se(), rel=1e-12)
    for x, y in zip(a.domains, b.domains, strict=True):
        assert x.se == pytest.approx(y.se, rel=1e-12)
