"""Numeric questions on paper: what a slip tells a respondent to do, and how drawn numbers
are printed.

A numeric design (:class:`surveykit.designs.quantitative.QuantitativeDesign`) tells each
respondent one of a few :class:`~surveykit.designs.quantitative.Step`\\ s, each "report
W * (c y + k U) + V" with scrambling numbers W, U, V from known devices. On a slip the
step is drawn and so are its numbers (:func:`surveykit.collection.randomizer.draw_numbers`),
and the slip says what to do with the numbers filled in (wording keys):

* y: ``number_truthful`` "Write your true value.";
* S: ``number_draw`` "Write 1000, whatever your true value." (Eriksson, mix_norm, mix_exp);
* y * S: ``number_times`` "Multiply your true value by 1.25 and write the result.";
* y + S: ``number_plus`` (additive); y * S1 + S2: ``number_times_plus`` (Chaudhuri and
  Christofides); W * (y + U): ``number_plus_times`` (Saha, Diana-Perri 1);
  W * ((1 - beta) y + beta U): ``number_scaled_plus_times`` (Diana-Perri 2; the slip
  prints beta U, computed exactly);
* X, an unrelated question (mix_unknown): ``number_unrelated``, with the question's text;
* don't know: ``rule_dont_know``.

A step that computes (the scrambled ones) ends with "Round it to a whole number."
(``number_round_whole``) or "Round it to at most 2 digits after the decimal point."
(``number_round``) when the question states its ``decimals``.

Decimals of draws: a card deck or dice is printed exactly (its values are the cards'). A
continuous scrambler (uniform, normal, exponential, Laplace) is printed rounded to
:func:`draw_decimals` decimals: :data:`SIGNIFICANT_DIGITS` digits of its standard
deviation, so the grid h = 10^-decimals is between 1/10,000 and 1/1,000 of the sd, and a
number that is written as it is or added to the answer (V: Eriksson's card, the additive
scrambler, Chaudhuri and Christofides' S2) never has more decimals than the question
allows. :func:`rounded_moments` gives the exact mean and variance of the printed (rounded)
number; docs/questionnaires.md ("Numeric questions") states what the rounding does to the
design's moments (and tests/test_numeric_paper.py checks it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType

import numpy as np

from surveykit.collection.instructions import fill, wording_text
from surveykit.designs.quantitative import QuantitativeDesign, Step
from surveykit.designs.scramblers import Deck, Scrambler, Unknown
from surveykit.errors import ParameterError

__all__ = [
    "MAX_GRID_SHARE",
    "SIGNIFICANT_DIGITS",
    "NumberRule",
    "NumberSlot",
    "decimal_text",
    "draw_decimals",
    "number_rules",
    "rounded_moments",
    "scrambler_decimals",
]

#: Digits of a continuous scrambler's standard deviation that a printed draw keeps.
SIGNIFICANT_DIGITS = 4
#: The coarsest grid (as a share of the sd) a continuous draw may be rounded to when the
#: question's decimals force it: its variance then grows by about (h / sd)^2 / 12 <= 0.08%.
MAX_GRID_SHARE = Fraction(1, 10)
# Most decimals a printed draw has (a scrambler with a tiny sd).
_MAX_DRAW_DECIMALS = 12
# Grid cells rounded_moments sums at most.
_MAX_CELLS = 4_000_000


def decimal_text(value: Fraction | int) -> str:
    """``value`` as a plain decimal (no exponent, no thousands separator, '-' for negatives,
    no trailing zeros): exact when the fraction has a finite decimal expansion (every draw a
    slip prints), else to 12 significant digits.

    >>> decimal_text(Fraction(-5, 2)), decimal_text(Fraction(1000)), decimal_text(Fraction(1, 3))
    ('-2.5', '1000', '0.333333333333')
    """
    value = Fraction(value)
    sign = "-" if value < 0 else ""
    value = abs(value)
    denominator = value.denominator
    twos = fives = 0
    while denominator % 2 == 0:
        denominator //= 2
        twos += 1
    while denominator % 5 == 0:
        denominator //= 5
        fives += 1
    if denominator != 1:
        text = f"{float(value):.12g}"
        if "e" in text:
            text = f"{float(value):.12f}".rstrip("0").rstrip(".")
        return sign + text
    places = max(twos, fives)
    scaled = value.numerator * (10 ** places) // value.denominator
    whole, part = divmod(scaled, 10 ** places)
    text = str(whole) if places == 0 else f"{whole}.{part:0{places}d}".rstrip("0").rstrip(".")
    return sign + text if text != "0" else "0"


def draw_decimals(scrambler: Scrambler, question_decimals: int | None = None, *,
                  written: bool = False) -> int | None:
    """The decimals a slip prints a draw of ``scrambler`` with: None for a card deck or dice
    (exact), else :data:`SIGNIFICANT_DIGITS` digits of its sd, at most
    ``question_decimals`` when the draw is ``written`` as it is or added to the answer.

    >>> from surveykit.designs.scramblers import Normal, Uniform
    >>> draw_decimals(Normal(mu=40, sigma=15)), draw_decimals(Uniform(low=1, high=2))
    (2, 4)
    >>> draw_decimals(Normal(mu=40, sigma=15), 0, written=True)
    0
    """
    if isinstance(scrambler, Deck):
        return None
    decimals = SIGNIFICANT_DIGITS - 1 - math.floor(math.log10(scrambler.sd))
    decimals = min(max(decimals, 0), _MAX_DRAW_DECIMALS)
    if written and question_decimals is not None:
        decimals = min(decimals, question_decimals)
    return decimals


@dataclass(frozen=True)
class NumberSlot:
    """A placeholder of a rule filled by a draw: ``factor`` times scrambler ``scrambler``."""

    placeholder: str
    scrambler: str
    factor: Fraction = Fraction(1)


@dataclass(frozen=True)
class NumberRule:
    """What a slip says for one step of a numeric design: the wording ``key``, placeholders
    filled once (``fixed``), those filled by the respondent's draws (``slots``) and the
    rounding sentence."""

    step: Step
    key: str
    fixed: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    slots: tuple[NumberSlot, ...] = ()
    rounding: str = ""

    @property
    def code(self) -> str:
        """The step's code (``truthful``, ``draw``, ``scramble``, ...)."""
        return self.step.code

    @property
    def scramblers(self) -> tuple[str, ...]:
        """The scramblers this rule needs drawn."""
        return tuple(dict.fromkeys(slot.scrambler for slot in self.slots))

    def text(self, wording: Mapping[str, str], values: Mapping[str, Fraction]) -> str:
        """The rule with the respondent's drawn ``values`` (by scrambler name) filled in."""
        filled = {slot.placeholder: decimal_text(slot.factor * values[slot.scrambler])
                  for slot in self.slots}
        return self._sentence(wording, filled)

    def device_text(self, wording: Mapping[str, str]) -> str:
        """The rule for a respondent who draws the numbers themselves (die mode): each
        number is "your number S" (``number_device_value``), or "0.3 times your number U"
        (``number_device_scaled``)."""
        filled = {}
        for slot in self.slots:
            if slot.factor == 1:
                filled[slot.placeholder] = fill(wording, "number_device_value",
                                                name=slot.scrambler)
            else:
                filled[slot.placeholder] = fill(wording, "number_device_scaled",
                                                factor=decimal_text(slot.factor),
                                                name=slot.scrambler)
        return self._sentence(wording, filled)

    def key_code(self, values: Mapping[str, Fraction]) -> str:
        """The key file's code: the step and its draws, e.g. ``draw:S=1000``."""
        if not self.slots:
            return self.code
        return self.code + ":" + ";".join(f"{name}={decimal_text(values[name])}"
                                          for name in self.scramblers)

    def _sentence(self, wording: Mapping[str, str], filled: Mapping[str, str]) -> str:
        text = fill(wording, self.key, **self.fixed, **filled)
        return f"{text} {self.rounding}" if self.rounding else text


def _rounding(question, wording: Mapping[str, str]) -> str:
    if question.decimals is None:
        return ""
    if question.decimals == 0:
        return wording_text(wording, "number_round_whole")
    return fill(wording, "number_round", decimals=question.decimals)


def _rule(step: Step, question, wording: Mapping[str, str]) -> NumberRule:
    """The slip's rule for ``step`` of ``question``'s design."""
    design: QuantitativeDesign = question.design
    kind = step.kind
    if kind == "dont_know":
        return NumberRule(step=step, key="rule_dont_know")
    if kind == "truthful":
        return NumberRule(step=step, key="number_truthful")
    if kind == "unrelated":
        if not question.innocuous:
            raise ParameterError(
                f"the {design.model} design tells respondents to answer an unrelated numeric "
                "question, and the survey gives no text for it, so no slip or form can ask "
                "it; give it in the question's design, e.g. innocuous = \"How many siblings "
                "do you have?\"")
        return NumberRule(step=step, key="number_unrelated",
                          fixed=MappingProxyType({"innocuous": question.innocuous}))
    c, k = step.coefficient, step.inner_coefficient
    W, U, V = step.multiplier, step.inner, step.offset
    if kind == "draw" or (c == 0 and not W and not U and V):
        return NumberRule(step=step, key="number_draw", slots=(NumberSlot("number", V),))
    rounding = _rounding(question, wording)
    shapes = {
        (True, False, True, False): ("number_times", (NumberSlot("multiplier", W),)),
        (True, False, False, True): ("number_plus", (NumberSlot("addend", V),)),
        (True, False, True, True): ("number_times_plus", (NumberSlot("multiplier", W),
                                                          NumberSlot("addend", V))),
        (True, True, True, False): ("number_plus_times", (NumberSlot("addend", U, k),
                                                          NumberSlot("multiplier", W))),
    }
    shape = (c == 1, bool(U), bool(W), bool(V))
    if shape in shapes:
        key, slots = shapes[shape]
        return NumberRule(step=step, key=key, slots=slots, rounding=rounding)
    if c not in (0, 1) and U and W and not V:
        return NumberRule(step=step, key="number_scaled_plus_times",
                          fixed=MappingProxyType({"factor": decimal_text(c)}),
                          slots=(NumberSlot("addend", U, k), NumberSlot("multiplier", W)),
                          rounding=rounding)
    raise ParameterError(  # pragma: no cover - every preset has one of the shapes above
        f"the {design.model} design's step {step.formula()} has no wording; report this")


def _check_scrambler(name: str, scrambler: Scrambler, design: QuantitativeDesign) -> None:
    if isinstance(scrambler, Unknown):
        return  # an unrelated question: asked, not drawn
    if not scrambler.known:
        raise ParameterError(
            f"scrambler {name} of the {design.model} design is {scrambler.describe()}: a "
            "slip or form needs a number drawn from a stated distribution; give it with "
            "scrambler = a list of card values, \"die\", \"dice\", \"uniform\", \"normal\", "
            "\"exponential\" or \"laplace\"")


def scrambler_decimals(question) -> dict[str, int | None]:
    """The decimals each scrambler of ``question``'s design is printed with
    (:func:`draw_decimals`): a scrambler written as it is or added to the answer (V) keeps
    to the question's decimals. A card with more decimals than the question allows, written
    as the answer or added to it, is refused: respondents could not write what the slip
    says."""
    design: QuantitativeDesign = question.design
    written = {step.offset for steps in design.protocol.groups for step in steps if step.offset}
    out: dict[str, int | None] = {}
    for name, scrambler in design.scramblers.items():
        _check_scrambler(name, scrambler, design)
        if isinstance(scrambler, Unknown):
            continue
        out[name] = draw_decimals(scrambler, question.decimals, written=name in written)
        if out[name] is not None and 10.0 ** -out[name] > float(MAX_GRID_SHARE) * scrambler.sd:
            needed = draw_decimals(scrambler, None) - (SIGNIFICANT_DIGITS - 2)
            raise ParameterError(
                f"scrambler {name} of the {design.model} design ({scrambler.describe()}) is "
                f"written in the answer, so it is printed with decimals = {question.decimals} "
                f"of the question, a grid above a tenth of its sd that changes its variance "
                f"by about {(10.0 ** -out[name] / scrambler.sd) ** 2 / 12:.1%}; allow more "
                f"decimals (decimals = {max(needed, question.decimals + 1)}) or use a wider "
                "scrambler")
        if isinstance(scrambler, Deck) and name in written and question.decimals is not None:
            scale = 10 ** question.decimals
            for value in scrambler.values:
                if (value * scale).denominator != 1:
                    raise ParameterError(
                        f"card {decimal_text(value)} of scrambler {name} has more decimals "
                        f"than decimals = {question.decimals} allows, and respondents write "
                        "it in their answer; change the cards or the question's decimals")
    return out


def number_rules(question, wording: Mapping[str, str]
                 ) -> tuple[tuple[NumberRule, ...], ...]:
    """Per group of ``question``'s design, the rule of each of its steps (protocol order)."""
    design: QuantitativeDesign = question.design
    scrambler_decimals(question)  # refuses scramblers no slip can draw
    return tuple(tuple(_rule(step, question, wording) for step in steps)
                 for steps in design.protocol.groups)


def rounded_moments(scrambler: Scrambler, decimals: int | None) -> tuple[float, float]:
    """The exact mean and variance of a draw of ``scrambler`` as printed: rounded to the
    nearest multiple of h = 10^-decimals (None: a deck, exact). Computed from the
    distribution function over every grid cell [x - h/2, x + h/2) with mass above 1e-17.

    >>> from surveykit.designs.scramblers import Uniform
    >>> [round(v, 10) for v in rounded_moments(Uniform(low=1, high=2), 1)]
    [1.5, 0.085]
    """
    if decimals is None:
        return scrambler.mean, scrambler.variance
    h = 10.0 ** -decimals
    low, high = scrambler.support()
    spread = 40 * scrambler.sd
    low = max(low, scrambler.mean - spread)
    high = min(high, scrambler.mean + spread)
    first, last = math.floor(low / h) - 1, math.ceil(high / h) + 1
    if last - first > _MAX_CELLS:
        raise ParameterError(f"{scrambler.describe()} rounded to {decimals} decimals has "
                             f"{last - first:,} grid cells; too many to sum")
    grid = np.arange(first, last + 1, dtype=np.float64) * h
    mass = np.diff(np.asarray(scrambler.cdf(np.append(grid - h / 2, grid[-1] + h / 2)),
                              dtype=np.float64))
    total = float(mass.sum())
    mean = float(np.dot(mass, grid)) / total
    variance = float(np.dot(mass, (grid - mean) ** 2)) / total
    return mean, variance

