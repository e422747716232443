"""The likelihood of rows whose true state is hidden behind a randomized answer.

Row i has a true state s (a category of the sensitive question, or a
behavioural state such as the CDM's cheaters) that nobody observes, a
randomized answer r_i given in group g_i, and possibly an outcome y_i asked
directly. Its likelihood is a mixture over the states (van den Hout, van der
Heijden and Gilchrist 2007; Heck and Moshagen 2018, Eq. 7-10):

    L_i = sum_s  M(eta)[g_i, r_i, s] * rho_s(gamma) * q_s(z_i; alpha) * f(y_i | x_is; beta)

* ``q(z; alpha)``: the true category given covariates z, a logistic model for a
  yes/no question (log-odds of yes) or a multinomial logit with the first
  category as reference for k categories;
* ``rho(gamma)``: behavioural states have constant shares gamma and the
  categories share 1 - sum(gamma);
* ``M(eta)``: the design's column for the row's answer and group, affine in the
  nuisance parameters eta (:mod:`surveykit.designs.base`);
* ``f``: the outcome's density (Gaussian or Bernoulli) given a model matrix
  x_is in which the sensitive answer takes the value of state s (the sensitive
  answer as a predictor; absent when the sensitive answer is the outcome).

:class:`LatentModel` computes the log-likelihood, its gradient and its
Hessian exactly. With the posterior weights w_is = c_is / L_i (the E-step of
EM) the gradient is the posterior mean of the complete-data score (Fisher's
identity) and the Hessian follows Louis (1982): the posterior mean of the
complete-data Hessian plus the posterior covariance of the complete-data
score. The parameters in which the likelihood is affine (gamma, eta) are
differentiated directly, so that estimates on their bounds (no cheaters,
t = 1) are handled. :func:`maximize` climbs it by Newton's method on a box
with a line search; where the Hessian is not negative definite (far from the
maximum, as EM's early iterations are) it takes the ascent step of the
Hessian with its eigenvalues reflected. Rows are processed in chunks, so that
a million rows need little memory.

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from surveykit.estimation.likelihood import _ascent_step

__all__ = ["LatentModel", "Maximum", "Outcome", "TwoStateModel", "climb_together",
           "climber", "maximize", "requests_together"]

_CHUNK = 131072
# A row likelihood below this is computed on the log scale (TwoStateModel).
_TINY = 1e-280
# Rows x (points or pairs of columns) per block when many points are evaluated at once: small
# blocks keep each temporary array in the processor's cache (measured: 20% faster than 1 << 21).
_BATCH_CELLS = 1 << 17
# Up to this many Hessians in a pass over many points: each point's beta block is its own
# product Z' (v * Z) (in blocks of rows for one BLAS thread), and the rows go in larger blocks;
# more take the products of pairs of columns once for all of them. On a million rows, 2 points
# 0.45 s -> 0.30 s, 3 points 0.48 s -> 0.39 s; 4 points the same either way.
_FEW_HESSIANS = 3
# Many points at once over at least this many rows: two threads, each over half the rows.
_SPLIT_ROWS = 1 << 16
# A linear predictor this large means a probability of exp(-500): estimates running away.
_DIVERGED = 500.0
_LOG_2PI = math.log(2 * math.pi)


@dataclass(frozen=True, eq=False)
class Outcome:
    """A directly asked outcome: ``family`` "gaussian" or "binomial", values ``y`` (rows,)
    and one model matrix per category ``X`` (categories, rows, terms)."""

    family: str
    y: np.ndarray
    X: np.ndarray

    @property
    def size(self) -> int:
        return self.X.shape[2] + (1 if self.family == "gaussian" else 0)


class LatentModel:
    """Log-likelihood and derivatives of a latent-state regression (see the module docstring).

    ``Z`` (rows, terms) is the model matrix of the true category; ``states``
    the design's states, of which ``categories`` are substantive and the rest
    behavioural; ``reference`` the category whose log-odds are 0. ``M`` and
    ``A`` are each row's design column and its nuisance slopes, (rows, states)
    and (nuisance, rows, states); ``low``/``high`` bound the nuisance values.

    The parameter vector is [alpha for each non-reference category, beta,
    log sigma (Gaussian outcome), gamma, eta].

    ``weights`` (None: every row 1) multiply each row's log-likelihood, for the
    weighted pseudo-likelihood of a complex sample (:meth:`with_weights`).
    """

    weights: np.ndarray | None = None

    def __init__(self, *, Z: np.ndarray, states: tuple[str, ...], categories: tuple[str, ...],
                 reference: str, M: np.ndarray, A: np.ndarray, low: np.ndarray,
                 high: np.ndarray, outcome: Outcome | None = None) -> None:
        self.M, self.A = M, A
        self._setup(np.ascontiguousarray(Z, dtype=float), states, categories, reference,
                    A.shape[0], low, high, outcome)

    def _setup(self, Z: np.ndarray, states: tuple[str, ...], categories: tuple[str, ...],
               reference: str, J: int, low: np.ndarray, high: np.ndarray,
               outcome: Outcome | None) -> None:
        """The parts of the model every likelihood path shares: sizes, names and the box."""
        self.Z = Z
        self.n, self.q = self.Z.shape
        self.states = states
        self.category_states = np.array([states.index(c) for c in categories])
        self.behavioural_states = np.array([j for j, s in enumerate(states)
                                            if s not in categories], dtype=int)
        self.K = len(categories)
        self.reference = categories.index(reference)
        self.free_categories = [c for c in range(self.K) if c != self.reference]
        self.J = J
        self.B = len(self.behavioural_states)
        self.outcome = outcome
        self.n_alpha = self.q * (self.K - 1)
        self.n_outcome = outcome.size if outcome is not None else 0
        self.n_linear = self.B + self.J
        self.size = self.n_alpha + self.n_outcome + self.n_linear
        inf = np.full(self.n_alpha + self.n_outcome, np.inf)
        self.low = np.concatenate([-inf, np.zeros(self.B), np.asarray(low, dtype=float)])
        self.high = np.concatenate([inf, np.ones(self.B), np.asarray(high, dtype=float)])

    def with_weights(self, weights: np.ndarray) -> LatentModel:
        """The same model whose rows' log-likelihoods are multiplied by ``weights`` (rows,):
        the pseudo-likelihood sum_i w_i log L_i, its gradient and its Hessian (survey
        weights; Binder 1983)."""
        import copy

        weighted = copy.copy(self)
        weighted.weights = np.asarray(weights, dtype=float)
        return weighted

    def row_scores(self, x: np.ndarray) -> np.ndarray:
        """Each row's gradient of its own log-likelihood, d log L_i / d x: (rows, parameters),
        unweighted. Their weighted sums over PSUs are the meat of a design-based sandwich."""
        out = np.empty((self.n, self.size))
        for start in range(0, self.n, _CHUNK):
            rows = slice(start, min(start + _CHUNK, self.n))
            with np.errstate(over="ignore", invalid="ignore", under="ignore"):
                part = self._chunk(x, rows, True, per_row=True)
            if part is None:
                raise ValueError("a row has likelihood 0 at x: no scores")
            out[rows] = part
        return out

    # -- pieces of the parameter vector ------------------------------------------------------

    def alpha(self, x: np.ndarray) -> np.ndarray:
        """(terms, categories - 1) coefficients of the non-reference categories."""
        return x[:self.n_alpha].reshape(self.K - 1, self.q).T

    def gamma(self, x: np.ndarray) -> np.ndarray:
        start = self.n_alpha + self.n_outcome
        return x[start:start + self.B]

    def eta(self, x: np.ndarray) -> np.ndarray:
        return x[self.size - self.J:]

    def category_probabilities(self, x: np.ndarray, Z: np.ndarray | None = None) -> np.ndarray:
        """q(z; alpha): (rows, categories), each row summing to one."""
        Z = self.Z if Z is None else Z
        logits = np.zeros((Z.shape[0], self.K))
        logits[:, self.free_categories] = Z @ self.alpha(x)
        logits -= logits.max(axis=1, keepdims=True)
        q = np.exp(logits)
        return q / q.sum(axis=1, keepdims=True)

    # -- the likelihood ----------------------------------------------------------------------

    def loglik(self, x: np.ndarray) -> float:
        return self.evaluate(x, derivatives=False)[0]

    def evaluate_points(self, points: np.ndarray, derivatives: bool = True,
                        hessian: bool | np.ndarray = True) -> list[tuple]:
        """:meth:`evaluate` at each row of ``points`` (points, parameters). The general path
        makes one pass over the rows per point; :class:`TwoStateModel` makes one in all, and
        skips the Hessians where ``hessian`` is False (for all points, or per point as a
        boolean array; those entries are then zero)."""
        return [self.evaluate(x, derivatives) for x in np.atleast_2d(points)]

    def evaluate(self, x: np.ndarray, derivatives: bool = True):
        """(loglik, gradient, Hessian, largest |linear predictor|); -inf where some row has
        probability 0."""
        total = 0.0
        gradient = np.zeros(self.size)
        hessian = np.zeros((self.size, self.size))
        largest = 0.0
        for start in range(0, self.n, _CHUNK):
            rows = slice(start, min(start + _CHUNK, self.n))
            with np.errstate(over="ignore", invalid="ignore", under="ignore"):
                part = self._chunk(x, rows, derivatives)
            if part is None or (derivatives and not (np.all(np.isfinite(part[1]))
                                                     and np.all(np.isfinite(part[2])))):
                return -math.inf, None, None, math.inf
            value, g, h, big = part
            total += value
            largest = max(largest, big)
            if derivatives:
                with np.errstate(over="ignore", invalid="ignore"):
                    gradient += g
                    hessian += h
        if not derivatives:
            return total, None, None, largest
        with np.errstate(over="ignore", invalid="ignore"):
            hessian = (hessian + hessian.T) / 2
        if not (np.all(np.isfinite(gradient)) and np.all(np.isfinite(hessian))):
            return -math.inf, None, None, math.inf
        return total, gradient, hessian, largest

    def _chunk(self, x: np.ndarray, rows: slice, derivatives: bool, per_row: bool = False):
        Z = self.Z[rows]
        m = Z.shape[0]
        # row weights: every sum over rows below is weighted (Zw.T @ ... is sum_i w_i z_i ...)
        r = np.ones(m) if self.weights is None else self.weights[rows]
        Zw = Z if self.weights is None else Z * r[:, None]
        S, K, cats = len(self.states), self.K, self.category_states
        alpha = self.alpha(x)
        linear = Z @ alpha                                   # (m, K - 1)
        logits = np.zeros((m, K))
        logits[:, self.free_categories] = linear
        top = logits.max(axis=1, keepdims=True)
        log_q = logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))
        q = np.exp(log_q)
        gamma, eta = self.gamma(x), self.eta(x)
        with np.errstate(divide="ignore"):
            log_rho = np.full(S, math.log1p(-gamma.sum()) if gamma.sum() < 1 else -math.inf)
            log_rho[self.behavioural_states] = np.log(gamma)
        M = self.M[rows] + (np.tensordot(eta, self.A[:, rows], axes=1) if self.J else 0.0)
        log_e = np.zeros((m, S))
        log_e[:, cats] = log_q
        outcome = self.outcome
        if outcome is not None:
            log_f, scores, residual = self._outcome(x, rows)
            log_e[:, cats] += log_f
        with np.errstate(divide="ignore"):
            log_c = np.log(M) + log_rho + log_e
        top = log_c.max(axis=1, keepdims=True)
        if not np.all(np.isfinite(top)):
            return None
        log_mu = top[:, 0] + np.log(np.exp(log_c - top).sum(axis=1))
        value = float(r @ log_mu)
        largest = float(np.abs(linear).max()) if linear.size else 0.0
        if not derivatives:
            return value, None, None, largest
        w = np.exp(log_c - log_mu[:, None])                  # posterior of the states
        # The complete-data score of alpha is z_i (x) a_is, a_isk = [s = category k] - q_ik
        # (zero for behavioural states); so every alpha block below is a weighted Gram
        # matrix of Z, Z' diag(weight) Z, or Z' times a (rows, few) matrix.
        a = np.zeros((m, S, K - 1))
        for k, d in enumerate(self.free_categories):
            a[:, cats, k] = (np.arange(K) == d)[None, :] - q[:, d:d + 1]
        a_bar = np.einsum("is,isk->ik", w, a)
        # direct derivatives of c_is / L_i for the affine parameters gamma and eta
        D = np.zeros((m, S, self.n_linear))
        rest = np.exp(log_e - log_mu[:, None])              # e_is / L_i
        sign = np.zeros((self.B, S))
        for b, state in enumerate(self.behavioural_states):
            sign[b, cats] = -1.0
            sign[b, state] = 1.0
            D[:, :, b] = M * rest * sign[b]
        if self.J:
            rho = np.exp(log_rho)
            D[:, :, self.B:] = np.moveaxis(self.A[:, rows], 0, 2) * (rest * rho)[:, :, None]
        g_N = D.sum(axis=1)
        size, q_terms, n_alpha = self.size, self.q, self.n_alpha
        if per_row:
            out = np.zeros((m, size))
            for k in range(K - 1):
                out[:, k * q_terms:(k + 1) * q_terms] = Z * a_bar[:, k:k + 1]
            if outcome is not None:
                scores_o = np.zeros((m, S, self.n_outcome))
                scores_o[:, cats] = scores
                out[:, n_alpha:n_alpha + self.n_outcome] = np.einsum("is,isp->ip", w, scores_o)
            out[:, size - self.n_linear:] = g_N
            return out
        gradient = np.zeros(size)
        hessian = np.zeros((size, size))
        gradient[:n_alpha] = (Zw.T @ a_bar).T.ravel()
        in_category = w[:, cats].sum(axis=1)
        blocks = [slice(k * q_terms, (k + 1) * q_terms) for k in range(K - 1)]
        for k, d in enumerate(self.free_categories):
            for k2, e in enumerate(self.free_categories):
                if k2 < k:
                    continue
                # posterior covariance of the scores plus the mean complete-data Hessian
                weight = (np.einsum("is,is,is->i", w, a[:, :, k], a[:, :, k2])
                          - a_bar[:, k] * a_bar[:, k2]
                          - in_category * q[:, d] * ((d == e) - q[:, e]))
                block = Zw.T @ (Z * weight[:, None])
                hessian[blocks[k], blocks[k2]] = block
                hessian[blocks[k2], blocks[k]] = block.T
        linear_block = slice(size - self.n_linear, size)
        for k in range(K - 1):
            cross = np.einsum("is,isn->in", a[:, :, k], D) - a_bar[:, k:k + 1] * g_N
            hessian[blocks[k], linear_block] = Zw.T @ cross
        if outcome is not None:
            o = slice(n_alpha, n_alpha + self.n_outcome)
            scores_o = np.zeros((m, S, self.n_outcome))
            scores_o[:, cats] = scores
            O_bar = np.einsum("is,isp->ip", w, scores_o)
            gradient[o] = r @ O_bar
            weighted = (np.sqrt(w * r[:, None])[:, :, None] * scores_o).reshape(
                m * S, self.n_outcome)
            hessian[o, o] = (self._structural(w * r[:, None], rows, residual, x)
                             + weighted.T @ weighted - O_bar.T @ (O_bar * r[:, None]))
            for k in range(K - 1):
                cross = (np.einsum("is,isp->ip", w * a[:, :, k], scores_o)
                         - a_bar[:, k:k + 1] * O_bar)
                hessian[blocks[k], o] = Zw.T @ cross
                hessian[o, blocks[k]] = hessian[blocks[k], o].T
            hessian[o, linear_block] = (np.einsum("i,isp,isn->pn", r, scores_o, D)
                                        - O_bar.T @ (g_N * r[:, None]))
        gradient[linear_block] = r @ g_N
        H_NN = -g_N.T @ (g_N * r[:, None])
        if self.J and self.B:
            cross = np.einsum("jis,is,bs->bj", self.A[:, rows], rest * r[:, None], sign)
            H_NN[:self.B, self.B:] += cross
            H_NN[self.B:, :self.B] += cross.T
        hessian[linear_block, linear_block] = H_NN
        hessian[linear_block, :size - self.n_linear] = hessian[:size - self.n_linear,
                                                               linear_block].T
        return value, gradient, hessian, largest

    def _outcome(self, x: np.ndarray, rows: slice):
        """log f (m, K), its scores (m, K, outcome parameters) and the residual terms."""
        outcome = self.outcome
        X = outcome.X[:, rows]                               # (K, m, p)
        p = X.shape[2]
        beta = x[self.n_alpha:self.n_alpha + p]
        y = outcome.y[rows]
        linear = np.einsum("kmp,p->mk", X, beta)
        Xm = np.moveaxis(X, 0, 1)                            # (m, K, p)
        if outcome.family == "gaussian":
            tau = x[self.n_alpha + p]
            precision = math.exp(-2 * tau)
            r = y[:, None] - linear
            log_f = -0.5 * _LOG_2PI - tau - 0.5 * r**2 * precision
            scores = np.concatenate([Xm * (r * precision)[:, :, None],
                                     (r**2 * precision - 1)[:, :, None]], axis=2)
            return log_f, scores, (r, precision)
        prob = 1 / (1 + np.exp(-linear))
        log_f = y[:, None] * linear - np.logaddexp(0, linear)
        scores = Xm * (y[:, None] - prob)[:, :, None]
        return log_f, scores, (prob,)

    def _structural(self, w, rows, residual, x) -> np.ndarray:
        """Posterior mean of the complete-data Hessian of the outcome's parameters."""
        X = self.outcome.X[:, rows]
        p = X.shape[2]
        H = np.zeros((self.n_outcome, self.n_outcome))
        wc = w[:, self.category_states]                     # (m, K)
        if self.outcome.family == "gaussian":
            r, precision = residual
            H[:p, :p] = -precision * np.einsum("km,kmp,kmr->pr", wc.T, X, X)
            cross = -2 * precision * np.einsum("km,kmp->p", (wc * r).T, X)
            H[:p, p] = cross
            H[p, :p] = cross
            H[p, p] = -2 * precision * float(np.sum(wc * r**2))
        else:
            (prob,) = residual
            weight = (wc * prob * (1 - prob)).T
            H[:p, :p] = -np.einsum("km,kmp,kmr->pr", weight, X, X)
        return H


class TwoStateModel(LatentModel):
    """The likelihood of a yes/no question as the outcome, without a sum over states.

    With two true states, the modelled category (yes) and the reference (no),
    and no behavioural states, row i's likelihood is a two-term mixture

        L_i = a_i p_i + c_i (1 - p_i) = c_i + d_i expit(z_i' beta),   p_i = expit(z_i' beta)

    where a_i = P(r_i | yes, g_i) and c_i = P(r_i | no, g_i), d_i = a_i - c_i,
    are the entries of the row's (group, answer) cell of the design's matrix,
    don't-know branch included, and affine in the nuisance parameters eta (the
    SLD's t, the unrelated question's innocuous prevalence): a = a0 + eta' a1,
    c = c0 + eta' c1. With the posterior weight of yes w_i = a_i p_i / L_i
    (Fisher's and Louis' identities, or differentiating L_i directly):

        d l / d beta          = sum_i (w_i - p_i) z_i
        d2 l / d beta2        = Z' diag(w_i (1 - w_i) - p_i (1 - p_i)) Z
        d l / d eta_j         = sum_i e_ij,   e_ij = (a1_ij p_i + c1_ij (1 - p_i)) / L_i
        d2 l / d eta_j d eta_k = -sum_i e_ij e_ik
        d2 l / d beta d eta_j = sum_i (a1_ij p_i / L_i - w_i e_ij) z_i

    so one pass over the rows gives the log-likelihood, the gradient and the
    Hessian, the beta block as one BLAS product Z' (v * Z) per chunk of rows.
    Rows whose likelihood is below 1e-280 (linear predictors in the hundreds)
    are evaluated on the log scale, so the values agree with
    :class:`LatentModel`, the general path and this class's test oracle, up
    to rounding.

    ``cells`` (rows,) indexes ``base`` (cells, 2 states), the design's column of
    each (group, answer) cell, and ``slopes`` (nuisance, cells, 2 states).
    """

    def __init__(self, *, Z: np.ndarray, states: tuple[str, ...], categories: tuple[str, ...],
                 reference: str, cells: np.ndarray, base: np.ndarray, slopes: np.ndarray,
                 low: np.ndarray, high: np.ndarray) -> None:
        self._setup(np.asarray(Z, dtype=float), states, categories, reference,
                    slopes.shape[0], low, high, None)
        if self.K != 2 or self.B:
            raise ValueError("TwoStateModel needs two categories and no behavioural states")
        yes = self.category_states[self.free_categories[0]]
        no = self.category_states[self.reference]
        self.cells = np.asarray(cells, dtype=np.intp)
        base = np.asarray(base, dtype=float)
        slopes = np.asarray(slopes, dtype=float)
        self.base_yes, self.base_no = base[:, yes], base[:, no]
        self.slopes_yes, self.slopes_no = slopes[:, :, yes], slopes[:, :, no]

    def evaluate(self, x: np.ndarray, derivatives: bool = True):
        return self.evaluate_points(np.asarray(x, dtype=float)[None, :], derivatives)[0]

    def _pairs(self) -> tuple[np.ndarray, np.ndarray]:
        if not hasattr(self, "_pair_indices"):
            self._pair_indices = np.triu_indices(self.q)
        return self._pair_indices

    def evaluate_points(self, points: np.ndarray, derivatives: bool = True,
                        hessian: bool | np.ndarray = True) -> list[tuple]:
        points = np.atleast_2d(np.asarray(points, dtype=float))
        wanted = _per_point(hessian, len(points))
        if wanted.any() and not wanted.all():
            # the points with Hessians first: the kernel computes them for a leading block
            order = np.argsort(~wanted, kind="stable")
            out: list = [None] * len(order)
            evaluated = self._evaluate_leading(points[order], derivatives,
                                               int(wanted.sum()))
            for place, result in zip(order, evaluated, strict=True):
                out[place] = result
            return out
        return self._evaluate_leading(points, derivatives,
                                      points.shape[0] if wanted.all() else 0)

    def _evaluate_leading(self, points: np.ndarray, derivatives: bool, hessians_for: int
                          ) -> list[tuple]:
        """:meth:`evaluate_points` with the Hessians of the first ``hessians_for`` points."""
        count, q, size = points.shape[0], self.q, self.size
        coefficients = np.ascontiguousarray(points[:, :q])       # (points, terms)
        eta = points[:, q:]                                       # (points, nuisance)
        a_cells = self.base_yes[None, :] + eta @ self.slopes_yes  # (points, cells)
        c_cells = self.base_no[None, :] + eta @ self.slopes_no
        totals = np.zeros(count)
        largest = np.zeros(count)
        gradient = np.zeros((count, size))
        hessians = np.zeros((count, size, size))
        chunk = _CHUNK if count == 1 else max(1024, min(_CHUNK, _BATCH_CELLS // max(
            count, q * (q + 1) // 2 if hessians_for > _FEW_HESSIANS else 1)))

        def accumulate(begin: int, end: int, totals, largest, gradient, hessians) -> None:
            for start in range(begin, end, chunk):
                rows = slice(start, min(start + chunk, end))
                with np.errstate(over="ignore", invalid="ignore", under="ignore",
                                 divide="ignore"):
                    self._chunk_points(rows, coefficients, a_cells, c_cells, derivatives,
                                       hessians_for, totals, largest, gradient, hessians)

        if count == 1 or self.n < _SPLIT_ROWS or _threads() is None:
            accumulate(0, self.n, totals, largest, gradient, hessians)
        else:
            # many points (refits, score tests): their blocks run on one BLAS thread each, so
            # the two halves of the rows go to two threads (numpy releases the GIL in its
            # loops) and their sums are added, the first half's first: the same result
            # whichever thread ends first
            half = (self.n // 2 + chunk - 1) // chunk * chunk
            second = (np.zeros(count), np.zeros(count), np.zeros((count, size)),
                      np.zeros((count, size, size)))
            pending = _threads().submit(accumulate, half, self.n, *second)
            accumulate(0, half, totals, largest, gradient, hessians)
            pending.result()
            totals += second[0]
            np.maximum(largest, second[1], out=largest)
            gradient += second[2]
            hessians += second[3]
        out = []
        for k in range(count):
            if not math.isfinite(totals[k]):
                out.append((-math.inf, None, None, math.inf))
            elif not derivatives:
                out.append((float(totals[k]), None, None, float(largest[k])))
            else:
                h = hessians[k]
                h[q:, :q] = h[:q, q:].T
                if not (np.all(np.isfinite(gradient[k])) and np.all(np.isfinite(h))):
                    out.append((-math.inf, None, None, math.inf))
                else:
                    out.append((float(totals[k]), gradient[k], h, float(largest[k])))
        return out

    def _chunk_points(self, rows: slice, coefficients, a_cells, c_cells, derivatives,
                      hessians_for, totals, largest, gradient, hessian) -> None:
        # Every per-row array is (points, rows): each point's row values are contiguous, so
        # the sums over rows run along memory and the products with Z are (points, rows) @
        # (rows, terms). The first ``hessians_for`` points get Hessians.
        from scipy.special import expit, log_expit

        Z = self.Z[rows]
        k = self.cells[rows]
        q = self.q
        # one point: matrix-vector products (OpenBLAS is slow on an (m, 1) matrix product)
        single = coefficients.shape[0] == 1
        linear = (Z @ coefficients[0])[None, :] if single else _times_rows(coefficients, Z)
        np.maximum(largest, np.maximum(linear.max(axis=1), -linear.min(axis=1)), out=largest)
        a, c = a_cells[:, k], c_cells[:, k]
        p = expit(linear)
        p_no = expit(np.negative(linear))
        L = a * p
        L += c * p_no
        log_L = np.log(L)
        tails = not L.min() >= _TINY
        if tails:
            # far out in the tails: the two terms on the log scale
            small = ~(L >= _TINY)
            lin = linear[small]
            log_p, log_no = log_expit(lin), log_expit(-lin)
            log_L[small] = np.logaddexp(np.log(a[small]) + log_p, np.log(c[small]) + log_no)
        totals += log_L.sum(axis=1)
        if not derivatives:
            return
        inverse = np.reciprocal(L, out=L)
        ratio_yes, ratio_no = p * inverse, p_no * inverse      # p / L and (1 - p) / L
        w, w_no = a * ratio_yes, c * ratio_no                   # posteriors of yes and no
        if tails:
            log_L = log_L[small]
            ratio_yes[small] = np.exp(log_p - log_L)
            ratio_no[small] = np.exp(log_no - log_L)
            w[small] = np.exp(np.log(a[small]) + log_p - log_L)
            w_no[small] = np.exp(np.log(c[small]) + log_no - log_L)
        residual = w - p
        gradient[:, :q] += (Z.T @ residual[0])[None, :] if single else _over_rows(residual, Z)
        h = hessians_for
        if h:
            weight = w[:h] * w_no[:h]
            weight -= np.multiply(p[:h], p_no[:h], out=p_no[:h])
            if single:
                hessian[0, :q, :q] += Z.T @ (weight[0][:, None] * Z)
            elif h <= _FEW_HESSIANS:
                for j in range(h):                                 # (terms, rows) @ Z
                    hessian[j, :q, :q] += _over_rows(Z.T * weight[j], Z)
            else:
                # many points: the products of pairs of columns once, then one matrix
                # product gives every point's beta block (q(q+1)/2 entries each)
                columns = np.ascontiguousarray(Z.T)                # (terms, rows)
                products = np.empty((q * (q + 1) // 2, Z.shape[0]))
                place = 0
                for first in range(q):
                    stop = place + q - first
                    np.multiply(columns[first:], columns[first], out=products[place:stop])
                    place = stop
                blocks = _over_rows(weight, products.T)            # (points, pairs)
                upper, lower = self._pairs()
                hessian[:h, upper, lower] += blocks
                off = upper != lower
                hessian[:h, lower[off], upper[off]] += blocks[:, off]
        scores = []                      # e_j = (a1_j p + c1_j (1 - p)) / L per nuisance j
        for j in range(self.J):
            slope_yes = self.slopes_yes[j, k][None, :]
            e_j = slope_yes * ratio_yes
            e_j += self.slopes_no[j, k][None, :] * ratio_no
            scores.append(e_j)
            gradient[:, q + j] += e_j.sum(axis=1)
            if not h:
                continue
            cross = slope_yes * ratio_yes[:h] - w[:h] * e_j[:h]
            hessian[:h, :q, q + j] += ((Z.T @ cross[0])[None, :] if single
                                       else _over_rows(cross, Z))
            for i in range(j + 1):
                block = -(scores[i][:h] * e_j[:h]).sum(axis=1)
                hessian[:h, q + i, q + j] += block
                if i != j:
                    hessian[:h, q + j, q + i] += block


# OpenBLAS runs a matrix product of fewer multiply-adds than about this (M * N * K) on one
# thread. On cores busy with other work its threads wait for each other: a (12, 4096) x (4096,
# 91) product measured 5x to 30x the CPU time of the same product in blocks of 240 rows.
_ONE_THREAD = 1 << 18


@functools.cache
def _threads() -> ThreadPoolExecutor | None:
    """One more thread for evaluations of many points (None on one core)."""
    return ThreadPoolExecutor(1, "surveykit-rows") if (os.cpu_count() or 1) > 1 else None


# A forked child has the pool but not its thread (a submitted half would never run): it
# makes a pool of its own.
os.register_at_fork(after_in_child=_threads.cache_clear)


def _over_rows(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """left (k, rows) @ right (rows, j), summed over blocks of rows small enough for one BLAS
    thread."""
    k, m = left.shape
    step = max(64, _ONE_THREAD // max(1, k * right.shape[1]))
    out = left[:, :step] @ right[:step]
    for start in range(step, m, step):
        out += left[:, start:start + step] @ right[start:start + step]
    return out


def _times_rows(coefficients: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """coefficients (k, terms) @ Z.T: (k, rows), in blocks of rows small enough for one BLAS
    thread."""
    k, m = coefficients.shape[0], Z.shape[0]
    step = max(64, _ONE_THREAD // max(1, k * Z.shape[1]))
    out = np.empty((k, m))
    for start in range(0, m, step):
        out[:, start:start + step] = coefficients @ Z[start:start + step].T
    return out


@dataclass(frozen=True)
class Maximum:
    """Where :func:`maximize` stopped: parameters, log-likelihood, gradient and Hessian there."""

    x: np.ndarray
    loglik: float
    gradient: np.ndarray
    hessian: np.ndarray
    converged: bool
    iterations: int
    diverging: bool
    stopped: bool = False


def maximize(model: LatentModel, start: np.ndarray, *, fixed: np.ndarray | None = None,
             max_iterations: int = 200, on_iteration: Callable[[int], None] | None = None,
             polish: bool = True, stop: Callable[..., bool] | None = None) -> Maximum:
    """Newton's method with a line search on the model's box, from ``start``.

    ``fixed`` marks parameters held at their starting values (likelihood-ratio
    tests). Converged means the Newton decrement g'(-H)^-1 g on the free
    parameters fell below 1e-11 (relative to |loglik|), after which one more
    Newton step is taken (``polish=False`` skips it: a restricted fit for a
    likelihood-ratio test needs the maximum's value, which that step changes by
    less than the decrement). ``diverging`` reports a linear predictor beyond 500:
    estimates running off to infinity (perfect separation). ``stop(x, value,
    gradient, hessian, direction, limit)``, called before each step, ends the
    search when it returns True (``stopped``; the likelihood-ratio tests' starts that
    have reached a maximum found before).
    """
    climb = climber(model, start, fixed=fixed, max_iterations=max_iterations,
                    on_iteration=on_iteration, polish=polish, stop=stop)
    return climb_together(model, [climb])[0]


Request = tuple[np.ndarray, "bool | np.ndarray"]
"""What a climb asks for: points (points, parameters) to evaluate, with Hessians or not (for
all of them, or per point)."""


def climb_together(model: LatentModel, climbs: list,
                   on_done: Callable[[int], None] | None = None) -> list:
    """Run generators that yield :data:`Request` and receive the evaluations (a list of
    :meth:`LatentModel.evaluate` tuples, one per point) until each returns; their return
    values, in order. All requests pending at once are evaluated in one call (Hessians only
    for the points that ask for them), so many climbs share each pass over the rows;
    identical points in a round are evaluated once. Each climb's arithmetic does not depend
    on the others. ``on_done(k)`` is called when climb k returns."""
    results: list = [None] * len(climbs)
    pending: dict[int, Request] = {}
    for k in range(len(climbs)):
        _advance(climbs, k, None, pending, results, on_done, first=True)
    while pending:
        keys = list(pending)
        blocks, wanted = requests_together([pending[k] for k in keys])
        points, where = _unique_rows(np.concatenate(blocks))
        hessians = np.zeros(len(points), dtype=bool)
        np.logical_or.at(hessians, where, wanted)
        evaluated = model.evaluate_points(points, hessian=hessians)
        answers: dict[int, list] = {}
        position = 0
        for k, block in zip(keys, blocks, strict=True):
            answers[k] = [evaluated[i] for i in where[position:position + len(block)]]
            position += len(block)
        pending = {}
        for k, answer in answers.items():
            _advance(climbs, k, answer, pending, results, on_done)
    return results


def requests_together(requests: list[Request]) -> tuple[list[np.ndarray], np.ndarray]:
    """Each request's points as a 2-D block, and whether each point of the blocks, in
    order, asks for its Hessian."""
    blocks = [np.atleast_2d(points) for points, _ in requests]
    return blocks, np.concatenate([_per_point(hessian, len(block))
                                   for (_, hessian), block in zip(requests, blocks,
                                                                  strict=True)])


def _per_point(hessian: bool | np.ndarray, count: int) -> np.ndarray:
    """A Hessian flag for all ``count`` points, or one per point, as one per point."""
    return np.broadcast_to(np.asarray(hessian, dtype=bool), (count,))


def _advance(climbs, k, answer, pending, results, on_done, first=False) -> None:
    try:
        request = next(climbs[k]) if first else climbs[k].send(answer)
    except StopIteration as done:
        results[k] = done.value
        if on_done is not None:
            on_done(k)
        return
    pending[k] = request


def _unique_rows(points: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """The distinct rows of ``points`` in first-seen order, and each row's place among them."""
    seen: dict[bytes, int] = {}
    where = []
    for row in points:
        key = row.tobytes()
        if key not in seen:
            seen[key] = len(seen)
        where.append(seen[key])
    order = sorted(seen.values())
    unique = np.empty((len(order), points.shape[1]))
    for row, index in zip(points, where, strict=True):
        unique[index] = row
    return unique, where


def climber(model: LatentModel, start: np.ndarray, *, fixed: np.ndarray | None = None,
            max_iterations: int = 200, on_iteration: Callable[[int], None] | None = None,
            polish: bool = True, stop: Callable[..., bool] | None = None):
    """:func:`maximize` as a generator for :func:`climb_together`: it yields the points it
    needs evaluated and returns the :class:`Maximum`."""
    low, high = model.low, model.high
    fixed = np.zeros(model.size, dtype=bool) if fixed is None else np.asarray(fixed, bool)
    x = np.clip(np.array(start, dtype=float), low, high)
    [(value, g, H, largest)] = yield (x, True)
    if not math.isfinite(value):
        return Maximum(x, value, np.zeros(model.size), np.zeros((model.size,) * 2), False, 0,
                       False)
    converged = diverging = stopped = False
    iteration = 0
    while iteration < max_iterations:
        iteration += 1
        if on_iteration is not None:
            on_iteration(iteration)
        d, limit = _direction(x, g, H, fixed, low, high)
        decrement = float(g @ d)
        scale = max(1.0, abs(value))
        if decrement <= 1e-11 * scale:
            converged = True
            if not polish:
                break
            step = min(1.0, limit)
            trial = np.clip(x + step * d, low, high)
            [(trial_value, tg, tH, tl)] = yield (trial, True)
            if math.isfinite(trial_value) and trial_value >= value - 1e-12 * scale:
                x, value, g, H, largest = trial, trial_value, tg, tH, tl
            break
        if stop is not None and stop(x, value, g, H, d, limit):
            stopped = True
            break
        step = min(1.0, limit)
        accepted = False
        for _ in range(60):
            trial = np.clip(x + step * d, low, high)
            [(trial_value, tg, tH, tl)] = yield (trial, True)
            if math.isfinite(trial_value) and trial_value >= value + 1e-4 * step * decrement:
                accepted = True
                break
            step /= 2
        if not accepted:
            # the line search sees no progress: at the maximum up to rounding, or stuck
            converged = decrement <= 1e-8 * scale
            break
        x, value, g, H, largest = trial, trial_value, tg, tH, tl
        if largest > _DIVERGED:
            diverging = True
            break
    return Maximum(x=x, loglik=value, gradient=g, hessian=H, converged=converged,
                   iterations=iteration, diverging=diverging, stopped=stopped)


def _direction(x, g, H, fixed, low, high) -> tuple[np.ndarray, float]:
    """The Newton (or ascent) step on the parameters that are free to move, and the largest
    step length that stays in the box."""
    free = ~fixed & ~((x <= low) & (g <= 0)) & ~((x >= high) & (g >= 0))
    for _ in range(x.size + 1):
        d = np.zeros_like(x)
        if free.any():
            d[free] = _ascent_step(g[free], H[np.ix_(free, free)])
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.where(d > 0, (high - x) / d, np.where(d < 0, (low - x) / d, np.inf))
        blocked = free & (room <= 0)
        if not blocked.any():
            return d, float(room.min()) if room.size else math.inf
        free &= ~blocked
    return np.zeros_like(x), 0.0
