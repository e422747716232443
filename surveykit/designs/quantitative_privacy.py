"""Privacy losses of numeric-answer designs, for a stated range of true values.

The paper's losses (Li, Zhou, Qin and Xu, Definitions 3.1 and 3.13) compare,
for two true values y and y', how likely an answer is under each. For a
numeric design the inputs are the possible true values (a range
[low, high], whole multiples of 10^-decimals or any real number) and the
outputs the possible numeric answers; "don't know" is the focal set of all
answers, as for categorical designs (:meth:`surveykit.designs.base.Design.to_evidential`):

* **Shafer**: eps_S = ln sup over y, y', z of P(z | y) / P(z | y'), with
  P the probability of answer z (decks and dice: answers take finitely many
  values) or its density (continuous scramblers). The don't-know branch has the
  same probability under every true value and leaves eps_S as it is.
* **Walley**: eps_W = ln sup over y, y' and events E of pl_y(E) / bel_y'(E);
  with a don't-know probability d, pl_y(E) = (1 - d) P(E | y) + d and
  bel_y'(E) = (1 - d) P(E | y') for an event E short of every answer. For
  finitely many answers the largest ratio is at a single answer (a union's
  ratio is a mediant of its members'), so
  eps_W = ln max ((1 - d) P(z | y) + d) / ((1 - d) P(z | y')). For
  continuous answers and d > 0 it is infinite (an event of tiny probability
  under y' is still plausible with d under y); with d = 0 it equals eps_S.

How the loss is computed (:func:`privacy_loss`), in this order:

1. an unknown distribution (``mix_unknown``'s unrelated question) or a
   scrambler of which only the mean and sd are stated (RRTCS's view): infinite,
   the worst case over the distributions allowed (a two-point scrambler pins
   the true value down);
2. an unbounded range: infinite (a larger true value shifts or stretches
   the answers without limit);
3. only decks and dice, true values on a grid: exact enumeration of
   P(z | y) for every true value on the grid and every answer, in rational
   arithmetic (``exact_ratio``); a continuous range with decks only: infinite
   (each true value gives finitely many answers, so an answer rules almost
   every other true value out);
4. continuous scramblers: infinite where an answer occurs with positive
   probability under one true value and not another: an exact value given with
   positive probability (the truthful branch: "an unbounded answer with a
   truthful branch reveals itself"), or a support edge that moves with the
   true value (uniform, exponential, dice); infinite for normal noise and for
   multiplicative noise with unbounded tails (the density ratio grows without
   bound in the tail); for additive Laplace noise the closed form
   |c| (high - low) / scale (the Laplace mechanism). Other combinations are not
   computed (``method = "not computed"``, losses None), and say so.

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Literal, Protocol

from surveykit.designs.base import as_fraction
from surveykit.designs.quantitative_steps import Step
from surveykit.designs.scramblers import (
    Deck,
    Exponential,
    Laplace,
    Moments,
    Normal,
    Scrambler,
    Uniform,
    Unknown,
)
from surveykit.errors import ParameterError
from surveykit.vocabulary import loss_fields

__all__ = ["MAX_ENUMERATION", "NumericDesign", "QuantitativePrivacy", "answer_bounds",
           "privacy_loss"]

#: Exact enumeration visits at most this many (true value, answer) pairs.
MAX_ENUMERATION = 2_000_000
_MAX_DECIMALS = 9
# A loss computed in floating point may exceed a budget it meets exactly in the last bits.
_RELATIVE_SLACK = 1e-12

Method = Literal["enumeration", "closed form", "unbounded", "not computed", "trivial"]


class NumericDesign(Protocol):
    """What this module reads of a numeric design (:class:`surveykit.designs.quantitative.
    QuantitativeDesign` has it): the steps each group is told, the scramblers they draw,
    the designed "don't know" share and the numbers it can report. The design calls this
    module, not the other way."""

    @property
    def designed_dont_know(self) -> Fraction: ...

    @property
    def scramblers(self) -> Mapping[str, Scrambler]: ...

    @property
    def group_names(self) -> tuple[str, ...]: ...

    def answer_steps(self, group: int = 0) -> tuple[Step, ...]: ...

    def reported_range(self, low: float = ..., high: float = ...) -> tuple[float, float]: ...


@dataclass(frozen=True)
class QuantitativePrivacy:
    """The privacy loss of a numeric design for true values in [low, high].

    ``shafer`` and ``walley`` are the losses (``math.inf`` where unbounded;
    None where surveykit does not compute them); ``exact_ratio`` and
    ``exact_walley_ratio`` are e^loss as exact fractions where the loss was
    enumerated; ``explanation`` says in plain words where the loss comes from.
    """

    shafer: float | None
    walley: float | None
    method: Method
    explanation: str
    low: float
    high: float
    decimals: int | None
    exact_ratio: Fraction | None = None
    exact_walley_ratio: Fraction | None = None

    def loss(self, semantics: str = "shafer") -> float | None:
        """The loss in ``semantics`` ("shafer" or "walley")."""
        if semantics not in ("shafer", "walley"):
            raise ParameterError(f"semantics ({semantics!r}) must be 'shafer' or 'walley'")
        return self.shafer if semantics == "shafer" else self.walley

    def check(self, epsilon: float, semantics: str = "shafer") -> float:
        """The loss in ``semantics`` if it is at most ``epsilon``; otherwise a ParameterError
        that says why (as :func:`surveykit.privacy.budget.check_budget` for yes/no designs).

        >>> from surveykit.designs.quantitative import Eriksson
        >>> loss = Eriksson(p=1 / 3, scrambler=[0, 1, 2, 3]).privacy_loss(0, 3, decimals=0)
        >>> round(loss.check(1.0987), 6)                      # ln 3
        1.098612
        >>> loss.check(1.0986)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        surveykit.errors.ParameterError: epsilon (1.0986) is below the Shafer privacy loss ...
        """
        if isinstance(epsilon, bool) or not isinstance(epsilon, int | float) \
                or math.isnan(epsilon) or epsilon <= 0:
            raise ParameterError(f"epsilon ({epsilon!r}) must be a positive privacy budget, "
                                 "e.g. 1.0")
        loss = self.loss(semantics)
        name = "Shafer" if semantics == "shafer" else "Walley"
        where = f"true values in [{self.low:g}, {self.high:g}]"
        if loss is None:
            raise ParameterError(f"epsilon ({epsilon:g}): the {name} privacy loss for {where} "
                                 f"is not computed: {self.explanation}")
        if loss <= epsilon * (1 + _RELATIVE_SLACK):
            return loss
        if math.isinf(loss):
            raise ParameterError(f"epsilon ({epsilon:g}): the design has no finite {name} "
                                 f"privacy loss for {where}: {self.explanation}")
        raise ParameterError(
            f"epsilon ({epsilon:g}) is below the {name} privacy loss for {where}, {loss:.10g}: "
            "allow at least that, or choose parameters that randomize more")

    def to_dict(self) -> dict[str, object]:
        """JSON-ready: an infinite loss is ``"inf"`` with ``..._finite`` false, an uncomputed
        one null (:func:`surveykit.vocabulary.loss_fields`)."""
        return {**loss_fields("epsilon_shafer", self.shafer),
                **loss_fields("epsilon_walley", self.walley),
                "shafer_infinite": self.shafer == math.inf,
                "walley_infinite": self.walley == math.inf,
                "method": self.method, "explanation": self.explanation,
                "range": [self.low, self.high], "decimals": self.decimals}


def _text(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    decimal = Decimal(value.numerator) / Decimal(value.denominator)
    short = format(decimal.normalize(), "f")
    return short if Fraction(short) == value else f"{float(value):.6g}"


def _check_range(low: object, high: object, decimals: object
                 ) -> tuple[float, float, int | None]:
    for name, value in (("low", low), ("high", high)):
        if isinstance(value, bool) or not isinstance(value, int | float | Fraction | Decimal):
            raise ParameterError(f"{name} ({value!r}) must be a number (the range of true "
                                 "values), e.g. low = 0, high = 100")
        if isinstance(value, float) and math.isnan(value):
            raise ParameterError(f"{name} (nan) must be a number")
    lo, hi = float(low), float(high)
    if lo > hi:
        raise ParameterError(f"low ({lo:g}) must not be above high ({hi:g})")
    if decimals is not None:
        if isinstance(decimals, bool) or not isinstance(decimals, int) \
                or not 0 <= decimals <= _MAX_DECIMALS:
            raise ParameterError(f"decimals ({decimals!r}) must be a whole number from 0 to "
                                 f"{_MAX_DECIMALS}, or None for any real number")
        step = Fraction(1, 10 ** decimals)
        for name, value in (("low", lo), ("high", hi)):
            if math.isfinite(value) and as_fraction(value) % step != 0:
                raise ParameterError(
                    f"{name} ({value:g}) must be a multiple of {_text(step)} with "
                    f"decimals = {decimals}")
    return lo, hi, decimals


def privacy_loss(design: NumericDesign, low: float, high: float,
                 decimals: int | None = None) -> QuantitativePrivacy:
    """The Shafer and Walley losses of ``design`` for true values in [``low``, ``high``]
    (multiples of 10^-``decimals``; None: any real number), with an explanation.

    >>> from surveykit.designs.quantitative import Eriksson, MixNorm
    >>> loss = Eriksson(p=0.5, scrambler=list(range(11))).privacy_loss(0, 10, decimals=0)
    >>> round(loss.shafer, 4), loss.exact_ratio      # (p + (1 - p) / 11) / ((1 - p) / 11)
    (2.4849, Fraction(12, 1))
    >>> MixNorm(p=0.7, mu=40, sigma=15).privacy_loss(0, 100).shafer
    inf
    """
    lo, hi, decimals = _check_range(low, high, decimals)
    d = design.designed_dont_know
    if lo == hi:
        return QuantitativePrivacy(0.0, 0.0, "trivial", "Only one true value is possible "
                                   f"({lo:g}): there is nothing to hide.", lo, hi, decimals,
                                   Fraction(1), Fraction(1))
    results = [_group_loss(design, g, lo, hi, decimals, d)
               for g in range(len(design.group_names))]
    # the worst group: an infinite loss, else one surveykit does not compute, else the largest
    infinite = [r for r in results if r.shafer == math.inf]
    unknown = [r for r in results if r.method == "not computed"]
    if infinite or unknown:
        return (infinite or unknown)[0]
    return max(results, key=lambda r: (r.shafer, r.walley))


def _used(design: NumericDesign, steps: Iterable[Step]) -> dict[str, Scrambler]:
    names = {name for step in steps for name in step.scrambler_names}
    return {name: design.scramblers[name] for name in sorted(names)}


def _continuous_answers(used: dict[str, Scrambler]) -> bool:
    return any(not s.discrete for s in used.values())


def _result(shafer: float | None, walley: float | None, method: Method, explanation: str,
            lo: float, hi: float, decimals: int | None, **exact) -> QuantitativePrivacy:
    return QuantitativePrivacy(shafer, walley, method, explanation, lo, hi, decimals, **exact)


def _walley_for_continuous(shafer: float, d: Fraction) -> tuple[float, str]:
    if d == 0:
        return shafer, "Without a don't-know branch the Walley loss equals the Shafer loss."
    return math.inf, (
        f"In Walley's semantics the don't-know answer (probability {d}) could stand for any "
        "answer, and the answers are continuous: an interval of answers that is nearly "
        "impossible under one true value is still plausible with probability "
        f"{d} under another, so the Walley loss is infinite.")


def _infinite(reason: str, lo: float, hi: float, decimals: int | None,
              method: Method = "unbounded") -> QuantitativePrivacy:
    return _result(math.inf, math.inf, method, reason + " The loss is infinite in both "
                   "semantics.", lo, hi, decimals)


def _group_loss(design: NumericDesign, group: int, lo: float, hi: float,
                decimals: int | None, d: Fraction) -> QuantitativePrivacy:
    steps = design.answer_steps(group)
    used = _used(design, steps)
    where = f" (group {group + 1})" if len(design.group_names) > 1 else ""
    dependent = [s for s in steps if s.depends_on_value]
    if not dependent:
        return _result(0.0, 0.0, "trivial", f"No answer depends on the true value{where}.",
                       lo, hi, decimals, exact_ratio=Fraction(1), exact_walley_ratio=Fraction(1))
    for name, s in used.items():
        if isinstance(s, Unknown):
            return _infinite(
                f"The unrelated question {name}{where} has an unknown distribution, so no "
                "bound can be promised: if its answers never equal a respondent's true value, "
                "an answer that is a true value gives that value away.", lo, hi, decimals)
        if isinstance(s, Moments):
            stated = "the mean and sd of" if s.sigma is not None else "the mean of"
            return _infinite(
                f"Only {stated} {name} are stated{where}; some distribution with them (a "
                "normal one, or two values at mean -/+ sd) lets an answer rule true values "
                "out. State "
                f"{name}'s distribution (a deck of cards, dice, or a named distribution) to "
                "get a finite loss where the design has one.", lo, hi, decimals)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return _infinite(
            f"The range [{lo:g}, {hi:g}] is unbounded: a large enough true value moves the "
            "answers (the answer itself when it is given truthfully) beyond anything a smaller "
            "one gives, so an unbounded answer reveals itself. State a bounded range.",
            lo, hi, decimals)
    if not _continuous_answers(used):
        if decimals is None:
            return _infinite(
                f"With cards or dice only{where}, each true value gives finitely many answers, "
                "and with any real number as true value an answer rules almost every other "
                "true value out. State the values' decimals (e.g. decimals = 0 for whole "
                "numbers) for an exact loss.", lo, hi, decimals)
        return _enumerate(design, steps, lo, hi, decimals, d, where)
    return _continuous(design, steps, used, lo, hi, decimals, d, where)


# -- exact enumeration ----------------------------------------------------------------------


def _affine_parts(design: NumericDesign, step: Step) -> dict[tuple[Fraction, Fraction],
                                                                     Fraction]:
    """For a step with decks only: {(alpha, beta): probability} with answer alpha y + beta."""
    def points(name: str | None, absent: Fraction) -> tuple[tuple[Fraction, Fraction], ...]:
        if name is None:
            return ((absent, Fraction(1)),)
        s = design.scramblers[name]
        assert isinstance(s, Deck)
        return s.points()

    out: dict[tuple[Fraction, Fraction], Fraction] = {}
    for w, pw in points(step.multiplier, Fraction(1)):
        for u, pu in points(step.inner, Fraction(0)):
            for v, pv in points(step.offset, Fraction(0)):
                key = (w * step.coefficient, w * step.inner_coefficient * u + v)
                out[key] = out.get(key, Fraction(0)) + step.probability * pw * pu * pv
    return out


def _grid(lo: float, hi: float, decimals: int) -> tuple[Fraction, Fraction, int]:
    unit = Fraction(1, 10 ** decimals)
    first, last = as_fraction(lo), as_fraction(hi)
    return first, unit, int((last - first) / unit) + 1


def _parts(design: NumericDesign, steps: Iterable[Step]
           ) -> dict[tuple[Fraction, Fraction], Fraction]:
    parts: dict[tuple[Fraction, Fraction], Fraction] = {}
    for step in steps:
        for key, prob in _affine_parts(design, step).items():
            parts[key] = parts.get(key, Fraction(0)) + prob
    return parts


@dataclass
class _Table:
    """Per answer: how many true values on the grid give it, and the largest and smallest
    probability with a true value where each is reached."""

    size: int
    count: dict
    largest: dict
    smallest: dict

    def ruled_out(self) -> Fraction | None:
        """An answer that some true value on the grid cannot give (None: none)."""
        return next((z for z, k in self.count.items() if k < self.size), None)


def _table(parts: dict[tuple[Fraction, Fraction], Fraction], lo: float, hi: float,
           decimals: int) -> _Table:
    first, unit, size = _grid(lo, hi, decimals)
    if size * len(parts) > MAX_ENUMERATION:
        raise ParameterError(
            f"the range [{lo:g}, {hi:g}] with decimals = {decimals} has {size:,} true values "
            f"and the design {len(parts):,} answer rules: {size * len(parts):,} pairs exceed "
            f"{MAX_ENUMERATION:,}; state a narrower range or fewer decimals")
    constant = {beta: p for (alpha, beta), p in parts.items() if alpha == 0}
    moving = [(alpha, beta, p) for (alpha, beta), p in parts.items() if alpha != 0]
    table = _Table(size, {}, {}, {})
    for j in range(size):
        y = first + j * unit
        probs = dict(constant)
        for alpha, beta, p in moving:
            z = alpha * y + beta
            probs[z] = probs.get(z, Fraction(0)) + p
        for z, p in probs.items():
            table.count[z] = table.count.get(z, 0) + 1
            if z not in table.largest or p > table.largest[z][0]:
                table.largest[z] = (p, y)
            if z not in table.smallest or p < table.smallest[z][0]:
                table.smallest[z] = (p, y)
    return table


def _ruled_out_text(table: _Table, parts, lo: float, hi: float, decimals: int, where: str,
                    z: Fraction) -> str:
    first, unit, size = _grid(lo, hi, decimals)
    p, y = table.largest[z]
    other = _value_without(parts, z, first, unit, size)
    return (f"The answer {_text(z)} has probability {p} when the true value is {_text(y)} and "
            f"0 when it is {_text(other)}{where}: it rules that true value out.")


def _enumerate(design: NumericDesign, steps: tuple[Step, ...], lo: float, hi: float,
               decimals: int, d: Fraction, where: str) -> QuantitativePrivacy:
    parts = _parts(design, steps)
    quick = _quickly_ruled_out(parts, lo, hi, decimals)
    if quick is not None:
        z, y, p = quick
        first, unit, size = _grid(lo, hi, decimals)
        other = _value_without(parts, z, first, unit, size)
        return _infinite(f"The answer {_text(z)} has probability {p} when the true value is "
                         f"{_text(y)} and 0 when it is {_text(other)}{where}: it rules that "
                         "true value out.", lo, hi, decimals, method="enumeration")
    table = _table(parts, lo, hi, decimals)
    z = table.ruled_out()
    if z is not None:
        return _infinite(_ruled_out_text(table, parts, lo, hi, decimals, where, z),
                         lo, hi, decimals, method="enumeration")
    largest, smallest = table.largest, table.smallest
    best_z = max(largest, key=lambda z: largest[z][0] / smallest[z][0])
    ratio = largest[best_z][0] / smallest[best_z][0]
    walley_z = max(largest, key=lambda z: ((1 - d) * largest[z][0] + d)
                   / ((1 - d) * smallest[z][0]))
    walley_ratio = ((1 - d) * largest[walley_z][0] + d) / ((1 - d) * smallest[walley_z][0])
    (p_max, y_max), (p_min, y_min) = largest[best_z], smallest[best_z]
    first, unit, _ = _grid(lo, hi, decimals)
    explanation = (
        f"Every answer is possible under every true value from {_text(first)} to "
        f"{_text(as_fraction(hi))} (steps of {_text(unit)}){where}. The most telling answer is "
        f"{_text(best_z)}: probability {p_max} when the true value is {_text(y_max)}, {p_min} "
        f"when it is {_text(y_min)}, so the Shafer loss is ln({ratio}) = "
        f"{math.log(ratio):.4f}.")
    if d == 0:
        explanation += " Without a don't-know branch the Walley loss equals it."
    else:
        (q_max, _), (q_min, _) = largest[walley_z], smallest[walley_z]
        explanation += (
            f" Walley's semantics counts the don't-know probability {d} as possibly any "
            f"answer: at the answer {_text(walley_z)}, ((1 - {d}) {q_max} + {d}) / ((1 - {d}) "
            f"{q_min}) = {walley_ratio}, a Walley loss of {math.log(walley_ratio):.4f}.")
    return _result(math.log(ratio), math.log(walley_ratio), "enumeration", explanation,
                   lo, hi, decimals, exact_ratio=ratio, exact_walley_ratio=walley_ratio)


def _quickly_ruled_out(parts: dict[tuple[Fraction, Fraction], Fraction], lo: float,
                       hi: float, decimals: int) -> tuple[Fraction, Fraction, Fraction] | None:
    """An answer some true value cannot give, found without the whole table: (answer, a
    true value that gives it, its probability there), or None when this shortcut finds none.

    An answer that no value-free rule gives (alpha = 0) is given by each value-dependent
    rule at one true value at most; with more true values on the grid than such rules,
    some true value cannot give it. Checking the answers of the grid's two ends is enough
    to find one in the common case (a truthful branch beside a deck), where the whole
    table would take seconds for a range of 100,000 values."""
    first, unit, size = _grid(lo, hi, decimals)
    moving = [(alpha, beta, p) for (alpha, beta), p in parts.items() if alpha != 0]
    if size <= len(moving):
        return None
    constant = {beta for (alpha, beta) in parts if alpha == 0}
    for y in (first, first + (size - 1) * unit):
        for alpha, beta, _ in moving:
            z = alpha * y + beta
            if z not in constant:
                p = sum((q for a, b, q in moving if a * y + b == z), Fraction(0))
                return z, y, p
    return None


def _value_without(parts, z: Fraction, first: Fraction, unit: Fraction, size: int) -> Fraction:
    """A true value on the grid under which answer ``z`` is impossible."""
    for j in range(size):
        y = first + j * unit
        if not any(alpha * y + beta == z for alpha, beta in parts):
            return y
    raise AssertionError("every true value gives the answer")  # pragma: no cover


# -- continuous scramblers ------------------------------------------------------------------


def _edges(design: NumericDesign, steps: tuple[Step, ...], y: float
           ) -> tuple[float, float]:
    """The smallest and largest answer possible (support edges) at true value ``y``."""
    supports = {name: s.support() for name, s in design.scramblers.items()}
    spans = [step.span(supports, (y, y)) for step in steps]
    return min(lo for lo, _ in spans), max(hi for _, hi in spans)


def answer_bounds(design: NumericDesign, low: float, high: float,
                  decimals: int | None = None) -> tuple[float, float]:
    """The smallest and largest number a respondent following ``design`` can report when
    the true value lies in [``low``, ``high``] (every group's steps; "don't know" aside),
    widened by half a unit of the last of ``decimals`` decimals (a respondent rounds a
    scrambled number to the question's decimals; None: not widened).

    The bounds are :meth:`QuantitativeDesign.reported_range`'s. Infinite where a scrambler
    is unbounded (normal, exponential, Laplace) or unknown.

    >>> from surveykit.designs.quantitative import EichhornHayre, Eriksson
    >>> answer_bounds(Eriksson(p=0.6, scrambler=[0, 1000, 5000, 20000]), 0, 100000)
    (0.0, 100000.0)
    >>> answer_bounds(Eriksson(p=0.6, scrambler=[-5, 3]), 0, 10, decimals=0)
    (-5.5, 10.5)
    >>> answer_bounds(EichhornHayre(mu=1.5, sigma=0.5 / 3 ** 0.5, scrambler="uniform"), -2, 4)
    (-4.0, 8.0)
    """
    lowest, highest = design.reported_range(float(low), float(high))
    slack = 0.0 if decimals is None else 0.5 * 10.0 ** -decimals
    return lowest - slack, highest + slack


def _continuous(design: NumericDesign, steps: tuple[Step, ...],
                used: dict[str, Scrambler], lo: float, hi: float, decimals: int | None,
                d: Fraction, where: str) -> QuantitativePrivacy:
    def is_atomic(step: Step) -> bool:
        return all(design.scramblers[n].discrete for n in step.scrambler_names)

    atomic = [s for s in steps if s.depends_on_value and is_atomic(s)]
    if atomic:
        step = atomic[0]
        what = "the true value itself" if step.kind == "truthful" else \
            f"the exact number {step.formula()}"
        if decimals is None:
            return _infinite(
                f"With probability {step.probability} the answer is {what}{where}: that exact "
                "number has positive probability under the true value y and probability 0 "
                "under almost every other true value, whose answers are spread continuously "
                "(an unbounded answer with a truthful branch reveals itself).", lo, hi, decimals)
        parts = _parts(design, [s for s in steps if is_atomic(s)])
        table = _table(parts, lo, hi, decimals)
        z = table.ruled_out()
        if z is not None:
            return _infinite(
                f"With probability {step.probability} the answer is {what}, an exact number; "
                "the other answers are spread continuously. "
                + _ruled_out_text(table, parts, lo, hi, decimals, where, z), lo, hi, decimals,
                method="enumeration")
        return _not_computed(steps, used, lo, hi, decimals)
    probes = sorted({lo, hi, (lo + hi) / 2} | ({0.0} if lo < 0 < hi else set()))
    edges = {y: _edges(design, steps, y) for y in probes}
    for index in (0, 1):
        values = {edges[y][index] for y in probes}
        finite = [e for e in values if math.isfinite(e)]
        if len(values) > 1 and finite:
            y1 = min(probes, key=lambda y: edges[y][index])
            y2 = max(probes, key=lambda y: edges[y][index])
            side = "smallest" if index == 0 else "largest"
            return _infinite(
                f"The {side} possible answer moves with the true value{where}: "
                f"{edges[y1][index]:g} at true value {y1:g}, {edges[y2][index]:g} at "
                f"{y2:g}; answers between them occur under one and never under the other, "
                "so they rule true values out.", lo, hi, decimals)
    if len(steps) == 1:
        step = steps[0]
        c = float(step.coefficient)
        if step.multiplier is None and step.inner is None and step.offset:
            V = design.scramblers[step.offset]
            if isinstance(V, Laplace):
                shafer = abs(c) * (hi - lo) / V.scale
                walley, note = _walley_for_continuous(shafer, d)
                return _result(
                    shafer, walley, "closed form",
                    f"The answer is the true value plus Laplace noise with scale {V.scale:g} "
                    f"(the Laplace mechanism){where}: the density ratio of an answer under two "
                    f"true values is at most exp(|c| (high - low) / scale), so the Shafer loss "
                    f"is {abs(c):g} x ({hi:g} - {lo:g}) / {V.scale:g} = {shafer:.4f}. {note}",
                    lo, hi, decimals)
            if isinstance(V, Normal):
                return _infinite(
                    f"With normal noise{where} the density ratio of an answer z under true "
                    "values y and y' is exp(((z - y')^2 - (z - y)^2) / (2 sigma^2)), which "
                    "grows without bound as z moves away: an extreme answer points to one true "
                    "value with arbitrarily large odds.", lo, hi, decimals)
        if step.multiplier and step.inner is None and step.offset is None:
            W = design.scramblers[step.multiplier]
            if lo <= 0 <= hi:
                return _infinite(
                    f"The answer is the true value times {step.multiplier}{where}: a true "
                    "value of 0 always gives the answer 0, which no other true value gives "
                    "with positive probability.", lo, hi, decimals)
            if isinstance(W, Normal | Exponential | Laplace | Uniform):
                return _infinite(
                    f"The answer is the true value times {step.multiplier} "
                    f"({W.describe()}){where}: its spread grows with the true value, and far "
                    "in the tail an answer is arbitrarily more likely under the larger true "
                    "value.", lo, hi, decimals)
    return _not_computed(steps, used, lo, hi, decimals)


def _not_computed(steps: tuple[Step, ...], used: dict[str, Scrambler], lo: float, hi: float,
                  decimals: int | None) -> QuantitativePrivacy:
    return _result(
        None, None, "not computed",
        f"surveykit computes the loss of decks and dice exactly and of continuous scrambling "
        f"where a rule applies (truthful answers, moving support edges, additive normal or "
        f"Laplace noise, multiplicative noise); for {' and '.join(s.formula() for s in steps)} "
        f"with {', '.join(f'{n}: {s.describe()}' for n, s in used.items())} it does not. Use "
        "cards or dice to get an exact loss.", lo, hi, decimals)
