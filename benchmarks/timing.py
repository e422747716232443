"""Timing shared by the benchmark scripts (run as ``python benchmarks/NAME.py``)."""

from __future__ import annotations

import time


def best_of(repeats: int, function, *args, **kwargs) -> tuple[float, object]:
    """The fastest of several runs (the least disturbed by the rest of the machine)."""
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function(*args, **kwargs)
        best = min(best, time.perf_counter() - start)
    return best, result
