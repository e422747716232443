"""Estimating true shares from randomized answers, for every design.

:func:`estimate` fits any design by maximum likelihood
(:mod:`~surveykit.estimation.likelihood`); one-group yes/no designs also get
the exact conditional variance and binomial intervals
(:mod:`~surveykit.estimation.binomial`).
"""

from surveykit.estimation.binomial import conditional_variance, interval_arrays
from surveykit.estimation.estimate import (
    CI_METHODS,
    DEFAULT_CI_METHOD,
    ConfidenceInterval,
    Estimate,
    estimate,
    estimate_from_labels,
)

__all__ = [
    "CI_METHODS",
    "DEFAULT_CI_METHOD",
    "ConfidenceInterval",
    "Estimate",
    "conditional_variance",
    "estimate",
    "estimate_from_labels",
    "interval_arrays",
]
