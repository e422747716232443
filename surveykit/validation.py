"""Checks of user-given numbers, shared by every module: one message per kind of mistake.

Each check returns the value in its plain Python type or raises
:class:`~surveykit.errors.ParameterError` naming the parameter and its value.
"""

from __future__ import annotations

import math

import numpy as np

from surveykit.errors import ParameterError

__all__ = ["check_epsilon", "check_sample_size"]


def check_sample_size(n: object) -> int:
    """``n`` as an int of respondents, at least 1.

    >>> check_sample_size(10)
    10
    """
    if isinstance(n, bool) or not isinstance(n, int | np.integer):
        raise ParameterError(f"n ({n!r}) must be a whole number of respondents")
    if n < 1:
        raise ParameterError(f"n ({n}) must be at least 1")
    return int(n)


def check_epsilon(epsilon: object) -> float:
    """``epsilon`` as a float privacy budget: positive and finite.

    >>> check_epsilon(1)
    1.0
    """
    if isinstance(epsilon, bool) or not isinstance(epsilon, int | float | np.floating):
        raise ParameterError(f"epsilon ({epsilon!r}) must be a positive number")
    epsilon = float(epsilon)
    if not math.isfinite(epsilon) or epsilon <= 0:
        raise ParameterError(f"epsilon ({epsilon}) must be a positive, finite privacy budget")
    return epsilon
