"""The generalized Warner mechanism Q2x3 (paper, Section 3) and Warner's (1965) design.

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from surveykit.errors import ParameterError
from surveykit.validation import check_sample_size

if TYPE_CHECKING:
    from surveykit.privacy.evidential import EvidentialMechanism

__all__ = ["DONT_KNOW", "NO", "YES", "GeneralizedWarner", "Warner", "estimate_redistributed"]

_PROB_SLACK = 1e-12
YES, NO, DONT_KNOW = "yes", "no", "dont_know"


def _check_probability(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating | np.integer):
        raise ParameterError(f"{name} ({value!r}) must be a number between 0 and 1")
    value = float(value)
    if not math.isfinite(value) or not 0 <= value <= 1:
        raise ParameterError(f"{name} ({value}) must be a probability between 0 and 1")
    return value


@dataclass(frozen=True, kw_only=True)
class GeneralizedWarner:
    """The paper's Q2x3: answer truthfully (p), the opposite (q), "don't know" (1 - p - q).

    ::

                 yes   no    don't know
        Q2x3 = ( p     q     1 - p - q )   true status: has the property
               ( q     p     1 - p - q )   true status: does not

    "Don't know" is the focal set {yes, no}: it says nothing about the truth.
    The share of "yes" is q1 = pi p + (1 - pi) q, of "no" q2 = pi q + (1 - pi) p,
    of "don't know" q3 = 1 - p - q (paper, Section 3, before Eq. 2).

    Parameters are validated here, once: p and q are probabilities, p + q <= 1,
    and p > q (with p <= q the answers carry no information about pi, or
    reversed information).

    >>> gw = GeneralizedWarner(p=0.6, q=0.2)
    >>> round(gw.dont_know, 12), round(gw.epsilon_shafer, 4), round(gw.epsilon_walley, 4)
    (0.2, 1.0986, 1.3863)
    """

    p: float
    q: float

    def __post_init__(self) -> None:
        p = _check_probability("p", self.p)
        q = _check_probability("q", self.q)
        if p + q > 1 + _PROB_SLACK:
            raise ParameterError(
                f"p + q ({p} + {q} = {p + q:.6g}) must be at most 1: "
                "1 - p - q is the probability of answering \"don't know\""
            )
        if p <= q:
            raise ParameterError(
                f"p ({p}) must be greater than q ({q}): with p <= q the answers carry "
                "no information about pi (not identifiable) or point the wrong way"
            )
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "q", q)

    # -- constructors --------------------------------------------------------------

    @classmethod
    def optimal(cls, *, epsilon: float, dont_know: float = 0.0) -> GeneralizedWarner:
        """The optimal mechanism for a Shafer budget with p + q = c fixed (Corollary 3.12).

        p = c e^eps / (e^eps + 1), q = c / (e^eps + 1), c = 1 - dont_know
        (docs/errata.md, item 4: c is p + q, not the don't-know probability).

        >>> gw = GeneralizedWarner.optimal(epsilon=math.log(3), dont_know=0.2)
        >>> round(gw.p, 12), round(gw.q, 12)
        (0.6, 0.2)
        """
        epsilon = _check_epsilon(epsilon)
        c = 1.0 - _check_probability("dont_know", dont_know)
        if c <= 0:
            raise ParameterError(
                f"dont_know ({dont_know}) must be below 1: someone must answer yes or no"
            )
        # 1 / (e^eps + 1) written with exp(-eps) so a large budget does not overflow
        q = c * math.exp(-epsilon) / (1 + math.exp(-epsilon))
        return cls(p=c - q, q=q)

    @classmethod
    def for_walley_budget(cls, *, epsilon: float, dont_know: float = 0.0) -> GeneralizedWarner:
        """The mechanism whose Walley loss ln((1 - q)/q) equals epsilon, for a don't-know rate.

        q = 1 / (e^eps + 1) and p = 1 - q - dont_know (Section 3.2, eps^W).
        Among mechanisms with this Walley loss and don't-know rate it is the only one.
        """
        epsilon = _check_epsilon(epsilon)
        dont_know = _check_probability("dont_know", dont_know)
        q = math.exp(-epsilon) / (1 + math.exp(-epsilon))
        p = 1.0 - q - dont_know
        if p <= q:
            raise ParameterError(
                f"dont_know ({dont_know}) is too large for a Walley budget of {epsilon}: "
                f"it leaves p = {p:.4g} <= q = {q:.4g}; lower dont_know below {1 - 2 * q:.4g}"
            )
        return cls(p=p, q=q)

    # -- derived quantities --------------------------------------------------------

    @property
    def dont_know(self) -> float:
        """q3 = 1 - p - q, the probability of answering "don't know"."""
        return max(0.0, 1.0 - self.p - self.q)

    @property
    def answer_rate(self) -> float:
        """p + q, the probability of a yes/no answer."""
        return self.p + self.q

    @property
    def epsilon_shafer(self) -> float:
        """eps_S(p, q) = ln(p / q) (Def. 3.1 applied to Q2x3; ``inf`` when q = 0)."""
        return math.inf if self.q == 0 else math.log(self.p / self.q)

    @property
    def epsilon_walley(self) -> float:
        """eps_W(p, q) = ln((1 - q) / q) (Def. 3.13 applied to Q2x3; ``inf`` when q = 0)."""
        return math.inf if self.q == 0 else math.log((1 - self.q) / self.q)

    @property
    def epsilon_optimistic(self) -> float:
        """eps_O(p, q): the smallest loss among the redistributions Q_lambda (Section 3.2).

        Q_lambda is Warner's mechanism with truth probability
        p + lambda (1 - p - q) in [p, 1 - q]; its loss |ln(t / (1 - t))| is
        smallest at lambda = 0 when p >= 1/2, and 0 when p < 1/2.
        """
        return math.log(self.p / (1 - self.p)) if self.p > 0.5 else 0.0

    def probabilities(self, pi: float | np.ndarray) -> tuple:
        """(q1, q2, q3): shares of yes, no and don't know when the prevalence is pi."""
        pi = np.asarray(pi, dtype=float)
        q1 = pi * self.p + (1 - pi) * self.q
        q2 = pi * self.q + (1 - pi) * self.p
        q3 = np.full_like(q1, self.dont_know)
        if q1.ndim == 0:
            return float(q1), float(q2), float(q3)
        return q1, q2, q3

    def to_evidential(self) -> EvidentialMechanism:
        """The same mechanism as a general :class:`EvidentialMechanism`.

        Inputs are ``"yes"`` / ``"no"`` (the true status), outputs ``"yes"`` /
        ``"no"``; "don't know" is the focal set {yes, no}.
        """
        from surveykit.privacy.evidential import EvidentialMechanism

        return EvidentialMechanism(
            inputs=(YES, NO),
            outputs=(YES, NO),
            focal_sets=(frozenset({YES}), frozenset({NO}), frozenset({YES, NO})),
            masses=[[self.p, self.q, self.dont_know], [self.q, self.p, self.dont_know]],
        )

    # -- estimation accuracy -------------------------------------------------------

    def conditional_variance(
        self,
        *,
        pi: float | np.ndarray,
        n: int,
        method: Literal["exact", "grab-savage"] = "exact",
    ) -> float | np.ndarray:
        """Var(pi_hat | N1 + N2 > 0) for n respondents and prevalence pi.

        Given M = N1 + N2 = m > 0, N1 ~ Binomial(m, q1 / (p + q)) and pi_hat is
        linear in N1 / m with conditional mean pi (Theorem 3.9), so

            Var(pi_hat | M > 0) = q1 q2 / (p - q)^2 * E[1/M | M > 0],

        M ~ Binomial(n, p + q). This is Theorem 3.10 *with* the conditioning
        factor 1 / (1 - q3^n) that the paper drops (docs/errata.md, item 1).

        ``method="grab-savage"`` replaces E[1/M | M > 0] by the paper's
        approximation 1 / ((n + 1)(p + q) - 1) (Grab and Savage 1954), which
        needs (n + 1)(p + q) > 1.

        With p + q = 1, M = n and both methods give Warner's Eq. (1).

        >>> gw = GeneralizedWarner(p=0.4, q=0.1)
        >>> round(gw.conditional_variance(pi=0.5, n=3), 10)  # exact enumeration: 0.4794973545
        0.4794973545
        """
        n = check_sample_size(n)
        pi_arr = np.asarray(pi, dtype=float)
        if np.any(~np.isfinite(pi_arr)) or np.any((pi_arr < 0) | (pi_arr > 1)):
            raise ParameterError(f"pi ({pi!r}) must be a proportion between 0 and 1")
        from surveykit.estimation.exact import inverse_moment

        if method == "exact":
            inverse = inverse_moment(n, self.answer_rate)
        elif method == "grab-savage":
            denominator = (n + 1) * self.answer_rate - 1
            if denominator <= 0:
                raise ParameterError(
                    f"the Grab-Savage approximation needs (n + 1)(p + q) > 1, "
                    f"got {denominator + 1:.6g}; use method='exact'"
                )
            inverse = 1.0 / denominator
        else:
            raise ParameterError(
                f"method ({method!r}) must be 'exact' or 'grab-savage'"
            )
        q1, q2, _ = self.probabilities(pi_arr)
        variance = q1 * q2 / (self.p - self.q) ** 2 * inverse
        return float(variance) if np.ndim(variance) == 0 else variance

    # -- Walley's redistributions Q_lambda (Section 3.2) -----------------------------

    def redistribute(self, *, lam: float) -> Warner:
        """Q_lambda: the don't-know mass goes to the truthful answer with weight lambda.

        Q_lambda is Warner's mechanism with truth probability p + lambda (1 - p - q)
        and lie probability q + (1 - lambda)(1 - p - q).
        """
        lam = _check_probability("lam", lam)
        return Warner(p=self.p + lam * self.dont_know)

    def nu_walley(self, *, pi: float, n: int) -> float:
        """nu_W(p, q): Warner's variance (Eq. 1) at truth probability p, i.e. Q_0 (Sec. 3.2).

        The worst variance among the Q_lambda; ``inf`` when p <= 1/2 (some
        Q_lambda is then uninformative).
        """
        if self.p <= 0.5:
            return math.inf
        from surveykit.estimation.exact import warner_variance

        return warner_variance(pi=pi, p=self.p, n=n)

    def nu_optimistic(self, *, pi: float, n: int) -> float:
        """nu_O(p, q): Warner's variance at truth probability 1 - q, i.e. Q_1 (Section 3.2)."""
        from surveykit.estimation.exact import warner_variance

        return warner_variance(pi=pi, p=1 - self.q, n=n)


@dataclass(frozen=True, kw_only=True, init=False)
class Warner(GeneralizedWarner):
    """Warner's (1965) randomized response: the case p + q = 1 (no "don't know").

    >>> Warner(p=0.75)
    Warner(p=0.75, q=0.25)
    """

    def __init__(self, *, p: float) -> None:
        p = _check_probability("p", p)
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "q", 1.0 - p)
        self.__post_init__()


def estimate_redistributed(*, yes: int, n: int, mechanism: GeneralizedWarner, lam: float) -> float:
    """Estimator of pi under Q_lambda (Section 3.2; docs/errata.md, item 6).

    pi_hat = (n1/n - (1 - lambda)(1 - p - q) - q) / (p - q + (2 lambda - 1)(1 - p - q))

    Here every respondent answers yes or no; ``yes`` is n1 out of ``n``.
    """
    n = check_sample_size(n)
    lam = _check_probability("lam", lam)
    r = mechanism.dont_know
    denominator = mechanism.p - mechanism.q + (2 * lam - 1) * r
    if denominator == 0:
        raise ParameterError(f"lam ({lam}) makes Q_lambda uninformative (truth probability 1/2)")
    return (yes / n - (1 - lam) * r - mechanism.q) / denominator


def _check_epsilon(epsilon: object) -> float:
    if isinstance(epsilon, bool) or not isinstance(epsilon, int | float | np.floating):
        raise ParameterError(f"epsilon ({epsilon!r}) must be a positive number")
    epsilon = float(epsilon)
    if not math.isfinite(epsilon) or epsilon <= 0:
        raise ParameterError(f"epsilon ({epsilon}) must be a positive, finite privacy budget")
    return epsilon
