"""Seeded simulations of every preset: do estimates, standard errors and intervals hold up?

A scenario is a design, the true shares of its states, the nuisance values
and the respondents per group. :func:`run` draws ``reps`` surveys with
:func:`surveykit.simulation.simulate_counts`, fits each with the general
estimator and summarizes, per estimated quantity:

* ``bias`` of the estimate and its Monte Carlo standard error ``bias_se``
  (sd / sqrt(R)); for pi also of ``pi_hat``, the unconstrained estimate,
  which is unbiased for the designs whose moment estimator is linear in the
  answer shares, also next to 0 and 1 where pi_mle cannot be;
* ``sd``, the simulated standard deviation of the estimate, and ``se``, the
  root mean square of the reported standard errors (``se_ratio`` = se / sd);
* ``coverage`` of the 95% interval (the estimate's default method) and its
  Monte Carlo standard error.

Surveys that cannot be fitted (no informative answer at all) are counted in
``unfit`` and left out, as the estimator refuses them. ``python
tests/design_simulation.py`` runs the whole grid and prints the coverage table
that the final report and docs/designs.md quote.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field

import numpy as np

from surveykit.designs import (
    CheatingDetection,
    CheatingDetectionSymmetric,
    Crosswise,
    Custom,
    Design,
    Direct,
    ForcedResponse,
    GeneralizedRandomizedResponse,
    GeneralizedWarner,
    Kuk,
    Mangat,
    StochasticLieDetector,
    Triangular,
    UnrelatedQuestionKnown,
    UnrelatedQuestionUnknown,
    Warner,
)
from surveykit.errors import EstimationError
from surveykit.estimation.estimate import fit_counts
from surveykit.simulation import simulate_counts

LEVEL = 0.95


@dataclass(frozen=True)
class Scenario:
    """One cell of the grid: ``make(dont_know)`` builds the design."""

    name: str
    make: object
    shares: tuple[float, ...]
    n: tuple[int, ...]
    nuisance: tuple[float, ...] | None = None
    dont_know: float = 0.0

    def design(self) -> Design:
        return self.make(self.dont_know)

    @property
    def label(self) -> str:
        shares = ",".join(f"{v:g}" for v in self.shares)
        extra = f" eta={','.join(f'{v:g}' for v in self.nuisance)}" if self.nuisance else ""
        dk = f" dk={self.dont_know:g}" if self.dont_know else ""
        return f"{self.name} shares=({shares}){extra} n={'/'.join(map(str, self.n))}{dk}"


@dataclass
class Summary:
    """What :func:`run` measured for one quantity."""

    truth: float
    bias: float
    bias_se: float
    sd: float
    se: float | None
    coverage: float | None
    coverage_se: float | None
    hat_bias: float | None = None
    hat_bias_se: float | None = None
    hat_missing: int = 0
    undefined_se: int = 0

    @property
    def se_ratio(self) -> float | None:
        return None if self.se is None or self.sd == 0 else self.se / self.sd


@dataclass
class Result:
    scenario: Scenario
    reps: int
    unfit: int
    at_bound: float = 0.0
    quantities: dict[str, Summary] = field(default_factory=dict)

    @property
    def interior(self) -> bool:
        """Whether fewer than 1% of the estimates sit on the boundary of the parameter space.

        Only then is pi_mle's distribution the (nearly) normal one that a bias
        check and a standard error describe: at the boundary pi_mle is clipped
        and its standard deviation shrinks.
        """
        return self.at_bound < 0.01


def _quantities(design: Design) -> list[str]:
    """What to recover: the categories' shares (pi for yes/no designs), behavioural states
    (the CDM's gamma) and nuisance parameters."""
    if design.is_binary:
        names = ["pi"]
        if "cheater" in design.state_labels:
            names += ["beta", "gamma"]
    else:
        names = list(design.category_labels)
    return names + [p.name for p in design.nuisance]


def _truth(scenario: Scenario, design: Design, name: str) -> float:
    states = design.state_labels
    shares = _full_shares(scenario, design)
    if name == "pi":
        return float(shares[states.index("yes")])
    if name == "beta":
        return float(shares[states.index("no")])
    if name == "gamma":
        return float(shares[states.index("cheater")])
    if name in states:
        return float(shares[states.index(name)])
    index = [p.name for p in design.nuisance].index(name)
    return float(scenario.nuisance[index])


def _full_shares(scenario: Scenario, design: Design) -> np.ndarray:
    if len(scenario.shares) == 1 and design.is_binary and len(design.state_labels) == 2:
        pi = scenario.shares[0]
        return np.array([pi, 1 - pi])
    return np.asarray(scenario.shares, dtype=float)


def _read(result, design: Design, name: str, with_interval: bool):
    """(estimate, unconstrained estimate, se, interval) of one quantity of one fit."""
    if name == "pi":
        interval = result.confidence_interval(LEVEL) if with_interval else None
        return result.pi_mle, result.pi_hat, result.se, interval
    if name in ("beta",) or name in design.category_labels:
        category = "no" if name == "beta" else name
        interval = result.confidence_interval(LEVEL, category=category) \
            if with_interval and name != "beta" else None
        index = design.state_labels.index(category)
        hat = None if result.unconstrained is None else float(result.unconstrained[index])
        return result.share(category), hat, result.share_se(category), interval
    entry = result.parameters[name]
    return entry["estimate"], None, entry["se"], None


def run(scenario: Scenario, reps: int, seed: int) -> Result:
    """Simulate ``reps`` surveys of ``scenario`` and summarize (module docstring)."""
    design = scenario.design()
    rng = np.random.default_rng(seed)
    counts = simulate_counts(design, shares=_full_shares(scenario, design),
                             n=list(scenario.n) if len(scenario.n) > 1 else scenario.n[0],
                             reps=reps, rng=rng,
                             nuisance=list(scenario.nuisance) if scenario.nuisance else None)
    names = _quantities(design)
    intervals = {"pi"} | set(design.category_labels if not design.is_binary else ())
    values = {name: [] for name in names}
    cache: dict[bytes, object] = {}
    unfit = at_bound = 0
    for table in counts:
        key = table.tobytes()
        if key not in cache:
            try:
                fit = fit_counts(design, table)
            except EstimationError:
                fit = None
            cache[key] = None if fit is None else (_on_boundary(fit), {
                name: _read(fit, design, name, name in intervals) for name in names})
        if cache[key] is None:
            unfit += 1
            continue
        bound, read = cache[key]
        at_bound += bound
        for name in names:
            values[name].append(read[name])
    fitted = reps - unfit
    result = Result(scenario=scenario, reps=reps, unfit=unfit,
                    at_bound=at_bound / fitted if fitted else 0.0)
    for name in names:
        result.quantities[name] = _summarize(_truth(scenario, design, name), values[name])
    return result


def _on_boundary(fit) -> bool:
    nuisance = fit.design.nuisance
    return bool(np.any(fit.shares <= 0) or any(
        v <= p.low or v >= p.high for v, p in zip(fit.nuisance, nuisance, strict=True)))


def _summarize(truth: float, rows) -> Summary:
    estimates = np.array([np.nan if r[0] is None else r[0] for r in rows], dtype=float)
    defined = ~np.isnan(estimates)
    estimates = estimates[defined]
    count = estimates.size
    sd = float(np.std(estimates, ddof=1)) if count > 1 else math.nan
    ses = [r[2] for r in rows]
    undefined = sum(se is None for se in ses)
    known = np.array([se for se in ses if se is not None], dtype=float)
    se = float(np.sqrt(np.mean(known**2))) if known.size else None
    hats = np.array([r[1] for r in rows if r[1] is not None], dtype=float)
    # pi_hat does not exist where a group's answers are all one response (the likelihood
    # without bounds grows without end); the fits that have one are then a biased selection
    hat_missing = sum(r[1] is None for r in rows) if hats.size else 0
    coverage = coverage_se = None
    if rows and rows[0][3] is not None:
        covered = np.array([r[3].low <= truth <= r[3].high for r in rows], dtype=float)
        coverage = float(covered.mean())
        coverage_se = math.sqrt(coverage * (1 - coverage) / covered.size) or \
            math.sqrt(LEVEL * (1 - LEVEL) / covered.size)
    return Summary(
        truth=truth, bias=float(estimates.mean() - truth), bias_se=sd / math.sqrt(count),
        sd=sd, se=se, coverage=coverage, coverage_se=coverage_se,
        hat_bias=float(hats.mean() - truth) if hats.size else None,
        hat_bias_se=float(np.std(hats, ddof=1) / math.sqrt(hats.size)) if hats.size > 1 else None,
        hat_missing=hat_missing, undefined_se=undefined)


# -- the grid ---------------------------------------------------------------------------------

EDGES = (0.02, 0.2, 0.5, 0.8, 0.98)

ONE_GROUP = {
    "warner": lambda d: Warner(p=0.75, dont_know=d),
    "generalized_warner": lambda d: GeneralizedWarner(p=0.6 * (1 - d) / 0.8,
                                                      q=0.2 * (1 - d) / 0.8),
    "fr": lambda d: ForcedResponse(p=[0.1, 0.2], dont_know=d),
    "uqtknown": lambda d: UnrelatedQuestionKnown(p=[0.7, 1 / 12], dont_know=d),
    "mangat": lambda d: Mangat(p=0.7, dont_know=d),
    "kuk": lambda d: Kuk(p=[0.7, 0.3], dont_know=d),
    "crosswise": lambda d: Crosswise(p=0.25, dont_know=d),
    "triangular": lambda d: Triangular(p=0.25, dont_know=d),
    "direct": lambda d: Direct(dont_know=d),
    "custom": lambda d: Custom(matrix=[[0.8, 0.3], [0.2, 0.7]], states=["no", "yes"],
                               responses=["no", "yes"], dont_know=d),
}
KUK_CARDS = {"kuk 3 cards": lambda d: Kuk(p=[0.7, 0.3], repetitions=3, dont_know=d)}
CATEGORICAL = {
    "fr m=3": (lambda d: ForcedResponse(p=[0.1, 0.1, 0.2], dont_know=d),
               [(0.02, 0.49, 0.49), (0.2, 0.3, 0.5), (0.49, 0.49, 0.02), (0.96, 0.02, 0.02)]),
    "grr k=3": (lambda d: GeneralizedRandomizedResponse(p=0.6, k=3, dont_know=d),
                [(0.02, 0.49, 0.49), (0.2, 0.3, 0.5), (0.96, 0.02, 0.02)]),
}
SLD = lambda d: StochasticLieDetector(p=[1 / 6, 5 / 6], dont_know=d)  # noqa: E731
UQT = lambda d: UnrelatedQuestionUnknown(p=[0.8, 0.3], dont_know=d)  # noqa: E731
CDM = lambda d: CheatingDetection(p=[0.3, 0.7], dont_know=d)  # noqa: E731
CDMSYM = lambda d: CheatingDetectionSymmetric(p=[0.5, 0.1, 0.1, 0.3], dont_know=d)  # noqa: E731
GROUP_SIZES = ((500, 500), (800, 300), (300, 800))


def grid(dont_know_values=(0.0, 0.2)) -> list[Scenario]:
    """The full grid: every preset, pi near 0, in the middle and near 1, with and without the
    don't-know branch; two-group designs also with unequal groups (both ways round)."""
    out = []
    for d in dont_know_values:
        for name, make in ONE_GROUP.items():
            for pi in EDGES:
                out.append(Scenario(name, make, (pi,), (500,), dont_know=d))
        for name, make in KUK_CARDS.items():
            for pi in EDGES:
                out.append(Scenario(name, make, (pi,), (500,), dont_know=d))
        for name, (make, share_list) in CATEGORICAL.items():
            for shares in share_list:
                out.append(Scenario(name, make, shares, (800,), dont_know=d))
        for sizes in GROUP_SIZES:
            for pi in EDGES:
                out.append(Scenario("sld", SLD, (pi,), sizes, (0.8,), dont_know=d))
                out.append(Scenario("uqtunknown", UQT, (pi,), sizes, (0.3,), dont_know=d))
                rest = 1 - pi
                # honest non-carriers and cheaters share the rest 4:1
                cheaters = (pi, rest * 0.8, rest * 0.2)
                out.append(Scenario("cdm", CDM, cheaters, sizes, dont_know=d))
                out.append(Scenario("cdmsym", CDMSYM, cheaters, sizes, dont_know=d))
            out.append(Scenario("sld", SLD, (0.3,), sizes, (1.0,), dont_know=d))
        if d == 0:
            for pi in EDGES:  # small groups
                out.append(Scenario("sld", SLD, (pi,), (150, 150), (0.8,)))
                out.append(Scenario("uqtunknown", UQT, (pi,), (150, 150), (0.3,)))
                out.append(Scenario("cdm", CDM, (pi, (1 - pi) * 0.8, (1 - pi) * 0.2),
                                    (150, 150)))
                out.append(Scenario("cdmsym", CDMSYM, (pi, (1 - pi) * 0.8, (1 - pi) * 0.2),
                                    (150, 150)))
    return out


def format_row(result: Result) -> str:
    cells = []
    for name, s in result.quantities.items():
        text = f"{name}: bias {s.bias:+.4f} ({s.bias / s.bias_se:+.1f} se)" \
            if s.bias_se > 0 else f"{name}: bias {s.bias:+.4f}"
        if s.hat_bias is not None and s.hat_bias_se:
            text += f", hat {s.hat_bias / s.hat_bias_se:+.1f} se"
            if s.hat_missing:
                text += f" ({s.hat_missing} missing)"
        if s.se_ratio is not None:
            text += f", se/sd {s.se_ratio:.3f}"
        if s.coverage is not None:
            text += f", cover {100 * s.coverage:.1f}%"
        if s.undefined_se:
            text += f", {s.undefined_se} se undefined"
        cells.append(text)
    unfit = f" [{result.unfit} unfit]" if result.unfit else ""
    bound = f" [{100 * result.at_bound:.1f}% at bound]"
    return f"{result.scenario.label}{unfit}{bound} | " + " | ".join(cells)


def _run_index(index: int, reps: int) -> str:
    # a Result holds its scenario's lambda, which does not pickle: send the row back
    return format_row(run(grid()[index], reps, 1000 + index))


def main(reps: int = 4000) -> None:
    """Run the grid on all cores and print one row per scenario."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # spawn, not fork: a forked BLAS thread pool can spin forever in the children
    with ProcessPoolExecutor(mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(_run_index, i, reps) for i in range(len(grid()))]
        for future in futures:
            print(future.result(), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 4000)
