"""Any design given by its matrix: P(response | true state) per group (RRreg's ``"custom"``).

``matrix[r][s]`` is the probability of response r for a respondent in true
state s (rows are responses, columns states, each column sums to 1), as in
RRreg's ``getPW``; a list of such matrices gives one per group. Labels
default to "0", "1", ... as in RRreg; name them ``states = ["no", "yes"]`` and
``responses = ["no", "yes"]`` to make it a yes/no design. The "don't know"
branch is the ``dont_know`` parameter, not a row of the matrix.

Respondents can be given the design on slips: each draws, ahead of time, the
response for every true state with the column's probabilities (the product
of the columns), which realizes the matrix exactly.

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

import numpy as np

from surveykit.designs.base import (
    BINARY_STATES,
    DONT_KNOW,
    Design,
    DontKnowBranch,
    Instruction,
    Protocol,
    Structure,
    as_fraction,
    check_dont_know,
    group_names,
    identifiable,
    instructions_with_dont_know,
    readonly,
    with_dont_know,
)
from surveykit.errors import ParameterError

__all__ = ["Custom"]

# Slips draw one response per state; beyond this many combinations no protocol is built.
_MAX_TABLE_INSTRUCTIONS = 4096
_SUM_TOLERANCE = 1e-9


def _labels(given: object, count: int, name: str) -> tuple[str, ...]:
    if given is None:
        return tuple(str(i) for i in range(count))
    if isinstance(given, str) or not isinstance(given, Sequence):
        raise ParameterError(f"{name} ({given!r}) must be a list of {count} labels")
    labels = tuple(str(label).strip() for label in given)
    if len(labels) != count:
        raise ParameterError(f"{name} ({list(labels)!r}) must have {count} labels, one per "
                             f"{'row' if name == 'responses' else 'column'} of the matrix")
    if any(not label for label in labels) or len({s.casefold() for s in labels}) != len(labels):
        raise ParameterError(f"{name} ({list(labels)!r}) must be distinct, non-empty labels")
    if DONT_KNOW in labels:
        raise ParameterError(f"{name} ({list(labels)!r}): use the dont_know parameter for the "
                             "don't-know branch instead of a row or column named dont_know")
    return labels


@dataclass(frozen=True, kw_only=True)
class Custom(DontKnowBranch, Design):
    """A design given by its matrix (rows: responses, columns: true states), one per group.

    >>> c = Custom(matrix=[[0.8, 0.3], [0.2, 0.7]], states=["no", "yes"], responses=["no", "yes"])
    >>> c.is_binary, c.matrix()[0].round(2).tolist()   # reordered to yes, no
    (True, [[0.7, 0.2], [0.3, 0.8], [0.0, 0.0]])
    """

    model: ClassVar[str] = "custom"
    summary: ClassVar[str] = "any matrix P(response | true state), one per group"

    matrix_: tuple = ()
    states: tuple[str, ...] | None = None
    responses: tuple[str, ...] | None = None
    groups: tuple[str, ...] | None = None
    dont_know: float = 0.0

    def __init__(self, *, matrix: object, states: object = None, responses: object = None,
                 groups: object = None, dont_know: float = 0.0) -> None:
        try:
            array = np.array(matrix, dtype=float)
        except (TypeError, ValueError):
            raise ParameterError(
                "matrix must be a table of numbers: rows are responses, columns true states, "
                "e.g. [[0.8, 0.3], [0.2, 0.7]]") from None
        if array.ndim == 2:
            array = array[None]
        if array.ndim != 3 or array.shape[1] < 2 or array.shape[2] < 2:
            raise ParameterError(
                f"matrix has shape {list(array.shape)}; give responses x states (at least "
                "2 x 2), or a list of such matrices, one per group")
        if not np.all(np.isfinite(array)) or np.any(array < 0) or np.any(array > 1):
            raise ParameterError("matrix entries must be probabilities between 0 and 1")
        sums = array.sum(axis=1)
        bad = np.argwhere(np.abs(sums - 1) > _SUM_TOLERANCE)
        if bad.size:
            g, s = bad[0]
            where = f" of group {g + 1}" if array.shape[0] > 1 else ""
            raise ParameterError(
                f"matrix: column {s + 1}{where} sums to {sums[g, s]:.6g}, not 1; each column "
                "lists the response probabilities of one true state")
        state_labels = _labels(states, array.shape[2], "states")
        response_labels = _labels(responses, array.shape[1], "responses")
        rows = [[list(map(float, row)) for row in group] for group in array]
        object.__setattr__(self, "matrix_", tuple(tuple(tuple(r) for r in g) for g in rows))
        object.__setattr__(self, "states", state_labels)
        object.__setattr__(self, "responses", response_labels)
        object.__setattr__(self, "groups", group_names(groups, array.shape[0], self.model))
        object.__setattr__(self, "dont_know", float(check_dont_know(dont_know)))
        if not identifiable(self._build()):
            raise ParameterError(
                "matrix does not identify the shares of the true states: some states (or "
                "mixtures of them) give the same response probabilities; change the matrix")

    def parameters(self) -> dict[str, object]:
        matrix = [list(map(list, g)) for g in self.matrix_]
        out: dict[str, object] = {"matrix": matrix[0] if len(matrix) == 1 else matrix,
                                  "states": list(self.states), "responses": list(self.responses)}
        if len(matrix) > 1:
            out["groups"] = list(self.groups)
        out["dont_know"] = self.dont_know
        return out

    def _build(self) -> Structure:
        array = np.array(self.matrix_, dtype=float)
        states, responses = self.states, self.responses
        # a yes/no design lists yes first, like every binary design
        if set(states) == set(BINARY_STATES):
            order = [states.index(s) for s in BINARY_STATES]
            array, states = array[:, :, order], BINARY_STATES
        if set(responses) == set(BINARY_STATES):
            order = [responses.index(r) for r in BINARY_STATES]
            array, responses = array[:, order, :], BINARY_STATES
        d = self.designed_dont_know
        protocol = tuple(self._table(array[g], states, responses, d)
                         for g in range(array.shape[0]))
        return Structure(
            states=states, categories=states, responses=(*responses, DONT_KNOW),
            groups=self.groups, base=readonly(with_dont_know(array, d)),
            slopes=readonly(np.zeros((0, *array.shape[:1], len(responses) + 1, len(states)))),
            nuisance=(), protocol=Protocol("per_state", protocol), privacy_states=states,
            state_parameters={})

    @staticmethod
    def _table(matrix: np.ndarray, states, responses, dont_know: Fraction
               ) -> tuple[Instruction, ...]:
        columns = [[(r, as_fraction(float(matrix[i, j]))) for i, r in enumerate(responses)
                    if matrix[i, j] > 0] for j in range(len(states))]
        if math.prod(len(c) for c in columns) > _MAX_TABLE_INSTRUCTIONS:
            return ()
        instructions = []
        for combination in itertools.product(*columns):
            probability = math.prod((share for _, share in combination), start=Fraction(1))
            table = tuple((s, r) for s, (r, _) in zip(states, combination, strict=True))
            instructions.append(Instruction("answer_table", probability, table=table))
        return instructions_with_dont_know(instructions, dont_know)
