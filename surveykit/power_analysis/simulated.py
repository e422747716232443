"""Power by simulation, where no closed form exists: regressions and correlations (as RRreg's
``powerplot`` and ``RRsimu``), and the prevalence test as a check of the analytic power.

Each replicate draws a survey of n respondents with a seeded numpy Generator:
true states, groups (n times the allocation, rounded), and each respondent's
answer from their column of the design's matrix, the draw the randomizer
makes with a secure source in the field. Optional non-compliance follows
RRreg's ``RRgen``: a carrier (non-carrier) follows the instructions with
probability ``compliance[0]`` (``[1]``), and otherwise answers "yes" with
probability ``noncompliant_yes[0]`` (``[1]``), RRreg's ``complyRates`` and
``sysBias`` (default 0: those who do not comply say "no").

Models (``model``):

* ``"prevalence"``: the test of pi against ``null`` that the analytic power
  describes (:mod:`surveykit.power_analysis.analytic`): reject when the
  unconstrained estimate passes pi0 +- z se0. From counts, vectorized over the
  replicates for one-group yes/no designs (the estimate is Eq. 2); other
  designs fit each replicate's counts.
* ``"logistic"``: RRlog's power: a covariate x ~ N(0, 1), the true answer
  logistic in it with slope ``effect`` and average log-odds logit(pi) (RRsimu's
  ``b.log``); the Wald test of the slope of ``regress(answer ~ x)``.
* ``"linear"``: RRlin's: a covariate whose point-biserial correlation with the
  true answer is ``effect`` (RRsimu's ``cor``: N(0, 1) shifted by
  d = sqrt(r^2 / (pi (1 - pi) (1 - r^2))) for carriers); the Wald test of the
  answer's coefficient in ``regress(x ~ answer)``.
* ``"correlation"``: RRcor's: the same data, the corrected correlation
  (:func:`surveykit.estimation.correlation.correlate`); its critical value is
  the 1 - alpha quantile of |r| in as many replicates simulated with r = 0
  (RRsimu's parametric bootstrap under the null).

Every power comes with its Monte Carlo standard error sqrt(P (1 - P) / R)
over the R replicates that could be fitted (``failed`` counts the others).

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from surveykit.designs.base import NO, YES, Design
from surveykit.errors import EstimationError, ParameterError
from surveykit.estimation import binomial
from surveykit.estimation.estimate import _slopes_on_products
from surveykit.estimation.likelihood import LikelihoodProblem, maximize
from surveykit.planning import _allocation, group_sizes, nuisance_values, state_shares
from surveykit.power_analysis.analytic import ALTERNATIVES
from surveykit.power_analysis.analytic import power as analytic_power

__all__ = ["MODELS", "SimulatedPower", "simulate_power"]

#: What is simulated and tested.
MODELS: tuple[str, ...] = ("prevalence", "logistic", "linear", "correlation")


@dataclass(frozen=True, kw_only=True)
class SimulatedPower:
    """The share of ``reps`` simulated surveys in which the test rejected, with its Monte
    Carlo standard error; ``analytic`` is the closed-form power where one exists (the
    prevalence test), ``critical`` the correlation's critical |r| under the null."""

    model: str
    design: Design
    n: int
    reps: int
    alpha: float
    alternative: str
    pi: float
    null: float | None
    effect: float | None
    compliance: tuple[float, float]
    noncompliant_yes: tuple[float, float]
    power: float
    mc_se: float
    failed: int
    analytic: float | None
    critical: float | None

    def to_dict(self) -> dict[str, object]:
        return {"model": self.model, "design": self.design.spec(), "n": self.n,
                "reps": self.reps, "alpha": self.alpha, "alternative": self.alternative,
                "pi": self.pi, "null": self.null, "effect": self.effect,
                "compliance": list(self.compliance),
                "noncompliant_yes": list(self.noncompliant_yes), "power": self.power,
                "mc_se": self.mc_se, "failed": self.failed, "analytic": self.analytic,
                "critical": self.critical}


# -- drawing surveys ---------------------------------------------------------------------------


def _answer_matrix(design: Design, nuisance: Mapping[str, float],
                   compliance: tuple[float, float], noncompliant_yes: tuple[float, float]
                   ) -> np.ndarray:
    """P(response | state, group) of the simulated respondents: the design's matrix for
    those who comply, "yes" with probability noncompliant_yes otherwise (RRgen)."""
    matrix = design.matrix([nuisance[p.name] for p in design.nuisance] or None)
    if compliance == (1.0, 1.0):
        return matrix
    responses, states = design.response_labels, design.state_labels
    out = matrix.copy()
    for state, comply, yes in ((YES, compliance[0], noncompliant_yes[0]),
                               (NO, compliance[1], noncompliant_yes[1])):
        s = states.index(state)
        biased = np.zeros(len(responses))
        biased[responses.index(YES)], biased[responses.index(NO)] = yes, 1 - yes
        out[:, :, s] = comply * matrix[:, :, s] + (1 - comply) * biased
    return out


def _draw(rng: np.random.Generator, columns: np.ndarray) -> np.ndarray:
    """One response index per row of ``columns`` (rows, responses)."""
    cumulative = np.cumsum(columns, axis=1)
    u = rng.random(columns.shape[0])[:, None] * cumulative[:, -1:]
    return np.minimum((u >= cumulative).sum(axis=1), columns.shape[1] - 1)


@dataclass(frozen=True)
class _Survey:
    """What one simulated survey needs: sizes per group, the answer matrix, the design."""

    design: Design
    matrix: np.ndarray
    sizes: tuple[int, ...]

    def rows(self, rng: np.random.Generator, truth: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray]:
        """Groups (1-based, shuffled) and response labels of respondents with ``truth``."""
        groups = np.repeat(np.arange(len(self.sizes)), self.sizes)
        rng.shuffle(groups)
        yes, no = self.design.state_labels.index(YES), self.design.state_labels.index(NO)
        states = np.where(truth, yes, no)
        responses = _draw(rng, self.matrix[groups, :, states])
        return groups + 1, np.array(self.design.response_labels, dtype=object)[responses]


# -- the models ---------------------------------------------------------------------------------


def _prevalence(survey: _Survey, rng, reps: int, pi: float, null: float, alpha: float,
                alternative: str, nuisance: Mapping[str, float], allocation, progress
                ) -> tuple[np.ndarray, int, float]:
    design = survey.design
    n = sum(survey.sizes)
    reference = analytic_power(design, pi=pi, null=null, n=n, alpha=alpha,
                               alternative=alternative, nuisance=nuisance,
                               allocation=allocation)
    shares = state_shares(design, pi=pi, nuisance=nuisance)
    cells = np.clip(survey.matrix @ shares, 0, None)
    cells /= cells.sum(axis=1, keepdims=True)
    counts = np.stack([rng.multinomial(size, cells[g], size=reps)
                       for g, size in enumerate(survey.sizes)], axis=1)   # (reps, g, r)
    mapping = binomial.binomial_map(design)
    if mapping is not None:
        answered = counts[:, 0, 0] + counts[:, 0, 1]
        with np.errstate(invalid="ignore", divide="ignore"):
            estimates = mapping.to_pi(counts[:, 0, 0] / answered, clip=False)
        if progress is not None:
            progress(reps)
    else:
        estimates = _moment_estimates(design, counts)
        if estimates is None:
            estimates = _unconstrained_estimates(design, counts, shares, nuisance, progress)
        elif progress is not None:
            progress(reps)
    se_null = reference.se_null
    if alternative == "greater":
        reject = estimates > null + NormalDist().inv_cdf(1 - alpha) * se_null
    elif alternative == "less":
        reject = estimates < null - NormalDist().inv_cdf(1 - alpha) * se_null
    else:
        z = NormalDist().inv_cdf(1 - alpha / 2)
        reject = (estimates > null + z * se_null) | (estimates < null - z * se_null)
    valid = np.isfinite(estimates)
    return reject[valid], int((~valid).sum()), reference.power


def _moment_estimates(design: Design, counts: np.ndarray) -> np.ndarray | None:
    """pi_hat of every replicate at once where the design is saturated and linear in
    (pi, pi_s eta): as many free answer shares as parameters, so the unconstrained maximum
    solves "expected share = observed share" (one linear system for all replicates; RRreg's
    moment estimator). None for other designs."""
    structure = design.structure
    slopes = _slopes_on_products(structure.slopes) if structure.nuisance else structure.slopes
    if slopes is None:
        return None
    base = structure.base
    k = base.shape[2]
    answered = 1.0 - base[:, -1, 0]                  # the don't-know branch: d per group
    rows, right = [], []
    for g in range(base.shape[0]):
        for r in range(base.shape[1] - 2):           # all answers but the last, no don't know
            rows.append(np.concatenate([base[g, r, :k - 1] - base[g, r, k - 1],
                                        [slope[g, r, 0] for slope in slopes]]))
            right.append((g, r))
    matrix = np.array(rows)
    if matrix.shape[0] != matrix.shape[1] or np.linalg.matrix_rank(matrix) < matrix.shape[0]:
        return None
    given = counts[:, :, :-1].sum(axis=2)            # answers other than don't know, per group
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = np.stack([counts[:, g, r] / given[:, g] * answered[g] - base[g, r, k - 1]
                             for g, r in right], axis=1)
    theta = np.linalg.solve(matrix, observed.T).T
    yes = design.state_labels.index(YES)
    return theta[:, yes] if yes < k - 1 else 1.0 - theta[:, :k - 1].sum(axis=1)


def _unconstrained_estimates(design: Design, counts: np.ndarray, shares: np.ndarray,
                             nuisance: Mapping[str, float], progress) -> np.ndarray:
    """pi_hat of each replicate's counts: the unconstrained maximum of the likelihood (the
    estimator whose normal approximation the analytic power uses), by Newton's method from
    the true values. Where a nuisance parameter moves one state's column or all alike (the
    SLD's t, the unrelated question's innocuous share) the likelihood is concave in
    (pi, pi_s eta) and is maximized there, as the estimator does for pi_hat."""
    structure = design.structure
    eta = np.array([nuisance[p.name] for p in structure.nuisance], dtype=float)
    low = np.array([p.low for p in structure.nuisance])
    high = np.array([p.high for p in structure.nuisance])
    slopes = _slopes_on_products(structure.slopes) if structure.nuisance else None
    start = np.concatenate([shares, eta])
    if slopes is not None:
        moved = [int(np.flatnonzero(np.any(structure.slopes[j] != 0, axis=(0, 1)))[0])
                 if np.count_nonzero(np.any(structure.slopes[j] != 0, axis=(0, 1))) == 1
                 else None for j in range(len(structure.nuisance))]
        start = np.concatenate([shares, [eta[j] * (shares[s] if s is not None else 1.0)
                                         for j, s in enumerate(moved)]])
    else:
        slopes = structure.slopes
    yes = design.state_labels.index(YES)
    estimates = np.full(counts.shape[0], np.nan)
    for i, replicate in enumerate(counts):
        problem = LikelihoodProblem(structure.base, slopes, replicate, low, high)
        free = maximize(problem, constrained=False, start=start.copy(), max_iterations=50)
        cells = (structure.base + np.tensordot(free.eta, slopes, axes=1)) @ free.pi \
            if slopes.shape[0] else structure.base @ free.pi
        if free.converged and np.all(np.isfinite(free.pi)) and cells.min() >= -1e-9:
            estimates[i] = free.pi[yes]
        if progress is not None:
            progress(1)
    return estimates


def _covariate(rng, truth: np.ndarray, pi: float, rho: float) -> np.ndarray:
    """RRsimu's covariate: N(0, 1), shifted by d for carriers, point-biserial correlation
    rho with the truth when the share of carriers is pi."""
    shift = math.copysign(math.sqrt(rho**2 / (pi * (1 - pi) * (1 - rho**2))), rho) \
        if rho else 0.0
    return rng.normal(size=truth.size) + shift * truth


def _regression(survey: _Survey, rng, reps: int, pi: float, effect: float, model: str,
                alpha: float, progress) -> tuple[np.ndarray, int]:
    # lazy loaders: regressions and correlations bring pandas, which power and the other
    # simulations never load
    import pandas as pd

    from surveykit.estimation.regression import regress

    n = sum(survey.sizes)
    grouped = len(survey.sizes) > 1
    rejected, failed = [], 0
    z = NormalDist().inv_cdf(1 - alpha / 2)
    for _ in range(reps):
        if model == "logistic":
            x = rng.normal(size=n)
            truth = rng.random(n) < 1 / (1 + np.exp(-(math.log(pi / (1 - pi)) + effect * x)))
        else:
            truth = rng.random(n) < pi
            x = _covariate(rng, truth, pi, effect)
        groups, answers = survey.rows(rng, truth)
        frame = pd.DataFrame({"answer": answers, "x": x, "g": groups})
        formula, term = ("answer ~ x", "x") if model == "logistic" else ("x ~ answer", "answer")
        try:
            fit = regress(frame, formula, sensitive="answer", design=survey.design,
                          group="g" if grouped else None)
            estimate, se = float(fit.params[term]), float(fit.bse[term])
        except (EstimationError, ParameterError, KeyError, TypeError):
            failed += 1
        else:
            if fit.converged and math.isfinite(se) and se > 0:
                rejected.append(abs(estimate / se) > z)
            else:
                failed += 1
        if progress is not None:
            progress(1)
    return np.array(rejected, dtype=bool), failed


def _correlations(survey: _Survey, rng, reps: int, pi: float, rho: float, progress
                  ) -> tuple[np.ndarray, int]:
    import pandas as pd  # a lazy loader, as in _regression

    from surveykit.estimation.correlation import correlate

    n = sum(survey.sizes)
    grouped = len(survey.sizes) > 1
    out, failed = [], 0
    for _ in range(reps):
        truth = rng.random(n) < pi
        x = _covariate(rng, truth, pi, rho)
        groups, answers = survey.rows(rng, truth)
        frame = pd.DataFrame({"answer": answers, "x": x, "g": groups})
        try:
            result = correlate(frame, {"answer": survey.design}, ["x"],
                               groups={"answer": "g"} if grouped else None)
        except (EstimationError, ParameterError):
            failed += 1
        else:
            r = result.pairs[0].r
            if math.isfinite(r):
                out.append(r)
            else:
                failed += 1
        if progress is not None:
            progress(1)
    return np.array(out), failed


# -- the entry point ------------------------------------------------------------------------------


def _pair(name: str, value: object) -> tuple[float, float]:
    if isinstance(value, str) or not isinstance(value, Sequence) or len(value) != 2:
        raise ParameterError(f"{name} ({value!r}) must be two probabilities: for carriers and "
                             "for non-carriers of the trait, e.g. (0.9, 1.0)")
    out = []
    for i, v in enumerate(value, start=1):
        if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v <= 1:
            raise ParameterError(f"{name}[{i}] ({v!r}) must be a probability between 0 and 1")
        out.append(float(v))
    return out[0], out[1]


def simulate_power(design: Design, *, n: int, reps: int, rng: np.random.Generator,
                   model: str = "prevalence", pi: float, null: float | None = None,
                   effect: float | None = None, alpha: float = 0.05,
                   alternative: str = "two-sided", nuisance: Mapping[str, float] | None = None,
                   allocation: Sequence[float] | None = None,
                   compliance: Sequence[float] = (1.0, 1.0),
                   noncompliant_yes: Sequence[float] = (0.0, 0.0),
                   progress: Callable[[int], None] | None = None) -> SimulatedPower:
    """The power of a test on ``reps`` simulated surveys of ``n`` respondents (see the
    module docstring for the models); ``rng`` is a seeded numpy Generator.

    >>> from surveykit.designs import make_design
    >>> result = simulate_power(make_design("warner", p=0.8), n=500, reps=2000, pi=0.2,
    ...                         null=0.1, rng=np.random.default_rng(1))
    >>> abs(result.power - result.analytic) < 3 * result.mc_se
    True
    """
    if not isinstance(design, Design):
        raise ParameterError(f"design ({design!r}) must be a design, e.g. make_design(\"warner\", "
                             "p=0.7)")
    if model not in MODELS:
        raise ParameterError(f"model ({model!r}) must be one of {', '.join(MODELS)}")
    if not isinstance(rng, np.random.Generator):
        raise ParameterError(f"rng ({rng!r}) must be a numpy.random.Generator, e.g. "
                             "numpy.random.default_rng(seed)")
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 2:
        raise ParameterError(f"n ({n!r}) must be a whole number of respondents, at least 2")
    if isinstance(reps, bool) or not isinstance(reps, int | np.integer) or reps < 2:
        raise ParameterError(f"reps ({reps!r}) must be a whole number of surveys, at least 2")
    if not (design.is_binary and design.state_labels == design.category_labels):
        raise ParameterError(f"design {design.model!r}: simulated power takes yes/no designs "
                             "whose states are the answers")
    if isinstance(pi, bool) or not isinstance(pi, int | float) or not 0 < pi < 1:
        raise ParameterError(f"pi ({pi!r}) must be a prevalence strictly between 0 and 1")
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 < alpha < 1:
        raise ParameterError(f"alpha ({alpha!r}) must be strictly between 0 and 1")
    if alternative not in ALTERNATIVES:
        raise ParameterError(f"alternative ({alternative!r}) must be one of "
                             f"{', '.join(ALTERNATIVES)}")
    if model == "prevalence":
        null = 0.0 if null is None else null
        if effect is not None:
            raise ParameterError("effect belongs to the regression and correlation models; the "
                                 "prevalence test takes pi and null")
    else:
        if null is not None:
            raise ParameterError(f"null belongs to the prevalence test; model {model!r} tests "
                                 "an effect of 0")
        if effect is None or isinstance(effect, bool) or not isinstance(effect, int | float):
            raise ParameterError(f"model {model!r} needs effect: "
                                 + ("the slope of the log-odds per SD of the covariate"
                                    if model == "logistic" else
                                    "the correlation of the covariate with the true answer"))
        if model != "logistic" and not -1 < effect < 1:
            raise ParameterError(f"effect ({effect:g}) is a correlation: it must lie strictly "
                                 "between -1 and 1")
        if alternative != "two-sided":
            raise ParameterError(f"model {model!r} is tested two-sided")
    compliance, noncompliant_yes = (_pair("compliance", compliance),
                                    _pair("noncompliant_yes", noncompliant_yes))
    values = nuisance_values(design, dict(nuisance or {}))
    shares = _allocation(design, allocation)
    survey = _Survey(design, _answer_matrix(design, values, compliance, noncompliant_yes),
                     group_sizes(int(n), shares))
    analytic = critical = None
    if model == "prevalence":
        rejected, failed, analytic = _prevalence(survey, rng, int(reps), float(pi),
                                                 float(null), float(alpha), alternative,
                                                 values, shares, progress)
    elif model == "correlation":
        null_r, _ = _correlations(survey, rng, int(reps), float(pi), 0.0, progress)
        if null_r.size < 2:
            raise EstimationError("too few null replicates could be estimated for a critical "
                                  "value")
        critical = float(np.quantile(np.abs(null_r), 1 - alpha))
        r, failed = _correlations(survey, rng, int(reps), float(pi), float(effect), progress)
        rejected = np.abs(r) > critical
    else:
        rejected, failed = _regression(survey, rng, int(reps), float(pi), float(effect), model,
                                       float(alpha), progress)
    if rejected.size < 2:
        raise EstimationError(f"only {rejected.size} of {reps} simulated surveys could be "
                              "estimated; raise n")
    power = float(rejected.mean())
    return SimulatedPower(
        model=model, design=design, n=int(n), reps=int(reps), alpha=float(alpha),
        alternative=alternative, pi=float(pi), null=None if null is None else float(null),
        effect=None if effect is None else float(effect), compliance=compliance,
        noncompliant_yes=noncompliant_yes, power=power,
        mc_se=math.sqrt(power * (1 - power) / rejected.size), failed=failed,
        analytic=analytic, critical=critical)

