"""Hypothesis-testing trade-off bounds of the paper (Theorems 3.5, 3.18; Corollaries 3.6, 3.19).

Each bound is a function of the type I error alpha (scalar or array) and the
privacy loss epsilon, vectorized with numpy; "as printed" marks the ones
docs/errata.md corrects.

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = [
    "tradeoff_u",
    "tradeoff_U",
    "tradeoff_u2",
    "tradeoff_U2",
    "tradeoff_f_pe",
    "tradeoff_f_op",
    "tradeoff_f2_pe",
    "tradeoff_f2_op",
]



def _alpha_eps(alpha: Sequence[float] | np.ndarray | float, epsilon: float):
    return np.asarray(alpha, dtype=float), float(epsilon)


def tradeoff_u(alpha, epsilon):
    """Lower bound u(alpha) = max{e^-eps (1 - alpha), 1 - alpha e^eps} (Theorem 3.5)."""
    a, e = _alpha_eps(alpha, epsilon)
    return np.maximum(np.exp(-e) * (1 - a), 1 - a * np.exp(e))


def tradeoff_U(alpha, epsilon):  # noqa: N802 - the paper's name
    """Upper bound U(alpha) = min{e^eps (1 - alpha), 1 - alpha e^-eps} (Theorem 3.5)."""
    a, e = _alpha_eps(alpha, epsilon)
    return np.minimum(np.exp(e) * (1 - a), 1 - a * np.exp(-e))


def tradeoff_u2(alpha, epsilon):
    """Two-fold lower bound u^2 (Corollary 3.6), as printed.

    u^2(alpha) = max{e^-2eps (1 - alpha), -alpha + 2/(e^eps + 1), 1 - alpha e^2eps}
    """
    a, e = _alpha_eps(alpha, epsilon)
    return np.maximum.reduce(
        [np.exp(-2 * e) * (1 - a), -a + 2 / (np.exp(e) + 1), 1 - a * np.exp(2 * e)]
    )


def tradeoff_U2(alpha, epsilon):  # noqa: N802 - the paper's name
    """Two-fold upper bound U^2 (Corollary 3.6), as printed.

    U^2(alpha) = min{e^2eps (1 - alpha), 1 - alpha e^-2eps, -alpha + (3 - e^-2eps)/(e^eps + 1)}
    """
    a, e = _alpha_eps(alpha, epsilon)
    return np.minimum.reduce(
        [
            np.exp(2 * e) * (1 - a),
            1 - a * np.exp(-2 * e),
            -a + (3 - np.exp(-2 * e)) / (np.exp(e) + 1),
        ]
    )


def tradeoff_f_pe(alpha, epsilon):
    """Pessimistic bound f_pe(alpha) = max{1 - alpha e^eps, 0, e^-eps (1 - alpha)} (Thm. 3.18)."""
    a, e = _alpha_eps(alpha, epsilon)
    return np.maximum.reduce([1 - a * np.exp(e), np.zeros_like(a), np.exp(-e) * (1 - a)])


def tradeoff_f_op(alpha, epsilon):
    """Optimistic bound f_op(alpha) = min{1 - alpha e^-eps, e^eps (1 - alpha)} (Theorem 3.18)."""
    a, e = _alpha_eps(alpha, epsilon)
    return np.minimum(1 - a * np.exp(-e), np.exp(e) * (1 - a))


def tradeoff_f2_pe(alpha, epsilon):
    """Two-fold pessimistic bound (Corollary 3.19), as printed.

    f^2_pe(alpha) = max{1 - alpha e^2eps, -alpha + 2/(e^eps + 1), e^-2eps (1 - alpha)}
    """
    a, e = _alpha_eps(alpha, epsilon)
    return np.maximum.reduce(
        [1 - a * np.exp(2 * e), -a + 2 / (np.exp(e) + 1), np.exp(-2 * e) * (1 - a)]
    )


def tradeoff_f2_op(alpha, epsilon):
    """Two-fold optimistic bound (Corollary 3.19), as printed.

    f^2_op(alpha) = min{1 - alpha e^-2eps, e^2eps (1 - alpha), -alpha + (3 - e^-2eps)/(e^eps + 1)}
    """
    a, e = _alpha_eps(alpha, epsilon)
    return np.minimum.reduce(
        [
            1 - a * np.exp(-2 * e),
            np.exp(2 * e) * (1 - a),
            -a + (3 - np.exp(-2 * e)) / (np.exp(e) + 1),
        ]
    )
