"""Benchmark: a replicate variance against one full-sample fit, in the same process.

Run:  python benchmarks/bench_replicates.py [--strata 52] [--repeats 5]

A synthetic stratified sample (``--strata`` strata of two PSUs of 20 respondents, unequal
weights) answers a Warner question (a one-group yes/no design: replicates in closed form
where interior) and an SLD question (two groups and a nuisance parameter: a Newton search
per replicate, from the full-sample estimate). For each design and replicate method (BRR:
the Hadamard order above the strata, 104 replicates for 52 strata; the jackknife, one
replicate per PSU; the bootstrap, 500 replicates) it prints, best of ``--repeats``:

* **fit**: ``survey_estimate`` with the linearization, one full-sample fit (the baseline);
* **replicates**: ``survey_estimate`` with the replicate variance, and its ratio to fit;
* **per-replicate search**: what the replicate variance cost before (one ``_table`` and
  one Newton search per replicate column, as tests/test_sampling_replicate_fits.py's
  oracle), and its ratio to fit.
"""

from __future__ import annotations

import argparse

import numpy as np
from timing import best_of

from surveykit.designs import make_design
from surveykit.sampling import SamplingDesign, survey_estimate
from surveykit.sampling.counts import WeightedCounts
from surveykit.sampling.estimate import _align, _fit, _table
from surveykit.sampling.replicates import bootstrap, brr, jackknife


def sample(design, strata: int, seed: int = 2026) -> WeightedCounts:
    """Respondents of ``strata`` strata x 2 PSUs x 20, answering ``design`` (trait share
    varying by PSU), one cell per respondent."""
    rng = np.random.default_rng(seed)
    matrix = design.matrix()
    rows: dict[str, list] = {"stratum": [], "psu": [], "group": [], "response": [],
                             "weight": [], "n": []}
    for h in range(strata):
        for j in range(2):
            share = 0.15 + 0.3 * rng.random()
            for _ in range(20):
                group = int(rng.integers(len(design.group_names)))
                state = 0 if rng.random() < share else 1
                response = rng.choice(len(design.response_labels), p=matrix[group][:, state])
                rows["stratum"].append(f"s{h}")
                rows["psu"].append(f"s{h}-{j}")
                rows["group"].append(design.group_names[group])
                rows["response"].append(design.response_labels[response])
                rows["weight"].append(float(rng.gamma(4.0, 25.0)))
                rows["n"].append(1)
    return WeightedCounts.from_table(rows, SamplingDesign(weight="w", strata="stratum",
                                                          clusters=("psu",)))


def per_replicate_search(design, counts: WeightedCounts, weights: np.ndarray) -> np.ndarray:
    """The replicate estimates as before: one table and one Newton search per replicate."""
    aligned = _align(design, counts)
    mask = np.ones(counts.weight.size, dtype=bool)
    counted = np.rint(_table(design, aligned, mask, counts.count.astype(float))
                      ).astype(np.int64)
    full = survey_estimate(design, counts)
    x = np.concatenate([full.shares, full.nuisance])
    return np.array([_fit(design, _table(design, aligned, mask, weights[:, r]), counted,
                          start=x.copy()).x for r in range(weights.shape[1])])


def replicates_of(counts: WeightedCounts, method: str):
    if method == "brr":
        return brr(counts)
    if method == "jackknife":
        return jackknife(counts)
    return bootstrap(counts, 500, rng=1)  # the seed survey_estimate is given below


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strata", type=int, default=52)
    parser.add_argument("--repeats", type=int, default=5)
    options = parser.parse_args()
    designs = {"warner": make_design("warner", p=0.7),
               "sld": make_design("sld", p=[0.2, 0.8])}
    print(f"{options.strata} strata x 2 PSUs x 20 respondents; best of {options.repeats}")
    print(f"{'design':8} {'method':10} {'R':>4} {'fit':>9} {'replicates':>11} {'ratio':>6} "
          f"{'per-replicate search':>21} {'ratio':>6}")
    for name, design in designs.items():
        counts = sample(design, options.strata)
        survey_estimate(design, counts)  # imports and caches out of the timings
        fit, _ = best_of(options.repeats, survey_estimate, design, counts)
        for method in ("brr", "jackknife", "bootstrap"):
            made = replicates_of(counts, method)
            replicated, estimate = best_of(options.repeats, survey_estimate, design, counts,
                                           variance=method, rng=1)
            searched, thetas = best_of(max(1, options.repeats // 2), per_replicate_search,
                                       design, counts, made.cell_weights(counts))
            assert np.allclose(thetas, estimate.replicate_estimates, rtol=0, atol=1e-10)
            print(f"{name:8} {method:10} {made.count:>4} {fit * 1e3:7.1f}ms "
                  f"{replicated * 1e3:9.1f}ms {replicated / fit:6.1f} "
                  f"{searched * 1e3:19.1f}ms {searched / fit:6.1f}")


if __name__ == "__main__":
    main()
