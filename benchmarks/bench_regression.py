"""Benchmark: randomized-response logistic regression on a million rows, against plain Logit.

Run:  python benchmarks/bench_regression.py [--rows 1000000] [--covariates 10]

Simulates rows with 10 normal covariates, a true answer from known log-odds,
and randomized answers under the stochastic lie detector (two groups, the
honesty t estimated jointly). Times surveykit's regress() from the DataFrame
and formula (formula parsing, answer coding, starting values, Newton) and
statsmodels' plain Logit on the same rows and the same covariates, with the
randomized answers taken at face value (no randomized response), in the same
process; prints the ratio. The likelihood-ratio tests (one refit per
parameter, computed when first asked for) are timed separately.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from timing import best_of

from surveykit.designs import make_design
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


def main() -> None:
    import statsmodels.api as sm

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--covariates", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    frame = simulate(args.rows, args.covariates, np.random.default_rng(1))
    names = [f"x{j + 1}" for j in range(args.covariates)]
    formula = "rrt ~ " + " + ".join(names)
    design = make_design("sld", p=[0.2, 0.8])

    ours, fit = best_of(args.repeats, regress, frame, formula, sensitive="rrt", design=design,
                        group="condition")
    X = np.column_stack([np.ones(args.rows), frame[names].to_numpy()])
    y = (frame.rrt == "yes").to_numpy(dtype=float)
    theirs, logit = best_of(args.repeats, lambda: sm.Logit(y, X).fit(disp=0))
    start = time.perf_counter()
    fit.to_frame()
    lr_seconds = time.perf_counter() - start

    print(f"{args.rows:,} rows, {args.covariates} covariates, design sld (two groups, t "
          "estimated jointly)")
    print(f"  surveykit regress (from DataFrame)   {ours:7.2f} s   {fit.iterations} Newton "
          f"iterations, converged={fit.converged}, t = {fit.nuisance['t']['estimate']:.4f}")
    iterations = logit.mle_retvals["iterations"]
    print(f"  statsmodels Logit (plain, arrays)    {theirs:7.2f} s   {iterations} iterations")
    print(f"  ratio                                {ours / theirs:7.2f}x")
    print(f"  likelihood-ratio tests ({fit.df_model} refits)    {lr_seconds:7.2f} s")


if __name__ == "__main__":
    main()
