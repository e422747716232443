"""From what an engine's GROUP BY returns to counts: the one place raw cells become labels.

Every engine (DuckDB, Dask) runs the same two aggregations over the rows of
the files, in one scan:

* the **cells**: rows per (file, question cell, group cell, answer cell) as
  typed;
* the **respondents**: per respondent id, the answered rows and one bit per
  question answered (DuckDB keeps their OR, Dask their sum: either has n
  one-bits for n rows exactly when the n bits differ), from which the engine
  returns how many respondents answered at least one question and how many
  are *suspicious*: they may repeat a question, their id is empty, too long
  or needs trimming, or a question cell of theirs could not be coded. (DuckDB,
  without issued ids, keeps only the OR per respondent: the one-bits of all
  respondents fall short of the answered rows of the cells by the rows that
  repeat a question or do not code, and those rows are what it counts as
  suspicious, besides the respondents whose id needs a look.)

The distinct cells are few, so each is read here with the importer's own
rules (:mod:`surveykit.reading.cells`). When every cell reads and no
respondent may repeat a question, the counts are exact; otherwise
:func:`counts_from_tally` returns None and the caller counts exactly, row by
row (:mod:`surveykit.counting.exact`), which either finds the bad rows with
their lines or confirms the counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from surveykit.counting.sources import ResponseSource
from surveykit.counts import Counts, QuestionCounts
from surveykit.definition.survey import Question, Survey
from surveykit.numeric_counts import NumericCounts, NumericQuestionCounts, NumericSums
from surveykit.reading.cells import (
    NOT_A_GROUP,
    group_lookup,
    is_blank,
    question_lookup,
    read_answer,
    read_group,
    read_question,
)
from surveykit.reading.numbers import number_reader
from surveykit.vocabulary import canonical_spelling

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = ["BITS_PER_WORD", "NUMBER_PATTERN", "RawCells", "RawTally", "counts_from_tally",
           "question_codes", "question_counts", "word_count"]

#: How "don't know" is stored, for numeric questions as for choice ones.
_DONT_KNOW = "dont_know"

# Question bits: 32 questions a 64-bit word. Dask sums them, so a respondent would
# need 2**31 rows to overflow one; DuckDB ORs them (no overflow at all).
BITS_PER_WORD = 32


@dataclass(frozen=True)
class RawTally:
    """What an engine's aggregations return (see the module docstring).

    ``cells``: (file index, question cell, group cell, answer cell, rows,
    group of the issued ids of these rows: None when the ids were issued
    without a group or no ids are checked);
    ``respondents``: respondents with at least one answer; ``suspicious``:
    respondents (or, for DuckDB, rows) that need the exact path, 0 when none
    does (see the module docstring).
    """

    cells: Sequence[tuple[int, str | None, str | None, str | None, int, int | None]]
    respondents: int
    suspicious: int


def question_codes(survey: Survey) -> dict[str, int]:
    """Lower-case question id -> index: how engines code a trimmed, lower-cased question cell.

    Cells that lower-case to no id get -1 and send the count to the exact path,
    so a spelling only Python's case folding knows is still counted exactly.
    """
    return {question.id.lower(): index for index, question in enumerate(survey.questions)}


def word_count(survey: Survey) -> int:
    """How many 64-bit words hold one bit per question."""
    return max(1, -(-len(survey.questions) // BITS_PER_WORD))


def counts_from_tally(survey: Survey, sources: Sequence[ResponseSource], tally: RawTally, *,
                      decimal_comma: bool = False
                      ) -> list[QuestionCounts | NumericQuestionCounts] | None:
    """Counts per question, or None when some row needs the exact path.

    ``sources`` are the files counted (a file without data rows is an error
    the exact path reports). A CSV cell the engine read as NULL (it held the
    engine's null text) goes to the exact path, and so does a label that
    means "no answer" in a file (its profile's or its tool's): the engines
    took its row for an answer. A numeric question's cells are read as numbers
    (:mod:`surveykit.reading.numbers`); a cell that does not read goes to the exact path,
    which names it.
    """
    if tally.suspicious:
        return None
    questions = question_lookup(survey)
    groups = group_lookup(survey)
    spellings = [question.answer_spellings() for question in survey.questions]
    readers = [number_reader(question, decimal_comma=decimal_comma) if question.numeric
               else None
               for question in survey.questions]
    one_group = len(survey.groups) == 1
    tables: list[dict[str, dict[str, int]]] = [{} for _ in survey.questions]
    rows = [0] * len(sources)
    for file, question_cell, group_cell, answer_cell, n, issued_group in tally.cells:
        source = sources[file]
        rows[file] += n
        has_group = source.group is not None
        if source.table_kind == "csv" and (question_cell is None or answer_cell is None
                                           or (has_group and group_cell is None)):
            return None  # a cell the engine took for NULL: read it as the text it is
        question = read_question(questions, question_cell or "")
        if question is None:
            return None
        group = read_group(groups, group_cell) if has_group else None
        if group is NOT_A_GROUP:
            return None
        if group is not None and issued_group is not None and group != issued_group:
            return None  # the file's group is not the id's: an error the exact path says
        if group is None:
            group = issued_group
        if group is None:
            if not one_group:
                return None  # no group: an error the exact path says
            group = 1
        if is_blank(answer_cell):
            if answer_cell:
                return None  # only spaces: the engines took it for an answer
            continue  # a missing answer: counted through the respondents, never stored
        if source.missing_labels and canonical_spelling(answer_cell) in source.missing_labels:
            return None  # "no answer": the engines took it for an answer
        label = read_answer(spellings[question], answer_cell)
        if label is None and readers[question] is not None:
            label, _ = readers[question].read(answer_cell)
        if label is None:
            return None
        row = tables[question].setdefault(str(group), {})
        row[label] = row.get(label, 0) + n
    if not all(rows):
        return None  # a file with a header but no rows: an error, said by the exact path
    return question_counts(survey, tables, tally.respondents)


def question_counts(survey: Survey, tables: Sequence[dict[str, dict[str, int]]],
                    respondents: int) -> list[QuestionCounts | NumericQuestionCounts]:
    """The counts of each question (survey order) from answers per group and label (a
    numeric question's labels are its numbers in stored form, and "dont_know"), ``missing``
    being ``respondents`` less the question's answers: what every engine returns.
    """
    return [_numeric(question, table, respondents) if question.numeric else
            QuestionCounts(question_id=question.id, counts=Counts.from_mapping(table),
                           missing=respondents - sum(sum(g.values()) for g in table.values()))
            for question, table in zip(survey.questions, tables, strict=True)]


def _numeric(question: Question, table: dict[str, dict[str, int]], respondents: int
             ) -> NumericQuestionCounts:
    """A numeric question's sums per group from its answers' distinct values and counts."""
    groups: dict[str, NumericSums] = {}
    answered = 0
    for group, labels in table.items():
        sums = NumericSums(0, 0.0, 0.0, labels.get(_DONT_KNOW, 0))
        # in sorted order: the same float sums from the same values, whatever the engine
        for label, n in sorted(labels.items()):
            if label != _DONT_KNOW:
                sums = sums + NumericSums.repeated(float(label), n)
            answered += n
        groups[group] = sums
    return NumericQuestionCounts(question_id=question.id,
                                 counts=NumericCounts.from_mapping(groups),
                                 missing=respondents - answered)


# -- the weighted cells of a sampled survey (surveykit.counting.weighted_files) --------------

#: A number cell the fast path reads (a subset of what the importer's float() reads: plain
#: digits, a dot, an exponent); any other text sends the files to the importer.
NUMBER_PATTERN = r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?"


@dataclass(frozen=True, kw_only=True, eq=False)
class RawCells:
    """What an engine returns: ``cells`` (columns ``qi``, ``f``, the design keys, ``g``,
    ``a``, ``weight``, ``n``, ``weight2``, ``min_weight``, ``rep1`` ...: see the module
    docstring) and ``gram``, the sums over the respondents of the products of their
    replicate weights (R x R; None without replicates), whose rank gives survey's degrees
    of freedom (:func:`surveykit.sampling.counts.gram_rank`)."""

    cells: pd.DataFrame
    gram: np.ndarray | None
