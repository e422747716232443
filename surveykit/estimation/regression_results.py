"""The result of a randomized-response regression: estimates, tests, predictions, summaries.

:class:`RegressionResult` holds the maximum of the likelihood
(:mod:`surveykit.estimation.latent`) and answers what a methodologist asks of
it, with R's and statsmodels' names:

* statsmodels' names: ``params``, ``bse``, ``zvalues`` (also ``tvalues``),
  ``pvalues`` (pandas Series by term), :meth:`~RegressionResult.conf_int`,
  :meth:`~RegressionResult.cov_params`, ``llf``, ``nobs``, ``df_model``,
  ``df_resid``, ``aic``, ``bic``, :meth:`~RegressionResult.summary` (printable,
  ``as_text()``, HTML in a notebook), :meth:`~RegressionResult.predict`; R's:
  ``loglik``, ``n``, :meth:`~RegressionResult.to_frame` (every parameter with
  its standard error and its Wald, score and likelihood-ratio tests),
  ``converged``, ``iterations``;
* standard errors: the inverse observed information at the maximum;
* three tests of each parameter at its null value (0 for a coefficient, t = 1
  for the SLD's honesty, gamma = 0 for the CDM's cheaters), each on 1 degree of
  freedom (:mod:`surveykit.estimation.term_tests`): Wald z from the fit, the
  score (Rao) test of every parameter from the full fit in one pass over the
  rows, and the likelihood-ratio test deltaG2 = 2 (l_full - l_restricted) from
  refits with warm starts. A null value on the boundary of the parameter space
  (t = 1, gamma = 0) gives the 50:50 mixture of chi2(0) and chi2(1) (Self and
  Liang 1987), so its p-values are half the chi2(1) ones. The summary shows Wald
  and score for every parameter and the likelihood ratio where those two
  disagree at the 5% level or where asked for (``lr="all"``), as RRreg refits
  when its Wald and likelihood-ratio tests disagree; :meth:`to_frame` and
  :meth:`to_dict` carry all three by default;
* :meth:`~RegressionResult.predict`: the prevalence of the true answer for given
  covariate values, and :meth:`~RegressionResult.prevalence` its average over the
  sample, with delta-method intervals on the log-odds scale (as RRreg's
  ``predict.RRlog``);
* :meth:`~RegressionResult.summary`: text that reads like R's ``summary()`` in
  80 columns; :meth:`~RegressionResult.to_dict`: the CLI's JSON.

This module is pure math and text: it imports nothing from storage or the CLI.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from surveykit.designs.base import YES, Design
from surveykit.errors import ParameterError
from surveykit.estimation import term_tests
from surveykit.vocabulary import MISSING, number_text, p_value_text

__all__ = ["LR_CHOICES", "Parameter", "RegressionResult", "Summary"]

#: Which likelihood-ratio tests a summary shows: "auto" (where Wald and score disagree at the
#: 5% level, and any already computed), "all", "none".
LR_CHOICES = ("auto", "all", "none")
# Wald and score "disagree" when one rejects at this level and the other does not.
_DISAGREE_AT = 0.05

_WIDTH = 80
_SIGNIF = "Signif. codes:  0 '***' 0.001 '**' 0.01 '*' 0.05 '.' 0.1 ' ' 1"


@dataclass(frozen=True)
class Parameter:
    """One estimated parameter: its part of the model ("coefficients" of the main model,
    "sensitive" for the true answer's model, "nuisance"), name, category (k-category
    designs), place in the parameter vector and null value (None: not tested)."""

    part: str
    name: str
    category: str | None
    index: int
    null: float | None
    boundary: bool = False
    log_scale: bool = False

    @property
    def label(self) -> str:
        """How messages name it: ``'age'``, ``'age' (category b)``, ``t``."""
        if self.part == "nuisance":
            return self.name
        where = f" (category {self.category})" if self.category is not None else ""
        model = " in the sensitive formula" if self.part == "sensitive" else ""
        return f"term {self.name!r}{where}{model}"


def parameter_series(parameters: Sequence[Parameter], part: str,
                     values: Callable[[Parameter], float | None]) -> pd.Series:
    """``values`` of the parameters of one ``part`` of a fit, indexed by term (by category
    and term for k-category designs), as statsmodels' ``params`` and ``bse`` are."""
    chosen = [p for p in parameters if p.part == part]
    data = [values(p) for p in chosen]
    if any(p.category is not None for p in chosen):
        index = pd.MultiIndex.from_tuples([(p.category, p.name) for p in chosen],
                                          names=["category", "term"])
    else:
        index = pd.Index([p.name for p in chosen], name="term")
    return pd.Series(data, index=index, dtype=float)


def labelled_covariance(parameters: Sequence[Parameter], covariance: np.ndarray
                        ) -> pd.DataFrame:
    """The covariance of all ``parameters`` of a fit, labelled ``term`` or
    ``category:term``."""
    labels = [p.name if p.category is None else f"{p.category}:{p.name}" for p in parameters]
    index = [p.index for p in parameters]
    return pd.DataFrame(covariance[np.ix_(index, index)], index=labels, columns=labels)


def _z(level: float) -> float:
    from scipy import stats

    if not 0 < level < 1:
        raise ParameterError(f"level ({level!r}) must be between 0 and 1, e.g. 0.95")
    return float(stats.norm.isf((1 - level) / 2))


def _expit(x):
    return 1 / (1 + np.exp(-x))


class Summary(str):
    """A printed summary: text (``print`` it, search it, write it) with statsmodels'
    ``as_text()``, and HTML where a notebook shows it.

    >>> text = Summary("(Intercept) 1.0 < 2")
    >>> text.as_text() == text, text.as_html()
    (True, '<pre>(Intercept) 1.0 &lt; 2</pre>')
    """

    def as_text(self) -> str:
        return str(self)

    def as_html(self) -> str:
        return f"<pre>{html.escape(str(self))}</pre>"

    def _repr_html_(self) -> str:
        return self.as_html()

    def __repr__(self) -> str:
        return str(self)


@dataclass(frozen=True, kw_only=True, eq=False)
class RegressionResult:
    """A fitted randomized-response regression (see the module docstring)."""

    formula: str
    sensitive: str
    design: Design
    group: str | None
    mode: str
    family: str
    sensitive_formula: str | None
    model: object = field(repr=False)
    maximum: object = field(repr=False)
    held: np.ndarray = field(repr=False)
    covariance: np.ndarray = field(repr=False)
    parameters: list = field(repr=False)
    rows: object = field(repr=False)
    state_matrix: object = field(repr=False)
    outcome_matrix: object = field(repr=False)
    start: np.ndarray = field(repr=False)
    n_dropped: int = 0
    max_iterations: int = 200

    def __repr__(self) -> str:
        return (f"RegressionResult(formula={self.formula!r}, design={self.design.describe()!r}, "
                f"n={self.n}, loglik={self.loglik:.4f}, converged={self.converged})")

    # -- fit -------------------------------------------------------------------------------

    @property
    def n(self) -> int:
        """Rows in the likelihood."""
        return self.rows.n

    @property
    def loglik(self) -> float:
        """The maximized log-likelihood (every row's probability of its answers)."""
        return float(self.maximum.loglik)

    @property
    def converged(self) -> bool:
        return bool(self.maximum.converged)

    @property
    def iterations(self) -> int:
        return int(self.maximum.iterations)

    @property
    def llf(self) -> float:
        """statsmodels' name of :attr:`loglik`."""
        return self.loglik

    @property
    def nobs(self) -> int:
        """statsmodels' name of :attr:`n`."""
        return self.n

    @property
    def k_params(self) -> int:
        """Estimated parameters (coefficients and nuisance parameters not held fixed): R's
        ``logLik`` df, the "df" of the summary and the JSON."""
        return int(np.sum(~self.held))

    @property
    def df_model(self) -> int:
        """Estimated parameters other than intercepts (statsmodels' ``df_model``: for a
        direct question, the covariates of the logistic regression)."""
        intercepts = sum(1 for p in self.parameters
                         if p.name == "(Intercept)" and not self.held[p.index])
        return self.k_params - intercepts

    @property
    def df_resid(self) -> int:
        """Rows less estimated parameters (statsmodels' ``df_resid``)."""
        return self.n - self.k_params

    @property
    def aic(self) -> float:
        return -2 * self.loglik + 2 * self.k_params

    @property
    def bic(self) -> float:
        return -2 * self.loglik + math.log(self.n) * self.k_params

    @property
    def categories(self) -> tuple[str, ...]:
        """The categories whose log-odds against the reference are modelled."""
        model = self.model
        labels = self.design.category_labels if not self.design.is_binary else ("yes", "no")
        return tuple(labels[c] for c in model.free_categories)

    @property
    def warnings(self) -> tuple[str, ...]:
        notes = []
        if self.n_dropped:
            notes.append(f"{self.n_dropped} row(s) with a missing value in a used column were "
                         "dropped")
        if self.rows.dont_know_left_out:
            notes.append(f"{self.rows.dont_know_left_out} \"don't know\" answer(s) that the "
                         "design cannot give were left out (respondents who opted out)")
        if not self.converged:
            notes.append(f"the fit did not converge in {self.iterations} iterations; the "
                         "estimates may be off")
        for p in self.parameters:
            if p.part == "nuisance" and p.index >= 0 and not self.held[p.index]:
                value = self.maximum.x[p.index]
                if value <= self.model.low[p.index] or value >= self.model.high[p.index]:
                    notes.append(f"{p.name} is on the boundary of its range ({value:g}); its "
                                 "standard error and Wald test are not reliable there")
        return tuple(notes)

    # -- parameters ------------------------------------------------------------------------

    def _estimate(self, p: Parameter) -> float:
        value = float(self.maximum.x[p.index])
        return math.exp(value) if p.log_scale else value

    def _se(self, p: Parameter) -> float | None:
        if self.held[p.index]:
            return None
        variance = float(self.covariance[p.index, p.index])
        se = math.sqrt(max(variance, 0.0))
        return se * self._estimate(p) if p.log_scale else se

    def _series(self, part: str, values) -> pd.Series:
        return parameter_series(self.parameters, part, values)

    @property
    def params(self) -> pd.Series:
        """Coefficients of the main model by term (the true answer's log-odds when it is the
        outcome; the outcome's model when it is a predictor). k categories: indexed by
        (category, term)."""
        return self._series("coefficients", self._estimate)

    @property
    def bse(self) -> pd.Series:
        """Standard errors of :attr:`params` (inverse observed information)."""
        return self._series("coefficients", lambda p: self._se(p))

    @property
    def sensitive_params(self) -> pd.Series:
        """Coefficients of the true answer's model (``sensitive_formula``), when it is a
        predictor."""
        return self._series("sensitive", self._estimate)

    @property
    def sensitive_bse(self) -> pd.Series:
        """Standard errors of :attr:`sensitive_params`."""
        return self._series("sensitive", lambda p: self._se(p))

    @property
    def nuisance(self) -> dict[str, dict[str, float | None]]:
        """Nuisance parameters: ``{"t": {"estimate": .., "se": ..}}`` (sigma for a Gaussian
        outcome, gamma for cheaters, the design's unknown parameters)."""
        return {p.name: {"estimate": self._estimate(p), "se": self._se(p)}
                for p in self.parameters if p.part == "nuisance"}

    @property
    def zvalues(self) -> pd.Series:
        """Wald z of :attr:`params` (estimate / standard error)."""
        return self._series("coefficients", lambda p: _none_nan(self._wald(p)[0]))

    @property
    def tvalues(self) -> pd.Series:
        """statsmodels' name of :attr:`zvalues` (the Wald statistics; normal, not t)."""
        return self.zvalues

    @property
    def pvalues(self) -> pd.Series:
        """Two-sided Wald p-values of :attr:`params`."""
        return self._series("coefficients", lambda p: _none_nan(self._wald(p)[1]))

    def conf_int(self, alpha: float = 0.05) -> pd.DataFrame:
        """Wald intervals of :attr:`params` at level 1 - ``alpha``: columns 0 (lower) and 1
        (upper), as statsmodels gives them."""
        if not 0 < alpha < 1:
            raise ParameterError(f"alpha ({alpha!r}) must be between 0 and 1, e.g. 0.05")
        z = _z(1 - alpha)
        estimate, se = self.params, self.bse
        return pd.DataFrame({0: estimate - z * se, 1: estimate + z * se})

    def cov_params(self) -> pd.DataFrame:
        """The covariance of :attr:`params` (inverse observed information), labelled like
        them; :meth:`covariance_matrix` has every parameter's."""
        chosen = [p for p in self.parameters if p.part == "coefficients"]
        index = self.params.index
        positions = [p.index for p in chosen]
        return pd.DataFrame(self.covariance[np.ix_(positions, positions)], index=index,
                            columns=index)

    def covariance_matrix(self) -> pd.DataFrame:
        """The inverse observed information of all parameters, labelled."""
        return labelled_covariance(self.parameters, self.covariance)

    # -- tests -----------------------------------------------------------------------------

    def _restrictions(self, parameters=None) -> list[term_tests.Restriction]:
        chosen = self.parameters if parameters is None else parameters
        return [term_tests.Restriction(index=p.index, null=p.null, boundary=p.boundary)
                for p in chosen if p.null is not None and not self.held[p.index]]

    @cached_property
    def score_tests(self) -> dict[int, tuple[float, float] | None]:
        """Score (Rao) statistic and p-value per parameter index (None where untested or where
        the observed information at the null is not positive), every parameter from the full
        fit in one pass over the rows (:func:`surveykit.estimation.term_tests.score_tests`)."""
        found = term_tests.score_tests(self.model, self.maximum.x, self.covariance, self.held,
                                       self._restrictions())
        return {p.index: found.get(p.index) for p in self.parameters}

    @property
    def _lr_found(self) -> dict[int, tuple[float, float] | None]:
        return self.__dict__.setdefault("_lr_cache", {})

    @property
    def lr_tests(self) -> dict[int, tuple[float, float] | None]:
        """deltaG2 and its p-value per parameter index (None where untested), computed on
        first use: one restricted fit (from several starts) per parameter."""
        self.run_lr_tests()
        return {p.index: self._lr_found.get(p.index) for p in self.parameters}

    def run_lr_tests(self, progress: Callable[[int], None] | None = None, which: str = "all",
                     workers: int | None = None) -> None:
        """Run likelihood-ratio refits now, calling ``progress(1)`` after each parameter: on
        a million rows each takes seconds, and the CLI shows a progress bar. ``which``:
        "all" parameters or "auto" (those whose Wald and score tests disagree); ``workers``:
        processes (None or 1: none, the refits run in this process). Refits are
        run once; :attr:`lr_tests` and the outputs use them."""
        chosen = [p for p in self.parameters if p.index in self._lr_indices(which)]
        missing = [p for p in chosen if p.index not in self._lr_found]
        restrictions = self._restrictions(missing)
        testable = {r.index for r in restrictions}
        for p in missing:
            if p.index not in testable:
                self._lr_found[p.index] = None
                if progress is not None:
                    progress(1)
        found = term_tests.lr_tests(self.model, self.maximum.x, self.loglik, self.covariance,
                                    self.start, self.held, restrictions,
                                    max_iterations=self.max_iterations, workers=workers,
                                    progress=progress)
        self._lr_found.update(found)

    @property
    def disagreeing(self) -> tuple[Parameter, ...]:
        """Parameters whose Wald and score tests disagree at the 5% level (one rejects, the
        other does not, or one cannot be computed): where the summary adds the
        likelihood-ratio test."""
        out = []
        for r in self._restrictions():
            p = next(q for q in self.parameters if q.index == r.index)
            wald = self._wald(p)[1]
            score = self.score_tests.get(p.index)
            if wald is None or score is None or (wald < _DISAGREE_AT) != (
                    score[1] < _DISAGREE_AT):
                out.append(p)
        return tuple(out)

    def lr_parameters(self, which: str = "all") -> tuple[Parameter, ...]:
        """The parameters whose likelihood-ratio test ``which`` ("auto", "all", "none") asks
        for (computing the score tests for "auto")."""
        indices = self._lr_indices(which)
        return tuple(p for p in self.parameters if p.index in indices)

    def _lr_indices(self, which: str) -> set[int]:
        """Parameter indices whose likelihood-ratio test ``which`` asks for."""
        if which not in LR_CHOICES:
            raise ParameterError(f"lr ({which!r}) must be one of {', '.join(LR_CHOICES)}")
        if which == "none":
            return set()
        if which == "all":
            return {p.index for p in self.parameters}
        return {p.index for p in self.disagreeing} | set(self._lr_found)

    def _lr_shown(self, which: str) -> dict[int, tuple[float, float] | None]:
        """The likelihood-ratio tests an output shows, computed if needed."""
        indices = self._lr_indices(which)
        if indices:
            self.run_lr_tests(which=which)
        return {i: self._lr_found.get(i) for i in indices}

    def _wald(self, p: Parameter) -> tuple[float | None, float | None]:
        from scipy import stats

        se = self._se(p)
        if p.null is None or se is None or se == 0:
            return None, None
        z = (self._estimate(p) - p.null) / se
        return z, float(2 * stats.norm.sf(abs(z)))

    def _tests(self, p: Parameter, lr: dict) -> dict:
        """The three tests of one parameter as plain numbers (None where not computed)."""
        z, pvalue = self._wald(p)
        score = self.score_tests.get(p.index)
        ratio = lr.get(p.index)
        return {"z": z, "p_value": pvalue,
                "score_chi2": None if score is None else score[0],
                "score_p_value": None if score is None else score[1],
                "lr_chi2": None if ratio is None else ratio[0],
                "lr_p_value": None if ratio is None else ratio[1]}

    def to_frame(self, lr: str = "all") -> pd.DataFrame:
        """Every parameter: part, category, term, estimate, se, null, z, p_value (Wald),
        score_chi2, score_p_value, lr_chi2, lr_p_value (``lr`` as in :meth:`summary`; by
        default every parameter's, one restricted fit each on first use)."""
        shown = self._lr_shown(lr)
        records = [{"part": p.part, "category": p.category, "term": p.name,
                    "estimate": self._estimate(p), "se": self._se(p), "null": p.null,
                    **self._tests(p, shown)} for p in self.parameters]
        frame = pd.DataFrame.from_records(records)
        if all(p.category is None for p in self.parameters):
            frame = frame.drop(columns="category")
        return frame

    # -- predictions -----------------------------------------------------------------------

    def _prevalence_parts(self, Z: np.ndarray):
        """Shares of the categories (rows, K) and their gradients (rows, K, parameters)."""
        model, x = self.model, self.maximum.x
        q = model.category_probabilities(x, Z)
        rho = 1.0 - float(model.gamma(x).sum())
        share = rho * q
        gradient = np.zeros(q.shape + (model.size,))
        for k, d in enumerate(model.free_categories):
            indicator = (np.arange(model.K) == d).astype(float)
            factor = rho * q * (indicator[None, :] - q[:, d:d + 1])       # (rows, K)
            gradient[:, :, k * model.q:(k + 1) * model.q] = factor[:, :, None] * Z[:, None, :]
        start = model.n_alpha + model.n_outcome
        for b in range(model.B):
            gradient[:, :, start + b] = -q
        return share, gradient

    def _labels(self) -> tuple[str, ...]:
        return self.design.category_labels

    def _interval_frame(self, share, variance, level, index=None) -> pd.DataFrame:
        z = _z(level)
        se = np.sqrt(np.maximum(variance, 0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            logit = np.log(share / (1 - share))
            spread = z * se / (share * (1 - share))
        low, high = _expit(logit - spread), _expit(logit + spread)
        return pd.DataFrame({"prevalence": share, "se": se, "ci_low": low, "ci_high": high},
                            index=index)

    def predict(self, newdata: pd.DataFrame | None = None, level: float = 0.95,
                category: str | None = None) -> pd.DataFrame:
        """Predicted prevalence of the true answer ``category`` (default yes) for each row of
        ``newdata`` (default: the rows fitted), with its standard error and interval.

        The interval is the delta-method interval of the log-odds, transformed
        back (RRreg's ``predict.RRlog(type = "attribute")``), so it stays in [0, 1].
        """
        category = self._category(category)
        if newdata is None:
            Z = self.state_matrix.values
            index = None
        else:
            if not isinstance(newdata, pd.DataFrame):
                raise ParameterError("newdata must be a pandas DataFrame of covariates")
            Z = self.state_matrix.for_data(newdata)
            index = newdata.index
        share, gradient = self._prevalence_parts(Z)
        c = self._labels().index(category)
        g = gradient[:, c, :]
        variance = np.einsum("ip,pq,iq->i", g, self.covariance, g)
        return self._interval_frame(share[:, c], variance, level, index)

    def prevalence(self, level: float = 0.95) -> pd.DataFrame:
        """The predicted prevalence of each category averaged over the rows fitted, with its
        delta-method standard error and interval (one row per category)."""
        Z = self.state_matrix.values
        shares, gradients = [], []
        for start in range(0, Z.shape[0], 65536):
            share, gradient = self._prevalence_parts(Z[start:start + 65536])
            shares.append(share.sum(axis=0))
            gradients.append(gradient.sum(axis=0))
        share = np.sum(shares, axis=0) / Z.shape[0]
        gradient = np.sum(gradients, axis=0) / Z.shape[0]
        variance = np.einsum("kp,pq,kq->k", gradient, self.covariance, gradient)
        return self._interval_frame(share, variance, level, pd.Index(self._labels(),
                                                                     name="category"))

    def _category(self, category: str | None) -> str:
        labels = self._labels()
        if category is None:
            if not self.design.is_binary:
                raise ParameterError(f"design {self.design.model!r} has categories "
                                     f"{', '.join(labels)}: name one")
            return YES
        if category not in labels:
            raise ParameterError(f"category {category!r} is not one of {', '.join(labels)}")
        return category

    # -- output ----------------------------------------------------------------------------

    def _coefficient_records(self, part: str, lr: dict) -> list[dict]:
        out = []
        for p in self.parameters:
            if p.part != part:
                continue
            record = {"term": p.name, "estimate": self._estimate(p), "se": self._se(p),
                      **self._tests(p, lr)}
            if p.category is not None:
                record = {"category": p.category, **record}
            out.append(record)
        return out

    def _tests_note(self, lr: str, shown: dict) -> dict:
        """Which tests an output shows, and why (the JSON's ``tests``)."""
        if lr == "all":
            why = "asked for every parameter"
        elif lr == "none":
            why = "not asked for"
        else:
            why = "where Wald and score disagree at the 5% level, or computed before"
        names = [p.label for p in self.parameters if p.index in shown and shown[p.index]]
        return {"wald": "every parameter", "score": "every parameter",
                "likelihood_ratio": why, "likelihood_ratio_for": names}

    def to_dict(self, level: float = 0.95, lr: str = "all") -> dict:
        """Plain numbers for JSON: the CLI's ``--format json``. Every parameter has its Wald
        and score tests; ``lr`` says whose likelihood-ratio test is computed (as in
        :meth:`summary`; by default all of them, None where not computed)."""
        shown = self._lr_shown(lr)
        nuisance = {}
        for p in self.parameters:
            if p.part != "nuisance":
                continue
            nuisance[p.name] = {"estimate": self._estimate(p), "se": self._se(p),
                                "null": p.null, **self._tests(p, shown),
                                "fixed": bool(self.held[p.index])}
        prevalence = self.prevalence(level)
        data = {
            "model": "logistic" if self.mode == "outcome" else "predictor",
            "formula": self.formula, "sensitive": self.sensitive, "family": self.family,
            "sensitive_formula": self.sensitive_formula, "design": self.design.spec(),
            "group": self.group, "groups": self.rows.group_sizes(),
            "n": self.n, "n_dropped": self.n_dropped,
            "dont_know": self.rows.dont_know_count(),
            "dont_know_left_out": self.rows.dont_know_left_out,
            "coefficients": self._coefficient_records("coefficients", shown),
        }
        if self.mode == "predictor":
            data["sensitive_coefficients"] = self._coefficient_records("sensitive", shown)
        data.update({
            "parameters": nuisance,
            "tests": self._tests_note(lr, shown),
            "prevalence": {c: {"estimate": float(r.prevalence), "se": float(r.se),
                               "ci_low": float(r.ci_low), "ci_high": float(r.ci_high)}
                           for c, r in prevalence.iterrows()},
            "level": level,
            "loglik": self.loglik, "df": self.k_params, "aic": self.aic, "bic": self.bic,
            "converged": self.converged, "iterations": self.iterations,
            "warnings": list(self.warnings),
        })
        return _finite(data)

    def summary(self, level: float = 0.95, lr: str = "auto") -> Summary:
        """The fit as R's ``summary()`` prints it, in 80 columns: Wald and score tests of
        every parameter, and likelihood-ratio tests (deltaG2) where ``lr`` asks: "auto" (where
        Wald and score disagree at the 5% level, and any already computed), "all", "none".
        A line under the tables says which tests are shown and why."""
        shown = self._lr_shown(lr)
        lines = []
        if self.mode == "outcome":
            lines.append(f"Logistic regression of the true answer to {self.sensitive!r} "
                         "(randomized response)")
        else:
            outcome = self.formula.split("~")[0].strip()
            kind = "Logistic" if self.family == "binomial" else "Linear (Gaussian)"
            lines.append(f"{kind} regression of {outcome!r} with the true "
                         f"answer to {self.sensitive!r} (randomized response) as a predictor")
        lines.append("")
        lines.append(f"Formula: {self.formula}")
        if self.sensitive_formula is not None:
            lines.append(f"Sensitive formula: {self.sensitive_formula}")
        lines.append(f"Design:  {self.design.describe()}")
        sizes = self.rows.group_sizes()
        if len(sizes) > 1:
            lines.append("Groups:  " + ", ".join(f"{g}: {n}" for g, n in sizes.items())
                         + (f" (column {self.group!r})" if self.group else ""))
        rows_line = f"Rows:    {self.n} used"
        extras = []
        if self.n_dropped:
            extras.append(f"{self.n_dropped} dropped for missing values")
        if self.rows.dont_know_count():
            extras.append(f"{self.rows.dont_know_count()} \"don't know\"")
        if self.rows.dont_know_left_out:
            extras.append(f"{self.rows.dont_know_left_out} \"don't know\" left out")
        lines.append(rows_line + (f" ({'; '.join(extras)})" if extras else ""))
        stars = False
        if self.mode == "outcome":
            blocks = self._blocks("coefficients", self._outcome_title(), shown)
        else:
            blocks = self._blocks("coefficients", "Coefficients (outcome model):", shown)
            blocks += self._blocks("sensitive", self._outcome_title(sensitive=True), shown)
        for title, table, starred in blocks:
            lines += ["", title, *table]
            stars |= starred
        nuisance = [p for p in self.parameters if p.part == "nuisance"]
        if nuisance:
            table, starred = self._table(nuisance, shown, nuisance=True)
            lines += ["", "Nuisance parameters:", *table]
            stars |= starred
            if any(p.boundary and (self.score_tests.get(p.index) or shown.get(p.index))
                   for p in nuisance):
                lines.append("(H0 on the boundary of the range: the p-values of Score and "
                             "deltaG2 are half the chi2(1) ones)")
        if stars:
            lines += ["---", _SIGNIF]
        lines.append("")
        lines += self._tests_lines(lr, shown)
        lines.append(f"Log-likelihood: {self.loglik:.3f} (df = {self.k_params}), "
                     f"AIC: {self.aic:.2f}, BIC: {self.bic:.2f}")
        prevalence = self.prevalence(level)
        for category, row in prevalence.iterrows():
            if self.design.is_binary and category != YES:
                continue
            lines.append(f"Average prevalence of {category!r}: {row.prevalence:.4f} "
                         f"(SE {row.se:.4f}; {level:.0%} CI {row.ci_low:.4f}, "
                         f"{row.ci_high:.4f})")
        steps = f"{self.iterations} iteration{'' if self.iterations == 1 else 's'}"
        if self.converged:
            lines.append(f"Converged after {steps}.")
        else:
            lines.append(f"NOT CONVERGED after {steps}: the estimates may be off.")
        for note in self.warnings:
            if "converge" not in note:
                lines.append(f"Note: {note}")
        return Summary("\n".join(_wrap(line) for line in lines) + "\n")

    def _tests_lines(self, lr: str, shown: dict) -> list[str]:
        """Which tests the tables show, and why."""
        tested = [p for p in self.parameters if p.null is not None and not self.held[p.index]]
        if not tested:
            return []
        if lr == "all":
            text = ("Tests: Wald z, score chi2 and likelihood ratio deltaG2 (1 df each) for "
                    "every parameter.")
        else:
            text = "Tests: Wald z and score chi2 (1 df) for every parameter; "
            if lr == "none":
                text += "no likelihood-ratio refits (not asked for)."
            else:
                disagree = {p.index for p in self.disagreeing}
                named = [p.name for p in tested if p.index in disagree]
                before = [p.name for p in tested if p.index in shown and p.index not in disagree]
                if named:
                    text += ("deltaG2 (likelihood ratio) where those two disagree at the 5% "
                             f"level: {', '.join(named)}")
                else:
                    text += "they agree at the 5% level everywhere, so no deltaG2"
                if before:
                    text += f"; deltaG2 computed before: {', '.join(before)}"
                text += ". --lr all (Python: summary(lr=\"all\")) adds deltaG2 everywhere."
        missing = [p.name for p in tested if self.score_tests.get(p.index) is None]
        lines = [text]
        if missing:
            lines.append(f"Score: none for {', '.join(missing)} (the observed information "
                         "at the null value is not positive there).")
        return lines

    def _outcome_title(self, sensitive: bool = False) -> str:
        model = "Sensitive-answer model" if sensitive else "Coefficients"
        if self.design.is_binary:
            return f"{model} (log-odds of a true 'yes'):"
        reference = self.design.category_labels[self.model.reference]
        return f"{model} (log-odds against category {reference!r}):"

    def _blocks(self, part: str, title: str, shown: dict
                ) -> list[tuple[str, list[str], bool]]:
        chosen = [p for p in self.parameters if p.part == part]
        categories = list(dict.fromkeys(p.category for p in chosen))
        out = []
        for category in categories:
            rows = [p for p in chosen if p.category == category]
            heading = title if category is None else f"{title[:-1]}, category {category!r}:"
            table, starred = self._table(rows, shown)
            out.append((heading, table, starred))
        return out

    def _table(self, chosen: list[Parameter], shown: dict, nuisance: bool = False
               ) -> tuple[list[str], bool]:
        """One table of parameters; deltaG2 columns when one of them has it."""
        with_lr = any(shown.get(p.index) is not None for p in chosen)
        estimates = [self._estimate(p) for p in chosen]
        ses = [self._se(p) for p in chosen]
        decimals = _decimals([abs(s) for s in ses if s] or [abs(e) for e in estimates])
        header = ["", "Estimate", "Std. Error"]
        if nuisance:
            header.append("H0")
        header += ["z value", "Pr(>|z|)", "Score", "Pr(>Score)"]
        if with_lr:
            header += ["deltaG2", "Pr(>deltaG2)"]
        header.append("")
        body = []
        starred = False
        for p, estimate, se in zip(chosen, estimates, ses, strict=True):
            z, pvalue = self._wald(p)
            score = self.score_tests.get(p.index)
            lr = shown.get(p.index)
            row = [p.name, f"{estimate:.{decimals}f}",
                   "fixed" if self.held[p.index] else number_text(se, decimals)]
            if nuisance:
                row.append(MISSING if p.null is None else f"{p.null:g}")
            row += [number_text(z, 3), p_value_text(pvalue),
                    number_text(None if score is None else score[0], 3),
                    p_value_text(None if score is None else score[1])]
            if with_lr:
                row += [number_text(None if lr is None else lr[0], 3),
                        p_value_text(None if lr is None else lr[1])]
            last = lr[1] if lr is not None else pvalue
            mark = _stars(last)
            starred |= bool(mark.strip())
            row.append(mark)
            body.append(row)
        return _columns(header, body), starred


def _none_nan(value: float | None) -> float:
    return math.nan if value is None else float(value)


def _decimals(values: list[float]) -> int:
    """Decimals that show the smallest value to 4 significant digits, at most 5 (RRreg
    rounds its tables to 5)."""
    small = min((v for v in values if v > 0), default=1.0)
    return int(min(5, max(2, 3 - math.floor(math.log10(small)))))


def _stars(p: float | None) -> str:
    if p is None:
        return ""
    for cut, mark in ((0.001, "***"), (0.01, "**"), (0.05, "*"), (0.1, ".")):
        if p < cut:
            return mark
    return ""


def _columns(header: list[str], body: list[list[str]]) -> list[str]:
    """A right-aligned table (row names left-aligned), split into blocks of at most 80
    columns as R's print does."""
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    name_width = widths[0]
    # the significance stars (the last column) stay with the p-value before them
    units = [[i] for i in range(1, len(header) - 2)] + [[len(header) - 2, len(header) - 1]]
    blocks, current, used = [], [], name_width
    for unit in units:
        need = sum(widths[i] + 1 for i in unit)
        if current and used + need > _WIDTH:
            blocks.append(current)
            current, used = [], name_width
        current += unit
        used += need
    blocks.append(current)
    lines = []
    for block in blocks:
        for row in [header, *body]:
            cells = [row[0].ljust(name_width)]
            cells += [row[i].rjust(widths[i]) if header[i] else row[i].ljust(widths[i])
                      for i in block]
            lines.append(" ".join(cells).rstrip())
    return lines


def _wrap(line: str) -> str:
    """Lines longer than 80 columns wrap; "Label:  value" lines indent under the value."""
    import re
    import textwrap

    if len(line) <= _WIDTH:
        return line
    label = re.match(r"^[A-Z][A-Za-z ]*:\s+", line)
    indent = " " * len(label.group(0)) if label else ""
    return "\n".join(textwrap.wrap(line, _WIDTH, subsequent_indent=indent))


def _finite(value):
    """JSON-safe: NaN and infinities become None."""
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    if isinstance(value, float | np.floating):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    return value
