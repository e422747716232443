"""Tests of terms after a regression (surveykit.estimation.term_tests): score tests from the
full fit in one pass, likelihood-ratio refits from several starts, the summary's choice.

Exact references: with a direct question the model is a plain logistic regression, where
Rao's score statistic at the restricted maximum is U' I^-1 U with U = X'(y - mu) and
I = X' diag(mu (1 - mu)) X from statsmodels' fit without the term. The one-pass score
statistic (taken where the full fit's quadratic approximation puts the restricted maximum)
is the same statistic up to second-order terms; in a regular sample of 20,000 rows it is
checked within 3% of Rao's, and of the likelihood ratio where the null is near.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from click.testing import CliRunner
from regression_simulation import simulate_rows

from surveykit.cli import main
from surveykit.designs import make_design
from surveykit.estimation import regression, term_tests
from surveykit.estimation.latent import maximize
from surveykit.estimation.regression import regress

SLD = make_design("sld", p=[0.2, 0.8], dont_know=0.1)


def _restrictions(fit):
    return [term_tests.Restriction(index=p.index, null=p.null, boundary=p.boundary)
            for p in fit.parameters if p.null is not None and not fit.held[p.index]]


def test_score_statistic_at_the_restricted_maximum_is_raos_from_statsmodels():
    rng = np.random.default_rng(31)
    frame = simulate_rows(make_design("direct"), n=3000, beta=[-0.4, 0.3, 0.25], rng=rng)
    fit = regress(frame, "rrt ~ x1 + x2", sensitive="rrt", design=make_design("direct"))
    X = fit.state_matrix.values
    y = (frame.rrt == "yes").to_numpy(dtype=float)
    for j in range(3):
        reduced = sm.Logit(y, np.delete(X, j, axis=1)).fit(disp=0, tol=1e-12, maxiter=100)
        point = np.insert(reduced.params, j, 0.0)
        mu = 1 / (1 + np.exp(-X @ point))
        U = X.T @ (y - mu)
        rao = U @ np.linalg.solve(X.T @ (X * (mu * (1 - mu))[:, None]), U)
        _, gradient, hessian, _ = fit.model.evaluate(point)
        parts = term_tests.score_statistic(gradient, hessian, j, ~fit.held)
        assert parts[0] ** 2 / parts[1] == pytest.approx(rao, rel=1e-8)


def test_one_pass_score_tests_equal_the_general_path_point_by_point():
    rng = np.random.default_rng(32)
    frame = simulate_rows(SLD, n=3000, beta=[0.3, 0.5, -0.4], rng=rng, nuisance=[0.8],
                          direct_share=0.2)
    fit = regress(frame, "rrt ~ x1 + x2", sensitive="rrt", design=SLD, group="group")
    general = regression._model(SLD, fit.rows, fit.state_matrix.values, None, general=True)
    args = (fit.maximum.x, fit.covariance, fit.held, _restrictions(fit))
    fast = term_tests.score_tests(fit.model, *args)
    oracle = term_tests.score_tests(general, *args)
    assert fast.keys() == oracle.keys() and len(fast) == 4
    for index, value in fast.items():
        assert value[0] == pytest.approx(oracle[index][0], rel=1e-8)


@pytest.mark.parametrize(("name", "parameters", "group"), [
    ("warner", {"p": 0.75}, None), ("sld", {"p": [0.2, 0.8]}, "group"),
    ("direct", {}, None)])
def test_score_tests_track_rao_and_the_likelihood_ratio_in_a_regular_sample(name, parameters,
                                                                            group):
    design = make_design(name, **parameters)
    rng = np.random.default_rng(33)
    nuisance = [0.9] if name == "sld" else None
    frame = simulate_rows(design, n=20000, beta=[-0.5, 0.05, 0.1], rng=rng, nuisance=nuisance)
    fit = regress(frame, "rrt ~ x1 + x2", sensitive="rrt", design=design, group=group)
    for p in fit.parameters[:3]:
        score, lr = fit.score_tests[p.index][0], fit.lr_tests[p.index][0]
        best = term_tests.restricted_maximum(fit.model, fit.maximum.x, fit.covariance,
                                             fit.start, fit.held, _restrictions(fit)[p.index])
        _, gradient, hessian, _ = fit.model.evaluate(best.x)
        U, V = term_tests.score_statistic(gradient, hessian, p.index, ~fit.held)
        assert score == pytest.approx(U * U / V, rel=0.03, abs=0.05), p.name
        if p.name != "(Intercept)":
            # near the null all three tests agree; far from it (intercepts 10-20 standard
            # errors from 0) they differ by design, the SLD's by 5%
            assert score == pytest.approx(lr, rel=0.03, abs=0.05), p.name


def test_a_score_pointing_out_of_the_range_of_a_boundary_null_counts_as_zero():
    """t = 1 is the top of t's range: a fit at t = 1 has no evidence against it (score 0,
    p-value 1/2 of the chi2(0) + chi2(1) mixture's atom, as the likelihood ratio's)."""
    rng = np.random.default_rng(1)
    design = make_design("sld", p=[0.2, 0.8])
    frame = simulate_rows(design, n=4000, beta=[-0.5, 0.8, -0.6], rng=rng, nuisance=[1.0])
    fit = regress(frame, "rrt ~ x1 + x2", sensitive="rrt", design=design, group="group")
    t = next(p for p in fit.parameters if p.name == "t")
    assert fit.nuisance["t"]["estimate"] == 1.0
    assert fit.score_tests[t.index] == (0.0, 0.5)
    assert fit.lr_tests[t.index] == (0.0, 0.5)


def test_restricted_fits_from_every_start_run_to_the_end_find_no_higher_maximum():
    """Starts that stop because their Newton step lands on a maximum found before lose
    nothing: on the minarets model (three local maxima for the intercept) running every start
    to convergence gives the same deltaG2."""
    minarets = pd.read_csv("tests/data/minarets.csv")
    rr = minarets[minarets.RRdesign == 1]
    fit = regress(rr, "rrt ~ age.c * leftRight.c", sensitive="rrt",
                  design=make_design("sld", p=[2 / 12, 10 / 12]), group="condition")
    for r in _restrictions(fit):
        fixed = fit.held.copy()
        fixed[r.index] = True
        starts = term_tests._starts(fit.model, fit.maximum.x, fit.covariance, fit.start,
                                    fit.held, r)
        assert len(starts) >= 4
        every = max(maximize(fit.model, s, fixed=fixed).loglik for s in starts)
        assert fit.lr_tests[r.index][0] == pytest.approx(2 * (fit.loglik - every), abs=1e-6)


@pytest.mark.parametrize("starts", ["several", "warm"])
def test_warm_started_likelihood_ratios_equal_refits_from_a_cold_start(starts):
    """The restricted fits start from the full fit (warm) and climb side by side; each
    deltaG2 equals the one from a refit that starts where the full fit started (the model
    without covariates, the term at its null) and runs to convergence on its own."""
    rng = np.random.default_rng(35)
    frame = simulate_rows(SLD, n=3000, beta=[0.3, 0.5, -0.4], rng=rng, nuisance=[0.8])
    fit = regress(frame, "rrt ~ x1 + x2", sensitive="rrt", design=SLD, group="group")
    restrictions = _restrictions(fit)
    warm = term_tests.lr_tests(fit.model, fit.maximum.x, fit.loglik, fit.covariance,
                               fit.start, fit.held, restrictions, workers=1, starts=starts)
    assert len(warm) == len(restrictions) == 4
    for r in restrictions:
        fixed = fit.held.copy()
        fixed[r.index] = True
        cold_start = np.array(fit.start, dtype=float)
        cold_start[r.index] = r.null
        cold = maximize(fit.model, cold_start, fixed=fixed)
        assert cold.converged and cold.iterations > 2
        assert warm[r.index][0] == pytest.approx(2 * (fit.loglik - cold.loglik), abs=1e-8)


def test_other_starts_are_judged_in_the_warm_starts_first_pass():
    """The refits' first pass over the rows holds every start of every parameter: Hessians for
    the warm starts and the null model's (which climbs at once from that evaluation), values
    and gradients only for the others; no later pass asks for a point without its Hessian
    (no pass of its own for judging). The statistics equal refits from every start run to
    their ends."""
    rng = np.random.default_rng(36)
    frame = simulate_rows(SLD, n=3000, beta=[0.3, 0.5, -0.4], rng=rng, nuisance=[0.8])
    fit = regress(frame, "rrt ~ x1 + x2", sensitive="rrt", design=SLD, group="group")
    restrictions = _restrictions(fit)
    passes = []
    evaluate = fit.model.evaluate_points

    def recorded(points, derivatives=True, hessian=True):
        passes.append((np.array(points), np.broadcast_to(hessian, len(points)).copy()))
        return evaluate(points, derivatives, hessian)

    fit.model.evaluate_points = recorded
    found = term_tests.lr_tests(fit.model, fit.maximum.x, fit.loglik, fit.covariance,
                                fit.start, fit.held, restrictions, workers=1)
    del fit.model.evaluate_points
    starts = {r.index: term_tests._starts(fit.model, fit.maximum.x, fit.covariance, fit.start,
                                          fit.held, r) for r in restrictions}
    first, hessians = passes[0]
    expected = {start.tobytes(): k == 0 or np.array_equal(start, term_tests._at_null(
                    fit.model, fit.start, r))
                for r in restrictions for k, start in enumerate(starts[r.index])}
    assert {point.tobytes(): bool(h) for point, h in zip(first, hessians, strict=True)} \
        == expected
    assert not hessians.all() and hessians.any()
    assert all(h.all() for _, h in passes[1:])
    for r in restrictions:
        fixed = fit.held.copy()
        fixed[r.index] = True
        every = max(maximize(fit.model, s, fixed=fixed).loglik for s in starts[r.index])
        assert found[r.index][0] == pytest.approx(2 * (fit.loglik - every), abs=1e-6)


def test_refits_in_a_process_pool_equal_refits_in_this_process():
    rng = np.random.default_rng(34)
    frame = simulate_rows(SLD, n=3000, beta=[0.3, 0.5, -0.4], rng=rng, nuisance=[0.8])
    fit = regress(frame, "rrt ~ x1 + x2", sensitive="rrt", design=SLD, group="group")
    args = (fit.model, fit.maximum.x, fit.loglik, fit.covariance, fit.start, fit.held,
            _restrictions(fit))
    steps = []
    serial = term_tests.lr_tests(*args, workers=1)
    pooled = term_tests.lr_tests(*args, workers=2, progress=steps.append)
    assert sum(steps) == 4       # one step per parameter, reported as each worker finishes
    assert serial.keys() == pooled.keys()
    for index, (statistic, _) in serial.items():
        assert pooled[index][0] == pytest.approx(statistic, rel=1e-9, abs=1e-9)
    assert term_tests.lr_tests(*args, workers=1) == serial     # deterministic


def _minarets_fit():
    minarets = pd.read_csv("tests/data/minarets.csv")
    rr = minarets[minarets.RRdesign == 1]
    return regress(rr, "rrt ~ age.c * leftRight.c", sensitive="rrt",
                   design=make_design("sld", p=[2 / 12, 10 / 12]), group="condition")


def test_summary_shows_wald_and_score_and_the_likelihood_ratio_where_they_disagree():
    fit = _minarets_fit()
    assert [p.name for p in fit.disagreeing] == ["age.c:leftRight.c", "t"]
    text = fit.summary()
    rows = {}
    for line in text.splitlines():     # the first of the table's two blocks
        if line.strip():
            rows.setdefault(line.split()[0], line.split())
    assert rows["age.c:leftRight.c"][5:8] == ["15.622", "7.74e-05", "2.000"]
    # name, estimate, se, z, p, score, p, and no deltaG2: "-", as every table shows no number
    assert rows["age.c"][7:] == ["-"]
    assert ("Tests: Wald z and score chi2 (1 df) for every parameter; deltaG2 (likelihood "
            "ratio) where those two disagree at the 5% level: age.c:leftRight.c, t.") in _flat(
        text)
    assert "Score: none for t (the observed information" in text
    assert set(fit._lr_found) == {p.index for p in fit.disagreeing}    # no other refits
    everything = fit.summary(lr="all")
    assert "deltaG2 (1 df each) for every parameter." in _flat(everything)
    assert "72.015" in everything
    assert "deltaG2" not in _minarets_fit().summary(lr="none").split("Signif.")[0]


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_summary_is_text_with_statsmodels_as_text_and_html_for_notebooks():
    fit = _minarets_fit()
    summary = fit.summary(lr="none")
    assert isinstance(summary, str)
    assert summary.as_text() == str(summary) and repr(summary) == str(summary)
    assert summary._repr_html_().startswith("<pre>Logistic regression of the true answer")
    assert "&#x27;rrt&#x27;" in summary._repr_html_()


def test_bad_choice_of_likelihood_ratio_tests_is_named():
    from surveykit.errors import ParameterError

    with pytest.raises(ParameterError, match=r"lr \('some'\) must be one of auto, all, none"):
        _minarets_fit().summary(lr="some")


def test_cli_lr_option_and_json_name_the_tests_shown(tmp_path):
    minarets = pd.read_csv("tests/data/minarets.csv")
    path = tmp_path / "rr.csv"
    minarets[minarets.RRdesign == 1].to_csv(path, index=False)
    args = ["regress", str(path), "--formula", "rrt ~ age.c * leftRight.c", "--sensitive",
            "rrt", "--design", "sld", "--param", "p=0.16666666666666666,0.8333333333333334",
            "--group", "condition"]
    auto = json.loads(CliRunner().invoke(main, [*args, "--format", "json"]).output)
    terms = {c["term"]: c for c in auto["coefficients"]}
    assert terms["age.c"]["lr_chi2"] is None and terms["age.c"]["score_chi2"] > 0
    assert terms["age.c:leftRight.c"]["lr_chi2"] == pytest.approx(1.9996, abs=1e-3)
    assert auto["tests"]["likelihood_ratio_for"] == ["term 'age.c:leftRight.c'", "t"]
    every = json.loads(CliRunner().invoke(main, [*args, "--lr", "all", "--format",
                                                 "json"]).output)
    assert every["coefficients"][0]["lr_chi2"] == pytest.approx(72.015, abs=1e-3)
    none = CliRunner().invoke(main, [*args, "--lr", "none"])
    assert none.exit_code == 0 and "deltaG2 " not in none.output
    assert "no likelihood-ratio refits (not asked for)" in _flat(none.output)
