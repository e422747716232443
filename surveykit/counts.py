"""Counts: how many respondents gave each response, per group. The interface between storage
and estimation.

Estimation needs only counts per (group, response), so wherever answers are
stored or counted (SQL, a CSV, a counts file) the result is a :class:`Counts`,
and the math never sees a row.

>>> c = Counts.from_mapping({"1": {"yes": 30, "no": 50}, "2": {"yes": 12}})
>>> c.total, c.get("2", "no")
(92, 0)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from surveykit.errors import ParameterError

__all__ = ["AnswerTotals", "Counts", "QuestionCounts", "check_count", "plain_counts"]


def check_count(where: str, value: object) -> int:
    """``value`` as a count: a whole number (an integral float too), not negative; else a
    one-line error naming ``where`` and the value.

    >>> check_count("yes", 12.0)
    12
    """
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        if isinstance(value, float | np.floating) and float(value).is_integer():
            value = int(value)
        else:
            raise ParameterError(f"{where} ({value!r}) must be a whole number (a count)")
    if value < 0:
        raise ParameterError(f"{where} ({value}) must not be negative")
    return int(value)


@dataclass(frozen=True)
class Counts:
    """Response counts per group: ``table[group][response] = n`` (group and response labels
    as text; groups in the order given)."""

    table: Mapping[str, Mapping[str, int]]

    @classmethod
    def from_mapping(cls, table: Mapping[object, Mapping[object, object]]) -> Counts:
        """Validated counts from ``{group: {response: n}}``; labels become text."""
        frozen: dict[str, Mapping[str, int]] = {}
        for group, row in table.items():
            if not isinstance(row, Mapping):
                raise ParameterError(f"counts of group {group!r} must map responses to counts")
            cells: dict[str, int] = {}
            for label, value in row.items():
                key = str(label)
                cells[key] = cells.get(key, 0) + check_count(
                    f"count of {key!r} in group {group}", value)
            frozen[str(group)] = MappingProxyType(cells)
        return cls(MappingProxyType(frozen))

    @classmethod
    def single(cls, row: Mapping[object, object], group: str = "1") -> Counts:
        """Counts of a one-group design."""
        return cls.from_mapping({group: row})

    @property
    def groups(self) -> tuple[str, ...]:
        """The group labels, in order."""
        return tuple(self.table)

    @property
    def total(self) -> int:
        """All responses counted."""
        return sum(sum(row.values()) for row in self.table.values())

    def get(self, group: str, response: str) -> int:
        """The count of ``response`` in ``group`` (0 if absent)."""
        return int(self.table.get(group, {}).get(response, 0))

    def __iter__(self) -> Iterator[tuple[str, str, int]]:
        for group, row in self.table.items():
            for response, n in row.items():
                yield group, response, n

    def to_dict(self) -> dict[str, dict[str, int]]:
        """Plain nested dicts, for JSON."""
        return {group: dict(row) for group, row in self.table.items()}


def plain_counts(table: object) -> Mapping:
    """Counts as a mapping: a mapping stays as it is; a pandas Series indexed by response
    (one group) or by (group, response), or a DataFrame with a row per group and a column
    per response (``pd.crosstab(df.group, df.answer)``), becomes nested dicts; anything
    else is refused. pandas is recognized by shape (``ndim``, ``index``), so this module
    does not import it.

    >>> import pandas as pd
    >>> plain_counts(pd.Series({"yes": 30, "no": 50}))
    {'yes': 30, 'no': 50}
    >>> plain_counts(pd.DataFrame({"yes": [60, 35], "no": [40, 65]}, index=[1, 2]))
    {1: {'yes': 60, 'no': 40}, 2: {'yes': 35, 'no': 65}}
    """
    if isinstance(table, Mapping):
        return table
    ndim = getattr(table, "ndim", None)
    if ndim not in (1, 2) or not hasattr(table, "index") or not hasattr(table, "items"):
        raise ParameterError(
            f"counts ({type(table).__name__}) must be {{group: {{response: n}}}}, "
            "{response: n}, a pandas Series or a DataFrame (a row per group, a column per "
            "response)")
    if ndim == 1:
        levels = table.index.nlevels
        if levels == 1:
            return {label: _cell(value, f"count of {label!r}")
                    for label, value in table.items()}
        if levels != 2:
            raise ParameterError(
                f"a Series of counts ({levels} index levels) is indexed by response, or by "
                "(group, response)")
        nested: dict[object, dict[object, object]] = {}
        for (group, label), value in table.items():
            nested.setdefault(group, {})[label] = _cell(
                value, f"count of {label!r} in group {group}")
        return nested
    return {group: {label: _cell(value, f"count of {label!r} in group {group}")
                    for label, value in row.items()}
            for group, row in table.to_dict(orient="index").items()}


def _cell(value: object, where: str) -> object:
    """A pandas cell; a missing one (NaN, as unstack leaves it) is refused with the fix."""
    if isinstance(value, float | np.floating) and value != value:
        raise ParameterError(
            f"{where} is missing (NaN); fill the missing cells with 0, e.g. "
            ".unstack(fill_value=0) or .fillna(0)")
    return value


class AnswerTotals:
    """A question's answers over all groups, for the classes that hold its ``counts``
    (:class:`QuestionCounts`, the report's question).

    >>> QuestionCounts(question_id="q", missing=0, counts=Counts.from_mapping(
    ...     {"1": {"yes": 3, "no": 4}, "2": {"yes": 1, "dont_know": 2}})).yes
    4
    """

    counts: Counts

    def total(self, label: str) -> int:
        """The count of ``label`` over all groups."""
        return sum(n for _, response, n in self.counts if response == label)

    @property
    def yes(self) -> int:
        """Answers "yes", over all groups."""
        return self.total("yes")

    @property
    def no(self) -> int:
        """Answers "no", over all groups."""
        return self.total("no")

    @property
    def dont_know(self) -> int:
        """Answers "don't know", over all groups."""
        return self.total("dont_know")

    @property
    def answered(self) -> int:
        """Every answer ("don't know" included), over all groups."""
        return self.counts.total


@dataclass(frozen=True)
class QuestionCounts(AnswerTotals):
    """Answers to one question: counts per group and response, plus missing.

    ``counts`` maps the group number ("1", "2", ...) to response label to
    count (the n1, n2, n3 of the paper's Eq. 2 for a one-group yes/no design).
    ``missing`` counts respondents the survey knows (they answered at least
    one of its questions in some import) who left this question blank.
    Respondents with an issued id who answered nothing are non-respondents,
    not missing.
    """

    question_id: str
    counts: Counts
    missing: int

    def in_order(self, responses: Sequence[str]) -> QuestionCounts:
        """The same counts with groups in number order and responses in ``responses``' order
        (a design's ``response_labels``; labels it lacks follow, alphabetically), so that
        counts read from the store and from files print alike.

        >>> q = QuestionCounts(question_id="q", missing=0, counts=Counts.from_mapping(
        ...     {"2": {"no": 1}, "1": {"dont_know": 2, "yes": 3, "no": 4}}))
        >>> [(g, r) for g, r, _ in q.in_order(("yes", "no", "dont_know")).counts]
        [('1', 'yes'), ('1', 'no'), ('1', 'dont_know'), ('2', 'no')]
        """
        rank = {label: i for i, label in enumerate(responses)}

        def group_key(group: str) -> tuple[int, int, str]:
            return (0, int(group), "") if group.isdigit() else (1, 0, group)

        table = {group: {label: self.counts.table[group][label]
                         for label in sorted(self.counts.table[group],
                                             key=lambda x: (rank.get(x, len(rank)), x))}
                 for group in sorted(self.counts.table, key=group_key)}
        return QuestionCounts(question_id=self.question_id, counts=Counts.from_mapping(table),
                              missing=self.missing)

    def answers(self) -> dict[str, int]:
        """Response label -> count over all groups."""
        totals: dict[str, int] = {}
        for _, response, n in self.counts:
            totals[response] = totals.get(response, 0) + n
        return totals

    def to_dict(self) -> dict[str, object]:
        return {"id": self.question_id, "yes": self.yes, "no": self.no,
                "dont_know": self.dont_know, "missing": self.missing,
                "answers": self.answers(), "groups": self.counts.to_dict()}
