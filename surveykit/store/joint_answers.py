"""Stored answers to several questions, cross-classified by respondent (``surveykit joint``).

One query joins the survey's answers to each named question on the respondent
and groups them by the questions' groups and answers: the result is
:class:`surveykit.joint_counts.JointCounts`, the interface to the joint
estimator, so no respondent's row leaves the database. Respondents who answered
some of the questions but not all are counted and left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import Engine, distinct, func, select

from surveykit.definition.joint import JointQuestionError, resolve_questions
from surveykit.definition.survey import Survey
from surveykit.errors import ParameterError, did_you_mean
from surveykit.joint_counts import JointCounts
from surveykit.store import database as store

__all__ = ["StoredJointAnswers", "joint_answers"]


@dataclass(frozen=True, kw_only=True)
class StoredJointAnswers:
    """A survey's answers to ``counts.questions``, cross-classified; ``left_out`` counts the
    respondents who answered some of the questions and not all (they are not in ``counts``)."""

    survey: Survey
    counts: JointCounts
    left_out: dict[str, int] = field(default_factory=dict)


def _resolve(survey: Survey, names: Sequence[str]) -> tuple[str, ...]:
    """The survey's ids of ``names`` (case-insensitive), in the order given, or a one-line
    ParameterError naming the closest question."""
    known = [q.id for q in survey.questions]
    try:
        return resolve_questions(names, known)
    except JointQuestionError as problem:
        if problem.twice:
            raise ParameterError(f"question {problem.name!r} is named twice; name each "
                                 "question once") from None
        hint = did_you_mean(problem.name, known)
        listed = ", ".join(known)
        raise ParameterError(f"question {problem.name!r} is not in survey {survey.name!r}"
                             + (f"{hint} Its questions are {listed}" if hint
                                else f"; its questions are {listed}")) from None


def joint_answers(engine: Engine, survey_name: str, questions: Sequence[str]
                  ) -> StoredJointAnswers:
    """The cross-classified answers of survey ``survey_name`` to ``questions`` (ids as in its
    file), read in one snapshot."""
    store.require_schema(engine)
    responses = store.responses
    with store.read_snapshot(engine) as conn:
        key = store.survey_id(conn, survey_name)
        survey = store.stored_definition(conn, key, survey_name)
        names = _resolve(survey, questions)
        ids = store.question_ids(conn, key)
        aliases = [responses.alias(f"r{j}") for j in range(len(names))]
        first = aliases[0]
        joined = first
        for alias in aliases[1:]:
            joined = joined.join(alias, (alias.c.survey_id == first.c.survey_id)
                                 & (alias.c.respondent_id == first.c.respondent_id))
        where = [first.c.survey_id == key] + [
            alias.c.question_id == ids[name] for alias, name in zip(aliases, names, strict=True)]
        keys = [column for alias in aliases for column in (alias.c.group_number, alias.c.answer)]
        rows = conn.execute(select(*keys, func.count()).select_from(joined).where(*where)
                            .group_by(*keys)).all()
        anyone = conn.execute(
            select(func.count(distinct(responses.c.respondent_id)))
            .where(responses.c.survey_id == key,
                   responses.c.question_id.in_([ids[name] for name in names]))).scalar_one()
    table: dict[tuple[str, ...], dict[tuple[str, ...], int]] = {}
    m = len(names)
    # a one-group design pools the survey's groups (a respondent's group is survey-wide)
    pooled = [len(survey.question(name).design.group_names) == 1 for name in names]
    for row in rows:
        groups = tuple("1" if pooled[j] else str(row[2 * j]) for j in range(m))
        answers = tuple(str(row[2 * j + 1]) for j in range(m))
        cell = table.setdefault(groups, {})
        cell[answers] = cell.get(answers, 0) + int(row[-1])
    together = sum(sum(cell.values()) for cell in table.values())
    left_out = {"missing answers": anyone - together} if anyone > together else {}
    return StoredJointAnswers(survey=survey,
                              counts=JointCounts.from_mapping(tuple(names), table),
                              left_out=left_out)
