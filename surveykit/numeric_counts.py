"""NumericCounts: the sufficient statistics of numeric answers, per group.

For a numeric question the moment estimators need, per group, only the
number of answers n, their sum and their sum of squares, and the number of
"don't know" answers (:mod:`surveykit.estimation.quantitative`). Wherever
answers are stored or counted (SQL, DuckDB over files, a cluster), the
result is a :class:`NumericCounts`, and the estimate costs O(groups), not
O(answers). Maximum likelihood, quantiles and regression need the answers
themselves.

>>> c = NumericCounts.from_answers([3.0, 5.0, 10.0])
>>> c.get("1")
NumericSums(n=3, total=18.0, sum_squares=134.0, dont_know=0)

This module is pure: it imports nothing but numpy, surveykit.counts and surveykit.errors.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from surveykit.counts import check_count as _count  # one check of a count, shared
from surveykit.errors import ParameterError

__all__ = ["NumericCounts", "NumericQuestionCounts", "NumericSums"]


def _sum(where: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ParameterError(f"{where} ({value!r}) must be a number")
    number = float(value)
    if not math.isfinite(number):
        raise ParameterError(f"{where} ({number}) must be finite")
    return number


def _group_codes(groups: Sequence[object] | np.ndarray | None, n: int
                 ) -> tuple[list[str], np.ndarray]:
    """Group labels as text in order of first appearance, and each answer's label index."""
    if groups is None:
        return ["1"], np.zeros(n, dtype=int)
    raw = np.asarray(groups, dtype=object if not isinstance(groups, np.ndarray) else None)
    raw = raw.reshape(-1)
    if raw.size != n:
        raise ParameterError(f"groups has {raw.size} entries for {n} answers")
    try:
        uniques, first, inverse = np.unique(raw, return_index=True, return_inverse=True)
    except TypeError:        # labels of mixed types: compare them as text
        return _group_codes([str(g) for g in raw], n)
    order = np.argsort(first, kind="stable")
    rank = np.empty(order.size, dtype=int)
    rank[order] = np.arange(order.size)
    return [str(uniques[i]) for i in order], rank[inverse.reshape(-1)]


@dataclass(frozen=True)
class NumericSums:
    """One group's numeric answers: ``n`` answers with sum ``total`` and sum of squares
    ``sum_squares``, and ``dont_know`` "don't know" answers."""

    n: int
    total: float
    sum_squares: float
    dont_know: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "n", _count("n", self.n))
        object.__setattr__(self, "total", _sum("sum", self.total))
        object.__setattr__(self, "sum_squares", _sum("sum of squares", self.sum_squares))
        object.__setattr__(self, "dont_know", _count("dont_know", self.dont_know))
        if self.n == 0 and (self.total != 0 or self.sum_squares != 0):
            raise ParameterError("a group without answers must have sum and sum of squares 0")
        if not (math.isfinite(self.total * self.total)
                and math.isfinite(self.n * self.sum_squares)):
            raise ParameterError(
                f"sum ({self.total:g}) and sum of squares ({self.sum_squares:g}) of {self.n} "
                "answers are too large to estimate from (their squares leave floating "
                "point); give the answers in a larger unit (thousands, millions)")
        # Cauchy-Schwarz: sum^2 <= n * sum of squares, up to rounding
        if self.sum_squares < 0 or self.total ** 2 > self.n * self.sum_squares * (1 + 1e-9) \
                + 1e-300:
            raise ParameterError(
                f"sum ({self.total:g}) and sum of squares ({self.sum_squares:g}) of {self.n} "
                "answers are inconsistent: sum^2 must not exceed n times the sum of squares")

    @classmethod
    def repeated(cls, value: float, times: int) -> NumericSums:
        """The sums of ``times`` answers equal to ``value`` (a GROUP BY row of answers).

        >>> NumericSums.repeated(2.5, 4)
        NumericSums(n=4, total=10.0, sum_squares=25.0, dont_know=0)
        """
        return cls(times, times * value, times * value * value, 0)

    @property
    def mean(self) -> float:
        """The mean answer (nan without answers)."""
        return self.total / self.n if self.n else math.nan

    @property
    def variance(self) -> float:
        """The sample variance of the answers, divisor n - 1 (nan with fewer than 2)."""
        if self.n < 2:
            return math.nan
        return max(self.sum_squares - self.total ** 2 / self.n, 0.0) / (self.n - 1)

    def __add__(self, other: NumericSums) -> NumericSums:
        return NumericSums(self.n + other.n, self.total + other.total,
                           self.sum_squares + other.sum_squares,
                           self.dont_know + other.dont_know)

    def to_dict(self) -> dict[str, float | int]:
        return {"n": self.n, "sum": self.total, "sum_squares": self.sum_squares,
                "dont_know": self.dont_know}


@dataclass(frozen=True)
class NumericCounts:
    """Numeric answers per group: ``table[group] = NumericSums`` (groups as text, in order).

    >>> c = NumericCounts.from_mapping({"1": {"n": 2, "sum": 3, "sum_squares": 5},
    ...                                 "2": {"n": 1, "sum": 4, "sum_squares": 16,
    ...                                       "dont_know": 1}})
    >>> c.answered, c.dont_know, c.total.mean
    (3, 1, 2.3333333333333335)
    """

    table: Mapping[str, NumericSums]

    @classmethod
    def from_mapping(cls, table: Mapping[object, Mapping[str, object] | NumericSums]
                     ) -> NumericCounts:
        """Validated counts from ``{group: {"n", "sum", "sum_squares", "dont_know"}}``."""
        frozen: dict[str, NumericSums] = {}
        for group, row in table.items():
            if isinstance(row, NumericSums):
                sums = row
            elif isinstance(row, Mapping):
                unknown = sorted(set(map(str, row)) - {"n", "sum", "sum_squares", "dont_know"})
                if unknown:
                    raise ParameterError(
                        f"numeric counts of group {group}: unknown key {unknown[0]!r}; the keys "
                        "are n, sum, sum_squares, dont_know")
                sums = NumericSums(row.get("n", 0), row.get("sum", 0.0),
                                   row.get("sum_squares", 0.0), row.get("dont_know", 0))
            else:
                raise ParameterError(f"numeric counts of group {group!r} must map n, sum, "
                                     "sum_squares and dont_know to numbers")
            key = str(group)
            frozen[key] = frozen[key] + sums if key in frozen else sums
        return cls(MappingProxyType(frozen))

    @classmethod
    def from_answers(cls, answers: Sequence[float] | np.ndarray, *,
                     groups: Sequence[object] | np.ndarray | None = None,
                     dont_know: Sequence[bool] | np.ndarray | None = None) -> NumericCounts:
        """The counts of numeric ``answers`` (NaN where ``dont_know`` is set), per ``groups``
        label (default: one group "1"). Missing answers (NaN without ``dont_know``) are left
        out.

        >>> NumericCounts.from_answers([1.0, np.nan, 2.0], dont_know=[False, True, False],
        ...                            groups=[1, 1, 2]).to_dict()["1"]
        {'n': 1, 'sum': 1.0, 'sum_squares': 1.0, 'dont_know': 1}
        """
        z = np.asarray(answers, dtype=float).reshape(-1)
        dk = np.zeros(z.size, dtype=bool) if dont_know is None else \
            np.asarray(dont_know, dtype=bool).reshape(-1)
        if dk.size != z.size:
            raise ParameterError(f"dont_know has {dk.size} entries for {z.size} answers")
        if np.any(np.isinf(z)):
            raise ParameterError("answers must be finite numbers")
        names, codes = _group_codes(groups, z.size)
        answered = ~np.isnan(z) & ~dk
        table: dict[str, NumericSums] = {}
        for code, label in enumerate(names):
            members = codes == code
            values = z[members & answered]
            sums = NumericSums(int(values.size), float(values.sum()),
                               float(np.dot(values, values)),
                               int(np.count_nonzero(members & dk)))
            table[label] = table[label] + sums if label in table else sums
        return cls(MappingProxyType(table))

    @property
    def groups(self) -> tuple[str, ...]:
        return tuple(self.table)

    def get(self, group: str) -> NumericSums:
        """The sums of ``group`` (empty if absent)."""
        return self.table.get(str(group), NumericSums(0, 0.0, 0.0, 0))

    @property
    def total(self) -> NumericSums:
        """The sums over all groups."""
        out = NumericSums(0, 0.0, 0.0, 0)
        for sums in self.table.values():
            out = out + sums
        return out

    @property
    def answered(self) -> int:
        """Numeric answers, over all groups."""
        return self.total.n

    @property
    def dont_know(self) -> int:
        """"Don't know" answers, over all groups."""
        return self.total.dont_know

    def __iter__(self) -> Iterator[tuple[str, NumericSums]]:
        return iter(self.table.items())

    def to_dict(self) -> dict[str, dict[str, float | int]]:
        """Plain nested dicts, for JSON."""
        return {group: sums.to_dict() for group, sums in self.table.items()}


@dataclass(frozen=True)
class NumericQuestionCounts:
    """Answers to one numeric question: :class:`NumericCounts` per group, plus ``missing``
    (respondents the survey knows who left it blank), as the store, DuckDB and Dask return
    it beside the choice questions' :class:`~surveykit.counts.QuestionCounts`.

    >>> q = NumericQuestionCounts("income", NumericCounts.from_answers([3.0, 5.0]), missing=1)
    >>> q.to_dict()["groups"]["1"]["sum"], q.answered(), q.dont_know
    (8.0, 2, 0)
    """

    question_id: str
    counts: NumericCounts
    missing: int = 0

    #: Tells the numeric counts from the choice ones where a list holds both.
    numeric = True

    def answered(self) -> int:
        """Answers given: numbers and "don't know", over all groups."""
        return self.counts.answered + self.counts.dont_know

    @property
    def dont_know(self) -> int:
        return self.counts.dont_know

    def to_dict(self) -> dict[str, object]:
        """``{"id", "type": "number", "n", "sum", "sum_squares", "dont_know", "missing",
        "groups": {group: {"n", "sum", "sum_squares", "dont_know"}}}``."""
        total = self.counts.total
        return {"id": self.question_id, "type": "number", **total.to_dict(),
                "missing": self.missing, "groups": self.counts.to_dict()}
