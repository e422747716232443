"""Numeric-answer designs against R: RRTCS 0.0.4's quantitative models on their bundled data
sets, and RRreg 0.7.5's continuous designs on seeded data (tests/reference/, made by
tools/r_reference/rrtcs.R and rrreg_continuous.R; R does not run here).

Every number is matched to 1e-6 relative (the fixtures carry 15 significant digits). RRTCS's
own variance formulas are reproduced through the estimators' options (``randomization_variance
= "plug_in"``, ``sampling = "srswor_rrtcs"``) and its sampling-variance estimators through the
complex-sample boundary (:class:`SamplingVariance`): Deville's approximation
(``sampling::varest``) and the Taylor variance of a ratio with joint inclusion probabilities
(``sampling::vartaylor_ratio``) are written out below from the fixture's
``variance_formula`` and the sampling package's source; they are R's estimators, not
surveykit's, and serve only to show that the boundary carries RRTCS's numbers exactly.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest

from surveykit.designs import make_design
from surveykit.estimation.quantitative import (
    SamplingVariance,
    estimate_mean_from_answers,
    linearize,
)

REFERENCE = Path(__file__).resolve().parent / "reference"
RRTCS = REFERENCE / "rrtcs"
RRREG = REFERENCE / "rrreg"
RELATIVE = 1e-6


def close(actual: float, expected: float, tolerance: float = RELATIVE) -> bool:
    return abs(actual - expected) <= tolerance * abs(expected)


def read_csv(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(path.read_text(encoding="utf-8").splitlines()))


def rrtcs_case(function: str) -> tuple[dict, dict, np.ndarray, np.ndarray]:
    data = json.loads((RRTCS / f"{function}.json").read_text(encoding="utf-8"))
    (case,) = data["cases"]
    arguments = case["arguments"]
    rows = read_csv(RRTCS / "data" / f"{arguments['z']['data_set']}.csv")
    z = np.array([float(row[arguments["z"]["column"]]) for row in rows])
    pi = np.array([float(row[arguments["pi"]["column"]]) for row in rows])
    assert z.size == case["n"]
    return arguments, case["result"], z, pi


def deville_varest(values: np.ndarray, weights: np.ndarray) -> float:
    """sampling::varest(Ys, pik = 1 / weights): Deville's approximation (fixture's formula)."""
    pik = 1 / weights
    a = (1 - pik) / np.sum(1 - pik)
    big_a = np.sum(a * values / pik)
    return float(np.sum((1 - pik) * (values / pik - big_a) ** 2) / (1 - np.sum(a ** 2)))


def vartaylor_ratio_estvar(pij: np.ndarray):
    """sampling::vartaylor_ratio(Ys, rep(1, n), pij)$estvar, as RRTCS calls it."""
    def of_sum(values: np.ndarray, weights: np.ndarray) -> float:
        pik = np.diag(pij)
        xhat = np.sum(1 / pik)
        ratio = np.sum(values / pik) / xhat
        z = (values - ratio) / xhat
        delta = (1 - np.outer(pik, pik) / pij) * np.outer(z, z) / np.outer(pik, pik)
        np.fill_diagonal(delta, (1 - pik) * z ** 2 / pik ** 2)
        return float(delta.sum())
    return of_sum


DESIGNS = {
    "Eriksson": lambda a: make_design("eriksson", p=a["p"], mu=a["mu"], sigma=a["sigma"]),
    "EichhornHayre": lambda a: make_design("eichhorn_hayre", mu=a["mu"], sigma=a["sigma"]),
    "BarLev": lambda a: make_design("bar_lev", p=a["p"], mu=a["mu"], sigma=a["sigma"]),
    "ChaudhuriChristofides": lambda a: make_design("chaudhuri_christofides", mu=a["mu"],
                                                   sigma=a["sigma"]),
    "DianaPerri1": lambda a: make_design("diana_perri_1", p=a["p"], mu=a["mu"]),
    "DianaPerri2": lambda a: make_design("diana_perri_2", beta=a["beta"], mu=a["mu"]),
    "Saha": lambda a: make_design("saha", mu=a["mu"], sigma=a["sigma"]),
}


@pytest.mark.parametrize("function", sorted(DESIGNS))
def test_every_rrtcs_quantitative_model_transforms_each_answer_as_rrtcs(function):
    arguments, result, z, _ = rrtcs_case(function)
    design = DESIGNS[function](arguments)
    r = design.transform(z)
    expected = np.array(result["transformed_variable"])
    assert np.allclose(r, expected, rtol=RELATIVE, atol=RELATIVE * np.abs(expected).max())
    if result.get("transformed_variance") is not None:
        vr = design.transform_variance(r, "plug_in")
        assert np.allclose(vr, result["transformed_variance"], rtol=RELATIVE, atol=0)


def test_eriksson_mean_with_n_is_rrtcs_estimator_with_deville_variance():
    arguments, result, z, pi = rrtcs_case("Eriksson")
    design = DESIGNS["Eriksson"](arguments)
    plan = SamplingVariance(of_sum=deville_varest, with_replacement=False)
    e = estimate_mean_from_answers(design, z, weights=1 / pi, population_size=arguments["N"],
                                   sampling_variance=plan, randomization_variance="plug_in")
    assert close(e.mean, result["estimate"])
    assert close(e.variance, result["variance"])
    low, high = e.confidence_interval(arguments["cl"])
    assert close(low, result["ci_low"]) and close(high, result["ci_high"])
    # ours (the unbiased randomization variance) is shown beside it: RRTCS's less
    # sum(w (vr_plug_in - vr_unbiased)) / N^2
    ours = estimate_mean_from_answers(design, z, weights=1 / pi, population_size=arguments["N"],
                                      sampling_variance=plan)
    assert close(ours.alternatives["plug_in"], result["variance"])
    r = design.transform(z)
    excess = np.sum((design.transform_variance(r, "plug_in") - design.transform_variance(r))
                    / pi) / arguments["N"] ** 2
    assert excess > 0
    assert close(ours.variance, result["variance"] - excess, 1e-12)


def test_eichhorn_hayre_mean_is_rrtcs_estimate_with_its_population_size():
    arguments, result, z, pi = rrtcs_case("EichhornHayre")
    design = DESIGNS["EichhornHayre"](arguments)
    # RRTCS: mean = sum(r / pi) / N with N = round(sum(1 / pi)); no variance without N or pij
    e = estimate_mean_from_answers(design, z, weights=1 / pi,
                                   population_size=round(float(np.sum(1 / pi))))
    assert close(e.mean, result["estimate"])
    assert result["variance"] is None


def test_bar_lev_total_is_rrtcs_horvitz_thompson_total_and_variance():
    arguments, result, z, pi = rrtcs_case("BarLev")
    design = DESIGNS["BarLev"](arguments)
    plan = SamplingVariance(of_sum=deville_varest, with_replacement=False)
    e = estimate_mean_from_answers(design, z, weights=1 / pi, sampling_variance=plan,
                                   randomization_variance="plug_in")
    assert result["type"] == "total"
    assert close(e.total, result["estimate"])
    assert close(e.total_variance, result["variance"])
    assert close(e.total_interval(0.95).low, result["ci_low"])
    # the randomization term is sum(vr / pi), the rest Deville's estimator of r's total
    lin = linearize(design, z, weights=1 / pi, randomization_variance="plug_in")
    assert close(lin.total, result["estimate"])
    assert close(lin.randomization_term + deville_varest(lin.r, lin.weights), result["variance"])


def test_chaudhuri_christofides_mean_is_rrtcs_with_joint_inclusion_probabilities():
    arguments, result, z, pi = rrtcs_case("ChaudhuriChristofides")
    design = DESIGNS["ChaudhuriChristofides"](arguments)
    rows = read_csv(RRTCS / "data" / "ChaudhuriChristofidesDatapij.csv")
    pij = np.array([[float(x) for x in row.values()] for row in rows])
    assert pij.shape == (z.size, z.size) and np.allclose(np.diag(pij), pi)
    N = round(float(np.sum(1 / pi)))
    plan = SamplingVariance(of_sum=vartaylor_ratio_estvar(pij), with_replacement=False)
    e = estimate_mean_from_answers(design, z, weights=1 / pi, population_size=N,
                                   sampling_variance=plan, randomization_variance="plug_in")
    assert close(e.mean, result["estimate"])
    assert close(e.variance, result["variance"])
    # RRTCS divides vartaylor_ratio's estvar, already the variance of a mean, by N^2 again:
    # its sampling part is negligible (docs/designs.md, "chaudhuri_christofides")
    lin = linearize(design, z, weights=1 / pi, randomization_variance="plug_in")
    sampling_part = vartaylor_ratio_estvar(pij)(lin.r, lin.weights)
    assert sampling_part / N ** 2 < 1e-3 * result["variance"]
    assert sampling_part > result["variance"]


@pytest.mark.parametrize("function", ["DianaPerri1", "DianaPerri2", "Saha"])
def test_diana_perri_and_saha_match_rrtcs_srs_formulas(function):
    arguments, result, z, pi = rrtcs_case(function)
    design = DESIGNS[function](arguments)
    method = arguments.get("method", "srswr")
    N = arguments["N"]
    assert np.allclose(pi, z.size / N, rtol=1e-12)     # simple random samples
    e = estimate_mean_from_answers(design, z, population_size=N,
                                   sampling="srswor_rrtcs" if method == "srswor" else "srswr")
    assert close(e.mean, result["estimate"])
    assert close(e.variance, result["variance"])
    assert close(e.confidence_interval(arguments["cl"]).high, result["ci_high"])


def test_diana_perri_2_our_srswor_variance_adds_the_randomization_term():
    arguments, result, z, _ = rrtcs_case("DianaPerri2")
    # RRTCS's example states no sd of W and U; with the sds of its scramblers (the example's
    # mu are those of W uniform on [5/6, 5/4], U uniform on [0, 10/3]: our assumption,
    # stated here) surveykit's srswor adds f * vbar / n
    design = make_design("diana_perri_2", beta=arguments["beta"], mu=arguments["mu"],
                         sigma=[(5 / 4 - 5 / 6) / math.sqrt(12), (10 / 3) / math.sqrt(12)],
                         scrambler="uniform")
    ours = estimate_mean_from_answers(design, z, population_size=arguments["N"],
                                      sampling="srswor")
    assert close(ours.alternatives["srswor_rrtcs"], result["variance"])
    f = z.size / arguments["N"]
    r = design.transform(z)
    vbar = float(np.mean(design.transform_variance(r)))
    assert close(ours.variance, result["variance"] + f * vbar / z.size, 1e-12)


# -- RRreg ----------------------------------------------------------------------------------


def rrreg_continuous() -> dict:
    return json.loads((RRREG / "rruni_continuous.json").read_text(encoding="utf-8"))


def rrreg_data(name: str) -> dict[str, np.ndarray]:
    rows = read_csv(RRREG / name)
    return {key: np.array([float(row[key]) for row in rows]) for key in rows[0]}


@pytest.mark.parametrize(("model", "file", "design"), [
    ("mix.norm", "rruni_mix_norm.csv", lambda: make_design("mix_norm", p=0.7, mu=40, sigma=15)),
    ("mix.exp", "rruni_mix_exp.csv", lambda: make_design("mix_exp", p=0.7, mu=10)),
])
def test_rrreg_mixtures_match_rrreg_formula_with_pt_bound(model, file, design):
    reference = rrreg_continuous()["rruni"][model]
    # RRreg 0.7.5 itself stops (an unbound 'pt'); the fixture keeps its formula run with pt = p[1]
    assert reference["error"] == "non-numeric argument to binary operator"
    fixed = reference["rrreg_formula_with_pt_bound"]
    e = estimate_mean_from_answers(design(), rrreg_data(file)["response"])
    assert close(e.mean, fixed["pi"])
    assert close(e.se, fixed["piSE_intended"])


def test_rrreg_mix_unknown_matches_rruni():
    reference = rrreg_continuous()["rruni"]["mix.unknown"]["result"]
    data = rrreg_data("rruni_mix_unknown.csv")
    e = estimate_mean_from_answers(make_design("mix_unknown", p=[0.8, 0.3]), data["response"],
                                   groups=data["group"].astype(int))
    assert close(e.mean, reference["pi"])
    assert close(e.se, reference["piSE"])
    assert close(e.unrelated_mean, reference["piUQ"])
    assert close(e.unrelated_se, reference["piUQSE"])
    assert e.n == reference["n"]
