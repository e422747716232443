"""One step of a numeric design's protocol: what a respondent may be told to report.

A numeric design (:mod:`surveykit.designs.quantitative`) tells each respondent, with an
exact probability, one :class:`Step`: report W * (c * y + k * U) + V for the true value
y and scrambling numbers W, U, V drawn from known devices (or "don't know"). The design
and its privacy loss (:mod:`surveykit.designs.quantitative_privacy`) both read steps.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import numpy as np

__all__ = ["Step", "StepKind"]

StepKind = Literal["truthful", "draw", "scramble", "unrelated", "dont_know"]


def _number_text(value: Fraction | float) -> str:
    value = Fraction(value)
    return str(value.numerator) if value.denominator == 1 else f"{float(value):g}"


@dataclass(frozen=True)
class Step:
    """One thing a respondent may be told to do: report W * (c * y + k * U) + V.

    ``multiplier``, ``inner`` and ``offset`` name the scrambling variables
    W, U and V in the protocol's ``scramblers`` (None: W = 1, U = 0, V = 0);
    ``coefficient`` is c, ``inner_coefficient`` k.

    >>> Step("scramble", Fraction(1), coefficient=Fraction(1), multiplier="S1",
    ...      offset="S2").formula()
    'y * S1 + S2'
    """

    kind: StepKind
    probability: Fraction
    coefficient: Fraction = Fraction(0)
    multiplier: str | None = None
    inner: str | None = None
    inner_coefficient: Fraction = Fraction(1)
    offset: str | None = None

    @property
    def code(self) -> str:
        """The step's stable name where instruction codes are kept (the randomizer audit's
        totals): its kind, as a categorical instruction's ``code``.

        >>> Step("draw", Fraction(1, 2), offset="S").code
        'draw'
        """
        return self.kind

    @property
    def depends_on_value(self) -> bool:
        """Whether the answer depends on the true value (c != 0)."""
        return self.kind != "dont_know" and self.coefficient != 0

    @property
    def scrambler_names(self) -> tuple[str, ...]:
        return tuple(name for name in (self.multiplier, self.inner, self.offset) if name)

    def formula(self) -> str:
        """The reported number as a formula in y (the true value) and the scramblers."""
        if self.kind == "dont_know":
            return "don't know"
        inside = []
        if self.coefficient != 0:
            c = self.coefficient
            inside.append("y" if c == 1 else f"{_number_text(c)} y")
        if self.inner:
            k = self.inner_coefficient
            inside.append(self.inner if k == 1 else f"{_number_text(k)} {self.inner}")
        if self.multiplier:
            if not inside:
                core = "0"
            elif len(inside) == 1 and " " not in inside[0]:
                core = f"{inside[0]} * {self.multiplier}" if inside[0] == "y" \
                    else f"{self.multiplier} * {inside[0]}"
            else:
                core = f"{self.multiplier} * ({' + '.join(inside)})"
        else:
            core = " + ".join(inside)
        if self.offset:
            core = f"{core} + {self.offset}" if core else self.offset
        return core or "0"

    def text(self) -> str:
        """The instruction in plain words."""
        if self.kind == "truthful":
            return "Report your true value."
        if self.kind == "dont_know":
            return "Answer \"don't know\"."
        if self.kind == "unrelated":
            return f"Report your true answer to the unrelated question ({self.offset})."
        if self.kind == "draw":
            return f"Report the number you drew ({self.formula()}), whatever your true value."
        return f"Report {self.formula()}, where y is your true value."

    def answer(self, y: np.ndarray, draws: Mapping[str, np.ndarray]) -> np.ndarray:
        """The reported numbers for true values ``y`` and scrambler draws (same length)."""
        value = float(self.coefficient) * y
        if self.inner:
            value = value + float(self.inner_coefficient) * draws[self.inner]
        if self.multiplier:
            value = draws[self.multiplier] * value
        if self.offset:
            value = value + draws[self.offset]
        return value

    def span(self, supports: Mapping[str, tuple[float, float]], values: tuple[float, float]
             ) -> tuple[float, float]:
        """The smallest and largest number this step's answer W (c y + k U) + V can take for
        true values y in ``values`` (low, high), with each scrambler over its support
        (``supports``: name -> (lowest, highest)): interval arithmetic, exact because each
        variable appears once; 0 times an infinite end is 0 (a scrambler that is 0 never
        scales to infinity).

        >>> Step("scramble", Fraction(1), Fraction(1), multiplier="S").span(
        ...     {"S": (0.5, 1.5)}, (-10.0, 100.0))
        (-15.0, 150.0)
        """
        span = _scaled(float(self.coefficient), values)
        if self.inner:
            inner = _scaled(float(self.inner_coefficient), supports[self.inner])
            span = (span[0] + inner[0], span[1] + inner[1])
        if self.multiplier:
            ends = [_times(x, y) for x in supports[self.multiplier] for y in span]
            span = (min(ends), max(ends))
        if self.offset:
            offset = supports[self.offset]
            span = (span[0] + offset[0], span[1] + offset[1])
        return span


def _times(a: float, b: float) -> float:
    return 0.0 if a == 0 or b == 0 else a * b


def _scaled(factor: float, span: tuple[float, float]) -> tuple[float, float]:
    ends = (_times(factor, span[0]), _times(factor, span[1]))
    return (min(ends), max(ends))
