"""Kept weighted cells: a sampled survey's weighted sums per PSU cell, changed by every write.

A report on a survey with ``[sampling]`` needs, per question, the sums of the
answers' weights per (stratum, unit at each stage, fpc, group, response)
(:class:`surveykit.sampling.counts.WeightedCounts`), and for a numeric
question the weighted sums of its answers per such cell: never the
respondents. :func:`surveykit.store.design_values.weighted_cells` makes them
with one GROUP BY over every respondent x question, which costs a pass over
the survey at every report. Here they are kept, in ``weighted_cells``
(:class:`surveykit.store.models.WeightedCellRecord`), so a report reads
O(cells) rows whatever the number of respondents.

How they are kept: a respondent's contribution to the cells depends only on
its own answers and design values. So every write, for the respondents it
touches, subtracts their contribution before it writes and adds it after
(the same GROUP BY, restricted to those respondents:
:func:`contributions_statement`), in its own transaction:

* an import (:mod:`surveykit.store.importer`): the ids of its staged answers and
  covariates (:class:`Touched`); a refused import rolls back with its cells;
* a sample frame (:func:`surveykit.store.design_values.store_frame_values`):
  the ids it issues;
* a web submission (:mod:`surveykit.store.submissions`): one call after its
  answers are in, :func:`add_first_answers` (a submission only ever stores the
  first answers of a respondent, whose cells before were its design values
  without answers).

Each change is one ``INSERT ... SELECT ... ON CONFLICT DO UPDATE`` adding the
signed sums, so the writer never reads the cells into Python. A survey without
``[sampling]`` has no cells and none of this runs. :func:`rebuild_cells`
writes a survey's cells from scratch (migration 0007 for existing databases);
:func:`read_cells` reads them in :func:`~surveykit.store.design_values.weighted_cells`'s
format, or None where the stored design values are not a clean design (the
report then reads the rows, which name the respondent that is wrong).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import (
    Connection,
    Engine,
    Float,
    Select,
    String,
    Text,
    and_,
    bindparam,
    case,
    cast,
    column,
    exists,
    func,
    literal,
    null,
    or_,
    select,
    table,
    true,
)

from surveykit.definition.limits import RESPONDENT_ID_LENGTH
from surveykit.definition.survey import Survey
from surveykit.errors import ParameterError
from surveykit.numeric_counts import NumericQuestionCounts
from surveykit.sampling.counts import NUMBER, design_keys
from surveykit.store.engines import dialect_insert, read_snapshot, rows_frame
from surveykit.store.surveys import kept_respondents_statement, survey_id
from surveykit.store.tables import (
    covariates,
    known_respondents,
    questions,
    responses,
    weighted_cells,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["NO_ANSWER", "SUMS", "KeptSample", "Touched", "add_first_answers", "change_cells",
           "contributions_statement", "key_columns", "read_cells", "read_sample",
           "rebuild_cells"]

#: ``response`` of a respondent without an answer to the question (``group_number`` 0).
NO_ANSWER = ""
#: The summed columns of a cell, in the table's order.
SUMS = ("n", "invalid", "weight", "weight2", "y", "y2", "wy", "wy2", "w2y", "w2y2")
_KEY = ("survey_id", "question_id", "design_key", "group_number", "response")
_DONT_KNOW = "dont_know"
# A number as covariates and numeric answers store it (PostgreSQL refuses to cast other
# text; SQLite reads it as 0, which the checks of an import never let in)
_NUMBER_PATTERN = r"^\s*[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?\s*$"


def key_columns(survey: Survey) -> list[str]:
    """The survey's design columns whose values make a cell's ``design_key``, in
    :func:`~surveykit.sampling.counts.design_keys` order: strata, clusters, fpc."""
    sampling = survey.sampling
    return [c for c in (sampling.strata, *sampling.clusters, *sampling.fpc) if c]


def _number(conn: Connection, text_value):
    """A stored text as a float in SQL, NULL where it is none (PostgreSQL)."""
    if conn.dialect.name == "postgresql":
        return case((text_value.regexp_match(_NUMBER_PATTERN), cast(text_value, Float)))
    return cast(text_value, Float)


def _json_array(conn: Connection, values: Sequence):
    if conn.dialect.name == "postgresql":
        return cast(func.json_build_array(*values), Text)
    return func.json_array(*values)


def _respondents(key: int, survey: Survey, ids: Select | None, answers: bool):
    """The respondents of the design (an answer or a design value), among ``ids`` if given;
    with ``answers`` False those with a design value only."""
    columns = list(survey.sampling.columns)
    if ids is None:
        valued = select(covariates.c.respondent_id).where(
            covariates.c.survey_id == key, covariates.c.name.in_(columns))
        if not answers:
            return valued.distinct().subquery("respondents")
        return select(responses.c.respondent_id).where(
            responses.c.survey_id == key).union(valued).subquery("respondents")
    candidates = ids.subquery("touched")
    condition = exists().where(covariates.c.survey_id == key,
                               covariates.c.respondent_id == candidates.c.respondent_id,
                               covariates.c.name.in_(columns))
    if answers:
        # known_respondents: the ids with an answer, kept by every writer with its answers
        condition = or_(exists().where(
            known_respondents.c.survey_id == key,
            known_respondents.c.respondent_id == candidates.c.respondent_id), condition)
    return select(candidates.c.respondent_id).distinct().where(condition).subquery(
        "respondents")


def contributions_statement(conn: Connection, key: int, survey: Survey,
                            ids: Select | None = None, *, answers: bool = True,
                            sign: int = 1) -> Select:
    """The cells of survey ``key`` made by its respondents (those among ``ids``, a SELECT of
    ``respondent_id``, when given), times ``sign``: one row per (question, design key,
    group, response) with the sums of :data:`SUMS`, in the table's columns. ``answers``
    False: as if the respondents had no answers (their design values only).

    This is :func:`surveykit.store.design_values.weighted_cells`'s GROUP BY (every
    respondent x question, its answer if any) with the keys in one JSON array."""
    sampling = survey.sampling
    if sampling is None:
        raise ParameterError(f"survey {survey.name!r} has no [sampling] section")
    columns = list(sampling.columns)
    names = key_columns(survey)
    respondents = _respondents(key, survey, ids, answers)
    stored = covariates
    values = select(stored.c.respondent_id, *[
        func.max(case((stored.c.name == name, stored.c.value))).label(f"v{i}")
        for i, name in enumerate(columns)]).where(
        stored.c.survey_id == key, stored.c.name.in_(columns),
        stored.c.respondent_id.in_(select(respondents.c.respondent_id))).group_by(
        stored.c.respondent_id).subquery("design")
    column = {name: values.c[f"v{i}"] for i, name in enumerate(columns)}
    weight = (_number(conn, column[sampling.weight]) if sampling.weight
              else literal(1.0, Float))
    asked = select(questions.c.id, questions.c.name).where(
        questions.c.survey_id == key).subquery("asked")
    numeric = [q.id for q in survey.questions if q.numeric]
    source = respondents.outerjoin(
        values, values.c.respondent_id == respondents.c.respondent_id).join(asked, true())
    if answers:
        source = source.outerjoin(responses, and_(
            responses.c.survey_id == key, responses.c.question_id == asked.c.id,
            responses.c.respondent_id == respondents.c.respondent_id))
        is_number = and_(asked.c.name.in_(numeric), responses.c.answer != _DONT_KNOW)
        response = case((responses.c.answer.is_(None), NO_ANSWER),
                        (is_number, NUMBER), else_=responses.c.answer)
        group = func.coalesce(responses.c.group_number, 0)
        y = case((is_number, _number(conn, responses.c.answer)))
    else:
        response, group, y = literal(NO_ANSWER, String), literal(0), cast(null(), Float)
    rows = select(asked.c.id.label("question_id"),
                  _json_array(conn, [column[name] for name in names]).label("design_key"),
                  group.label("group_number"), response.label("response"),
                  weight.label("w"), y.label("y")).select_from(source).subquery("rows")
    w, yv = rows.c.w, rows.c.y

    def total(value):
        return sign * func.coalesce(func.sum(value), 0.0)

    sums = [sign * func.count(), sign * func.sum(case((or_(w.is_(None), w <= 0), 1), else_=0)),
            total(w), total(w * w), total(yv), total(yv * yv), total(w * yv),
            total(w * yv * yv), total(w * w * yv), total(w * w * yv * yv)]
    return (select(literal(key).label("survey_id"), rows.c.question_id, rows.c.design_key,
                   rows.c.group_number, rows.c.response,
                   *[s.label(name) for s, name in zip(sums, SUMS, strict=True)])
            .where(true())  # SQLite: an INSERT ... SELECT with ON CONFLICT needs a WHERE
            .group_by(rows.c.question_id, rows.c.design_key, rows.c.group_number,
                      rows.c.response))


def change_cells(conn: Connection, statement: Select) -> None:
    """Add the signed sums of ``statement`` (rows in the table's columns, one per cell) to
    the kept cells; a cell whose ``n`` falls to 0 keeps every sum at exactly 0."""
    conn.execute(_upsert(conn, statement))


def _upsert(conn: Connection, statement: Select):
    insert = dialect_insert(conn, weighted_cells).from_select([*_KEY, *SUMS], statement)
    kept, new = weighted_cells.c, insert.excluded
    empty = kept.n + new.n == 0
    return insert.on_conflict_do_update(
        index_elements=[kept[name] for name in _KEY],
        set_={"n": kept.n + new.n, "invalid": kept.invalid + new.invalid, **{
            name: case((empty, 0.0), else_=kept[name] + new[name])
            for name in SUMS[2:]}})


class Touched:
    """The cells of the respondents a write touches, taken out before it writes and put back
    after, in the writer's transaction: ``touched = Touched(conn, key, survey)``, then
    :meth:`before` with the tables (or the ids) that list the respondents, the write, then
    :meth:`after`. The ids are copied once to a temporary table."""

    TABLE = "surveykit_touched"

    def __init__(self, conn: Connection, key: int, survey: Survey) -> None:
        self._conn, self._key, self._survey = conn, key, survey

    def before(self, *, tables: Sequence[str] = (), ids: Sequence[str] = ()) -> None:
        """Take out the cells of the respondents listed in the ``respondent_id`` column of
        ``tables`` (temporary tables of the writer) and of ``ids``."""
        conn = self._conn
        postgres = conn.dialect.name == "postgresql"
        if not postgres:
            conn.exec_driver_sql(f"DROP TABLE IF EXISTS temp.{self.TABLE}")
        conn.exec_driver_sql(
            f"CREATE TEMPORARY TABLE {self.TABLE} (respondent_id "
            f"VARCHAR({RESPONDENT_ID_LENGTH}) PRIMARY KEY)"
            + (" ON COMMIT DROP" if postgres else ""))
        if tables:
            listed = " UNION ALL ".join(f"SELECT respondent_id FROM {name}" for name in tables)
            conn.exec_driver_sql(f"INSERT INTO {self.TABLE} (respondent_id) SELECT DISTINCT "
                                 f"respondent_id FROM ({listed}) listed")
        if ids:
            conn.exec_driver_sql(f"INSERT INTO {self.TABLE} (respondent_id) VALUES (%s) "
                                 "ON CONFLICT DO NOTHING" if postgres else
                                 f"INSERT OR IGNORE INTO {self.TABLE} (respondent_id) "
                                 "VALUES (?)", [(i,) for i in ids])
        change_cells(conn, contributions_statement(conn, self._key, self._survey,
                                                   self._touched(), sign=-1))

    def after(self) -> None:
        """Put back the cells of the same respondents, as they are now."""
        conn = self._conn
        change_cells(conn, contributions_statement(conn, self._key, self._survey,
                                                   self._touched()))
        if conn.dialect.name != "postgresql":
            conn.exec_driver_sql(f"DROP TABLE temp.{self.TABLE}")

    def _touched(self) -> Select:
        return select(column("respondent_id")).select_from(table(self.TABLE))


# (dialect, survey key, survey source) -> the two statements of add_first_answers, compiled
# once: building and compiling them costs far more than running them (tens of ms, against
# under one for the database), and a web server runs them at every submission
_FIRST_ANSWERS: dict[tuple[str, int, str], tuple[tuple[str, dict, tuple | None], ...]] = {}


def _compiled(conn: Connection, statement) -> tuple[str, dict, tuple | None]:
    """The driver's SQL of ``statement``, its parameters' values and (qmark drivers) order."""
    compiled = statement.compile(dialect=conn.dialect,
                                 compile_kwargs={"render_postcompile": True})
    order = tuple(compiled.positiontup) if compiled.positional else None
    return str(compiled), dict(compiled.params), order


def add_first_answers(bind: Connection | Engine, key: int, survey: Survey,
                      respondent_ids: Sequence[str],
                      run: Callable[[str, tuple | dict], object] | None = None) -> None:
    """After a write that gave ``respondent_ids`` their first answers (a web submission):
    their cells without answers out, their cells with the answers in. Two statements per
    respondent in the caller's transaction; call it for a survey with ``[sampling]`` only.

    ``bind`` gives the dialect the statements are compiled for (compiled once per survey);
    ``run(sql, parameters)`` executes one on the caller's transaction (a web server's
    driver cursor), by default ``bind.exec_driver_sql`` (``bind`` a Connection)."""
    cache = (bind.dialect.name, key, survey.source)
    prepared = _FIRST_ANSWERS.get(cache)
    if prepared is None:
        ids = select(bindparam("b_respondent", "", type_=String).label("respondent_id")
                     ).subquery("ids").select()
        prepared = tuple(_compiled(bind, _upsert(bind, contributions_statement(
            bind, key, survey, ids, answers=answers, sign=sign)))
            for answers, sign in ((False, -1), (True, 1)))
        _FIRST_ANSWERS[cache] = prepared
    execute = run if run is not None else bind.exec_driver_sql
    for respondent in respondent_ids:
        for sql, defaults, order in prepared:
            values = {**defaults, "b_respondent": respondent}
            execute(sql, tuple(values[name] for name in order)
                    if order is not None else values)


def rebuild_cells(conn: Connection, key: int, survey: Survey) -> None:
    """The kept cells of survey ``key`` written from its answers and design values (inside
    the caller's transaction): none without ``[sampling]``."""
    conn.execute(weighted_cells.delete().where(weighted_cells.c.survey_id == key))
    if survey.sampling is not None:
        conn.execute(weighted_cells.insert().from_select(
            [*_KEY, *SUMS], contributions_statement(conn, key, survey)))


def read_cells(conn: Connection, key: int, survey: Survey, domain: str | None = None
               ) -> pd.DataFrame | None:
    """The kept cells of survey ``key`` in the format of
    :func:`surveykit.store.design_values.weighted_cells` (``question``, the design keys,
    ``domain`` when ``domain`` names a design key column, ``group`` and ``response`` (None
    without an answer), ``weight``, ``n``, ``weight2`` without clusters) plus, for numeric
    questions, the sums ``y`` ... ``w2y2`` (response "#" for numbers); None where the
    stored values are not a clean design (a weight missing or not above 0, a design value
    missing or not a number where one is due)."""
    import pandas as pd

    sampling = survey.sampling
    names = key_columns(survey)
    labels = design_keys(sampling)
    if domain is not None and domain not in names:
        raise ParameterError(f"domain {domain!r} is not a design key column of survey "
                             f"{survey.name!r} ({', '.join(names) or 'none'})")
    kept = weighted_cells.c
    rows = conn.execute(
        select(questions.c.name, kept.design_key, kept.group_number, kept.response,
               *[kept[name] for name in SUMS])
        .join(questions, and_(questions.c.survey_id == kept.survey_id,
                              questions.c.id == kept.question_id))
        .where(kept.survey_id == key, kept.n > 0)
        .order_by(questions.c.position, kept.design_key, kept.group_number,
                  kept.response)).all()
    found = rows_frame(rows, ["question", "design_key", "group", "response", *SUMS])
    if (found["invalid"] != 0).any():
        return None
    keys = [json.loads(text) for text in found["design_key"]]
    if any(len(k) != len(names) or any(v is None for v in k) for k in keys):
        return None
    out = {"question": found["question"]}
    for i, (name, label) in enumerate(zip(names, labels, strict=True)):
        values = pd.Series([k[i] for k in keys], dtype=object)
        if survey.covariate(name).kind == "number":
            values = pd.to_numeric(values, errors="coerce")
            if values.isna().any():
                return None
        out[label] = values
    if domain is not None:
        out["domain"] = out[labels[names.index(domain)]]
    out["group"] = pd.Series([None if g == 0 else int(g) for g in found["group"]],
                             dtype=object)
    out["response"] = pd.Series([None if r == NO_ANSWER else r for r in found["response"]],
                                dtype=object)
    out["weight"] = found["weight"].astype(float)
    out["n"] = found["n"].astype("int64")
    if not sampling.clusters:
        out["weight2"] = found["weight2"].astype(float)
    numeric = {q.id for q in survey.questions if q.numeric}
    frame = pd.DataFrame(out)
    if numeric:
        for name in SUMS[4:]:
            frame[name] = found[name].astype(float)
    if not all(math.isfinite(v) for v in frame["weight"]):
        return None
    return frame


@dataclass(frozen=True)
class KeptSample:
    """What a report reads of a sampled survey, in one snapshot: its kept cells
    (:func:`read_cells`'s table, None where the stored values are no clean design) and the
    number of respondents with an answer (``known_respondents``)."""

    table: pd.DataFrame | None
    known_respondents: int

    def numeric_counts(self, survey: Survey) -> list[NumericQuestionCounts]:
        """The unweighted sums of each numeric question (survey order), as
        :func:`surveykit.store.numeric_answers.read_numeric_counts` gives them from the
        answers: per group the numbers, their sum and sum of squares and the "don't know"
        answers; ``missing`` the known respondents who gave the question no answer."""
        # lazy: the cells' sums come as a pandas table, which this module loads only then
        from surveykit.sampling.numeric_cells import numeric_counts_of_cells

        table = self.table
        out = []
        for question in survey.questions:
            if not question.numeric:
                continue
            mine = table[(table["question"] == question.id) & table["response"].notna()]
            counts = numeric_counts_of_cells(mine)
            answered = counts.answered + counts.dont_know
            out.append(NumericQuestionCounts(
                question_id=question.id, counts=counts,
                missing=max(self.known_respondents - answered, 0)))
        return out


def read_sample(engine: Engine, survey: Survey, domain: str | None = None) -> KeptSample:
    """The kept cells of the stored survey ``survey`` (with ``[sampling]``; ``domain`` a
    design key column or None) and its number of respondents with an answer, in one
    snapshot."""
    with read_snapshot(engine) as conn:
        key = survey_id(conn, survey.name)
        table = read_cells(conn, key, survey, domain)
        known = conn.execute(kept_respondents_statement(key)).scalar_one()
    return KeptSample(table=table, known_respondents=int(known or 0))
