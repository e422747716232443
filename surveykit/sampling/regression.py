"""Regression under a complex sample: weighted pseudo-likelihood and a design-based sandwich.

:func:`survey_regress` fits every model :func:`surveykit.estimation.regression.regress`
fits (the randomized answer as the outcome or as a predictor, any design, groups,
the don't-know branch, nuisance parameters) by maximizing the weighted
pseudo-log-likelihood sum_i w_i log L_i(theta) (Binder 1983; Skinner, Holt and
Smith 1989, Sec. 3.4), with the latent-state likelihood of
:mod:`surveykit.estimation.latent` (:meth:`LatentModel.with_weights`) and its
Newton maximizer, started at the unweighted fit.

The covariance is the sandwich linearized over PSUs, as ``survey::svyglm``'s
``svy.varcoef``: with A = -d2 l_w / d theta2 at the estimate and the
respondents' influence values x_i = A^-1 w_i s_i (s_i = d log L_i / d theta,
:meth:`LatentModel.row_scores`),

    Var(theta_hat) = Var_design(sum_i x_i) = A^-1 V A^-1,

V the design-based variance of the total of the w_i s_i
(:func:`~surveykit.sampling.variance.linearized_variance`, survey's
``svyrecvar``: strata, PSUs, fpc, multistage, lonely PSUs). Rows the fit
leaves out (missing values) keep their PSU in the design with weight 0, as
svyglm's subset design does. With a direct question the fit is
``svyglm(family = quasibinomial)``'s exactly. Replicate variances refit the
model with each replicate's weights.

Tests of terms follow ``survey::regTermTest``: the design-based Wald test
(F = beta' V^-1 beta / k on k and the residual degrees of freedom, PSUs -
strata - p + 1 as svyglm's ``df.residual``) and the Rao-Scott working Wald
test (beta' V0^-1 beta with V0 the model-based covariance of the weighted fit
with weights scaled to mean 1, referred to a weighted sum of F(1, ddf)
variables whose weights are the eigenvalues of V0^-1 V: survey's saddlepoint
approximation, Kuonen 1999). Likelihood-ratio tests do not apply to a
pseudo-likelihood and are not offered.

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from surveykit.designs.base import Design
from surveykit.designs.quantitative import QuantitativeDesign
from surveykit.errors import EstimationError, ParameterError
from surveykit.estimation.formulas import build_matrix, drop_missing, parse_formula
from surveykit.estimation.latent import LatentModel, maximize
from surveykit.estimation.quantitative import numeric_answers
from surveykit.estimation.quantitative_regression import (
    corrected_least_squares,
    weighted_least_squares,
)
from surveykit.estimation.regression import regress
from surveykit.estimation.regression_results import (
    Parameter,
    labelled_covariance,
    parameter_series,
)
from surveykit.sampling.counts import WeightedCounts
from surveykit.sampling.design import VARIANCE_METHODS, SamplingDesign
from surveykit.sampling.replicates import replicate_variance, replicate_weights_for
from surveykit.sampling.rows import design_rows
from surveykit.sampling.variance import linearized_variance

__all__ = ["SurveyRegressionResult", "TermTest", "f_sum_upper", "survey_linear_regress",
           "survey_regress"]


@dataclass(frozen=True)
class TermTest:
    """A test that some coefficients are 0: ``statistic`` (F for Wald with finite ddf, the
    working chi-square for Rao-Scott), its degrees of freedom, ``p_value``, and for
    Rao-Scott the eigenvalues ``lambdas`` of V0^-1 V."""

    method: str
    terms: tuple[str, ...]
    statistic: float
    df: int
    ddf: float
    p_value: float
    lambdas: tuple[float, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {"method": self.method, "terms": list(self.terms), "statistic": self.statistic,
                "df": self.df, "ddf": self.ddf, "p_value": self.p_value,
                "lambdas": list(self.lambdas)}


@dataclass(frozen=True, kw_only=True, eq=False)
class SurveyRegressionResult:
    """A regression fitted to a complex sample (see the module docstring).

    ``x`` holds every parameter (the layout of
    :class:`~surveykit.estimation.regression_results.RegressionResult`),
    ``covariance`` their design-based covariance, ``naive_covariance`` the
    model-based one of the weighted fit with weights scaled to mean 1 (svyglm's
    ``naive.cov``), ``parameters`` their names.
    """

    formula: str
    sensitive: str
    design: Design
    sampling: SamplingDesign
    variance_method: str
    x: np.ndarray
    covariance: np.ndarray = field(repr=False)
    naive_covariance: np.ndarray = field(repr=False)
    held: np.ndarray = field(repr=False)
    parameters: list[Parameter] = field(repr=False)
    n: int
    sum_weights: float
    design_df: int
    converged: bool
    replicates: int = 0
    warnings: tuple[str, ...] = ()
    dont_know: int = 0

    @property
    def notes(self) -> tuple[str, ...]:
        """What the fit left out that a reader should know (not warnings)."""
        if not self.dont_know:
            return ()
        return (f"{self.dont_know:,} \"don't know\" answer(s) left out: they carry no value",)

    @property
    def df_residual(self) -> int:
        """PSUs - strata + 1 - coefficients (svyglm's ``df.residual``)."""
        return self.design_df + 1 - int(np.sum(~self.held))

    def _estimate(self, p: Parameter) -> float:
        value = float(self.x[p.index])
        return math.exp(value) if p.log_scale else value

    def _se(self, p: Parameter) -> float | None:
        if self.held[p.index]:
            return None
        se = math.sqrt(max(float(self.covariance[p.index, p.index]), 0.0))
        return se * self._estimate(p) if p.log_scale else se

    def _series(self, part: str, values) -> pd.Series:
        return parameter_series(self.parameters, part, values)

    @property
    def params(self) -> pd.Series:
        """Coefficients of the main model (as RegressionResult.params)."""
        return self._series("coefficients", self._estimate)

    @property
    def bse(self) -> pd.Series:
        """Design-based standard errors of :attr:`params`."""
        return self._series("coefficients", self._se)

    @property
    def sensitive_params(self) -> pd.Series:
        return self._series("sensitive", self._estimate)

    @property
    def sensitive_bse(self) -> pd.Series:
        return self._series("sensitive", self._se)

    @property
    def nuisance(self) -> dict[str, dict[str, float | None]]:
        return {p.name: {"estimate": self._estimate(p), "se": self._se(p)}
                for p in self.parameters if p.part == "nuisance"}

    def covariance_matrix(self) -> pd.DataFrame:
        """The design-based covariance of all parameters, labelled."""
        return labelled_covariance(self.parameters, self.covariance)

    def to_frame(self) -> pd.DataFrame:
        """Every parameter: part, category, term, estimate, se, t, p_value (t on
        :attr:`df_residual` degrees of freedom, as summary.svyglm for quasi families)."""
        from scipy import stats

        records = []
        for p in self.parameters:
            se = self._se(p)
            t = pvalue = None
            if p.null is not None and se:
                t = (self._estimate(p) - p.null) / se
                pvalue = float(2 * stats.t.sf(abs(t), self.df_residual)) \
                    if self.df_residual > 0 else None
                if p.boundary and pvalue is not None:
                    pvalue /= 2
            records.append({"part": p.part, "category": p.category, "term": p.name,
                            "estimate": self._estimate(p), "se": se, "null": p.null,
                            "t": t, "p_value": pvalue})
        frame = pd.DataFrame.from_records(records)
        if all(p.category is None for p in self.parameters):
            frame = frame.drop(columns="category")
        return frame

    def _indices(self, terms: Sequence[str] | str, part: str = "coefficients") -> list[int]:
        names = [terms] if isinstance(terms, str) else list(terms)
        chosen = [p for p in self.parameters if p.part == part and p.name in names]
        missing = sorted(set(names) - {p.name for p in chosen})
        if missing or not names:
            known = ", ".join(dict.fromkeys(p.name for p in self.parameters if p.part == part))
            raise ParameterError(f"term {missing[0] if missing else ''!r} is not in the model; "
                                 f"its terms are {known}")
        return [p.index for p in chosen]

    def wald_test(self, terms: Sequence[str] | str, part: str = "coefficients") -> TermTest:
        """The design-based Wald test that ``terms`` are 0 (survey::regTermTest, method
        "Wald"): F = beta' V^-1 beta / k on (k, df_residual)."""
        from scipy import stats

        index = self._indices(terms, part)
        beta = self.x[index]
        V = self.covariance[np.ix_(index, index)]
        chisq = float(beta @ np.linalg.solve(V, beta))
        k = len(index)
        ddf = self.df_residual
        if ddf > 0:
            F = chisq / k
            return TermTest("Wald", tuple(_names(terms)), F, k, ddf, float(stats.f.sf(F, k, ddf)))
        return TermTest("Wald", tuple(_names(terms)), chisq, k, math.inf,
                        float(stats.chi2.sf(chisq, k)))

    def rao_scott(self, terms: Sequence[str] | str, part: str = "coefficients") -> TermTest:
        """The Rao-Scott working Wald test (survey::regTermTest(method = "WorkingWald")):
        beta' V0^-1 beta against a weighted sum of F(1, ddf) with the eigenvalues of
        V0^-1 V as weights, by survey's saddlepoint approximation."""
        index = self._indices(terms, part)
        beta = self.x[index]
        V = self.covariance[np.ix_(index, index)]
        V0 = self.naive_covariance[np.ix_(index, index)]
        chisq = float(beta @ np.linalg.solve(V0, beta))
        lambdas = np.sort(np.linalg.eigvals(np.linalg.solve(V0, V)).real)[::-1]
        ddf = self.df_residual if self.df_residual > 0 else math.inf
        pvalue = f_sum_upper(chisq, lambdas, ddf)
        return TermTest("Rao-Scott", tuple(_names(terms)), chisq, len(index), ddf, pvalue,
                        tuple(float(v) for v in lambdas))

    def to_dict(self) -> dict[str, object]:
        """Plain numbers for JSON: coefficients with design-based SEs, the variance method,
        the residual degrees of freedom."""
        frame = self.to_frame()
        return {"formula": self.formula, "sensitive": self.sensitive,
                "design": self.design.spec(), "sampling": self.sampling.to_dict(),
                "variance_method": self.variance_method, "n": self.n,
                "sum_weights": self.sum_weights, "df_residual": self.df_residual,
                "converged": self.converged,
                "coefficients": frame.replace({np.nan: None}).to_dict(orient="records"),
                "dont_know": self.dont_know, "notes": list(self.notes),
                "warnings": list(self.warnings)}


def _names(terms: Sequence[str] | str) -> list[str]:
    return [terms] if isinstance(terms, str) else list(terms)


def f_sum_upper(x: float, lambdas: np.ndarray, ddf: float) -> float:
    """P(sum_j lambda_j F_j > x), F_j ~ F(1, ddf) independent chi2(1)/ (chi2(ddf)/ddf) with a
    common denominator, by survey's ``pFsum`` (saddlepoint; the Satterthwaite F where the
    saddlepoint is undefined). ``ddf`` infinite: a weighted sum of chi2(1) (``pchisqsum``).

    >>> round(f_sum_upper(3.84, np.array([1.0]), math.inf), 4)  # chi2(1): 0.05 exactly
    0.0517
    """
    from scipy import stats

    a = np.asarray(lambdas, dtype=float)
    mean = a.mean()
    ratio = np.mean(a * a) / mean ** 2
    scale, ndf = mean * ratio, a.size / ratio
    if math.isinf(ddf):
        guess = float(stats.chi2.sf(x / scale, ndf))
        s = _saddle(x, a)
    else:
        guess = float(stats.f.sf(x / ndf / scale, ndf, ddf))
        # survey: the F sum as a quadratic form sum a_j chi2_1 - (x/ddf) chi2_ddf above 0
        s = _saddle(0.0, np.concatenate([a, np.full(int(round(ddf)), -x / ddf)]))
    return guess if s is None else s


def _saddle(x: float, lam: np.ndarray) -> float | None:
    """survey's ``saddle``: Lugannani-Rice for P(sum lambda_j chi2_1 > x) (Kuonen 1999)."""
    from scipy import optimize, stats

    d = float(np.max(lam))
    lam = lam / d
    x = x / d

    def k0(z: float) -> float:
        return -np.sum(np.log(1 - 2 * z * lam)) / 2

    def k1(z: float) -> float:
        return float(np.sum(lam / (1 - 2 * z * lam)))

    def k2(z: float) -> float:
        return 2 * float(np.sum(lam ** 2 / (1 - 2 * z * lam) ** 2))

    if np.any(lam < 0):
        low = float(np.max(1 / (2 * lam[lam < 0]))) * 0.99999
    elif x > lam.sum():
        low = -0.01
    else:
        low = -lam.size / (2 * x)
    high = float(np.min(1 / (2 * lam[lam > 0]))) * 0.99999
    try:
        zeta = optimize.brentq(lambda z: k1(z) - x, low, high, xtol=1e-8)
    except ValueError:
        return None
    if abs(zeta) < 1e-4:
        return None     # survey: NA, the Satterthwaite approximation is used
    root = 2 * (zeta * x - k0(zeta))
    if root <= 0:
        return None
    w = math.copysign(math.sqrt(root), zeta)
    v = zeta * math.sqrt(k2(zeta))
    return float(stats.norm.sf(w + math.log(v / w) / w))


def survey_regress(data: pd.DataFrame, formula: str, *, sensitive: str, design: Design,
                   sampling: SamplingDesign, group: str | None = None,
                   family: str | None = None, sensitive_formula: str = "~ 1",
                   fixed: Mapping[str, float] | None = None, variance: str = "linearization",
                   replicates: int = 500, rng: np.random.Generator | int | None = None,
                   rho: float = 0.0, max_iterations: int = 200) -> SurveyRegressionResult:
    """Fit :func:`~surveykit.estimation.regression.regress`'s model to a complex sample by
    weighted pseudo-likelihood, with design-based standard errors (see the module docstring).

    ``data`` has one row per sampled respondent with the design columns of
    ``sampling``; the other arguments are ``regress``'s. ``variance`` is one of
    :data:`~surveykit.sampling.design.VARIANCE_METHODS`.

    >>> from surveykit.designs import Warner
    >>> rng = np.random.default_rng(5)
    >>> frame = pd.DataFrame({"x": rng.normal(size=600), "psu": np.repeat(np.arange(60), 10),
    ...                       "w": np.repeat(rng.uniform(1, 3, 60), 10)})
    >>> truth = rng.random(600) < 1 / (1 + np.exp(-(-0.5 + frame.x)))
    >>> frame["rrt"] = np.where(rng.random(600) < 0.8, truth, ~truth)
    >>> fit = survey_regress(frame, "rrt ~ x", sensitive="rrt", design=Warner(p=0.8),
    ...                      sampling=SamplingDesign(weight="w", clusters=("psu",)))
    >>> fit.params.round(1).tolist(), fit.df_residual
    ([-0.6, 1.1], 58)
    """
    if variance not in VARIANCE_METHODS:
        raise ParameterError(f"variance ({variance!r}) must be one of "
                             f"{', '.join(VARIANCE_METHODS)}")
    if not isinstance(data, pd.DataFrame):
        raise ParameterError(f"data must be a pandas DataFrame, not {type(data).__name__}")
    columns = [str(c) for c in data.columns]
    # the rows regress keeps: those with a value in every column the formulas use
    parsed = parse_formula(formula, columns)
    used = [*parsed.columns, parsed.response, sensitive, group]
    if sensitive in parsed.columns and sensitive_formula.strip() not in ("~ 1", "~1"):
        used += parse_formula(sensitive_formula, columns, option="sensitive formula",
                              response=False).columns
    frame, _ = drop_missing(data, [c for c in used if c is not None and c in columns])
    complete = data.index.isin(frame.index) if data.index.is_unique else None
    if complete is None:
        raise ParameterError("data must have a unique index (e.g. reset_index())")
    rows = design_rows(data, sampling, keep_respondents=True)
    unweighted = regress(frame, formula, sensitive=sensitive, design=design, group=group,
                         family=family, sensitive_formula=sensitive_formula, fixed=fixed,
                         max_iterations=max_iterations)
    kept = np.flatnonzero(complete)[unweighted.rows.kept]
    base = _general_model(unweighted, design)
    weights = rows.weight[kept]
    held = unweighted.held
    fit = maximize(base.with_weights(weights), unweighted.maximum.x, fixed=held,
                   max_iterations=max_iterations)
    if not math.isfinite(fit.loglik):
        raise EstimationError("the weighted likelihood is zero at the unweighted estimate")
    if fit.diverging:
        raise EstimationError("perfect separation in the weighted fit: a coefficient runs off "
                              "to infinity; drop the term or merge its categories")
    warnings = [] if fit.converged else ["the weighted fit did not converge"]
    bread = _inverse(-fit.hessian, held)
    normalized = base.with_weights(weights * (weights.size / weights.sum()))
    naive = _inverse(-normalized.evaluate(fit.x)[2], held)
    counts = rows.counts
    if variance == "linearization":
        scores = np.zeros((counts.weight.size, base.size))
        scores[kept] = base.row_scores(fit.x) * weights[:, None]
        influence = scores @ bread
        covariance = linearized_variance(counts, influence)
        method, count = "linearization", 0
        design_df = _fit_degrees_of_freedom(counts, kept)
    else:
        replicate_weights, scale, rscales, mse, method, design_df = replicate_weights_for(
            counts, variance, replicates, rng, rho)
        thetas, diverging, stuck = [], [], []
        for r in range(replicate_weights.shape[1]):
            refit = maximize(base.with_weights(replicate_weights[kept, r]), fit.x, fixed=held,
                             max_iterations=max_iterations)
            thetas.append(refit.x)
            if refit.diverging:
                diverging.append(r + 1)
            elif not refit.converged:
                stuck.append(r + 1)
        if diverging:
            warnings.append(f"replicate(s) {', '.join(map(str, diverging))}: the fit runs off "
                            "to infinity (perfect separation in that replicate), so the "
                            "replicate variance is unreliable; use linearization")
        if stuck:
            warnings.append(f"replicate(s) {', '.join(map(str, stuck))}: the refit did not "
                            "converge")
        covariance = replicate_variance(np.asarray(thetas), fit.x, scale, rscales, mse)
        count = replicate_weights.shape[1]
    return SurveyRegressionResult(
        formula=unweighted.formula, sensitive=sensitive, design=design, sampling=sampling,
        variance_method=method, x=fit.x, covariance=covariance, naive_covariance=naive,
        held=held, parameters=unweighted.parameters, n=int(kept.size),
        sum_weights=float(weights.sum()), design_df=design_df, converged=fit.converged,
        replicates=count, warnings=tuple(warnings))


def _fit_degrees_of_freedom(counts: WeightedCounts, kept: np.ndarray) -> int:
    """PSUs - strata among the rows in the fit (survey's degf of svyglm's subset design)."""
    return int(np.unique(counts.units[kept, 0]).size - np.unique(counts.stratum[kept]).size)


#: The parameter of mix_unknown's unrelated mean theta in a regression with it as the outcome.
UNRELATED_MEAN = "(unrelated mean)"


def survey_linear_regress(data: pd.DataFrame, formula: str, *, scrambled: str,
                          design: QuantitativeDesign, sampling: SamplingDesign,
                          variance: str = "linearization", group: str | None = None
                          ) -> SurveyRegressionResult:
    """Linear regression of a numeric question's scrambled answers under a complex sample:
    weighted least squares of the design's unbiased transform r = (z - a) / b
    (``design.transform``) on the formula's terms, with the design-based sandwich
    linearized over PSUs within strata with fpc, as
    ``svyglm(r ~ ..., family = gaussian())``: A = X'WX (:func:`~surveykit.estimation.
    quantitative_regression.weighted_least_squares`), influence values
    w_i x_i (r_i - x_i'beta) A^-1, their total's variance by
    :func:`~surveykit.sampling.variance.linearized_variance`. E[r | y] = y, so the fit is
    unbiased for the model of the true value; the randomization's extra variance is part
    of each PSU's total and so of the sandwich.

    "Don't know" answers (``"dont_know"``) carry no value and leave the fit, as rows with
    a missing value do; their PSUs stay in the design (svyglm's subset design), and the
    result counts them (``dont_know``). ``data`` has one row per sampled respondent with
    the design columns of ``sampling``; only ``variance="linearization"`` is offered.

    The numeric question may also be a predictor of an observed outcome (``satisfaction ~
    income + age``): weighted least squares on r is attenuated, so the method-of-moments
    correction of :func:`~surveykit.estimation.quantitative_regression.fit_linear` is
    solved with the sampling weights (:func:`~surveykit.estimation.quantitative_regression.
    corrected_least_squares`) and its estimating equations take the same design-based
    sandwich.

    A two-group design without a per-answer transform (``mix_unknown``; ``group`` names
    the column of each respondent's group, 1 or 2) as the outcome: E[z | x, g] = b_g x'beta
    + t_g theta (a_g = 0), so weighted least squares of z on the columns b_g x and t_g
    (as :func:`~surveykit.estimation.quantitative_regression.fit_linear` without weights)
    with the same sandwich; theta, the unrelated question's mean, is the parameter
    ``(unrelated mean)``, part ``unrelated``.

    >>> from surveykit.designs.quantitative import Eriksson
    >>> rng = np.random.default_rng(3)
    >>> design = Eriksson(p=0.7, scrambler=[0, 1, 3, 5, 8])
    >>> x = rng.uniform(0, 4, 2000)
    >>> frame = pd.DataFrame({"x": x, "psu": np.repeat(np.arange(200), 10),
    ...                       "w": np.repeat(rng.uniform(1, 3, 200), 10),
    ...                       "y": design.simulate(10 + 2 * x, rng=rng).answers})
    >>> fit = survey_linear_regress(frame, "y ~ x", scrambled="y", design=design,
    ...                             sampling=SamplingDesign(weight="w", clusters=("psu",)))
    >>> fit.params.round(1).tolist(), fit.df_residual
    ([10.0, 1.9], 198)
    """
    if variance != "linearization":
        raise ParameterError(f"variance ({variance!r}): a numeric question's regression under "
                             "[sampling] has the linearization variance only; leave it out")
    if not isinstance(design, QuantitativeDesign):
        raise ParameterError(f"design ({design!r}) must be a numeric-answer design")
    if not isinstance(data, pd.DataFrame) or not data.index.is_unique:
        raise ParameterError("data must be a pandas DataFrame with a unique index")
    parsed = parse_formula(formula, [str(c) for c in data.columns])
    if parsed.response != scrambled and scrambled not in parsed.columns:
        raise ParameterError(f"formula ({formula!r}) does not use the numeric question "
                             f"{scrambled!r}")
    grouped = len(design.group_names) > 1
    if not design.has_transform and parsed.response != scrambled:
        raise ParameterError(
            f"question {scrambled!r}: the {design.model} design has no per-answer unbiased "
            "transform, so it cannot be a predictor (the unrelated question's mean is "
            "unknown); use it as the outcome")
    if grouped and (group is None or group not in data.columns):
        raise ParameterError(f"question {scrambled!r}: the {design.model} design has "
                             f"{len(design.group_names)} groups; give the column of each "
                             "respondent's group (group=...)")
    frame, _ = drop_missing(data, [parsed.response, *parsed.columns,
                                   *([group] if grouped else [])])
    answers = numeric_answers(design, frame[scrambled].tolist(),
                              groups=frame[group].tolist() if grouped else None)
    frame = frame.loc[answers.answered]
    codes = answers.group[answers.answered]
    rows = design_rows(data, sampling, keep_respondents=True)
    kept = data.index.get_indexer(frame.index)
    weights = rows.weight[kept]
    z = answers.values[answers.answered]
    if parsed.response == scrambled:
        matrix = build_matrix(parsed, frame)
        matrix.check_rank()
        X = matrix.values
        if X.shape[0] <= X.shape[1]:
            raise EstimationError(f"{X.shape[0]} answers for {X.shape[1]} coefficients: too "
                                  "few to fit")
        terms = tuple(matrix.terms)
        if design.has_transform and not grouped:
            fit = weighted_least_squares(X, design.transform(z), weights, formula=formula)
        else:
            # per group E[z | x] = a_g + b_g x'beta + t_g theta: least squares of z - a_g on
            # b_g x and t_g (fit_linear's system, weighted)
            moments = [design.moments(i) for i in range(len(design.group_names))]
            a, b, t = (np.array([getattr(m, name) for m in moments])[codes]
                       for name in ("a", "b", "t"))
            fit = weighted_least_squares(np.column_stack([b[:, None] * X, t]), z - a,
                                         weights, formula=formula)
            terms = (*terms, UNRELATED_MEAN)
    else:
        # the scrambled answer as a predictor: the weighted method-of-moments correction
        # (Fuller 1987), its estimating equations totalled per PSU as the outcome's are
        terms, fit = corrected_least_squares(formula, scrambled, design, parsed, frame, z,
                                             weights)
    size = len(terms)
    held = np.zeros(size, dtype=bool)
    bread = _inverse(fit.bread, held)
    counts = rows.counts
    influence = np.zeros((counts.weight.size, size))
    influence[kept] = fit.scores @ bread
    parameters = [Parameter(part="unrelated" if term == UNRELATED_MEAN else "coefficients",
                            name=term, category=None, index=j, null=0.0)
                  for j, term in enumerate(terms)]
    return SurveyRegressionResult(
        formula=formula, sensitive=scrambled, design=design, sampling=sampling,
        variance_method="linearization", x=fit.coefficients,
        covariance=linearized_variance(counts, influence),
        naive_covariance=bread * (weights.sum() / weights.size), held=held,
        parameters=parameters, n=int(kept.size), sum_weights=float(weights.sum()),
        design_df=_fit_degrees_of_freedom(counts, kept), converged=True,
        dont_know=int(answers.dont_know.sum()))


def _general_model(result, design: Design) -> LatentModel:
    """The fitted model's likelihood as the general latent-state model (which takes row
    weights), built from the fit's rows."""
    model, rows = result.model, result.rows
    s = design.structure
    categories = s.categories
    return LatentModel(
        Z=model.Z, states=s.states, categories=categories,
        reference=categories[model.reference], M=rows.row_matrix(np.zeros(len(s.nuisance))),
        A=rows.row_slopes(), low=model.low[model.size - model.J:],
        high=model.high[model.size - model.J:], outcome=model.outcome)


def _inverse(information: np.ndarray, held: np.ndarray) -> np.ndarray:
    free = ~held
    size = held.size
    out = np.zeros((size, size))
    block = information[np.ix_(free, free)]
    values, vectors = np.linalg.eigh((block + block.T) / 2)
    if values.size and values[0] <= 1e-10 * max(float(np.abs(values).max()), 1e-300):
        raise EstimationError("the weighted information is singular: the data identify not "
                              "every parameter; drop a term")
    out[np.ix_(free, free)] = (vectors / values) @ vectors.T
    return out
