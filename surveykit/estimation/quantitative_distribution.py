"""The distribution of the true values and its quantiles, where a design identifies them.

Two designs families identify the whole distribution of y, not only its mean:

* **truthful or a known draw** (``eriksson`` with a stated deck, ``mix_norm``,
  ``mix_exp``): the answers' distribution function is F_Z = p F_y + (1 - p) G
  with G the draw's, so F_y(t) = (F_Z(t) - (1 - p) G(t)) / p, estimated by
  plugging in the answers' empirical distribution function; ``mix_unknown``:
  F_g = p_g F_y + (1 - p_g) F_X in group g, so F_y = ((1 - p_2) F_1 - (1 - p_1)
  F_2) / (p_1 - p_2) (method ``"mixture inversion"``). The estimate is
  unbiased at every t; its standard error is that of the empirical
  distribution functions (with weights, their with-replacement linearization),
  and a quantile's interval is Woodruff's (1952): the quantiles at q -/+ z se
  of F_y at the estimated quantile. The displayed distribution function is the
  running maximum clipped to [0, 1]; the quantile inf {t: F_y(t) >= q} is the
  same for both.
* **additive or multiplicative scrambling with a known continuous scrambler**
  (``additive``: y + S; ``eichhorn_hayre``: y S, y > 0): a deconvolution
  estimate of F_y on a grid of cells (multiplicative: cells equal on the log
  scale), by EM for the nonparametric maximum-likelihood estimate (Laird 1978),
  pi_j <- pi_j sum_i w_i K_ij / f_i with K_ij the density of answer i given
  the true value y_j, with a smoothing step [1/4, 1/2, 1/4] after each EM step
  (EMS, Silverman, Jones, Wilson and Nychka 1990: the plain NPMLE is a few
  spikes, whose quantiles jump); answers are binned into 2,000 bins (method
  ``"deconvolution"``). Deconvolution converges slowly and has no simple
  standard error; quantiles come without intervals.

Both need the answers themselves (the whole distribution), not their counts.

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from surveykit.designs.quantitative import Additive, EichhornHayre, QuantitativeDesign
from surveykit.designs.scramblers import Scrambler, Unknown
from surveykit.errors import EstimationError, ParameterError
from surveykit.estimation.binomial import check_level, z_value
from surveykit.estimation.quantitative import numeric_answers

__all__ = ["EstimatedDistribution", "QuantileEstimate", "estimate_distribution"]

#: Grid cells of the deconvolution estimate (more where the scrambler is narrow).
GRID = 200
MAX_GRID = 2000
#: Answers are binned into this many bins for deconvolution.
BINS = 2000
_EM_TOLERANCE = 1e-10
_EM_ITERATIONS = 5000
_SMOOTHING = np.array([0.25, 0.5, 0.25])


@dataclass(frozen=True)
class QuantileEstimate:
    """The q-quantile of the true values with its interval (None where there is none;
    -inf/inf where Woodruff's interval leaves the data)."""

    q: float
    estimate: float
    ci_low: float | None
    ci_high: float | None

    def to_dict(self) -> dict[str, float | None]:
        def finite(x):
            return x if x is not None and math.isfinite(x) else None

        return {"q": self.q, "estimate": self.estimate, "ci_low": finite(self.ci_low),
                "ci_high": finite(self.ci_high)}


@dataclass(frozen=True, kw_only=True)
class EstimatedDistribution:
    """The estimated distribution function of the true values: ``cdf`` at ``points``
    (ascending; a step function, right-continuous), ``raw_cdf`` before the monotone
    correction, ``cdf_se`` its pointwise standard error (mixture inversion only)."""

    design: QuantitativeDesign
    method: str
    points: np.ndarray = field(repr=False)
    cdf: np.ndarray = field(repr=False)
    raw_cdf: np.ndarray = field(repr=False)
    cdf_se: np.ndarray | None = field(repr=False)
    n: int
    dont_know: int
    iterations: int = 0
    lower_edge: float | None = None

    def quantile(self, q: float) -> float:
        """inf {t : F_y(t) >= q} over the points; for a deconvolution estimate, whose mass
        sits in grid cells, linear within the cell (``lower_edge`` is the first cell's)."""
        if isinstance(q, bool) or not isinstance(q, int | float) or not 0 < q < 1:
            raise ParameterError(f"q ({q!r}) must be a probability strictly between 0 and 1")
        return self._inverse(q)

    def _inverse(self, q: float) -> float:
        if q <= 0:
            return -math.inf
        if self.lower_edge is not None:
            edges = np.concatenate([[self.lower_edge], self.points])
            cdf = np.concatenate([[0.0], self.cdf])
            return float(np.interp(q, cdf, edges))
        index = int(np.searchsorted(self.cdf, q - 1e-12, side="left"))
        return float(self.points[index]) if index < self.points.size else math.inf

    def quantiles(self, qs: Sequence[float] = (0.1, 0.25, 0.5, 0.75, 0.9),
                  level: float = 0.95) -> list[QuantileEstimate]:
        """Quantiles with Woodruff's interval (mixture inversion) or without (deconvolution).

        >>> from surveykit.designs.quantitative import MixNorm
        >>> rng = np.random.default_rng(8)
        >>> design = MixNorm(p=0.7, mu=0, sigma=30)
        >>> z = design.simulate(rng.normal(50, 10, 4000), rng=rng).answers
        >>> median = estimate_distribution(design, z).quantiles([0.5])[0]
        >>> median.ci_low < 50 < median.ci_high
        True
        """
        z = z_value(check_level(level))
        out = []
        for q in qs:
            estimate = self.quantile(q)
            if self.cdf_se is None:
                out.append(QuantileEstimate(float(q), estimate, None, None))
                continue
            index = int(np.searchsorted(self.points, estimate))
            se = float(self.cdf_se[min(index, self.points.size - 1)])
            low, high = q - z * se, q + z * se
            out.append(QuantileEstimate(float(q), estimate,
                                        self._inverse(low) if low > 0 else -math.inf,
                                        self._inverse(high) if high < 1 else math.inf))
        return out

    def to_dict(self, qs: Sequence[float] = (0.1, 0.25, 0.5, 0.75, 0.9),
                level: float = 0.95) -> dict[str, object]:
        return {"design": self.design.spec(), "method": self.method, "n": self.n,
                "dont_know": self.dont_know,
                "quantiles": [e.to_dict() for e in self.quantiles(qs, level)],
                "points": self.points.tolist(), "cdf": self.cdf.tolist()}


def estimate_distribution(design: QuantitativeDesign, answers: Sequence[object] | np.ndarray,
                          *, groups: Sequence[object] | np.ndarray | None = None,
                          dont_know: Sequence[bool] | np.ndarray | None = None,
                          weights: Sequence[float] | np.ndarray | None = None
                          ) -> EstimatedDistribution:
    """The distribution of the true values (module docstring); ParameterError for designs
    that do not identify it with a method surveykit has."""
    a = numeric_answers(design, answers, groups=groups, dont_know=dont_know, weights=weights)
    answered = a.answered & (a.weights > 0)
    if answered.sum() < 2:
        raise EstimationError(f"{int(answered.sum())} numeric answer(s): the distribution "
                              "needs at least 2")
    mixture = _mixture_parts(design)
    if mixture is not None:
        return _inversion(design, a, answered, mixture)
    if isinstance(design, Additive | EichhornHayre):
        S = design.scramblers["S"]
        if not S.known or S.discrete:
            raise ParameterError(
                f"{design.describe()}: deconvolution needs S's continuous distribution "
                "(scrambler = \"normal\", \"uniform\", \"laplace\" or \"exponential\")")
        return _deconvolution(design, a, answered, S)
    raise ParameterError(
        f"design {design.model!r} does not identify the distribution of the true values with "
        "a method surveykit has: quantiles are estimated for eriksson (with a stated deck), "
        "mix_norm, mix_exp, mix_unknown (mixture inversion), additive and eichhorn_hayre "
        "(deconvolution)")


def _mixture_parts(design: QuantitativeDesign) -> list[tuple[float, Scrambler]] | None:
    """Per group (p, draw) when each group is "truthful or a draw"; else None."""
    out = []
    for g in range(len(design.group_names)):
        steps = design.answer_steps(g)
        truthful = [s for s in steps if s.kind == "truthful"]
        draws = [s for s in steps if s.kind in ("draw", "unrelated")]
        if len(truthful) != 1 or len(draws) != 1 or len(steps) != 2:
            return None
        draw = design.scramblers[draws[0].offset]
        if not draw.known and not isinstance(draw, Unknown):
            raise ParameterError(
                f"{design.describe()}: the distribution of the true values needs the draw's "
                "distribution, not only its mean and sd; give the deck (scrambler = [...])")
        out.append((float(truthful[0].probability), draw))
    return out


def _ecdf(points: np.ndarray, z: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The weighted empirical distribution function at ``points`` and its with-replacement
    linearization variance (F (1 - F) / (n - 1) with equal weights, as R survey's svymean
    of the indicator 1[z <= t])."""
    order = np.argsort(z, kind="stable")
    zs, ws = z[order], w[order]
    cumulative = np.cumsum(ws)
    W = cumulative[-1]
    index = np.searchsorted(zs, points, side="right")
    F = np.where(index > 0, cumulative[np.maximum(index - 1, 0)], 0.0) / W
    n = z.size
    # u_i = w_i (1[z_i <= t] - F) / W; n / (n - 1) sum (u - ubar)^2, with ubar = 0
    sum_w2 = np.sum(w ** 2)
    below_w2 = np.where(index > 0, np.cumsum(ws ** 2)[np.maximum(index - 1, 0)], 0.0)
    variance = n / (n - 1) * (below_w2 * (1 - F) ** 2 + (sum_w2 - below_w2) * F ** 2) / W ** 2
    return F, variance


def _inversion(design, a, answered, mixture) -> EstimatedDistribution:
    z_all = a.values
    points = np.unique(z_all[answered])
    if len(mixture) == 1:
        p, draw = mixture[0]
        F, variance = _ecdf(points, z_all[answered], a.weights[answered])
        raw = (F - (1 - p) * draw.cdf(points)) / p
        se = np.sqrt(variance) / p
    else:
        (p1, _), (p2, _) = mixture
        parts = []
        for g in (0, 1):
            members = answered & (a.group == g)
            if members.sum() < 2:
                raise EstimationError(f"{int(members.sum())} numeric answer(s) in group "
                                      f"{g + 1}: the distribution needs at least 2 per group")
            parts.append(_ecdf(points, z_all[members], a.weights[members]))
        (F1, v1), (F2, v2) = parts
        raw = ((1 - p2) * F1 - (1 - p1) * F2) / (p1 - p2)
        se = np.sqrt((1 - p2) ** 2 * v1 + (1 - p1) ** 2 * v2) / abs(p1 - p2)
    cdf = np.clip(np.maximum.accumulate(raw), 0.0, 1.0)
    return EstimatedDistribution(design=design, method="mixture inversion", points=points,
                                 cdf=cdf, raw_cdf=raw, cdf_se=se, n=int(answered.sum()),
                                 dont_know=int(a.dont_know.sum()))


def _scrambler_range(S: Scrambler) -> tuple[float, float]:
    low, high = S.support()
    if not math.isfinite(low):
        low = S.mean - 8 * S.sd
    if not math.isfinite(high):
        high = S.mean + 8 * S.sd
    return low, high


def _binned(z: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The answers as at most BINS bin centres with their weights (the kernel is smooth on
    the scale of a bin: BINS bins over the answers' range)."""
    if z.size <= BINS:
        return z, w
    counts, edges = np.histogram(z, bins=BINS, weights=w)
    centres = (edges[:-1] + edges[1:]) / 2
    keep = counts > 0
    return centres[keep], counts[keep]


def _deconvolution(design, a, answered, S: Scrambler) -> EstimatedDistribution:
    z_all = a.values[answered]
    z, w = _binned(z_all, a.weights[answered] / a.weights[answered].sum())
    s_low, s_high = _scrambler_range(S)
    if isinstance(design, Additive):
        # cells at most a quarter of the scrambler's range wide
        size = int(min(MAX_GRID, max(GRID, math.ceil(4 * (z.max() - z.min())
                                                      / (s_high - s_low)))))
        edges = np.linspace(z.min() - s_high, z.max() - s_low, size + 1)
        grid = (edges[:-1] + edges[1:]) / 2
        K = S.density(z[:, None] - grid[None, :])
    else:
        if np.any(z_all <= 0) or s_low < 0:
            raise ParameterError(
                f"{design.describe()}: deconvolution of y * S needs positive answers and a "
                "scrambler S >= 0 (true values > 0)")
        s_low = max(s_low, S.mean * 1e-3)
        size = int(min(MAX_GRID, max(GRID, math.ceil(4 * math.log(z.max() / z.min())
                                                      / math.log(s_high / s_low)))))
        edges = np.geomspace(z.min() / s_high, z.max() / s_low, size + 1)
        grid = np.sqrt(edges[:-1] * edges[1:])
        K = S.density(z[:, None] / grid[None, :]) / grid[None, :]
    pi = np.full(grid.size, 1.0 / grid.size)
    previous = -math.inf
    iterations = 0
    while iterations < _EM_ITERATIONS:
        iterations += 1
        f = K @ pi
        if np.any(f <= 0):
            raise EstimationError("an answer is impossible under every grid value of the true "
                                  "values; check the design's scrambler")
        loglik = float(w @ np.log(f))
        pi = pi * ((w / f) @ K)
        # EMS: a smoothing step after each EM step (Silverman et al. 1990)
        pi = np.convolve(np.pad(pi, 1, mode="edge"), _SMOOTHING, mode="valid")
        pi /= pi.sum()
        if loglik - previous < _EM_TOLERANCE * max(1.0, abs(loglik)):
            break
        previous = loglik
    cdf = np.minimum(np.cumsum(pi), 1.0)
    return EstimatedDistribution(design=design, method="deconvolution", points=edges[1:],
                                 cdf=cdf, raw_cdf=cdf, cdf_se=None, n=int(z_all.size),
                                 dont_know=int(a.dont_know.sum()), iterations=iterations,
                                 lower_edge=float(edges[0]))
