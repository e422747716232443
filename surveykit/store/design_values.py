"""The design variables of a survey's respondents (its ``[sampling]`` columns), read and checked.

An import keeps a survey's design columns (weight, strata, clusters, fpc,
replicate weights) one value per respondent, as covariates
(:mod:`surveykit.definition.sampling` declares them so). Whether they make a
sampling design can only be told over all the respondents together: every
respondent with an answer has a weight above 0 and a value of every design
column, a PSU lies within one stratum, a stratum has more than one PSU (with
``lonely_psu = "fail"``), the fpc is one value per stratum. So the import
checks them, in its transaction, once its rows are in: :func:`check_design`
reads the survey's design values and runs
:func:`surveykit.sampling.rows.design_rows` on them, naming the line of the
file (or the earlier import's respondent) where a value is wrong. An error
rolls the import back: nothing is stored.

A sample frame (``generate --frame``) stores its units' design values the
same way: :func:`store_frame_values` records the frame as an import of
format :data:`FRAME_FORMAT` (its sha256 keeps it from being used twice),
writes the values as covariates of the ids issued for its rows and runs the
same checks, in the transaction that issues the ids. A later import that
gives a respondent another design value than the frame is refused as every
covariate that differs from an earlier import is.

:func:`sampling_frame` reads, in one snapshot, what a report on a complex
sample needs: every respondent of the design with its design values, and the
answers (and groups) of the questions asked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from sqlalchemy import (
    Connection,
    Engine,
    Float,
    String,
    and_,
    case,
    cast,
    func,
    literal,
    select,
    true,
)
from sqlalchemy.exc import DataError

from surveykit.definition.survey import Survey
from surveykit.errors import ParameterError, StoreError, printable
from surveykit.sampling.counts import design_keys, gram_rank
from surveykit.sampling.design import SamplingDesign, natural_order
from surveykit.store import kept_cells, tables
from surveykit.store import surveys as stored_surveys
from surveykit.store.answer_counts import answer_problem
from surveykit.store.engines import rows_frame

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FRAME_FORMAT", "GROUP_SUFFIX", "FrameValues", "check_design",
           "check_replicate_columns", "design_columns", "design_values", "lonely_psu_row",
           "sampling_frame", "store_frame_values", "weighted_cells"]

#: ``imports.file_format`` of a sample frame's record (``generate --frame``).
FRAME_FORMAT = "frame"

#: A question's group column in :func:`sampling_frame` is its id with this suffix.
GROUP_SUFFIX = "__group"


def stored_replicate_columns(conn: Connection, key: int, survey: Survey) -> list[str]:
    """The replicate columns survey ``key`` stores values of when ``[sampling]`` gives them by
    a pattern (``replicate_weights = "repw*"``), in natural order; [] otherwise."""
    replicates = survey.sampling.replicate_weights if survey.sampling else None
    if replicates is None or replicates.pattern is None:
        return []
    stored = tables.covariates
    names = conn.execute(select(stored.c.name).distinct()
                         .where(stored.c.survey_id == key)).scalars().all()
    return natural_order([name for name in names if replicates.matches(name)])


def design_columns(conn: Connection, key: int, survey: Survey) -> list[str]:
    """Every design column of survey ``key``: those ``[sampling]`` names and the replicate
    columns its pattern matched in the stored values."""
    return [*survey.sampling.columns, *stored_replicate_columns(conn, key, survey)]


def check_replicate_columns(conn: Connection, key: int, survey: Survey, file_name: str,
                            columns: Sequence[str], *, action: str = "imported") -> None:
    """Refuse a file whose columns matching ``[sampling] replicate_weights = "repw*"`` are not
    those the survey already stores (from earlier imports or its sample frame): a replicate
    variance needs every respondent's value of the same replicates. A file matching none
    (a wave of answers whose design values came before) passes; so does the first file.
    Run it before the file's values are written."""
    replicates = survey.sampling.replicate_weights if survey.sampling else None
    if replicates is None or replicates.pattern is None:
        return
    given = natural_order([c for c in columns if replicates.matches(c)])
    stored = stored_replicate_columns(conn, key, survey)
    if not given or not stored or set(given) == set(stored):
        return
    missing = [c for c in stored if c not in given]
    extra = [c for c in given if c not in stored]
    parts = ([f"lacks {_names(missing)}"] if missing else []) + \
        ([f"adds {_names(extra)}"] if extra else [])
    raise ParameterError(
        f"{file_name}: the columns matching replicate_weights {replicates.pattern!r} are "
        f"{_names(given)} ({len(given)}), but the survey stores {_names(stored)} "
        f"({len(stored)}) from earlier imports or its sample frame: the file "
        f"{' and '.join(parts)}; every file carries the same replicate columns (or none); "
        f"nothing was {action}")


def _names(columns: Sequence[str]) -> str:
    shown = [printable(repr(c)) for c in columns]
    return ", ".join(shown) if len(shown) <= 4 else \
        f"{', '.join(shown[:2])}, ..., {shown[-1]}"


def design_values(conn: Connection, key: int, survey: Survey, extra: Sequence[str] = ()
                  ) -> pd.DataFrame:
    """One row per respondent of survey ``key`` with an answer or a design value: column
    ``respondent_id`` and one text column per design column (:func:`design_columns`) and per
    covariate of ``extra`` (None where not stored), ordered by respondent id."""
    import pandas as pd

    columns = list(dict.fromkeys([*design_columns(conn, key, survey), *extra]))
    responses, stored = tables.responses, tables.covariates
    answered = conn.execute(select(responses.c.respondent_id).distinct()
                            .where(responses.c.survey_id == key)).scalars().all()
    values = conn.execute(select(stored.c.respondent_id, stored.c.name, stored.c.value)
                          .where(stored.c.survey_id == key, stored.c.name.in_(columns))).all()
    ids = pd.Series(sorted(set(answered) | {row[0] for row in values}), dtype=object)
    table = rows_frame(values, ["respondent_id", "name", "value"]).pivot(
        index="respondent_id", columns="name", values="value")
    # built at once: a column at a time fragments a frame of a hundred replicate columns
    return pd.DataFrame({"respondent_id": ids, **{
        column: ids.map(table[column] if column in table.columns
                        else pd.Series(dtype=object)).astype(object)
        for column in columns}})


def check_design(conn: Connection, key: int, survey: Survey, file_name: str,
                 first_lines: Mapping[str, int], unit: str = "line", *,
                 action: str = "imported") -> None:
    """Refuse (a one-line ParameterError naming the file, line, column and value) design
    values that make no sampling design; ``first_lines`` maps the respondents of the file
    being imported to their first line; ``action`` ends the message ("nothing was ...")."""
    # lazy loader: a sample's rows bring pandas, loaded only when design values are checked
    from surveykit.sampling.rows import design_rows

    frame = design_values(conn, key, survey)
    # the file's respondents first, in line order, so the first problem named is the first
    # in the file
    order = frame["respondent_id"].map(lambda r: first_lines.get(r, 1 << 62))
    frame = frame.iloc[order.argsort(kind="stable").to_numpy()].reset_index(drop=True)
    ids = frame["respondent_id"].tolist()

    def where(i: int) -> str:
        respondent = printable(repr(ids[i]))
        line = first_lines.get(ids[i])
        return (f"{unit} {line} (respondent {respondent})" if line is not None
                else f"respondent {respondent} (from an earlier import)")

    try:
        rows = design_rows(frame, survey.sampling, row_names=where)
        rows.counts  # noqa: B018 -- builds the design's PSUs: strata, lonely PSUs, fpc
    except ParameterError as exc:
        message = str(exc)
        lonely = lonely_psu_row(frame, survey.sampling) if "has only one" in message \
            else None
        if lonely is not None:
            message += f" (it is at {where(lonely)})"
        raise ParameterError(f"{file_name}: {message}; nothing was {action}") from None


@dataclass(frozen=True, kw_only=True)
class FrameValues:
    """A sample frame read and checked cell by cell: its file name and sha256, the design
    columns it gives, and per unit (one per row, in file order) its line and its stored
    texts of those columns (None where empty)."""

    file_name: str
    sha256: str
    columns: tuple[str, ...]
    lines: tuple[int, ...]
    values: tuple[tuple[str | None, ...], ...]
    unit: str = "line"


def frame_used(conn: Connection, key: int) -> tuple[str, str, datetime, int] | None:
    """(file name, sha256, date, units) of the sample frame survey ``key`` was given, or None."""
    imports = tables.imports
    row = conn.execute(select(imports.c.file_name, imports.c.sha256, imports.c.imported_at,
                              imports.c.rows_read)
                       .where(imports.c.survey_id == key,
                              imports.c.file_format == FRAME_FORMAT)
                       .order_by(imports.c.id).limit(1)).first()
    return None if row is None else tuple(row)


def refuse_second_frame(conn: Connection, key: int, survey_name: str, frame: FrameValues
                        ) -> None:
    """A survey takes one sample frame, and it issues its ids once: a second run with the
    same frame (or another) would issue every unit a second id."""
    used = frame_used(conn, key)
    if used is None:
        return
    name, sha256, when, units = used
    day = when.date().isoformat() if isinstance(when, datetime) else str(when)[:10]
    if sha256 == frame.sha256:
        raise StoreError(
            f"{frame.file_name}: this sample frame already issued {units} respondent ids for "
            f"survey {survey_name!r} on {day} (as {printable(repr(name))}); a frame issues its "
            "ids once (their list is frame-ids.csv in that run's --out folder); nothing was "
            "issued")
    raise StoreError(
        f"{frame.file_name}: survey {survey_name!r} already has its sample frame "
        f"{printable(repr(name))} ({units} units, issued on {day}); a survey takes one frame, "
        "so that no unit gets two ids; correct a design value with 'surveykit import FILE "
        "--replace' (respondent_id and the design columns), or issue further ids without "
        "a frame; nothing was issued")


def store_frame_values(conn: Connection, key: int, survey: Survey, frame: FrameValues,
                       respondent_ids: Sequence[str]) -> None:
    """In the caller's transaction: record ``frame`` and store its values for
    ``respondent_ids`` (one per unit, in order), then check the design over every stored
    respondent; a one-line error (nothing stored once the caller rolls back) otherwise."""
    if len(respondent_ids) != len(frame.values):
        raise ParameterError(f"{len(respondent_ids)} respondent ids for the "
                             f"{len(frame.values)} units of {frame.file_name}")
    refuse_second_frame(conn, key, survey.name, frame)
    check_replicate_columns(conn, key, survey, frame.file_name, frame.columns,
                            action="issued")
    import_id = conn.execute(tables.imports.insert().values(
        survey_id=key, survey_version=None, file_name=frame.file_name, sha256=frame.sha256,
        file_format=FRAME_FORMAT, rows_read=len(frame.values), imported=0, replaced=0,
        rejected=0, missing=0, imported_at=datetime.now(UTC))).inserted_primary_key[0]
    touched = kept_cells.Touched(conn, key, survey)  # the kept cells of these ids change
    touched.before(ids=respondent_ids)
    rows = [{"survey_id": key, "respondent_id": respondent, "name": name, "value": value,
             "import_id": import_id}
            for respondent, values in zip(respondent_ids, frame.values, strict=True)
            for name, value in zip(frame.columns, values, strict=True) if value is not None]
    for start in range(0, len(rows), 5000):
        conn.execute(tables.covariates.insert(), rows[start:start + 5000])
    first_lines = dict(zip(respondent_ids, frame.lines, strict=True))
    check_design(conn, key, survey, frame.file_name, first_lines, frame.unit,
                 action="issued")
    touched.after()


def lonely_psu_row(frame: pd.DataFrame, sampling: SamplingDesign) -> int | None:
    """The first row of the first stratum with a single PSU (to say where it is); without
    clusters the PSUs are the rows."""
    import pandas as pd

    strata = frame[sampling.strata] if sampling.strata else None
    psu = frame[sampling.clusters[0]] if sampling.clusters else pd.Series(range(len(frame)))
    if strata is None:
        return 0
    units = psu.groupby(strata, sort=False).nunique()
    single = units[units == 1]
    if single.empty:
        return None
    return int((strata == single.index[0]).to_numpy().argmax())


def sampling_frame(engine: Engine, survey_name: str, questions: Sequence[str] = (),
                   covariates: Sequence[str] = ()) -> tuple[Survey, pd.DataFrame]:
    """Survey ``survey_name`` (which has ``[sampling]``) and its respondents, one row each:
    ``respondent_id``, the design columns and ``covariates`` (numbers as floats, categories
    as text), and per question its answer (a response label, None when unanswered) and its
    group number (column ``<id>__group``). Every question when ``questions`` is empty."""
    import pandas as pd

    survey = stored_surveys.load_survey(engine, survey_name)
    if survey.sampling is None:
        raise ParameterError(f"survey {survey.name!r} has no [sampling] section")
    asked = [survey.question(q) for q in questions] or list(survey.questions)
    extra = [survey.covariate(name).name for name in covariates]
    responses = tables.responses
    with engine.connect() as conn, conn.begin():  # one snapshot for every read
        key = stored_surveys.survey_id(conn, survey.name)
        frame = design_values(conn, key, survey, extra)
        question_keys = stored_surveys.question_ids(conn, key)
        answers = {q.id: conn.execute(
            select(responses.c.respondent_id, responses.c.answer, responses.c.group_number)
            .where(responses.c.survey_id == key,
                   responses.c.question_id == question_keys[q.id])).all() for q in asked}
    frame = pd.DataFrame({column: _stored_numbers(frame, column, survey.name)
                          if i and survey.covariate(column).kind == "number" else frame[column]
                          for i, column in enumerate(frame.columns)})
    added = {}
    for question in asked:
        rows = answers[question.id]
        labels = None if question.numeric else question.design.response_labels
        groups = len(survey.groups)
        bad = [problem for _, answer, group in rows
               if (problem := answer_problem(question.id, labels, groups, group, answer))]
        if bad:
            raise StoreError(f"stored answers to question {question.id!r} cannot be read "
                             f"({bad[0]}): they were changed outside surveykit; 'surveykit "
                             f"check --survey {survey.name}' lists them")
        by_id = {respondent: (answer, group) for respondent, answer, group in rows}
        added[question.id] = frame["respondent_id"].map(
            lambda r, by_id=by_id: by_id[r][0] if r in by_id else None).astype(object)
        added[question.id + GROUP_SUFFIX] = frame["respondent_id"].map(
            lambda r, by_id=by_id: by_id[r][1] if r in by_id else None).astype(object)
    return survey, pd.concat([frame, pd.DataFrame(added, index=frame.index)], axis=1)


def _stored_numbers(frame: pd.DataFrame, column: str, survey_name: str) -> pd.Series:
    """The stored texts of number covariate ``column`` as floats (None: NaN); a text that
    is no number (an import stores none, so it was changed outside surveykit) is a one-line
    StoreError naming the respondent and the value."""
    import pandas as pd

    numbers = pd.to_numeric(frame[column], errors="coerce")
    bad = (numbers.isna() & frame[column].notna()).to_numpy()
    if bad.any():
        i = int(bad.argmax())
        raise StoreError(
            f"survey {survey_name!r}: the stored {column!r} of respondent "
            f"{printable(repr(frame['respondent_id'].iloc[i]))} is "
            f"{printable(repr(frame[column].iloc[i]))}, not a number: it was changed outside "
            "surveykit; import the respondent's row again with 'surveykit import FILE "
            "--replace'")
    return numbers


def weighted_cells(engine: Engine, survey_name: str, domain: str | None = None, *,
                   replicates: bool = True) -> tuple[Survey, pd.DataFrame] | None:
    """Survey ``survey_name`` (with ``[sampling]``) and the sums
    of its answers' weights per (question, stratum, unit at each stage, fpc, ``domain``,
    group, response), made in the database by one GROUP BY over the respondents (each
    respondent's design values, stored as covariates, joined to every question and its
    answer, if any).

    The table has a column ``question`` (the question's id), the design's keys
    (:func:`surveykit.sampling.counts.design_keys`), ``domain`` with ``domain``,
    ``group`` and ``response``, then ``weight`` (sum of weights; the number of respondents
    when the design has no weight column), ``n`` (respondents) and, without clusters,
    ``weight2`` (sum of squared weights). A respondent without an answer to a question is
    a cell with an empty ``response`` (and group): it keeps its PSU in the design. Design
    columns of kind number are floats, others text, as :func:`sampling_frame` gives them.

    With the producer's replicate weights (``[sampling] replicate_weights``) and
    ``replicates``, the same GROUP BY sums each replicate's analysis weights per cell
    (``rep1`` ... ``repR``: the replicate columns as :func:`design_columns` and
    :meth:`~surveykit.sampling.design.ReplicateWeights.resolve` name them, read as
    :func:`surveykit.sampling.rows.design_rows` reads them for the report: the column, or
    the factor times the weight when they are not combined), and ``replicate_df`` is
    survey's degrees of freedom, the rank of the respondents' replicate weights - 1, from
    their Gram matrix (:func:`surveykit.sampling.counts.gram_rank`, as
    :mod:`surveykit.counting.weighted_files` computes it; summed here from the stored
    values by batches of respondents): the table ``counts --data`` makes of the same files.

    Returns None where the stored values are not a clean design (a respondent without a
    weight, a design value or a replicate weight, a weight that is not a number above 0, a
    replicate weight that is not a number of 0 or more): :func:`sampling_frame` and
    :mod:`surveykit.sampling.rows` then read them row by row and say which respondent is
    wrong.
    """
    import numpy as np
    import pandas as pd

    survey = stored_surveys.load_survey(engine, survey_name)
    sampling = survey.sampling
    if sampling is None:
        raise ParameterError(f"survey {survey.name!r} has no [sampling] section")
    names = [sampling.strata, *sampling.clusters, *sampling.fpc,
             survey.covariate(domain).name if domain is not None else None]
    keys = [name for name in names if name is not None]
    responses, stored, questions = tables.responses, tables.covariates, tables.questions
    with engine.connect() as conn, conn.begin():  # one snapshot
        key = stored_surveys.survey_id(conn, survey.name)
        replicate_columns = _replicate_columns(conn, key, survey) if replicates else ()
        stored_design = design_columns(conn, key, survey) if replicates else sampling.columns
        read = list(dict.fromkeys([*stored_design, *keys]))
        # the respondents of the design: those with an answer or a design value (as
        # design_values reads them for the report)
        respondents = select(responses.c.respondent_id).where(
            responses.c.survey_id == key).union(
            select(stored.c.respondent_id).where(stored.c.survey_id == key,
                                                 stored.c.name.in_(read))
        ).subquery("respondents")
        values = select(stored.c.respondent_id, *[
            func.max(case((stored.c.name == name, stored.c.value))).label(f"v{i}")
            for i, name in enumerate(read)]).where(
            stored.c.survey_id == key, stored.c.name.in_(read)).group_by(
            stored.c.respondent_id).subquery("design")
        column = {name: values.c[f"v{i}"] for i, name in enumerate(read)}
        weight_text = column[sampling.weight] if sampling.weight else None
        weight = cast(weight_text, Float) if weight_text is not None else literal(1.0)
        # the replicates' analysis weights: the columns, or factors times the weight
        factor = weight if replicate_columns and not sampling.replicate_weights.combined \
            else literal(1.0)
        analysis = [cast(column[name], Float) * factor for name in replicate_columns or ()]
        labels = [*design_keys(sampling), *(["domain"] if domain is not None else [])]
        key_columns = [column[name].label(label) for name, label in zip(keys, labels,
                                                                           strict=True)]
        asked = select(questions.c.id, questions.c.name).where(
            questions.c.survey_id == key).subquery("asked")
        aggregates = [func.sum(weight).label("weight"), func.count().label("n"),
                      func.min(weight).label("_min_weight")]
        if weight_text is not None:
            aggregates.append(func.count(weight_text).label("_weighted"))
        if not sampling.clusters:
            aggregates.append(func.sum(weight * weight).label("weight2"))
        aggregates += [func.sum(x).label(f"rep{j + 1}") for j, x in enumerate(analysis)]
        group_keys = [asked.c.name, *key_columns, responses.c.group_number, responses.c.answer]
        statement = (
            select(asked.c.name.label("question"), *key_columns,
                   responses.c.group_number.label("group"),
                   responses.c.answer.label("response"), *aggregates)
            .select_from(respondents
                         .outerjoin(values, values.c.respondent_id
                                    == respondents.c.respondent_id)
                         .join(asked, true())
                         .outerjoin(responses, and_(
                             responses.c.survey_id == key,
                             responses.c.question_id == asked.c.id,
                             responses.c.respondent_id == respondents.c.respondent_id)))
            .group_by(*group_keys))
        try:
            rows = conn.execute(statement).all()
            gram = None
            if rows and replicate_columns is None:
                return None  # replicate weights declared, none stored: the rows say so
            if rows and replicate_columns:
                respondents_read = sum(row.n for row in rows if row.question == rows[0].question)
                if not _clean_replicates(conn, key, replicate_columns, respondents_read):
                    return None
                gram = _gram(conn, key, replicate_columns,
                             None if sampling.replicate_weights.combined else sampling.weight)
        except DataError:  # PostgreSQL refuses a weight that is not a number
            return None
    table = rows_frame(rows, ["question", *labels, "group", "response",
                              *(a.name for a in aggregates)])
    table["group"] = pd.Series([row.group for row in rows], dtype=object)  # ints and None
    # labels and None: pandas 3 reads a column of texts as strings, whose missing value is NaN
    table["response"] = pd.Series([row.response for row in rows], dtype=object)
    if weight_text is not None and (table["_weighted"] != table["n"]).any():
        return None  # a respondent without a weight
    if (table["_min_weight"] <= 0).any() or table[labels].isna().to_numpy().any():
        return None  # a weight not above 0 (SQLite reads a text as 0), a missing value
    table = table.drop(columns=[c for c in table.columns if c.startswith("_")])
    if gram is not None:
        sums = table[[f"rep{j + 1}" for j in range(len(analysis))]].to_numpy(dtype=float)
        if not np.isfinite(sums).all() or not np.isfinite(gram).all():
            return None  # PostgreSQL reads 'NaN' and 'Infinity'; SQLite reads 1e999 as inf
        table["replicate_df"] = gram_rank(gram) - 1
    for name, label in zip(keys, labels, strict=True):
        if survey.covariate(name).kind == "number":
            table[label] = pd.to_numeric(table[label], errors="coerce")
            if table[label].isna().any():
                return None
    for question in survey.questions:
        if question.numeric:
            continue  # numbers, not labels: their sections read the rows
        mine = table[table["question"] == question.id]
        labels_of, groups = question.design.response_labels, len(survey.groups)
        bad = [problem for group, answer in zip(mine["group"], mine["response"], strict=True)
               if answer is not None
               and (problem := answer_problem(question.id, labels_of, groups, group, answer))]
        if bad:
            raise StoreError(f"stored answers to question {question.id!r} cannot be read "
                             f"({bad[0]}): they were changed outside surveykit; 'surveykit "
                             f"check --survey {survey.name}' lists them")
    return survey, table


def _replicate_columns(conn: Connection, key: int, survey: Survey) -> tuple[str, ...] | None:
    """The producer's replicate columns of survey ``key`` as the report reads them
    (:meth:`~surveykit.sampling.design.ReplicateWeights.resolve` of the stored design
    columns); () without replicate weights, None when the pattern matches no stored column."""
    replicates = survey.sampling.replicate_weights
    if replicates is None:
        return ()
    try:
        return replicates.resolve(design_columns(conn, key, survey))
    except ParameterError:
        return None


#: A stored replicate weight SQLite would read as a number though it is none (SQLite's CAST
#: reads a text's leading digits, or 0; PostgreSQL refuses to cast it).
_NOT_A_NUMBER_GLOB = "*[^0-9.eE+-]*"


def _clean_replicates(conn: Connection, key: int, columns: Sequence[str],
                      respondents: int) -> bool:
    """Whether each of the ``respondents`` of the design stores a value of every replicate
    column, a number of 0 or more (the rows of :func:`sampling_frame` otherwise say which
    respondent is wrong). The values belong to respondents of the design (any design value
    makes one), and (respondent, name) is a key: so ``respondents`` x columns values are
    all of them."""
    stored = tables.covariates
    checks = [func.count(), func.min(cast(stored.c.value, Float))]
    if conn.dialect.name == "sqlite":
        checks.append(func.sum(case((stored.c.value.op("GLOB")(_NOT_A_NUMBER_GLOB), 1),
                                    else_=0)))
    found = conn.execute(select(*checks).where(stored.c.survey_id == key,
                                               stored.c.name.in_(columns))).one()
    return found[0] == respondents * len(columns) and found[1] is not None \
        and found[1] >= 0 and not any(found[2:])


#: Respondents per batch of the Gram matrix's sum (memory: the batch times R doubles).
_GRAM_BATCH = 5_000


def _gram(conn: Connection, key: int, columns: Sequence[str], weight: str | None):
    """W'W of the respondents' replicate analysis weights (the stored values of
    ``columns``, times the value of ``weight`` when given: factors of the weight), summed
    by batches of respondents: what a GROUP BY would sum as R (R + 1) / 2 aggregates (too
    many for SQLite's 2,000 columns at R = 104). Each respondent's values come as one text
    of "j:value" pairs (j the column's position), which the database joins in O(R) per
    respondent, where a pivot of max(CASE ...) costs O(R^2) (2.4 s instead of 11 s on
    SQLite for 20,000 respondents x 80 replicates). NaN where a value is missing or no
    number."""
    import numpy as np

    stored = tables.covariates
    names = [*columns, *([weight] if weight else [])]
    size = len(columns)
    pair = cast(case({name: j for j, name in enumerate(names)}, value=stored.c.name),
                String) + literal(":") + stored.c.value
    joined = func.group_concat(pair, ",") if conn.dialect.name == "sqlite" \
        else func.string_agg(pair, ",")
    result = conn.execution_options(yield_per=_GRAM_BATCH).execute(
        select(joined).where(stored.c.survey_id == key, stored.c.name.in_(names))
        .group_by(stored.c.respondent_id))
    gram = np.zeros((size, size))
    for batch in result.partitions():
        texts = [row[0] for row in batch]
        try:
            numbers = np.array(",".join(texts).replace(":", ",").split(","), dtype=float)
            pairs = numbers.reshape(len(texts), len(names), 2)
        except ValueError:  # a value missing, or no number: the rows say which
            return np.full((size, size), np.nan)
        values = np.empty((len(texts), len(names)))
        values[np.arange(len(texts))[:, None], pairs[..., 0].astype(np.intp)] = pairs[..., 1]
        weights = values[:, :size] * (values[:, size:] if weight else 1.0)
        gram += weights.T @ weights
    return gram
