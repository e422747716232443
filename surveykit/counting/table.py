"""Counts tables: the counts of a survey as a file, written here or by any engine elsewhere.

A counts table is a CSV with the header ``survey,question,group,response,count``
and one row per (question, group, response) counted:

* ``survey``: the survey's name (one survey per file);
* ``question``: a question id (any case);
* ``group``: the group number (1, 2, ...) or name; empty for one-group surveys;
* ``response``: a response label of the question's design (``yes``, ``no``,
  ``dont_know``, ...; the answer spellings of an import are accepted too), or
  ``_missing``: then ``count`` is the number of respondents who answered some
  question of the survey but not this one (leave ``group`` empty);
* ``count``: a whole number >= 0.

Rows for the same (question, group, response) add up, so tables counted per
partition (a day, a shard) can be concatenated. Columns starting with ``_``
are ignored. The JSON that ``surveykit counts --format json`` prints is read
too. docs/scale.md has the SQL that makes this table in a warehouse.

>>> import io
>>> from surveykit.definition.survey import parse_survey
>>> survey = parse_survey('''name = "s"
... title = "S"
... [mechanism]
... p = 0.7
... q = 0.2
... [[questions]]
... id = "cheated"
... text = "Ever?"''')
>>> text = "survey,question,group,response,count\\ns,cheated,,yes,30\\ns,cheated,,no,50\\n"
>>> read_counts_table(io.StringIO(text), survey, "counts.csv")[0].counts.to_dict()
{'1': {'yes': 30, 'no': 50}}
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from surveykit.counts import Counts, QuestionCounts
from surveykit.definition.survey import Survey
from surveykit.errors import (
    CsvImportError,
    CsvProblem,
    InputError,
    MissingInputError,
    ParameterError,
)
from surveykit.numeric_counts import NumericCounts, NumericQuestionCounts
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
from surveykit.vocabulary import canonical_spelling

__all__ = ["COLUMNS", "MISSING", "NUMERIC_ROWS", "read_counts_file", "read_counts_table",
           "survey_of_counts_file", "write_counts_table"]

COLUMNS = ("survey", "question", "group", "response", "count")
# The response of the rows that carry a question's missing count.
MISSING = "_missing"
#: The responses of a numeric question's rows: its numbers, their sum and sum of squares,
#: and its "don't know" answers, per group.
NUMERIC_ROWS = ("_n", "_sum", "_sum_squares", "dont_know")
_NUMERIC_KEYS = dict(zip(NUMERIC_ROWS, ("n", "sum", "sum_squares", "dont_know"), strict=True))


def write_counts_table(stream: TextIO, survey_name: str,
                       counts: Sequence[QuestionCounts | NumericQuestionCounts]) -> None:
    """Write ``counts`` as a counts table (header and rows; missing as ``_missing`` rows; a
    numeric question's sums as ``_n``, ``_sum``, ``_sum_squares`` and ``dont_know`` rows)."""
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(COLUMNS)
    for question in counts:
        if isinstance(question, NumericQuestionCounts):
            for group, sums in question.counts:
                for response, value in zip(NUMERIC_ROWS, (sums.n, repr(sums.total),
                                                          repr(sums.sum_squares),
                                                          sums.dont_know), strict=True):
                    writer.writerow((survey_name, question.question_id, group, response,
                                     value))
        else:
            for group, response, n in question.counts:
                writer.writerow((survey_name, question.question_id, group, response, n))
        writer.writerow((survey_name, question.question_id, "", MISSING, question.missing))


def survey_of_counts_file(path: str | Path) -> str:
    """The survey a counts file (CSV or JSON) names, to look its definition up."""
    path = Path(path)
    text = _read_text(path)
    if path.suffix.lower() == ".json":
        name = _json_object(text, path).get("survey")
    else:
        rows = csv.DictReader(io.StringIO(text))
        first = next(rows, None) or {}
        name = {key.strip().casefold(): value for key, value in first.items()
                if isinstance(key, str)}.get("survey")
    if not isinstance(name, str) or not name.strip():
        raise CsvImportError(str(path), [], summary=(
            f"{path} names no survey: a counts table has the columns {', '.join(COLUMNS)} and "
            "at least one row"))
    return name.strip()


def read_counts_file(path: str | Path, survey: Survey) -> list[QuestionCounts]:
    """Counts per question (in survey order) from a counts table (CSV) or counts JSON."""
    path = Path(path)
    text = _read_text(path)
    if path.suffix.lower() == ".json":
        return _read_json(_json_object(text, path), survey, path)
    return read_counts_table(io.StringIO(text), survey, str(path))


def read_counts_table(stream: TextIO, survey: Survey, name: str) -> list[QuestionCounts]:
    """Counts per question from a counts table; every bad row is listed with its line."""
    reader = csv.reader(stream)
    header = [cell.strip().casefold() for cell in next(reader, [])]
    used = {column: i for i, column in enumerate(header) if column and not column.startswith("_")}
    lacking = [column for column in COLUMNS if column not in used]
    if lacking:
        raise CsvImportError(name, [CsvProblem(1, None, None, (
            f"a counts table needs the columns {', '.join(COLUMNS)}; missing: "
            f"{', '.join(lacking)}"))], summary=f"{name}: wrong header; nothing was read")
    questions, groups = question_lookup(survey), group_lookup(survey)
    spellings = [question.answer_spellings() for question in survey.questions]
    tables: list[dict[str, dict[str, int]]] = [{} for _ in survey.questions]
    missing = [0] * len(survey.questions)
    problems: list[CsvProblem] = []
    for fields in reader:
        line = reader.line_num
        if not any(cell.strip() for cell in fields):
            continue
        if len(fields) != len(header):
            problems.append(CsvProblem(line, None, None, (
                f"the row has {len(fields)} fields but the header has {len(header)}")))
            continue
        cell = {column: fields[i] for column, i in used.items()}
        problem = _read_row(cell, survey, questions, groups, spellings, tables, missing)
        if problem is not None:
            problems.append(CsvProblem(line, *problem))
    if problems:
        raise CsvImportError(name, problems, summary=(
            f"{len(problems)} bad row{'s' if len(problems) != 1 else ''} in {name}; "
            "nothing was read"))
    return _question_counts(survey, tables, missing)


def _read_row(cell, survey, questions, groups, spellings, tables, missing
              ) -> tuple[str, str, str] | None:
    """Add one row to ``tables``/``missing``, or return (column, value, reason)."""
    if cell["survey"].strip() != survey.name:
        return ("survey", cell["survey"], f"this table is for survey {survey.name!r} (one "
                "survey per counts table)")
    question = read_question(questions, cell["question"])
    if question is None:
        return ("question", cell["question"], unknown_question_reason(survey, cell["question"]))
    raw_count = cell["count"].strip()
    numeric = survey.questions[question].numeric
    key = _NUMERIC_KEYS.get(canonical_spelling(cell["response"]).replace(" ", "_")
                            if numeric else "")
    if key in ("sum", "sum_squares"):
        try:
            value = float(raw_count)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            return ("count", raw_count, f"the {key} of a numeric question is a number")
    try:
        n = int(raw_count)
    except ValueError:
        n = -1
    if n < 0 and key not in ("sum", "sum_squares"):
        return ("count", raw_count, "a count is a whole number >= 0")
    if cell["response"].strip() == MISSING:
        missing[question] += n
        return None
    group = read_group(groups, cell["group"])
    if group is NOT_A_GROUP:
        return ("group", cell["group"], not_a_group_reason(survey))
    if group is None:
        if len(survey.groups) > 1:
            return ("group", cell["group"], "the group is empty; this survey has groups "
                    f"({', '.join(survey.groups)})")
        group = 1
    if numeric:
        if key is None:
            return ("response", cell["response"], "a numeric question's rows are "
                    f"{', '.join(NUMERIC_ROWS)} (per group) and {MISSING}")
        row = tables[question].setdefault(str(group), {})
        row[key] = row.get(key, 0) + (value if key in ("sum", "sum_squares") else n)
        return None
    label = None if is_blank(cell["response"]) else read_answer(spellings[question],
                                                                cell["response"])
    if label is None:
        allowed = ", ".join(survey.questions[question].design.response_labels)
        return ("response", cell["response"], f"not a response of this question's design "
                f"({allowed}, or {MISSING} for the missing count)")
    row = tables[question].setdefault(str(group), {})
    row[label] = row.get(label, 0) + n
    return None


def _question_counts(survey: Survey, tables, missing
                     ) -> list[QuestionCounts | NumericQuestionCounts]:
    return [NumericQuestionCounts(question_id=question.id,
                                  counts=NumericCounts.from_mapping(table), missing=gone)
            if question.numeric else
            QuestionCounts(question_id=question.id, counts=Counts.from_mapping(table),
                           missing=gone)
            for question, table, gone in zip(survey.questions, tables, missing, strict=True)]


def _read_json(data: dict, survey: Survey, path: Path) -> list[QuestionCounts]:
    if data.get("survey") != survey.name:
        raise ParameterError(f"{path} counts survey {data.get('survey')!r}, not "
                             f"{survey.name!r}")
    entries = data.get("questions")
    if not isinstance(entries, list):
        raise ParameterError(f"{path}: 'questions' must be a list of {{id, groups, missing}}")
    rows = io.StringIO()
    writer = csv.writer(rows, lineterminator="\n")
    writer.writerow(COLUMNS)
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("groups", {}), dict):
            raise ParameterError(f"{path}: each question is an object with id, groups "
                                 "({group: {response: count}}) and missing")
        numeric = entry.get("type") == "number"
        for group, responses in entry.get("groups", {}).items():
            for response, n in dict(responses).items():
                if numeric:  # {"n", "sum", "sum_squares", "dont_know"}: the table's rows
                    response = {v: k for k, v in _NUMERIC_KEYS.items()}.get(response, response)
                writer.writerow((survey.name, entry.get("id", ""), group, response, n))
        writer.writerow((survey.name, entry.get("id", ""), "", MISSING,
                         entry.get("missing", 0)))
    rows.seek(0)
    return read_counts_table(rows, survey, str(path))


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise MissingInputError(f"--counts-file {str(path)!r}: no such file; check the path"
                                ) from None
    except OSError as error:
        raise InputError(f"--counts-file {str(path)!r}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise InputError(f"--counts-file {str(path)!r} is not UTF-8 text; save it as UTF-8"
                         ) from None


def _json_object(text: str, path: Path) -> dict:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ParameterError(f"{path} is not JSON ({error.msg} at line {error.lineno})") from None
    if not isinstance(data, dict):
        raise ParameterError(f"{path}: a counts JSON is an object with survey and questions")
    return data
