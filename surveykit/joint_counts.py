"""Answers to several questions, cross-classified: the interface between storage and the joint
analysis, as :class:`surveykit.counts.Counts` is for one question.

A respondent who answered questions a and b in groups (g_a, g_b) with
responses (r_a, r_b) adds one to ``table[(g_a, g_b)][(r_a, r_b)]``. The
joint estimator (:func:`surveykit.estimation.joint.joint_from_counts`)
needs nothing else, so a store can produce these counts with one GROUP BY
and the math never sees a row.

>>> c = JointCounts.from_mapping(("a", "b"), {("1", "1"): {("yes", "no"): 3, ("no", "no"): 5}})
>>> c.total, c.get(("1", "1"), ("yes", "no"))
(8, 3)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from surveykit.counts import check_count as _count
from surveykit.errors import ParameterError

__all__ = ["MAX_QUESTIONS", "JointCounts"]

#: Questions one joint analysis takes.
MAX_QUESTIONS = 4


def _labels(where: str, key: object, size: int) -> tuple[str, ...]:
    if isinstance(key, str) or not isinstance(key, Sequence) or len(key) != size:
        raise ParameterError(f"{where} ({key!r}) must list one label per question ({size})")
    return tuple(str(label) for label in key)


@dataclass(frozen=True)
class JointCounts:
    """``table[groups][responses] = n``: ``groups`` and ``responses`` are tuples with one
    label per question, in the order of ``questions``."""

    questions: tuple[str, ...]
    table: Mapping[tuple[str, ...], Mapping[tuple[str, ...], int]]

    @classmethod
    def from_mapping(cls, questions: Sequence[str],
                     table: Mapping[Sequence[object], Mapping[Sequence[object], object]]
                     ) -> JointCounts:
        """Validated counts; labels become text and repeated cells add up."""
        names = tuple(str(q) for q in questions)
        if len(names) < 1 or len(set(names)) != len(names):
            raise ParameterError(f"questions ({list(names)!r}) must be distinct names")
        frozen: dict[tuple[str, ...], dict[tuple[str, ...], int]] = {}
        for groups, row in table.items():
            key = _labels("groups", groups, len(names))
            if not isinstance(row, Mapping):
                raise ParameterError(f"counts of groups {key} must map responses to counts")
            cells = frozen.setdefault(key, {})
            for responses, value in row.items():
                answer = _labels(f"responses in groups {key}", responses, len(names))
                cells[answer] = cells.get(answer, 0) + _count(
                    f"count of {answer} in groups {key}", value)
        return cls(names, MappingProxyType({k: MappingProxyType(v) for k, v in frozen.items()}))

    @classmethod
    def from_rows(cls, questions: Sequence[str], responses: Sequence[Sequence[object]],
                  groups: Sequence[Sequence[object]] | None = None) -> JointCounts:
        """Counts of rows: ``responses[i]`` (and ``groups[i]``, default group "1" for every
        question) are respondent i's labels, one per question.

        >>> JointCounts.from_rows(["a", "b"], [("yes", "no"), ("yes", "no")]).total
        2
        """
        size = len(questions)
        if groups is not None and len(groups) != len(responses):
            raise ParameterError(f"groups ({len(groups)} rows) and responses "
                                 f"({len(responses)} rows) must have one row per respondent")
        table: dict[tuple[str, ...], dict[tuple[str, ...], int]] = {}
        for i, answer in enumerate(responses):
            key = ("1",) * size if groups is None else _labels("groups", groups[i], size)
            row = table.setdefault(key, {})
            answer = _labels("responses", answer, size)
            row[answer] = row.get(answer, 0) + 1
        return cls.from_mapping(questions, table)

    @property
    def total(self) -> int:
        """Respondents counted."""
        return sum(sum(row.values()) for row in self.table.values())

    def get(self, groups: tuple[str, ...], responses: tuple[str, ...]) -> int:
        """The count of a cell (0 if absent)."""
        return int(self.table.get(tuple(groups), {}).get(tuple(responses), 0))

    def __iter__(self) -> Iterator[tuple[tuple[str, ...], tuple[str, ...], int]]:
        for groups, row in self.table.items():
            for responses, n in row.items():
                yield groups, responses, n

    def to_dict(self) -> dict[str, object]:
        """Plain data for JSON: the questions and one entry per non-empty cell."""
        return {"questions": list(self.questions),
                "cells": [{"groups": list(g), "responses": list(r), "count": n}
                          for g, r, n in self if n]}
