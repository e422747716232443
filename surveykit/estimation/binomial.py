"""One-group yes/no designs: the exact conditional variance and binomial intervals.

Many designs (Warner, the generalized Warner, forced response, the unrelated
question with known prevalence, Mangat, crosswise, triangular, Kuk with one
card) share one structure: one group, true states yes and no, answers r0 and r1
(usually yes and no) and the state-independent "don't know" branch. Given the
number of answers M = N(r0) + N(r1) = m, N(r0) ~ Binomial(m, theta) with

    theta(pi) = P(r0 | pi) / s,   P(r0 | pi) = pi P(r0 | yes) + (1 - pi) P(r0 | no),

s = P(r0 | state) + P(r1 | state) = 1 - dont_know, and theta is affine in pi. So

* the unconstrained estimate pi_hat = (s N(r0)/M - P(r0 | no)) / (P(r0 | yes) - P(r0 | no))
  is unbiased given M > 0 (the paper's Theorem 3.9 for the generalized Warner);
* Var(pi_hat | M > 0) = P(r0 | pi) P(r1 | pi) / (P(r0 | yes) - P(r0 | no))^2 E[1/M | M > 0],
  M ~ Binomial(n, s): the paper's Theorem 3.10 with the conditioning it drops
  (docs/errata.md, item 1); for the generalized Warner the factor is
  q1 q2 / (p - q)^2;
* any binomial interval for theta maps to one for pi, clipped to [0, 1].

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import numpy as np

from surveykit.designs.base import YES, Design, given_design
from surveykit.errors import EstimationError, ParameterError
from surveykit.estimation.distributions import chi2_upper_quantile, normal_quantile
from surveykit.estimation.exact import inverse_moment
from surveykit.validation import check_sample_size

__all__ = [
    "BINOMIAL_CI_METHODS",
    "BinomialMap",
    "binomial_map",
    "check_level",
    "conditional_variance",
    "interval_arrays",
    "z_value",
]

#: Interval methods for one-group yes/no designs (docs/estimation.md has their coverage).
BINOMIAL_CI_METHODS: tuple[str, ...] = ("wilson-cc", "wilson", "clopper-pearson",
                                        "likelihood-ratio", "wald")
# The most a probability computed in floating point (a product, a sum of a few terms) is off
# from the decimal it stands for: a few units in the last place of numbers up to 1.
_ROUND_OFF = 1e-15


def check_level(level: object) -> float:
    """A confidence level strictly between 0 and 1."""
    if isinstance(level, bool) or not isinstance(level, int | float | np.floating):
        raise ParameterError(f"level ({level!r}) must be a number between 0 and 1, e.g. 0.95")
    level = float(level)
    if not 0 < level < 1:
        raise ParameterError(f"level ({level}) must be strictly between 0 and 1, e.g. 0.95")
    return level


def z_value(level: float) -> float:
    """The two-sided standard normal quantile for ``level``."""
    return normal_quantile(1 - (1 - level) / 2)


@dataclass(frozen=True)
class BinomialMap:
    """The affine link between pi and theta = P(first answer | answered) of a binomial design.

    ``first_yes`` = P(r0 | yes), ``first_no`` = P(r0 | no), ``answered`` =
    s = 1 - dont_know.
    """

    first_yes: float
    first_no: float
    answered: float

    def theta(self, pi):
        """theta(pi) = (pi P(r0 | yes) + (1 - pi) P(r0 | no)) / s."""
        pi = np.asarray(pi, dtype=float)
        return (pi * self.first_yes + (1 - pi) * self.first_no) / self.answered

    def to_pi(self, theta, *, clip: bool = True):
        """pi(theta), the inverse of :meth:`theta`, clipped to [0, 1] unless ``clip=False``."""
        pi = (np.asarray(theta, dtype=float) * self.answered - self.first_no) / (
            self.first_yes - self.first_no)
        return np.clip(pi, 0.0, 1.0) if clip else pi

    def exact_pi(self, first: int, second: int) -> Fraction:
        """pi_hat (Eq. 2) in exact arithmetic from the counts of the first and second
        answer: the design's probabilities read as the decimals they were given as
        (rationals of denominator up to 10^9), so that a share that is exactly 0 or 1 is
        0 or 1, not 1.0000000000000002 (600 of 1,000 "yes" under p = 0.6, q = 0.4).

        >>> BinomialMap(first_yes=0.6, first_no=0.4, answered=1.0).exact_pi(600, 400)
        Fraction(1, 1)
        """
        a, b, s = (_decimal_meant(value)
                   for value in (self.first_no, self.first_yes, self.answered))
        if a == b:  # a design built by make_design or a survey file is refused before
            raise ParameterError(
                f"P(first answer | yes) ({self.first_yes!r}) and P(first answer | no) "
                f"({self.first_no!r}) differ only by round-off: the answers carry no "
                "information about pi; choose design parameters further apart")
        return (Fraction(first, first + second) * s - a) / (b - a)

    def interval_to_pi(self, low, high):
        """An interval for theta as one for pi (the map reverses when P(r0|yes) < P(r0|no))."""
        a, b = self.to_pi(low), self.to_pi(high)
        return np.minimum(a, b), np.maximum(a, b)

    @property
    def theta_range(self) -> tuple[float, float]:
        """theta over pi in [0, 1]."""
        ends = sorted((self.first_no / self.answered, self.first_yes / self.answered))
        return ends[0], ends[1]


def _decimal_meant(value: float) -> Fraction:
    """The rational of denominator up to 10^9 that ``value`` is a round-off of (0.9 for
    0.8999999999999999, which 1 - 0.1 leaves), else ``value`` itself, exactly.

    Only round-off (a few units in the last place) is snapped: 0.0999999999 stays what it
    is, so that two probabilities a design keeps apart stay apart.

    >>> _decimal_meant(0.8999999999999999), _decimal_meant(0.0999999999) == Fraction(1, 10)
    (Fraction(9, 10), False)
    """
    simple = Fraction(value).limit_denominator(10**9)
    return simple if abs(float(simple) - value) <= _ROUND_OFF else Fraction(value)


def binomial_map(design: Design) -> BinomialMap | None:
    """The map of a one-group yes/no design with two answers and no nuisance parameters;
    None for any other design (they use the general likelihood).

    >>> from surveykit.designs.warner import GeneralizedWarner
    >>> binomial_map(GeneralizedWarner(p=0.6, q=0.2))
    BinomialMap(first_yes=0.6, first_no=0.2, answered=0.8)
    """
    if not design.is_simple_binary:
        return None
    s = design.structure
    matrix = s.base[0]
    yes, no = s.states.index(YES), 1 - s.states.index(YES)
    return BinomialMap(first_yes=float(matrix[0, yes]), first_no=float(matrix[0, no]),
                       answered=float(matrix[0, yes] + matrix[1, yes]))


def _require_map(design: Design) -> BinomialMap:
    mapping = binomial_map(design)
    if mapping is None:
        raise ParameterError(
            f"design {design.model!r} is not a one-group yes/no design with two answers; the "
            "exact conditional variance and binomial intervals need one (use the observed "
            "information and the likelihood-ratio interval)")
    return mapping


def conditional_variance(design: Design, *, pi: float | np.ndarray, n: int,
                         method: Literal["exact", "grab-savage"] = "exact"
                         ) -> float | np.ndarray:
    """Var(pi_hat | M > 0) for n respondents and prevalence pi (module docstring).

    ``method="grab-savage"`` replaces E[1/M | M > 0] by the paper's
    approximation 1 / ((n + 1) s - 1) (Grab and Savage 1954), which needs
    (n + 1) s > 1. With no don't-know branch, M = n and both give Warner's Eq. (1).

    >>> from surveykit.designs.warner import GeneralizedWarner
    >>> round(conditional_variance(GeneralizedWarner(p=0.4, q=0.1), pi=0.5, n=3), 10)
    0.4794973545
    """
    mapping = _require_map(design)
    n = check_sample_size(n)
    pi_arr = np.asarray(pi, dtype=float)
    if np.any(~np.isfinite(pi_arr)) or np.any((pi_arr < 0) | (pi_arr > 1)):
        raise ParameterError(f"pi ({pi!r}) must be a proportion between 0 and 1")
    if method == "exact":
        inverse = inverse_moment(n, mapping.answered)
    elif method == "grab-savage":
        denominator = (n + 1) * mapping.answered - 1
        if denominator <= 0:
            raise ParameterError(
                f"the Grab-Savage approximation needs (n + 1)(p + q) > 1, "
                f"got {denominator + 1:.6g}; use method='exact'")
        inverse = 1.0 / denominator
    else:
        raise ParameterError(f"method ({method!r}) must be 'exact' or 'grab-savage'")
    matrix = design.structure.base[0]
    yes = design.structure.states.index(YES)
    no = 1 - yes
    first = pi_arr * matrix[0, yes] + (1 - pi_arr) * matrix[0, no]
    second = pi_arr * matrix[1, yes] + (1 - pi_arr) * matrix[1, no]
    variance = first * second / (matrix[0, yes] - matrix[0, no]) ** 2 * inverse
    return float(variance) if np.ndim(variance) == 0 else variance


# -- intervals ---------------------------------------------------------------------------------


def _wilson(first, m, level: float):
    """Wilson's score interval for theta."""
    z2 = z_value(level) ** 2
    theta = first / m
    centre = (theta + z2 / (2 * m)) / (1 + z2 / m)
    half = np.sqrt(theta * (1 - theta) / m + z2 / (4 * m * m)) * np.sqrt(z2) / (1 + z2 / m)
    return centre - half, centre + half


def _wilson_cc(first, m, level: float):
    """Wilson's score interval with continuity correction (Newcombe 1998, method 4)."""
    z = z_value(level)
    z2 = z * z
    theta = first / m
    denominator = 2 * (m + z2)
    # The radicands are >= 0 whenever the limit is used (theta > 0 resp. theta < 1).
    low_radicand = np.maximum(z2 - 2 - 1 / m + 4 * theta * (m * (1 - theta) + 1), 0)
    high_radicand = np.maximum(z2 + 2 - 1 / m + 4 * theta * (m * (1 - theta) - 1), 0)
    low = (2 * m * theta + z2 - 1 - z * np.sqrt(low_radicand)) / denominator
    high = (2 * m * theta + z2 + 1 + z * np.sqrt(high_radicand)) / denominator
    return np.where(first == 0, 0.0, low), np.where(first == m, 1.0, high)


def _clopper_pearson(first, m, level: float):
    """Clopper-Pearson's exact interval for theta, from beta quantiles."""
    from scipy import stats

    alpha = 1 - level
    with np.errstate(invalid="ignore"):
        low = np.where(first == 0, 0.0,
                       stats.beta.ppf(alpha / 2, np.maximum(first, 1), m - first + 1))
        high = np.where(first == m, 1.0,
                        stats.beta.ppf(1 - alpha / 2, first + 1, np.maximum(m - first, 1)))
    return low, high


def _binomial_loglik(first, second, theta):
    from scipy import special

    # xlogy keeps 0 * log(0) = 0 at the edges of [0, 1]
    return special.xlogy(first, theta) + special.xlogy(second, 1 - theta)


def _likelihood_ratio(first, m, level: float, mapping: BinomialMap):
    """{pi in [0, 1]: 2 (l(pi_mle) - l(pi)) <= chi2_1(level)}, by vectorized bisection on theta.

    theta is restricted to its range over pi in [0, 1]; 60 halvings put each
    end within 1e-17 of the range. The general profile-likelihood interval of
    :class:`~surveykit.estimation.estimate.Estimate` is the same interval
    (tests/test_estimate.py checks it), one estimate at a time.
    """
    second = m - first
    lower, upper = mapping.theta_range
    theta_hat = np.clip(first / m, lower, upper)
    cutoff = chi2_upper_quantile(1 - level, 1) / 2
    target = _binomial_loglik(first, second, theta_hat) - cutoff

    def solve(outer):
        outer = np.broadcast_to(np.asarray(outer, dtype=float), theta_hat.shape).copy()
        inside = theta_hat.copy()
        at_edge = _binomial_loglik(first, second, outer) >= target
        for _ in range(60):
            mid = (inside + outer) / 2
            ok = _binomial_loglik(first, second, mid) >= target
            inside = np.where(ok, mid, inside)
            outer = np.where(ok, outer, mid)
        return np.where(at_edge, outer, inside)

    return solve(lower), solve(upper)


def interval_arrays(*, yes, no, dont_know=0, design: Design | None = None,
                    mechanism: Design | None = None, level: float = 0.95,
                    method: str = "wilson-cc") -> tuple[np.ndarray, np.ndarray]:
    """Confidence limits for pi from many surveys at once (arrays of counts).

    ``yes`` and ``no`` count the design's two answers (for crosswise "same"
    and "different"); ``mechanism``, the old name of ``design``, is deprecated. Used by
    simulations and coverage studies; every survey must have yes + no > 0.
    Returns ``(low, high)`` arrays inside [0, 1].
    """
    design = given_design(design, mechanism, "interval_arrays()")
    if design is None:
        raise ParameterError("interval_arrays needs the design")
    mapping = _require_map(design)
    level = check_level(level)
    first = np.asarray(yes, dtype=float)
    m = first + np.asarray(no, dtype=float)
    if np.any(m <= 0):
        raise EstimationError("no yes/no answers: pi cannot be estimated")
    if method == "wilson-cc":
        return mapping.interval_to_pi(*_wilson_cc(first, m, level))
    if method == "wilson":
        return mapping.interval_to_pi(*_wilson(first, m, level))
    if method == "clopper-pearson":
        return mapping.interval_to_pi(*_clopper_pearson(first, m, level))
    if method == "likelihood-ratio":
        return mapping.interval_to_pi(*_likelihood_ratio(first, m, level, mapping))
    if method == "wald":
        pi_hat = mapping.to_pi(first / m, clip=False)
        pi_mle = np.clip(pi_hat, 0, 1)
        theta = mapping.theta(pi_mle)
        # variance given the observed M (an estimate of the conditional variance)
        se = np.sqrt(theta * (1 - theta) / m) * mapping.answered / abs(
            mapping.first_yes - mapping.first_no)
        z = z_value(level)
        return np.clip(pi_hat - z * se, 0, 1), np.clip(pi_hat + z * se, 0, 1)
    raise ParameterError(f"method ({method!r}) must be one of {', '.join(BINOMIAL_CI_METHODS)}")
