"""Self-randomized forms: map the faces of real dice to the three rules exactly.

In die mode every respondent gets the same form, rolls a die in private for
each question and looks up which rule applies: answer truthfully (T), give the
opposite answer (L) or say "don't know" (D). A die with d fair faces realizes
the mechanism (p, q, 1 - p - q) exactly if and only if p d and q d are whole
numbers: faces 1..p d mean T, the next q d faces mean L, the rest mean D.
Two dice (a first die with d1 faces, a second with d2) give d1 d2 equally
likely outcomes (a, b), numbered (a - 1) d2 + b, and work the same way.

All arithmetic is exact (``fractions.Fraction``). A float p is read as the
simplest fraction whose double is exactly p (so 0.6 is 3/5 and 2/3 is 2/3),
or given directly as a ``Fraction``, ``Decimal`` or decimal string.

When no candidate die realizes the design, :func:`find_die_design` raises
:class:`DieDesignError` naming the nearest realizable design that does not
lose more privacy than the requested one in either semantics (Shafer
ln(p/q), Def. 3.1; Walley ln((1 - q)/q), Def. 3.13), and its losses.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from surveykit.designs.warner import GeneralizedWarner
from surveykit.errors import ParameterError

__all__ = [
    "DieDesign",
    "DieDesignError",
    "DieRow",
    "SINGLE_DICE",
    "as_fraction",
    "candidate_dice",
    "find_die_design",
]

#: Dice a field team can buy, smallest first.
SINGLE_DICE: tuple[int, ...] = (2, 4, 6, 8, 10, 12, 20, 100)
# Pairs of dice are built from these (a d100 is itself usually two d10s).
_PAIR_DICE: tuple[int, ...] = (4, 6, 8, 10, 12, 20)
# Floats are read as fractions with at most this denominator when that is exact.
_MAX_DENOMINATOR = 10**6


class DieDesignError(ParameterError):
    """No candidate die realizes the design; the message names the nearest one."""

    def __init__(self, message: str, nearest: DieDesign | None) -> None:
        super().__init__(message)
        self.nearest = nearest


def as_fraction(value: float | int | str | Decimal | Fraction) -> Fraction:
    """The exact probability meant by ``value``.

    A float becomes the simplest fraction (denominator up to 10^6) whose
    double is exactly that float, else its shortest decimal (``repr``).

    >>> as_fraction(0.6), as_fraction(2 / 3), as_fraction("0.35")
    (Fraction(3, 5), Fraction(2, 3), Fraction(7, 20))
    """
    if isinstance(value, bool):
        raise ParameterError(f"probability ({value!r}) must be a number, not a truth value")
    if isinstance(value, Fraction | int):
        return Fraction(value)
    if isinstance(value, Decimal | str):
        try:
            return Fraction(value)
        except (ValueError, ArithmeticError):
            raise ParameterError(f"probability ({value!r}) is not a number") from None
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ParameterError(f"probability ({value!r}) must be finite")
        simple = Fraction(value).limit_denominator(_MAX_DENOMINATOR)
        return simple if float(simple) == value else Fraction(repr(value))
    raise ParameterError(f"probability ({value!r}) must be a number")


@dataclass(frozen=True)
class DieRow:
    """One line of the lookup table: for ``first`` face of the first die (None
    with a single die), the faces (low, high) of the (second) die meaning each
    rule, or None when no face of that row means it."""

    first: int | None
    truthful: tuple[int, int] | None
    opposite: tuple[int, int] | None
    dont_know: tuple[int, int] | None


@dataclass(frozen=True, kw_only=True)
class DieDesign:
    """Dice that realize (p, q, 1 - p - q) exactly, and the face mapping.

    ``dice`` is ``(d,)`` for one die or ``(d1, d2)`` for two; of the
    ``outcomes`` = d1 d2 equally likely outcomes the first ``truthful_count``
    mean T, the next ``opposite_count`` mean L, the rest D.
    """

    dice: tuple[int, ...]
    truthful_count: int
    opposite_count: int

    @property
    def outcomes(self) -> int:
        return math.prod(self.dice)

    @property
    def p(self) -> Fraction:
        return Fraction(self.truthful_count, self.outcomes)

    @property
    def q(self) -> Fraction:
        return Fraction(self.opposite_count, self.outcomes)

    @property
    def dont_know(self) -> Fraction:
        return 1 - self.p - self.q

    @property
    def epsilon_shafer(self) -> float:
        """ln(p / q) (Def. 3.1), from :class:`GeneralizedWarner`; ``inf`` when q = 0."""
        return self.mechanism().epsilon_shafer

    @property
    def epsilon_walley(self) -> float:
        """ln((1 - q) / q) (Def. 3.13), from :class:`GeneralizedWarner`; ``inf`` when q = 0."""
        return self.mechanism().epsilon_walley

    def mechanism(self) -> GeneralizedWarner:
        """The mechanism this die realizes."""
        return GeneralizedWarner(p=float(self.p), q=float(self.q))

    def describe(self) -> str:
        """E.g. ``one d6`` or ``two dice, a d6 and a d10``."""
        if len(self.dice) == 1:
            return f"one d{self.dice[0]}"
        first, second = self.dice
        if first == second:
            return f"two d{first}"
        return f"two dice, a d{first} and a d{second}"

    def rows(self) -> list[DieRow]:
        """The lookup table, one row per face of the first die (one row for one die)."""
        if len(self.dice) == 1:
            return [self._row(None, 0, self.dice[0])]
        first, second = self.dice
        return [self._row(a, (a - 1) * second, second) for a in range(1, first + 1)]

    def _row(self, first: int | None, offset: int, faces: int) -> DieRow:
        t_end = self.truthful_count
        l_end = t_end + self.opposite_count

        def faces_in(start: int, stop: int) -> tuple[int, int] | None:
            # outcome numbers offset+1 .. offset+faces intersected with (start, stop]
            low = max(start, offset) + 1 - offset
            high = min(stop, offset + faces) - offset
            return (low, high) if low <= high else None

        return DieRow(first=first, truthful=faces_in(0, t_end),
                      opposite=faces_in(t_end, l_end),
                      dont_know=faces_in(l_end, self.outcomes))


def candidate_dice() -> list[tuple[int, ...]]:
    """Single dice smallest first, then pairs by number of outcomes (equal dice first)."""
    pairs = {
        (a, b) for a in _PAIR_DICE for b in _PAIR_DICE if a <= b
    }
    ordered_pairs = sorted(pairs, key=lambda d: (d[0] * d[1], d[0] != d[1], d))
    return [(d,) for d in SINGLE_DICE] + ordered_pairs


def _exact_design(dice: tuple[int, ...], p: Fraction, q: Fraction) -> DieDesign | None:
    outcomes = math.prod(dice)
    t, o = p * outcomes, q * outcomes
    if t.denominator == 1 and o.denominator == 1:
        return DieDesign(dice=dice, truthful_count=int(t), opposite_count=int(o))
    return None


def _neighbours(dice: tuple[int, ...], p: Fraction, q: Fraction) -> Iterator[DieDesign]:
    outcomes = math.prod(dice)
    t0, o0 = math.floor(p * outcomes), math.floor(q * outcomes)
    for t in range(t0 - 2, t0 + 4):
        for o in range(o0 - 2, o0 + 4):
            if 0 <= o < t and t + o <= outcomes:
                yield DieDesign(dice=dice, truthful_count=t, opposite_count=o)


def _nearest(p: Fraction, q: Fraction) -> DieDesign | None:
    """The closest design (max-norm on (p, q)) whose Shafer and Walley losses do
    not exceed those of (p, q); ties go to fewer outcomes."""
    best: tuple | None = None
    for rank, dice in enumerate(candidate_dice()):
        for design in _neighbours(dice, p, q):
            # Walley: (1 - Q)/Q <= (1 - q)/q  <=>  Q >= q;  Shafer: P/Q <= p/q <=> P q <= p Q
            if design.q < q or design.p * q > p * design.q:
                continue
            distance = max(abs(design.p - p), abs(design.q - q))
            key = (distance, design.outcomes, rank)
            if best is None or key < best[0]:
                best = (key, design)
    return None if best is None else best[1]


def _format_fraction(value: Fraction) -> str:
    return f"{float(value):.6g}" + ("" if value.denominator in (1, 2, 4, 5, 10, 20, 25, 50, 100)
                                    else f" ({value})")


def find_die_design(p: float | str | Decimal | Fraction,
                    q: float | str | Decimal | Fraction) -> DieDesign:
    """The smallest die (then pair of dice) realizing (p, q, 1 - p - q) exactly.

    Candidates, in order: one d2, d4, d6, d8, d10, d12, d20, d100, then two
    dice (d4..d20) by number of outcomes. Raises :class:`DieDesignError` with
    the nearest realizable design when none fits.

    >>> find_die_design(0.6, 0.2).describe()
    'one d10'
    >>> find_die_design(2 / 3, 1 / 6).describe()
    'one d6'
    """
    p_exact, q_exact = as_fraction(p), as_fraction(q)
    # Validates the range and p > q once, with the usual messages.
    GeneralizedWarner(p=float(p_exact), q=float(q_exact))
    if p_exact + q_exact > 1:
        raise ParameterError(f"p + q ({p_exact + q_exact}) must be at most 1")
    for dice in candidate_dice():
        design = _exact_design(dice, p_exact, q_exact)
        if design is not None:
            return design
    nearest = _nearest(p_exact, q_exact)
    requested = GeneralizedWarner(p=float(p_exact), q=float(q_exact))
    message = (
        f"no die in d{', d'.join(map(str, SINGLE_DICE))} or pair of dice realizes "
        f"p = {_format_fraction(p_exact)}, q = {_format_fraction(q_exact)} exactly"
    )
    if nearest is not None:
        message += (
            f"; nearest design with no more privacy loss: p = {_format_fraction(nearest.p)}, "
            f"q = {_format_fraction(nearest.q)} with {nearest.describe()} "
            f"(Shafer ln(p/q) = {nearest.epsilon_shafer:.4f}, "
            f"Walley ln((1-q)/q) = {nearest.epsilon_walley:.4f}; requested "
            f"{requested.epsilon_shafer:.4f} and {requested.epsilon_walley:.4f}); "
            "use it in the survey file or generate with --mode slips"
        )
    else:
        message += "; use --mode slips, which realizes any p and q"
    raise DieDesignError(message, nearest)
