"""Store helpers for tests: counts read only after the kept counts were checked."""

from __future__ import annotations

from surveykit.store import database as store
from surveykit.store.answer_counts import check_counts


def checked_counts(engine, survey: str) -> list[store.QuestionCounts]:
    """``count_responses`` of ``survey``, after asserting that the kept counts equal the
    counts recomputed from the stored answers (``surveykit check``)."""
    check = check_counts(engine, survey)
    assert check.ok, check.to_dict()
    return store.count_responses(engine, survey)
