"""Tests of one parameter at its null value after a latent-state regression: score and
likelihood ratio.

A fitted model (:mod:`surveykit.estimation.latent`) answers "is this term
needed?" three ways, each on 1 degree of freedom (Rao 1948; Buse 1982, "The
likelihood ratio, Wald, and Lagrange multiplier tests"):

* **Wald**: (estimate - null) / se from the full fit alone
  (:class:`~surveykit.estimation.regression_results.RegressionResult`).
* **Score (Rao)**, :func:`score_tests`: the slope of the log-likelihood at the
  null. For parameter j it is taken at the point theta_j that the full fit's
  quadratic approximation gives as the restricted maximum (parameter j at its
  null value, the others moved by cov[:, j] (null - x_j) / cov[j, j]), with
  Neyman's effective score, which removes the part of the score the other
  parameters can absorb (Neyman 1959, the C(alpha) test; Bera and Bilias 2001,
  Sec. 3):

      U = g_j - H_jo H_oo^-1 g_o,   V = -(H_jj - H_jo H_oo^-1 H_oj),   S = U^2 / V

  with g and H the gradient and Hessian at theta_j (o: the other free
  parameters). Where the other parameters sit at their restricted maximum
  (g_o = 0) S is Rao's statistic with the observed information there, exactly;
  elsewhere it differs from it by terms of second order in the distance, so it
  is asymptotically equivalent without a refit. Every parameter's point is
  evaluated in one pass over the rows (:meth:`LatentModel.evaluate_points`).
* **Likelihood ratio**, :func:`lr_tests`: deltaG2 = 2 (l_full - l_restricted),
  the model refitted with parameter j held at its null value. The restricted
  likelihood can have several local maxima (the minarets examples in
  docs/regression.md have three), so each refit climbs from several
  deterministic starts and keeps the highest maximum: the quadratic
  approximation's restricted maximum (warm: it converges in a few Newton
  steps), the full fit with the parameter at its null value, the null model
  (the data-based start without covariates), and the quadratic point moved by
  +-1 standard error in an alternating pattern. The warm start climbs first;
  the others are judged from their values and gradients, taken in the warm
  start's first pass (the null model's start, far from the restricted
  maximum, with its Hessian too: its climb steps at once): a start whose
  Newton step with the found maximum's information lands on that maximum
  (d' I d below 0.1, or below 5% of the start's own d' I d) and whose value
  the maximum's quadratic bowl predicts (to 0.1 + 10% of the drop) lies in
  that bowl and climbs no further; the others climb, each stopping as soon as
  its own Newton step passes the same test. Starts that agree so cost a point
  in a pass the warm start makes anyway, not a climb. The
  refits of all parameters climb together
  (:func:`~surveykit.estimation.latent.climb_together`): the points they need
  in a round are evaluated in one pass over the rows. Refits run in this
  process unless a process pool is asked for (``workers``; one BLAS thread per
  worker): each worker still makes every pass over all the rows for its share
  of the parameters, and on 2 busy cores a pool of 2 took 3.4x the time of one
  process on a million rows (benchmarks/bench_regression.py). Each
  parameter's refits are the same computation in a worker as in the calling
  process, up to rounding, so the results do not depend on it.

A null value on the boundary of the parameter space (the SLD's t = 1, the
cheaters' share 0) gives the 50:50 mixture of chi2(0) and chi2(1) (Self and
Liang 1987): p-values are half the chi2(1) one, and a score pointing out of the
space counts as 0.

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Generator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from surveykit.estimation.latent import (
    LatentModel,
    Maximum,
    climb_together,
    climber,
    requests_together,
)

__all__ = ["Restriction", "lr_tests", "restricted_climb", "restricted_maximum",
           "score_statistic", "score_tests"]

# A Newton point closer than this to a maximum in its information metric (d' I d, about twice
# the log-likelihood difference) climbs to that maximum.
_SAME_MAXIMUM = 0.1
# ... or closer than this share of the climb's own distance to it (d' I d): the log-likelihood
# is that close to quadratic between them.
_SAME_SHARE = 0.05


@dataclass(frozen=True, kw_only=True)
class Restriction:
    """One tested parameter: its place in the parameter vector, its null value, and whether
    that value is on the boundary of its range."""

    index: int
    null: float
    boundary: bool = False


def _chi2_pvalue(statistic: float, boundary: bool) -> float:
    from scipy.special import chdtrc

    p = float(chdtrc(1, statistic))
    return p / 2 if boundary else p


# -- score tests -------------------------------------------------------------------------------


def projected_point(model: LatentModel, x: np.ndarray, covariance: np.ndarray,
                    restriction: Restriction) -> np.ndarray:
    """The full fit's quadratic approximation's maximum with the parameter at its null value
    (kept inside the parameter box)."""
    j = restriction.index
    variance = covariance[j, j]
    shift = (covariance[:, j] * (restriction.null - x[j]) / variance
             if math.isfinite(variance) and variance > 0 else np.zeros_like(x))
    if not np.all(np.isfinite(shift)):
        shift = np.zeros_like(x)
    point = np.clip(x + shift, model.low, model.high)
    point[j] = restriction.null
    return point


def score_statistic(gradient: np.ndarray, hessian: np.ndarray, index: int, free: np.ndarray
                    ) -> tuple[float, float] | None:
    """Neyman's effective score U and its variance V for parameter ``index`` from the gradient
    and Hessian at a point (``free``: the parameters estimated). None where V is not positive
    (the point is too far from a maximum for the test). The statistic is U^2 / V.

    >>> score_statistic(np.array([0.0, 3.0]), np.array([[-2.0, 1.0], [1.0, -2.0]]), 1,
    ...                 np.array([True, True]))
    (3.0, 1.5)
    """
    others = np.asarray(free, dtype=bool).copy()
    others[index] = False
    h_jo = hessian[index, others]
    if h_jo.size:
        try:
            solved = np.linalg.solve(hessian[np.ix_(others, others)],
                                     np.column_stack([gradient[others], h_jo]))
        except np.linalg.LinAlgError:
            return None
        U = gradient[index] - h_jo @ solved[:, 0]
        V = -(hessian[index, index] - h_jo @ solved[:, 1])
    else:
        U, V = gradient[index], -hessian[index, index]
    if not (math.isfinite(U) and math.isfinite(V) and V > 0):
        return None
    return float(U), float(V)


def score_tests(model: LatentModel, x: np.ndarray, covariance: np.ndarray, held: np.ndarray,
                restrictions: Sequence[Restriction]) -> dict[int, tuple[float, float] | None]:
    """Score statistic (chi2 on 1 df) and p-value per restriction's index, all from one pass
    over the rows (see the module docstring)."""
    out: dict[int, tuple[float, float] | None] = {}
    if not restrictions:
        return out
    points = np.stack([projected_point(model, x, covariance, r) for r in restrictions])
    free = ~np.asarray(held, dtype=bool)
    for r, (value, gradient, hessian, _) in zip(restrictions, model.evaluate_points(points),
                                                 strict=True):
        if not math.isfinite(value):
            out[r.index] = None
            continue
        parts = score_statistic(gradient, hessian, r.index, free)
        if parts is None:
            out[r.index] = None
            continue
        U, V = parts
        statistic = U * U / V
        if r.boundary and _points_outside(model, r, U):
            statistic = 0.0
        out[r.index] = (statistic, _chi2_pvalue(statistic, r.boundary))
    return out


def _points_outside(model: LatentModel, r: Restriction, U: float) -> bool:
    """A score at a bound that points out of the parameter space is no evidence against it."""
    return (U > 0 and r.null >= model.high[r.index]) or (U < 0 and r.null <= model.low[r.index])


# -- likelihood-ratio tests ---------------------------------------------------------------------


def _starts(model: LatentModel, x: np.ndarray, covariance: np.ndarray, data_start: np.ndarray,
            held: np.ndarray, r: Restriction) -> list[np.ndarray]:
    """The deterministic starting points of one restricted fit, the warm one first."""
    projected = projected_point(model, x, covariance, r)
    moved = x.copy()
    se = np.sqrt(np.maximum(np.diag(covariance), 0.0))
    pattern = np.where(np.arange(x.size) % 2 == 0, 1.0, -1.0)
    pattern[held] = 0.0
    starts = [projected, moved, data_start]
    if np.all(np.isfinite(se)):
        starts += [projected + se * pattern, projected - se * pattern]
    out = []
    for start in starts:
        start = _at_null(model, start, r)
        if not any(np.array_equal(start, seen) for seen in out):
            out.append(start)
    return out


def _at_null(model: LatentModel, start: np.ndarray, r: Restriction) -> np.ndarray:
    """A starting point inside the parameter box with the tested parameter at its null."""
    start = np.clip(np.array(start, dtype=float), model.low, model.high)
    start[r.index] = r.null
    return start


class _Maxima:
    """The distinct maxima of one restricted likelihood found so far."""

    def __init__(self, free: np.ndarray, low: np.ndarray, high: np.ndarray) -> None:
        self.free, self.low, self.high = free, low, high
        self.found: list[tuple[Maximum, np.ndarray | None]] = []

    def add(self, best: Maximum) -> None:
        # a maximum inside the box with a negative definite Hessian has a basin others can
        # be recognized in; one on a bound is only compared by its value
        information = None
        inside = not np.any(self.free & ((best.x <= self.low) | (best.x >= self.high)))
        if best.converged and inside:
            H = -best.hessian[np.ix_(self.free, self.free)]
            if _positive_definite(H):
                information = H
        self.found.append((best, information))

    def leads_to(self, point: np.ndarray, value: float, landing: np.ndarray) -> bool:
        """Whether a climb at ``point`` (log-likelihood ``value``) whose next Newton step goes
        to ``landing`` is in the bowl of a maximum found before: the step lands on it (d' I d
        below 0.1, or below 5% of the point's own d' I d), and the value is the one the
        bowl's quadratic predicts to 0.1 + 10% of the drop."""
        for best, information in self.found:
            if information is not None and _in_bowl(best, information, self.free, point,
                                                    value, landing):
                return True
        return False

    def near(self, start: np.ndarray, value: float, gradient: np.ndarray) -> bool:
        """:meth:`leads_to` from a start's value and gradient alone, stepping with each known
        maximum's information instead of the start's own Hessian."""
        for best, information in self.found:
            if information is None:
                continue
            landing = start.copy()
            landing[self.free] += np.linalg.solve(information, gradient[self.free])
            if _in_bowl(best, information, self.free, start, value, landing):
                return True
        return False

    def highest(self) -> Maximum | None:
        converged = [b for b, _ in self.found if b.converged and math.isfinite(b.loglik)]
        return max(converged, key=lambda b: b.loglik) if converged else None


def _in_bowl(best: Maximum, information: np.ndarray, free: np.ndarray, point: np.ndarray,
             value: float, landing: np.ndarray) -> bool:
    d = (point - best.x)[free]
    drop = 0.5 * float(d @ information @ d)
    e = (landing - best.x)[free]
    return (float(e @ information @ e) <= max(_SAME_MAXIMUM, _SAME_SHARE * 2 * drop)
            and abs(best.loglik - drop - value) <= 0.1 + 0.1 * drop)


def _positive_definite(matrix: np.ndarray) -> bool:
    try:
        np.linalg.cholesky(matrix)
    except np.linalg.LinAlgError:
        return False
    return True


def restricted_climb(model: LatentModel, x: np.ndarray, covariance: np.ndarray,
                     data_start: np.ndarray, held: np.ndarray, r: Restriction, *,
                     max_iterations: int = 200, starts: str = "several"):
    """The restricted fit of one parameter as a generator for
    :func:`~surveykit.estimation.latent.climb_together`: the warm start climbs first; the
    other starts are judged from their values and gradients (taken in the warm start's first
    pass) and those
    not in a known maximum's bowl climb side by side (sharing each pass), each stopping when
    its Newton step lands on a known maximum. Returns the highest maximum (None if none converged).
    ``starts="warm"`` climbs from the warm start alone (cheaper, blind to other maxima: for
    measuring what the other starts cost)."""
    fixed = np.asarray(held, dtype=bool).copy()
    fixed[r.index] = True
    free = ~fixed
    maxima = _Maxima(free, model.low, model.high)

    def seen(x_now, value, g, H, d, limit) -> bool:
        # the full Newton step is defined (negative definite Hessian, inside the box) and
        # leads to a maximum found before: this start climbs to it
        if limit < 1.0 or not _positive_definite(-H[np.ix_(free, free)]):
            return False
        return maxima.leads_to(x_now, value, x_now + d)

    warm, *others = _starts(model, x, covariance, data_start, held, r)
    if starts == "warm":
        others = []
    climb = climber(model, warm, fixed=fixed, max_iterations=max_iterations, polish=False)
    if not others:
        best = yield from _resumed(climb, (yield next(climb)))
        maxima.add(best)
        return maxima.highest()
    # The other starts' values and gradients come with the warm start's first pass; the null
    # model's start (no covariates) is far from the restricted maximum and nearly always
    # climbs, so its Hessian comes too and its climb takes its first step at once.
    first = np.atleast_2d(next(climb)[0])
    far = np.array([np.array_equal(start, _at_null(model, data_start, r)) for start in others])
    answers = yield (np.vstack([first, np.stack(others)]), np.concatenate(
        [np.ones(len(first), dtype=bool), far]))
    judged = answers[len(first):]
    best = yield from _resumed(climb, answers[:len(first)])
    maxima.add(best)
    climbs = []
    for start, hessian, answer in zip(others, far, judged, strict=True):
        value, gradient = answer[:2]
        if not math.isfinite(value) or maxima.near(start, value, gradient):
            continue
        climb = climber(model, start, fixed=fixed, max_iterations=max_iterations,
                        polish=False, stop=seen)
        if hessian:
            next(climb)
            climb = _resumed(climb, [answer])
        climbs.append(climb)
    yield from _side_by_side(climbs, lambda best: best.stopped or maxima.add(best))
    return maxima.highest()


def _resumed(climb: Generator, answer: list) -> Generator:
    """The rest of a :func:`~surveykit.estimation.latent.climber` generator whose first
    request was answered with ``answer``: yields its requests, returns its maximum."""
    try:
        request = climb.send(answer)
        while True:
            request = climb.send((yield request))
    except StopIteration as done:
        return done.value


def _side_by_side(climbs: list, on_done: Callable) -> Generator:
    """Run :func:`~surveykit.estimation.latent.climber` generators side by side inside one
    generator: each round asks for all their points at once (one pass over the rows instead
    of one per climb). ``on_done(best)`` is called as each climb returns, before the others
    take their next step (a maximum found can stop the others' climbs)."""
    pending: dict[int, tuple[np.ndarray, bool]] = {}
    for k, climb in enumerate(climbs):
        try:
            pending[k] = next(climb)
        except StopIteration as done:
            on_done(done.value)
    while pending:
        keys = list(pending)
        blocks, wanted = requests_together([pending[k] for k in keys])
        answers = yield (np.concatenate(blocks), wanted)
        position, pending = 0, {}
        for k, block in zip(keys, blocks, strict=True):
            answer = answers[position:position + len(block)]
            position += len(block)
            try:
                pending[k] = climbs[k].send(answer)
            except StopIteration as done:
                on_done(done.value)


def restricted_maximum(model: LatentModel, x: np.ndarray, covariance: np.ndarray,
                       data_start: np.ndarray, held: np.ndarray, r: Restriction, *,
                       max_iterations: int = 200) -> Maximum | None:
    """The highest maximum of the likelihood with parameter ``r.index`` held at ``r.null``
    from the deterministic starts (module docstring); None if no start converged."""
    return climb_together(model, [restricted_climb(model, x, covariance, data_start, held, r,
                                                   max_iterations=max_iterations)])[0]


def lr_tests(model: LatentModel, x: np.ndarray, loglik: float, covariance: np.ndarray,
             data_start: np.ndarray, held: np.ndarray, restrictions: Sequence[Restriction], *,
             max_iterations: int = 200, workers: int | None = None,
             progress: Callable[[int], None] | None = None, starts: str = "several"
             ) -> dict[int, tuple[float, float] | None]:
    """deltaG2 and its p-value per restriction's index (None where no restricted fit
    converged). The refits of all parameters climb together, sharing each pass over the
    rows. ``workers``: processes, each given a share of the parameters (None or 1: in this
    process; see the module docstring for why that is the default)."""
    restrictions = list(restrictions)
    workers = max(1, min(workers or 1, len(restrictions)))
    arguments = (model, x, covariance, data_start, held, max_iterations, starts)
    if workers > 1:
        found = _in_pool(arguments, restrictions, workers, progress)
    else:
        found = _restricted_logliks(arguments, restrictions, progress)
    out: dict[int, tuple[float, float] | None] = {}
    for r in restrictions:
        value = found[r.index]
        if value is None:
            out[r.index] = None
            continue
        statistic = max(0.0, 2 * (loglik - value))
        out[r.index] = (statistic, _chi2_pvalue(statistic, r.boundary))
    return out


def _restricted_logliks(arguments, restrictions: list[Restriction],
                        progress: Callable[[int], None] | None = None
                        ) -> dict[int, float | None]:
    model, x, covariance, data_start, held, max_iterations, starts = arguments
    climbs = [restricted_climb(model, x, covariance, data_start, held, r,
                               max_iterations=max_iterations, starts=starts)
              for r in restrictions]
    done = None if progress is None else (lambda _: progress(1))
    found = climb_together(model, climbs, on_done=done)
    return {r.index: None if best is None else float(best.loglik)
            for r, best in zip(restrictions, found, strict=True)}


# -- the process pool ----------------------------------------------------------------------------

_WORKER: dict[str, object] = {}


def _start_worker(arguments) -> None:
    _WORKER["arguments"] = arguments


def _work(restrictions: list[Restriction]) -> dict[int, float | None]:
    return _restricted_logliks(_WORKER["arguments"], restrictions)


def _in_pool(arguments, restrictions: list[Restriction], workers: int,
             progress: Callable[[int], None] | None) -> dict[int, float | None]:
    """The refits in ``workers`` fresh processes ("spawn": no fork of a process whose BLAS runs
    threads), each given the model once and every workers-th parameter."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    context = multiprocessing.get_context("spawn")
    shares = [restrictions[k::workers] for k in range(workers)]
    found: dict[int, float | None] = {}
    with ProcessPoolExecutor(max_workers=workers, mp_context=context,
                             initializer=_start_worker, initargs=(arguments,)) as pool:
        with _one_blas_thread():
            # the workers start here, and read the variable before loading BLAS: one thread
            # each, as many workers as cores
            futures = {pool.submit(_work, share): len(share) for share in shares}
        for future in as_completed(futures):
            found.update(future.result())
            if progress is not None:
                progress(futures[future])
    return found


_BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


@contextmanager
def _one_blas_thread():
    saved = {name: os.environ.get(name) for name in _BLAS_THREADS}
    os.environ.update({name: "1" for name in _BLAS_THREADS})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
