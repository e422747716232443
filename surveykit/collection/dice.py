"""Self-randomized forms: map the faces of real dice to a design's protocol, exactly.

In die mode every respondent gets the same form (one per group), rolls dice in
private for each question and looks up what to do. A die with d fair faces
realizes probabilities p_1, ..., p_m exactly if and only if every p_i d is a
whole number: the first p_1 d faces mean entry 1, the next p_2 d entry 2, and
so on. Two dice (a first die with d1 faces, a second with d2) give d1 d2
equally likely outcomes (a, b), numbered (a - 1) d2 + b, and work the same way.

What the faces mean depends on the design's protocol
(:attr:`surveykit.designs.base.Design.protocol`), per group:

* ``instructions`` (Warner, forced response, unrelated question, Mangat, the
  detection designs, ...): one table, faces -> instruction ("Answer
  truthfully.", "Answer \\"yes\\", whatever the truth is.", ...);
* ``per_state`` (Kuk's cards, a custom matrix): one table per true state
  (the deck of that state), faces -> the response to give; Kuk's design with
  r > 1 draws and no "don't know" branch is one die per deck rolled r times,
  counting the faces that stand for red cards;
* ``combined`` (crosswise, triangular): nothing to roll, unless the design has
  a "don't know" branch (then faces -> "answer the question" or "answer don't
  know").

All arithmetic is exact (``fractions.Fraction``); a decimal written in the
survey file (0.6, 0.15) is taken as the fraction it names
(:func:`surveykit.designs.base.as_fraction`).

When no candidate die realizes a design, :func:`die_plan` raises
:class:`DieDesignError` naming the nearest design of the same preset that
dice realize and that loses no more privacy in either semantics (Shafer,
Def. 3.1; Walley, Def. 3.13, worst case over nuisance ranges), with both
losses.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from surveykit.designs.base import Design, Instruction, as_fraction
from surveykit.designs.quantitative import QuantitativeDesign
from surveykit.designs.registry import make_design
from surveykit.designs.scramblers import Deck, Unknown
from surveykit.errors import ParameterError

__all__ = [
    "SINGLE_DICE",
    "DieDesignError",
    "DieRow",
    "DieTable",
    "GroupDie",
    "NumberDevice",
    "StateTable",
    "as_fraction",
    "candidate_dice",
    "describe_dice",
    "die_plan",
    "die_table",
    "format_faces",
    "format_parameters",
    "format_probability",
    "nearest_die_design",
    "numeric_die_plan",
    "smallest_dice",
]

#: Dice a field team can buy, smallest first.
SINGLE_DICE: tuple[int, ...] = (2, 4, 6, 8, 10, 12, 20, 100)
# Pairs of dice are built from these (a d100 is itself usually two d10s).
_PAIR_DICE: tuple[int, ...] = (4, 6, 8, 10, 12, 20)
# Parameters the nearest-design search moves: the probabilities a preset takes.
_PROBABILITY_PARAMETERS = ("p", "q", "dont_know")
# ... except the design's population_parameters (the innocuous question's yes share): facts
# about the population, not settings (and no die draws them).
# Losses within this slack count as equal (they are logarithms of exact ratios).
_LOSS_SLACK = 1e-12
# Kuk's red and black cards, as entries of a card table.
RED, BLACK = "red", "black"


class DieDesignError(ParameterError):
    """No candidate die realizes the design; ``nearest`` is the proposed design (or None)."""

    def __init__(self, message: str, nearest: Design | None,
                 plan: tuple[GroupDie | None, ...] | None = None) -> None:
        super().__init__(message)
        self.nearest = nearest
        self.plan = plan


@dataclass(frozen=True)
class DieRow:
    """One line of a lookup table: for face ``first`` of the first die (None with a single
    die), the faces (low, high) of the (second) die that mean each entry, or None."""

    first: int | None
    spans: tuple[tuple[int, int] | None, ...]


@dataclass(frozen=True, kw_only=True)
class DieTable:
    """Dice and how many of their equally likely outcomes mean each entry, in order.

    ``dice`` is ``(d,)`` for one die or ``(d1, d2)`` for two; of the
    ``outcomes`` = d1 d2 outcomes the first ``counts[0]`` mean entry 0, the
    next ``counts[1]`` entry 1, and so on.

    >>> table = die_table([Fraction(3, 5), Fraction(1, 5), Fraction(1, 5)], (10,))
    >>> table.counts, [row.spans for row in table.rows()]
    ((6, 2, 2), [((1, 6), (7, 8), (9, 10))])
    """

    dice: tuple[int, ...]
    counts: tuple[int, ...]

    @property
    def outcomes(self) -> int:
        return math.prod(self.dice)

    @property
    def probabilities(self) -> tuple[Fraction, ...]:
        """The probability of each entry, exactly."""
        return tuple(Fraction(c, self.outcomes) for c in self.counts)

    def describe(self) -> str:
        """E.g. ``one d6`` or ``two dice, a d6 and a d10``."""
        return describe_dice(self.dice)

    def rows(self) -> list[DieRow]:
        """The lookup table, one row per face of the first die (one row for one die)."""
        if len(self.dice) == 1:
            return [self._row(None, 0, self.dice[0])]
        first, second = self.dice
        return [self._row(a, (a - 1) * second, second) for a in range(1, first + 1)]

    def _row(self, first: int | None, offset: int, faces: int) -> DieRow:
        spans = []
        start = 0
        for count in self.counts:
            stop = start + count
            # outcome numbers offset+1 .. offset+faces intersected with (start, stop]
            low = max(start, offset) + 1 - offset
            high = min(stop, offset + faces) - offset
            spans.append((low, high) if low <= high else None)
            start = stop
        return DieRow(first=first, spans=tuple(spans))


@dataclass(frozen=True)
class StateTable:
    """The table of one true state (one deck of cards): entries and their faces."""

    state: str
    entries: tuple[str, ...]
    table: DieTable


@dataclass(frozen=True, kw_only=True)
class GroupDie:
    """What respondents of one group roll for one question.

    * ``kind="instructions"``: ``table`` maps faces to ``instructions``;
    * ``kind="per_state"``: ``states`` holds one table per true state, faces ->
      response labels (``dont_know`` included);
    * ``kind="count"``: ``states`` holds one table per true state, faces ->
      red or black; the die is rolled ``repetitions`` times and the answer is
      the number of red faces (Kuk's cards drawn with replacement).
    """

    kind: Literal["instructions", "per_state", "count"]
    dice: tuple[int, ...]
    instructions: tuple[Instruction, ...] = ()
    table: DieTable | None = None
    states: tuple[StateTable, ...] = ()
    repetitions: int = 1

    def describe(self) -> str:
        return describe_dice(self.dice)


def describe_dice(dice: tuple[int, ...]) -> str:
    """``one d6``, ``two d6`` or ``two dice, a d6 and a d10``.

    >>> describe_dice((6, 10))
    'two dice, a d6 and a d10'
    """
    if len(dice) == 1:
        return f"one d{dice[0]}"
    first, second = dice
    return f"two d{first}" if first == second else f"two dice, a d{first} and a d{second}"


def candidate_dice() -> list[tuple[int, ...]]:
    """Single dice smallest first, then pairs by number of outcomes (equal dice first)."""
    pairs = {(a, b) for a in _PAIR_DICE for b in _PAIR_DICE if a <= b}
    ordered_pairs = sorted(pairs, key=lambda d: (d[0] * d[1], d[0] != d[1], d))
    return [(d,) for d in SINGLE_DICE] + ordered_pairs


_CANDIDATES = tuple(candidate_dice())


def smallest_dice(distributions: Sequence[Sequence[Fraction]], *, single: bool = False
                  ) -> tuple[int, ...] | None:
    """The first candidate dice on which every probability of every distribution is a whole
    number of outcomes (``single``: one die only), or None.

    >>> smallest_dice([[Fraction(1, 3), Fraction(1, 9), Fraction(5, 9)]])
    (6, 6)
    """
    denominator = math.lcm(*(Fraction(p).denominator for d in distributions for p in d))
    for dice in _CANDIDATES:
        if single and len(dice) > 1:
            break
        if math.prod(dice) % denominator == 0:
            return dice
    return None


def die_table(probabilities: Sequence[Fraction], dice: tuple[int, ...]) -> DieTable:
    """The table of ``dice`` realizing ``probabilities`` (which must fit the dice exactly)."""
    outcomes = math.prod(dice)
    counts = []
    for p in probabilities:
        count = Fraction(p) * outcomes
        if count.denominator != 1:
            raise ParameterError(f"probability {p} is not a whole number of the "
                                 f"{outcomes} outcomes of {describe_dice(dice)}")
        counts.append(int(count))
    if sum(counts) != outcomes:
        raise ParameterError(f"probabilities {[str(p) for p in probabilities]} add up to "
                             f"{Fraction(sum(counts), outcomes)}, not 1")
    return DieTable(dice=dice, counts=tuple(counts))


# -- a design's dice ------------------------------------------------------------------------


def _needs_no_draw(instructions: Sequence[Instruction]) -> bool:
    positive = [i for i in instructions if i.probability > 0]
    return len(positive) == 1


def _instructions_die(instructions: Sequence[Instruction]) -> GroupDie | None:
    used = tuple(i for i in instructions if i.probability > 0)
    dice = smallest_dice([[i.probability for i in used]])
    if dice is None:
        return None
    return GroupDie(kind="instructions", dice=dice, instructions=used,
                    table=die_table([i.probability for i in used], dice))


def _per_state_die(design: Design, instructions: Sequence[Instruction]) -> GroupDie | None:
    columns = []
    for state in design.state_labels:
        shares = dict.fromkeys(design.response_labels, Fraction(0))
        for instruction in instructions:
            shares[instruction.response(state)] += instruction.probability
        columns.append((state, tuple((r, p) for r, p in shares.items() if p > 0)))
    dice = smallest_dice([[p for _, p in column] for _, column in columns])
    if dice is None:
        return None
    states = tuple(StateTable(state=state, entries=tuple(r for r, _ in column),
                              table=die_table([p for _, p in column], dice))
                   for state, column in columns)
    return GroupDie(kind="per_state", dice=dice, states=states)


def _card_die(design: Design, red: Sequence[Fraction], repetitions: int) -> GroupDie | None:
    """A repeated two-way draw (Kuk's decks: ``red`` per true state) as one die rolled
    ``repetitions`` times (no "don't know" branch)."""
    dice = smallest_dice([[share, 1 - share] for share in red], single=True)
    if dice is None:
        return None
    states = tuple(StateTable(state=state, entries=(RED, BLACK),
                              table=die_table([share, 1 - share], dice))
                   for state, share in zip(design.state_labels, red, strict=True))
    return GroupDie(kind="count", dice=dice, states=states, repetitions=repetitions)


def _plan(design: Design) -> tuple[GroupDie | None, ...] | None:
    """Per group of the design, its dice (None: nothing to roll), or None if a group has none."""
    protocol = design.protocol
    plan: list[GroupDie | None] = []
    for g in range(len(design.group_names)):
        instructions = protocol.for_group(g)
        if not instructions:
            return None
        if _needs_no_draw(instructions):
            plan.append(None)
            continue
        repeated = design.repeated_draw()
        if repeated is not None:
            if design.designed_dont_know != 0:
                return None
            die = _card_die(design, *repeated)
        elif protocol.kind == "per_state":
            die = _per_state_die(design, instructions)
        else:
            die = _instructions_die(instructions)
        if die is None:
            return None
        plan.append(die)
    return tuple(plan)


def die_plan(design: Design, *, otherwise: str = "generate with --mode slips"
             ) -> tuple[GroupDie | None, ...]:
    """Per group of ``design``, the dice that realize its protocol exactly (None: no roll).

    Raises :class:`DieDesignError` naming the nearest design of the same
    preset that dice realize and that loses no more privacy in either
    semantics; its message ends with ``otherwise``, the way to collect
    without dice (``generate with --mode slips``, ``export with --randomize
    device``).

    >>> from surveykit.designs.warner import GeneralizedWarner
    >>> die_plan(GeneralizedWarner(p=0.6, q=0.2))[0].describe()
    'one d10'
    >>> die_plan(GeneralizedWarner(p=2 / 3, q=1 / 6))[0].describe()
    'one d6'
    """
    plan = _plan(design)
    if plan is not None:
        return plan
    message = (f"no die in d{', d'.join(map(str, SINGLE_DICE))} or pair of dice realizes "
               f"{design.model} with {format_parameters(design)} exactly")
    if design.repeated_draw() is not None and design.designed_dont_know:
        message += ("; Kuk's cards drawn several times are a die rolled several times, "
                    "which cannot also give the \"don't know\" branch; use dont_know = 0 or "
                    f"{otherwise}")
        raise DieDesignError(message, None)
    found = nearest_die_design(design)
    if found is None:
        message += f"; {otherwise}, which realizes any design"
        raise DieDesignError(message, None)
    nearest, nearest_plan = found
    message += (
        f"; nearest design with no more privacy loss: {format_parameters(nearest, design)} "
        f"with {_describe_plan(nearest, nearest_plan)} (Shafer loss "
        f"{nearest.privacy_loss('shafer'):.4f}, Walley {nearest.privacy_loss('walley'):.4f}; "
        f"requested {design.privacy_loss('shafer'):.4f} and "
        f"{design.privacy_loss('walley'):.4f}); use it in the survey file or {otherwise}"
    )
    raise DieDesignError(message, nearest, nearest_plan)


def _describe_plan(design: Design, plan: Sequence[GroupDie | None]) -> str:
    described = [die.describe() if die is not None else "no die" for die in plan]
    if len(set(described)) == 1:
        return described[0]
    return ", ".join(f"{describe} in group {name}"
                     for name, describe in zip(design.group_names, described, strict=True))


# -- numeric questions -------------------------------------------------------------------------

#: Most cards a form prints as a deck for respondents to make (a deck no die realizes).
MAX_PRINTED_CARDS = 60
# Dice a scrambler may be the sum of (a number of dice of one kind from SINGLE_DICE).
_MAX_SUMMED_DICE = 4


@dataclass(frozen=True, kw_only=True)
class NumberDevice:
    """How a respondent draws a numeric design's scrambling number ``name`` in private.

    * ``kind="dice"``: roll ``dice`` and add up the faces (the scrambler is that sum);
    * ``kind="table"``: roll ``table.dice`` and look the number up: of the table's outcomes
      the first ``table.counts[0]`` give ``values[0]``, and so on;
    * ``kind="cards"``: make a deck of the cards ``values`` (a card per entry), shuffle,
      draw one and put it back.
    """

    name: str
    kind: Literal["dice", "table", "cards"]
    dice: tuple[int, ...] = ()
    table: DieTable | None = None
    values: tuple[Fraction, ...] = ()


def _summed_dice(deck: Deck) -> tuple[int, ...] | None:
    for sides in SINGLE_DICE:
        for count in range(1, _MAX_SUMMED_DICE + 1):
            if sides ** count > 10_000:
                break
            if deck.values[0] == count and deck.values[-1] == count * sides \
                    and deck == Deck.dice(count, sides):
                return (sides,) * count
    return None


def _number_device(name: str, deck: Deck) -> NumberDevice | None:
    summed = _summed_dice(deck)
    if summed is not None:
        return NumberDevice(name=name, kind="dice", dice=summed)
    probabilities = [p for _, p in deck.points()]
    dice = smallest_dice([probabilities])
    if dice is not None:
        return NumberDevice(name=name, kind="table", dice=dice,
                            table=die_table(probabilities, dice), values=deck.values)
    if deck.cards <= MAX_PRINTED_CARDS:
        return NumberDevice(name=name, kind="cards", values=tuple(
            v for v, w in zip(deck.values, deck.weights, strict=True) for _ in range(w)))
    return None


def numeric_die_plan(design: QuantitativeDesign, *,
                     otherwise: str = "generate with --mode slips"
                     ) -> tuple[tuple[GroupDie | None, ...], tuple[NumberDevice, ...]]:
    """What respondents of a numeric design roll or draw themselves, exactly: per group, the
    dice that pick the step (None: one step, nothing to roll), and a device per scrambling
    number (a sum of dice, a die table, or a printed card deck).

    A card deck or dice is realized exactly; a continuous scrambler (normal, uniform,
    exponential, Laplace) or one known only by its mean and sd is not, and is refused with
    a :class:`DieDesignError` whose message ends with ``otherwise``.

    >>> from surveykit.designs.quantitative import Eriksson
    >>> steps, devices = numeric_die_plan(Eriksson(p=0.6, scrambler=[0, 1, 3, 5, 8]))
    >>> steps[0].describe(), [(d.name, d.kind, d.dice) for d in devices]
    ('one d10', [('S', 'table', (10,))])
    """
    steps: list[GroupDie | None] = []
    for g, group in enumerate(design.protocol.groups):
        used = tuple(s for s in group if s.probability > 0)
        if len(used) == 1:
            steps.append(None)
            continue
        probabilities = [s.probability for s in used]
        dice = smallest_dice([probabilities])
        if dice is None:
            in_group = f" in group {g + 1}" if len(design.protocol.groups) > 1 else ""
            shown = ", ".join(f"{s.code} {format_probability(s.probability)}" for s in used)
            raise DieDesignError(
                f"no die in d{', d'.join(map(str, SINGLE_DICE))} or pair of dice realizes the "
                f"steps of {design.model}{in_group} ({shown}) exactly; choose probabilities "
                f"that are whole numbers of a die's faces (p = 0.6 is a d10, p = 2/3 a d6) or "
                f"{otherwise}", None)
        steps.append(GroupDie(kind="instructions", dice=dice, instructions=used,
                              table=die_table(probabilities, dice)))
    used_names = dict.fromkeys(name for group in design.protocol.groups for step in group
                               for name in step.scrambler_names)
    devices = []
    for name in used_names:
        scrambler = design.scramblers[name]
        if isinstance(scrambler, Unknown):
            continue  # an unrelated question: asked, not drawn
        device = _number_device(name, scrambler) if isinstance(scrambler, Deck) else None
        if device is None:
            what = (f"a deck of {scrambler.cards} cards no die realizes (at most "
                    f"{MAX_PRINTED_CARDS} cards are printed)" if isinstance(scrambler, Deck)
                    else scrambler.describe())
            raise DieDesignError(
                f"scrambler {name} of {design.model} is {what}: no dice or printed cards "
                f"draw it exactly; {otherwise} (the randomizer draws it and prints it on the "
                "slip) or give a card deck or dice (scrambler = [0, 1, 3, 5, 8], \"die\" or "
                "\"dice\")", None)
        devices.append(device)
    return tuple(steps), tuple(devices)


# -- the nearest design that dice realize -----------------------------------------------------


def _probability_parameters(design: Design) -> list[tuple[str, int | None, Fraction]]:
    """(name, index in a list or None, exact value) of every probability parameter."""
    found = []
    fixed = design.population_parameters
    for name, value in design.parameters().items():
        if name not in _PROBABILITY_PARAMETERS:
            continue
        if isinstance(value, list | tuple):
            found += [(name, i, as_fraction(v)) for i, v in enumerate(value)]
        else:
            found.append((name, None, as_fraction(value)))
    return [slot for slot in found if slot[:2] not in fixed]


def _neighbours(value: Fraction, outcomes: int, width: int) -> list[Fraction]:
    low = math.floor(value * outcomes)
    return [Fraction(k, outcomes) for k in range(low - width + 1, low + width + 1)
            if 0 <= k <= outcomes]


def _with_values(design: Design, slots, values: Sequence[Fraction]) -> Design | None:
    parameters = {k: v for k, v in design.parameters().items() if k != "epsilon"}
    for (name, index, _), value in zip(slots, values, strict=True):
        number = float(value)
        if index is None:
            parameters[name] = number
        else:
            vector = list(parameters[name])
            vector[index] = number
            parameters[name] = vector
    try:
        return make_design(design.model, **parameters)
    except ParameterError:
        return None


def _candidates(slots, grids: Sequence[int]) -> Iterator[tuple[Fraction, ...]]:
    # Few parameters: look further around each value; many: stay next to it.
    width = 3 if len(slots) <= 2 else 2 if len(slots) <= 4 else 1
    seen: set[tuple[Fraction, ...]] = set()
    for outcomes in grids:
        choices = [_neighbours(value, outcomes, width) for _, _, value in slots]
        for values in itertools.product(*choices):
            if values not in seen:
                seen.add(values)
                yield values


def nearest_die_design(design: Design) -> tuple[Design, tuple[GroupDie | None, ...]] | None:
    """The design of the same preset closest to ``design`` (largest change of a probability
    parameter) that dice realize and whose Shafer and Walley losses do not exceed
    ``design``'s; ties go to fewer outcomes. None when there is none (or the preset has no
    probability parameters to move, such as a custom matrix).

    Candidates put each probability parameter (p, q, dont_know) on or next to
    the grid k / n of every candidate number of outcomes n.

    >>> from surveykit.designs.warner import GeneralizedWarner
    >>> nearest, plan = nearest_die_design(GeneralizedWarner(p=0.333, q=0.111))
    >>> as_fraction(nearest.p), as_fraction(nearest.q), plan[0].describe()
    (Fraction(1, 3), Fraction(1, 9), 'two d6')
    """
    slots = _probability_parameters(design)
    if not slots:
        return None
    original = tuple(value for _, _, value in slots)
    shafer = design.privacy_loss("shafer") + _LOSS_SLACK
    walley = design.privacy_loss("walley") + _LOSS_SLACK
    grids = sorted({math.prod(dice) for dice in _CANDIDATES})
    scored = sorted(
        (max(abs(a - b) for a, b in zip(values, original, strict=True)), values)
        for values in _candidates(slots, grids) if values != original)
    best: tuple | None = None
    for distance, values in scored:
        if best is not None and distance > best[0][0]:
            break
        candidate = _with_values(design, slots, values)
        if candidate is None:
            continue
        plan = _plan(candidate)
        if plan is None:
            continue
        if candidate.privacy_loss("shafer") > shafer or candidate.privacy_loss("walley") > walley:
            continue
        outcomes = sum(math.prod(die.dice) for die in plan if die is not None)
        key = (distance, outcomes, values)
        if best is None or key < best[0]:
            best = (key, candidate, plan)
    return None if best is None else (best[1], best[2])


# -- formatting -------------------------------------------------------------------------------


def format_faces(span: tuple[int, int] | None, none: str = "-") -> str:
    """Die faces (low, high) as ``'1–4'`` (en dash), ``'5'``, or ``none`` for an empty span.

    >>> format_faces((1, 4)), format_faces((5, 5)), format_faces(None)
    ('1–4', '5', '-')
    """
    if span is None:
        return none
    low, high = span
    return str(low) if low == high else f"{low}\u2013{high}"


def format_probability(value: Fraction) -> str:
    """A probability as a decimal to type into a survey file, with the fraction it names
    unless the decimal is short and exact.

    >>> format_probability(Fraction(3, 5)), format_probability(Fraction(1, 3))
    ('0.6', '0.3333333333333333 (1/3)')
    >>> format_probability(Fraction(333, 1000))
    '0.333 (333/1000)'
    """
    text = repr(float(value))
    if text.endswith(".0"):
        text = text[:-2]
    if value.denominator in (1, 2, 4, 5, 10, 20, 25, 50, 100):
        return text
    return f"{text} ({value})"


def format_parameters(design: Design, reference: Design | None = None) -> str:
    """The probability parameters of ``design`` as ``p = 0.6, q = 0.2`` (exact fractions where
    a decimal is not exact). With ``reference``, only those that differ from it.

    >>> from surveykit.designs.detection import StochasticLieDetector
    >>> format_parameters(StochasticLieDetector(p=[0.25, 0.75]))
    'p = [0.25, 0.75], dont_know = 0'
    """
    mine = design.parameters()
    shown = ["its matrix"] if "matrix" in mine and reference is None else []
    theirs = reference.parameters() if reference is not None else {}
    for name in _PROBABILITY_PARAMETERS:
        if name not in mine or (reference is not None and mine[name] == theirs.get(name)):
            continue
        value = mine[name]
        if isinstance(value, list | tuple):
            text = "[" + ", ".join(format_probability(as_fraction(v)) for v in value) + "]"
        else:
            text = format_probability(as_fraction(value))
        shown.append(f"{name} = {text}")
    return ", ".join(shown) or "its parameters"
