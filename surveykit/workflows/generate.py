"""Generate a stored survey's questionnaires and record the issued ids in the store.

The files are written by :func:`surveykit.collection.generation.issue_questionnaires`
(see :mod:`surveykit.collection.generation` for the files and the privacy rules);
this module loads the survey and records the generation in one transaction.

>>> # generate_questionnaires(open_engine("surveykit.db"), "academic_integrity",
>>> #                         respondents=300, out_dir="forms")
"""

from __future__ import annotations

from surveykit import store
from surveykit.collection.generation import GenerationResult, issue_questionnaires
from surveykit.collection.randomizer import seeded_source

__all__ = ["generate_questionnaires"]


def generate_questionnaires(engine, survey_name: str, *, seed: int | None = None,
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
    that fails, the files are removed again.
    """
    survey = store.load_survey(engine, survey_name)
    rng = None if seed is None else seeded_source(seed)

    def record(respondent_ids, tallies, *, groups) -> None:
        store.record_generation(engine, survey_name, respondent_ids, tallies, groups=groups)

    return issue_questionnaires(survey, record, rng=rng, **options)
