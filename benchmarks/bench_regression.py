"""Benchmark: randomized-response logistic regression on a million rows, against plain Logit.

Run:  python benchmarks/bench_regression.py [--rows 1000000] [--covariates 10] [--repeats 5]

Simulates rows with 10 normal covariates, a true answer from known log-odds,
and randomized answers under the stochastic lie detector (two groups, the
honesty t estimated jointly). In the same process, interleaved, ``--repeats``
times each:

* surveykit's ``regress()`` from the DataFrame and formula (formula, answer
  coding, starting values, Newton on the closed-form two-state likelihood);
* statsmodels' plain ``Logit`` on the same rows and the same covariates (with
  the constant), the randomized answers taken at face value (no randomized
  response): the baseline;
* the score tests of every parameter from the fit (one pass over the rows);
* the likelihood-ratio tests of every parameter (restricted fits from warm
  starts, several starts each as ``regress`` runs them), in this process (as
  ``regress`` runs them) and, when the machine has more than one core and
  ``--no-pool`` is not given, in a process pool of one worker per core
  (``workers=``); and, to show what the extra starts cost, from the warm
  start alone.

Prints the median of each and the ratios the issue sets targets for (regress
<= 1.5x Logit, score tests <= 1.2x one fit, likelihood-ratio tests <= 5x one
fit), also as the median of the per-repeat ratios (robust to load drifting
between repeats on a shared machine) and as the ratio of the median CPU
seconds of this process (robust to other processes taking the cores).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
import pandas as pd

from surveykit.designs import make_design
from surveykit.estimation import term_tests
from surveykit.estimation.regression import regress


def simulate(rows: int, covariates: int, rng: np.random.Generator) -> pd.DataFrame:
    design = make_design("sld", p=[0.2, 0.8])
    X = rng.normal(size=(rows, covariates))
    beta = np.linspace(-0.5, 0.5, covariates)
    truth = rng.random(rows) < 1 / (1 + np.exp(-(-0.3 + X @ beta)))
    group = rng.integers(0, 2, size=rows)
    matrix = design.matrix([0.7])                     # (groups, responses, states)
    p_yes = matrix[group, 0, np.where(truth, 0, 1)]
    answers = np.where(rng.random(rows) < p_yes, "yes", "no")
    frame = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(covariates)])
    frame["rrt"] = answers
    frame["condition"] = group + 1
    return frame


class Timings:
    """Wall and CPU seconds of each named step, one entry per repeat."""

    def __init__(self) -> None:
        self.wall: dict[str, list[float]] = {}
        self.cpu: dict[str, list[float]] = {}

    def run(self, key: str, function, *args, **kwargs):
        wall, cpu = time.perf_counter(), time.process_time()
        result = function(*args, **kwargs)
        self.cpu.setdefault(key, []).append(time.process_time() - cpu)
        self.wall.setdefault(key, []).append(time.perf_counter() - wall)
        return result

    def median(self, key: str) -> float:
        return statistics.median(self.wall[key])

    def ratios(self, top: str, bottom: str) -> tuple[float, float, float]:
        """Ratio of the wall medians, median of the per-repeat wall ratios, ratio of the
        CPU medians (CPU seconds count this process's threads alone: the least moved by
        other work on a shared machine)."""
        pairs = [a / b for a, b in zip(self.wall[top], self.wall[bottom], strict=True)]
        return (self.median(top) / self.median(bottom), statistics.median(pairs),
                statistics.median(self.cpu[top]) / statistics.median(self.cpu[bottom]))


def main() -> None:
    import statsmodels.api as sm

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--covariates", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-lr", action="store_true", help="skip the likelihood-ratio tests")
    parser.add_argument("--no-pool", action="store_true",
                        help="skip the likelihood-ratio tests in a process pool")
    args = parser.parse_args()

    frame = simulate(args.rows, args.covariates, np.random.default_rng(1))
    names = [f"x{j + 1}" for j in range(args.covariates)]
    formula = "rrt ~ " + " + ".join(names)
    design = make_design("sld", p=[0.2, 0.8])
    X = np.column_stack([np.ones(args.rows), frame[names].to_numpy()])
    y = (frame.rrt == "yes").to_numpy(dtype=float)

    def ours():
        return regress(frame, formula, sensitive="rrt", design=design, group="condition")

    def theirs():
        return sm.Logit(y, X).fit(disp=0)

    ours()                      # warm-up: imports (formula parser, scipy.special)
    cores = os.cpu_count() or 1
    pool = cores > 1 and not args.no_pool
    times = Timings()
    for _ in range(args.repeats):
        fit = times.run("ours", ours)
        logit = times.run("theirs", theirs)
        restrictions = [term_tests.Restriction(index=p.index, null=p.null, boundary=p.boundary)
                        for p in fit.parameters if p.null is not None and not fit.held[p.index]]
        scores = times.run("score", term_tests.score_tests, fit.model, fit.maximum.x,
                           fit.covariance, fit.held, restrictions)
        if args.no_lr:
            continue
        pieces = (fit.model, fit.maximum.x, fit.loglik, fit.covariance, fit.start, fit.held,
                  restrictions)
        lr = times.run("lr", term_tests.lr_tests, *pieces, max_iterations=fit.max_iterations,
                       workers=1)
        warm = times.run("lr_warm", term_tests.lr_tests, *pieces,
                         max_iterations=fit.max_iterations, workers=1, starts="warm")
        if pool:
            pooled = times.run("lr_pool", term_tests.lr_tests, *pieces,
                               max_iterations=fit.max_iterations,
                               workers=min(cores, len(restrictions)))
            assert all(abs(pooled[i][0] - lr[i][0]) <= 1e-6 * max(1.0, lr[i][0]) for i in lr)

    tests = len(restrictions)
    print(f"{args.rows:,} rows, {args.covariates} covariates, design sld (two groups, t "
          f"estimated jointly); median of {args.repeats} interleaved runs, {cores} cores, "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"  surveykit regress (from DataFrame)   {times.median('ours'):7.2f} s   "
          f"{fit.iterations} Newton iterations, converged={fit.converged}, "
          f"t = {fit.nuisance['t']['estimate']:.4f}")
    iterations = logit.mle_retvals["iterations"]
    print(f"  statsmodels Logit (plain, arrays)    {times.median('theirs'):7.2f} s   "
          f"{iterations} iterations")
    print(f"  score tests ({tests}, one pass)        {times.median('score'):7.2f} s")
    if not args.no_lr:
        print(f"  likelihood-ratio tests ({tests})       {times.median('lr'):7.2f} s   "
              "in this process")
        if pool:
            print(f"  likelihood-ratio tests ({tests})       {times.median('lr_pool'):7.2f} s   "
                  f"process pool of {min(cores, tests)}")
        print(f"  likelihood-ratio tests ({tests})       {times.median('lr_warm'):7.2f} s   "
              "warm start only, this process")
    print("ratios (wall: of medians, median of per-run ratios; CPU: of medians)   target")
    rows = [("regress / Logit", "ours", "theirs", "<= 1.5x"),
            ("score tests / one fit", "score", "ours", "<= 1.2x")]
    if not args.no_lr:
        rows.append(("LR tests / one fit", "lr", "ours", "<= 5x"))
        if pool:
            rows.append(("LR tests in the pool / one fit", "lr_pool", "ours", "<= 5x"))
        rows.append(("LR tests, warm start only / one fit", "lr_warm", "ours", ""))
    for label, top, bottom, target in rows:
        print("  {:36s} {:6.2f}x {:6.2f}x {:6.2f}x   {}".format(
            label, *times.ratios(top, bottom), target))
    if not args.no_lr:
        moved = max(abs(warm[i][0] - lr[i][0]) for i in lr)
        print(f"  largest |deltaG2 warm only - deltaG2|: {moved:.2e}")
        largest = max(abs(s[0] - lr[i][0]) / max(1.0, lr[i][0])
                      for i, s in scores.items() if s is not None)
        print(f"  largest |score - deltaG2| / max(1, deltaG2): {largest:.3f}")


if __name__ == "__main__":
    main()
