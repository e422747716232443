"""Reading numeric answers: their sufficient statistics by one SQL aggregate, or the answers.

A numeric question's answers are stored in ``responses.answer`` as canonical
decimal text ("1234.5", "0", "-3"; :mod:`surveykit.reading.numbers`) or
"dont_know". They are not kept per value in ``answer_counts`` (an income has
as many values as respondents); instead:

* :func:`read_numeric_counts` computes, per question and group, the number of
  numeric answers, their sum and sum of squares (of ``CAST(answer AS FLOAT)``,
  a double on SQLite and PostgreSQL) and the number of "don't know" answers,
  in one GROUP BY along the primary key of ``responses``: the
  :class:`~surveykit.numeric_counts.NumericCounts` the moment estimators need
  (:func:`surveykit.estimation.quantitative.estimate_mean`), costing one pass
  over the question's answers and returning O(groups) rows;
* :func:`read_numeric_answers` returns the answers themselves (respondent id,
  group, value, "don't know"), for maximum likelihood, quantiles, regression
  and complex samples.

A stored answer of a numeric question that is neither a number nor
"dont_know" can only come from a change made outside surveykit: the
aggregate counts it as an answer (PostgreSQL refuses to cast it, SQLite
reads it as 0), so the answers reader checks every value and names the first
bad one.

>>> # with engine.connect() as conn: read_numeric_counts(conn, key, survey)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sqlalchemy import Connection, Float, case, cast, func, select

from surveykit.definition.survey import Question, Survey
from surveykit.errors import StoreError
from surveykit.numeric_counts import NumericCounts, NumericQuestionCounts, NumericSums
from surveykit.store.surveys import kept_respondents_statement, question_ids
from surveykit.store.tables import responses

__all__ = ["DONT_KNOW", "NumericAnswerRows", "numeric_counts_statement",
           "read_numeric_answers", "read_numeric_counts"]

#: How "don't know" is stored, for numeric questions as for choice ones.
DONT_KNOW = "dont_know"


def numeric_counts_statement(key: int, question_keys: Sequence[int]):
    """One GROUP BY (question, group) over the answers of the numeric questions
    ``question_keys`` of survey ``key``: numbers, their sum, sum of squares, "don't know".

    The CASE keeps "dont_know" out of the cast (PostgreSQL would refuse it).
    """
    is_dont_know = responses.c.answer == DONT_KNOW
    value = case((is_dont_know, None), else_=cast(responses.c.answer, Float))
    return (
        select(responses.c.question_id, responses.c.group_number,
               func.count(value), func.sum(value), func.sum(value * value),
               func.sum(case((is_dont_know, 1), else_=0)))
        .where(responses.c.survey_id == key,
               responses.c.question_id.in_(sorted(question_keys)))
        .group_by(responses.c.question_id, responses.c.group_number)
    )


def read_numeric_counts(conn: Connection, key: int, survey: Survey,
                        questions: Sequence[str] | None = None
                        ) -> list[NumericQuestionCounts]:
    """The counts of the numeric questions of survey ``key`` (``survey``, its definition; or
    only ``questions``), in survey order, with ``missing`` as the kept counts have it: the
    survey's known respondents who gave this question no answer.

    Each group's sums come from one aggregate (:func:`numeric_counts_statement`); run
    inside the caller's snapshot, they agree with the choice counts read in it.
    """
    asked = [q for q in survey.questions if q.numeric
             and (questions is None or q.id in questions)]
    if not asked:
        return []
    keys = question_ids(conn, key)
    by_key = {keys[q.id]: q for q in asked}
    tables: dict[str, dict[str, NumericSums]] = {q.id: {} for q in asked}
    for question, group, n, total, squares, dont_know in conn.execute(
            numeric_counts_statement(key, list(by_key)).order_by(
                responses.c.question_id, responses.c.group_number)):
        name = by_key[question].id
        try:
            sums = NumericSums(int(n), float(total or 0.0), float(squares or 0.0),
                               int(dont_know or 0))
        except Exception as exc:  # noqa: BLE001 - a sum the database made of bad text
            raise _bad_values(survey, name, str(exc)) from None
        tables[name][str(group)] = sums
    known = conn.execute(kept_respondents_statement(key)).scalar_one() or 0
    out = []
    for q in asked:
        counts = NumericCounts.from_mapping(tables[q.id])
        answered = counts.answered + counts.dont_know
        out.append(NumericQuestionCounts(question_id=q.id, counts=counts,
                                         missing=max(int(known) - answered, 0)))
    return out


@dataclass(frozen=True)
class NumericAnswerRows:
    """The stored answers to one numeric question, ordered by respondent id:
    ``respondent_ids``, ``groups`` (1, 2, ...), ``values`` (NaN for "don't know") and the
    ``dont_know`` mask. :meth:`counts` gives the same sums as :func:`read_numeric_counts`.
    """

    question_id: str
    respondent_ids: tuple[str, ...]
    groups: np.ndarray
    values: np.ndarray
    dont_know: np.ndarray

    def __len__(self) -> int:
        return len(self.respondent_ids)

    def counts(self) -> NumericCounts:
        """The sufficient statistics per group (groups as text "1", "2", ...)."""
        return NumericCounts.from_answers(self.values, groups=[str(g) for g in self.groups],
                                          dont_know=self.dont_know)


def read_numeric_answers(conn: Connection, key: int, survey: Survey, question: str
                         ) -> NumericAnswerRows:
    """Every stored answer to the numeric ``question`` of survey ``key`` (respondent id,
    group, value), for estimators that need the answers themselves (maximum likelihood,
    quantiles, regression, complex samples). A stored value that is no number (changed
    outside surveykit) is refused in one line."""
    asked = _numeric_question(survey, question)
    question_key = question_ids(conn, key)[asked.id]
    rows = conn.execute(
        select(responses.c.respondent_id, responses.c.group_number, responses.c.answer)
        .where(responses.c.survey_id == key, responses.c.question_id == question_key)
        .order_by(responses.c.respondent_id)).all()
    values = np.full(len(rows), np.nan)
    dont_know = np.zeros(len(rows), dtype=bool)
    for i, (respondent, _, answer) in enumerate(rows):
        if answer == DONT_KNOW:
            dont_know[i] = True
            continue
        try:
            number = float(answer)
        except (TypeError, ValueError):
            number = math.nan
        if not math.isfinite(number):
            raise _bad_values(survey, asked.id, f"respondent {respondent!r} has {answer!r}")
        values[i] = number
    return NumericAnswerRows(
        question_id=asked.id, respondent_ids=tuple(r for r, _, _ in rows),
        groups=np.array([g for _, g, _ in rows], dtype=int), values=values,
        dont_know=dont_know)


def _numeric_question(survey: Survey, question: str) -> Question:
    asked = survey.question(question)
    if not asked.numeric:
        raise StoreError(f"question {asked.id!r} of survey {survey.name!r} is a choice "
                         "question; its answers are counted per response (counts)")
    return asked


def _bad_values(survey: Survey, question: str, detail: str) -> StoreError:
    return StoreError(
        f"stored answers to the numeric question {question!r} of survey {survey.name!r} "
        f"cannot be read as numbers ({detail}): they were changed outside surveykit; "
        "restore the database from a backup, or import the right answers with --replace")
