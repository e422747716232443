"""Maximum likelihood for the mixture designs: RRreg's ``mix_norm``, ``mix_exp`` and
``mix_unknown``, with a parametric model of the true values.

In a mixture design an answer is the true value y with probability p (p_g in
group g), otherwise a draw from a known density g (``mix_norm``: normal,
``mix_exp``: exponential) or from the unknown distribution of an unrelated
question (``mix_unknown``). With a parametric family f_theta for y (normal or
exponential) the answers' log-likelihood is

    l(theta) = sum_i log(p f_theta(z_i) + (1 - p) g(z_i))

(Greenberg et al. 1971; RRreg has no likelihood for these designs, its
``RRuni`` gives the moment estimator). :func:`fit_mixture` maximizes it by EM
(Dempster, Laird and Rubin 1977): the E-step's weights tau_i = p f(z_i) /
(p f(z_i) + (1 - p) g(z_i)) are each answer's posterior probability of being
truthful, the M-step a weighted fit of f; then Newton steps on the score
(Fisher's identity: the score is sum_i tau_i d log f(z_i)) with a Hessian by
central differences of the score, whose inverse at the maximum gives the
standard errors. ``estimate_p = True`` also estimates the share answering
truthfully (one-group designs; it is identified by the parametric family, not
by the design). With ``mix_unknown`` the unrelated answers are normal too.

The likelihood needs the answers themselves, not their counts. A normal
mixture's likelihood grows without bound as sigma shrinks onto one answer;
the fit is the interior maximum EM reaches from the moment estimates, as
every mixture fit's.

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from surveykit.designs.quantitative import MixExp, MixNorm, MixUnknown, QuantitativeDesign
from surveykit.errors import EstimationError, ParameterError
from surveykit.estimation.binomial import check_level, z_value
from surveykit.estimation.estimate import ConfidenceInterval
from surveykit.estimation.quantitative import estimate_mean, numeric_answers

__all__ = ["FAMILIES", "MixtureFit", "fit_mixture"]

#: Parametric families of the true values.
FAMILIES = ("normal", "exponential")
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
# Newton's method stops when a step changes no parameter by more than this (relative).
_STEP_TOLERANCE = 1e-12


def _normal_log(z: np.ndarray, mu: float, sigma: float) -> np.ndarray:
    return -_LOG_SQRT_2PI - math.log(sigma) - 0.5 * ((z - mu) / sigma) ** 2


def _normal_score(z: np.ndarray, mu: float, sigma: float) -> np.ndarray:
    """d log f / d(mu, sigma), (2, n)."""
    t = (z - mu) / sigma
    return np.vstack([t / sigma, (t ** 2 - 1) / sigma])


def _exponential_log(z: np.ndarray, mu: float) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.where(z >= 0, -math.log(mu) - np.maximum(z, 0) / mu, -np.inf)


def _exponential_score(z: np.ndarray, mu: float) -> np.ndarray:
    return (np.maximum(z, 0) / mu ** 2 - 1 / mu)[None, :]


@dataclass(frozen=True)
class _Model:
    """The log-likelihood of one design and family: parameter names, bounds, functions."""

    names: tuple[str, ...]
    z: np.ndarray
    group: np.ndarray
    p: np.ndarray                  # per answer: the design's truthful probability
    family: str
    mask: tuple | None             # ("normal", mu, sigma) / ("exponential", mu) / None: unknown
    estimate_p: bool

    def _split(self, theta: np.ndarray):
        k = 1 if self.family == "exponential" else 2
        y = theta[:k]
        rest = theta[k:]
        x = None
        if self.mask is None:
            x, rest = rest[:2], rest[2:]
        p = np.full(self.z.size, rest[0]) if self.estimate_p else self.p
        return y, x, p

    def _logs(self, theta):
        y, x, p = self._split(theta)
        log_f = _normal_log(self.z, *y) if self.family == "normal" else \
            _exponential_log(self.z, *y)
        if self.mask is None:
            log_g = _normal_log(self.z, *x)
        elif self.mask[0] == "normal":
            log_g = _normal_log(self.z, self.mask[1], self.mask[2])
        else:
            log_g = _exponential_log(self.z, self.mask[1])
        with np.errstate(divide="ignore"):
            a = np.log(p) + log_f
            b = np.log1p(-p) + log_g
        return a, b, p

    def loglik(self, theta: np.ndarray) -> float:
        if not self.inside(theta):
            return -math.inf
        a, b, _ = self._logs(theta)
        return float(np.sum(np.logaddexp(a, b)))

    def weights(self, theta: np.ndarray) -> np.ndarray:
        """Posterior probability that each answer is the true value."""
        a, b, _ = self._logs(theta)
        return np.exp(a - np.logaddexp(a, b))

    def score(self, theta: np.ndarray) -> np.ndarray:
        tau = self.weights(theta)
        y, x, p = self._split(theta)
        parts = [tau @ (_normal_score(self.z, *y) if self.family == "normal"
                        else _exponential_score(self.z, *y)).T]
        if self.mask is None:
            parts.append((1 - tau) @ _normal_score(self.z, *x).T)
        if self.estimate_p:
            parts.append(np.array([np.sum(tau / p - (1 - tau) / (1 - p))]))
        return np.concatenate(parts)

    def em_step(self, theta: np.ndarray) -> np.ndarray:
        tau = self.weights(theta)
        out = []
        weight = tau.sum()
        mu = float(tau @ self.z / weight)
        if self.family == "normal":
            out += [mu, math.sqrt(float(tau @ (self.z - mu) ** 2 / weight))]
        else:
            out.append(mu)
        if self.mask is None:
            rest = 1 - tau
            mx = float(rest @ self.z / rest.sum())
            out += [mx, math.sqrt(float(rest @ (self.z - mx) ** 2 / rest.sum()))]
        if self.estimate_p:
            out.append(float(tau.mean()))
        return np.array(out)

    def inside(self, theta: np.ndarray) -> bool:
        if not np.all(np.isfinite(theta)):
            return False
        for name, value in zip(self.names, theta, strict=True):
            if name.startswith("sigma") and value <= 0:
                return False
            if name == "mu" and self.family == "exponential" and value <= 0:
                return False
            if name == "p" and not 0 < value < 1:
                return False
        return True

    def hessian(self, theta: np.ndarray) -> np.ndarray:
        """Central differences of the analytic score."""
        k = theta.size
        H = np.empty((k, k))
        for j in range(k):
            h = 1e-5 * max(1.0, abs(theta[j]))
            if self.names[j] == "p":
                h = min(h, 0.5 * theta[j], 0.5 * (1 - theta[j]))
            elif self.names[j].startswith("sigma") or (self.family == "exponential"
                                                       and self.names[j] == "mu"):
                h = min(h, 0.5 * theta[j])
            step = np.zeros(k)
            step[j] = h
            H[:, j] = (self.score(theta + step) - self.score(theta - step)) / (2 * h)
        return (H + H.T) / 2


@dataclass(frozen=True, kw_only=True)
class MixtureFit:
    """A maximum-likelihood fit of a mixture design.

    ``estimates`` and ``se`` by parameter name: ``mu`` and ``sigma`` (normal)
    or ``mu`` (exponential) of the true values; ``mu_unrelated`` and
    ``sigma_unrelated`` (``mix_unknown``); ``p`` when estimated.
    """

    design: QuantitativeDesign
    family: str
    names: tuple[str, ...]
    theta: np.ndarray = field(repr=False)
    covariance: np.ndarray = field(repr=False)
    loglik: float
    n: int
    dont_know: int
    iterations: int
    converged: bool
    model: _Model = field(repr=False)

    @property
    def estimates(self) -> dict[str, float]:
        return {name: float(v) for name, v in zip(self.names, self.theta, strict=True)}

    @property
    def se(self) -> dict[str, float]:
        return {name: math.sqrt(max(float(self.covariance[i, i]), 0.0))
                for i, name in enumerate(self.names)}

    @property
    def mean(self) -> float:
        """E[y] of the fitted distribution (mu for both families)."""
        return float(self.theta[0])

    @property
    def mean_se(self) -> float:
        return self.se["mu"]

    def confidence_interval(self, level: float = 0.95) -> ConfidenceInterval:
        """The Wald interval of the mean."""
        z = z_value(check_level(level))
        return ConfidenceInterval(self.mean - z * self.mean_se, self.mean + z * self.mean_se)

    def quantile(self, q: float) -> tuple[float, float]:
        """The q-quantile of the fitted distribution of the true values and its delta-method
        standard error."""
        if isinstance(q, bool) or not isinstance(q, int | float) or not 0 < q < 1:
            raise ParameterError(f"q ({q!r}) must be a probability strictly between 0 and 1")
        from scipy import stats

        if self.family == "normal":
            zq = float(stats.norm.ppf(q))
            gradient = np.zeros(self.theta.size)
            gradient[:2] = [1.0, zq]
            value = self.theta[0] + zq * self.theta[1]
        else:
            factor = -math.log1p(-q)
            gradient = np.zeros(self.theta.size)
            gradient[0] = factor
            value = self.theta[0] * factor
        return float(value), math.sqrt(max(float(gradient @ self.covariance @ gradient), 0.0))

    def truthful_probability(self) -> np.ndarray:
        """Each answer's posterior probability of being the respondent's true value."""
        return self.model.weights(self.theta)

    def to_dict(self, level: float = 0.95) -> dict[str, object]:
        low, high = self.confidence_interval(level)
        return {"design": self.design.spec(), "family": self.family, "n": self.n,
                "dont_know": self.dont_know,
                "parameters": {name: {"estimate": self.estimates[name], "se": self.se[name]}
                               for name in self.names},
                "mean": self.mean, "se": self.mean_se, "ci_low": low, "ci_high": high,
                "loglik": self.loglik, "iterations": self.iterations,
                "converged": self.converged}


def fit_mixture(design: QuantitativeDesign, answers: Sequence[object] | np.ndarray, *,
                groups: Sequence[object] | np.ndarray | None = None,
                dont_know: Sequence[bool] | np.ndarray | None = None,
                family: str | None = None, estimate_p: bool = False,
                max_iterations: int = 20_000) -> MixtureFit:
    """Maximum likelihood of a mixture design with a parametric family for the true values
    (module docstring). ``family``: ``"normal"`` (default for ``mix_norm`` and
    ``mix_unknown``) or ``"exponential"`` (default for ``mix_exp``).

    >>> from surveykit.designs.quantitative import MixNorm
    >>> rng = np.random.default_rng(2)
    >>> design = MixNorm(p=0.7, mu=40, sigma=15)
    >>> z = design.simulate(rng.normal(50, 10, 3000), rng=rng).answers
    >>> fit = fit_mixture(design, z)
    >>> round(fit.estimates["mu"]), round(fit.estimates["sigma"])
    (50, 10)
    """
    if not isinstance(design, MixNorm | MixExp | MixUnknown):
        raise ParameterError(
            f"design {getattr(design, 'model', design)!r} has no likelihood here: maximum "
            "likelihood is for the mixture designs mix_norm, mix_exp and mix_unknown")
    family = family or ("exponential" if isinstance(design, MixExp) else "normal")
    if family not in FAMILIES:
        raise ParameterError(f"family ({family!r}) must be one of {', '.join(FAMILIES)}")
    if estimate_p and isinstance(design, MixUnknown):
        raise ParameterError("estimate_p is for one-group designs: with mix_unknown the two "
                             "groups' p are the design's")
    a = numeric_answers(design, answers, groups=groups, dont_know=dont_know)
    z = a.values[a.answered]
    group = a.group[a.answered]
    if z.size < 5:
        raise EstimationError(f"{z.size} numeric answers: a likelihood fit needs at least 5")
    p_design = np.asarray(design.p if isinstance(design, MixUnknown) else [design.p])
    p = p_design[group] if isinstance(design, MixUnknown) else np.full(z.size, design.p)
    if isinstance(design, MixNorm):
        mask: tuple | None = ("normal", design.mu, design.sigma)
    elif isinstance(design, MixExp):
        mask = ("exponential", design.mu)
    else:
        mask = None
    names = ("mu", "sigma") if family == "normal" else ("mu",)
    if mask is None:
        names += ("mu_unrelated", "sigma_unrelated")
    if estimate_p:
        names += ("p",)
    model = _Model(names=names, z=z, group=group, p=p, family=family, mask=mask,
                   estimate_p=estimate_p)
    theta = _start(design, a, model)
    if not model.inside(theta) or not math.isfinite(model.loglik(theta)):
        raise EstimationError("the answers give no starting point for the likelihood (e.g. "
                              "negative answers with an exponential family)")
    theta, iterations = _em(model, theta, max_iterations)
    theta, converged = _newton(model, theta)
    H = model.hessian(theta)
    try:
        covariance = np.linalg.inv(-H)
    except np.linalg.LinAlgError:
        covariance = np.full(H.shape, np.nan)
    if not np.all(np.linalg.eigvalsh(-H) > 0):
        converged = False
    return MixtureFit(design=design, family=family, names=names, theta=theta,
                      covariance=covariance, loglik=model.loglik(theta), n=int(z.size),
                      dont_know=int(a.dont_know.sum()), iterations=iterations,
                      converged=converged, model=model)


def _start(design: QuantitativeDesign, a, model: _Model) -> np.ndarray:
    """Moment estimates: the design's mean, and a variance from E[Z^2]."""
    counts = a.counts()
    moment = estimate_mean(design, counts)
    mu = moment.mean
    out: list[float] = []
    if isinstance(design, MixUnknown):
        # E[Z^2 | g] = p_g E[Y^2] + (1 - p_g) E[X^2]: solve the two groups
        second = [counts.get(g).sum_squares / counts.get(g).n for g in design.group_names]
        P = np.array([[p, 1 - p] for p in design.p])
        ey2, ex2 = np.linalg.solve(P, np.array(second))
        mx = float(moment.unrelated_mean)
        var_y = ey2 - mu ** 2
        var_x = ex2 - mx ** 2
        spread = counts.total.variance
        out = [mu, math.sqrt(var_y if var_y > 0 else spread)]
        out += [mx, math.sqrt(var_x if var_x > 0 else spread)]
    else:
        s = counts.total
        p = design.p
        mask_mean = design.mu
        mask_var = design.sigma ** 2 if isinstance(design, MixNorm) else design.mu ** 2
        var_y = (s.variance - (1 - p) * mask_var - p * (1 - p) * (mu - mask_mean) ** 2) / p
        if model.family == "normal":
            out = [mu, math.sqrt(var_y if var_y > 0 else s.variance)]
        else:
            out = [mu if mu > 0 else max(s.mean, 1e-6)]
        if model.estimate_p:
            out.append(min(max(design.p, 0.05), 0.95))
    return np.array(out)


def _em(model: _Model, theta: np.ndarray, max_iterations: int) -> tuple[np.ndarray, int]:
    value = model.loglik(theta)
    for iteration in range(1, max_iterations + 1):
        new = model.em_step(theta)
        new_value = model.loglik(new)
        if not math.isfinite(new_value):
            return theta, iteration
        theta, change = new, new_value - value
        value = new_value
        if abs(change) <= 1e-10 * max(1.0, abs(value)):
            return theta, iteration
    return theta, max_iterations


def _newton(model: _Model, theta: np.ndarray, steps: int = 50) -> tuple[np.ndarray, bool]:
    """Polish EM's estimate with Newton steps (halved until the likelihood does not fall)."""
    value = model.loglik(theta)
    for _ in range(steps):
        H = model.hessian(theta)
        g = model.score(theta)
        try:
            step = np.linalg.solve(-H, g)
        except np.linalg.LinAlgError:
            return theta, False
        for _ in range(40):
            candidate = theta + step
            if model.inside(candidate) and model.loglik(candidate) >= value - 1e-12 * abs(value):
                break
            step = step / 2
        else:
            return theta, bool(np.max(np.abs(g)) < 1e-6 * max(1.0, abs(value)))
        theta = candidate
        value = model.loglik(theta)
        if np.all(np.abs(step) <= _STEP_TOLERANCE * np.maximum(1.0, np.abs(theta))):
            return theta, True
    return theta, False
