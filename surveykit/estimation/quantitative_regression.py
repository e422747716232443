"""Linear regression with a scrambled numeric variable, as the outcome or as a predictor.

:func:`fit_linear` fits, for any numeric-answer design:

* **the scrambled answer as the outcome** (``income ~ age + C(region)``):
  E[Z | x, group g] = a_g + b_g x'beta + t_g theta, so least squares of
  z - a_g on the columns b_g x (and t_g, for ``mix_unknown``'s unrelated
  mean theta) is unbiased for beta. With one group this is ordinary least
  squares on the unbiased transform r = (z - a) / b, whose error r - x'beta is
  heteroscedastic by design (Var(r | y) depends on y), hence the sandwich
  variance (White 1980), ``HC1`` by default (HC0 times n / (n - k)), as
  statsmodels computes it; with weights, weighted least squares and its
  sandwich.
* **the scrambled answer as a predictor** (``satisfaction ~ income + age``):
  RRreg's ``RRlin`` (van den Hout and Kooiman 2006) takes categorical
  randomized-response predictors only; for a numeric one the transform
  r = x* + e is the true value plus a mean-zero error of known conditional
  variance, so least squares on r is attenuated and the method-of-moments
  correction (Fuller 1987, sec. 1.2 and 2.2) removes it:
  beta = (X'WX - D)^{-1} X'W y with D the sum of w_i v_i at the scrambled
  column, v_i the design's unbiased estimate of Var(r_i | x*_i). Its
  estimating equations psi_i = w_i (x_i (y_i - x_i'beta) + v_i beta_j e_j) have
  mean zero; the sandwich variance A^{-1} (sum psi psi') A^{-1} with
  A = X'WX - D. The scrambled variable must enter as a plain term (no
  interactions, powers or transforms: RRlin's rule, checked numerically).

Rows with a missing value in a used column are dropped (R's ``na.omit``) and
so are "don't know" answers (they carry no value; the branch is independent
of everything, so the rest is still a random subsample); both are counted.

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from surveykit.designs.quantitative import QuantitativeDesign
from surveykit.errors import EstimationError, ParameterError
from surveykit.estimation.binomial import check_level, z_value
from surveykit.estimation.formulas import build_matrix, drop_missing, parse_formula
from surveykit.estimation.quantitative import numeric_answers

__all__ = ["COV_TYPES", "LeastSquares", "LinearFit", "corrected_least_squares", "fit_linear",
           "weighted_least_squares"]

#: Sandwich variances: HC0 (White's), HC1 (HC0 times n / (n - k), the default).
COV_TYPES = ("HC1", "HC0")


@dataclass(frozen=True, kw_only=True)
class LinearFit:
    """A linear regression with a scrambled variable (module docstring).

    ``params`` and ``bse`` by term (R's names), ``covariance`` (a labelled
    frame); ``mode`` is ``"outcome"`` or ``"predictor"``; ``unrelated_mean``
    is ``mix_unknown``'s theta when the outcome is scrambled.
    """

    formula: str
    scrambled: str
    design: QuantitativeDesign
    mode: str
    cov_type: str
    terms: tuple[str, ...]
    coefficients: np.ndarray = field(repr=False)
    cov: np.ndarray = field(repr=False)
    n: int
    n_dropped: int
    dont_know: int
    weighted: bool
    unrelated_mean: float | None = None
    unrelated_se: float | None = None

    @property
    def params(self) -> pd.Series:
        return pd.Series(self.coefficients, index=pd.Index(self.terms, name="term"))

    @property
    def bse(self) -> pd.Series:
        return pd.Series(np.sqrt(np.maximum(np.diag(self.cov), 0.0)),
                         index=pd.Index(self.terms, name="term"))

    @property
    def covariance(self) -> pd.DataFrame:
        return pd.DataFrame(self.cov, index=list(self.terms), columns=list(self.terms))

    @property
    def zvalues(self) -> pd.Series:
        return self.params / self.bse

    @property
    def pvalues(self) -> pd.Series:
        from scipy import stats

        return pd.Series(2 * stats.norm.sf(np.abs(self.zvalues.to_numpy())),
                         index=self.params.index)

    def conf_int(self, level: float = 0.95) -> pd.DataFrame:
        """Wald intervals (normal), one row per term."""
        z = z_value(check_level(level))
        return pd.DataFrame({"low": self.params - z * self.bse,
                             "high": self.params + z * self.bse})

    def to_dict(self, level: float = 0.95) -> dict[str, object]:
        intervals = self.conf_int(level)
        return {
            "formula": self.formula, "scrambled": self.scrambled, "mode": self.mode,
            "design": self.design.spec(), "cov_type": self.cov_type, "n": self.n,
            "n_dropped": self.n_dropped, "dont_know": self.dont_know, "weighted": self.weighted,
            "coefficients": [
                {"term": term, "estimate": float(self.params[term]),
                 "se": float(self.bse[term]), "z": float(self.zvalues[term]),
                 "p_value": float(self.pvalues[term]),
                 "ci_low": float(intervals.loc[term, "low"]),
                 "ci_high": float(intervals.loc[term, "high"])} for term in self.terms],
            "unrelated_mean": self.unrelated_mean, "unrelated_se": self.unrelated_se,
            "level": level}

    def summary(self, level: float = 0.95) -> str:
        """The coefficients as a table."""
        what = "outcome" if self.mode == "outcome" else "predictor"
        lines = [f"Linear regression with a scrambled {what}, {self.scrambled!r} "
                 f"({self.design.describe()})", f"Formula: {self.formula}",
                 f"Rows: {self.n} used"
                 + (f" ({self.n_dropped} dropped for missing values)" if self.n_dropped else "")
                 + (f", {self.dont_know} \"don't know\" left out" if self.dont_know else ""),
                 f"Standard errors: sandwich ({self.cov_type})", ""]
        width = max(len(t) for t in self.terms) + 2
        lines.append(f"{'':<{width}}{'Estimate':>12}{'Std. Error':>12}{'z value':>9}"
                     f"{'Pr(>|z|)':>10}")
        for term in self.terms:
            lines.append(f"{term:<{width}}{self.params[term]:>12.4f}{self.bse[term]:>12.4f}"
                         f"{self.zvalues[term]:>9.3f}{self.pvalues[term]:>10.3g}")
        if self.unrelated_mean is not None:
            lines.append(f"Unrelated question's mean: {self.unrelated_mean:.4f} "
                         f"(SE {self.unrelated_se:.4f})")
        return "\n".join(lines) + "\n"


def fit_linear(data: pd.DataFrame, formula: str, *, design: QuantitativeDesign,
               scrambled: str, group: str | None = None, weights: str | None = None,
               cov_type: str = "HC1") -> LinearFit:
    """Fit ``formula`` where column ``scrambled`` holds answers randomized with ``design``
    (module docstring). ``group``: the column of each respondent's group (``mix_unknown``);
    ``weights``: a column of survey weights.

    >>> from surveykit.designs.quantitative import Additive
    >>> rng = np.random.default_rng(3)
    >>> age = rng.uniform(20, 60, 2000)
    >>> design = Additive(mu=0, sigma=20, scrambler="normal")
    >>> income = design.simulate(10 + 0.5 * age + rng.normal(0, 2, 2000), rng=rng).answers
    >>> fit = fit_linear(pd.DataFrame({"income": income, "age": age}), "income ~ age",
    ...                  design=design, scrambled="income")
    >>> round(float(fit.params["age"]), 1)
    0.5
    """
    if not isinstance(data, pd.DataFrame):
        raise ParameterError("data must be a pandas DataFrame")
    if not isinstance(design, QuantitativeDesign):
        raise ParameterError(f"design ({design!r}) must be a numeric-answer design")
    if cov_type not in COV_TYPES:
        raise ParameterError(f"cov_type ({cov_type!r}) must be one of {', '.join(COV_TYPES)}")
    parsed = parse_formula(formula, data.columns)
    if scrambled not in data.columns:
        raise ParameterError(f"scrambled ({scrambled!r}) is not a column of the data")
    if parsed.response == scrambled:
        mode = "outcome"
    elif scrambled in parsed.columns:
        mode = "predictor"
    else:
        raise ParameterError(f"formula {formula!r} does not use the scrambled column "
                             f"{scrambled!r}: put it before '~' (outcome) or among the terms")
    used = [c for c in (parsed.response, *parsed.columns, group, weights) if c]
    for column in (group, weights):
        if column is not None and column not in data.columns:
            raise ParameterError(f"column {column!r} is not in the data")
    frame, dropped = drop_missing(data, used)
    answers = numeric_answers(design, frame[scrambled].tolist(),
                              groups=None if group is None else frame[group].tolist(),
                              weights=None if weights is None else frame[weights].to_numpy())
    keep = answers.answered
    dont_know = int(answers.dont_know.sum())
    frame = frame.loc[keep]
    z = answers.values[keep]
    g = answers.group[keep]
    w = answers.weights[keep]
    if mode == "outcome":
        X_frame = build_matrix(parsed, frame)
        X_frame.check_rank()
        return _outcome(formula, scrambled, design, X_frame.terms, X_frame.values, z, g, w,
                        cov_type, dropped, dont_know, weights is not None)
    if not design.has_transform:
        raise ParameterError(
            f"design {design.model!r} cannot be a predictor: its answers have no per-answer "
            "unbiased transform (the unrelated question's mean is unknown)")
    return _predictor(formula, scrambled, design, parsed, frame, z, w, cov_type, dropped,
                      dont_know, weights is not None)


@dataclass(frozen=True, kw_only=True, eq=False)
class LeastSquares:
    """Weighted least squares of y on X: ``coefficients`` solve X'W X beta = X'W y;
    ``bread`` is X'W X (minus the derivative of the estimating equations) and ``scores``
    the rows' terms w_i x_i (y_i - x_i'beta), whose sum is 0 at the solution."""

    coefficients: np.ndarray
    bread: np.ndarray
    scores: np.ndarray


def weighted_least_squares(X: np.ndarray, y: np.ndarray, w: np.ndarray, *,
                           formula: str = "") -> LeastSquares:
    """Solve the weighted normal equations; the bread and scores are what a sandwich
    variance (White's here, the design-based one of
    :func:`surveykit.sampling.regression.survey_linear_regress`) needs.

    >>> X = np.column_stack([np.ones(4), [0.0, 1.0, 2.0, 3.0]])
    >>> weighted_least_squares(X, np.array([1.0, 3.0, 5.0, 7.0]), np.ones(4)).coefficients
    array([1., 2.])
    """
    bread = X.T @ (w[:, None] * X)
    try:
        coefficients = np.linalg.solve(bread, X.T @ (w * y))
    except np.linalg.LinAlgError:
        raise EstimationError(f"formula {formula!r}: the columns are collinear") from None
    residuals = y - X @ coefficients
    return LeastSquares(coefficients=coefficients, bread=bread,
                        scores=(w * residuals)[:, None] * X)


def _sandwich(bread: np.ndarray, scores: np.ndarray, cov_type: str) -> np.ndarray:
    n, k = scores.shape
    inverse = np.linalg.inv(bread)
    meat = scores.T @ scores
    cov = inverse @ meat @ inverse.T
    return cov * n / (n - k) if cov_type == "HC1" else cov


def _outcome(formula, scrambled, design, terms, X, z, g, w, cov_type, dropped, dont_know,
             weighted) -> LinearFit:
    moments = [design.moments(i) for i in range(len(design.group_names))]
    a = np.array([m.a for m in moments])[g]
    b = np.array([m.b for m in moments])[g]
    t = np.array([m.t for m in moments])[g]
    columns = b[:, None] * X
    names = list(terms)
    if np.any(t != 0):
        columns = np.column_stack([columns, t])
        names.append("(unrelated mean)")
    n, k = columns.shape
    if n <= k:
        raise EstimationError(f"{n} answers for {k} coefficients: too few to fit")
    fit = weighted_least_squares(columns, z - a, w, formula=formula)
    coefficients = fit.coefficients
    cov = _sandwich(fit.bread, fit.scores, cov_type)
    theta = theta_se = None
    if len(names) > len(terms):
        theta, theta_se = float(coefficients[-1]), math.sqrt(max(float(cov[-1, -1]), 0.0))
        coefficients, cov = coefficients[:-1], cov[:-1, :-1]
    return LinearFit(formula=formula, scrambled=scrambled, design=design, mode="outcome",
                     cov_type=cov_type, terms=tuple(terms), coefficients=coefficients,
                     cov=cov, n=n, n_dropped=dropped, dont_know=dont_know, weighted=weighted,
                     unrelated_mean=theta, unrelated_se=theta_se)


def _predictor(formula, scrambled, design, parsed, frame, z, w, cov_type, dropped, dont_know,
               weighted) -> LinearFit:
    terms, fit = corrected_least_squares(formula, scrambled, design, parsed, frame, z, w)
    cov = _sandwich(fit.bread, fit.scores, cov_type)
    return LinearFit(formula=formula, scrambled=scrambled, design=design, mode="predictor",
                     cov_type=cov_type, terms=terms, coefficients=fit.coefficients, cov=cov,
                     n=fit.scores.shape[0], n_dropped=dropped, dont_know=dont_know,
                     weighted=weighted)


def corrected_least_squares(formula: str, scrambled: str, design: QuantitativeDesign, parsed,
                            frame: pd.DataFrame, z: np.ndarray, w: np.ndarray
                            ) -> tuple[tuple[str, ...], LeastSquares]:
    """The method-of-moments correction for a scrambled predictor (module docstring): the
    terms and the solution of (X'WX - D) beta = X'W y with D = sum w v at the scrambled
    column, with its bread X'WX - D and the rows' estimating equations psi_i (whose sum is 0
    at the solution), for White's sandwich here and the design-based one of
    :func:`surveykit.sampling.regression.survey_linear_regress`. ``frame`` holds the
    answered rows, ``z`` their answers, ``w`` their weights."""
    r = design.transform(z)
    v = design.transform_variance(r)
    transformed = frame.assign(**{scrambled: r})
    matrix = build_matrix(parsed, transformed)
    matrix.check_rank()
    shifted = build_matrix(parsed, transformed.assign(**{scrambled: r + 1.0})).values
    change = shifted - matrix.values
    moved = [j for j in range(change.shape[1]) if np.any(change[:, j] != 0)]
    if len(moved) != 1 or not np.allclose(change[:, moved[0]], 1.0):
        raise ParameterError(
            f"formula {formula!r}: the scrambled predictor {scrambled!r} must enter as a plain "
            "term, without interactions, powers or transforms (RRlin's rule): the correction "
            "for its randomization is known only for the term itself")
    j = moved[0]
    X = matrix.values
    y = frame[parsed.response].to_numpy(dtype=float)
    n, k = X.shape
    if n <= k:
        raise EstimationError(f"{n} answers for {k} coefficients: too few to fit")
    bread = X.T @ (w[:, None] * X)
    bread[j, j] -= float(np.dot(w, v))
    try:
        coefficients = np.linalg.solve(bread, X.T @ (w * y))
    except np.linalg.LinAlgError:
        raise EstimationError(f"formula {formula!r}: the corrected cross-products are "
                              "singular") from None
    if np.linalg.eigvalsh((bread + bread.T) / 2).min() <= 0:
        raise EstimationError(
            f"formula {formula!r}: the randomization variance of {scrambled!r} exceeds its "
            "observed spread, so the corrected cross-products are not positive definite; the "
            "sample is too small or the scrambling too strong to separate its effect")
    residuals = y - X @ coefficients
    scores = (w * residuals)[:, None] * X
    scores[:, j] += w * v * coefficients[j]
    return tuple(matrix.terms), LeastSquares(coefficients=coefficients, bread=bread,
                                             scores=scores)
