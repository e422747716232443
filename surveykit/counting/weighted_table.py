"""Weighted counts tables: a sampled survey's answers as sums of weights per (question, stratum,
PSU, fpc, group, response), the file a warehouse makes with one GROUP BY.

A survey whose file has ``[sampling]`` is estimated from weighted sums, not
from plain counts (:mod:`surveykit.sampling.counts` says why these sums are
all a design-based estimate needs). Its counts table is a CSV with one row per
cell:

* ``survey``: the survey's name (one survey per file);
* ``question``: a question id (any case);
* ``stratum``: the stratum, when the design has strata;
* ``psu`` (one stage of clusters) or ``unit1`` ... ``unitS`` (S stages), when it
  has clusters;
* ``fpc`` or ``fpc1`` ... ``fpcS``, when it has an fpc: the population size (or
  sampling fraction) where the cell's units were drawn, as the survey's columns;
* ``domain`` (optional): the domain of the cell (estimates per domain, as svyby);
* ``group``: the group number or name; may be left out (or empty) for one-group
  surveys;
* ``response``: a response label of the question's design (import's spellings
  are accepted), or empty for respondents of the sample who did not answer it
  (they keep their PSU in the design);
* ``weight``: the sum of the respondents' weights (with no weight column in the
  design: may be left out, and the weights are the design's);
* ``n``: the number of respondents, a whole number >= 1;
* ``weight2``: the sum of the squared weights, when the design has no clusters
  (every respondent is then a PSU);
* ``rep1`` ... ``repR`` (optional, with the producer's replicate weights): the sums
  of each replicate's analysis weights, for ``report --variance replicates``;
* ``replicate_df`` (optional, with ``rep1`` ...): survey's degrees of freedom of the
  replicates, the rank of the respondents' replicate weights - 1, the same on every
  row (without it, the rank of the cells' sums, which can be lower).

Columns starting with ``_`` are ignored. Rows with the same keys add up (a
file counted per partition can be concatenated). docs/complex-samples.md has the
GROUP BY. A bad row is a one-line error naming the file, line, column and value.

>>> import io
>>> from surveykit.definition.survey import parse_survey
>>> survey = parse_survey('''name = "s"
... title = "S"
... [[questions]]
... id = "cheated"
... text = "Ever?"
... design = { model = "warner", p = 0.7 }
... [sampling]
... weight = "w"
... clusters = ["school"]''')
>>> text = ("survey,question,psu,response,weight,n\\n"
...         "s,cheated,a,yes,30.5,3\\ns,cheated,b,no,12,1\\n")
>>> read_weighted_table(io.StringIO(text), survey, "w.csv")["cheated"].to_dict("list")
{'psu': ['a', 'b'], 'group': [1, 1], 'response': ['yes', 'no'], 'weight': [30.5, 12.0], 'n': [3, 1]}
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from surveykit.counting.table import _read_text
from surveykit.definition.survey import Survey
from surveykit.errors import ParameterError, printable
from surveykit.reading.cells import (
    NOT_A_GROUP,
    group_lookup,
    is_blank,
    not_a_group_reason,
    question_lookup,
    read_answer,
    read_group,
    read_question,
    unknown_question_reason,
)
from surveykit.sampling.counts import design_keys

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["is_weighted_table", "read_weighted_file", "read_weighted_table", "replicate_column",
           "weighted_columns", "write_weighted_table"]


def weighted_columns(survey: Survey, domain: bool = False, replicates: int = 0,
                     replicate_df: bool = False) -> list[str]:
    """The header of survey ``survey``'s weighted counts table, in order (``replicates``:
    how many replicate sums it carries; ``replicate_df``: whether it carries their degrees
    of freedom)."""
    sampling = survey.sampling
    return ["survey", "question", *design_keys(sampling), *(["domain"] if domain else []),
            "group", "response", "weight", "n", *([] if sampling.clusters else ["weight2"]),
            *(f"rep{j + 1}" for j in range(replicates)),
            *(["replicate_df"] if replicate_df else [])]


def replicate_column(name: str) -> bool:
    """Whether ``name`` is a replicate sum's column of a weighted counts table (rep1, rep2, ...).

    >>> [replicate_column(c) for c in ("rep1", "rep12", "rep0", "replicate_df")]
    [True, True, False, False]
    """
    return re.fullmatch(r"rep[1-9][0-9]*", name) is not None


def is_weighted_table(path: str | Path) -> bool:
    """Whether the CSV at ``path`` has a weighted counts table's header (``weight`` and ``n``
    columns) rather than plain counts (``count``)."""
    try:
        with Path(path).open(encoding="utf-8-sig", newline="") as stream:
            header = next(csv.reader(stream), [])
    except (OSError, UnicodeDecodeError):
        return False  # the plain reader says what is wrong with the file
    names = {cell.strip().casefold() for cell in header}
    return {"weight", "n"} <= names or ({"n", "response"} <= names and "count" not in names)


def write_weighted_table(stream: TextIO, survey: Survey, cells: pd.DataFrame) -> None:
    """Write ``cells`` (:func:`surveykit.store.design_values.weighted_cells`'s table: a
    ``question`` column, the design's keys, ``group``, ``response``, ``weight``, ``n``,
    ``weight2``; ``rep1`` ... and ``replicate_df`` with the producer's replicate weights) as
    survey ``survey``'s weighted counts table."""
    domain = "domain" in cells.columns
    header = weighted_columns(survey, domain,
                              sum(replicate_column(str(c)) for c in cells.columns),
                              "replicate_df" in cells.columns)
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(header)
    for record in cells.assign(survey=survey.name).to_dict("records"):
        writer.writerow([_cell(record.get(column)) for column in header])


def _cell(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 2 ** 53 else repr(value)
    return str(value)


def read_weighted_file(path: str | Path, survey: Survey) -> dict[str, pd.DataFrame]:
    """:func:`read_weighted_table` of the CSV file at ``path``."""
    path = Path(path)
    return read_weighted_table(io.StringIO(_read_text(path)), survey, str(path))


def read_weighted_table(stream: TextIO, survey: Survey, name: str) -> dict[str, pd.DataFrame]:
    """The cells of every question (question id -> table in
    :meth:`surveykit.sampling.counts.WeightedCounts.from_table`'s format: the design's keys
    as text, ``group`` a group number, ``response`` a response label or None, ``weight``,
    ``n``, ``weight2`` as numbers), in survey order; the first bad row is a
    ParameterError naming ``name``, its line, column and value. Rows with the same keys
    are added up."""
    import pandas as pd

    if survey.sampling is None:
        raise ParameterError(f"{name} is a weighted counts table, but survey {survey.name!r} "
                             "has no [sampling] section: give it plain counts (survey, "
                             "question, group, response, count)")
    reader = csv.reader(stream)
    header = [cell.strip().casefold() for cell in next(reader, [])]
    used = {column: i for i, column in enumerate(header) if column and not column.startswith("_")}
    sampling = survey.sampling
    keys = design_keys(sampling)
    required = ["survey", "question", *keys, "response", "n"]
    if sampling.weight is not None:
        required.append("weight")
    if not sampling.clusters:
        required.append("weight2")
    if len(survey.groups) > 1:
        required.append("group")
    lacking = [column for column in required if column not in used]
    if lacking:
        raise ParameterError(
            f"{name}, line 1: a weighted counts table of survey {survey.name!r} needs the "
            f"columns {', '.join(required)}; missing: {', '.join(lacking)}")
    optional = [c for c in ("domain", "group", "weight", "weight2") if c in used]
    replicate_columns = sorted((c for c in used if replicate_column(c)),
                               key=lambda c: int(c[3:]))
    if replicate_columns != [f"rep{j + 1}" for j in range(len(replicate_columns))]:
        raise ParameterError(f"{name}, line 1: the replicate columns are "
                             f"{', '.join(replicate_columns)}; number them rep1 ... repR "
                             "without gaps; nothing was read")
    if "replicate_df" in used and not replicate_columns:
        raise ParameterError(f"{name}, line 1: column 'replicate_df' goes with the replicate "
                             "sums rep1 ... repR, which the file lacks; nothing was read")
    degrees: list[int] = []
    questions, groups = question_lookup(survey), group_lookup(survey)
    spellings = [question.answer_spellings() for question in survey.questions]
    rows: list[list[dict]] = [[] for _ in survey.questions]

    def fail(line: int, column: str, value: str, reason: str) -> ParameterError:
        return ParameterError(f"{name}, line {line}, column {column!r}: "
                              f"{printable(repr(value))} {reason}; nothing was read")

    for fields in reader:
        line = reader.line_num
        if not any(cell.strip() for cell in fields):
            continue
        if len(fields) != len(header):
            raise ParameterError(f"{name}, line {line}: the row has {len(fields)} fields but "
                                 f"the header has {len(header)}; nothing was read")
        cell = {column: fields[i] for column, i in used.items()}
        if cell["survey"].strip() != survey.name:
            raise fail(line, "survey", cell["survey"], f"is not {survey.name!r} (one survey "
                       "per counts table)")
        question = read_question(questions, cell["question"])
        if question is None:
            raise fail(line, "question", cell["question"],
                       unknown_question_reason(survey, cell["question"]))
        record: dict[str, object] = {}
        for column in [*keys, *(["domain"] if "domain" in optional else [])]:
            value = cell[column].strip()
            if not value:
                raise fail(line, column, cell[column], "is empty: every cell needs its "
                           + ("domain" if column == "domain" else "design values"))
            record[column] = value
            if column.startswith("fpc"):
                record[column] = _number(cell[column], line, column, fail, "an fpc",
                                         positive=True)
        answered = not is_blank(cell["response"])
        label = None
        if answered:
            label = read_answer(spellings[question], cell["response"])
            if label is None:
                allowed = ", ".join(survey.questions[question].design.response_labels)
                raise fail(line, "response", cell["response"], "is not a response of this "
                           f"question's design ({allowed}; empty for respondents without an "
                           "answer)")
        group = read_group(groups, cell.get("group", ""))
        if group is NOT_A_GROUP:
            raise fail(line, "group", cell["group"], not_a_group_reason(survey))
        if group is None and answered and len(survey.groups) > 1:
            raise fail(line, "group", cell.get("group", ""), "is empty; this survey has groups "
                       f"({', '.join(survey.groups)})")
        record["group"] = group if group is not None else (1 if answered else None)
        record["response"] = label
        n = _number(cell["n"], line, "n", fail, "a number of respondents", positive=True)
        if not n.is_integer():
            raise fail(line, "n", cell["n"], "is not a whole number of respondents")
        record["n"] = int(n)
        for column in ("weight", "weight2"):
            if column in optional and (column != "weight2" or not sampling.clusters):
                record[column] = _number(cell[column], line, column, fail,
                                         "a sum of " + ("squared " if column == "weight2"
                                                        else "") + "weights", positive=True)
        if sampling.weight is None:
            record.pop("weight", None)
        for column in replicate_columns:
            record[column] = _number(cell[column], line, column, fail,
                                     "a sum of replicate weights", positive=False)
        if "replicate_df" in used:
            df = _number(cell["replicate_df"], line, "replicate_df", fail,
                         "degrees of freedom", positive=False)
            if not df.is_integer() or (degrees and df != degrees[0]):
                raise fail(line, "replicate_df", cell["replicate_df"],
                           "is not a whole number" if not df.is_integer() else
                           f"differs from the first row's {degrees[0]}: it is the "
                           "replicates' degrees of freedom, the same on every row")
            degrees.append(int(df))
        rows[question].append(record)
    out = {}
    for question, records in zip(survey.questions, rows, strict=True):
        table = pd.DataFrame.from_records(records, columns=_order(records))
        if sampling.weight is None:
            table["weight"] = table["n"].astype(float)
        table["group"] = table["group"].astype(object)
        table = _added_up(table)
        if degrees:
            table["replicate_df"] = degrees[0]
        out[question.id] = table
    return out


def _order(records: Sequence[dict]) -> list[str] | None:
    return list(records[0]) if records else None


def _added_up(table: pd.DataFrame) -> pd.DataFrame:
    """Rows with the same keys added up (a table counted per partition and concatenated)."""
    sums = [*(c for c in ("weight", "n", "weight2") if c in table.columns),
            *(c for c in table.columns if replicate_column(str(c)))]
    keys = [c for c in table.columns if c not in sums]
    if table.empty:
        return table
    return table.groupby(keys, sort=False, dropna=False, as_index=False)[sums].sum()


def _number(text: str, line: int, column: str, fail, what: str, positive: bool) -> float:
    try:
        value = float(text.strip())
    except ValueError:
        raise fail(line, column, text, f"is not a number: {what} is a number "
                   + ("above 0" if positive else "of 0 or more")) from None
    if not math.isfinite(value) or (positive and value <= 0):
        raise fail(line, column, text, f"is not a number above 0 ({what})")
    if not math.isfinite(value) or value < 0:
        raise fail(line, column, text, f"is not a number of 0 or more ({what})")
    return value
