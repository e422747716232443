"""Benchmark: exact conditional variance at large n, and estimating from raw responses.

Run:  python benchmarks/bench_estimation.py [--responses 10000000]

Prints the time of GeneralizedWarner.conditional_variance(method="exact") for
n = 1e6 .. 1e9, and the time of estimate_from_labels on an array of raw
responses next to a plain numpy.bincount of the same array (the floor: any
estimator must at least count), as a ratio. For reference, R's RRreg takes
about 15 s for RRuni on 10 million Warner responses on a machine like ours.
"""

from __future__ import annotations

import argparse

import numpy as np
from timing import best_of

from surveykit import GeneralizedWarner, estimate_from_labels

RRREG_SECONDS_FOR_10M = 15.0



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--responses", type=int, default=10_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    gw = GeneralizedWarner(p=0.6, q=0.2)
    print("exact Var(pi_hat | N1+N2 > 0), p=0.6 q=0.2 pi=0.3")
    for exponent in (6, 7, 8, 9):
        seconds, variance = best_of(args.repeats, gw.conditional_variance, pi=0.3,
                                    n=10**exponent)
        print(f"  n = 1e{exponent}: {seconds * 1e3:8.2f} ms   variance = {variance:.6e}")

    rng = np.random.default_rng(1)
    labels = rng.choice(np.arange(3, dtype=np.int8), size=args.responses,
                        p=gw.probabilities(0.3))
    base, counts = best_of(args.repeats, np.bincount, labels, minlength=3)
    ours, result = best_of(args.repeats, estimate_from_labels, labels, mechanism=gw)
    assert (result.yes, result.no, result.dont_know) == tuple(int(c) for c in counts)
    print(f"estimate from {args.responses:,} raw responses (int8 codes)")
    print(f"  numpy bincount       {base * 1e3:8.2f} ms")
    print(f"  estimate_from_labels {ours * 1e3:8.2f} ms   ratio {ours / base:.2f}x bincount")
    scaled = RRREG_SECONDS_FOR_10M * args.responses / 10_000_000
    print(f"  vs RRreg RRuni (~{scaled:.1f} s, reported): {scaled / ours:.0f}x faster")

    strings = np.array(["yes", "no", "dont_know"])[labels[:1_000_000]]
    seconds, _ = best_of(3, estimate_from_labels, strings, mechanism=gw)
    print(f"  1,000,000 string labels: {seconds * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
