"""docs/from-r.md stays true: its numbers are R's (tests/reference/from_r/from_r.json, made
by tools/r_reference/from_r.R with RRreg 0.7.5 and rr 1.4.2) and surveykit's, recomputed
here, and each difference it states is the one measured; the guide ships
(``surveykit docs from-r``)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from surveykit import estimate, make_design
from surveykit.estimation.regression import regress
from surveykit.guides import TOPICS, guide_text

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "from-r.md").read_text(encoding="utf-8")
CASES = json.loads((ROOT / "tests" / "reference" / "from_r" / "from_r.json")
                   .read_text(encoding="utf-8"))["cases"]


def stated(text: str) -> None:
    """The guide prints ``text`` (a number as it is formatted there)."""
    assert text in DOC, f"docs/from-r.md does not state {text!r}"


def test_se_divisor_n_against_rrreg_n_minus_1():
    case = CASES["warner_420"]
    ours = estimate(design=make_design("warner", p=0.7), counts=case["counts"])
    theirs = case["RRuni"]
    assert theirs["pi"] == pytest.approx(ours.pi_mle, abs=1e-12)
    ratio = theirs["piSE"] / ours.se
    assert ratio == pytest.approx(math.sqrt(1000 / 999), rel=1e-9)
    stated(f"RRreg {theirs['piSE']:.7f},\nsurveykit {ours.se:.7f} (ratio {ratio:.6f} = "
           "sqrt(1000 / 999))")
    stated(f"At n = 100 the ratio is {math.sqrt(100 / 99):.4f}, at n = 30 "
           f"{math.sqrt(30 / 29):.4f}")


def test_moment_against_maximum_likelihood_with_kuk_cards():
    case = CASES["kuk_3"]
    design = make_design("kuk", p=case["p"], repetitions=case["repetitions"])
    ours = estimate(design=design, counts=case["counts"])
    theirs = case["RRuni"]
    # RRreg's estimate is the moment estimator: mean red cards / r against the decks
    counts = case["counts"]
    mean = sum(int(k) * n for k, n in counts.items()) / sum(counts.values()) / 3
    assert theirs["pi"] == pytest.approx((mean - 0.3) / 0.4, abs=1e-12)
    difference = ours.pi_mle - theirs["pi"]
    assert 0.02 < difference < 0.03
    stated(f"RRreg\n{theirs['pi']:.4f} (standard error {theirs['piSE']:.4f}), surveykit "
           f"{ours.pi_mle:.4f} ({ours.se:.4f}); they differ by {difference:.4f}, a\nquarter "
           "of a standard error")
    assert 0.2 < difference / ours.se < 0.3


def test_boundary_handling_against_rrreg_and_rr():
    case = CASES["warner_280"]
    ours = estimate(design=make_design("warner", p=0.7), counts=case["counts"])
    low, high = ours.confidence_interval(0.95)
    assert (ours.pi_hat, ours.pi_mle, low) == (pytest.approx(-0.05), 0.0, 0.0)
    stated(f"`pi_hat`\n{ours.pi_hat:.2f}, `pi_mle` 0, 95% interval [0, {high:.4f}] (Wilson-cc)")
    assert case["RRuni"]["pi"] == 1e-08
    stated(f"1e-08, with a standard error of {case['RRuni']['piSE']:.1e}")
    stated(f"intercept {case['RRlog']['coefficients']['(Intercept)']:.2f} with no standard "
           "error")
    assert case["RRlog"]["se"] == []
    rr = case["rrreg"]
    stated(f"rr's `rrreg` {rr['coefficients']['(Intercept)']:.2f} with\na standard error of "
           f"{rr['se']['(Intercept)']:.1e}")
    frame = pd.DataFrame({"y": [1] * 280 + [0] * 720})
    fit = regress(frame, "y ~ 1", sensitive="y", design=make_design("warner", p=0.7))
    # on the flat likelihood each program stops somewhere far out: only the order is stated
    assert fit.params.iloc[0] < -15 and fit.bse.iloc[0] > 1e3
    assert f"surveykit's `regress` {fit.params.iloc[0]:.2f}" in DOC.replace("\n", " ")


def test_regression_standard_errors_observed_information_against_rr_outer_product():
    case = CASES["warner_x"]
    data = pd.read_csv(ROOT / "tests" / "reference" / "from_r" / "warner_x.csv")
    fit = regress(data, "y ~ x", sensitive="y", design=make_design("warner", p=0.7))
    rrlog, rr = case["RRlog"], case["rrreg"]
    for name in ("(Intercept)", "x"):
        # RRlog's standard errors are the observed information's, as ours
        assert fit.params[name] == pytest.approx(rrlog["coefficients"][name], abs=2e-5)
        assert fit.bse[name] == pytest.approx(rrlog["se"][name], rel=2e-5)
        assert fit.params[name] == pytest.approx(rr["coefficients"][name], abs=3e-5)
    rows = {"surveykit `regress`": (fit.params, fit.bse),
            "RRreg `RRlog`": (rrlog["coefficients"], rrlog["se"]),
            "rr `rrreg`": (rr["coefficients"], rr["se"])}
    for label, (coefficients, se) in rows.items():
        stated(f"| {label} | {coefficients['(Intercept)']:.6f} | {se['(Intercept)']:.6f} | "
               f"{coefficients['x']:.6f} | {se['x']:.6f} |")
    intercept = rr["se"]["(Intercept)"] / fit.bse["(Intercept)"] - 1
    slope = rr["se"]["x"] / fit.bse["x"] - 1
    stated(f"by {intercept:+.2%} (intercept) and\n{slope:+.2%} (x)")


def test_the_guide_ships_and_is_listed():
    assert "from-r" in TOPICS
    assert guide_text("from-r").startswith("# From R: RRreg and rr")
