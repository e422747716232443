"""Replicate variances without a Newton search per replicate (issue 25: fast where people wait).

A replicate variance refits the estimate with every replicate's weights (104 producer
replicates, 200 jackknife replicates, 500 bootstrap replicates per question). The fast path
(:mod:`surveykit.sampling.estimate`) makes every replicate's (group, response) sums in one
pass over the cells, and for one-group yes/no designs takes the weighted pseudo-MLE in closed
form, pi = (s W0 / (W0 + W1) - P(r0 | no)) / (P(r0 | yes) - P(r0 | no)), where that lies
inside (0, 1); elsewhere (other designs, an estimate at or beyond the edge) it runs the
Newton search from the full-sample estimate as before.

The oracle is the path it replaced, written out here: one ``_table`` per replicate column
and ``_fit`` (the Newton search of :func:`surveykit.estimation.likelihood.maximize`) started
at the full-sample estimate. The fast path must equal it to 1e-10 on interior and boundary
cases, for every registry design with a closed form, and the variances built from it too.
"""

from __future__ import annotations

import numpy as np
import pytest

from surveykit.designs import make_design, parse_parameters
from surveykit.designs.registry import EXAMPLES, design_names
from surveykit.estimation.binomial import binomial_map
from surveykit.sampling import SamplingDesign, survey_estimate
from surveykit.sampling.counts import WeightedCounts
from surveykit.sampling.estimate import (
    _align,
    _closed_form,
    _fit,
    _replicate_fit,
    _replicate_tables,
    _table,
)
from surveykit.sampling.replicates import bootstrap, brr, jackknife, replicate_variance

AGREE = 1e-10


def example(name: str):
    return make_design(name, **parse_parameters(name, EXAMPLES[name]))


CLOSED = [name for name in design_names() if binomial_map(example(name)) is not None]
GENERAL = [name for name in design_names() if binomial_map(example(name)) is None]


def test_the_registry_has_designs_on_both_paths():
    assert {"warner", "fr", "mangat", "direct", "generalized_warner"} <= set(CLOSED)
    assert {"sld", "cdm", "grr", "kuk"} <= set(GENERAL)


@pytest.mark.parametrize("name", CLOSED)
def test_the_closed_form_is_the_newton_fit_inside_and_leaves_the_edges_to_it(name):
    """Tables whose first-answer share theta sweeps past both ends of the design's range
    (pi_hat below 0, at 0, inside, at 1, above 1), with and without "don't know" answers:
    the fast fit equals the Newton search from a full-sample start to 1e-10, inside by the
    closed form and at the edges by the search itself."""
    design = example(name)
    mapping = binomial_map(design)
    low, high = mapping.theta_range
    rng = np.random.default_rng(25)
    thetas = [low - 0.05, low, low + 1e-13, *np.linspace(low, high, 9)[1:-1],
              high - 1e-13, high, high + 0.05]
    counted = np.array([[37, 41, 5]])
    start = _fit(design, np.array([[20.0, 22.0, 3.0]]), counted).x
    closed = edges = 0
    for theta in thetas:
        for dont_know in (0.0, 7.5):
            answered = rng.uniform(50, 500)
            weighted = np.array([[answered * theta, answered * (1 - theta), dont_know]])
            weighted = np.maximum(weighted, 0.0)
            oracle = _fit(design, weighted, counted, start=start.copy()).x
            fast = _replicate_fit(design, weighted, counted, start)
            assert fast == pytest.approx(oracle, abs=AGREE), (name, theta, fast, oracle)
            if _closed_form(design, weighted) is None:
                edges += 1
                assert np.array_equal(fast, oracle)  # the same search
            else:
                closed += 1
                assert 0 < fast[0] < 1
    assert closed >= 10 and edges >= 8, (closed, edges)


def test_every_replicates_table_is_its_own_group_by_bit_for_bit():
    """One pass over the cells gives each replicate column the sums _table gives it (two
    groups, "don't know", respondents without an answer, a domain)."""
    rng = np.random.default_rng(7)
    design = example("sld")
    cells = 300
    counts = WeightedCounts.from_table({
        "stratum": rng.choice(["a", "b", "c"], cells).tolist(),
        "psu": [f"p{i % 60}" for i in range(cells)],
        "domain": rng.choice(["x", "y"], cells).tolist(),
        "group": rng.choice(["1", "2"], cells).tolist(),
        "response": rng.choice(["yes", "no", "dont_know", None], cells).tolist(),
        "weight": rng.uniform(1, 30, cells).tolist(), "n": [1] * cells},
        SamplingDesign(weight="w", strata="stratum", clusters=("psu",), nest=True,
                       lonely_psu="certainty"))
    aligned = _align(design, counts)
    replicate_weights = jackknife(counts).cell_weights(counts)
    for mask in (np.ones(counts.weight.size, dtype=bool), counts.domain == 0):
        tables = _replicate_tables(design, aligned, mask, replicate_weights)
        assert tables.shape == (replicate_weights.shape[1], 2, 3)
        for r in range(replicate_weights.shape[1]):
            assert np.array_equal(tables[r], _table(design, aligned, mask,
                                                    replicate_weights[:, r]))


def _sample(name: str, seed: int, *, pairs: bool = False) -> WeightedCounts:
    """A small stratified cluster sample answering ``name``'s example design, with a rare
    trait so that some replicate estimates fall on the boundary."""
    rng = np.random.default_rng(seed)
    design = example(name)
    strata, psus, people = 6, 2 if pairs else 4, 12
    rows = {"stratum": [], "psu": [], "group": [], "response": [], "weight": [], "n": []}
    for h in range(strata):
        for j in range(psus):
            for _ in range(people):
                group = int(rng.integers(len(design.group_names)))
                truth = int(rng.random() >= 0.06)               # state 0 (yes) is rare
                probabilities = design.matrix()[group][:, truth]
                response = rng.choice(len(design.response_labels), p=probabilities)
                rows["stratum"].append(f"s{h}")
                rows["psu"].append(f"s{h}-{j}")
                rows["group"].append(design.group_names[group])
                rows["response"].append(design.response_labels[response])
                rows["weight"].append(float(rng.uniform(5, 40)))
                rows["n"].append(1)
    return WeightedCounts.from_table(rows, SamplingDesign(weight="w", strata="stratum",
                                                          clusters=("psu",)))


def _oracle(design, counts: WeightedCounts, replicate_weights: np.ndarray, x: np.ndarray):
    """The replicate estimates as the loop before the fast path made them."""
    aligned = _align(design, counts)
    mask = np.ones(counts.weight.size, dtype=bool)
    counted = np.rint(_table(design, aligned, mask, counts.count.astype(float))
                      ).astype(np.int64)
    return np.array([_fit(design, _table(design, aligned, mask, replicate_weights[:, r]),
                          counted, start=x.copy()).x
                     for r in range(replicate_weights.shape[1])])


#: (design, variance, seed of a sample where some of the replicates' estimates are on the edge)
REPLICATED = [("warner", "jackknife", 18), ("mangat", "bootstrap", 0), ("fr", "brr", 0),
              ("generalized_warner", "jackknife", 7), ("sld", "jackknife", 3),
              ("grr", "bootstrap", 3)]


@pytest.mark.parametrize(("name", "variance", "seed"), REPLICATED)
def test_replicate_estimates_and_variances_equal_the_refit_of_every_replicate(name, variance,
                                                                              seed):
    design = example(name)
    counts = _sample(name, seed=seed, pairs=variance == "brr")
    made = {"jackknife": lambda: jackknife(counts), "brr": lambda: brr(counts),
            "bootstrap": lambda: bootstrap(counts, 60, rng=11)}[variance]()
    estimate = survey_estimate(design, counts, variance=variance, replicates=60, rng=11)
    x = np.concatenate([estimate.shares, estimate.nuisance])
    expected = _oracle(design, counts, made.cell_weights(counts), x)
    assert estimate.replicate_estimates == pytest.approx(expected, abs=AGREE)
    covariance = replicate_variance(expected, x, made.scale, made.rscales, made.mse)
    k = len(design.state_labels)
    assert np.diag(estimate.covariance)[:k] == pytest.approx(np.diag(covariance)[:k],
                                                             abs=AGREE)
    if binomial_map(design) is not None:
        # the sample was drawn so that both paths are taken: some replicates on the edge
        on_edge = [_closed_form(design, table) is None for table in _replicate_tables(
            design, _align(design, counts), np.ones(counts.weight.size, dtype=bool),
            made.cell_weights(counts))]
        assert 0 < sum(on_edge) < len(on_edge), sum(on_edge)
