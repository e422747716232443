"""surveykit: randomized-response surveys with a "don't know" option.

>>> from surveykit import GeneralizedWarner, estimate
>>> e = estimate(yes=30, no=50, dont_know=20, mechanism=GeneralizedWarner(p=0.6, q=0.2))
>>> round(e.pi_mle, 3)
0.25
"""

from surveykit.designs.warner import GeneralizedWarner, Warner
from surveykit.errors import EstimationError, ParameterError, SurveykitError
from surveykit.estimation import (
    ConfidenceInterval,
    Estimate,
    estimate,
    estimate_from_labels,
)
from surveykit.privacy.evidential import EvidentialMechanism, compose, post_process

__version__ = "0.1.0"

__all__ = [
    "ConfidenceInterval",
    "Estimate",
    "EstimationError",
    "EvidentialMechanism",
    "GeneralizedWarner",
    "ParameterError",
    "SurveykitError",
    "Warner",
    "__version__",
    "compose",
    "estimate",
    "estimate_from_labels",
    "post_process",
]
