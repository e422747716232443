"""Evidential privacy mechanisms, the generalized Warner mechanism, privacy losses.

Notation follows Li, Zhou, Qin and Xu, *Local Differential Privacy for Belief
Functions* (``../shared/paper/paper.md``; "the paper" below). A mechanism maps
each input x in X to a *mass function* m_x over the non-empty subsets (focal
sets) of an output alphabet Y (Section 3). From m_x follow

    bel_x(E) = sum_{B subset of E} m_x(B),   pl_x(E) = sum_{B meets E} m_x(B).

Privacy losses (all are >= 0 because x = x' gives the ratio 1):

* Shafer (Def. 3.1):  eps_S = ln max_{x, x', E} m_x(E) / m_x'(E)
* bel/pl variants (Lemma 3.2): the same maximum with bel or pl in place of m
* Walley (Def. 3.13, through Lemma 3.14 and its proof):
  eps_W = ln max_{x, x', E} pl_x(E) / bel_x'(E)

A ratio a/0 with a > 0 is unbounded (the loss is ``inf``); 0/0 says nothing
about x against x' and is skipped. No division ever runs on a zero.

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from surveykit.errors import ParameterError

__all__ = [
    "EvidentialMechanism",
    "GeneralizedWarner",
    "Warner",
    "compose",
    "post_process",
    "tradeoff_u",
    "tradeoff_U",
    "tradeoff_u2",
    "tradeoff_U2",
    "tradeoff_f_pe",
    "tradeoff_f_op",
    "tradeoff_f2_pe",
    "tradeoff_f2_op",
    "inverse_moment",
    "warner_variance",
]

# Rows of a mass function must sum to one up to this (floating-point) slack.
_SUM_TOLERANCE = 1e-9
# Enumerating all events of Y costs 2^|Y|; beyond this the losses are refused.
_MAX_EVENT_OUTPUTS = 16

Semantics = Literal["shafer", "bel", "pl", "walley"]


def _max_log_ratio(numerators: np.ndarray, denominators: np.ndarray) -> float:
    """ln max over (x, x', E) of numerators[x, E] / denominators[x', E].

    Pairs where both are zero are skipped; a positive numerator over a zero
    denominator makes the result ``inf``. Never divides by zero.
    """
    num = numerators[:, None, :]
    den = denominators[None, :, :]
    positive_over_zero = (num > 0) & (den <= 0)
    if np.any(positive_over_zero):
        return math.inf
    usable = den > 0
    ratios = np.divide(num, den, out=np.zeros(np.broadcast_shapes(num.shape, den.shape)),
                       where=usable)
    best = float(ratios.max()) if ratios.size else 1.0
    # Numerical noise may push a ratio of equal quantities an ulp below 1.
    return max(0.0, math.log(best)) if best > 0 else 0.0


@dataclass(frozen=True, kw_only=True)
class EvidentialMechanism:
    """A privacy mechanism whose rows are mass functions (paper, Section 3).

    Parameters
    ----------
    inputs:
        The input alphabet X (e.g. ``("has property", "does not")``).
    outputs:
        The output alphabet Y.
    focal_sets:
        The subsets of Y that columns of ``masses`` refer to; each must be a
        non-empty subset of ``outputs``. ``frozenset()`` is accepted only to
        report a helpful error when it carries mass.
    masses:
        A ``len(inputs) x len(focal_sets)`` matrix; row x is the mass function m_x.

    Example
    -------
    >>> m = EvidentialMechanism(
    ...     inputs=("x1", "x2"), outputs=("yes", "no"),
    ...     focal_sets=[{"yes"}, {"no"}, {"yes", "no"}],
    ...     masses=[[0.6, 0.2, 0.2], [0.2, 0.6, 0.2]])
    >>> round(m.epsilon_shafer(), 4)  # ln(0.6 / 0.2)
    1.0986
    """

    inputs: tuple[Hashable, ...]
    outputs: tuple[Hashable, ...]
    focal_sets: tuple[frozenset, ...]
    masses: np.ndarray = field(repr=False)

    def __post_init__(self) -> None:
        inputs = tuple(self.inputs)
        outputs = tuple(self.outputs)
        if len(set(inputs)) != len(inputs) or not inputs:
            raise ParameterError(f"inputs {inputs!r} must be a non-empty list of distinct values")
        if len(set(outputs)) != len(outputs) or not outputs:
            raise ParameterError(
                f"outputs {outputs!r} must be a non-empty list of distinct values"
            )
        focal_sets = tuple(frozenset(s) for s in self.focal_sets)
        if len(set(focal_sets)) != len(focal_sets):
            raise ParameterError("focal_sets must be distinct: merge the columns of repeated sets")
        for s in focal_sets:
            unknown = s - set(outputs)
            if unknown:
                raise ParameterError(
                    f"focal set {sorted(map(str, s))} contains {sorted(map(str, unknown))}, "
                    f"which are not outputs {list(outputs)!r}"
                )
        masses = np.array(self.masses, dtype=float, copy=True)
        if masses.shape != (len(inputs), len(focal_sets)):
            raise ParameterError(
                f"masses has shape {masses.shape}, expected {(len(inputs), len(focal_sets))} "
                "(one row per input, one column per focal set)"
            )
        for i, x in enumerate(inputs):
            row = masses[i]
            if not np.all(np.isfinite(row)):
                raise ParameterError(f"row {x!r}: masses {row.tolist()} must be finite numbers")
            negative = np.flatnonzero(row < 0)
            if negative.size:
                j = negative[0]
                raise ParameterError(
                    f"row {x!r}: mass {row[j]} on {sorted(map(str, focal_sets[j]))} is negative; "
                    "masses must be >= 0"
                )
            for j, s in enumerate(focal_sets):
                if not s and row[j] > 0:
                    raise ParameterError(
                        f"row {x!r}: mass {row[j]} on the empty set; a normal mass function "
                        "puts no mass on the empty set"
                    )
            total = float(row.sum())
            if abs(total - 1.0) > _SUM_TOLERANCE:
                raise ParameterError(
                    f"row {x!r}: masses sum to {total:.10g}, not 1; rescale the row"
                )
        masses.setflags(write=False)
        object.__setattr__(self, "inputs", inputs)
        object.__setattr__(self, "outputs", outputs)
        object.__setattr__(self, "focal_sets", focal_sets)
        object.__setattr__(self, "masses", masses)

    # -- belief and plausibility -------------------------------------------------

    def _event(self, event: Iterable[Hashable]) -> frozenset:
        event = frozenset(event)
        unknown = event - set(self.outputs)
        if unknown:
            raise ParameterError(
                f"event contains {sorted(map(str, unknown))}, not outputs {list(self.outputs)!r}"
            )
        return event

    def mass(self, x: Hashable, event: Iterable[Hashable]) -> float:
        """m_x(E): the mass the row of input x puts exactly on E."""
        event = self._event(event)
        row = self.masses[self._row(x)]
        return float(sum(row[j] for j, s in enumerate(self.focal_sets) if s == event))

    def belief(self, x: Hashable, event: Iterable[Hashable]) -> float:
        """bel_x(E) = sum of m_x(B) over focal sets B contained in E (paper, Section 2)."""
        event = self._event(event)
        row = self.masses[self._row(x)]
        return float(sum(row[j] for j, s in enumerate(self.focal_sets) if s and s <= event))

    def plausibility(self, x: Hashable, event: Iterable[Hashable]) -> float:
        """pl_x(E) = sum of m_x(B) over focal sets B that meet E (paper, Section 2)."""
        event = self._event(event)
        row = self.masses[self._row(x)]
        return float(sum(row[j] for j, s in enumerate(self.focal_sets) if s & event))

    def _row(self, x: Hashable) -> int:
        try:
            return self.inputs.index(x)
        except ValueError:
            raise ParameterError(f"input {x!r} is not one of {list(self.inputs)!r}") from None

    def _events(self) -> list[frozenset]:
        if len(self.outputs) > _MAX_EVENT_OUTPUTS:
            raise ParameterError(
                f"{len(self.outputs)} outputs give 2^{len(self.outputs)} events; "
                f"bel/pl losses are limited to {_MAX_EVENT_OUTPUTS} outputs"
            )
        return [
            frozenset(c)
            for r in range(1, len(self.outputs) + 1)
            for c in itertools.combinations(self.outputs, r)
        ]

    def _event_matrices(self) -> tuple[np.ndarray, np.ndarray]:
        events = self._events()
        inside = np.array(
            [[1.0 if s and s <= e else 0.0 for s in self.focal_sets] for e in events]
        )
        meets = np.array([[1.0 if s & e else 0.0 for s in self.focal_sets] for e in events])
        return self.masses @ inside.T, self.masses @ meets.T

    # -- privacy losses ----------------------------------------------------------

    def epsilon_shafer(self) -> float:
        """Shafer privacy loss eps_S = ln max m_x(E)/m_x'(E) (Def. 3.1)."""
        return _max_log_ratio(self.masses, self.masses)

    def epsilon_bel(self) -> float:
        """ln max bel_x(E)/bel_x'(E) over events E (Lemma 3.2); never above eps_S."""
        bel, _ = self._event_matrices()
        return _max_log_ratio(bel, bel)

    def epsilon_pl(self) -> float:
        """ln max pl_x(E)/pl_x'(E) over events E (Lemma 3.2); never above eps_S."""
        _, pl = self._event_matrices()
        return _max_log_ratio(pl, pl)

    def epsilon_walley(self) -> float:
        """Walley privacy loss eps_W = ln max pl_x(E)/bel_x'(E) (Def. 3.13, Lemma 3.14).

        The supremum over the credal sets of pr_x(E)/pr_x'(E) is attained at
        pr_x(E) = pl_x(E) and pr_x'(E) = bel_x'(E) (proof of Lemma 3.14).
        """
        bel, pl = self._event_matrices()
        return _max_log_ratio(pl, bel)

    def epsilon(self, semantics: Semantics = "shafer") -> float:
        """The privacy loss in the named semantics: shafer, bel, pl or walley."""
        methods: dict[str, Callable[[], float]] = {
            "shafer": self.epsilon_shafer,
            "bel": self.epsilon_bel,
            "pl": self.epsilon_pl,
            "walley": self.epsilon_walley,
        }
        if semantics not in methods:
            raise ParameterError(
                f"semantics {semantics!r} is not one of {sorted(methods)}"
            )
        return methods[semantics]()


def compose(first: EvidentialMechanism, second: EvidentialMechanism) -> EvidentialMechanism:
    """The product mechanism Q_{1,2}(x) = (Q_1(x), Q_2(x)) (Lemmas 3.3 and 3.15).

    Both mechanisms see the same input (one respondent answering two
    questions). Outputs are pairs (y1, y2); focal sets are products E1 x E2
    with mass m1_x(E1) m2_x(E2). Privacy losses are at most the sum of the two.

    >>> gw = GeneralizedWarner(p=0.6, q=0.2).to_evidential()
    >>> round(compose(gw, gw).epsilon_shafer(), 4)  # 2 ln 3
    2.1972
    """
    if first.inputs != second.inputs:
        raise ParameterError(
            f"compose needs the same inputs: {list(first.inputs)!r} != {list(second.inputs)!r}"
        )
    outputs = tuple(itertools.product(first.outputs, second.outputs))
    focal_sets = tuple(
        frozenset(itertools.product(a, b))
        for a in first.focal_sets
        for b in second.focal_sets
    )
    masses = np.einsum("xi,xj->xij", first.masses, second.masses).reshape(len(first.inputs), -1)
    return EvidentialMechanism(
        inputs=first.inputs, outputs=outputs, focal_sets=focal_sets, masses=masses
    )


def post_process(
    mechanism: EvidentialMechanism, mapping: Callable[[Hashable], Hashable]
) -> EvidentialMechanism:
    """f o Q for a deterministic, data-independent map f: Y -> Z (Lemmas 3.4 and 3.16).

    A focal set E becomes its image f(E); masses of sets with the same image
    add up. Privacy losses never increase.

    >>> gw = GeneralizedWarner(p=0.6, q=0.2).to_evidential()
    >>> post_process(gw, lambda y: "answered").epsilon_shafer()
    0.0
    """
    images: dict[frozenset, int] = {}
    for s in mechanism.focal_sets:
        images.setdefault(frozenset(mapping(y) for y in s), len(images))
    masses = np.zeros((len(mechanism.inputs), len(images)))
    for j, s in enumerate(mechanism.focal_sets):
        masses[:, images[frozenset(mapping(y) for y in s)]] += mechanism.masses[:, j]
    outputs = tuple(dict.fromkeys(mapping(y) for y in mechanism.outputs))
    return EvidentialMechanism(
        inputs=mechanism.inputs, outputs=outputs, focal_sets=tuple(images), masses=masses
    )


# -- exact moments of 1/M --------------------------------------------------------

# Terms below exp(-_LOG_DROP) times the largest one are outside the summation
# window; the window is widened until a proven bound on what it leaves out is
# below _TRUNCATION_TOLERANCE of the sum.
_LOG_DROP = 80.0
_TRUNCATION_TOLERANCE = 1e-17
_FULL_SUM_BELOW = 4096


def _check_n(n: object) -> int:
    if isinstance(n, bool) or not isinstance(n, int | np.integer):
        raise ParameterError(f"n ({n!r}) must be a whole number of respondents")
    if n < 1:
        raise ParameterError(f"n ({n}) must be at least 1")
    return int(n)


def inverse_moment(n: int, s: float) -> float:
    """E[1/M | M > 0] for M ~ Binomial(n, s), exactly up to floating point.

    This is the factor A / (1 - (1 - s)^n) of the corrected Theorem 3.10
    (docs/errata.md, item 1). The binomial mass is summed only where it lives:
    the window around the mode is widened until the terms it leaves out,
    bounded by a geometric series (the binomial pmf is log-concave, so the
    ratio of successive terms is monotone), are below 1e-17 of the sum. The
    window has O(sqrt(n s (1 - s))) terms, so n = 10^9 takes milliseconds.

    >>> inverse_moment(1, 0.3)
    1.0
    >>> round(inverse_moment(2, 0.5), 12)  # (2*0.25*1 + 0.25*0.5) / 0.75
    0.833333333333
    """
    # scipy.stats costs ~1 s to import; only the commands that compute pay for it
    from scipy import stats

    n = _check_n(n)
    if not 0 < s <= 1:
        raise ParameterError(f"s = p + q ({s}) must be in (0, 1]")
    if s == 1:
        return 1.0 / n
    p_positive = -math.expm1(n * math.log1p(-s))
    if n <= _FULL_SUM_BELOW:
        m = np.arange(1, n + 1)
        return float(np.sum(stats.binom.pmf(m, n, s) / m) / p_positive)
    mode = min(n, max(1, math.floor((n + 1) * s)))
    sd = math.sqrt(n * s * (1 - s))
    half_width = math.ceil(math.sqrt(2 * _LOG_DROP) * sd + 50)
    while True:
        lo = max(1, mode - half_width)
        hi = min(n, mode + half_width)
        m = np.arange(lo, hi + 1)
        pmf = stats.binom.pmf(m, n, s)
        total = float(np.sum(pmf / m))
        left_out = 0.0
        odds = s / (1 - s)
        if hi < n:
            # ratio pmf(k+1)/pmf(k) = (n-k)/(k+1) * s/(1-s), decreasing in k
            ratio = (n - hi) / (hi + 1) * odds
            left_out += float(stats.binom.pmf(hi, n, s)) * ratio / (1 - ratio) if ratio < 1 \
                else math.inf
        if lo > 1:
            # ratio pmf(k-1)/pmf(k) = k/(n-k+1) * (1-s)/s, increasing in k
            ratio = lo / (n - lo + 1) / odds
            left_out += float(stats.binom.pmf(lo, n, s)) * ratio / (1 - ratio) if ratio < 1 \
                else math.inf
        if left_out <= _TRUNCATION_TOLERANCE * total or (lo == 1 and hi == n):
            return total / p_positive
        half_width *= 2


def warner_variance(*, pi: float, p: float, n: int) -> float:
    """Variance of Warner's estimator, the paper's Eq. (1).

    Var = (-(pi - 1/2)^2 + 1/4)/n + (1/(4(2p - 1)^2) - 1/4)/n
        = pi(1 - pi)/n + p(1 - p)/(n (2p - 1)^2)      (Warner 1965, Eq. 7)
    """
    n = _check_n(n)
    return (-(pi - 0.5) ** 2 + 0.25) / n + (1 / (4 * (2 * p - 1) ** 2) - 0.25) / n


# -- the generalized Warner mechanism --------------------------------------------

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
        n = _check_n(n)
        pi_arr = np.asarray(pi, dtype=float)
        if np.any(~np.isfinite(pi_arr)) or np.any((pi_arr < 0) | (pi_arr > 1)):
            raise ParameterError(f"pi ({pi!r}) must be a proportion between 0 and 1")
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
        return warner_variance(pi=pi, p=self.p, n=n)

    def nu_optimistic(self, *, pi: float, n: int) -> float:
        """nu_O(p, q): Warner's variance at truth probability 1 - q, i.e. Q_1 (Section 3.2)."""
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
    n = _check_n(n)
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


# -- hypothesis-testing trade-off bounds -----------------------------------------


def _alpha_eps(alpha: Sequence[float] | np.ndarray | float, epsilon: float):
    return np.asarray(alpha, dtype=float), float(epsilon)


def tradeoff_u(alpha, epsilon):
    """Lower bound u(alpha) = max{e^-eps (1 - alpha), 1 - alpha e^eps} (Theorem 3.5)."""
    a, e = _alpha_eps(alpha, epsilon)
    return np.maximum(np.exp(-e) * (1 - a), 1 - a * np.exp(e))


def tradeoff_U(alpha, epsilon):  # noqa: N802 - the paper's name
    """Upper bound U(alpha) = min{e^eps (1 - alpha), 1 - alpha e^-eps} (Theorem 3.5)."""
    a, e = _alpha_eps(alpha, epsilon)
    return np.minimum(np.exp(e) * (1 - a), 1 - a * np.exp(-e))


def tradeoff_u2(alpha, epsilon):
    """Two-fold lower bound u^2 (Corollary 3.6), as printed.

    u^2(alpha) = max{e^-2eps (1 - alpha), -alpha + 2/(e^eps + 1), 1 - alpha e^2eps}
    """
    a, e = _alpha_eps(alpha, epsilon)
    return np.maximum.reduce(
        [np.exp(-2 * e) * (1 - a), -a + 2 / (np.exp(e) + 1), 1 - a * np.exp(2 * e)]
    )


def tradeoff_U2(alpha, epsilon):  # noqa: N802 - the paper's name
    """Two-fold upper bound U^2 (Corollary 3.6), as printed.

    U^2(alpha) = min{e^2eps (1 - alpha), 1 - alpha e^-2eps, -alpha + (3 - e^-2eps)/(e^eps + 1)}
    """
    a, e = _alpha_eps(alpha, epsilon)
    return np.minimum.reduce(
        [
            np.exp(2 * e) * (1 - a),
            1 - a * np.exp(-2 * e),
            -a + (3 - np.exp(-2 * e)) / (np.exp(e) + 1),
        ]
    )


def tradeoff_f_pe(alpha, epsilon):
    """Pessimistic bound f_pe(alpha) = max{1 - alpha e^eps, 0, e^-eps (1 - alpha)} (Thm. 3.18)."""
    a, e = _alpha_eps(alpha, epsilon)
    return np.maximum.reduce([1 - a * np.exp(e), np.zeros_like(a), np.exp(-e) * (1 - a)])


def tradeoff_f_op(alpha, epsilon):
    """Optimistic bound f_op(alpha) = min{1 - alpha e^-eps, e^eps (1 - alpha)} (Theorem 3.18)."""
    a, e = _alpha_eps(alpha, epsilon)
    return np.minimum(1 - a * np.exp(-e), np.exp(e) * (1 - a))


def tradeoff_f2_pe(alpha, epsilon):
    """Two-fold pessimistic bound (Corollary 3.19), as printed.

    f^2_pe(alpha) = max{1 - alpha e^2eps, -alpha + 2/(e^eps + 1), e^-2eps (1 - alpha)}
    """
    a, e = _alpha_eps(alpha, epsilon)
    return np.maximum.reduce(
        [1 - a * np.exp(2 * e), -a + 2 / (np.exp(e) + 1), np.exp(-2 * e) * (1 - a)]
    )


def tradeoff_f2_op(alpha, epsilon):
    """Two-fold optimistic bound (Corollary 3.19), as printed.

    f^2_op(alpha) = min{1 - alpha e^-2eps, e^2eps (1 - alpha), -alpha + (3 - e^-2eps)/(e^eps + 1)}
    """
    a, e = _alpha_eps(alpha, epsilon)
    return np.minimum.reduce(
        [
            1 - a * np.exp(-2 * e),
            np.exp(2 * e) * (1 - a),
            -a + (3 - np.exp(-2 * e)) / (np.exp(e) + 1),
        ]
    )
