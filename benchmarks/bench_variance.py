"""Benchmark: the exact conditional variance at n = 10^6, 10^9, 10^12 (constant from n s = 1000 on).

Run:  python benchmarks/bench_variance.py [--repeats 200] [--old-at-1e12]

Prints the time of E[1/M | M > 0] (inverse_moment) and of the whole
conditional_variance(GeneralizedWarner(...)) (p = 0.6, q = 0.2, so s = 0.8) at
n = 10^6, 10^9, 10^12, as ratios against two plain baselines timed in the same
process: one math.log call (the mean over a loop of 10^6), and the windowed
pmf sum that inverse_moment used at every n before (at n = 10^6). It also
prints the windowed sum at n = 10^9 (and, with --old-at-1e12, at 10^12, about
1.5 s) and the costliest case below the crossover (n s just under 1000 at
n = 10^12), where the windowed sum is still used. The issue's bar: under 1 ms at 10^12.
"""

from __future__ import annotations

import argparse
import math
import time

from timing import best_of

from surveykit import GeneralizedWarner, conditional_variance
from surveykit.estimation.exact import _SERIES_FROM, _windowed_sum, inverse_moment


def _one_log_call(loops: int = 1_000_000) -> float:
    """Seconds per math.log call, the mean over a loop (the loop's own cost included)."""
    log, x = math.log, 0.8
    start = time.perf_counter()
    for _ in range(loops):
        log(x)
    return (time.perf_counter() - start) / loops


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--old-at-1e12", action="store_true",
                        help="also time the windowed sum at n = 10^12 (about 1.5 s per run)")
    args = parser.parse_args()

    gw = GeneralizedWarner(p=0.6, q=0.2)
    s = gw.p + gw.q
    inverse_moment(10**6, s)  # import scipy, warm caches
    _windowed_sum(10**6, s)
    log_call = min(_one_log_call() for _ in range(3))
    windowed_1e6, _ = best_of(max(5, args.repeats // 10), _windowed_sum, 10**6, s)
    print(f"baselines: one math.log call {log_call * 1e9:.1f} ns; "
          f"windowed sum at n = 1e6 {windowed_1e6 * 1e3:.3f} ms")
    print(f"E[1/M | M > 0] and Var(pi_hat | M > 0), p=0.6 q=0.2 (s = {s:g}) pi=0.3; "
          f"series from n s = {_SERIES_FROM}")
    print(f"  {'n':>6}  {'inverse_moment':>14}  {'x log':>8}  {'x window@1e6':>12}  "
          f"{'conditional_variance':>20}")
    for exponent in (6, 9, 12):
        n = 10**exponent
        inverse, _ = best_of(args.repeats, inverse_moment, n, s)
        variance, _ = best_of(args.repeats, conditional_variance, gw, pi=0.3, n=n)
        print(f"  {'1e' + str(exponent):>6}  {inverse * 1e6:11.2f} us  {inverse / log_call:8.0f}  "
              f"{inverse / windowed_1e6:12.4f}  {variance * 1e6:17.2f} us")

    print("the windowed sum alone (the old inverse_moment at every n):")
    olds = [9, 12] if args.old_at_1e12 else [9]
    for exponent in olds:
        seconds, _ = best_of(3 if exponent < 12 else 1, _windowed_sum, 10**exponent, s)
        print(f"  n = 1e{exponent}: {seconds * 1e3:9.2f} ms  "
              f"({seconds / windowed_1e6:.0f}x the windowed sum at 1e6)")

    n = 10**12
    below = (_SERIES_FROM - 1) / n  # n s = 999: the costliest windowed sum still used
    seconds, _ = best_of(max(5, args.repeats // 10), inverse_moment, n, below)
    print(f"costliest below the crossover, n = 1e12, n s = 999 (windowed): "
          f"{seconds * 1e3:.3f} ms ({seconds / windowed_1e6:.2f}x the windowed sum at 1e6)")
    seconds, _ = best_of(args.repeats, inverse_moment, n, _SERIES_FROM / n)
    print(f"at the crossover, n = 1e12, n s = 1000 (series, 6 terms): {seconds * 1e6:.2f} us")


if __name__ == "__main__":
    main()
