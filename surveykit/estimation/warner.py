"""Estimating the prevalence pi from yes / no / don't-know counts.

For the generalized Warner mechanism (:class:`~surveykit.designs.warner.GeneralizedWarner`)
the likelihood of counts (n1, n2, n3) is q1^n1 q2^n2 q3^n3 with
q1 = pi p + (1 - pi) q and q2 = pi q + (1 - pi) p (paper, Section 3). Its
score equation n1/q1 = n2/q2 has the root (Eq. 2)

    pi_hat = (n2 q - n1 p) / ((n1 + n2)(q - p)),

which can fall outside [0, 1]. The log-likelihood is concave in pi, so the
maximum-likelihood estimate on [0, 1] is pi_hat clipped to [0, 1]
(docs/errata.md, item 7).

Confidence intervals condition on the number of yes/no answers M = n1 + n2:
given M = m, N1 ~ Binomial(m, theta) with theta = q1 / (p + q), which is
linear in pi. An interval for theta maps to one for pi by
pi = (theta (p + q) - q) / (p - q).

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np

from surveykit.designs.warner import GeneralizedWarner
from surveykit.errors import EstimationError, ParameterError

__all__ = [
    "CI_METHODS",
    "DEFAULT_CI_METHOD",
    "ConfidenceInterval",
    "Estimate",
    "estimate",
    "estimate_from_labels",
    "interval_arrays",
]

CIMethod = Literal["wilson-cc", "wilson", "clopper-pearson", "likelihood-ratio", "wald"]
CI_METHODS: tuple[str, ...] = ("wilson-cc", "wilson", "clopper-pearson", "likelihood-ratio", "wald")
# Plain Wilson (and the likelihood-ratio and Wald intervals) cover only 93.5%
# for Warner's p = 0.75 at pi = 0.5, n = 50, where the binomial lattice is
# coarse; the continuity-corrected score interval stays above 95% on the whole
# grid of tests/test_estimation.py and is barely wider, so it is the default.
DEFAULT_CI_METHOD: CIMethod = "wilson-cc"


class ConfidenceInterval(NamedTuple):
    """A confidence interval for pi: ``low <= pi <= high``."""

    low: float
    high: float


def _check_count(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        if isinstance(value, float | np.floating) and float(value).is_integer():
            value = int(value)
        else:
            raise ParameterError(f"{name} ({value!r}) must be a whole number (a count)")
    if value < 0:
        raise ParameterError(f"{name} ({value}) must not be negative")
    return int(value)


def _check_level(level: object) -> float:
    if isinstance(level, bool) or not isinstance(level, int | float | np.floating):
        raise ParameterError(f"level ({level!r}) must be a number between 0 and 1, e.g. 0.95")
    level = float(level)
    if not 0 < level < 1:
        raise ParameterError(f"level ({level}) must be strictly between 0 and 1, e.g. 0.95")
    return level


def _z(level: float) -> float:
    # scipy.stats costs ~1 s to import; only the commands that compute pay for it
    from scipy import stats

    return float(stats.norm.isf((1 - level) / 2))


def _theta_to_pi(theta, mechanism: GeneralizedWarner):
    pi = (np.asarray(theta, dtype=float) * mechanism.answer_rate - mechanism.q) / (
        mechanism.p - mechanism.q
    )
    return np.clip(pi, 0.0, 1.0)


def _wilson(yes, m, level: float, mechanism: GeneralizedWarner):
    """Wilson's score interval for theta, mapped to pi and clipped to [0, 1]."""
    z2 = _z(level) ** 2
    yes = np.asarray(yes, dtype=float)
    m = np.asarray(m, dtype=float)
    theta = yes / m
    centre = (theta + z2 / (2 * m)) / (1 + z2 / m)
    half = np.sqrt(theta * (1 - theta) / m + z2 / (4 * m * m)) * np.sqrt(z2) / (1 + z2 / m)
    return _theta_to_pi(centre - half, mechanism), _theta_to_pi(centre + half, mechanism)


def _wilson_cc(yes, m, level: float, mechanism: GeneralizedWarner):
    """Wilson's score interval with continuity correction (Newcombe 1998, method 4)."""
    z = _z(level)
    z2 = z * z
    yes = np.asarray(yes, dtype=float)
    m = np.asarray(m, dtype=float)
    theta = yes / m
    denominator = 2 * (m + z2)
    # The radicands are >= 0 whenever the limit is used (theta > 0 resp. theta < 1).
    low_radicand = np.maximum(z2 - 2 - 1 / m + 4 * theta * (m * (1 - theta) + 1), 0)
    high_radicand = np.maximum(z2 + 2 - 1 / m + 4 * theta * (m * (1 - theta) - 1), 0)
    low = (2 * m * theta + z2 - 1 - z * np.sqrt(low_radicand)) / denominator
    high = (2 * m * theta + z2 + 1 + z * np.sqrt(high_radicand)) / denominator
    low = np.where(yes == 0, 0.0, low)
    high = np.where(yes == m, 1.0, high)
    return _theta_to_pi(low, mechanism), _theta_to_pi(high, mechanism)


def _clopper_pearson(yes, m, level: float, mechanism: GeneralizedWarner):
    """Clopper-Pearson's exact interval for theta, from beta quantiles."""
    from scipy import stats

    alpha = 1 - level
    yes = np.asarray(yes, dtype=float)
    m = np.asarray(m, dtype=float)
    with np.errstate(invalid="ignore"):
        low = np.where(yes == 0, 0.0,
                       stats.beta.ppf(alpha / 2, np.maximum(yes, 1), m - yes + 1))
        high = np.where(yes == m, 1.0,
                        stats.beta.ppf(1 - alpha / 2, yes + 1, np.maximum(m - yes, 1)))
    return _theta_to_pi(low, mechanism), _theta_to_pi(high, mechanism)


def _binomial_loglik(yes, no, theta):
    from scipy import special

    # xlogy keeps 0 * log(0) = 0 at the edges of [0, 1]
    return special.xlogy(yes, theta) + special.xlogy(no, 1 - theta)


def _likelihood_ratio(yes, m, level: float, mechanism: GeneralizedWarner):
    """Likelihood-ratio interval: {pi in [0, 1]: 2 (l(pi_mle) - l(pi)) <= chi2_1(level)}.

    The log-likelihood in theta = q1 / (p + q) is binomial and concave, and
    theta is restricted to [q, p] / (p + q) because pi is in [0, 1]. Each end
    is found by bisection (vectorized, 60 halvings: below 1e-17 of the range).
    """
    yes = np.asarray(yes, dtype=float)
    m = np.asarray(m, dtype=float)
    no = m - yes
    s = mechanism.answer_rate
    lower, upper = mechanism.q / s, mechanism.p / s
    theta_hat = np.clip(yes / m, lower, upper)
    from scipy import stats

    cutoff = float(stats.chi2.isf(1 - level, 1)) / 2
    target = _binomial_loglik(yes, no, theta_hat) - cutoff

    def solve(outer):
        outer = np.broadcast_to(np.asarray(outer, dtype=float), theta_hat.shape).copy()
        inside = theta_hat.copy()
        at_edge = _binomial_loglik(yes, no, outer) >= target
        for _ in range(60):
            mid = (inside + outer) / 2
            ok = _binomial_loglik(yes, no, mid) >= target
            inside = np.where(ok, mid, inside)
            outer = np.where(ok, outer, mid)
        return np.where(at_edge, outer, inside)

    return _theta_to_pi(solve(lower), mechanism), _theta_to_pi(solve(upper), mechanism)


def interval_arrays(
    *,
    yes,
    no,
    dont_know,
    mechanism: GeneralizedWarner,
    level: float = 0.95,
    method: CIMethod = DEFAULT_CI_METHOD,
) -> tuple[np.ndarray, np.ndarray]:
    """Confidence limits for many surveys at once (arrays of counts); see :class:`Estimate`.

    Used by simulations and coverage studies; every array must have
    yes + no > 0. Returns ``(low, high)`` arrays.
    """
    level = _check_level(level)
    yes = np.asarray(yes)
    no = np.asarray(no)
    m = yes + no
    if np.any(m <= 0):
        raise EstimationError("no yes/no answers: pi cannot be estimated")
    if method == "wilson-cc":
        return _wilson_cc(yes, m, level, mechanism)
    if method == "wilson":
        return _wilson(yes, m, level, mechanism)
    if method == "clopper-pearson":
        return _clopper_pearson(yes, m, level, mechanism)
    if method == "likelihood-ratio":
        return _likelihood_ratio(yes, m, level, mechanism)
    if method == "wald":
        pi_hat = (no * mechanism.q - yes * mechanism.p) / (m * (mechanism.q - mechanism.p))
        pi_mle = np.clip(pi_hat, 0, 1)
        q1, q2, _ = mechanism.probabilities(pi_mle)
        # variance given the observed M (an estimate of the conditional variance)
        se = np.sqrt(q1 * q2 / m) / (mechanism.p - mechanism.q)
        z = _z(level)
        return np.clip(pi_hat - z * se, 0, 1), np.clip(pi_hat + z * se, 0, 1)
    raise ParameterError(f"method ({method!r}) must be one of {', '.join(CI_METHODS)}")


@dataclass(frozen=True, kw_only=True)
class Estimate:
    """The estimate of pi from one question's counts.

    Attributes
    ----------
    n, yes, no, dont_know:
        The counts (n = yes + no + dont_know).
    mechanism:
        The generalized Warner mechanism the answers went through.
    pi_hat:
        Eq. (2), the unconstrained root of the score equation (may be < 0 or > 1).
    pi_mle:
        The maximum-likelihood estimate on [0, 1] (pi_hat clipped).
    variance:
        The exact Var(pi_hat | N1 + N2 > 0) evaluated at pi = pi_mle.
    se:
        sqrt(variance).
    """

    n: int
    yes: int
    no: int
    dont_know: int
    mechanism: GeneralizedWarner
    pi_hat: float
    pi_mle: float
    variance: float
    se: float

    def confidence_interval(
        self, level: float = 0.95, method: CIMethod = DEFAULT_CI_METHOD
    ) -> ConfidenceInterval:
        """A confidence interval for pi at ``level``, always inside [0, 1].

        Methods:

        * ``"wilson-cc"`` (default): Wilson's score interval with continuity
          correction for theta = q1/(p + q) given the M = yes + no answers,
          mapped linearly to pi. Coverage stays at or above nominal, also
          close to pi = 0 and 1 (docs/estimation.md has the exact coverages).
        * ``"wilson"``: the same without continuity correction; narrower, and
          its coverage oscillates around nominal (down to 93.5%).
        * ``"clopper-pearson"``: the exact binomial interval; never below
          nominal given M, a little wider.
        * ``"likelihood-ratio"``: inverts the likelihood-ratio test with pi
          restricted to [0, 1].
        * ``"wald"``: pi_hat +/- z se (se from the observed M), clipped to [0, 1];
          undercovers near the boundary, offered for comparison with textbooks.

        >>> e = estimate(yes=30, no=50, dont_know=20, mechanism=GeneralizedWarner(p=0.6, q=0.2))
        >>> low, high = e.confidence_interval(0.95)
        >>> 0 <= low < e.pi_mle < high <= 1
        True
        """
        low, high = interval_arrays(
            yes=self.yes,
            no=self.no,
            dont_know=self.dont_know,
            mechanism=self.mechanism,
            level=level,
            method=method,
        )
        return ConfidenceInterval(float(low), float(high))

    def to_dict(self, level: float = 0.95, method: CIMethod = DEFAULT_CI_METHOD) -> dict:
        """Plain numbers for JSON and pandas (the CLI's ``--format json`` keys).

        Infinite privacy losses (q = 0: no protection) become ``None``.
        """
        low, high = self.confidence_interval(level, method)
        return {
            "n": self.n,
            "yes": self.yes,
            "no": self.no,
            "dont_know": self.dont_know,
            "p": self.mechanism.p,
            "q": self.mechanism.q,
            "pi_hat": self.pi_hat,
            "pi_mle": self.pi_mle,
            "variance": self.variance,
            "se": self.se,
            "ci_low": low,
            "ci_high": high,
            "ci_level": level,
            "ci_method": method,
            "epsilon_shafer": _finite_or_none(self.mechanism.epsilon_shafer),
            "epsilon_walley": _finite_or_none(self.mechanism.epsilon_walley),
        }


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


def estimate(*, yes: int, no: int, dont_know: int, mechanism: GeneralizedWarner) -> Estimate:
    """Estimate the prevalence pi from yes / no / don't-know counts (paper, Eq. 2).

    >>> e = estimate(yes=30, no=50, dont_know=20, mechanism=GeneralizedWarner(p=0.6, q=0.2))
    >>> round(e.pi_hat, 6)  # (50*0.2 - 30*0.6) / (80 * (0.2 - 0.6))
    0.25
    """
    if not isinstance(mechanism, GeneralizedWarner):
        raise ParameterError(
            f"mechanism ({mechanism!r}) must be a GeneralizedWarner, e.g. "
            "GeneralizedWarner(p=0.6, q=0.2)"
        )
    yes = _check_count("yes", yes)
    no = _check_count("no", no)
    dont_know = _check_count("dont_know", dont_know)
    m = yes + no
    if m == 0:
        raise EstimationError("no yes/no answers: pi cannot be estimated")
    n = m + dont_know
    p, q = mechanism.p, mechanism.q
    pi_hat = (no * q - yes * p) / (m * (q - p))
    pi_mle = min(1.0, max(0.0, pi_hat))
    variance = mechanism.conditional_variance(pi=pi_mle, n=n)
    return Estimate(
        n=n,
        yes=yes,
        no=no,
        dont_know=dont_know,
        mechanism=mechanism,
        pi_hat=pi_hat,
        pi_mle=pi_mle,
        variance=variance,
        se=math.sqrt(variance),
    )


# Labels accepted by estimate_from_labels, in bincount order.
_LABELS = ("yes", "no", "dont_know")


def estimate_from_labels(labels, *, mechanism: GeneralizedWarner) -> Estimate:
    """Estimate pi from raw responses: an array of labels.

    ``labels`` may hold the integer codes 0 (yes), 1 (no), 2 (don't know)
    or the strings ``"yes"``, ``"no"``, ``"dont_know"`` (a pandas Series or
    Categorical works too). Counting is one ``numpy.bincount``.

    >>> estimate_from_labels(["yes", "no", "no", "dont_know"],
    ...                      mechanism=GeneralizedWarner(p=0.6, q=0.2)).n
    4
    """
    array = np.asarray(labels)
    if array.dtype.kind in "iu":
        codes = array
    else:
        codes = np.full(array.shape, -1, dtype=np.int8)
        for i, label in enumerate(_LABELS):
            codes[array == label] = i
    if codes.size and (codes.min() < 0 or codes.max() > 2):
        bad = array[(codes < 0) | (codes > 2)][0].item()
        raise ParameterError(
            f"label {bad!r} is not one of yes, no, dont_know (or the codes 0, 1, 2)"
        )
    yes, no, dont_know = np.bincount(codes.ravel(), minlength=3)[:3]
    return estimate(yes=int(yes), no=int(no), dont_know=int(dont_know), mechanism=mechanism)

