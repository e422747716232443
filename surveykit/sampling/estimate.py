"""Estimates for every design under a complex sample: pseudo-maximum likelihood, design-based
variances, totals, domains, design effects and intervals.

**The estimate** (Skinner, Holt and Smith 1989, *Analysis of Complex Surveys*,
Sec. 3.4; Binder 1983): the weighted pseudo-log-likelihood

    l_w(theta) = sum_i w_i log P(r_i | g_i; theta) = sum_{g, r} W[g, r] log mu[g, r](theta)

is maximized by the same machinery as the unweighted one
(:func:`surveykit.estimation.likelihood.maximize` on the weighted counts
scaled to sum to n), so every design, the don't-know branch and nuisance
parameters (the SLD's t, an unknown innocuous prevalence) are covered, and
with equal weights the estimate is the maximum-likelihood estimate exactly
(the counts are then passed to :func:`surveykit.estimation.estimate.fit_counts`
unchanged). For a one-group yes/no design it is the Hajek mean of the unbiased
transform r = (answer - a)/b where that lies in [0, 1] (``pi_hat`` is that mean
always).

**Taylor linearization** (the sandwich): theta_hat - theta ~ B sum_i w_i u_i,
u_i = d log mu[g_i, r_i] / d theta the respondent's score (a function of its
cell only) and B the inverse of the weighted information -d2 l_w (its
pseudo-inverse on the simplex, as :func:`~surveykit.estimation.likelihood.covariance`;
the expected information where the estimate is on the boundary). So
Var(theta_hat) = B V B', V the design-based variance of the total of the
w_i u_i: :func:`~surveykit.sampling.variance.linearized_variance` of the
per-cell values W_c B u_c, as ``survey::svyrecvar`` computes it from PSU
totals, with fpc, multistage and lonely-PSU rules. For the Hajek mean of r
this is exactly ``svymean``'s variance.

**Replicates**: the estimate refitted with every replicate's weighted counts
(from the start of the full-sample estimate), and survey's ``svrVar``.

**Totals**: N_hat * share with N_hat the sum of weights (linearized with the
respondent values w_i (share + z_i), z_i = N_hat B u_i), or N * share with a
given population N (variance N^2 Var(share)). **Domains** as ``survey::svyby``:
the full design is kept and a respondent outside the domain weighs 0.

**Design effect** as ``svymean(deff = TRUE)``: the variance over the variance
of the same estimate under simple random sampling without replacement of n
from N_hat, (1 - n/N_hat) S^2 / n, with S^2 = n/(n - 1) sum_i w_i (z_i - zbar)^2 /
N_hat the weighted variance of the influence values (for a direct question,
survey's ``svyvar`` of the answer). The effective sample size is n / deff.
**Degrees of freedom**: PSUs - strata (linearization), the rank of the
replicate weights - 1 (replicates), as survey's ``degf``. **Intervals**
(:meth:`SurveyEstimate.confidence_interval`): ``logit`` (Wald on the logit
scale with t quantiles, svyciprop's "logit"), ``beta`` (Korn and Graubard
1998, svyciprop's "beta"), ``wald`` (estimate +/- t se, svyciprop's "mean").

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from surveykit.designs.base import YES, Design
from surveykit.errors import EstimationError, ParameterError
from surveykit.estimation import binomial
from surveykit.estimation.estimate import (
    ConfidenceInterval,
    _check_informative,
    _possible,
    _problem,
    _unconstrained,
    fit_counts,
    parameter_estimates,
    state_index,
)
from surveykit.estimation.likelihood import covariance, maximize
from surveykit.sampling.counts import WeightedCounts
from surveykit.sampling.design import VARIANCE_METHODS
from surveykit.sampling.replicates import (
    Replicates,
    bootstrap,
    brr,
    jackknife,
    replicate_variance,
)
from surveykit.sampling.variance import linearized_variance
from surveykit.vocabulary import canonical_spelling, response_spellings

__all__ = ["CI_METHODS", "SurveyEstimate", "survey_estimate"]

#: Interval methods under a complex sample (svyciprop's logit, beta and mean).
CI_METHODS: tuple[str, ...] = ("logit", "beta", "wald")
# Shares this close to 0 or 1 are 0 or 1 (round-off of the fit), as in estimation.estimate.
_EDGE = 1e-12
# Weighted counts proportional to the counts within this (relative) are equal weights.
_EQUAL = 1e-12


@dataclass(frozen=True, kw_only=True, eq=False)
class SurveyEstimate:
    """An estimate of the true shares under a complex sample (see the module docstring).

    ``shares`` and ``nuisance`` are the pseudo-maximum-likelihood estimates;
    ``covariance`` their design-based covariance (shares first, then nuisance
    parameters) and ``srs_covariance`` the same estimate's covariance under
    simple random sampling without replacement; ``identified`` marks the
    parameters the data identify. ``n`` counts respondents with an answer,
    ``sum_weights`` their weights (N_hat); ``population`` the N used for
    totals. ``domains`` holds one estimate per domain (svyby style).
    ``replicate_estimates`` (replicates, parameters) are the refits of a
    replicate variance.
    """

    design: Design
    counts: WeightedCounts = field(repr=False)
    variance_method: str
    domain: str | None
    shares: np.ndarray
    unconstrained: np.ndarray | None
    nuisance: np.ndarray
    covariance: np.ndarray = field(repr=False)
    srs_covariance: np.ndarray = field(repr=False)
    identified: np.ndarray = field(repr=False)
    total_variance: np.ndarray = field(repr=False)
    n: int
    sum_weights: float
    population: float
    df: int
    weighted: np.ndarray = field(repr=False)
    replicates: int = 0
    replicate_estimates: np.ndarray | None = field(default=None, repr=False)
    bootstrap_seed: int | None = None
    warnings: tuple[str, ...] = ()
    domains: tuple[SurveyEstimate, ...] = ()

    def __repr__(self) -> str:
        what = f"estimate={self.estimate!r}, se={self.se!r}" if self.design.is_binary else \
            "shares=" + repr({c: self.share(c) for c in self.design.category_labels})
        where = f", domain={self.domain!r}" if self.domain is not None else ""
        return (f"SurveyEstimate(design={self.design.describe()!r}{where}, n={self.n}, {what}, "
                f"variance_method={self.variance_method!r})")

    # -- shares ---------------------------------------------------------------------------

    def _index(self, category: str | None) -> int:
        return state_index(self.design, category)

    def share(self, category: str | None = None) -> float:
        """The estimated share of ``category`` (yes for yes/no designs)."""
        return float(self.shares[self._index(category)])

    def share_se(self, category: str | None = None) -> float | None:
        """The design-based standard error of a share (None where not identified)."""
        return self._se(self._index(category))

    def _se(self, index: int) -> float | None:
        if not self.identified[index]:
            return None
        return math.sqrt(max(0.0, float(self.covariance[index, index])))

    @property
    def estimate(self) -> float | None:
        """The share of yes (yes/no designs; None otherwise): the weighted pseudo-MLE."""
        return self.share() if self.design.is_binary else None

    @property
    def pi_hat(self) -> float | None:
        """The unconstrained root of the weighted score (may leave [0, 1]): for a one-group
        yes/no design the Hajek mean of the unbiased transform, svymean's estimate."""
        if not self.design.is_binary or self.unconstrained is None:
            return None
        return float(self.unconstrained[self.design.state_labels.index(YES)])

    @property
    def se(self) -> float | None:
        """The design-based standard error of the share of yes (yes/no designs)."""
        return self.share_se() if self.design.is_binary else None

    def deff(self, category: str | None = None) -> float | None:
        """The design effect: the design-based variance over the SRS (without replacement)
        variance of the same estimate, as svymean(deff = TRUE)."""
        index = self._index(category)
        return self._deff(index)

    def _deff(self, index: int) -> float | None:
        srs = float(self.srs_covariance[index, index])
        if not self.identified[index] or srs <= 0:
            return None
        return float(self.covariance[index, index]) / srs

    def n_effective(self, category: str | None = None) -> float | None:
        """The effective sample size n / deff."""
        deff = self.deff(category)
        return None if deff is None or deff <= 0 else self.n / deff

    def total(self, category: str | None = None) -> float:
        """The estimated number of units with ``category``: population times share."""
        return self.population * self.share(category)

    def total_se(self, category: str | None = None) -> float | None:
        index = self._index(category)
        if not self.identified[index]:
            return None
        return math.sqrt(max(0.0, float(self.total_variance[index])))

    @property
    def parameters(self) -> dict[str, dict[str, float | None]]:
        """Nuisance parameters and behavioural shares with design-based SEs."""
        return parameter_estimates(
            self.design, self.shares, self.nuisance, self.identified,
            lambda index: {"se": self._se(index), "deff": self._deff(index)})

    # -- intervals ------------------------------------------------------------------------

    def confidence_interval(self, level: float = 0.95, method: str = "logit",
                            category: str | None = None) -> ConfidenceInterval:
        """A confidence interval for a share with t quantiles on the design's df.

        ``logit``: expit(logit(p) +/- t se / (p (1 - p))), svyciprop's default
        (at p = 0 or 1 the logit interval does not exist and ``beta``'s is
        given); ``beta``: Korn and Graubard's, with the effective n
        p (1 - p) / var (t_{n-1} / t_df)^2 in Clopper and Pearson's beta
        quantiles; ``wald``: p +/- t se, clipped to [0, 1].
        """
        from scipy import stats

        level = binomial.check_level(level)
        if method not in CI_METHODS:
            raise ParameterError(f"method ({method!r}) must be one of {', '.join(CI_METHODS)}")
        index = self._index(category)
        p = float(self.shares[index])
        se = self._se(index)
        if se is None:
            return ConfidenceInterval(0.0, 1.0)
        if self.df <= 0:
            return ConfidenceInterval(0.0, 1.0)   # no degrees of freedom: no interval
        alpha = 1 - level
        t = float(stats.t.isf(alpha / 2, self.df))
        if method == "logit" and 0 < p < 1:
            half = t * se / (p * (1 - p))
            logit = math.log(p / (1 - p))
            return ConfidenceInterval(_expit(logit - half), _expit(logit + half))
        if method == "wald":
            return ConfidenceInterval(max(0.0, p - t * se), min(1.0, p + t * se))
        variance = se * se
        if variance <= 0:
            return ConfidenceInterval(p, p)
        n_eff = p * (1 - p) / variance if 0 < p < 1 else self.n
        ratio = float(stats.t.isf(alpha / 2, self.n - 1)) / t if self.n > 1 else 1.0
        n_eff *= ratio * ratio
        low = 0.0 if p <= 0 else float(stats.beta.ppf(alpha / 2, n_eff * p, n_eff * (1 - p) + 1))
        high = 1.0 if p >= 1 else float(stats.beta.ppf(1 - alpha / 2, n_eff * p + 1,
                                                         n_eff * (1 - p)))
        return ConfidenceInterval(low, high)

    # -- output ---------------------------------------------------------------------------

    def _entry(self, category: str, level: float, method: str) -> dict[str, object]:
        low, high = self.confidence_interval(level, method, category)
        return {"category": category, "estimate": self.share(category),
                "se": self.share_se(category), "ci_low": low, "ci_high": high,
                "deff": self.deff(category), "n_effective": self.n_effective(category),
                "total": self.total(category), "total_se": self.total_se(category)}

    def to_dict(self, level: float = 0.95, method: str = "logit") -> dict:
        """Plain numbers for JSON: ``estimate`` (the share of yes, also ``pi_mle``), ``se``,
        ``ci_low``, ``ci_high``, ``deff``, ``n_effective``, ``total``, ``total_se``,
        ``variance_method``, ``df``, per category ``estimates``, nuisance ``parameters``,
        and ``domains`` (one object per domain with the same keys and ``domain``)."""
        design = self.design
        entries = [self._entry(c, level, method) for c in design.category_labels]
        yes = entries[design.category_labels.index(YES)] if design.is_binary else None
        data: dict[str, object] = {}
        if self.domain is not None:
            data["domain"] = self.domain
        data.update({
            "estimate": yes["estimate"] if yes else None,
            "pi_mle": yes["estimate"] if yes else None,
            "pi_hat": self.pi_hat,
            "se": yes["se"] if yes else None,
            "ci_low": yes["ci_low"] if yes else None,
            "ci_high": yes["ci_high"] if yes else None,
            "ci_level": level,
            "ci_method": method,
            "deff": yes["deff"] if yes else None,
            "n_effective": yes["n_effective"] if yes else None,
            "total": yes["total"] if yes else None,
            "total_se": yes["total_se"] if yes else None,
            "variance_method": self.variance_method,
            "df": self.df,
            "n": self.n,
            "sum_weights": self.sum_weights,
            "population": self.population,
            "estimates": entries,
            "parameters": self.parameters,
            "design": design.spec(),
            "warnings": list(self.warnings),
        })
        if self.replicates:
            data["replicates"] = self.replicates
        if self.bootstrap_seed is not None:
            data["bootstrap_seed"] = self.bootstrap_seed
        if self.domain is None:
            data["sampling"] = self.counts.sampling.to_dict()
            data["strata"] = self.counts.stratum_count
            data["psus"] = self.counts.psu_count
            if self.domains:
                data["domains"] = [d.to_dict(level, method) for d in self.domains]
        return data


def _expit(x: float) -> float:
    return 1 / (1 + math.exp(-x)) if x >= 0 else math.exp(x) / (1 + math.exp(x))


# -- the computation ------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _Aligned:
    """The counts' cells in the design's order: group and response per cell (-1: no answer)."""

    group: np.ndarray
    response: np.ndarray


def _align(design: Design, counts: WeightedCounts) -> _Aligned:
    spellings = response_spellings(design.response_labels)
    response_map = np.empty(len(counts.responses), dtype=np.intp)
    for k, label in enumerate(counts.responses):
        response = spellings.get(canonical_spelling(label))
        if response is None:
            raise ParameterError(f"response {label!r} is not an answer of design "
                                 f"{design.model!r}; its answers are "
                                 f"{', '.join(design.response_labels)}")
        response_map[k] = design.response_labels.index(response)
    group_map = np.empty(len(counts.groups), dtype=np.intp)
    for k, label in enumerate(counts.groups):
        if label == "direct":
            raise ParameterError("respondents asked directly (group 0) are not supported in "
                                 "estimates under a sampling design yet; leave them out")
        group_map[k] = design.group_index(label) if len(design.group_names) > 1 or \
            label != "1" else 0
    response = np.where(counts.response >= 0, response_map[np.maximum(counts.response, 0)], -1)
    return _Aligned(group=group_map[counts.group], response=response)


def _cell_index(design: Design, aligned: _Aligned, mask: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, int, int]:
    """The cells that count (in ``mask``, answered) and each one's flat (group, response)
    index; with the table's numbers of groups G and responses R."""
    G, R = len(design.group_names), len(design.response_labels)
    use = mask & (aligned.response >= 0)
    return use, aligned.group[use] * R + aligned.response[use], G, R


def _table(design: Design, aligned: _Aligned, mask: np.ndarray, values: np.ndarray
           ) -> np.ndarray:
    use, index, G, R = _cell_index(design, aligned, mask)
    return np.bincount(index, weights=values[use], minlength=G * R).reshape(G, R)


def _replicate_tables(design: Design, aligned: _Aligned, mask: np.ndarray,
                      replicate_weights: np.ndarray) -> np.ndarray:
    """Every replicate's (groups, responses) sums of weights in one pass over the cells:
    (replicates, groups, responses), each replicate's table :func:`_table` of its column
    (the same additions in the same order: ``np.add.at`` adds row by row, as
    ``np.bincount`` does)."""
    use, index, G, R = _cell_index(design, aligned, mask)
    sums = np.zeros((G * R, replicate_weights.shape[1]))
    np.add.at(sums, index, replicate_weights[use])
    return np.ascontiguousarray(sums.T).reshape(-1, G, R)


# A closed-form share this far inside (0, 1) is the pseudo-MLE; nearer the edge the Newton
# search decides (it puts an estimate within _EDGE of a bound on the bound).
_INTERIOR = 1e-9


def _closed_form(design: Design, weighted: np.ndarray) -> np.ndarray | None:
    """The weighted pseudo-MLE of a one-group yes/no design in closed form, where it lies
    inside the parameter space; None elsewhere (other designs, or an estimate at or near
    0 or 1, which the Newton search finds).

    The pseudo-likelihood W0 log(s theta) + W1 log(s (1 - theta)) + W_dk log(1 - s),
    theta = P(r0 | answered) affine in pi (:class:`~surveykit.estimation.binomial.BinomialMap`),
    is largest at theta = W0 / (W0 + W1) (the weighted share of the first answer among the
    answers), so pi = (s theta - P(r0 | no)) / (P(r0 | yes) - P(r0 | no)) where that is in
    (0, 1): the Hajek mean of the unbiased transform (Skinner, Holt and Smith 1989,
    Sec. 3.4; Lumley 2010, Sec. 2.2). :func:`_fit` (the Newton search) is its oracle.

    >>> from surveykit.designs import Warner
    >>> _closed_form(Warner(p=0.7), np.array([[25.0, 15.0, 0.0]])).round(12).tolist()
    [0.8125, 0.1875]
    >>> _closed_form(Warner(p=0.7), np.array([[30.0, 10.0, 0.0]])) is None  # pi_hat 1.125
    True
    """
    mapping = binomial.binomial_map(design)
    if mapping is None:
        return None
    answered = float(weighted[0, 0] + weighted[0, 1])
    if not answered > 0:
        return None
    pi = float(mapping.to_pi(float(weighted[0, 0]) / answered, clip=False))
    if not _INTERIOR < pi < 1 - _INTERIOR:
        return None
    yes = design.state_labels.index(YES)
    shares = np.empty(2)
    shares[yes], shares[1 - yes] = pi, 1.0 - pi
    return shares


def _replicate_fit(design: Design, weighted: np.ndarray, counted: np.ndarray,
                   start: np.ndarray) -> np.ndarray:
    """A replicate's estimate: in closed form where the design has one and it is interior
    (:func:`_closed_form`), else the weighted pseudo-MLE from the full-sample estimate."""
    shares = _closed_form(design, weighted)
    if shares is not None:
        return shares
    return _fit(design, weighted, counted, start=start.copy()).x


@dataclass(frozen=True, eq=False)
class _Fit:
    x: np.ndarray
    unconstrained: np.ndarray | None
    at_bound: bool
    used: np.ndarray
    warnings: tuple[str, ...]


def _fit(design: Design, weighted: np.ndarray, counted: np.ndarray,
         start: np.ndarray | None = None) -> _Fit:
    """The weighted pseudo-MLE from (groups, responses) sums of weights and counts."""
    structure = design.structure
    possible = _possible(structure)
    warnings: list[str] = []
    impossible = (counted > 0) & ~possible
    for g, r in zip(*np.nonzero(impossible), strict=True):
        label = structure.responses[r]
        where = f" in group {structure.groups[g]}" if len(structure.groups) > 1 else ""
        if label != "dont_know":
            raise EstimationError(f"{counted[g, r]} answer(s) {label!r}{where}, which design "
                                  f"{design.model!r} never gives; check the design's "
                                  "parameters or the answers")
        warnings.append(f"{counted[g, r]} \"don't know\" answer(s){where} although the design "
                        "has no don't-know branch: they are left out of the estimate")
    used = np.where(possible, weighted, 0.0)
    used_counts = np.where(possible, counted, 0)
    if start is None and _proportional(used, used_counts):
        # equal weights: the maximum-likelihood estimate, exactly as without a design
        estimate = fit_counts(design, used_counts)
        x = np.concatenate([estimate.shares, estimate.nuisance])
        unconstrained = None if estimate.unconstrained is None else \
            np.array(estimate.unconstrained)
    else:
        total = used.sum()
        if total <= 0:
            raise EstimationError("no answers with positive weight: the share cannot be "
                                  "estimated")
        pseudo = used * (used_counts.sum() / total) if used_counts.sum() > 0 else used
        if start is None:
            _check_informative(design, pseudo)
        problem = _problem(structure, pseudo)
        best = maximize(problem, start=start)
        if start is not None and (not best.converged or not math.isfinite(best.loglik)):
            best = maximize(problem)
        if not math.isfinite(best.loglik):
            raise EstimationError("the weighted likelihood is zero everywhere: some answers "
                                  "are impossible under the design")
        if not best.converged:
            warnings.append("the pseudo-maximum-likelihood search did not converge")
        pi = np.array(best.pi)
        pi[np.abs(pi) <= _EDGE] = 0.0
        pi[np.abs(pi - 1) <= _EDGE] = 1.0
        x = np.concatenate([pi, best.eta])
        at_bound = _at_bound(design, x)
        unconstrained = None
        if start is None:
            unconstrained = _unconstrained(design, problem, best, pseudo, at_bound)
    return _Fit(x=x, unconstrained=unconstrained, at_bound=_at_bound(design, x),
                used=used, warnings=tuple(warnings))


def _proportional(weighted: np.ndarray, counted: np.ndarray) -> bool:
    total, n = weighted.sum(), counted.sum()
    if n <= 0 or total <= 0:
        return False
    return bool(np.all(np.abs(weighted - counted * (total / n)) <= _EQUAL * total))


def _at_bound(design: Design, x: np.ndarray) -> bool:
    k = len(design.state_labels)
    return bool(np.any(x[:k] <= 0)) or any(
        v <= p.low or v >= p.high for v, p in zip(x[k:], design.nuisance, strict=True))


def survey_estimate(design: Design, counts: WeightedCounts, *, variance: str = "linearization",
                    replicates: int = 500, rng: np.random.Generator | int | None = None,
                    rho: float = 0.0, population: float | None = None) -> SurveyEstimate:
    """The weighted pseudo-MLE of ``design``'s shares from ``counts``, with design-based
    variances, totals, design effects and, when the counts have domains, one estimate per
    domain.

    ``variance`` is one of :data:`~surveykit.sampling.design.VARIANCE_METHODS`:
    ``linearization`` (default), ``jackknife`` (JK1 unstratified, JKn
    stratified), ``brr`` (Fay's with ``rho`` > 0), ``bootstrap`` (``replicates``
    replicates drawn with ``rng``, a Generator or a seed), ``replicates`` (the
    producer's replicate weights in the counts). ``population`` (default the
    sampling design's) is the N for totals; without it totals use the sum of
    the weights.

    >>> from surveykit.designs import Warner
    >>> from surveykit.sampling.design import SamplingDesign
    >>> counts = WeightedCounts.from_table(
    ...     {"stratum": ["a", "a", "a", "a", "b", "b", "b", "b"], "psu": [1, 1, 2, 2, 3, 3, 4, 4],
    ...      "response": ["yes", "no"] * 4, "weight": [30.0, 10, 20, 20, 5, 15, 10, 10],
    ...      "n": [3, 1, 2, 2, 1, 3, 2, 2]},
    ...     SamplingDesign(weight="w", strata="stratum", clusters=("psu",)))
    >>> e = survey_estimate(Warner(p=0.7), counts)
    >>> round(e.estimate, 4), round(e.se, 4), e.df
    (0.6042, 0.2329, 2)
    """
    if variance not in VARIANCE_METHODS:
        raise ParameterError(f"variance ({variance!r}) must be one of "
                             f"{', '.join(VARIANCE_METHODS)}")
    if not isinstance(design, Design):
        raise ParameterError(f"design ({design!r}) must be a design")
    aligned = _align(design, counts)
    population = counts.sampling.population if population is None else population
    replicate_set: Replicates | None = None
    method = variance
    replicate_weights = None
    scale = rscales = None
    mse = False
    seed = None
    if variance == "jackknife":
        replicate_set = jackknife(counts)
    elif variance == "brr":
        replicate_set = brr(counts, rho)
    elif variance == "bootstrap":
        replicate_set = bootstrap(counts, replicates, rng)
        seed = replicate_set.seed
    elif variance == "replicates":
        spec = counts.sampling.replicate_weights
        if spec is None or counts.replicates is None:
            raise ParameterError("variance 'replicates' needs the producer's replicate weights: "
                                 "declare replicate_weights and replicate_type")
        replicate_weights = counts.replicates
        scale, rscales = spec.factors(replicate_weights.shape[1])
        rscales = np.asarray(rscales)
        mse = spec.mse
        method = f"replicates ({spec.type})"
    if replicate_set is not None:
        replicate_weights = replicate_set.cell_weights(counts)
        scale, rscales, mse = replicate_set.scale, replicate_set.rscales, replicate_set.mse
        method = replicate_set.type if variance != "brr" else replicate_set.type
    if replicate_weights is not None:
        df = counts.replicate_degrees_of_freedom if replicate_set is None \
            else replicate_set.degrees_of_freedom
    else:
        df = counts.degrees_of_freedom
    context = _Context(design=design, counts=counts, aligned=aligned, method=method,
                       replicate_weights=replicate_weights, scale=scale, rscales=rscales,
                       mse=mse, df=df, seed=seed)
    whole = context.analyse(np.ones(counts.weight.size, dtype=bool), None, population)
    if counts.domains is None:
        return whole
    domains = tuple(context.analyse(counts.domain == d, label, None)
                    for d, label in enumerate(counts.domains))
    return SurveyEstimate(**{**whole.__dict__, "domains": domains})


@dataclass(frozen=True, eq=False)
class _Context:
    design: Design
    counts: WeightedCounts
    aligned: _Aligned
    method: str
    replicate_weights: np.ndarray | None
    scale: float | None
    rscales: np.ndarray | None
    mse: bool
    df: int
    seed: int | None

    def analyse(self, mask: np.ndarray, domain: str | None, population: float | None
                ) -> SurveyEstimate:
        design, counts, aligned = self.design, self.counts, self.aligned
        structure = design.structure
        weighted = _table(design, aligned, mask, counts.weight)
        counted = np.rint(_table(design, aligned, mask, counts.count.astype(float))
                          ).astype(np.int64)
        where = f" in domain {domain!r}" if domain is not None else ""
        if counted.sum() == 0:
            raise EstimationError(f"no answers{where}: nothing to estimate")
        fit = _fit(design, weighted, counted)
        x = fit.x
        k = len(structure.states)
        problem = _problem(structure, fit.used)
        bread, identified = covariance(problem, x, expected=fit.at_bound)
        scores = problem.cell_scores(x)                       # (groups, responses, size)
        answered = mask & (aligned.response >= 0)
        cell_scores = np.zeros((counts.weight.size, x.size))
        cell_scores[answered] = scores[aligned.group[answered], aligned.response[answered]]
        influence = cell_scores @ bread                       # B u per cell (bread symmetric)
        n = int(counted.sum())
        sum_weights = float(weighted.sum())
        values = counts.weight[:, None] * influence
        warnings = list(fit.warnings)
        if fit.at_bound:
            warnings.append("the estimate is on the boundary of the parameter space: the "
                            "design-based standard errors use the expected information there "
                            "and are approximate")
        N = float(population) if population is not None else sum_weights
        share_values = None
        if population is None:
            # the total N_hat * share: respondent values w_i (share + z_i), z_i = N_hat B u_i
            share_values = counts.weight[:, None] * np.where(
                answered[:, None], x[None, :k] + sum_weights * influence[:, :k], 0.0)
        thetas = None
        if self.replicate_weights is None:
            squares = None
            if counts.units is None:
                squares = counts.weight_squares[:, None, None] * np.einsum(
                    "ci,cj->cij", influence, influence)
            cov = linearized_variance(counts, values, x_squares=squares)
            if share_values is None:
                total_variance = N * N * np.diag(cov)[:k]
            else:
                total_squares = None
                if counts.units is None:
                    per = share_values / counts.weight[:, None]
                    total_squares = counts.weight_squares[:, None, None] * np.einsum(
                        "ci,cj->cij", per, per)
                total_variance = np.diag(linearized_variance(counts, share_values,
                                                             x_squares=total_squares))
        else:
            tables = _replicate_tables(design, aligned, mask, self.replicate_weights)
            thetas = np.array([_replicate_fit(design, w_r, counted, x) for w_r in tables])
            totals = [(float(w_r.sum()) if population is None else N) * theta[:k]
                      for w_r, theta in zip(tables, thetas, strict=True)]
            cov = replicate_variance(thetas, x, self.scale, self.rscales, self.mse)
            total_variance = np.diag(replicate_variance(np.asarray(totals), N * x[:k],
                                                        self.scale, self.rscales, self.mse))
        cov = np.where(np.outer(identified, identified), cov, np.nan)
        srs = _srs_covariance(influence, counts.weight, answered, n, sum_weights)
        return SurveyEstimate(
            design=design, counts=counts, variance_method=self.method, domain=domain,
            shares=_readonly(x[:k]), nuisance=_readonly(x[k:]),
            unconstrained=None if fit.unconstrained is None else _readonly(fit.unconstrained),
            covariance=_readonly(cov), srs_covariance=_readonly(srs),
            identified=_readonly(identified), total_variance=_readonly(total_variance),
            n=n, sum_weights=sum_weights, population=N, df=self.df,
            weighted=_readonly(weighted),
            replicates=0 if self.replicate_weights is None else
            int(self.replicate_weights.shape[1]),
            replicate_estimates=None if thetas is None else _readonly(thetas),
            bootstrap_seed=self.seed, warnings=tuple(warnings))


def _srs_covariance(influence: np.ndarray, weight: np.ndarray, answered: np.ndarray, n: int,
                    sum_weights: float) -> np.ndarray:
    """(1 - n/N) S^2 / n with S^2 = n/(n-1) sum w (z - zbar)(z - zbar)' / N, z = N B u."""
    size = influence.shape[1]
    if n < 2 or sum_weights <= n:
        return np.zeros((size, size))
    w = weight[answered]
    z = sum_weights * influence[answered]
    mean = (w @ z) / sum_weights
    centred = z - mean
    s2 = (centred * w[:, None]).T @ centred / sum_weights * n / (n - 1)
    return s2 / n * (sum_weights - n) / sum_weights


def _readonly(array: np.ndarray) -> np.ndarray:
    out = np.array(array, dtype=float, copy=True)
    out.setflags(write=False)
    return out
