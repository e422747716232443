"""Scrambling variables: the known random numbers numeric-answer designs mix into an answer.

A numeric randomized-response design (:mod:`surveykit.designs.quantitative`)
has each respondent draw a number S from a device the analyst knows (a
numbered card deck, dice, a computer's draw from a stated distribution) and
report, say, their true value times S. What the design can promise and
estimate depends on S's distribution:

* the estimators need its mean and variance only (RRTCS's ``mu`` and
  ``sigma``): :class:`Moments` holds just those;
* the privacy loss, the questionnaire (what to draw) and simulation need the
  whole distribution: :class:`Deck` (cards or dice, exact fractions; the loss
  is computed exactly by enumeration), :class:`Uniform`, :class:`Normal`,
  :class:`Exponential` and :class:`Laplace` (continuous);
* :class:`Unknown` is the answer to an unrelated question whose
  distribution nobody knows (RRreg's ``mix.unknown``); its mean is estimated.

:func:`scrambler` builds one from the forms survey files and RRTCS users
write: a kind and the mean and standard deviation (``"uniform"`` with mu = 1.5
and sigma = sqrt(1/12) is uniform on [1, 2]), or a list of card values.

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

import numpy as np

from surveykit.designs.base import as_fraction
from surveykit.errors import ParameterError

__all__ = [
    "KINDS",
    "Deck",
    "Exponential",
    "Laplace",
    "Moments",
    "Normal",
    "Scrambler",
    "Uniform",
    "Unknown",
    "check_number",
    "scrambler",
]

# A deck's mean and sd given beside its cards must agree with the cards to this relative
# tolerance (RRTCS's examples give them to 15 digits).
_AGREEMENT = 1e-9
# More cards than this is a table of values, not a deck anyone shuffles.
_MAX_CARDS = 100_000
_SQRT3 = math.sqrt(3.0)
_SQRT2 = math.sqrt(2.0)


def check_number(name: str, value: object, *, positive: bool = False,
                 nonnegative: bool = False) -> float:
    """``value`` as a finite float, or a ParameterError naming ``name``.

    >>> check_number("mu", 3)
    3.0
    """
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating
                                                 | Fraction):
        raise ParameterError(f"{name} ({value!r}) must be a number")
    number = float(value)
    if not math.isfinite(number):
        raise ParameterError(f"{name} ({number}) must be a finite number")
    if positive and number <= 0:
        raise ParameterError(f"{name} ({number:g}) must be greater than 0")
    if nonnegative and number < 0:
        raise ParameterError(f"{name} ({number:g}) must not be negative")
    return number


def _short(value: float | Fraction) -> str:
    if isinstance(value, Fraction):
        if value.denominator == 1:
            return str(value.numerator)
        return f"{float(value):g}"
    return f"{value:g}"


class Scrambler:
    """Base class: a known (or, for :class:`Unknown`, estimated) distribution of a number."""

    #: The kind's name in survey files and specs.
    kind: ClassVar[str] = ""
    #: True for card decks and dice: answers take finitely many values per true value.
    discrete: ClassVar[bool] = False
    #: False when only the mean and sd are known (:class:`Moments`) or nothing (:class:`Unknown`).
    known: ClassVar[bool] = True

    @property
    def mean(self) -> float:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    @property
    def variance(self) -> float:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    @property
    def sd(self) -> float:
        """The standard deviation (population, divisor N for a deck: RRTCS's ``sigma``)."""
        return math.sqrt(self.variance)

    @property
    def second_moment(self) -> float:
        """E[S^2] = variance + mean^2."""
        return self.variance + self.mean ** 2

    def support(self) -> tuple[float, float]:
        """The smallest and largest value S can take (infinite where unbounded)."""
        return (-math.inf, math.inf)

    def cdf(self, x: np.ndarray | float) -> np.ndarray:
        """P(S <= x)."""
        raise self._not_known("compute the distribution function of")

    def density(self, x: np.ndarray | float) -> np.ndarray:
        """The density at x (continuous kinds) or P(S = x) (decks)."""
        raise self._not_known("compute the density of")

    def sample(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` independent draws (simulation; the field randomizer draws a deck's card)."""
        raise self._not_known("draw from")

    def device(self) -> str:
        """What a respondent draws, in plain words."""
        return self.describe()

    def describe(self) -> str:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def spec(self) -> dict[str, object]:  # pragma: no cover - every subclass defines it
        """JSON-ready parameters, with ``kind``."""
        raise NotImplementedError

    def _not_known(self, what: str) -> ParameterError:
        return ParameterError(
            f"cannot {what} {self.describe()}: only its mean and standard deviation are "
            "stated; give its distribution (e.g. scrambler = \"uniform\" or a list of card "
            "values)")


@dataclass(frozen=True)
class Deck(Scrambler):
    """A shuffled deck of numbered cards, or dice: finitely many values with exact
    probabilities (``weights[i]`` cards show ``values[i]``).

    >>> deck = Deck.from_cards([0, 1, 3, 5, 8])
    >>> deck.mean, round(deck.sd, 6)           # RRTCS's Eriksson example: mu, sigma
    (3.4, 2.87054)
    >>> Deck.dice(number=2).probability(7)
    Fraction(1, 6)
    """

    values: tuple[Fraction, ...]
    weights: tuple[int, ...]
    name: str = "deck"

    kind: ClassVar[str] = "deck"
    discrete: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if not self.values or len(self.values) != len(self.weights):
            raise ParameterError("a deck needs at least one card value and one weight per value")
        if any(w <= 0 for w in self.weights):
            raise ParameterError(f"deck weights ({list(self.weights)!r}) must be positive")
        if len(set(self.values)) != len(self.values):
            raise ParameterError("deck values must be distinct (give a card twice as weight 2)")
        order = sorted(range(len(self.values)), key=lambda i: self.values[i])
        object.__setattr__(self, "values", tuple(self.values[i] for i in order))
        object.__setattr__(self, "weights", tuple(int(self.weights[i]) for i in order))

    @classmethod
    def from_cards(cls, cards: Sequence[object], name: str = "deck") -> Deck:
        """A deck with one card per entry (repeat a value for several cards).

        >>> Deck.from_cards([1, 2, 2]).probability(2)
        Fraction(2, 3)
        """
        if isinstance(cards, str | bytes) or not isinstance(cards, Sequence | np.ndarray):
            raise ParameterError(f"cards ({cards!r}) must be a list of numbers, e.g. [0, 1, 3]")
        if not 0 < len(cards) <= _MAX_CARDS:
            raise ParameterError(
                f"a deck has between 1 and {_MAX_CARDS:,} cards, not {len(cards):,}")
        counts: dict[Fraction, int] = {}
        for i, card in enumerate(cards):
            value = as_fraction(check_number(f"card {i + 1}", card))
            counts[value] = counts.get(value, 0) + 1
        return cls(values=tuple(counts), weights=tuple(counts.values()), name=name)

    @classmethod
    def dice(cls, number: int = 1, sides: int = 6) -> Deck:
        """The sum of ``number`` fair dice with faces 1..``sides``.

        >>> Deck.dice().mean, Deck.dice(number=2).variance
        (3.5, 5.833333333333333)
        """
        for label, value in (("number", number), ("sides", sides)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ParameterError(f"{label} ({value!r}) must be a whole number >= 1")
        if sides < 2:
            raise ParameterError(f"sides ({sides}) must be at least 2")
        counts = {0: 1}
        for _ in range(number):
            step: dict[int, int] = {}
            for total, ways in counts.items():
                for face in range(1, sides + 1):
                    step[total + face] = step.get(total + face, 0) + ways
            counts = step
        name = (f"a fair {sides}-sided die" if number == 1
                else f"the sum of {number} fair {sides}-sided dice")
        return cls(values=tuple(Fraction(v) for v in counts),
                   weights=tuple(counts.values()), name=name)

    @property
    def cards(self) -> int:
        """The number of cards (or equally likely outcomes of the dice)."""
        return sum(self.weights)

    def points(self) -> tuple[tuple[Fraction, Fraction], ...]:
        """(value, exact probability) pairs, values ascending."""
        total = self.cards
        return tuple((v, Fraction(w, total)) for v, w in zip(self.values, self.weights,
                                                               strict=True))

    def probability(self, value: object) -> Fraction:
        """The exact probability of drawing ``value`` (0 if no card shows it)."""
        target = as_fraction(check_number("value", value))
        for v, p in self.points():
            if v == target:
                return p
        return Fraction(0)

    @property
    def exact_mean(self) -> Fraction:
        return sum((v * p for v, p in self.points()), Fraction(0))

    @property
    def exact_variance(self) -> Fraction:
        mean = self.exact_mean
        return sum(((v - mean) ** 2 * p for v, p in self.points()), Fraction(0))

    @property
    def mean(self) -> float:
        return float(self.exact_mean)

    @property
    def variance(self) -> float:
        return float(self.exact_variance)

    def support(self) -> tuple[float, float]:
        return (float(self.values[0]), float(self.values[-1]))

    def cdf(self, x: np.ndarray | float) -> np.ndarray:
        values = np.array([float(v) for v in self.values])
        cumulative = np.cumsum(self.weights) / self.cards
        index = np.searchsorted(values, np.asarray(x, dtype=float), side="right")
        return np.where(index > 0, cumulative[np.maximum(index - 1, 0)], 0.0)

    def density(self, x: np.ndarray | float) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        out = np.zeros(x.shape)
        for v, p in self.points():
            out = np.where(x == float(v), float(p), out)
        return out

    def sample(self, size: int, rng: np.random.Generator) -> np.ndarray:
        values = np.array([float(v) for v in self.values])
        return rng.choice(values, size=size, p=np.array(self.weights) / self.cards)

    def device(self) -> str:
        if self.name != "deck":
            return self.name
        shown = ", ".join(f"{_short(v)}" + (f" ({w} cards)" if w > 1 else "")
                          for v, w in zip(self.values, self.weights, strict=True))
        return f"a card from a well-shuffled deck of {self.cards} cards numbered {shown}"

    def describe(self) -> str:
        if self.name != "deck":
            return self.name
        if self.cards <= 12:
            cards = [_short(v) for v, w in zip(self.values, self.weights, strict=True)
                     for _ in range(w)]
            return "deck [" + ", ".join(cards) + "]"
        return f"deck of {self.cards} cards from {_short(self.values[0])} to " \
               f"{_short(self.values[-1])}"

    def spec(self) -> dict[str, object]:
        return {"kind": "deck", "cards": [float(v) if v.denominator != 1 else v.numerator
                                          for v, w in zip(self.values, self.weights,
                                                          strict=True) for _ in range(w)]}


@dataclass(frozen=True)
class Uniform(Scrambler):
    """Uniform on [low, high] (e.g. Saha's W on [1, 2]).

    >>> u = Uniform(low=1.0, high=10.0)
    >>> u.mean, round(u.variance, 4)            # RRTCS's Saha example: mu 5.5, sigma^2 81/12
    (5.5, 6.75)
    """

    low: float
    high: float
    kind: ClassVar[str] = "uniform"

    def __post_init__(self) -> None:
        low, high = check_number("low", self.low), check_number("high", self.high)
        if high <= low:
            raise ParameterError(f"high ({high:g}) must be greater than low ({low:g})")
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)

    @property
    def mean(self) -> float:
        return (self.low + self.high) / 2

    @property
    def variance(self) -> float:
        return (self.high - self.low) ** 2 / 12

    def support(self) -> tuple[float, float]:
        return (self.low, self.high)

    def cdf(self, x):
        return np.clip((np.asarray(x, dtype=float) - self.low) / (self.high - self.low), 0, 1)

    def density(self, x):
        x = np.asarray(x, dtype=float)
        return np.where((x >= self.low) & (x <= self.high), 1 / (self.high - self.low), 0.0)

    def sample(self, size, rng):
        return rng.uniform(self.low, self.high, size)

    def describe(self) -> str:
        return f"uniform on [{self.low:g}, {self.high:g}]"

    def spec(self) -> dict[str, object]:
        return {"kind": "uniform", "low": self.low, "high": self.high}


@dataclass(frozen=True)
class Normal(Scrambler):
    """Normal with mean ``mu`` and standard deviation ``sigma`` (RRreg's ``mix.norm`` mask).

    >>> Normal(mu=40, sigma=15).variance
    225.0
    """

    mu: float
    sigma: float
    kind: ClassVar[str] = "normal"

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", check_number("mu", self.mu))
        object.__setattr__(self, "sigma", check_number("sigma", self.sigma, positive=True))

    @property
    def mean(self) -> float:
        return self.mu

    @property
    def variance(self) -> float:
        return self.sigma ** 2

    def cdf(self, x):
        from scipy import stats

        return stats.norm.cdf(np.asarray(x, dtype=float), self.mu, self.sigma)

    def density(self, x):
        from scipy import stats

        return stats.norm.pdf(np.asarray(x, dtype=float), self.mu, self.sigma)

    def sample(self, size, rng):
        return rng.normal(self.mu, self.sigma, size)

    def describe(self) -> str:
        return f"normal with mean {self.mu:g} and sd {self.sigma:g}"

    def spec(self) -> dict[str, object]:
        return {"kind": "normal", "mu": self.mu, "sigma": self.sigma}


@dataclass(frozen=True)
class Exponential(Scrambler):
    """Exponential with mean ``mu`` (RRreg's ``mix.exp`` mask; its sd is also ``mu``).

    >>> Exponential(mu=10).sd
    10.0
    """

    mu: float
    kind: ClassVar[str] = "exponential"

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", check_number("mu", self.mu, positive=True))

    @property
    def mean(self) -> float:
        return self.mu

    @property
    def variance(self) -> float:
        return self.mu ** 2

    def support(self) -> tuple[float, float]:
        return (0.0, math.inf)

    def cdf(self, x):
        x = np.asarray(x, dtype=float)
        return np.where(x > 0, -np.expm1(-np.maximum(x, 0) / self.mu), 0.0)

    def density(self, x):
        x = np.asarray(x, dtype=float)
        return np.where(x >= 0, np.exp(-np.maximum(x, 0) / self.mu) / self.mu, 0.0)

    def sample(self, size, rng):
        return rng.exponential(self.mu, size)

    def describe(self) -> str:
        return f"exponential with mean {self.mu:g}"

    def spec(self) -> dict[str, object]:
        return {"kind": "exponential", "mu": self.mu}


@dataclass(frozen=True)
class Laplace(Scrambler):
    """Laplace (double exponential) with centre ``mu`` and scale ``scale`` (sd = scale
    * sqrt(2)): the noise of the Laplace mechanism of differential privacy.

    >>> round(Laplace(mu=0, scale=2).sd, 6)
    2.828427
    """

    mu: float
    scale: float
    kind: ClassVar[str] = "laplace"

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", check_number("mu", self.mu))
        object.__setattr__(self, "scale", check_number("scale", self.scale, positive=True))

    @property
    def mean(self) -> float:
        return self.mu

    @property
    def variance(self) -> float:
        return 2 * self.scale ** 2

    def cdf(self, x):
        t = (np.asarray(x, dtype=float) - self.mu) / self.scale
        return np.where(t < 0, 0.5 * np.exp(np.minimum(t, 0)), 1 - 0.5 * np.exp(-np.maximum(t, 0)))

    def density(self, x):
        t = np.abs(np.asarray(x, dtype=float) - self.mu) / self.scale
        return np.exp(-t) / (2 * self.scale)

    def sample(self, size, rng):
        return rng.laplace(self.mu, self.scale, size)

    def describe(self) -> str:
        return f"Laplace with centre {self.mu:g} and scale {self.scale:g}"

    def spec(self) -> dict[str, object]:
        return {"kind": "laplace", "mu": self.mu, "scale": self.scale}


@dataclass(frozen=True)
class Moments(Scrambler):
    """A scrambler of which only the mean ``mu`` and standard deviation ``sigma`` are stated
    (RRTCS's parameters). Enough for the moment estimators; not for privacy, simulation or
    a questionnaire.

    >>> Moments(mu=1.111111, sigma=0.5414886).describe()
    'a scrambler with mean 1.11111 and sd 0.541489 (distribution not stated)'
    """

    mu: float
    sigma: float | None = None
    kind: ClassVar[str] = "moments"
    known: ClassVar[bool] = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", check_number("mu", self.mu))
        if self.sigma is not None:
            object.__setattr__(self, "sigma", check_number("sigma", self.sigma,
                                                           nonnegative=True))

    @property
    def mean(self) -> float:
        return self.mu

    @property
    def variance(self) -> float:
        if self.sigma is None:
            raise ParameterError(
                f"the sd of {self.describe()} is not stated; give sigma (the randomization "
                "variance of each answer needs it)")
        return self.sigma ** 2

    def describe(self) -> str:
        if self.sigma is None:
            return f"a scrambler with mean {self.mu:g} (sd and distribution not stated)"
        return f"a scrambler with mean {self.mu:g} and sd {self.sigma:g} (distribution not stated)"

    def spec(self) -> dict[str, object]:
        return {"kind": "moments", "mu": self.mu, "sigma": self.sigma}


@dataclass(frozen=True)
class Unknown(Scrambler):
    """The true answer to an unrelated numeric question, whose distribution nobody knows
    (RRreg's ``mix.unknown``): its mean is estimated from two groups."""

    question: str = "the unrelated question"
    kind: ClassVar[str] = "unknown"
    known: ClassVar[bool] = False

    @property
    def mean(self) -> float:
        raise ParameterError("the unrelated question's mean is unknown: it is estimated")

    @property
    def variance(self) -> float:
        raise ParameterError("the unrelated question's variance is unknown")

    def describe(self) -> str:
        return f"the answer to {self.question} (distribution unknown)"

    def spec(self) -> dict[str, object]:
        return {"kind": "unknown"}


#: Kinds a scrambler can be given by, with the mean and sd (``mu``, ``sigma``).
KINDS = ("moments", "normal", "uniform", "laplace", "exponential", "die", "dice")


def scrambler(given: object, mu: object = None, sigma: object = None, *,
              name: str = "S") -> Scrambler:
    """A scrambler from what a survey file or an RRTCS user writes.

    ``given`` is a :class:`Scrambler`, a list of card values (a deck), or a
    kind from :data:`KINDS` combined with the mean ``mu`` and sd ``sigma``:
    ``"uniform"`` is the uniform with that mean and sd, ``"laplace"`` the
    Laplace, ``"exponential"`` needs sigma = mu (or no sigma), ``"die"`` is a
    fair six-sided die and ``"dice"`` the sum of two; ``None`` or
    ``"moments"`` keeps only the mean and sd (RRTCS's view). Where both a
    distribution and ``mu``/``sigma`` are given they must agree.

    >>> scrambler("uniform", 1.5, math.sqrt(1 / 12)).describe()
    'uniform on [1, 2]'
    >>> scrambler([0, 1, 3, 5, 8], 3.4, 2.87054001888146).describe()
    'deck [0, 1, 3, 5, 8]'
    >>> scrambler([1, 2], mu=2)
    Traceback (most recent call last):
    ...
    surveykit.errors.ParameterError: mu of S (2) disagrees with its cards deck [1, 2], whose mean is 1.5: give one of them
    """  # noqa: E501
    if isinstance(given, Scrambler):
        result = given
    elif given is None or (isinstance(given, str) and given.strip().casefold() == "moments"):
        if mu is None:
            raise ParameterError(
                f"scrambler {name} needs its mean mu (and standard deviation sigma), or its "
                "distribution (e.g. scrambler = \"uniform\", or a list of card values)")
        return Moments(mu=check_number(f"mu of {name}", mu),
                       sigma=None if sigma is None else check_number(
                           f"sigma of {name}", sigma, nonnegative=True))
    elif isinstance(given, str):
        result = _from_kind(given.strip().casefold(), mu, sigma, name)
    elif isinstance(given, Sequence | np.ndarray):
        result = Deck.from_cards(list(given))
    else:
        raise ParameterError(
            f"scrambler of {name} ({given!r}) must be one of {', '.join(KINDS)} or a list of "
            "card values")
    _agree(result, mu, sigma, name)
    return result


def _from_kind(kind: str, mu: object, sigma: object, name: str) -> Scrambler:
    if kind == "die":
        return Deck.dice(1)
    if kind == "dice":
        return Deck.dice(2)
    if kind not in KINDS:
        raise ParameterError(
            f"scrambler of {name} ({kind!r}) must be one of {', '.join(KINDS)} or a list of "
            "card values")
    if mu is None:
        raise ParameterError(f"scrambler {name} ({kind}) needs its mean mu")
    m = check_number(f"mu of {name}", mu)
    if kind == "exponential":
        return Exponential(mu=m)
    if sigma is None:
        raise ParameterError(f"scrambler {name} ({kind}) needs its standard deviation sigma")
    s = check_number(f"sigma of {name}", sigma, positive=True)
    if kind == "normal":
        return Normal(mu=m, sigma=s)
    if kind == "uniform":
        return Uniform(low=m - _SQRT3 * s, high=m + _SQRT3 * s)
    return Laplace(mu=m, scale=s / _SQRT2)


def _agree(result: Scrambler, mu: object, sigma: object, name: str) -> None:
    for label, given, actual in (("mu", mu, result.mean), ("sigma", sigma, result.sd)):
        if given is None:
            continue
        value = check_number(f"{label} of {name}", given)
        if abs(value - actual) > _AGREEMENT * max(1.0, abs(actual)):
            what = "mean" if label == "mu" else "sd"
            cards = "cards " if result.discrete else ""
            raise ParameterError(
                f"{label} of {name} ({value:g}) disagrees with its {cards}{result.describe()}, "
                f"whose {what} is {actual:.10g}: give one of them")
