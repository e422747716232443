"""Seeded simulations: every preset recovers pi and its nuisance parameters, with honest
standard errors and 95% intervals that cover.

The harness is tests/design_simulation.py (``python tests/design_simulation.py``
prints the whole grid). Criteria, each a statement about a fixed-seed run:

* where the estimate is interior (fewer than 1% of the surveys give an
  estimate on the boundary of the parameter space; on the boundary pi_mle is
  clipped, biased towards the inside and less variable, as a constrained
  estimate must be): the bias of every estimate within 3 Monte Carlo standard
  errors, and the root mean square of the reported standard errors within 10%
  of the simulated standard deviation. Estimates that are not linear in the
  answer shares have a finite-sample bias of order 1/n of their own (the SLD's
  t is a ratio: at pi = 0.5, t = 0.8, groups of 300 and 800 its maximum-
  likelihood estimate is 0.0028 too high on average, by 2,000,000 draws of the
  closed form); for them a bias below 10% of the standard deviation passes too;
* the unconstrained estimate ``pi_hat`` unbiased within 3 Monte Carlo
  standard errors everywhere, also next to 0 and 1, for the designs whose
  closed form is linear in the answer shares (all but Kuk with several cards),
  where every survey has one (it does not exist when a group's answers are
  all one response, and the surveys that have one are then a biased selection);
* the 95% interval (the estimate's default method) covering at least 94%
  everywhere, pi near 0 and 1 included.

The full grid makes about 600 bias checks and 300 coverage checks; with
3,000 surveys a cell, a few of them miss by chance alone (about 1.6 bias checks
beyond 3 standard errors, and about 2 coverages below 94% when the true one is
95%). A cell that misses is therefore simulated again with 20,000 new surveys,
and must meet every criterion there. Three cells needed it in the run reported
in docs/designs.md, each for a miss of 3.0 to 3.1 SE: the generalized Warner at
pi = 0.2 with a don't-know share of 0.2 (the exactly unbiased Eq. 2 at +3.1 SE,
+0.2 SE again), the unknown-prevalence unrelated question at pi = 0.02 with
groups of 800 and 300 (pi_hat at +3.0 SE, -0.9 again) and CDMsym at pi = 0.2,
groups of 300 and 800, don't-know share 0.2 (coverage 93.9%, 95.3% again).

For one-group yes/no designs the coverage of the default interval (Wilson's
with continuity correction) is computed exactly, by summing over every
possible survey, instead of simulated.
"""

from __future__ import annotations

import design_simulation as sim
import numpy as np
import pytest
from scipy import stats

from surveykit.estimation.binomial import binomial_map, interval_arrays

# -- exact coverage of one-group yes/no designs ------------------------------------------------


def exact_coverage(design, pi: float, n: int, method: str = "wilson-cc") -> float:
    """P(the interval covers pi | M > 0), summed over M ~ Binomial(n, answered) and the first
    answer's count ~ Binomial(m, theta(pi)) with scipy's pmf (terms below 1e-14 dropped)."""
    mapping = binomial_map(design)
    answered = mapping.answered
    theta = float(mapping.theta(pi))
    total = 0.0
    for m in range(1, n + 1):
        weight = stats.binom.pmf(m, n, answered)
        if weight < 1e-14:
            continue
        first = np.arange(m + 1)
        low, high = interval_arrays(yes=first, no=m - first, design=design, method=method)
        covered = (low <= pi) & (pi <= high)
        total += weight * float(np.sum(stats.binom.pmf(first, m, theta) * covered))
    return total / (1 - (1 - answered) ** n)


@pytest.mark.parametrize("dont_know", [0.0, 0.2])
@pytest.mark.parametrize("name", list(sim.ONE_GROUP))
def test_one_group_default_interval_covers_exactly_at_least_94_percent(name, dont_know):
    design = sim.ONE_GROUP[name](dont_know)
    for pi in (0.01, 0.5, 0.99):
        assert exact_coverage(design, pi, 50) >= 0.94, pi


def test_the_exact_coverage_can_fail():
    # plain Wilson (no continuity correction) covers 93.5% for Warner p = 0.75, pi = 0.5,
    # n = 50 (docs/estimation.md); the 94% bar catches it
    design = sim.ONE_GROUP["warner"](0.0)
    assert exact_coverage(design, 0.5, 50, method="wilson") < 0.94


@pytest.mark.slow
@pytest.mark.parametrize("dont_know", [0.0, 0.2])
@pytest.mark.parametrize("name", list(sim.ONE_GROUP))
def test_one_group_default_interval_covers_on_the_whole_grid(name, dont_know):
    design = sim.ONE_GROUP[name](dont_know)
    pis = (0, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95,
           0.98, 0.99, 0.995, 1)
    for n in (20, 50, 200, 1000):
        for pi in pis:
            assert exact_coverage(design, pi, n) >= 0.94, (pi, n)


# -- simulations -------------------------------------------------------------------------------


def failures(result: sim.Result, *, coverage_floor: float = 0.94) -> list[str]:
    """The criteria of the module docstring that one simulated scenario misses."""
    design = result.scenario.design()
    several_cards = design.model == "kuk" and design.repetitions > 1
    nonlinear = {"t"} | ({"pi"} if several_cards else set())
    missed = []
    for name, s in result.quantities.items():
        where = f"{result.scenario.label}: {name}"
        if result.interior:
            if abs(s.bias) > 3 * s.bias_se and not (name in nonlinear
                                                    and abs(s.bias) <= 0.1 * s.sd):
                missed.append(f"{where}: bias {s.bias:+.5f} ({s.bias / s.bias_se:+.1f} se)")
            if s.se_ratio is None or abs(s.se_ratio - 1) > 0.10:
                missed.append(f"{where}: reported se / sd = {s.se_ratio}")
        if s.hat_bias is not None and not several_cards and not s.hat_missing \
                and abs(s.hat_bias) > 3 * s.hat_bias_se:
            missed.append(f"{where}: pi_hat bias {s.hat_bias:+.5f} "
                          f"({s.hat_bias / s.hat_bias_se:+.1f} se)")
        if s.coverage is not None and s.coverage < coverage_floor:
            missed.append(f"{where}: coverage {s.coverage:.4f}")
    return missed


# A representative subset: one design of each family in the default suite (two groups with
# unequal sizes, the don't-know branch and a nuisance parameter; several cards; k categories;
# one group). The unknown-prevalence unrelated question and the CDM are two-group designs like
# the SLD: each costs 20-28 s (400 profile-likelihood intervals), so they run with ``-m slow``.
# Their estimates and standard errors equal independent closed forms to 1e-8 in the default
# suite (tests/test_design_oracles.py::test_two_group_estimate_equals_the_closed_form, the
# uqtunknown and cdm cases); the intervals' coverage of every preset is in the slow grid below.
FAST = [
    sim.Scenario("sld", sim.SLD, (0.4,), (800, 300), (0.8,), dont_know=0.2),
    pytest.param(sim.Scenario("uqtunknown", sim.UQT, (0.3,), (400, 600), (0.3,)),
                 marks=pytest.mark.slow),
    pytest.param(sim.Scenario("cdm", sim.CDM, (0.3, 0.56, 0.14), (300, 800)),
                 marks=pytest.mark.slow),
    sim.Scenario("kuk 3 cards", sim.KUK_CARDS["kuk 3 cards"], (0.3,), (500,), dont_know=0.2),
    sim.Scenario("fr m=3", sim.CATEGORICAL["fr m=3"][0], (0.2, 0.3, 0.5), (800,)),
    sim.Scenario("mangat", sim.ONE_GROUP["mangat"], (0.3,), (400,), dont_know=0.2),
]


def _label(case) -> str:
    return (case.values[0] if hasattr(case, "values") else case).label


@pytest.mark.parametrize("scenario", FAST, ids=[_label(s) for s in FAST])
def test_representative_designs_recover_pi_and_their_nuisance_parameters(scenario):
    """400 surveys each: bias and standard errors as in the module docstring. The coverage
    floor is 92% here (its Monte Carlo SE at 400 surveys is 1.1%); the full grid holds 94%."""
    result = sim.run(scenario, reps=400, seed=2026)
    assert result.interior
    assert failures(result, coverage_floor=0.92) == []


GRID = sim.grid()


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(GRID)), ids=[s.label for s in GRID])
def test_every_preset_recovers_pi_on_the_whole_grid(index):
    """3,000 surveys per cell, the seeds of ``python tests/design_simulation.py 3000``
    (``pytest -m slow -s`` prints the row of each cell); a cell that misses is simulated
    again with 20,000 new surveys and must meet every criterion there."""
    result = sim.run(GRID[index], reps=3000, seed=1000 + index)
    print(sim.format_row(result))
    if failures(result):
        again = sim.run(GRID[index], reps=20_000, seed=1_000_000 + index)
        print("  again:", sim.format_row(again))
        assert failures(again) == []
