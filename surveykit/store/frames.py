"""A stored survey's respondents as a table: one question's answers, groups and covariates.

Regression (:func:`surveykit.estimation.regression.regress`) works on rows,
not counts: :func:`respondent_frame` reads one question's stored answers
(along the primary key of ``responses``) and the respondents' declared
covariates, and joins them into a pandas DataFrame, one row per respondent
who answered the question. This module reads the store only; it imports
nothing from estimation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sqlalchemy import Engine, select

from surveykit.errors import StoreError
from surveykit.store import database as store
from surveykit.store.answer_counts import answer_problem
from surveykit.store.engines import rows_frame

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["GROUP_COLUMN", "respondent_frame"]

#: The frame's column with each respondent's group number (1, 2, ...).
GROUP_COLUMN = "group"


def respondent_frame(engine: Engine, survey_name: str, question: str,
                     covariates: Sequence[str] = ()) -> pd.DataFrame:
    """The respondents who answered ``question``: their answer, group and ``covariates``.

    Columns: ``respondent_id``, the question's id (response labels: "yes",
    "no", "dont_know", ...), ``group`` (the group number of the answer) and
    one column per covariate, numbers as floats and categories as text, NaN
    (None) where the respondent has no value. Rows are ordered by respondent id.

    >>> # respondent_frame(open_engine(), "academic_integrity", "exam_cheating", ["age"])
    """
    import pandas as pd

    survey = store.load_survey(engine, survey_name)
    asked = survey.question(question)
    declared = [survey.covariate(name) for name in covariates]
    responses, stored = store.responses, store.covariates
    with engine.connect() as conn, conn.begin():  # one snapshot for both reads
        key = store.survey_id(conn, survey.name)
        question_key = store.question_ids(conn, key)[asked.id]
        answers = conn.execute(
            select(responses.c.respondent_id, responses.c.answer, responses.c.group_number)
            .where(responses.c.survey_id == key, responses.c.question_id == question_key)
            .order_by(responses.c.respondent_id)).all()
        values = conn.execute(
            select(stored.c.respondent_id, stored.c.name, stored.c.value)
            .where(stored.c.survey_id == key,
                   stored.c.name.in_([c.name for c in declared]))).all() if declared else []
    # a numeric question's answers are numbers as text (or "dont_know"): any text reads
    labels = None if asked.numeric else asked.design.response_labels
    groups = len(survey.groups)
    bad = [problem for _, answer, group in answers
           if (problem := answer_problem(asked.id, labels, groups, group, answer))]
    if bad:
        raise StoreError(
            f"{len(bad):,} stored answer{'s' if len(bad) != 1 else ''} to question "
            f"{asked.id!r} cannot be read ({bad[0]}): they were changed outside surveykit; "
            f"'surveykit check --survey {survey.name}' lists them")
    frame = rows_frame(answers, ["respondent_id", asked.id, GROUP_COLUMN])
    frame[GROUP_COLUMN] = frame[GROUP_COLUMN].astype("int64")
    if declared:
        table = rows_frame(values, ["respondent_id", "name", "value"]).pivot(
            index="respondent_id", columns="name", values="value")
        for covariate in declared:
            column = (table[covariate.name] if covariate.name in table.columns
                      else pd.Series(dtype=object))
            column = frame["respondent_id"].map(column)
            frame[covariate.name] = (pd.to_numeric(column) if covariate.kind == "number"
                                     else column.astype(object))
    return frame
