"""Generate a stored survey's questionnaires and record the issued ids in the store.

The files are written by :func:`surveykit.collection.generation.issue_questionnaires`
(see :mod:`surveykit.collection.generation` for the files and the privacy rules);
this module loads the survey and records the generation in one transaction.

>>> # generate_questionnaires(open_engine("surveykit.db"), "academic_integrity",
>>> #                         respondents=300, out_dir="forms")
"""

from __future__ import annotations

from collections.abc import Callable

from surveykit import store
from surveykit.collection.generation import GenerationResult, issue_questionnaires
from surveykit.collection.randomizer import seeded_source
from surveykit.store.design_values import FrameValues

__all__ = ["generate_questionnaires"]


def generate_questionnaires(engine, survey_name: str, *, seed: int | None = None,
                            frame: FrameValues | None = None,
                            before_record: Callable[..., None] | None = None,
                            **options) -> GenerationResult:
    """Load the survey from the store, write its questionnaires, record the generation.

    ``options`` are those of :func:`surveykit.collection.generation.write_questionnaires`
    (respondents, out_dir, mode, fmt, key_file, templates_dir, per_file, progress). With
    ``seed`` the ids, groups and instructions are reproducible (tests only: see
    :data:`surveykit.collection.randomizer.SEED_WARNING`); otherwise they come
    from operating-system entropy. The store then registers the issued ids
    with their groups and, when
    :func:`~surveykit.collection.generation.audit_keeps_totals` allows it, adds the
    run's instruction counts per question and group, in one transaction; if
    that fails, the files are removed again. With ``frame`` (one unit per
    respondent, :func:`surveykit.workflows.frames.generate_from_frame`) the same
    transaction stores the units' design values for the ids;
    ``before_record(respondent_ids, groups)`` runs just before it.
    """
    survey = store.load_survey(engine, survey_name)
    rng = None if seed is None else seeded_source(seed)

    def record(respondent_ids, tallies, *, groups) -> None:
        if before_record is not None:
            before_record(respondent_ids, groups)
        store.record_generation(engine, survey_name, respondent_ids, tallies, groups=groups,
                                frame=frame)

    return issue_questionnaires(survey, record, rng=rng, **options)
