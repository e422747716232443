"""The ``surveykit`` command line: parse options, make one library call, print.

Commands live in modules by workflow (analysis, store, generate, export,
report, demo); importing them registers them on :data:`main`, the entry point.
"""

from surveykit.cli import (  # noqa: F401 - importing registers the commands
    analysis,
    check,
    demo,
    docs,
    export,
    generate,
    joint,
    power,
    regress,
    report,
    serve,
    store,
)
from surveykit.cli.app import main

__all__ = ["main"]
