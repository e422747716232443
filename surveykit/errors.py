"""One exception hierarchy for surveykit.

Every error a user can cause derives from :class:`SurveykitError`, so the CLI
can turn all of them into one-line messages. Errors about bad parameters are
also :class:`ValueError`, so plain Python code can catch them the usual way.
"""


class SurveykitError(Exception):
    """Base class of every error surveykit raises on purpose."""


class ParameterError(SurveykitError, ValueError):
    """A parameter is outside its allowed range (the CLI exits with status 2)."""


class EstimationError(SurveykitError, ValueError):
    """The data do not allow an estimate (e.g. no yes/no answers at all)."""
