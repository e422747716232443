"""Store helpers for tests: counts read only after the kept counts were checked, and CLI runs
that leave no database connection behind."""

from __future__ import annotations

import gc
import warnings

from click.testing import CliRunner

from surveykit.cli import main
from surveykit.store import database as store
from surveykit.store.answer_counts import check_counts


def checked_counts(engine, survey: str) -> list[store.QuestionCounts]:
    """``count_responses`` of ``survey``, after asserting that the kept counts equal the
    counts recomputed from the stored answers (``surveykit check``)."""
    check = check_counts(engine, survey)
    assert check.ok, check.to_dict()
    return store.count_responses(engine, survey)


def run_cli(*args: str):
    """Run ``surveykit ARGS`` in this process (Click's runner) as on a terminal, then collect
    the engine the command opened.

    ``color=True``: Click strips escape sequences from what it prints to a pipe, so only a
    terminal shows whether a value read from the database reaches it raw. A real run ends
    its process, which closes the engine's connections; here an unclosed PostgreSQL
    connection would warn when collected, in whatever test runs then.
    """
    result = CliRunner().invoke(main, list(args), prog_name="surveykit", color=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()
    return result
