"""Complex samples: sampling weights, strata, clusters, fpc and replicate weights.

The package sits beside :mod:`surveykit.estimation` in the layer order
(cli -> workflows -> store | collection | reporting -> estimation | sampling |
privacy | planning -> designs -> counts | vocabulary) and imports nothing
from storage, rendering or the CLI:

* :mod:`~surveykit.sampling.design`: :class:`SamplingDesign`, the declaration
  of a survey file's ``[sampling]`` section (imports only numpy and errors);
* :mod:`~surveykit.sampling.counts`: :class:`WeightedCounts`, the weighted
  sufficient statistics per (stratum, PSU, domain, group, response), the
  interface a store or a warehouse fills (imports only the declaration);
* :mod:`~surveykit.sampling.rows`: weighted counts from respondent rows, every
  design value checked;
* :mod:`~surveykit.sampling.variance`: Taylor linearization as ``survey::svyrecvar``;
* :mod:`~surveykit.sampling.replicates`: jackknife, BRR/Fay and bootstrap
  replicates from the PSUs, and the replicate variance;
* :mod:`~surveykit.sampling.estimate`: :func:`survey_estimate`, the weighted
  pseudo-maximum-likelihood estimate of every design with design-based
  variances, totals, domains, design effects and intervals;
* :mod:`~surveykit.sampling.regression`: :func:`survey_regress`, regression
  under a complex sample with a design-based sandwich, Wald and Rao-Scott tests, and
  :func:`survey_linear_regress`, least squares of a numeric question's unbiased transform.

The estimation modules are imported on first use, so that importing the
declaration and the counts stays cheap for the store.
"""

from surveykit.sampling.counts import UNANSWERED, WeightedCounts
from surveykit.sampling.design import (
    LONELY_PSU,
    REPLICATE_TYPES,
    VARIANCE_METHODS,
    ReplicateWeights,
    SamplingDesign,
)

__all__ = ["LONELY_PSU", "REPLICATE_TYPES", "UNANSWERED", "VARIANCE_METHODS",
           "ReplicateWeights", "SamplingDesign", "SurveyEstimate", "WeightedCounts",
           "survey_estimate", "survey_linear_regress", "survey_regress", "weighted_counts"]

_LAZY = {"SurveyEstimate": "surveykit.sampling.estimate",
         "survey_estimate": "surveykit.sampling.estimate",
         "weighted_counts": "surveykit.sampling.rows",
         "survey_regress": "surveykit.sampling.regression",
         "survey_linear_regress": "surveykit.sampling.regression"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'surveykit.sampling' has no attribute {name!r}")
