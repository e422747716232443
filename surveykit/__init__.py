"""surveykit: randomized-response surveys, every design, with a "don't know" option.

>>> from surveykit import GeneralizedWarner, estimate
>>> e = estimate(yes=30, no=50, dont_know=20, design=GeneralizedWarner(p=0.6, q=0.2))
>>> round(e.pi_mle, 3)
0.25

In a notebook, a stored survey's report is one call (the database is a path or
a SQLAlchemy URL)::

    from surveykit import report_for_survey
    report_for_survey("surveykit.db", "academic_integrity").to_frame()
"""

from surveykit.counts import Counts
from surveykit.designs import Design, design_names, make_design
from surveykit.designs.warner import GeneralizedWarner, Warner
from surveykit.errors import EstimationError, ParameterError, SurveykitError
from surveykit.estimation import (
    ConfidenceInterval,
    Estimate,
    conditional_variance,
    estimate,
    estimate_from_labels,
)
from surveykit.privacy.evidential import EvidentialMechanism, compose, post_process

__version__ = "0.1.0"

# The store and the report pull in SQLAlchemy, Jinja and matplotlib; they load on first use,
# so `import surveykit` (and every CLI command) stays fast.
_LAZY = {
    "open_engine": "surveykit.store",
    "report_for_survey": "surveykit.workflows.report",
    "regress_survey": "surveykit.workflows.regress",
    "fit_declared_models": "surveykit.workflows.regress",
    "Report": "surveykit.reporting.report",
    "load_survey_file": "surveykit.definition.survey",
    # power and joint analysis (issue 24): pure math, loaded on use
    "power": "surveykit.power_analysis.analytic",
    "simulate_power": "surveykit.power_analysis.simulated",
    "joint": "surveykit.estimation.joint",
    "joint_from_counts": "surveykit.estimation.joint",
    "JointCounts": "surveykit.joint_counts",
    "joint_for_survey": "surveykit.workflows.joint",
    "correlate": "surveykit.estimation.correlation",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'surveykit' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The loaded names and the lazy ones, so a notebook's tab completion offers
    ``report_for_survey`` before its first use."""
    return sorted({*globals(), *_LAZY})


__all__ = [
    "ConfidenceInterval",
    "Counts",
    "Design",
    "Estimate",
    "EstimationError",
    "EvidentialMechanism",
    "GeneralizedWarner",
    "JointCounts",
    "ParameterError",
    "Report",
    "SurveykitError",
    "Warner",
    "__version__",
    "compose",
    "conditional_variance",
    "correlate",
    "design_names",
    "estimate",
    "estimate_from_labels",
    "fit_declared_models",
    "joint",
    "joint_for_survey",
    "joint_from_counts",
    "load_survey_file",
    "make_design",
    "open_engine",
    "post_process",
    "power",
    "regress_survey",
    "report_for_survey",
    "simulate_power",
]
