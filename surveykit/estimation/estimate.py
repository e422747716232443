"""One estimator for every design: maximum likelihood, standard errors, intervals, fit.

:func:`estimate` takes a design and its counts and returns an
:class:`Estimate`: the maximum-likelihood shares of the true states on the
parameter space (:mod:`surveykit.estimation.likelihood`), the unconstrained
root of the score where it exists (``pi_hat``; Eq. 2 for the generalized
Warner, which can fall outside [0, 1]), nuisance parameters, standard errors,
a goodness-of-fit G2 test where the design is over-identified, and
confidence intervals (:meth:`Estimate.confidence_interval`).

Standard errors: for one-group yes/no designs the exact conditional variance
Var(pi_hat | M > 0) at pi_mle (:mod:`surveykit.estimation.binomial`); for every
other design the inverse observed information at the estimate, or, where the
estimate sits on the boundary of the parameter space, the inverse expected
(Fisher) information there (the observed one need not be positive there).

Intervals: Wilson's score interval with continuity correction for one-group
yes/no designs (its coverage is documented in docs/estimation.md), the
profile-likelihood (likelihood-ratio) interval otherwise.

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import dataclasses
import html
import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from surveykit.counts import Counts, check_count, plain_counts
from surveykit.designs.base import (
    DONT_KNOW,
    NO,
    YES,
    Design,
    Structure,
    given_design,
    identifiable,
    mechanism_deprecated,
)
from surveykit.errors import EstimationError, ParameterError
from surveykit.estimation import binomial
from surveykit.estimation.compliance import ALPHA, DontKnowCheck, dont_know_check
from surveykit.estimation.distributions import chi2_upper_quantile, chi2_upper_tail
from surveykit.estimation.likelihood import LikelihoodProblem, covariance, maximize
from surveykit.vocabulary import canonical_spelling, loss_fields, response_spellings

__all__ = [
    "CI_METHODS",
    "DEFAULT_CI_METHOD",
    "ConfidenceInterval",
    "Estimate",
    "align_counts",
    "estimate",
    "default_interval_method",
    "estimate_from_labels",
    "parameter_estimates",
    "state_index",
]

#: Interval methods: the binomial ones need a one-group yes/no design.
CI_METHODS: tuple[str, ...] = binomial.BINOMIAL_CI_METHODS
#: The default for one-group yes/no designs; other designs default to likelihood-ratio.
DEFAULT_CI_METHOD = "wilson-cc"
#: Interval methods every design has.
GENERAL_METHODS = ("likelihood-ratio", "wald")
# Newton steps allowed to the unconstrained root (pi_hat) from the constrained estimate.
_FREE_ITERATIONS = 50
# The signed root of the deviance where the profile likelihood is 0 (a finite stand-in for
# infinity, so that the root finder can work with it).
_FAR = 1e3


class ConfidenceInterval(NamedTuple):
    """A confidence interval for a share: ``low <= share <= high``."""

    low: float
    high: float


def parameter_estimates(design: Design, shares: np.ndarray, nuisance: np.ndarray,
                        identified: np.ndarray,
                        uncertainty: Callable[[int], dict[str, float | None]]
                        ) -> dict[str, dict[str, float | None]]:
    """A fit's behavioural shares (the cheaters' gamma) and nuisance parameters (the SLD's t)
    by name: ``{"estimate": ..., **uncertainty(index)}``, ``index`` the parameter's place in
    the fit's vector (the states, then the nuisance parameters); an unidentified nuisance
    parameter's estimate is None.

    >>> from surveykit.designs import StochasticLieDetector
    >>> sld = StochasticLieDetector(p=[0.2, 0.8])
    >>> parameter_estimates(sld, np.array([0.3, 0.7]), np.array([0.9]),
    ...                     np.array([True, True, True]), lambda index: {"index": index})
    {'t': {'estimate': 0.9, 'index': 2}}
    """
    out: dict[str, dict[str, float | None]] = {}
    s = design.structure
    for state, name in s.state_parameters.items():
        index = s.states.index(state)
        out[name] = {"estimate": float(shares[index]), **uncertainty(index)}
    for j, parameter in enumerate(s.nuisance):
        index = len(s.states) + j
        out[parameter.name] = {"estimate": float(nuisance[j]) if identified[index] else None,
                               **uncertainty(index)}
    return out


def state_index(design: Design, category: str | None) -> int:
    """The index of ``category`` among the design's states (default: yes, for yes/no designs),
    or an error naming the categories.

    >>> from surveykit.designs import Warner
    >>> state_index(Warner(p=0.7), None)
    0
    """
    states = design.state_labels
    if category is None:
        if not design.is_binary:
            raise ParameterError(f"design {design.model!r} has categories "
                                 f"{', '.join(design.category_labels)}: name one")
        category = YES
    if category not in states:
        raise ParameterError(f"category {category!r} is not one of "
                             f"{', '.join(design.category_labels)}")
    return states.index(category)


def default_interval_method(design: Design) -> str:
    """wilson-cc for one-group yes/no designs (documented coverage), likelihood-ratio (the
    profile-likelihood interval) for every other design."""
    return DEFAULT_CI_METHOD if binomial.binomial_map(design) else "likelihood-ratio"


@dataclass(frozen=True, kw_only=True, eq=False, repr=False)
class Estimate:
    """The estimate of the true shares from one question's counts under one design.

    Attributes
    ----------
    design:
        The design the answers went through (``mechanism``, its old name, is deprecated).
    counts:
        ``(groups, responses)`` counts, in the design's order.
    shares:
        Maximum-likelihood shares of every true state (``design.state_labels``)
        on the parameter space; they sum to 1.
    unconstrained:
        The unconstrained root of the score (shares may leave [0, 1]), or None
        where it does not exist.
    nuisance:
        Estimates of the nuisance parameters (``design.nuisance``).
    covariance, identified:
        Inverse observed information of (shares, nuisance), and which of them
        the data identify.
    loglik:
        The maximized log-likelihood (multinomial kernel, without constants).
    g2, df, fit_pvalue:
        Goodness of fit of the design to the counts (None where df = 0).
    variance:
        For yes/no designs, the variance of pi_mle (the exact conditional
        variance for one-group designs, the inverse information otherwise).
    """

    design: Design
    counts: np.ndarray = field(repr=False)
    shares: np.ndarray
    unconstrained: np.ndarray | None
    nuisance: np.ndarray
    covariance: np.ndarray = field(repr=False)
    identified: np.ndarray = field(repr=False)
    loglik: float
    g2: float | None
    df: int
    fit_pvalue: float | None
    converged: bool
    iterations: int
    variance: float | None
    warnings: tuple[str, ...] = ()

    def __repr__(self) -> str:
        if self.design.is_binary:
            numbers = (f"pi_hat={self.pi_hat!r}, pi_mle={self.pi_mle!r}, se={self.se!r}")
        else:
            numbers = "shares=" + repr({c: self.share(c) for c in self.design.category_labels})
        return f"Estimate(design={self.design!r}, n={self.n}, {numbers})"

    def __eq__(self, other: object) -> bool:
        # an estimate is a deterministic function of its design and counts
        if not isinstance(other, Estimate):
            return NotImplemented
        return self.design == other.design and np.array_equal(self.counts, other.counts)

    __hash__ = None  # type: ignore[assignment]

    # -- counts ----------------------------------------------------------------------------

    @property
    def mechanism(self) -> Design:
        """Deprecated: the :attr:`design` (the name surveykit 0.1 used)."""
        mechanism_deprecated("Estimate.mechanism")
        return self.design

    def _total(self, label: str) -> int:
        labels = self.design.response_labels
        return int(self.counts[:, labels.index(label)].sum()) if label in labels else 0

    @property
    def n(self) -> int:
        """Every response counted, "don't know" included."""
        return int(self.counts.sum())

    @property
    def yes(self) -> int:
        """Answers "yes", over all groups."""
        return self._total(YES)

    @property
    def no(self) -> int:
        """Answers "no", over all groups."""
        return self._total(NO)

    @property
    def dont_know(self) -> int:
        """Answers "don't know", over all groups."""
        return self._total(DONT_KNOW)

    # -- the estimates ---------------------------------------------------------------------

    def share(self, category: str | None = None) -> float:
        """The estimated share of ``category`` (default: yes, for yes/no designs)."""
        return float(self.shares[self._state_index(category)])

    def _state_index(self, category: str | None) -> int:
        return state_index(self.design, category)

    @property
    def pi_mle(self) -> float | None:
        """The maximum-likelihood share of "yes" on [0, 1] (yes/no designs; else None)."""
        return self.share() if self.design.is_binary else None

    @property
    def pi_hat(self) -> float | None:
        """The unconstrained estimate of the share of "yes" (Eq. 2 for the generalized
        Warner); may leave [0, 1]. None for k categories or where it does not exist."""
        if not self.design.is_binary or self.unconstrained is None:
            return None
        return float(self.unconstrained[self.design.state_labels.index(YES)])

    @property
    def se(self) -> float | None:
        """Standard error of pi_mle (yes/no designs), None where the data do not identify it."""
        if self.variance is None or not math.isfinite(self.variance):
            return None
        return math.sqrt(self.variance)

    def share_se(self, category: str | None = None) -> float | None:
        """Standard error of a category's share."""
        index = self._state_index(category)
        if self.design.is_binary and self.design.state_labels[index] == YES:
            return self.se
        if not self.identified[index]:
            return None
        return math.sqrt(max(0.0, float(self.covariance[index, index])))

    @property
    def parameters(self) -> dict[str, dict[str, float | None]]:
        """Nuisance parameters and behavioural shares: ``{"t": {"estimate": .., "se": ..}}``."""
        return parameter_estimates(self.design, self.shares, self.nuisance, self.identified,
                                   lambda index: {"se": self._se_at(index)})

    def _se_at(self, index: int) -> float | None:
        if not self.identified[index]:
            return None
        return math.sqrt(max(0.0, float(self.covariance[index, index])))

    # -- intervals -------------------------------------------------------------------------

    def default_method(self) -> str:
        """wilson-cc for one-group yes/no designs, likelihood-ratio otherwise."""
        return default_interval_method(self.design)

    def confidence_interval(self, level: float = 0.95, method: str | None = None,
                            category: str | None = None) -> ConfidenceInterval:
        """A confidence interval for a share at ``level``, always inside [0, 1].

        Methods (``None``: the design's default, :meth:`default_method`):

        * ``"wilson-cc"``: Wilson's score interval with continuity correction
          for theta = P(first answer | answered) given the number of answers,
          mapped linearly to pi (one-group yes/no designs); coverage stays at
          or above nominal, also near 0 and 1 (docs/estimation.md);
        * ``"wilson"``, ``"clopper-pearson"``: the plain score interval and the
          exact binomial interval, mapped the same way;
        * ``"likelihood-ratio"``: the profile-likelihood interval
          {v: 2 (l_max - l_profile(v)) <= chi2_1(level)}, for any design;
        * ``"wald"``: estimate +/- z se, clipped to [0, 1].

        >>> from surveykit.designs.warner import GeneralizedWarner
        >>> e = estimate(yes=30, no=50, dont_know=20, design=GeneralizedWarner(p=0.6, q=0.2))
        >>> low, high = e.confidence_interval(0.95)
        >>> 0 <= low < e.pi_mle < high <= 1
        True
        """
        level = binomial.check_level(level)
        method = self.default_method() if method is None else method
        index = self._state_index(category)
        mapping = binomial.binomial_map(self.design)
        if method not in CI_METHODS:
            raise ParameterError(f"method ({method!r}) must be one of {', '.join(CI_METHODS)}")
        if mapping is not None and self.design.state_labels[index] == YES:
            first, second = self.counts[0, 0], self.counts[0, 1]
            low, high = binomial.interval_arrays(yes=first, no=second, design=self.design,
                                                 level=level, method=method)
            return ConfidenceInterval(float(low), float(high))
        if mapping is not None and method not in GENERAL_METHODS:
            # the other share of a yes/no design: one minus the interval for yes
            low, high = self.confidence_interval(level, method)
            return ConfidenceInterval(1.0 - high, 1.0 - low)
        if method not in GENERAL_METHODS:
            raise ParameterError(
                f"method ({method!r}) needs a one-group yes/no design; design "
                f"{self.design.model!r} takes likelihood-ratio (the default) or wald")
        if method == "wald":
            share = float(self.shares[index])
            se = self.share_se(self.design.state_labels[index])
            if se is None:
                return ConfidenceInterval(0.0, 1.0)
            z = binomial.z_value(level)
            return ConfidenceInterval(max(0.0, share - z * se), min(1.0, share + z * se))
        return self._profile_interval(index, level)

    def _problem(self) -> LikelihoodProblem:
        return _problem(self.design.structure, _likelihood_counts(self.design, self.counts))

    def _profile_interval(self, index: int, level: float) -> ConfidenceInterval:
        """The profile-likelihood interval of share ``index``.

        Its ends solve r(v) = -z and r(v) = z for the signed root of the
        deviance, r(v) = sign(v - best) sqrt(2 (l_max - l_profile(v))), which is
        nearly linear in v, so Newton's method on r (safeguarded by bisection of
        the bracket, :func:`_bracketed_newton`) needs few profile fits: from the
        Wald end best -/+ z se, three or four. The slope of the profile comes
        with each fit (the envelope theorem: dl_profile/dv is the score of share
        v less that of the largest other share, the multiplier of the shares'
        sum). Where the profile problem is concave (two states, or no nuisance
        parameters), each fit starts from the previous one.
        """
        problem = self._problem()
        z = math.sqrt(chi2_upper_quantile(1 - level, 1))
        best = float(self.shares[index])
        k = len(self.shares)
        others = [s for s in range(k) if s != index]
        warm = k <= 2 or not self.design.nuisance
        last = [np.concatenate([self.shares, self.nuisance])]
        known: dict[float, tuple[float, float]] = {best: (0.0, math.nan)}

        def signed_root(value: float) -> tuple[float, float]:
            """r(value) and its slope dr/dv (nan where there is none)."""
            if value in known:
                return known[value]
            fit = None
            if warm:
                start = last[0].copy()
                rest = float(start[others].sum())
                start[others] = start[others] * ((1 - value) / rest) if rest > 0 \
                    else (1 - value) / len(others)
                start[index] = value
                fit = maximize(problem, fixed={index: value}, start=start)
            if fit is None or not math.isfinite(fit.loglik):
                # a warm start can sit where an observed answer is impossible: start afresh
                fit = maximize(problem, fixed={index: value})
            if not math.isfinite(fit.loglik):
                known[value] = (math.copysign(_FAR, value - best), math.nan)
                return known[value]
            x = np.concatenate([fit.pi, fit.eta])
            last[0] = x
            root = math.copysign(math.sqrt(max(0.0, 2 * (self.loglik - fit.loglik))),
                                 value - best)
            slope = math.nan
            if root != 0 and value < 1:
                gradient, _ = problem.derivatives(x)
                pivot = max(others, key=lambda s: fit.pi[s])
                slope = -float(gradient[index] - gradient[pivot]) / root
            known[value] = (root, slope)
            return known[value]

        se = self._se_at(index)
        if best <= 0 or signed_root(0.0)[0] >= -z:
            low = 0.0
        else:
            low = _bracketed_newton(lambda v: _shifted(signed_root(v), z), 0.0, best,
                                    None if se is None else best - z * se)
        last[0] = np.concatenate([self.shares, self.nuisance])
        if best >= 1 or signed_root(1.0)[0] <= z:
            high = 1.0
        else:
            high = _bracketed_newton(lambda v: _shifted(signed_root(v), -z), best, 1.0,
                                     None if se is None else best + z * se)
        return ConfidenceInterval(float(low), float(high))

    # -- checks ----------------------------------------------------------------------------

    def dont_know_check(self, alpha: float = ALPHA) -> DontKnowCheck:
        """The don't-know compliance test, as the report runs it: the "don't know" answers
        among all answers against the design's share (exact binomial test; see
        :mod:`surveykit.estimation.compliance`).

        >>> from surveykit.designs.warner import GeneralizedWarner
        >>> e = estimate(yes=643, no=924, dont_know=388, design=GeneralizedWarner(p=0.6, q=0.2))
        >>> round(e.dont_know_check().pvalue, 3)
        0.888
        """
        return dont_know_check(self.dont_know, self.n, self.design.designed_dont_know,
                               alpha=alpha)

    def _repr_html_(self) -> str:
        """The estimate as an HTML table, for Jupyter."""
        data = self.to_dict()
        cell = html.escape
        level = f"{data['ci_level']:.0%}"
        rows = "".join(
            f"<tr><td>{cell(entry['category'])}</td><td>{_html_number(entry['estimate'])}</td>"
            f"<td>{_html_number(entry['se'])}</td><td>[{_html_number(entry['ci_low'])}, "
            f"{_html_number(entry['ci_high'])}]</td></tr>"
            for entry in data["estimates"])
        facts = [("design", cell(self.design.describe()))]
        groups = self.design.group_names
        for g, group in enumerate(groups):
            # a multi-group design's answers per group: pooled, they identify nothing
            row = self.counts[g] if len(groups) > 1 else self.counts.sum(axis=0)
            answers = ", ".join(f"{cell(label)} {n}" for label, n in
                                zip(self.design.response_labels, row, strict=True))
            name = "answers" if len(groups) == 1 else f"answers, group {g + 1}" + (
                f" ({cell(group)})" if group != str(g + 1) else "")
            facts.append((name, f"{answers} (n = {int(row.sum()):,})"))
        facts += [(f"parameter {cell(name)}", f"{_html_number(value['estimate'])} "
                                              f"(std. error {_html_number(value['se'])})")
                  for name, value in data["parameters"].items()]
        check = self.dont_know_check()
        if check.observed is not None and (check.designed or self.dont_know):
            facts.append(("don't know", f"{check.observed:.1%} observed, "
                                        f"{check.designed:.1%} designed "
                                        f"(p = {check.pvalue:.3g})"))
        facts.append(("privacy loss", f"Shafer {_html_number(self.design.epsilon_shafer)}, "
                                      f"Walley {_html_number(self.design.epsilon_walley)}"))
        facts += [("warning", cell(warning)) for warning in data["warnings"]]
        head = "".join(f"<tr><th style=\"text-align:left\">{cell(k)}</th>"
                       f"<td colspan=\"3\" style=\"text-align:left\">{v}</td></tr>"
                       for k, v in facts)
        return ("<table class=\"surveykit-estimate\">"
                f"<thead>{head}<tr><th>category</th><th>estimate</th><th>std. error</th>"
                f"<th>{level} CI ({cell(data['ci_method'])})</th></tr></thead>"
                f"<tbody>{rows}</tbody></table>")

    # -- output ----------------------------------------------------------------------------

    def to_dict(self, level: float = 0.95, method: str | None = None) -> dict:
        """Plain numbers for JSON and pandas (the CLI's ``--format json`` keys).

        Yes/no designs keep surveykit 0.1's keys (``yes``, ``no``,
        ``dont_know``, ``pi_hat``, ``pi_mle``, ``se``, ``ci_low``, ...);
        k-category designs list ``estimates`` per category. Infinite privacy
        losses (no protection) become ``None``.
        """
        method = self.default_method() if method is None else method
        design = self.design
        data: dict[str, object] = {"n": self.n}
        binary = design.is_binary
        if binary:
            data.update(yes=self.yes, no=self.no, dont_know=self.dont_know)
        else:
            data["dont_know"] = self.dont_know
        if design.flat_parameters:
            data.update(design.parameters())
        estimates = []
        for category in design.category_labels:
            low, high = self.confidence_interval(level, method, category)
            index = design.state_labels.index(category)
            estimates.append({
                "category": category, "estimate": float(self.shares[index]),
                "pi_hat": (float(self.unconstrained[index])
                           if self.unconstrained is not None else None),
                "se": self.share_se(category), "ci_low": low, "ci_high": high})
        yes_entry = estimates[design.category_labels.index(YES)] if binary else None
        data.update({
            "pi_hat": self.pi_hat,
            "pi_mle": self.pi_mle,
            "variance": self.variance if binary else None,
            "se": self.se if binary else None,
            "ci_low": yes_entry["ci_low"] if yes_entry else None,
            "ci_high": yes_entry["ci_high"] if yes_entry else None,
            "ci_level": level,
            "ci_method": method,
            **loss_fields("epsilon_shafer", design.epsilon_shafer),
            **loss_fields("epsilon_walley", design.epsilon_walley),
        })
        if design.nuisance:
            values = {p.name: float(v) for p, v in zip(design.nuisance, self.nuisance,
                                                        strict=True)}
            # a nuisance value the data do not identify (t when pi = 0) is only where the
            # search started: there is no loss "at the estimate" then
            known = bool(np.all(self.identified[len(design.state_labels):]))
            for semantics in ("shafer", "walley"):
                data.update(loss_fields(f"epsilon_{semantics}_at_estimate",
                                        design.privacy_loss(semantics, values) if known
                                        else None))
        data.update({
            "design": design.spec(),
            "counts": {group: {label: int(self.counts[g, r])
                               for r, label in enumerate(design.response_labels)}
                       for g, group in enumerate(design.group_names)},
            "estimates": estimates,
            "parameters": self.parameters,
            "loglik": self.loglik,
            "converged": self.converged,
            "iterations": self.iterations,
        })
        check = self.dont_know_check()
        data.update(check.to_dict())
        data["warnings"] = [*self.warnings, *([check.warning] if check.warning else [])]
        if self.g2 is not None:
            data["fit"] = {"g2": self.g2, "df": self.df, "p_value": self.fit_pvalue}
        return data


# The profile interval's ends are found to this width in the share (scipy's brentq with
# xtol = rtol = 1e-12 did it before; both agree to a few units of 1e-12).
_INTERVAL_TOLERANCE = 1e-12
_INTERVAL_STEPS = 200


def _shifted(pair: tuple[float, float], by: float) -> tuple[float, float]:
    return pair[0] + by, pair[1]


def _bracketed_newton(function: Callable[[float], tuple[float, float]], low: float,
                      high: float, guess: float | None) -> float:
    """The root of an increasing ``function`` (value, slope) with function(low) < 0 <
    function(high): Newton's steps from ``guess`` while they stay inside the bracket that
    the values so far leave, a bisection of it otherwise (Press et al., Numerical Recipes,
    Sec. 9.4, rtsafe). Stops when a step or the bracket is below 1e-12."""
    value = guess if guess is not None and low < guess < high else (low + high) / 2
    for _ in range(_INTERVAL_STEPS):
        f, slope = function(value)
        if f == 0:
            return value
        if f < 0:
            low = value
        else:
            high = value
        if high - low <= _INTERVAL_TOLERANCE:
            return (low + high) / 2
        step = f / slope if math.isfinite(slope) and slope > 0 else math.nan
        following = value - step
        if not low < following < high:  # Newton leaves the bracket (or has no slope)
            following = (low + high) / 2
        elif abs(step) <= _INTERVAL_TOLERANCE:
            return following
        value = following
    return (low + high) / 2


def _html_number(value: float | None) -> str:
    """4 decimals; "n/a" where there is no number, "inf" for no protection."""
    if value is None:
        return "n/a"
    return "inf" if math.isinf(value) else f"{value:.4f}"


# -- counts against a design -----------------------------------------------------------------


def align_counts(design: Design, counts: Counts | Mapping) -> np.ndarray:
    """Counts as a (groups, responses) array in the design's order, with labels checked.

    Groups may be given by number (1, 2, ...) or name; responses by the
    design's labels in any case (and, for yes/no designs, y/n/1/0/true/false).
    ``counts`` may be pandas (:func:`~surveykit.counts.plain_counts`).
    """
    if not isinstance(counts, Counts):
        counts = plain_counts(counts)
        nested = bool(counts) and all(isinstance(v, Mapping) for v in counts.values())
        groups = design.group_names
        if not nested and len(groups) > 1:
            raise ParameterError(
                f"counts ({dict(counts)!r}) are one group's; design {design.model!r} has "
                f"{len(groups)} groups ({', '.join(groups)}): give counts per group, e.g. "
                "{1: {'yes': 60, 'no': 40}, 2: {'yes': 35, 'no': 65}}")
        counts = Counts.from_mapping(counts) if nested else Counts.single(counts)
    spellings = response_spellings(design.response_labels)
    array = np.zeros((len(design.group_names), len(design.response_labels)), dtype=np.int64)
    for group, label, n in counts:
        g = design.group_index(group) if len(design.group_names) > 1 or group != "1" \
            else 0
        response = spellings.get(canonical_spelling(label))
        if response is None:
            raise ParameterError(
                f"response {label!r} is not an answer of design {design.model!r}; its answers "
                f"are {', '.join(design.response_labels)}")
        array[g, design.response_labels.index(response)] += n
    return array


def _problem(structure: Structure, counts: np.ndarray) -> LikelihoodProblem:
    low = np.array([p.low for p in structure.nuisance])
    high = np.array([p.high for p in structure.nuisance])
    return LikelihoodProblem(structure.base, structure.slopes, counts, low, high)


def _possible(structure: Structure) -> np.ndarray:
    """(groups, responses): whether a response can happen at all in a group."""
    corners = list(itertools.product(*[(p.low, p.high) for p in structure.nuisance])) or [()]
    possible = np.zeros(structure.base.shape[:2], dtype=bool)
    for corner in corners:
        eta = np.asarray(corner, dtype=float)
        matrix = structure.base + np.tensordot(eta, structure.slopes, axes=1) if eta.size \
            else structure.base
        possible |= np.any(matrix > 0, axis=2)
    return possible


def _likelihood_counts(design: Design, counts: np.ndarray) -> np.ndarray:
    """The counts that enter the likelihood: impossible "don't know" answers are left out."""
    possible = _possible(design.structure)
    return np.where(possible, counts, 0)


def estimate(*, design: Design | None = None, counts: Counts | Mapping | None = None,
             yes: int | None = None, no: int | None = None, dont_know: int | None = None,
             mechanism: Design | None = None) -> Estimate:
    """Estimate the true shares from counts under any design.

    Either ``design`` and ``counts`` (``{group: {response: n}}``, or
    ``{response: n}`` for a one-group design, or pandas: a Series indexed by response
    or by (group, response), a DataFrame with a row per group and a column per
    response; see :func:`~surveykit.counts.plain_counts`), or, for a one-group yes/no
    design, ``design`` with ``yes``, ``no`` and ``dont_know`` (surveykit 0.1's form; its
    ``mechanism=`` keyword still works, with a DeprecationWarning).

    >>> from surveykit.designs.warner import GeneralizedWarner
    >>> e = estimate(yes=30, no=50, dont_know=20, design=GeneralizedWarner(p=0.6, q=0.2))
    >>> round(e.pi_hat, 6)  # (50*0.2 - 30*0.6) / (80 * (0.2 - 0.6)), Eq. 2
    0.25
    >>> from surveykit.designs import StochasticLieDetector
    >>> sld = estimate(design=StochasticLieDetector(p=[0.1667, 0.8333]),
    ...                counts={1: {"yes": 60, "no": 40}, 2: {"yes": 35, "no": 65}})
    >>> round(sld.pi_mle, 4), round(sld.parameters["t"]["estimate"], 4)
    (0.625, 0.46)
    """
    design = given_design(design, mechanism, "estimate()")
    if not isinstance(design, Design):
        raise ParameterError(
            f"design ({design!r}) must be a design, e.g. GeneralizedWarner(p=0.6, q=0.2) or "
            "make_design(\"sld\", p=[0.1667, 0.8333])")
    if counts is None:
        if yes is None or no is None:
            raise ParameterError("give counts, or yes, no and dont_know")
        if not design.is_binary or len(design.group_names) != 1:
            raise ParameterError(
                f"yes/no/dont_know counts fit a one-group yes/no design; design "
                f"{design.model!r} needs counts per group and response")
        counts = {YES: check_count("yes", yes), NO: check_count("no", no),
                  DONT_KNOW: check_count("dont_know", 0 if dont_know is None else dont_know)}
    elif yes is not None or no is not None or dont_know is not None:
        raise ParameterError("give counts or yes/no/dont_know, not both")
    return fit_counts(design, align_counts(design, counts))


def fit_counts(design: Design, counts: np.ndarray) -> Estimate:
    """The estimate from counts already in the design's (groups, responses) order."""
    structure = design.structure
    counts = np.asarray(counts, dtype=np.int64)
    warnings: list[str] = []
    possible = _possible(structure)
    impossible = (counts > 0) & ~possible
    for g, r in zip(*np.nonzero(impossible), strict=True):
        label = structure.responses[r]
        where = f" in group {structure.groups[g]}" if len(structure.groups) > 1 else ""
        if label != DONT_KNOW:
            raise EstimationError(
                f"{counts[g, r]} answer(s) {label!r}{where}, which design "
                f"{design.model!r} never gives; check the design's parameters or the answers")
        warnings.append(
            f"{counts[g, r]} \"don't know\" answer(s){where} although the design has no "
            "don't-know branch: they are left out of the estimate (respondents who opted out)")
    used = np.where(possible, counts, 0)
    _check_informative(design, used)
    problem = _problem(structure, used)
    best = maximize(problem)
    k = len(structure.states)
    at_bound = bool(np.any(best.pi <= 0)) or any(
        v <= p.low or v >= p.high for v, p in zip(best.eta, structure.nuisance, strict=True))
    unconstrained = _unconstrained(design, problem, best, used, at_bound)
    best, unconstrained = _exact_at_the_edges(design, best, unconstrained, used)
    x = np.concatenate([best.pi, best.eta])
    cov, identified = covariance(problem, x, expected=at_bound)
    for j, parameter in enumerate(structure.nuisance):
        if not identified[k + j]:
            warnings.append(f"{parameter.name} ({parameter.description}) cannot be estimated "
                            "from these answers (e.g. when nobody has the trait)")
    if not best.converged:
        warnings.append("the maximum-likelihood search did not converge; the estimate may be off")
    g2, df, pvalue = _goodness_of_fit(problem, structure, used, possible, x)
    variance = None
    if design.is_binary:
        yes = structure.states.index(YES)
        if binomial.binomial_map(design) is not None:
            variance = binomial.conditional_variance(
                design, pi=float(np.clip(best.pi[yes], 0, 1)), n=int(used.sum()))
        elif identified[yes]:
            variance = max(0.0, float(cov[yes, yes]))
    return Estimate(design=design, counts=_readonly(counts), shares=_readonly(best.pi),
                    unconstrained=None if unconstrained is None else _readonly(unconstrained),
                    nuisance=_readonly(best.eta), covariance=_readonly(cov),
                    identified=_readonly(identified), loglik=best.loglik, g2=g2, df=df,
                    fit_pvalue=pvalue, converged=best.converged, iterations=best.iterations,
                    variance=variance, warnings=tuple(warnings))


# Shares this close to 0 or 1 are 0 or 1: round-off of the fit, not information (an estimate
# moves by about 1/n per answer, far more than this for any survey).
_EDGE = 1e-12


def _exact_at_the_edges(design: Design, best, unconstrained: np.ndarray | None,
                        counts: np.ndarray):
    """Shares without round-off at 0 and 1 (and never -0.0).

    One-group yes/no designs get pi_hat in exact arithmetic
    (:meth:`surveykit.estimation.binomial.BinomialMap.exact_pi`) and pi_mle, its
    clip to [0, 1]; elsewhere shares within 1e-12 of 0 or 1 become 0 or 1.
    """
    mapping = binomial.binomial_map(design)
    if mapping is not None and counts[0, 0] + counts[0, 1] > 0:
        exact = mapping.exact_pi(int(counts[0, 0]), int(counts[0, 1]))
        clipped = min(max(exact, Fraction(0)), Fraction(1))
        yes = design.state_labels.index(YES)
        free = np.empty(2)
        free[yes], free[1 - yes] = float(exact), float(1 - exact)
        shares = np.empty(2)
        shares[yes], shares[1 - yes] = float(clipped), float(1 - clipped)
        return dataclasses.replace(best, pi=shares), free

    def snap(values: np.ndarray) -> np.ndarray:
        values = np.array(values, dtype=float)
        values[np.abs(values) <= _EDGE] = 0.0
        values[np.abs(values - 1) <= _EDGE] = 1.0
        return values

    return (dataclasses.replace(best, pi=snap(best.pi)),
            None if unconstrained is None else snap(unconstrained))


def _unconstrained(design: Design, problem: LikelihoodProblem, best, counts: np.ndarray,
                   at_bound: bool) -> np.ndarray | None:
    """The shares without the [0, 1] constraints (pi_hat), where they exist.

    For one-group yes/no designs this is Eq. (2): the root of the score,
    theta_hat = N(r0)/M mapped to pi, which may leave [0, 1] (it exists
    whenever M > 0). Elsewhere it is the maximum of the likelihood without
    bounds, found from the constrained estimate; None where there is none.
    """
    if not at_bound:
        return best.pi.copy()
    mapping = binomial.binomial_map(design)
    if mapping is not None:
        yes = design.state_labels.index(YES)
        pi = float(mapping.to_pi(counts[0, 0] / (counts[0, 0] + counts[0, 1]), clip=False))
        shares = np.empty(2)
        shares[yes], shares[1 - yes] = pi, 1.0 - pi
        return shares
    slopes = _slopes_on_products(design.structure.slopes)
    if slopes is not None:
        # mu is linear in (pi, a) with a_j = pi_s eta_j: a concave problem, which Newton
        # solves from anywhere (in (pi, eta) the SLD's path to pi < 0 crosses pi = 0, where
        # t is not identified, and Newton wanders off)
        structure = design.structure
        linear = LikelihoodProblem(structure.base, slopes, counts,
                                   np.array([p.low for p in structure.nuisance]),
                                   np.array([p.high for p in structure.nuisance]))
        free = maximize(linear, constrained=False, max_iterations=_FREE_ITERATIONS)
    else:
        # From the constrained estimate Newton reaches an interior root in a handful of
        # steps; a search still going after 50 is running off to infinity or crawling to
        # the edge of the cell probabilities, where no root exists.
        free = maximize(problem, constrained=False, start=np.concatenate([best.pi, best.eta]),
                        max_iterations=_FREE_ITERATIONS)
    used = slopes if slopes is not None else design.structure.slopes
    if free.converged and np.all(np.isfinite(free.pi)) and _is_distribution(
            design.structure.base, used, free):
        return free.pi
    return None


def _is_distribution(base: np.ndarray, slopes: np.ndarray, fit) -> bool:
    """Whether a fit's response probabilities are probabilities in every group: without
    bounds, answers that all fall in one cell let the free search run off to infinity
    (the unobserved cells' probabilities go negative), and that is no root of the score."""
    matrix = base + np.tensordot(fit.eta, slopes, axes=1) if slopes.shape[0] else base
    cells = matrix @ fit.pi
    return bool(np.all(np.isfinite(cells)) and cells.min() >= -1e-9 and cells.max() <= 1 + 1e-9)


def _slopes_on_products(slopes: np.ndarray) -> np.ndarray | None:
    """Slopes that make the cell probabilities linear in (pi, a_j = pi_s eta_j), or None.

    Where nuisance parameter j moves one state's column s only (the SLD's t
    moves the carriers'), or every column alike (the unrelated question's
    innocuous share), eta_j P[:, :, s] pi_s = a_j P[:, :, s] = a_j P[:, :, s] sum(pi):
    the same slope in every column, with a_j in place of eta_j.
    """
    out = np.empty_like(slopes)
    for j, slope in enumerate(slopes):
        moved = [s for s in range(slope.shape[-1]) if np.any(slope[..., s] != 0)]
        if not moved:
            out[j] = 0.0
            continue
        column = slope[..., moved[0]]
        if len(moved) > 1 and not all(np.array_equal(slope[..., s], column)
                                      for s in range(slope.shape[-1])):
            return None
        out[j] = column[..., None]
    return out


def _readonly(array: np.ndarray) -> np.ndarray:
    out = np.array(array, copy=True)
    out.setflags(write=False)
    return out


def _check_informative(design: Design, counts: np.ndarray) -> None:
    """Refuse counts that cannot identify the shares: no informative answer, or groups
    without answers that the design needs."""
    structure = design.structure
    informative = np.ptp(structure.base, axis=2) > 0
    if structure.nuisance:
        informative |= np.any(structure.slopes != 0, axis=(0, 3))
    if not np.any(counts[informative] > 0):
        what = "yes/no answers" if design.is_binary else "answers other than don't know"
        raise EstimationError(f"no {what}: pi cannot be estimated")
    # "don't know" (the last response) says nothing about the shares: a group that answered
    # only "don't know" is as good as absent
    present = counts[:, :-1].sum(axis=1) > 0
    if not present.all():
        sub = Structure(
            states=structure.states, categories=structure.categories,
            responses=structure.responses, groups=tuple(
                g for g, keep in zip(structure.groups, present, strict=True) if keep),
            base=structure.base[present], slopes=structure.slopes[:, present],
            nuisance=structure.nuisance, protocol=structure.protocol,
            privacy_states=structure.privacy_states, state_parameters=structure.state_parameters)
        if not identifiable(sub):
            missing = [g for g, keep in zip(structure.groups, present, strict=True) if not keep]
            raise EstimationError(
                f"design {design.model!r} needs answers from every group to estimate pi; group "
                f"{', '.join(missing)} has none (other than \"don't know\")")


def _goodness_of_fit(problem: LikelihoodProblem, structure: Structure, counts: np.ndarray,
                     possible: np.ndarray, x: np.ndarray):
    """G2 = 2 sum n log(n / expected) over the groups with answers, with its degrees of freedom."""
    present = counts.sum(axis=1) > 0
    cells = int(sum(possible[g].sum() - 1 for g in range(len(present)) if present[g]))
    parameters = len(structure.states) - 1 + len(structure.nuisance)
    df = cells - parameters
    if df <= 0:
        return None, max(df, 0), None
    matrix = structure.base + np.tensordot(x[len(structure.states):], structure.slopes, axes=1) \
        if structure.nuisance else structure.base
    mu = matrix @ x[:len(structure.states)]
    expected = counts.sum(axis=1, keepdims=True) * mu
    observed = counts > 0
    g2 = float(2 * np.sum(counts[observed] * np.log(counts[observed] / expected[observed])))
    g2 = max(g2, 0.0)
    return g2, df, chi2_upper_tail(g2, df)


def estimate_from_labels(labels, *, design: Design | None = None, mechanism: Design | None = None,
                         groups=None) -> Estimate:
    """Estimate from raw responses: an array of response labels (and of groups).

    ``labels`` is a list, a NumPy array or a pandas Series of the design's
    response labels, read as imports read them (any case and spacing, "Don't
    know" and "dk"; for yes/no designs also y/n/1/0/true/false as text), or of
    integer codes into ``design.response_labels`` (0 yes, 1 no, 2 don't know
    for yes/no designs). Missing answers (None, NaN, pandas' NA, empty text)
    are left out, as empty cells are on import; they are never "don't know".
    ``groups`` (for multi-group designs) holds group numbers 1, 2, ... or
    names, one per label. Counting is one ``numpy.bincount``.

    >>> from surveykit.designs.warner import GeneralizedWarner
    >>> estimate_from_labels(["Yes", "no", None, "Don't know"],
    ...                      design=GeneralizedWarner(p=0.6, q=0.2)).n
    3
    """
    design = given_design(design, mechanism, "estimate_from_labels()")
    if not isinstance(design, Design):
        raise ParameterError(f"design ({design!r}) must be a design")
    responses = design.response_labels
    array = _as_array(labels, "labels")
    # integer codes cannot be missing: no mask, and no copy of the responses through one
    present = None if array.dtype.kind in "iub" else ~_missing(array)
    group_array = None if groups is None else _as_array(groups, "groups")
    if group_array is not None:
        if group_array.shape != array.shape:
            raise ParameterError(
                f"groups has {group_array.size} entries for {array.size} responses")
        absent = _missing(group_array) if group_array.dtype.kind not in "iub" else None
        if absent is not None and present is not None:
            absent &= present
        if absent is not None and np.any(absent):
            raise ParameterError(
                f"groups: response {int(np.argmax(absent)) + 1} has no group; give the group "
                "of every response that is not missing")
        if present is not None:
            group_array = group_array[present]
    codes = _codes(_as_codes_or_labels(array if present is None else array[present]),
                   responses, design.model)
    size = len(responses)
    if group_array is None:
        if len(design.group_names) > 1:
            raise ParameterError(
                f"design {design.model!r} has {len(design.group_names)} groups: give groups, "
                "the group of each response")
        counts = _count_codes(codes.ravel(), size)[None, :]
    else:
        group_codes = _group_codes(group_array, design)
        # group * size + response in the smallest integer type that holds it: with int8
        # codes the combination costs two passes over bytes, not three over int64s
        cells = size * len(design.group_names)
        dtype = next(t for t in (np.int8, np.int16, np.int32, np.int64)
                     if cells - 1 <= np.iinfo(t).max)
        combined = group_codes.astype(dtype)
        combined *= size
        combined += codes.astype(dtype, copy=False)
        counts = _count_codes(combined.ravel(), cells).reshape(len(design.group_names), size)
    return fit_counts(design, counts)


# Up to this many cells, bytes are counted one cell at a time (a comparison and a count of
# true bytes, both vectorized) rather than by numpy.bincount, which first copies its input
# to 64-bit integers: for 10^7 one-byte codes in six cells about half the time.
_COMPARE_CELLS = 16


def _count_codes(codes: np.ndarray, cells: int) -> np.ndarray:
    """How many of ``codes`` (integers in 0 .. cells - 1) are 0, 1, ..., cells - 1.

    >>> _count_codes(np.array([0, 2, 2, 1, 2], dtype=np.int8), 4).tolist()
    [1, 1, 3, 0]
    """
    if codes.dtype.itemsize == 1 and cells <= _COMPARE_CELLS:
        equal = np.empty(codes.shape, dtype=bool)
        counts = np.empty(cells, dtype=np.int64)
        for cell in range(cells):
            np.equal(codes, cell, out=equal)
            counts[cell] = np.count_nonzero(equal)
        return counts
    return np.bincount(codes, minlength=cells)[:cells]


def _as_array(values, name: str) -> np.ndarray:
    """A one-dimensional array of a list, tuple, NumPy array or pandas Series/Categorical."""
    if isinstance(values, str | bytes):
        raise ParameterError(f"{name} ({values!r}) must be a list, array or Series of "
                             "answers, not one text")
    dtype = getattr(values, "dtype", None)
    # pandas' extension arrays (Categorical, nullable Int64, string) become objects
    array = np.asarray(values, dtype=object if dtype is not None
                       and not isinstance(dtype, np.dtype) else None)
    if array.ndim != 1:
        array = array.ravel()
    return array


def _is_missing(value: object) -> bool:
    if value is None:
        return True
    if isinstance(value, float | np.floating):
        return math.isnan(value)
    if isinstance(value, str):
        return not value.strip()
    # pandas.NA and pandas.NaT, without importing pandas
    return type(value).__name__ in ("NAType", "NaTType")


def _missing(array: np.ndarray) -> np.ndarray:
    """True where an answer is missing: None, NaN, pandas' NA, empty text."""
    if array.dtype.kind == "f":
        return np.isnan(array)
    if array.dtype.kind == "O":
        return np.fromiter((_is_missing(v) for v in array), dtype=bool, count=array.size)
    if array.dtype.kind == "U":
        return np.char.strip(array) == ""
    return np.zeros(array.shape, dtype=bool)


def _as_codes_or_labels(array: np.ndarray) -> np.ndarray:
    """Whole numbers as integer codes (a numeric column with missing values is float);
    anything else as text labels."""
    if array.dtype.kind == "f":
        if not np.all(np.equal(np.mod(array, 1), 0)):
            bad = array[np.mod(array, 1) != 0][0]
            raise ParameterError(f"label {bad!r} is not a whole number (a code) or a label")
        return array.astype(np.int64)
    if array.dtype.kind == "O":
        numbers = [isinstance(v, int | np.integer | float | np.floating)
                   and not isinstance(v, bool | np.bool_) for v in array]
        if array.size and all(numbers):
            return _as_codes_or_labels(array.astype(float))
        if any(numbers):
            raise ParameterError("the labels mix numbers (codes) and texts; give one kind")
        return np.array([str(v) if not isinstance(v, bool | np.bool_) else
                         ("true" if v else "false") for v in array], dtype=object)
    return array


def _codes(array: np.ndarray, responses: tuple[str, ...], model: str) -> np.ndarray:
    if array.dtype.kind in "iu":
        codes = array
        if codes.size and (codes.min() < 0 or codes.max() >= len(responses)):
            bad = codes[(codes < 0) | (codes >= len(responses))][0].item()
            raise ParameterError(
                f"label {bad!r} is not an answer of design {model!r}; its answers are "
                f"{', '.join(responses)} (or the codes 0 to {len(responses) - 1})")
        return codes
    codes = np.full(array.shape, -1, dtype=np.int8)
    for i, label in enumerate(responses):
        codes[array == label] = i
    unmatched = codes < 0
    if np.any(unmatched):
        spellings = response_spellings(responses)
        for raw in np.unique(array[unmatched]):
            label = spellings.get(canonical_spelling(str(raw)))
            if label is None:
                raise ParameterError(
                    f"label {raw.item() if hasattr(raw, 'item') else raw!r} is not an answer of "
                    f"design {model!r}; its answers are {', '.join(responses)} (or the codes "
                    f"0 to {len(responses) - 1})")
            codes[array == raw] = responses.index(label)
    return codes


def _group_codes(array: np.ndarray, design: Design) -> np.ndarray:
    if array.dtype.kind == "f":
        array = _as_codes_or_labels(array)
    if array.dtype.kind == "O":
        # numbers and names may mix (1, 2, "B"): each distinct value is looked up once
        index: dict[object, int] = {}
        codes = np.empty(array.shape, dtype=np.int64)
        for i, raw in enumerate(array):
            key = int(raw) if isinstance(raw, float | np.floating) else raw
            if key not in index:
                index[key] = design.group_index(key)
            codes[i] = index[key]
        return codes
    if array.dtype.kind in "iu":
        if array.size and (array.min() < 1 or array.max() > len(design.group_names)):
            bad = array[(array < 1) | (array > len(design.group_names))][0].item()
            design.group_index(bad)  # raises with the allowed groups
        return array - 1
    codes = np.zeros(array.shape, dtype=np.int64)
    for raw in np.unique(array):
        codes[array == raw] = design.group_index(raw.item() if hasattr(raw, "item") else raw)
    return codes
