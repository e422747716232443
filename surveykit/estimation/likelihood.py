"""Maximum likelihood for any design: state shares and nuisance parameters from counts.

The paper (Remark 3.8) asks for the maximum-likelihood estimate of a general
evidential mechanism; RRreg fits every design as a misclassification matrix.
With counts n[g, r] (group g, response r) and the design's matrix
P(eta)[g, r, s] = base + sum_j eta_j slopes[j] (affine in the nuisance
parameters eta), the log-likelihood of the state shares pi (on the simplex)
and eta (in their box) is

    l(pi, eta) = sum_{g, r} n[g, r] log mu[g, r],   mu[g, r] = sum_s P(eta)[g, r, s] pi_s,

a product of one multinomial per group (the groups are sampled separately).
For fixed eta it is concave in pi, and for fixed pi concave in eta.

:func:`maximize` finds the maximum on the parameter space with an active-set
Newton method: Newton steps on the face of the constraints that are active
(shares at 0, nuisance values at a bound), a backtracking line search that
never leaves the space, and a Karush-Kuhn-Tucker check that releases a bound
the gradient points away from. Estimates on the boundary come out exactly on
it (a share of 0.0, not 1e-12). Starting values are deterministic (equal shares,
nuisance parameters at the middle and near both ends of their range; the best
is kept), so no seed can make a fit fail.

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Fit", "LikelihoodProblem", "maximize"]

_MAX_ITERATIONS = 500
# Newton steps below this (in the parameters, which live in [0, 1]) end the search on a face.
_STEP_TOLERANCE = 1e-13
# Below this Newton decrement (relative to |loglik|) the full step is taken without a line search.
_FLAT_DECREMENT = 1e-10
# There, a full Newton step below this ends the search on a face (what remains is of its square).
_NEWTON_DONE = 1e-10
# The share of the way to a bound where the likelihood is 0 that one step may go.
_TO_THE_EDGE = 0.9
# A full step that would stop this close (relative) short of a bound lands on it: a share of
# 0.0, not 5.6e-17.
_ON_THE_BOUND = 1e-9
# A bound is released when the gradient points into the space by more than this (relative).
_KKT_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Fit:
    """The maximum found: shares ``pi`` over the states, nuisance values ``eta``."""

    pi: np.ndarray
    eta: np.ndarray
    loglik: float
    converged: bool
    iterations: int


class LikelihoodProblem:
    """The log-likelihood of one question's counts under one design, with derivatives.

    ``base`` (groups, responses, states) and ``slopes`` (nuisance, groups,
    responses, states) are the design's matrix; ``counts`` (groups, responses).
    Only cells with a positive count enter the likelihood.
    """

    def __init__(self, base: np.ndarray, slopes: np.ndarray, counts: np.ndarray,
                 low: np.ndarray, high: np.ndarray) -> None:
        counts = np.asarray(counts, dtype=float)
        observed = counts > 0
        self.states = base.shape[2]
        self.nuisance = slopes.shape[0]
        self.size = self.states + self.nuisance
        self.n = counts[observed]
        self.B = base[observed]                    # (cells, states)
        self.A = slopes[:, observed, :]            # (nuisance, cells, states)
        # the slopes as one (nuisance, cells * states) matrix: eta @ it is np.tensordot's own
        # product without its per-call reshaping (the most expensive line of a profile fit)
        self._flat_slopes = self.A.reshape(self.nuisance, self.B.size)
        # every cell and the group sizes, for the expected information
        self.base, self.slopes = base, slopes
        self.totals = counts.sum(axis=1)
        self.low = np.asarray(low, dtype=float)
        self.high = np.asarray(high, dtype=float)

    def split(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return x[:self.states], x[self.states:]

    def cell_matrix(self, eta: np.ndarray) -> np.ndarray:
        if self.nuisance:
            return self.B + (eta @ self._flat_slopes).reshape(self.B.shape)
        return self.B

    def mu(self, x: np.ndarray) -> np.ndarray:
        pi, eta = self.split(x)
        return self.cell_matrix(eta) @ pi

    def loglik(self, x: np.ndarray) -> float:
        mu = self.mu(x)
        # min() is nan where some mu is, and the sum is not finite where some mu is not
        if mu.size and (not mu.min() > 0 or not math.isfinite(mu.sum())):
            return -math.inf
        return float(self.n @ np.log(mu))

    def derivatives(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Gradient and Hessian of the log-likelihood at ``x`` (all parameters free)."""
        k = self.states
        pi = x[:k]
        P = self.cell_matrix(x[k:])
        mu = P @ pi
        J = P
        if self.nuisance:
            # d mu / d eta_j = A[j] @ pi: matmul's products, not einsum's (several times
            # slower on these small arrays; a fit evaluates this a few thousand times)
            J = np.concatenate([P, (self.A @ pi).T], axis=1)
        # A search without bounds running off has no finite derivatives; they come out
        # inf/nan, silently (the caller sees the -inf likelihood).
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            w = self.n / mu
            gradient = J.T @ w
            hessian = -(J.T * (self.n / mu**2)) @ J
            if self.nuisance:
                # d2 mu / d pi_s d eta_j = A[j, c, s]
                cross = (w @ self.A).T
                hessian[:k, k:] += cross
                hessian[k:, :k] += cross.T
        return gradient, hessian

    def _cell_gradients(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """mu[g, r] and its gradient J[g, r] in (pi, eta), for every cell."""
        pi, eta = self.split(x)
        matrix = self.base + np.tensordot(eta, self.slopes, axes=1) if self.nuisance \
            else self.base
        mu = matrix @ pi                                            # (groups, responses)
        gradient = matrix                                           # (groups, responses, k)
        if self.nuisance:
            gradient = np.concatenate(
                [matrix, np.einsum("jgrs,s->grj", self.slopes, pi)], axis=2)
        return mu, gradient

    def expected_information(self, x: np.ndarray) -> np.ndarray:
        """Fisher's information of (pi, eta) at ``x`` (all parameters free), for the group
        sizes observed: sum over groups g of N_g sum_r J_gr J_gr' / mu_gr, J_gr the gradient
        of mu_gr. Positive semi-definite everywhere, unlike the observed information."""
        mu, gradient = self._cell_gradients(x)
        weights = np.divide(self.totals[:, None], mu, out=np.zeros_like(mu), where=mu > 0)
        return np.einsum("gr,gri,grj->ij", weights, gradient, gradient)

    def cell_scores(self, x: np.ndarray) -> np.ndarray:
        """The score of one answer in each cell, d log mu[g, r] / d (pi, eta) = J_gr / mu_gr:
        (groups, responses, parameters), 0 where mu is 0. A respondent's contribution to
        the score of the (weighted) likelihood is its weight times its cell's score, the
        influence values of design-based variances (:mod:`surveykit.sampling`)."""
        mu, gradient = self._cell_gradients(x)
        inverse = np.divide(1.0, mu, out=np.zeros_like(mu), where=mu > 0)
        return gradient * inverse[:, :, None]


def maximize(problem: LikelihoodProblem, *, fixed: dict[int, float] | None = None,
             constrained: bool = True, start: np.ndarray | None = None,
             max_iterations: int = _MAX_ITERATIONS) -> Fit:
    """The maximum of the log-likelihood, from deterministic starting values.

    ``fixed`` holds parameters at given values (index into pi + eta; used for
    profile likelihoods). ``constrained=False`` drops the bounds (shares may be
    negative, nuisance values leave their range) but keeps every observed
    cell's probability positive: the unconstrained root of the score, where it
    exists (Eq. 2 for the generalized Warner).
    """
    fixed = fixed or {}
    if start is not None:
        return _newton(problem, np.array(start, dtype=float), fixed, constrained, max_iterations)
    best: Fit | None = None
    for x0 in _starts(problem, fixed):
        fit = _newton(problem, x0, fixed, constrained, max_iterations)
        if best is None or (fit.loglik > best.loglik + 1e-9 * max(1.0, abs(best.loglik))):
            best = fit
    assert best is not None
    return best


def _starts(problem: LikelihoodProblem, fixed: dict[int, float]):
    k = problem.states
    pinned = {i: v for i, v in fixed.items() if i < k}
    free = [s for s in range(k) if s not in pinned]
    pi = np.zeros(k)
    for i, v in pinned.items():
        pi[i] = v
    if free:
        pi[free] = max(0.0, 1.0 - sum(pinned.values())) / len(free)
    if problem.nuisance == 0:
        yield pi
        return
    width = problem.high - problem.low
    # With at most one free share (the shares are then determined) the cell probabilities
    # are affine in the nuisance values, and the log-likelihood is concave: one start
    # finds the maximum. Profiles of two-state designs (SLD, UQTunknown) are such.
    concave = len(free) <= 1
    fractions = (0.5,) if concave else (0.5, 0.1, 0.9)
    grids = []
    for j in range(problem.nuisance):
        if k + j in fixed:
            grids.append([fixed[k + j]])
        else:
            grids.append([problem.low[j] + width[j] * f for f in fractions])
    for eta in itertools.product(*grids):
        yield np.concatenate([pi, eta])


def _newton(problem: LikelihoodProblem, x: np.ndarray, fixed: dict[int, float],
            constrained: bool, max_iterations: int = _MAX_ITERATIONS) -> Fit:
    k, size = problem.states, problem.size
    for i, v in fixed.items():
        x[i] = v
    # active[i]: parameter i sits at a bound (shares at 0, nuisance at low/high) or is fixed
    active = np.zeros(size, dtype=bool)
    for i in fixed:
        active[i] = True
    if constrained:
        active[:k] |= x[:k] <= 0
        x[:k] = np.maximum(x[:k], 0.0)
        eta = x[k:]
        at_low, at_high = eta <= problem.low, eta >= problem.high
        x[k:] = np.clip(eta, problem.low, problem.high)
        active[k:] |= at_low | at_high
    value = problem.loglik(x)
    if not math.isfinite(value):
        # The start has equal free shares and nuisance values inside their ranges; an
        # observed answer impossible there is impossible on the whole face (the cell
        # probabilities are non-negative and affine in each block), e.g. a profile that
        # pins pi = 1 while some respondents answered no. The maximum is -inf.
        return Fit(pi=x[:k].copy(), eta=x[k:].copy(), loglik=-math.inf, converged=True,
                   iterations=0)
    iterations = 0
    converged = False
    releases = 0
    while iterations < max_iterations:
        iterations += 1
        free_pi = [s for s in range(k) if not active[s]]
        pivot = max(free_pi, key=lambda s: x[s]) if free_pi else None
        directions = _directions(k, size, active, pivot)
        gradient, hessian = problem.derivatives(x)
        if directions.shape[1]:
            gz = directions.T @ gradient
            hz = directions.T @ hessian @ directions
            dz = _ascent_step(gz, hz)
            if np.max(np.abs(dz)) > _STEP_TOLERANCE and gz @ dz > 0:
                d = directions @ dz
                limit = _step_limit(problem, x, d, active, constrained)
                if limit[1] is not None and limit[0] <= 1:
                    edge = x + limit[0] * d
                    edge[limit[1][0]] = limit[1][1]
                    if not math.isfinite(problem.loglik(edge)):
                        # At that bound an observed answer becomes impossible, so the maximum
                        # is inside: go at most part of the way (as interior-point methods
                        # do) and never land there, where the likelihood is 0.
                        limit = (_TO_THE_EDGE * limit[0], None)
                if gz @ dz < _FLAT_DECREMENT * max(1.0, abs(value)) and limit[0] >= 1:
                    # Near the maximum the likelihood changes less than its rounding error,
                    # so a line search cannot see progress (and may accept steps that make
                    # none, forever). Newton's full step is accurate there (quadratic
                    # convergence): take it; once it is tiny, the face is optimal.
                    trial = x + d
                    if limit[1] is not None and limit[0] <= 1:
                        trial[limit[1][0]] = limit[1][1]  # the step ends on that bound
                    trial_value = problem.loglik(trial)
                    if np.isfinite(trial_value):
                        x, value = trial, trial_value
                        if limit[1] is not None and limit[0] <= 1:
                            _land_on_bound(problem, x, limit[1], active)
                        _renormalize(x, k, active)
                        if np.max(np.abs(d)) > _NEWTON_DONE:
                            continue
                else:
                    step, new_x, new_value = _line_search(problem, x, d, value, gz @ dz, limit)
                    if step > 0:
                        moved = float(np.max(np.abs(new_x - x)))
                        x, value = new_x, new_value
                        landed = constrained and step >= limit[0] and limit[1] is not None
                        if landed:
                            _land_on_bound(problem, x, limit[1], active)
                        _renormalize(x, k, active)
                        if landed or moved > _STEP_TOLERANCE:
                            continue
                gradient, _ = problem.derivatives(x)
        # the face is optimal: is some bound holding the estimate back?
        if not constrained:
            converged = True
            break
        release = _kkt_release(problem, x, gradient, active, fixed, pivot)
        if release is None or releases > 4 * size:
            converged = release is None
            break
        active[release] = False
        releases += 1
    return Fit(pi=x[:k].copy(), eta=x[k:].copy(), loglik=problem.loglik(x),
               converged=converged, iterations=iterations)


def _directions(k: int, size: int, active: np.ndarray, pivot: int | None) -> np.ndarray:
    """Feasible directions of the face: move mass from the pivot share, or move a nuisance.

    Read-only and shared: a fit meets the same few faces in every iteration.
    """
    return _face_directions(k, size, tuple(active.tolist()), pivot)


@functools.lru_cache(maxsize=1024)
def _face_directions(k: int, size: int, active: tuple[bool, ...], pivot: int | None
                     ) -> np.ndarray:
    shares = [s for s in range(k) if not active[s] and s != pivot]
    nuisance = [j for j in range(k, size) if not active[j]]
    directions = np.zeros((size, len(shares) + len(nuisance)))
    if shares:
        directions[shares, range(len(shares))] = 1.0
        directions[pivot, :len(shares)] = -1.0
    if nuisance:
        directions[nuisance, range(len(shares), len(shares) + len(nuisance))] = 1.0
    directions.flags.writeable = False
    return directions


def _ascent_step(gz: np.ndarray, hz: np.ndarray) -> np.ndarray:
    """Newton's step where -H is positive definite; otherwise H with its eigenvalues pushed
    below zero (an ascent direction either way)."""
    if hz.shape == (1, 1) and hz[0, 0] < 0:  # one free direction: a division
        return gz / -hz[0, 0]
    try:
        np.linalg.cholesky(-hz)  # raises unless -H is positive definite
    except np.linalg.LinAlgError:
        values, vectors = np.linalg.eigh(-hz)
        floor = max(1e-12, 1e-8 * float(np.max(np.abs(values)))) if values.size else 1.0
        values = np.maximum(np.abs(values), floor)
        return vectors @ ((vectors.T @ gz) / values)
    return np.linalg.solve(-hz, gz)


def _step_limit(problem: LikelihoodProblem, x: np.ndarray, d: np.ndarray, active: np.ndarray,
                constrained: bool) -> tuple[float, tuple[int, float] | None]:
    """The largest step that stays in the space, and the (index, bound) that blocks it."""
    if not constrained:
        return math.inf, None
    k = problem.states
    best, blocking = math.inf, None
    for s in range(k):
        if not active[s] and d[s] < 0:
            limit = x[s] / -d[s]
            if limit < best:
                best, blocking = limit, (s, 0.0)
    for j in range(problem.nuisance):
        i = k + j
        if active[i] or d[i] == 0:
            continue
        bound = problem.low[j] if d[i] < 0 else problem.high[j]
        limit = (bound - x[i]) / d[i]
        if limit < best:
            best, blocking = limit, (i, bound)
    if 1.0 < best <= 1.0 + _ON_THE_BOUND:
        best = 1.0  # Newton's step ends on the bound up to rounding: let it land there
    return max(best, 0.0), blocking


def _line_search(problem: LikelihoodProblem, x: np.ndarray, d: np.ndarray, value: float,
                 slope: float, limit: tuple[float, object]) -> tuple[float, np.ndarray, float]:
    """Backtracking (Armijo) from min(1, limit); returns (0, x, value) when nothing helps."""
    step = min(1.0, limit[0])
    for _ in range(60):
        trial = x + step * d
        trial_value = problem.loglik(trial)
        if trial_value >= value + 1e-4 * step * slope and np.isfinite(trial_value):
            return step, trial, trial_value
        step /= 2
    return 0.0, x, value


def _renormalize(x: np.ndarray, k: int, active: np.ndarray) -> None:
    """Make the shares sum to one exactly: the largest free share absorbs the rounding."""
    free = [s for s in range(k) if not active[s]]
    if free:
        absorber = max(free, key=lambda s: x[s])
        x[absorber] = 1.0 - (x[:k].sum() - x[absorber])


def _land_on_bound(problem: LikelihoodProblem, x: np.ndarray, blocking: tuple[int, float],
                   active: np.ndarray) -> None:
    index, bound = blocking
    x[index] = bound
    active[index] = True


def _kkt_release(problem: LikelihoodProblem, x: np.ndarray, gradient: np.ndarray,
                 active: np.ndarray, fixed: dict[int, float], pivot: int | None) -> int | None:
    """The active bound whose release raises the likelihood most, or None at a KKT point."""
    k = problem.states
    scale = _KKT_TOLERANCE * max(1.0, float(np.max(np.abs(gradient))))
    best, release = scale, None
    if pivot is not None:
        reference = gradient[pivot]
        for s in range(k):
            if active[s] and s not in fixed and gradient[s] - reference > best:
                best, release = gradient[s] - reference, s
    for j in range(problem.nuisance):
        i = k + j
        if not active[i] or i in fixed:
            continue
        if x[i] <= problem.low[j] and gradient[i] > best:
            best, release = gradient[i], i
        elif x[i] >= problem.high[j] and -gradient[i] > best:
            best, release = -gradient[i], i
    return release


def covariance(problem: LikelihoodProblem, x: np.ndarray, *, expected: bool = False
               ) -> tuple[np.ndarray, np.ndarray]:
    """The inverse observed information of (pi, eta), and which parameters it identifies.

    The shares are parameterized by all but the last (sum to one); the
    covariance of the full vector follows by the delta method. Directions in
    which the information vanishes (a parameter the data cannot identify,
    such as the SLD's t when pi = 0) make the variances they touch undefined:
    the second array marks the parameters whose variance is finite.

    ``expected=True`` uses Fisher's (expected) information instead: at an
    estimate on the boundary the score is not zero, and the observed
    information there can be indefinite (it is not the curvature of a
    maximum), which would leave every variance undefined.
    """
    k, size = problem.states, problem.size
    if expected:
        hessian = -problem.expected_information(x)
    else:
        _, hessian = problem.derivatives(x)
    columns = []
    for s in range(k - 1):
        column = np.zeros(size)
        column[s], column[k - 1] = 1.0, -1.0
        columns.append(column)
    for j in range(k, size):
        column = np.zeros(size)
        column[j] = 1.0
        columns.append(column)
    Z = np.stack(columns, axis=1) if columns else np.zeros((size, 0))
    information = -(Z.T @ hessian @ Z)
    if not information.size:
        return np.zeros((size, size)), np.ones(size, dtype=bool)
    values, vectors = np.linalg.eigh((information + information.T) / 2)
    top = float(np.max(np.abs(values))) if values.size else 0.0
    keep = values > 1e-10 * max(top, 1e-300)
    inverse = (vectors[:, keep] / values[keep]) @ vectors[:, keep].T
    full = Z @ inverse @ Z.T
    lost = Z @ vectors[:, ~keep]
    defined = np.all(np.abs(lost) < 1e-6, axis=1) if lost.size else np.ones(size, dtype=bool)
    return full, defined
