"""The mean and total of a numeric sensitive variable from scrambled answers, with standard errors.

Moment estimators, as RRTCS and RRreg compute them. Every design's answers
satisfy E[Z | y, group g] = a_g + b_g y + t_g theta
(:meth:`~surveykit.designs.quantitative.QuantitativeDesign.moments`; theta is
the unknown mean of ``mix_unknown``'s unrelated question), so the group means
m_g of the answers identify mu = E[y] (and theta) by solving
m_g - a_g = b_g mu + t_g theta. With one group this is the mean of the
unbiased transform r = (z - a) / b.

Under simple random sampling (:func:`estimate_mean`, from the sufficient
statistics alone, :class:`~surveykit.numeric_counts.NumericCounts`):

* ``sampling = "srswr"`` (with replacement, or a population much larger than
  the sample): Var(mu_hat) = sum_g c_g^2 s_g^2 / n_g, with s_g^2 the answers'
  variance (divisor n - 1) and c the first row of the inverse of the system:
  s_r^2 / n with one group. This is RRreg's ``piSE`` (``mix.norm``, ``mix.exp``,
  ``mix.unknown``) and RRTCS's ``method = "srswr"`` (``var(z) / (n b^2)``).
* ``sampling = "srswor"`` (without replacement from N, f = n / N):
  (1 - f) s_r^2 / n + f vbar / n, where vbar is the mean of the unbiased
  estimates of each answer's randomization variance
  (:meth:`~surveykit.designs.quantitative.QuantitativeDesign.transform_variance`).
  The finite-population correction shrinks the sampling part only: the
  scrambling of the n answers is as random when n = N. This is RRTCS's
  ``Estimator()`` (sum(vr / pi) + varest) with equal inclusion probabilities
  n / N (and its unbiased vr).
* ``sampling = "srswor_rrtcs"``: (1 - f) s_r^2 / n, RRTCS's
  ``DianaPerri1/2`` and ``Saha`` with ``method = "srswor"``, which applies the
  correction to the randomization variance too and understates the variance
  by f vbar / n (docs/designs.md shows both, with a simulation).

With weights (:func:`estimate_mean_from_answers`; a complex sample plugs in
here, see :class:`SamplingVariance`): the Horvitz-Thompson total sum_i w_i r'_i
of the per-respondent unbiased transform (r' = r / (1 - d) for an answer, 0
for "don't know", d the designed don't-know share; :func:`linearize`), the
mean as that total over N or, without N, the Hajek mean over the answers; the
variance is a design-based variance of the sum plus, for an estimator
without replacement, the randomization term sum_i w_i v'_i (Chaudhuri and
Christofides 2013, ch. 2; RRTCS's ``Estimator``). Without a sampling variance
given, each respondent is its own primary unit, with replacement.

Confidence intervals are normal (estimate -/+ z se), as in RRTCS and RRreg.

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from surveykit.designs.quantitative import QuantitativeDesign
from surveykit.errors import EstimationError, ParameterError
from surveykit.estimation.binomial import check_level, z_value
from surveykit.estimation.compliance import DontKnowCheck, dont_know_check
from surveykit.estimation.estimate import ConfidenceInterval
from surveykit.numeric_counts import NumericCounts

__all__ = [
    "SAMPLING",
    "Linearized",
    "NumericAnswers",
    "NumericEstimate",
    "SamplingVariance",
    "answer_variance_sum",
    "estimate_domains",
    "estimate_mean",
    "estimate_mean_from_answers",
    "estimate_mean_from_sums",
    "linearize",
    "numeric_answers",
    "weighted_point",
]

#: Variance formulas under simple random sampling (see the module docstring).
SAMPLING = ("srswr", "srswor", "srswor_rrtcs")


# -- answers ------------------------------------------------------------------------------


@dataclass(frozen=True)
class NumericAnswers:
    """Answers to one numeric question, checked: ``values`` (NaN for "don't know"),
    ``dont_know``, each respondent's 0-based ``group`` and ``weights`` (ones without
    weights); respondents with a missing answer are left out (``missing`` counts them,
    ``kept`` marks the others among the answers given)."""

    values: np.ndarray
    dont_know: np.ndarray
    group: np.ndarray
    weights: np.ndarray
    missing: int
    weighted: bool
    kept: np.ndarray

    @property
    def answered(self) -> np.ndarray:
        return ~self.dont_know

    def counts(self) -> NumericCounts:
        """The sufficient statistics per group (unweighted)."""
        return NumericCounts.from_answers(self.values, groups=self.group + 1,
                                          dont_know=self.dont_know)


def _group_codes(design: QuantitativeDesign, groups: object, n: int) -> np.ndarray:
    count = len(design.group_names)
    if groups is None:
        if count > 1:
            raise ParameterError(
                f"design {design.model!r} has {count} groups: give each respondent's group "
                "(groups = [1, 2, ...])")
        return np.zeros(n, dtype=int)
    labels = list(groups)
    if len(labels) != n:
        raise ParameterError(f"groups has {len(labels)} entries for {n} answers")
    codes = np.empty(n, dtype=int)
    for i, label in enumerate(labels):
        text = str(label).strip()
        if text.endswith(".0"):
            text = text[:-2]
        if not (text.isdigit() and 1 <= int(text) <= count):
            raise ParameterError(
                f"group {label!r} of answer {i + 1} is not a group of design {design.model!r}, "
                f"which has {'groups 1 to ' + str(count) if count > 1 else 'one group, 1'}")
        codes[i] = int(text) - 1
    return codes


def numeric_answers(design: QuantitativeDesign, answers: Sequence[object] | np.ndarray, *,
                    groups: Sequence[object] | np.ndarray | None = None,
                    dont_know: Sequence[bool] | np.ndarray | None = None,
                    weights: Sequence[float] | np.ndarray | None = None) -> NumericAnswers:
    """Check answers for ``design``: numbers, ``"dont_know"`` (or the ``dont_know`` mask),
    and None/NaN for missing (left out).

    >>> from surveykit.designs.quantitative import MixNorm
    >>> a = numeric_answers(MixNorm(p=0.7, mu=0, sigma=1), [1.5, "dont_know", None])
    >>> a.values.tolist(), a.dont_know.tolist(), a.missing
    ([1.5, nan], [False, True], 1)
    """
    array = np.asarray(answers)
    if array.dtype.kind in "fiu":
        values = array.astype(float).reshape(-1)         # the fast path: NaN is missing
        n = values.size
        dk = np.zeros(n, dtype=bool)
        infinite = np.flatnonzero(np.isinf(values))
        if infinite.size:
            raise ParameterError(f"answer {infinite[0] + 1} ({values[infinite[0]]}) must be a "
                                 "finite number")
    else:
        values, dk = _parse_answers(answers)
        n = values.size
    if dont_know is not None:
        mask = np.asarray(dont_know, dtype=bool).reshape(-1)
        if mask.size != n:
            raise ParameterError(f"dont_know has {mask.size} entries for {n} answers")
        dk |= mask
    values[dk] = np.nan
    code = _group_codes(design, groups, n)
    if weights is None:
        w = np.ones(n)
    else:
        w = np.asarray(weights, dtype=float).reshape(-1)
        if w.size != n:
            raise ParameterError(f"weights has {w.size} entries for {n} answers")
        bad = np.flatnonzero(~np.isfinite(w) | (w < 0))
        if bad.size:
            raise ParameterError(f"weight of answer {bad[0] + 1} ({w[bad[0]]}) must be a "
                                 "finite number >= 0")
    keep = dk | ~np.isnan(values)
    return NumericAnswers(values=values[keep], dont_know=dk[keep], group=code[keep],
                          weights=w[keep], missing=int(n - keep.sum()),
                          weighted=weights is not None, kept=keep)


def _parse_answers(answers: Sequence[object]) -> tuple[np.ndarray, np.ndarray]:
    """Numbers, "dont_know" and None/NaN (missing) from a list of mixed cells."""
    raw = list(answers)
    n = len(raw)
    dk = np.zeros(n, dtype=bool)
    values = np.full(n, np.nan)
    for i, value in enumerate(raw):
        if isinstance(value, str):
            if value.strip().casefold() in ("dont_know", "don't know", "dk"):
                dk[i] = True
                continue
            raise ParameterError(f"answer {i + 1} ({value!r}) is not a number or \"dont_know\"")
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float | np.integer
                                                     | np.floating):
            raise ParameterError(f"answer {i + 1} ({value!r}) is not a number")
        if math.isinf(float(value)):
            raise ParameterError(f"answer {i + 1} ({value}) must be a finite number")
        values[i] = float(value)
    return values, dk


# -- the complex-sample boundary -----------------------------------------------------------


@dataclass(frozen=True)
class SamplingVariance:
    """How a sampling design estimates the variance of a weighted sum (the complex-sample
    boundary).

    ``of_sum(values, weights)`` returns the estimated sampling variance of
    sum_i weights_i * values_i, treating values as fixed (a stratified
    clustered estimator from per-PSU sums, a Horvitz-Thompson estimator with
    joint inclusion probabilities, ...). ``with_replacement`` says whether it
    is a with-replacement (ultimate-cluster) estimator: that one already
    contains the scrambling's variance; one without replacement does not, and
    the estimators add the randomization term sum_i w_i v_i.
    """

    of_sum: Callable[[np.ndarray, np.ndarray], float]
    with_replacement: bool


def _with_replacement_of_sum(values: np.ndarray, weights: np.ndarray) -> float:
    """n / (n - 1) sum (w x - mean(w x))^2: every respondent its own PSU, with replacement."""
    n = values.size
    if n < 2:
        return math.nan
    t = weights * values
    return float(n / (n - 1) * np.sum((t - t.mean()) ** 2))


#: Each respondent its own primary unit, drawn with replacement (the default with weights).
WITH_REPLACEMENT = SamplingVariance(of_sum=_with_replacement_of_sum, with_replacement=True)


@dataclass(frozen=True)
class Linearized:
    """Per respondent: the unbiased transform ``r`` (r' = r / (1 - d) for an answer, 0 for
    "don't know"), an unbiased estimate ``v`` of its randomization variance Var(r' | y), and
    the ``weights``. The Horvitz-Thompson total is sum(w r); a design-based variance of it
    plus sum(w v) (for an estimator without replacement) is its variance."""

    r: np.ndarray
    v: np.ndarray
    weights: np.ndarray

    @property
    def total(self) -> float:
        return float(np.dot(self.weights, self.r))

    @property
    def randomization_term(self) -> float:
        return float(np.dot(self.weights, self.v))


def linearize(design: QuantitativeDesign, answers: Sequence[object] | np.ndarray, *,
              dont_know: Sequence[bool] | np.ndarray | None = None,
              weights: Sequence[float] | np.ndarray | None = None,
              randomization_variance: str = "unbiased") -> Linearized:
    """Each respondent's unbiased transform and its estimated randomization variance.

    For an answer, r' = r / (1 - d) and v' = (v + d (r^2 - v)) / (1 - d)^2 with
    r = (z - a) / b and v the design's unbiased variance estimate; for "don't
    know", 0 and 0 (so E[r' | y] = y and E[v' | y] = Var(r' | y) = (Var(r | y) +
    d y^2) / (1 - d) for everybody). ``randomization_variance = "plug_in"`` uses
    RRTCS's plug-in v instead.

    >>> from surveykit.designs.quantitative import Eriksson
    >>> lin = linearize(Eriksson(p=0.5, scrambler=[0, 1, 3, 5, 8]), [3, 8])
    >>> lin.r.tolist()
    [2.6, 12.6]
    """
    a = numeric_answers(design, answers, dont_know=dont_know, weights=weights)
    return _linearized(design, a, randomization_variance)


def _linearized(design: QuantitativeDesign, a: NumericAnswers, method: str) -> Linearized:
    d = float(design.designed_dont_know)
    answered = a.answered
    r = np.zeros(a.values.size)
    v = np.zeros(a.values.size)
    r_answered = design.transform(a.values[answered])
    try:
        v_answered = design.transform_variance(r_answered, method)
    except ParameterError:
        v_answered = np.full(r_answered.size, np.nan)
    r[answered] = r_answered / (1 - d)
    v[answered] = (v_answered + d * (r_answered ** 2 - v_answered)) / (1 - d) ** 2
    return Linearized(r=r, v=v, weights=a.weights)


# -- the result ---------------------------------------------------------------------------


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


@dataclass(frozen=True, kw_only=True)
class NumericEstimate:
    """The estimated mean (and total) of a numeric sensitive variable.

    ``mean``, ``variance`` (of the mean) and ``se``; ``total`` and
    ``total_variance`` where the population size or weights give one;
    ``unrelated_mean`` and ``unrelated_variance`` for ``mix_unknown`` (RRreg's
    piUQ); ``alternatives``: the variance of the mean under the other formulas
    that apply (``srswor_rrtcs``, ``plug_in``), to show a peer's number beside
    ours; ``n``: numeric answers used, ``dont_know``: "don't know" answers;
    ``variance_method``: how a complex sample's variance was estimated (linearization,
    JKn, bootstrap, ...; None under simple random sampling).
    """

    design: QuantitativeDesign
    mean: float
    variance: float
    n: int
    dont_know: int
    sampling: str
    population_size: float | None = None
    total: float | None = None
    total_variance: float | None = None
    unrelated_mean: float | None = None
    unrelated_variance: float | None = None
    group_sizes: Mapping[str, int] = field(default_factory=dict)
    alternatives: Mapping[str, float] = field(default_factory=dict)
    weighted: bool = False
    notes: tuple[str, ...] = ()
    variance_method: str | None = None

    @property
    def se(self) -> float:
        """The standard error of the mean."""
        return math.sqrt(self.variance) if self.variance >= 0 else math.nan

    @property
    def total_se(self) -> float | None:
        if self.total_variance is None:
            return None
        return math.sqrt(self.total_variance) if self.total_variance >= 0 else math.nan

    @property
    def unrelated_se(self) -> float | None:
        if self.unrelated_variance is None:
            return None
        return math.sqrt(max(self.unrelated_variance, 0.0))

    def confidence_interval(self, level: float = 0.95) -> ConfidenceInterval:
        """mean -/+ z se (normal, as RRTCS and RRreg).

        >>> from surveykit.designs.quantitative import MixNorm
        >>> e = estimate_mean(MixNorm(p=0.5, mu=0, sigma=1),
        ...                   NumericCounts.from_answers([1.0, 2.0, 3.0, 4.0]))
        >>> e.mean, [round(x, 4) for x in e.confidence_interval()]
        (5.0, [2.4697, 7.5303])
        """
        z = z_value(check_level(level))
        return ConfidenceInterval(self.mean - z * self.se, self.mean + z * self.se)

    def total_interval(self, level: float = 0.95) -> ConfidenceInterval | None:
        """total -/+ z total_se, where there is a total."""
        if self.total is None or self.total_se is None:
            return None
        z = z_value(check_level(level))
        return ConfidenceInterval(self.total - z * self.total_se, self.total + z * self.total_se)

    def dont_know_check(self) -> DontKnowCheck:
        """The exact binomial test of the don't-know share against the design's."""
        return dont_know_check(self.dont_know, self.n + self.dont_know,
                               self.design.designed_dont_know)

    def to_dict(self, level: float = 0.95) -> dict[str, object]:
        """Plain numbers for JSON: ``mean``, ``se``, ``ci_low``, ``ci_high``, ``total``,
        ``total_se``, ... (None where not defined)."""
        low, high = self.confidence_interval(level)
        total_ci = self.total_interval(level)
        out: dict[str, object] = {
            "design": self.design.spec(), "n": self.n, "dont_know": self.dont_know,
            "mean": _finite(self.mean), "se": _finite(self.se), "ci_low": _finite(low),
            "ci_high": _finite(high), "level": level,
            "total": _finite(self.total), "total_se": _finite(self.total_se),
            "total_ci_low": None if total_ci is None else _finite(total_ci.low),
            "total_ci_high": None if total_ci is None else _finite(total_ci.high),
            "sampling": self.sampling, "population_size": self.population_size,
            "weighted": self.weighted,
            "alternatives": {k: {"variance": _finite(v),
                                 "se": _finite(math.sqrt(v)) if v >= 0 else None}
                             for k, v in self.alternatives.items()},
            "groups": dict(self.group_sizes), "notes": list(self.notes),
            "variance_method": self.variance_method,
        }
        if self.unrelated_mean is not None:
            out["unrelated_mean"] = _finite(self.unrelated_mean)
            out["unrelated_se"] = _finite(self.unrelated_se)
        out.update(self.dont_know_check().to_dict())
        return out


# -- the linear system --------------------------------------------------------------------


def _system(design: QuantitativeDesign) -> tuple[np.ndarray, np.ndarray]:
    """Intercepts a_g and the inverse of the (groups x unknowns) matrix [b_g, t_g]."""
    moments = [design.moments(g) for g in range(len(design.group_names))]
    a = np.array([m.a for m in moments])
    unknown_mean = any(m.t != 0 for m in moments)
    M = np.array([[m.b, m.t] if unknown_mean else [m.b] for m in moments])
    if M.shape[0] != M.shape[1]:  # pragma: no cover - every preset is square
        raise ParameterError(f"design {design.model!r}: groups and unknowns do not match")
    return a, np.linalg.inv(M)


def _check_sampling(sampling: str, population_size: object, design: QuantitativeDesign
                    ) -> float | None:
    if sampling not in SAMPLING:
        raise ParameterError(f"sampling ({sampling!r}) must be one of {', '.join(SAMPLING)}")
    N = None
    if population_size is not None:
        if isinstance(population_size, bool) or not isinstance(
                population_size, int | float | np.integer | np.floating) \
                or not math.isfinite(float(population_size)) or float(population_size) <= 0:
            raise ParameterError(f"population_size ({population_size!r}) must be a positive "
                                 "number (N, the size of the population)")
        N = float(population_size)
    if sampling != "srswr":
        if N is None:
            raise ParameterError(f"sampling = {sampling!r} needs population_size (N)")
        if not design.has_transform:
            raise ParameterError(
                f"sampling = {sampling!r} is not available for design {design.model!r}: the "
                "randomization variance of its answers depends on the unrelated question's "
                "unknown distribution; use sampling = 'srswr'")
    return N


def estimate_mean(design: QuantitativeDesign, counts: NumericCounts, *,
                  population_size: float | None = None, sampling: str = "srswr"
                  ) -> NumericEstimate:
    """The mean (and, with ``population_size`` N, the total) of the true values from the
    sufficient statistics of the answers, under simple random sampling (module docstring).

    ``counts`` are keyed by group number ("1", "2"); a one-group design takes
    any single group label.

    >>> from surveykit.designs.quantitative import MixUnknown
    >>> counts = NumericCounts.from_mapping({"1": {"n": 2, "sum": 10, "sum_squares": 52},
    ...                                      "2": {"n": 2, "sum": 6, "sum_squares": 20}})
    >>> e = estimate_mean(MixUnknown(p=[0.8, 0.3]), counts)
    >>> round(e.mean, 6), round(e.unrelated_mean, 6)
    (5.8, 1.8)
    """
    if not isinstance(design, QuantitativeDesign):
        raise ParameterError(f"design ({design!r}) must be a numeric-answer design, e.g. "
                             "make_design(\"eriksson\", p=0.5, scrambler=[0, 1, 3, 5, 8])")
    if not isinstance(counts, NumericCounts):
        raise ParameterError("counts must be NumericCounts (NumericCounts.from_answers(...))")
    N = _check_sampling(sampling, population_size, design)
    names = design.group_names
    if len(names) == 1:
        if len(counts.groups) > 1:
            raise ParameterError(f"design {design.model!r} has one group; the counts have "
                                 f"{len(counts.groups)} ({', '.join(counts.groups)})")
        sums = [counts.total]
    else:
        extra = sorted(set(counts.groups) - set(names))
        if extra:
            raise ParameterError(f"counts of group {extra[0]!r}: design {design.model!r} has "
                                 f"groups {', '.join(names)}")
        sums = [counts.get(g) for g in names]
    for g, s in zip(names, sums, strict=True):
        if s.n < 2:
            where = f" in group {g}" if len(names) > 1 else ""
            raise EstimationError(
                f"{s.n} numeric answer(s){where}: the mean and its standard error need at "
                "least 2")
    a, inverse = _system(design)
    means = np.array([s.mean for s in sums])
    solution = inverse @ (means - a)
    group_variances = np.array([s.variance / s.n for s in sums])
    variances = (inverse ** 2) @ group_variances       # independent group means
    mean, variance = float(solution[0]), float(variances[0])
    alternatives: dict[str, float] = {}
    n = sum(s.n for s in sums)
    if design.has_transform and N is not None:
        s = sums[0]
        f = s.n / N
        if f > 1:
            raise ParameterError(f"population_size ({N:g}) is smaller than the {s.n} answers")
        rrtcs = (1 - f) * variance
        alternatives["srswor_rrtcs"] = rrtcs
        try:
            vbar = answer_variance_sum(design, weight=s.n, weighted_sum=s.total,
                                       weighted_squares=s.sum_squares) / s.n
        except ParameterError as error:
            vbar = None
            if sampling == "srswor":
                raise ParameterError(f"sampling = 'srswor': {error}") from None
        if vbar is not None:
            alternatives["srswor"] = rrtcs + f * vbar / s.n
        alternatives["srswr"] = variance
        variance = alternatives[sampling]
        del alternatives[sampling]
    total = total_variance = None
    if N is not None:
        total, total_variance = N * mean, N ** 2 * variance
    return NumericEstimate(
        design=design, mean=mean, variance=variance, n=n, dont_know=counts.dont_know,
        sampling=sampling, population_size=N, total=total, total_variance=total_variance,
        unrelated_mean=float(solution[1]) if solution.size > 1 else None,
        unrelated_variance=float(variances[1]) if solution.size > 1 else None,
        group_sizes=MappingProxyType({g: s.n for g, s in zip(names, sums, strict=True)}),
        alternatives=MappingProxyType(alternatives))


def answer_variance_sum(design: QuantitativeDesign, *, weight: float, weighted_sum: float,
                        weighted_squares: float, method: str = "unbiased") -> float:
    """sum_i w_i v_i over answers z_i, from sum w, sum w z and sum w z^2 alone.

    v_i, the estimate of Var(r_i | y_i), is quadratic in r_i = (z_i - a) / b,
    so these three sums suffice: per group, per stratum or per PSU, as SQL
    computes them (``method``: ``"unbiased"`` or RRTCS's ``"plug_in"``).

    >>> from surveykit.designs.quantitative import Eriksson
    >>> d = Eriksson(p=0.5, scrambler=[0, 1, 3, 5, 8])
    >>> z = np.array([3.0, 8.0, 0.0])
    >>> total = answer_variance_sum(d, weight=3, weighted_sum=z.sum(), weighted_squares=z @ z)
    >>> bool(np.isclose(total, d.transform_variance(d.transform(z)).sum()))
    True
    """
    m = design.moments()
    if not design.has_transform or m.variance_coefficients is None:
        raise ParameterError(f"{design.describe()}: the answers' randomization variance is "
                             "unknown (give every scrambler's sd)")
    A, B, C = m.variance_coefficients
    sum_r = (weighted_sum - weight * m.a) / m.b
    sum_r2 = (weighted_squares - 2 * m.a * weighted_sum + weight * m.a ** 2) / m.b ** 2
    numerator = A * sum_r2 + B * sum_r + C * weight
    if method == "unbiased":
        return numerator / (m.b ** 2 + A)
    if method == "plug_in":
        return numerator / m.b ** 2
    raise ParameterError(f"method ({method!r}) must be 'unbiased' or 'plug_in'")


def estimate_mean_from_answers(
        design: QuantitativeDesign, answers: Sequence[object] | np.ndarray, *,
        groups: Sequence[object] | np.ndarray | None = None,
        dont_know: Sequence[bool] | np.ndarray | None = None,
        weights: Sequence[float] | np.ndarray | None = None,
        population_size: float | None = None, sampling: str = "srswr",
        sampling_variance: SamplingVariance | None = None,
        randomization_variance: str = "unbiased") -> NumericEstimate:
    """The mean (and total) from the answers themselves.

    Without ``weights`` and ``sampling_variance`` this is :func:`estimate_mean`
    of the answers' counts. With them (the complex-sample boundary): the
    Horvitz-Thompson total sum w r' and, with ``population_size`` N, the mean
    total / N; without N the Hajek mean over the answers. The variance is
    ``sampling_variance.of_sum`` of the linearized values (default: every
    respondent its own PSU, with replacement) plus, for a ``sampling_variance``
    without replacement, the randomization term (``randomization_variance``:
    ``"unbiased"``, or RRTCS's ``"plug_in"``; the other one is in
    ``alternatives``).
    """
    a = numeric_answers(design, answers, groups=groups, dont_know=dont_know, weights=weights)
    if not a.weighted and sampling_variance is None:
        return estimate_mean(design, a.counts(), population_size=population_size,
                             sampling=sampling)
    if sampling != "srswr":
        raise ParameterError("with weights or a sampling_variance, the sampling design gives "
                             "the variance: leave sampling at 'srswr'")
    N = _check_sampling(sampling, population_size, design)
    return _weighted(design, a, N, sampling_variance or WITH_REPLACEMENT,
                     randomization_variance, np.ones(a.values.size, dtype=bool), ht_total=True)


def _weighted(design: QuantitativeDesign, a: NumericAnswers, N: float | None,
              plan: SamplingVariance, method: str, domain: np.ndarray,
              ht_total: bool = False) -> NumericEstimate:
    """The weighted estimators (module docstring) over the respondents in ``domain``.

    With N (one-group designs): the Horvitz-Thompson mean total / N. Otherwise
    the Hajek mean; with ``ht_total`` also the Horvitz-Thompson total.
    """
    if method not in ("unbiased", "plug_in"):
        raise ParameterError(f"randomization_variance ({method!r}) must be 'unbiased' or "
                             "'plug_in'")
    w = a.weights * domain
    answered = a.answered & (w > 0)
    names = design.group_names
    sizes = {g: int(np.count_nonzero(answered & (a.group == i))) for i, g in enumerate(names)}
    for g, k in sizes.items():
        if k < 2:
            where = f" in group {g}" if len(names) > 1 else ""
            raise EstimationError(f"{k} numeric answer(s) with positive weight{where}: the "
                                  "mean and its standard error need at least 2")
    other = "plug_in" if method == "unbiased" else "unbiased"
    lin = ({m: _linearized(design, a, m) for m in (method, other)}
           if design.has_transform else {})

    def total_variance_of(values: Linearized) -> float:
        variance = plan.of_sum(values.r, w)
        return variance if plan.with_replacement else variance + float(np.dot(w, values.v))

    common = dict(design=design, n=int(answered.sum()),
                  dont_know=int(np.count_nonzero(a.dont_know & (w > 0))), sampling="weighted",
                  population_size=N, group_sizes=MappingProxyType(sizes), weighted=True)
    alternatives: dict[str, float] = {}
    if design.has_transform and N is not None:
        total = float(np.dot(w, lin[method].r))
        total_variance = total_variance_of(lin[method])
        if not plan.with_replacement and math.isfinite(total_variance_of(lin[other])):
            alternatives[other] = total_variance_of(lin[other]) / N ** 2
        return NumericEstimate(mean=total / N, variance=total_variance / N ** 2, total=total,
                               total_variance=total_variance,
                               alternatives=MappingProxyType(alternatives), **common)
    hajek = _hajek(design, a, w, linearized=True)
    solution, u, weight_sums = hajek.solution, hajek.u, hajek.weight_sums
    variance = [plan.of_sum(u[k], w) for k in range(u.shape[0])]
    if not plan.with_replacement:
        if not design.has_transform:
            raise ParameterError(
                f"design {design.model!r}: a sampling variance without replacement needs each "
                "answer's randomization variance, which depends on the unrelated question's "
                "unknown distribution; give a with-replacement sampling variance")
        W = weight_sums[0]
        r = design.transform(a.values[answered])
        terms = {m: float(np.dot(w[answered], design.transform_variance(r, m))) / W ** 2
                 for m in (method, other)}
        if math.isfinite(terms[other]):
            alternatives[other] = variance[0] + terms[other]
        variance[0] += terms[method]
    mean, mean_variance = float(solution[0]), float(variance[0])
    total = total_variance = None
    if N is not None:
        total, total_variance = N * mean, N ** 2 * mean_variance
    elif ht_total and design.has_transform:
        total = float(np.dot(w, lin[method].r))
        total_variance = total_variance_of(lin[method])
    elif ht_total:
        # no per-answer transform (mix_unknown): N_hat mu_hat, N_hat the weights of the
        # respondents (answers and "don't know"), linearized as w_i (mu_hat + N_hat u_i)
        total = hajek.size * mean
        total_variance = plan.of_sum(mean + hajek.size * u[0], w)
    return NumericEstimate(
        mean=mean, variance=mean_variance, total=total, total_variance=total_variance,
        unrelated_mean=float(solution[1]) if solution.size > 1 else None,
        unrelated_variance=float(variance[1]) if solution.size > 1 else None,
        alternatives=MappingProxyType(alternatives), **common)


def estimate_mean_from_sums(
        design: QuantitativeDesign, *, answers: int, dont_know: int, weight: float,
        weighted_sum: float, weighted_squares: float,
        variance_of: Callable[[float, float], float], with_replacement: bool,
        randomization_variance: str = "unbiased") -> NumericEstimate:
    """:func:`estimate_mean_from_answers` with weights and a sampling variance, from sums.

    For a design whose answers z have a per-answer unbiased transform
    (``has_transform``: r = (z - a) / b, affine in z) every quantity of the
    weighted estimators is a sum over the answers of something affine or
    quadratic in z, so the ``answers`` numbers' sum of weights W, sum w z and
    sum w z^2 (and the number of ``dont_know`` answers) give the Hajek mean
    (z_bar_w - a) / b, the Horvitz-Thompson total sum w r' (r' = r / (1 - d),
    0 for "don't know") and the randomization term
    (:func:`answer_variance_sum`); ``variance_of(alpha, beta)`` is the sampling
    variance of sum_i w_i (alpha + beta z_i) over the number answers ("don't
    know" 0), which a complex sample computes from per-PSU sums of w, w z (and
    w^2, w^2 z, w^2 z^2 when respondents are the PSUs). ``with_replacement`` as
    :class:`SamplingVariance`'s. Equal to the estimate from the answers
    themselves (tests/test_kept_cells.py checks it to 1e-9).

    >>> from surveykit.designs.quantitative import Eriksson
    >>> d = Eriksson(p=0.5, scrambler=[0, 1, 3, 5, 8])
    >>> z = np.array([3.0, 8.0, 0.0])
    >>> def variance_of(alpha, beta):  # each answer its own PSU, with replacement
    ...     t = alpha + beta * z
    ...     return 3 / 2 * float(np.sum((t - t.mean()) ** 2))
    >>> e = estimate_mean_from_sums(d, answers=3, dont_know=0, weight=3.0,
    ...                             weighted_sum=z.sum(), weighted_squares=z @ z,
    ...                             variance_of=variance_of, with_replacement=True)
    >>> f = estimate_mean_from_answers(d, z, weights=np.ones(3))
    >>> [bool(np.isclose(getattr(e, k), getattr(f, k)))
    ...  for k in ("mean", "variance", "total", "total_variance")]
    [True, True, True, True]
    """
    if randomization_variance not in ("unbiased", "plug_in"):
        raise ParameterError(f"randomization_variance ({randomization_variance!r}) must be "
                             "'unbiased' or 'plug_in'")
    if not design.has_transform:
        raise ParameterError(f"design {design.model!r} has no per-answer unbiased transform: "
                             "its weighted estimate needs the answers themselves")
    if answers < 2:
        raise EstimationError(f"{answers} numeric answer(s) with positive weight: the mean "
                              "and its standard error need at least 2")
    method = randomization_variance
    other = "plug_in" if method == "unbiased" else "unbiased"
    moments = design.moments()
    a, b = moments.a, moments.b
    d = float(design.designed_dont_know)
    a0, inverse = _system(design)
    c = float(inverse[0, 0])
    W = float(weight)
    m = weighted_sum / W
    mean = c * (m - float(a0[0]))
    # the Hajek mean's linearized values u = c (z - m) / W for an answer, 0 for "don't know"
    variance = variance_of(-c * m / W, c / W)
    alternatives: dict[str, float] = {}
    randomization: dict[str, float] = {}
    if not with_replacement:
        terms = {k: answer_variance_sum(design, weight=W, weighted_sum=weighted_sum,
                                        weighted_squares=weighted_squares, method=k) / W ** 2
                 for k in (method, other)}
        if math.isfinite(terms[other]):
            alternatives[other] = variance + terms[other]
        variance += terms[method]
        # sum w v' = ((1 - d) sum w v + d sum w r^2) / (1 - d)^2 (see _linearized)
        sum_r2 = (weighted_squares - 2 * a * weighted_sum + a * a * W) / b ** 2
        randomization = {k: ((1 - d) * terms[k] * W ** 2 + d * sum_r2) / (1 - d) ** 2
                         for k in (method, other)}
    # the Horvitz-Thompson total of r' = (z - a) / (b (1 - d))
    scale = 1.0 / (b * (1 - d))
    total = scale * (weighted_sum - a * W)
    total_variance = variance_of(-a * scale, scale) + randomization.get(method, 0.0)
    return NumericEstimate(
        design=design, mean=mean, variance=variance, total=total,
        total_variance=total_variance, n=int(answers), dont_know=int(dont_know),
        sampling="weighted", population_size=None,
        group_sizes=MappingProxyType({design.group_names[0]: int(answers)}), weighted=True,
        alternatives=MappingProxyType(alternatives))


@dataclass(frozen=True, eq=False)
class _Hajek:
    """The Hajek estimators of every unknown: ``solution`` (mu, then theta for
    ``mix_unknown``), per respondent the linearized values ``u`` (unknowns x respondents:
    solution - truth ~ sum_i w_i u_i), the groups' ``weight_sums`` over the answers and
    ``size`` N_hat, the weights of every respondent (answers and "don't know")."""

    solution: np.ndarray
    u: np.ndarray
    weight_sums: list[float]
    size: float


def _hajek(design: QuantitativeDesign, a: NumericAnswers, w: np.ndarray, *,
           linearized: bool) -> _Hajek:
    """The weighted group means m_g of the answers solved as in :func:`estimate_mean`;
    with ``linearized``, u_k = sum_g inverse[k, g] (z - m_g) / W_g (Woodruff's
    linearization of a ratio, the delta method for the solution, linear in the m_g)."""
    answered = a.answered & (w > 0)
    a0, inverse = _system(design)
    means, weight_sums = [], []
    u = np.zeros((inverse.shape[0], a.values.size if linearized else 0))
    for i in range(len(design.group_names)):
        members = answered & (a.group == i)
        W = float(np.sum(w[members]))
        if W <= 0:
            raise EstimationError(f"no numeric answer with positive weight in group "
                                  f"{design.group_names[i]}")
        m_g = float(np.dot(w[members], a.values[members]) / W)
        means.append(m_g)
        weight_sums.append(W)
        if linearized:
            u += np.outer(inverse[:, i],
                          np.where(members, np.nan_to_num(a.values) - m_g, 0.0) / W)
    return _Hajek(solution=inverse @ (np.array(means) - a0), u=u, weight_sums=weight_sums,
                  size=float(np.sum(w)))


def weighted_point(design: QuantitativeDesign, answers: NumericAnswers,
                   weights: np.ndarray) -> tuple[float, float]:
    """The weighted estimate's mean and total alone, with ``weights`` in place of the
    answers' (a replicate's weights, zero outside a domain): the Hajek mean and the
    total sum w r' (N_hat mean without a per-answer transform), as
    :func:`estimate_mean_from_answers` and :func:`estimate_domains` compute them without
    a population size. For replicate variances, which refit these once per replicate.

    >>> from surveykit.designs.quantitative import MixNorm
    >>> design = MixNorm(p=1.0, mu=0, sigma=1)
    >>> a = numeric_answers(design, [1.0, 3.0, 8.0])
    >>> weighted_point(design, a, np.array([1.0, 1.0, 0.0]))
    (2.0, 4.0)
    """
    w = np.asarray(weights, dtype=float)
    mean = float(_hajek(design, answers, w, linearized=False).solution[0])
    if design.has_transform:
        return mean, float(np.dot(w, _linearized(design, answers, "unbiased").r))
    return mean, float(np.sum(w)) * mean


def estimate_domains(design: QuantitativeDesign, answers: Sequence[object] | np.ndarray,
                     domains: Sequence[object] | np.ndarray, *,
                     groups: Sequence[object] | np.ndarray | None = None,
                     dont_know: Sequence[bool] | np.ndarray | None = None,
                     weights: Sequence[float] | np.ndarray | None = None,
                     population_size: float | None = None,
                     sampling_variance: SamplingVariance | None = None,
                     randomization_variance: str = "unbiased") -> dict[str, NumericEstimate]:
    """Estimates per domain (a subpopulation: faculty, region), by domain label.

    Each domain's mean is the Hajek mean of its answers; its variance the
    linearization over the whole sample with the others' values set to 0 (as R
    survey's ``svyby``), so the domain's size counts as random. A respondent whose
    label is None (or NaN) is in no domain and stays in the design. Totals are the
    Horvitz-Thompson totals sum w r' over the domain; without weights, w = N / n
    given ``population_size`` N (else no total).

    >>> from surveykit.designs.quantitative import MixNorm
    >>> out = estimate_domains(MixNorm(p=1.0, mu=0, sigma=1), [1.0, 3.0, 10.0, 14.0],
    ...                        ["a", "a", "b", "b"])
    >>> {k: (e.mean, e.n) for k, e in out.items()}
    {'a': (2.0, 2), 'b': (12.0, 2)}
    """
    a = numeric_answers(design, answers, groups=groups, dont_know=dont_know, weights=weights)
    labels = list(domains) if not isinstance(domains, np.ndarray) else domains.tolist()
    if len(labels) != a.kept.size:
        raise ParameterError(f"domains has {len(labels)} entries for {a.kept.size} answers")
    N = _check_sampling("srswr", population_size, design)
    # the domains of the respondents numeric_answers kept (missing answers are left out)
    domain_labels = np.array([None if _no_label(label) else str(label) for label in labels],
                             dtype=object)[a.kept]
    if not a.weighted:
        scale = (N / a.values.size) if N is not None else 1.0
        a = dataclasses.replace(a, weights=np.full(a.values.size, scale),
                                weighted=N is not None)
    plan = sampling_variance or WITH_REPLACEMENT
    out = {}
    for label in dict.fromkeys(domain_labels.tolist()):
        if label is None:
            continue  # in no domain, but still in the design (as svyby's NA)
        inside = domain_labels == label
        estimate = _weighted(design, a, None, plan, randomization_variance, inside,
                             ht_total=a.weighted)
        out[label] = estimate
    return out


def _no_label(label: object) -> bool:
    """A missing domain label: None or a float NaN."""
    return label is None or (isinstance(label, float | np.floating) and math.isnan(label))
