"""Randomized answers row by row: response codes, groups and each row's column of the design.

Regression works on rows, not counts: every respondent has covariates, one
randomized answer r and (for split-sample designs) a group g, and enters the
likelihood through the design's column P(r | state, g) for every true state.
:func:`code_answers` turns a column of answers (and of groups) into codes and
builds the matrices the likelihood needs, including the *direct-question
group*: respondents asked the same question without randomization (RRreg's
group 0; Heck and Moshagen 2018, Sec. 4.3), who answer their true category.

Answers are read the way imports read them (:mod:`surveykit.vocabulary`): any
case, y/n/1/0/true/false for yes/no designs, and the spellings of "don't know".
"Don't know" answers stay in the likelihood, where under a design with the
don't-know branch they carry no information about the true state; a "don't
know" that the design cannot produce (no branch, or the direct-question group)
is left out and counted, as :func:`surveykit.estimation.estimate` does.

This module is pure math: it imports nothing from storage, rendering or the CLI, nor pandas:
the store's reports import :func:`value_text` from it, and a text report must not pay for pandas
(issue 25). :func:`factorize` codes cells as ``pandas.factorize(sort=False)`` does.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from surveykit.designs.base import DONT_KNOW, Design
from surveykit.errors import ParameterError
from surveykit.vocabulary import canonical_spelling, response_spellings

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DIRECT_GROUP", "RowAnswers", "code_answers", "factorize", "value_text"]

#: The group name of respondents asked directly (RRreg codes them 0).
DIRECT_GROUP = "direct"
_DIRECT_SPELLINGS = {"0", "direct", "dq", "direct_question"}


def value_text(value: object) -> str:
    """A cell as the text it stands for: 1.0 -> "1", True -> "true", " Yes " -> " Yes ".

    >>> value_text(1.0), value_text(True), value_text("no")
    ('1', 'true', 'no')
    """
    if isinstance(value, bool | np.bool_):
        return "true" if value else "false"
    if isinstance(value, float | np.floating) and math.isfinite(value) \
            and float(value).is_integer():
        return str(int(value))
    return str(value)


def factorize(values: Sequence | np.ndarray | pd.Series) -> tuple[np.ndarray, list]:
    """Each cell's code and the distinct cells, in order of first appearance.

    The same codes and values as ``pandas.factorize(values, sort=False)`` on the cells as
    Python objects: cells equal in Python are one value (``1``, ``1.0`` and ``True`` are the
    first of them to appear), and missing cells (None, NaN, NaT, ``pandas.NA``) get code -1
    and are not among the values; an empty string is a value. tests/test_answers_factorize.py
    checks it against pandas on mixed and missing cells.

    >>> codes, values = factorize(["no", "yes", None, "no", float("nan"), ""])
    >>> codes.tolist(), values
    ([0, 1, -1, 0, -1, 2], ['no', 'yes', ''])
    """
    pandas = sys.modules.get("pandas")  # loaded already when ``values`` is a pandas object
    if pandas is not None and isinstance(values, pandas.Series | pandas.Index):
        # its own factorize: the same codes and values, 10x to 25x faster on a column of a
        # million cells (benchmarks/bench_regression.py codes two such columns per fit)
        codes, uniques = pandas.factorize(values, sort=False)
        return codes.astype(np.intp, copy=False), np.asarray(uniques, dtype=object).tolist()
    cells = np.asarray(values, dtype=object)
    present = ~_missing(cells)
    first_seen: dict = {}
    codes = np.full(cells.size, -1, dtype=np.intp)
    codes[present] = np.fromiter(
        (first_seen.setdefault(cell, len(first_seen)) for cell in cells[present].tolist()),
        dtype=np.intp, count=int(present.sum()))
    return codes, list(first_seen)


def _missing(cells: np.ndarray) -> np.ndarray:
    """Which cells of an object array are missing: None, or not equal to themselves (NaN, NaT)."""
    try:
        return np.equal(cells, None) | np.not_equal(cells, cells)
    except TypeError:  # pandas.NA: its comparisons are NA, which is neither true nor false
        return np.fromiter((_missing_cell(cell) for cell in cells.tolist()), dtype=bool,
                           count=cells.size)


def _missing_cell(cell: object) -> bool:
    if cell is None:
        return True
    try:
        return bool(cell != cell)
    except TypeError:
        return True


@dataclass(frozen=True, eq=False)
class RowAnswers:
    """Coded answers of the rows that enter the likelihood, and the design's arrays.

    ``responses[i]`` indexes ``response_labels`` and ``groups[i]`` indexes
    ``group_labels`` (the design's groups, then ``"direct"`` when some rows
    were asked directly). ``base`` (groups, responses, states) and ``slopes``
    (nuisance, groups, responses, states) are the design's matrix with the
    direct-question group appended. ``kept`` marks the input rows used;
    ``dont_know_left_out`` counts "don't know" answers the design cannot give.
    """

    design: Design
    responses: np.ndarray
    groups: np.ndarray
    group_labels: tuple[str, ...]
    base: np.ndarray
    slopes: np.ndarray
    kept: np.ndarray
    dont_know_left_out: int

    @property
    def n(self) -> int:
        """Rows in the likelihood."""
        return int(self.responses.size)

    @property
    def response_labels(self) -> tuple[str, ...]:
        return self.design.response_labels

    def group_sizes(self) -> dict[str, int]:
        """Rows per group, in ``group_labels`` order."""
        sizes = np.bincount(self.groups, minlength=len(self.group_labels))
        return {label: int(n) for label, n in zip(self.group_labels, sizes, strict=True)}

    def dont_know_count(self) -> int:
        """'Don't know' answers in the likelihood."""
        return int(np.sum(self.responses == self.response_labels.index(DONT_KNOW)))

    def row_matrix(self, eta: np.ndarray) -> np.ndarray:
        """P(answer of row i | state s) at nuisance values ``eta``: (rows, states)."""
        matrix = self.base + np.tensordot(eta, self.slopes, axes=1) if eta.size else self.base
        return matrix[self.groups, self.responses]

    def row_slopes(self) -> np.ndarray:
        """d P(answer of row i | state s) / d eta_j: (nuisance, rows, states)."""
        return self.slopes[:, self.groups, self.responses]


def code_answers(design: Design, answers: Sequence | np.ndarray | pd.Series, groups=None, *,
                 column: str = "answers", group_column: str = "group") -> RowAnswers:
    """Codes for ``answers`` (and ``groups``) under ``design``, with errors naming the column.

    >>> from surveykit.designs import Warner
    >>> rows = code_answers(Warner(p=0.7), ["yes", "No", 1, "dk"])
    >>> rows.responses.tolist(), rows.dont_know_left_out
    ([0, 1, 0], 1)
    """
    inverse, uniques = factorize(answers)
    labels = design.response_labels
    spellings = response_spellings(labels)
    code_of = np.empty(len(uniques), dtype=np.intp)
    for k, value in enumerate(uniques):
        raw = value_text(value)
        label = spellings.get(canonical_spelling(raw))
        if label is None:
            raise ParameterError(
                f"column {column!r} holds {raw!r}, which is not an answer of design "
                f"{design.model!r}; its answers are {', '.join(labels)}")
        code_of[k] = labels.index(label)
    if np.any(inverse < 0):
        raise ParameterError(f"column {column!r} has empty cells: drop those rows first")
    codes = code_of[inverse]
    n = codes.size
    group_labels = design.group_names
    if groups is None:
        if len(group_labels) > 1:
            raise ParameterError(
                f"design {design.model!r} has {len(group_labels)} groups: give the group "
                "column (--group COLUMN), which says which group each respondent was in")
        group_codes = np.zeros(n, dtype=np.intp)
    else:
        group_codes, group_labels = _group_codes(design, groups, group_column)
    base, slopes = _with_direct_group(design, group_labels)
    possible = np.any(base > 0, axis=2)
    if slopes.shape[0]:
        possible |= np.any(slopes != 0, axis=(0, 3))
    can_happen = possible[group_codes, codes]
    dont_know = labels.index(DONT_KNOW)
    bad = ~can_happen & (codes != dont_know)
    if np.any(bad):
        i = int(np.argmax(bad))
        where = f" in group {group_labels[group_codes[i]]}" if len(group_labels) > 1 else ""
        raise ParameterError(
            f"column {column!r} holds {labels[codes[i]]!r}{where} (row {i + 1}), an answer "
            f"design {design.model!r} never gives there; check the design's parameters, the "
            "group column or the answers")
    kept = can_happen
    return RowAnswers(design=design, responses=codes[kept], groups=group_codes[kept],
                      group_labels=group_labels, base=base, slopes=slopes, kept=kept,
                      dont_know_left_out=int(np.sum(~kept)))


def _group_codes(design: Design, values: Sequence | np.ndarray | pd.Series, column: str
                 ) -> tuple[np.ndarray, tuple[str, ...]]:
    names = design.group_names
    inverse, uniques = factorize(values)
    code_of = np.empty(len(uniques), dtype=np.intp)
    direct = False
    for k, value in enumerate(uniques):
        raw = value_text(value).strip()
        if canonical_spelling(raw) in _DIRECT_SPELLINGS:
            code_of[k] = len(names)
            direct = True
            continue
        try:
            code_of[k] = design.group_index(raw)
        except ParameterError:
            allowed = ", ".join(f"{i} ({name})" if name != str(i) else str(i)
                                for i, name in enumerate(names, start=1))
            raise ParameterError(
                f"column {column!r} holds {raw!r}, which is not a group of design "
                f"{design.model!r}: its groups are {allowed}, and 0 for respondents asked "
                "directly") from None
    if np.any(inverse < 0):
        raise ParameterError(f"column {column!r} has empty cells: drop those rows first")
    codes = code_of[inverse]
    return codes, names + ((DIRECT_GROUP,) if direct else ())


def _with_direct_group(design: Design, group_labels: tuple[str, ...]
                       ) -> tuple[np.ndarray, np.ndarray]:
    """The design's arrays, with the direct question appended as a last group if used.

    Asked directly, a respondent in category c answers c. A behavioural state
    (the CDM's cheaters) answers as it does under randomization, which must
    then be the same in every group (cheaters answer "no" whatever they are told).
    """
    s = design.structure
    if len(group_labels) == len(s.groups):
        return s.base, s.slopes
    responses, states = s.responses, s.states
    direct = np.zeros((len(responses), len(states)))
    for j, state in enumerate(states):
        if state in s.categories:
            if state not in responses:
                raise ParameterError(
                    f"design {design.model!r} answers {', '.join(responses[:-1])}, not the "
                    f"categories {', '.join(s.categories)}: it cannot be combined with "
                    "respondents asked directly (group 0)")
            direct[responses.index(state), j] = 1.0
        else:
            column = s.base[:, :, j]
            if np.ptp(column, axis=0).max() > 0 or np.any(s.slopes[:, :, :, j] != 0):
                raise ParameterError(
                    f"design {design.model!r}: respondents in state {state!r} answer "
                    "differently by group, so how they answer a direct question is unknown")
            answered = column[0, :-1] / column[0, :-1].sum()
            direct[:-1, j] = answered
    base = np.concatenate([s.base, direct[None]], axis=0)
    slopes = np.concatenate([s.slopes, np.zeros((s.slopes.shape[0], 1) + direct.shape)],
                            axis=1)
    return base, slopes
