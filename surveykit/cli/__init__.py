"""The ``surveykit`` command line: parse options, make one library call, print.

Commands live in modules by workflow (analysis, store, generate, report,
demo); importing them registers them on :data:`main`, the entry point.
"""

from surveykit.cli import analysis, demo, generate, regress, report, store  # noqa: F401 - registers
from surveykit.cli.app import main

__all__ = ["main"]
