"""Vectorized Monte Carlo simulation of generalized Warner surveys.

One survey of n respondents under :class:`~surveykit.designs.warner.GeneralizedWarner`
is a multinomial draw of the counts (N1, N2, N3) with cell probabilities
(q1, q2, q3) = (pi p + (1 - pi) q, pi q + (1 - pi) p, 1 - p - q) (paper,
Section 3). :func:`simulate_many` draws ``reps`` surveys for each of many
scenarios in one ``Generator.multinomial`` call; nothing loops over
respondents or repetitions in Python.

The estimator is Eq. (2), pi_hat = (N2 q - N1 p) / ((N1 + N2)(q - p)), which is
defined only when M = N1 + N2 > 0. Theorems 3.9 and 3.10 are statements
*conditional on M > 0*, so the summaries below are too: surveys without a
single yes/no answer are counted (``no_answer_reps``) and left out.

Monte Carlo standard errors, over the R surveys with M > 0:

* of the mean: sqrt(s^2 / R);
* of the variance: sqrt((m4 - m2^2) / R), m2 and m4 the sample second and
  fourth central moments (the delta-method standard error of a sample
  variance; it does not assume normality, which matters for small n where
  pi_hat takes few values).

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from surveykit.designs.base import YES, Design
from surveykit.designs.warner import GeneralizedWarner
from surveykit.errors import ParameterError
from surveykit.estimation.binomial import binomial_map

__all__ = ["SimulationResult", "simulate", "simulate_counts", "simulate_many"]


@dataclass(frozen=True, kw_only=True)
class SimulationResult:
    """``reps`` simulated surveys of one scenario, and their moments given M > 0.

    Attributes
    ----------
    mechanism, pi, n, reps:
        The scenario: mechanism, true prevalence, respondents per survey,
        number of simulated surveys.
    counts:
        ``(reps, 3)`` integer array of (yes, no, don't know) per survey.
    pi_hat:
        ``(reps,)`` Eq. (2) per survey; ``nan`` where M = N1 + N2 = 0.
    answered_reps:
        Surveys with M > 0 (those the moments are over).
    no_answer_reps:
        Surveys where every respondent said "don't know".
    mean, mean_se:
        Empirical E[pi_hat | M > 0] and its Monte Carlo standard error.
    variance, variance_se:
        Empirical Var(pi_hat | M > 0) (divisor R - 1) and its standard error
        sqrt((m4 - m2^2) / R).

    >>> rng = np.random.default_rng(1)
    >>> r = simulate(mechanism=GeneralizedWarner(p=0.6, q=0.2), pi=0.3, n=100, reps=2000, rng=rng)
    >>> abs(r.mean - 0.3) < 4 * r.mean_se
    True
    """

    mechanism: GeneralizedWarner
    pi: float
    n: int
    reps: int
    counts: np.ndarray = field(repr=False)
    pi_hat: np.ndarray = field(repr=False)
    answered_reps: int
    no_answer_reps: int
    mean: float
    mean_se: float
    variance: float
    variance_se: float

    def mean_z(self) -> float:
        """(mean - pi) / mean_se: Theorem 3.9 says this is a standard-normal draw."""
        return _z(self.mean - self.pi, self.mean_se)

    def variance_z(self, reference: float) -> float:
        """(variance - reference) / variance_se, e.g. against the exact conditional variance."""
        return _z(self.variance - reference, self.variance_se)

    def to_dict(self) -> dict:
        """Plain numbers (no arrays) for JSON, CSV rows and pandas."""
        return {
            "p": self.mechanism.p,
            "q": self.mechanism.q,
            "pi": self.pi,
            "n": self.n,
            "reps": self.reps,
            "answered_reps": self.answered_reps,
            "no_answer_reps": self.no_answer_reps,
            "mean": self.mean,
            "mean_se": self.mean_se,
            "variance": self.variance,
            "variance_se": self.variance_se,
        }


def _z(difference: float, se: float) -> float:
    if se > 0:
        return difference / se
    return 0.0 if difference == 0 else math.copysign(math.inf, difference)


def _check_rng(rng: object) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ParameterError(
            f"rng ({rng!r}) must be a numpy.random.Generator, e.g. numpy.random.default_rng(seed)"
        )
    return rng


def _check_reps(reps: object) -> int:
    if isinstance(reps, bool) or not isinstance(reps, int | np.integer) or reps < 2:
        raise ParameterError(f"reps ({reps!r}) must be a whole number of surveys, at least 2")
    return int(reps)


def simulate_many(
    *,
    mechanisms: Sequence[GeneralizedWarner],
    pis: Sequence[float],
    ns: Sequence[int],
    reps: int,
    rng: np.random.Generator,
) -> list[SimulationResult]:
    """Simulate ``reps`` surveys for each scenario (mechanisms[i], pis[i], ns[i]).

    All ``len(mechanisms) * reps`` surveys come from one multinomial call
    (numpy broadcasts the scenarios' n and cell probabilities), so the cost
    does not depend on n and nothing loops in Python but the per-scenario
    bookkeeping. Memory is ``24 * reps`` bytes of counts per scenario.

    >>> rng = np.random.default_rng(7)
    >>> gw = GeneralizedWarner(p=0.6, q=0.2)
    >>> [r.n for r in simulate_many(mechanisms=[gw, gw], pis=[0.3, 0.3], ns=[10, 1000],
    ...                             reps=100, rng=rng)]
    [10, 1000]
    """
    rng = _check_rng(rng)
    reps = _check_reps(reps)
    mechanisms = list(mechanisms)
    if not (len(mechanisms) == len(pis) == len(ns)):
        raise ParameterError(
            f"mechanisms, pis and ns must have the same length, got "
            f"{len(mechanisms)}, {len(pis)} and {len(ns)}"
        )
    if not mechanisms:
        return []
    maps = []
    for mechanism in mechanisms:
        mapping = binomial_map(mechanism) if isinstance(mechanism, Design) else None
        if mapping is None:
            raise ParameterError(
                f"mechanism ({mechanism!r}) must be a one-group yes/no design, e.g. "
                "GeneralizedWarner(p=0.6, q=0.2); simulate_counts takes any design")
        maps.append(mapping)
    pi_array = np.asarray(pis, dtype=float)
    if np.any(~np.isfinite(pi_array)) or np.any((pi_array < 0) | (pi_array > 1)):
        raise ParameterError(f"pis ({list(pis)!r}) must be proportions between 0 and 1")
    n_array = np.asarray(ns)
    if n_array.dtype.kind not in "iu" or np.any(n_array < 1):
        raise ParameterError(f"ns ({list(ns)!r}) must be whole numbers of respondents, at least 1")
    # rows: first answer, second answer; columns: yes, no (for the generalized Warner q1, q2)
    matrices = np.array([_answer_matrix(m) for m in mechanisms])
    q1 = pi_array * matrices[:, 0, 0] + (1 - pi_array) * matrices[:, 0, 1]
    q2 = pi_array * matrices[:, 1, 0] + (1 - pi_array) * matrices[:, 1, 1]
    # q3 from the other two so each row sums to 1 exactly as numpy requires
    cells = np.stack([q1, q2, np.clip(1 - q1 - q2, 0, None)], axis=-1)
    counts = rng.multinomial(n_array, cells, size=(reps, len(mechanisms)))
    yes = counts[..., 0]
    no = counts[..., 1]
    answered = yes + no
    valid = answered > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        pi_hat = np.stack([maps[i].to_pi(yes[:, i] / answered[:, i], clip=False)
                           for i in range(len(maps))], axis=1)
    pi_hat = np.where(valid, pi_hat, np.nan)

    r = valid.sum(axis=0)
    safe_r = np.maximum(r, 1)
    mean = np.where(valid, pi_hat, 0.0).sum(axis=0) / safe_r
    centred = np.where(valid, pi_hat - mean, 0.0)
    m2 = (centred**2).sum(axis=0) / safe_r
    m4 = (centred**4).sum(axis=0) / safe_r
    # divisor R - 1: the unbiased estimate of the conditional variance
    variance = m2 * safe_r / np.maximum(r - 1, 1)
    mean_se = np.sqrt(variance / safe_r)
    variance_se = np.sqrt(np.maximum(m4 - m2**2, 0.0) / safe_r)
    enough = r >= 2

    results = []
    for i, mechanism in enumerate(mechanisms):
        results.append(
            SimulationResult(
                mechanism=mechanism,
                pi=float(pi_array[i]),
                n=int(n_array[i]),
                reps=reps,
                counts=np.ascontiguousarray(counts[:, i, :]),
                pi_hat=np.ascontiguousarray(pi_hat[:, i]),
                answered_reps=int(r[i]),
                no_answer_reps=int(reps - r[i]),
                mean=float(mean[i]) if r[i] else math.nan,
                mean_se=float(mean_se[i]) if enough[i] else math.nan,
                variance=float(variance[i]) if enough[i] else math.nan,
                variance_se=float(variance_se[i]) if enough[i] else math.nan,
            )
        )
    return results


def _answer_matrix(design: Design) -> np.ndarray:
    """The two answers' rows of a one-group yes/no design, columns yes then no."""
    matrix = design.structure.base[0]
    yes = design.structure.states.index(YES)
    return matrix[:2][:, [yes, 1 - yes]]


def simulate_counts(design: Design, *, shares, n, reps: int, rng: np.random.Generator,
                    nuisance=None) -> np.ndarray:
    """``reps`` surveys under any design: counts of shape (reps, groups, responses).

    ``shares`` are the true shares of the design's states (for a yes/no
    design a single pi is enough), ``n`` the respondents per group (one
    number for every group, or one per group), ``nuisance`` the true values
    of the nuisance parameters (default: the middle of each range).

    >>> from surveykit.designs import StochasticLieDetector
    >>> c = simulate_counts(StochasticLieDetector(p=[0.2, 0.8]), shares=0.3, n=[100, 50], reps=4,
    ...                     rng=np.random.default_rng(1), nuisance=[0.9])
    >>> c.shape, c.sum(axis=2)[0].tolist()
    ((4, 2, 3), [100, 50])
    """
    rng = _check_rng(rng)
    reps = _check_reps(reps) if reps != 1 else 1
    states = design.state_labels
    share_array = np.atleast_1d(np.asarray(shares, dtype=float))
    if share_array.size == 1 and design.is_binary and len(states) == 2:
        pi = float(share_array[0])
        share_array = np.array([pi, 1 - pi]) if states[0] == YES else np.array([1 - pi, pi])
    if share_array.shape != (len(states),) or np.any(share_array < 0) or not math.isclose(
            float(share_array.sum()), 1.0, abs_tol=1e-9):
        raise ParameterError(
            f"shares ({np.asarray(shares).tolist()!r}) must be one share per state "
            f"({', '.join(states)}) adding up to 1")
    groups = len(design.group_names)
    sizes = np.atleast_1d(np.asarray(n))
    if sizes.dtype.kind not in "iu" or sizes.ndim != 1 or sizes.size not in (1, groups) \
            or np.any(sizes < 0):
        raise ParameterError(
            f"n ({n!r}) must be a whole number of respondents per group, or one for each of the "
            f"{groups} group(s) of design {design.model!r}")
    sizes = np.broadcast_to(sizes.astype(np.int64), (groups,))
    matrix = design.matrix(nuisance)
    cells = np.clip(matrix @ share_array, 0, None)
    cells /= cells.sum(axis=1, keepdims=True)
    counts = np.stack([rng.multinomial(int(sizes[g]), cells[g], size=reps)
                       for g in range(groups)], axis=1)
    return counts


def simulate(
    *,
    mechanism: GeneralizedWarner,
    pi: float,
    n: int,
    reps: int,
    rng: np.random.Generator,
) -> SimulationResult:
    """Simulate ``reps`` surveys of ``n`` respondents with prevalence ``pi``.

    The one-scenario form of :func:`simulate_many`.

    >>> rng = np.random.default_rng(3)
    >>> r = simulate(mechanism=GeneralizedWarner(p=0.4, q=0.1), pi=0.5, n=3, reps=1000, rng=rng)
    >>> r.answered_reps + r.no_answer_reps
    1000
    """
    if isinstance(n, bool) or not isinstance(n, int | np.integer):
        raise ParameterError(f"n ({n!r}) must be a whole number of respondents")
    return simulate_many(mechanisms=[mechanism], pis=[pi], ns=[n], reps=reps, rng=rng)[0]
