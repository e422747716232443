"""Designs for numeric answers: income, number of partners, days of drug use.

A categorical design is a matrix P(response | true state). A numeric design
is a family of answer distributions given the true value y: each respondent
is told, with exact probabilities, one of a few things to do (a
:class:`Step`), each of the form

    report  Z = W * (c * y + k * U) + V

where W, U and V are *scrambling variables* drawn from known devices (a
numbered card deck, dice, a computer's draw; :mod:`surveykit.designs.scramblers`)
and absent ones are W = 1, U = 0, V = 0. "Report your true value" is c = 1,
"report the number on your card" is c = 0 with V the card, Eichhorn and
Hayre's "multiply your value by the card" is c = 1 with W the card. With
probability ``dont_know`` a respondent is told to answer "don't know" instead;
such an answer carries no value and the other answers are unaffected.

What every design says (:class:`QuantitativeDesign`):

* the protocol: per group, the steps with their exact probabilities and the
  devices the scrambling variables come from;
* the first two moments of an answer given the true value,
  E[Z | y] = a + b y and Var(Z | y) = A y^2 + B y + C (:meth:`~QuantitativeDesign.moments`);
* the unbiased transform r = (z - a) / b, E[r | y] = y, its variance
  Var(r | y) = (A y^2 + B y + C) / b^2, and an unbiased estimate of that
  variance from r alone, (A r^2 + B r + C) / (b^2 + A) (RRTCS plugs r into
  the variance instead, (A r^2 + B r + C) / b^2, which overstates it on average
  by the factor 1 + A / b^2);
* the privacy loss for a stated answer range in Shafer's and Walley's
  semantics (:mod:`surveykit.designs.quantitative_privacy`).

The presets carry RRTCS's and RRreg's names in lower snake case and their
parameter names (``p``, ``mu``, ``sigma``, ``beta``; pairs as lists,
``mu = [6, 6]``):

==========================  ========================================  =================
preset                      the answer                                source
==========================  ========================================  =================
``eriksson``                y with prob. p, else a card S             Eriksson (1973)
``eichhorn_hayre``          y * S                                     Eichhorn, Hayre (1983)
``bar_lev``                 y with prob. p, else y * S                Bar-Lev et al. (2004)
``chaudhuri_christofides``  y * S1 + S2                               Chaudhuri, Christofides (2013)
``diana_perri_1``           y with prob. p, else W * (y + U)          Diana, Perri (2010)
``diana_perri_2``           W * (beta U + (1 - beta) y)               Diana, Perri (2010)
``saha``                    W * (y + U)                               Saha (2007)
``mix_norm``                y with prob. p, else N(mu, sigma)         RRreg ``mix.norm``
``mix_exp``                 y with prob. p, else Exp(mean mu)         RRreg ``mix.exp``
``mix_unknown``             y with prob. p[g], else an unrelated      RRreg ``mix.unknown``
                            answer of unknown distribution (2 groups)
``additive``                y + S                                     (Warner 1971)
==========================  ========================================  =================

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property, lru_cache
from types import MappingProxyType
from typing import ClassVar

import numpy as np

from surveykit.designs.base import (
    as_fraction,
    check_dont_know,
    check_probability,
    describe_parameters,
)
from surveykit.designs.quantitative_privacy import QuantitativePrivacy, privacy_loss
from surveykit.designs.quantitative_steps import Step
from surveykit.designs.scramblers import (
    Deck,
    Exponential,
    Moments,
    Normal,
    Scrambler,
    Unknown,
    check_number,
    scrambler,
)
from surveykit.errors import ParameterError

__all__ = [
    "QUANTITATIVE_PRESETS",
    "Additive",
    "AnswerMoments",
    "BarLev",
    "ChaudhuriChristofides",
    "DianaPerri1",
    "DianaPerri2",
    "EichhornHayre",
    "Eriksson",
    "MixExp",
    "MixNorm",
    "MixUnknown",
    "QuantitativeDesign",
    "QuantitativeProtocol",
    "Saha",
    "SimulatedAnswers",
    "Step",
]

@dataclass(frozen=True)
class QuantitativeProtocol:
    """What compliant respondents are told, per group: steps with exact probabilities (they
    add up to 1, "don't know" included), and the devices the scramblers are drawn from."""

    groups: tuple[tuple[Step, ...], ...]
    scramblers: Mapping[str, Scrambler]

    def for_group(self, group: int) -> tuple[Step, ...]:
        """The steps of group ``group`` (0-based)."""
        return self.groups[group]

    def lines(self) -> list[str]:
        """The protocol in plain words, one line per step and scrambler."""
        out = []
        for g, steps in enumerate(self.groups):
            prefix = f"group {g + 1}: " if len(self.groups) > 1 else ""
            for step in steps:
                out.append(f"{prefix}with probability {step.probability}: {step.text()}")
        for name, s in self.scramblers.items():
            out.append(f"{name}: {s.device()}")
        return out


@dataclass(frozen=True)
class AnswerMoments:
    """The first two moments of an answer (not "don't know") given the true value y, in one
    group: E[Z | y] = a + b y + t theta, where theta is the unknown mean of an unrelated
    question (t = 0 for designs without one); Var(Z | y) = A y^2 + B y + C, None where it
    depends on unknowns.

    >>> m = Eriksson(p=0.5, scrambler=[0, 1, 3, 5, 8]).moments()
    >>> m.a, m.b, [round(x, 12) for x in m.variance_coefficients]
    (1.7, 0.5, [0.25, -1.7, 7.01])
    """

    a: float
    b: float
    t: float
    variance_coefficients: tuple[float, float, float] | None

    def mean(self, y: np.ndarray | float) -> np.ndarray | float:
        """E[Z | y] (designs without an unknown mean)."""
        return self.a + self.b * np.asarray(y, dtype=float)

    def variance(self, y: np.ndarray | float) -> np.ndarray | float:
        """Var(Z | y)."""
        if self.variance_coefficients is None:
            raise ParameterError("the answer's variance depends on an unknown distribution")
        A, B, C = self.variance_coefficients
        y = np.asarray(y, dtype=float)
        return A * y ** 2 + B * y + C


@dataclass(frozen=True)
class SimulatedAnswers:
    """Simulated answers: ``answers`` (NaN for "don't know"), the ``dont_know`` mask, each
    respondent's ``group`` (0-based) and the ``steps`` they were told (indices into their
    group's steps), for tests and planning."""

    answers: np.ndarray
    dont_know: np.ndarray
    groups: np.ndarray
    steps: np.ndarray


class QuantitativeDesign:
    """Base class of the numeric-answer designs (see the module docstring).

    Subclasses are frozen keyword-only dataclasses whose fields are the
    design's parameters; they validate them in ``__post_init__`` and say
    what respondents do in :meth:`_steps` and :meth:`_scrambler_map`.
    """

    #: The preset's name: RRTCS's or RRreg's in lower snake case.
    model: ClassVar[str] = ""
    #: One line for help texts and docs.
    summary: ClassVar[str] = ""
    #: Where the design comes from.
    reference: ClassVar[str] = ""

    dont_know: float

    # -- to be provided by each design ---------------------------------------------------

    def _steps(self) -> tuple[tuple[Step, ...], ...]:  # pragma: no cover - every preset
        raise NotImplementedError

    def _scrambler_map(self) -> dict[str, Scrambler]:  # pragma: no cover - every preset
        raise NotImplementedError

    def parameters(self) -> dict[str, object]:
        """The parameters as a user gives them (JSON-ready: lists, not tuples), without the
        model name; a sigma or scrambler that was not given is left out."""
        out: dict[str, object] = {}
        for item in dataclasses.fields(self):  # type: ignore[arg-type]
            if not item.init:
                continue  # worked out from the parameters, not one of them
            value = getattr(self, item.name)
            if item.name in ("sigma", "scrambler") and value is None:
                continue
            out[item.name] = _listed(value)
        return out

    # -- structure -----------------------------------------------------------------------

    @cached_property
    def protocol(self) -> QuantitativeProtocol:
        """The steps per group, "don't know" included, and the scramblers' devices."""
        d = self.designed_dont_know
        groups = []
        for steps in self._steps():
            scaled = tuple(Step(s.kind, s.probability * (1 - d), s.coefficient, s.multiplier,
                                s.inner, s.inner_coefficient, s.offset)
                           for s in steps if s.probability > 0)
            if d > 0:
                scaled += (Step("dont_know", d),)
            groups.append(scaled)
        return QuantitativeProtocol(tuple(groups), MappingProxyType(self._scrambler_map()))

    @property
    def designed_dont_know(self) -> Fraction:
        """The probability of being told to answer "don't know", exact."""
        return as_fraction(self.dont_know)

    @property
    def scramblers(self) -> Mapping[str, Scrambler]:
        """The scrambling variables by name (S, S1, S2, W, U, X)."""
        return self.protocol.scramblers

    @property
    def group_names(self) -> tuple[str, ...]:
        """Group names ("1", "2"): only ``mix_unknown`` has two."""
        return tuple(str(i) for i in range(1, len(self._steps()) + 1))

    def answer_steps(self, group: int = 0) -> tuple[Step, ...]:
        """The steps of ``group`` that give a number, with their probabilities given that the
        respondent answers (the "don't know" branch left out)."""
        return tuple(s for s in self._steps()[group] if s.probability > 0)

    # -- moments -------------------------------------------------------------------------

    def moments(self, group: int = 0) -> AnswerMoments:
        """E[Z | y] and Var(Z | y) of an answer in ``group`` (0-based), given it is a number.

        Z = W (c y + k U) + V per step: E[Z] = E[W] (c y + k E[U]) + E[V] and
        E[Z^2] = E[W^2] E[(c y + k U)^2] + 2 E[V] E[W] (c y + k E[U]) + E[V^2],
        mixed over the steps with their probabilities.
        """
        m1 = np.zeros(2)       # constant, y
        m2 = np.zeros(3)       # constant, y, y^2
        t = 0.0
        unknown_variance = False
        for step in self.answer_steps(group):
            w = float(step.probability)
            if step.offset and isinstance(self.scramblers[step.offset], Unknown):
                # E[X] = theta, unknown; its square too
                t += w
                m1[1] += w * float(step.coefficient)
                unknown_variance = True
                continue
            c, k = float(step.coefficient), float(step.inner_coefficient)
            W, U, V = (self.scramblers[name] if name else None
                       for name in (step.multiplier, step.inner, step.offset))
            mw = W.mean if W else 1.0
            mu_ = U.mean if U else 0.0
            mv = V.mean if V else 0.0
            m1 += w * np.array([mw * k * mu_ + mv, mw * c])
            try:
                mw2 = W.second_moment if W else 1.0
                mu2 = U.second_moment if U else 0.0
                mv2 = V.second_moment if V else 0.0
            except ParameterError:      # a scrambler whose sd is not stated
                unknown_variance = True
                continue
            inner2 = np.array([k * k * mu2, 2 * c * k * mu_, c * c])     # E[(c y + k U)^2]
            m2 += w * (mw2 * inner2 + 2 * mv * mw * np.array([k * mu_, c, 0.0])
                       + np.array([mv2, 0.0, 0.0]))
        a, b = float(m1[0]), float(m1[1])
        if unknown_variance:
            return AnswerMoments(a, b, t, None)
        # Var = E[Z^2] - E[Z]^2, coefficients of 1, y, y^2
        A = float(m2[2] - b * b)
        B = float(m2[1] - 2 * a * b)
        C = float(m2[0] - a * a)
        # rounding may leave -1e-17 where the variance is exactly 0
        return AnswerMoments(a, b, t, (max(A, 0.0) if A > -1e-12 * max(1.0, b * b) else A,
                                       B, max(C, 0.0) if abs(C) < 1e-15 else C))

    @property
    def has_transform(self) -> bool:
        """Whether each answer has an unbiased transform of its own (one group, no unknown
        mean): every design except ``mix_unknown``."""
        return len(self.group_names) == 1 and self.moments().t == 0

    def _known_moments(self) -> AnswerMoments:
        if not self.has_transform:
            raise ParameterError(
                f"design {self.model!r} has no per-answer unbiased transform: the unrelated "
                "question's mean is unknown and is estimated from the two groups' means")
        return self.moments()

    def transform(self, z: np.ndarray | float) -> np.ndarray:
        """The unbiased transform r = (z - a) / b of answers z: E[r | y] = y.

        >>> Eriksson(p=0.5, scrambler=[0, 1, 3, 5, 8]).transform([3, 8]).tolist()  # RRTCS
        [2.6, 12.6]
        """
        m = self._known_moments()
        return (np.asarray(z, dtype=float) - m.a) / m.b

    def conditional_variance(self, y: np.ndarray | float) -> np.ndarray:
        """Var(r | y) = (A y^2 + B y + C) / b^2: the randomization variance of the transform."""
        m = self._known_moments()
        return np.asarray(m.variance(y), dtype=float) / m.b ** 2

    def transform_variance(self, r: np.ndarray | float, method: str = "unbiased"
                           ) -> np.ndarray:
        """An estimate of Var(r | y) from the transformed answer r alone.

        ``"unbiased"``: (A r^2 + B r + C) / (b^2 + A), whose expectation given y
        is Var(r | y) exactly (E[r^2 | y] = y^2 + Var(r | y)). ``"plug_in"``:
        RRTCS's ``Quantitative()``, (A r^2 + B r + C) / b^2, which is
        Var(r | y) at y = r and overstates it on average by 1 + A / b^2.

        >>> d = Eriksson(p=0.5, scrambler=[0, 1, 3, 5, 8])
        >>> round(d.transform_variance(2.6, "plug_in").item(), 12)   # RRTCS's first answer
        17.12
        """
        m, (A, B, C) = self._variance_coefficients()
        r = np.asarray(r, dtype=float)
        numerator = A * r ** 2 + B * r + C
        if method == "unbiased":
            return numerator / (m.b ** 2 + A)
        if method == "plug_in":
            return numerator / m.b ** 2
        raise ParameterError(f"method ({method!r}) must be 'unbiased' or 'plug_in'")

    def _variance_coefficients(self) -> tuple[AnswerMoments, tuple[float, float, float]]:
        """The moments and Var(Z | y) = A y^2 + B y + C's (A, B, C), which need every
        scrambler's sd."""
        m = self._known_moments()
        if m.variance_coefficients is None:
            raise ParameterError(
                f"{self.describe()}: the variance of an answer needs every scrambler's sd; "
                "give sigma")
        return m, m.variance_coefficients

    def answer_variance(self, *, mean: float, sd: float) -> float:
        """Var(r) of one answer's unbiased transform r when the true values have ``mean``
        and standard deviation ``sd`` (planning: the mean of n such answers has variance
        Var(r) / n). Var(r) = Var(y) + E[Var(r | y)] = sd^2 + (A E[y^2] + B E[y] + C) / b^2.

        >>> round(Eriksson(p=0.5, scrambler=[0, 1, 3, 5, 8]).answer_variance(mean=4, sd=2), 6)
        24.84
        """
        m, (A, B, C) = self._variance_coefficients()
        return sd ** 2 + (A * (sd ** 2 + mean ** 2) + B * mean + C) / m.b ** 2

    # -- what respondents can report ------------------------------------------------------

    def reported_range(self, low: float = -math.inf, high: float = math.inf
                       ) -> tuple[float, float]:
        """The smallest and largest number a respondent with a true value in [``low``,
        ``high``] can report, over every group and step ("don't know" aside): interval
        arithmetic on W * (c y + k U) + V with each variable over its support (exact: each
        appears once). Wider than [low, high] where a card or a scrambled answer can lie
        outside it; infinite where a scrambler or the true value is unbounded.

        >>> Eriksson(p=0.6, scrambler=[0, 1000, 5000, 20000]).reported_range(0, 10000)
        (0.0, 20000.0)
        >>> EichhornHayre(scrambler=[0.5, 1, 1.5]).reported_range(-10, 100)
        (-15.0, 150.0)
        """
        supports = {name: s.support() for name, s in self.scramblers.items()}
        spans = [step.span(supports, (low, high)) for steps in self.protocol.groups
                 for step in steps if step.kind != "dont_know"]
        return (float(min(lo for lo, _ in spans)), float(max(hi for _, hi in spans)))

    # -- privacy -------------------------------------------------------------------------

    def privacy_loss(self, low: float, high: float, decimals: int | None = None
                     ) -> QuantitativePrivacy:
        """The privacy loss for true values in [``low``, ``high``] (``decimals``: the values
        are multiples of 10^-decimals; None: any real number), in Shafer's and Walley's
        semantics, with a plain-words explanation
        (:func:`surveykit.designs.quantitative_privacy.privacy_loss`).

        >>> loss = Eriksson(p=0.5, scrambler=range(11)).privacy_loss(0, 10, decimals=0)
        >>> round(loss.shafer, 4), loss.exact_ratio
        (2.4849, Fraction(12, 1))

        The result is kept for the design and range (designs are frozen): an exact
        enumeration can take seconds, and ``survey add``'s checks and the report ask again.
        """
        try:
            return _kept_privacy_loss(self, low, high, decimals)
        except TypeError:  # an argument that cannot be a key: the checks say what is wrong
            return privacy_loss(self, low, high, decimals)

    # -- simulation ----------------------------------------------------------------------

    def simulate(self, values: Sequence[float] | np.ndarray, *, rng: np.random.Generator,
                 groups: Sequence[int] | np.ndarray | None = None,
                 unrelated: Sequence[float] | np.ndarray | None = None) -> SimulatedAnswers:
        """Answers of respondents with true ``values`` who follow the design, drawn with
        ``rng`` (simulation for tests and planning: in the field the randomizer draws from
        the operating system's secure source). ``groups``: each respondent's group (1, 2;
        required with two groups); ``unrelated``: their true answers to the unrelated
        question (``mix_unknown``).

        >>> import numpy as np
        >>> sim = MixNorm(p=1.0, mu=0, sigma=1).simulate([3.0, 4.0], rng=np.random.default_rng(1))
        >>> sim.answers.tolist()
        [3.0, 4.0]
        """
        if not isinstance(rng, np.random.Generator):
            raise ParameterError("rng must be a numpy Generator, e.g. np.random.default_rng(1)")
        y = np.asarray(values, dtype=float).reshape(-1)
        n = y.size
        if np.any(~np.isfinite(y)):
            raise ParameterError("values must be finite numbers")
        if len(self.group_names) > 1:
            if groups is None:
                raise ParameterError(
                    f"design {self.model!r} has {len(self.group_names)} groups: give each "
                    "respondent's group (groups = [1, 2, ...])")
            g = np.asarray(groups).reshape(-1).astype(int) - 1
            if g.size != n or np.any((g < 0) | (g >= len(self.group_names))):
                raise ParameterError(
                    f"groups must hold one group (1 to {len(self.group_names)}) per value")
        else:
            g = np.zeros(n, dtype=int)
        x = None
        if any(isinstance(s, Unknown) for s in self.scramblers.values()):
            if unrelated is None:
                raise ParameterError("give the true answers to the unrelated question "
                                     "(unrelated = [...]) to simulate this design")
            x = np.asarray(unrelated, dtype=float).reshape(-1)
            if x.size != n:
                raise ParameterError("unrelated must hold one value per respondent")
        answers = np.full(n, np.nan)
        step_index = np.zeros(n, dtype=int)
        dont_know = np.zeros(n, dtype=bool)
        for group, steps in enumerate(self.protocol.groups):
            members = np.flatnonzero(g == group)
            if members.size == 0:
                continue
            weights = np.array([float(s.probability) for s in steps])
            chosen = rng.choice(len(steps), size=members.size, p=weights / weights.sum())
            step_index[members] = chosen
            for j, step in enumerate(steps):
                who = members[chosen == j]
                if who.size == 0:
                    continue
                if step.kind == "dont_know":
                    dont_know[who] = True
                    continue
                draws = {}
                for name in step.scrambler_names:
                    s = self.scramblers[name]
                    draws[name] = x[who] if isinstance(s, Unknown) else s.sample(who.size, rng)
                answers[who] = step.answer(y[who], draws)
        return SimulatedAnswers(answers=answers, dont_know=dont_know, groups=g,
                                steps=step_index)

    # -- description ---------------------------------------------------------------------

    def spec(self) -> dict[str, object]:
        """``{"name": model, "parameters": {...}}``, as JSON output and survey files hold it."""
        return {"name": self.model, "parameters": self.parameters()}

    def describe(self) -> str:
        """One line: the model and its parameters.

        >>> MixNorm(p=0.7, mu=40, sigma=15).describe()
        'mix_norm (p = 0.7, mu = 40, sigma = 15, dont_know = 0)'
        """
        return describe_parameters(self.model, self.parameters())


# -- interval arithmetic for reported_range (0 * inf is 0: a variable that is 0 adds nothing)


@lru_cache(maxsize=128, typed=True)
def _kept_privacy_loss(design: QuantitativeDesign, low: float, high: float,
                       decimals: int | None) -> QuantitativePrivacy:
    return privacy_loss(design, low, high, decimals)


# -- parameters ---------------------------------------------------------------------------


def _numbers(name: str, value: object, count: int) -> tuple[float | None, ...]:
    """``count`` numbers (a list), or one number when count is 1; None entries stay None."""
    if count == 1:
        if isinstance(value, Sequence | np.ndarray) and not isinstance(value, str):
            items = list(value)
            if len(items) != 1:
                raise ParameterError(f"{name} ({items!r}) must be one number")
            value = items[0]
        return (None if value is None else check_number(name, value),)
    if value is None:
        return (None,) * count
    if isinstance(value, str | bytes) or not isinstance(value, Sequence | np.ndarray):
        raise ParameterError(f"{name} ({value!r}) must be a list of {count} numbers, "
                             f"e.g. {name} = [6, 6]")
    items = list(value)
    if len(items) != count:
        raise ParameterError(f"{name} ({items!r}) must have {count} entries, not {len(items)}")
    return tuple(None if v is None else check_number(f"{name}[{i + 1}]", v)
                 for i, v in enumerate(items))


def _kinds(value: object, count: int) -> tuple[object, ...]:
    """The scrambler spec of each of ``count`` scramblers."""
    if count == 1:
        return (value,)
    if value is None:
        return (None,) * count
    if isinstance(value, str | Scrambler):
        return (value,) * count
    if isinstance(value, Sequence | np.ndarray):
        items = list(value)
        if len(items) == count and all(
                v is None or isinstance(v, str | Scrambler | Sequence | np.ndarray)
                for v in items):
            return tuple(items)
    raise ParameterError(
        f"scrambler ({value!r}) must give {count} scramblers, e.g. "
        f"scrambler = [\"uniform\", \"uniform\"] or [[1, 2, 3], [0, 5]]")


def _scrambler_parameter(s: Scrambler) -> object:
    """How :meth:`parameters` writes a scrambler: a kind, or a deck's cards."""
    if isinstance(s, Moments):
        return None
    if isinstance(s, Deck):
        if s == Deck.dice(1):
            return "die"
        if s == Deck.dice(2):
            return "dice"
        return tuple(s.spec()["cards"])
    return s.kind


@dataclass(frozen=True, kw_only=True)
class _Scrambled(QuantitativeDesign):
    """A design with scrambling numbers named ``_names`` (one, or a pair such as W and U):
    their means ``mu``, sds ``sigma`` (one number each, or a list for a pair) and the
    ``scrambler`` (a deck of cards, "die", a distribution), resolved into the scramblers
    once. A preset adds its own parameters (p, beta) and checks them in
    :meth:`_check_own`; its own parameters come first in :meth:`parameters`."""

    _names: ClassVar[tuple[str, ...]] = ("S",)
    _SHARED: ClassVar[tuple[str, ...]] = ("mu", "sigma", "scrambler", "dont_know")
    mu: float | Sequence[float] | None = None
    sigma: float | Sequence[float] | None = None
    scrambler: object = None
    dont_know: float = 0.0
    _resolved: tuple[Scrambler, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._check_own()
        self._resolve()
        self._check_identified()

    def _check_own(self) -> None:
        """Check (and normalize) the preset's own parameters; none by default."""

    def parameters(self) -> dict[str, object]:
        given = super().parameters()
        own = {name: value for name, value in given.items() if name not in self._SHARED}
        return {**own, **{name: given[name] for name in self._SHARED if name in given}}

    def _resolve(self) -> None:
        count = len(self._names)
        mus = _numbers("mu", self.mu, count)
        sigmas = _numbers("sigma", self.sigma, count)
        kinds = _kinds(self.scrambler, count)
        resolved = tuple(scrambler(kind, mu, sigma, name=name)
                         for kind, mu, sigma, name in zip(kinds, mus, sigmas, self._names,
                                                          strict=True))
        object.__setattr__(self, "_resolved", resolved)
        means = tuple(s.mean for s in resolved)
        sds = []
        for s in resolved:
            try:
                sds.append(s.sd)
            except ParameterError:
                sds.append(None)
        shown = [_scrambler_parameter(s) for s in resolved]
        if count == 1:
            object.__setattr__(self, "mu", means[0])
            object.__setattr__(self, "sigma", sds[0])
            object.__setattr__(self, "scrambler", shown[0])
        else:
            object.__setattr__(self, "mu", means)
            object.__setattr__(self, "sigma", None if all(v is None for v in sds)
                               else tuple(sds))
            object.__setattr__(self, "scrambler", None if all(v is None for v in shown)
                               else tuple(shown))
        object.__setattr__(self, "dont_know", float(check_dont_know(self.dont_know)))

    def _scrambler_map(self) -> dict[str, Scrambler]:
        return dict(zip(self._names, self._resolved, strict=True))

    def _check_identified(self) -> None:
        b = self.moments().b
        if abs(b) < 1e-12:
            raise ParameterError(
                f"{self.describe()}: the answers do not depend on the true value on average "
                f"(E[Z | y] has slope {b:g}), so its mean cannot be estimated; change the "
                "parameters")


def _listed(value: object) -> object:
    """Tuples (also nested: a pair of decks) as lists, for JSON and survey files."""
    return [_listed(v) for v in value] if isinstance(value, tuple) else value


def _p(name: str, value: object) -> float:
    return check_probability(name, value)


# -- presets -------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class _TruthfulOr(_Scrambled):
    """A scrambled design in which a respondent reports the true value with probability p,
    otherwise what :meth:`_otherwise` says (Eriksson's card, Bar-Lev's y * S, ...)."""

    p: float

    def _check_own(self) -> None:
        object.__setattr__(self, "p", _p("p", self.p))

    def _otherwise(self, share: Fraction) -> Step:  # pragma: no cover - every preset does
        """The step taken with probability ``share`` = 1 - p."""
        raise NotImplementedError

    def _steps(self):
        p = as_fraction(self.p)
        return ((Step("truthful", p, Fraction(1)), self._otherwise(1 - p)),)


@dataclass(frozen=True, kw_only=True)
class Eriksson(_TruthfulOr):
    """Eriksson (1973): with probability p report your true value, otherwise the number on a
    card S drawn from a known deck. RRTCS's ``Eriksson(z, p, mu, sigma, ...)``: mu and sigma
    are the deck's mean and sd (divisor N).

    >>> d = Eriksson(p=0.5, scrambler=[0, 1, 3, 5, 8])
    >>> d.mu, round(d.sigma, 10)
    (3.4, 2.8705400189)
    """

    model: ClassVar[str] = "eriksson"
    summary: ClassVar[str] = "true value with probability p, else the number on a card S"
    reference: ClassVar[str] = ("Eriksson, S. A. (1973). A new model for randomized response. "
                                "International Statistical Review 41, 40-43.")

    def _check_identified(self) -> None:
        if self.p == 0:  # the slope of E[Z | y] is p
            raise ParameterError("p (0) must be greater than 0: with p = 0 every answer is a "
                                 "card and says nothing about the true value")

    def _otherwise(self, share: Fraction) -> Step:
        return Step("draw", share, offset="S")



@dataclass(frozen=True, kw_only=True)
class EichhornHayre(_Scrambled):
    """Eichhorn and Hayre (1983): report your true value times a scrambling number S
    (mean mu, sd sigma), y * S. RRTCS's ``EichhornHayre(z, mu, sigma, ...)``.

    >>> EichhornHayre(mu=1.111111, sigma=0.5414886).moments().b
    1.111111
    """

    model: ClassVar[str] = "eichhorn_hayre"
    summary: ClassVar[str] = "true value times a scrambling number S"
    reference: ClassVar[str] = ("Eichhorn, B. H., Hayre, L. S. (1983). Scrambled randomized "
                                "response methods for obtaining sensitive quantitative data. "
                                "J. Stat. Plan. Inference 7, 306-316.")

    def _steps(self):
        return ((Step("scramble", Fraction(1), Fraction(1), multiplier="S"),),)



@dataclass(frozen=True, kw_only=True)
class BarLev(_TruthfulOr):
    """Bar-Lev, Bobovitch and Boukai (2004): with probability p report your true value,
    otherwise your true value times S. RRTCS's ``BarLev(z, p, mu, sigma, ...)``."""

    model: ClassVar[str] = "bar_lev"
    summary: ClassVar[str] = "true value with probability p, else true value times S"
    reference: ClassVar[str] = ("Bar-Lev, S. K., Bobovitch, E., Boukai, B. (2004). A note on "
                                "randomized response models for quantitative data. Metrika 60, "
                                "255-260.")

    def _otherwise(self, share: Fraction) -> Step:
        return Step("scramble", share, Fraction(1), multiplier="S")



@dataclass(frozen=True, kw_only=True)
class ChaudhuriChristofides(_Scrambled):
    """Chaudhuri and Christofides (2013): report y * S1 + S2 with two scrambling numbers;
    ``mu = [mean of S1, mean of S2]``, ``sigma`` likewise. RRTCS's
    ``ChaudhuriChristofides(z, mu, sigma, ...)``.

    >>> ChaudhuriChristofides(mu=[6, 6], sigma=[10 ** 0.5] * 2).moments().variance_coefficients
    (10.0, 0.0, 10.0)
    """

    model: ClassVar[str] = "chaudhuri_christofides"
    summary: ClassVar[str] = "y * S1 + S2 with two scrambling numbers"
    reference: ClassVar[str] = ("Chaudhuri, A., Christofides, T. C. (2013). Indirect "
                                "Questioning in Sample Surveys. Springer.")
    _names: ClassVar[tuple[str, ...]] = ("S1", "S2")

    def _steps(self):
        return ((Step("scramble", Fraction(1), Fraction(1), multiplier="S1", offset="S2"),),)



@dataclass(frozen=True, kw_only=True)
class DianaPerri1(_TruthfulOr):
    """Diana and Perri (2010), model 1: with probability p report your true value,
    otherwise W * (y + U); ``mu = [mean of W, mean of U]``. RRTCS's
    ``DianaPerri1(z, p, mu, ...)`` (it needs no sigma: its variance uses the answers'
    spread; give sigma for the per-answer randomization variance)."""

    model: ClassVar[str] = "diana_perri_1"
    summary: ClassVar[str] = "true value with probability p, else W * (y + U)"
    reference: ClassVar[str] = ("Diana, G., Perri, P. F. (2010). New scrambled response models "
                                "for estimating the mean of a sensitive quantitative character. "
                                "J. Appl. Stat. 37(11), 1875-1890.")
    _names: ClassVar[tuple[str, ...]] = ("W", "U")

    def _otherwise(self, share: Fraction) -> Step:
        return Step("scramble", share, Fraction(1), multiplier="W", inner="U")



@dataclass(frozen=True, kw_only=True)
class DianaPerri2(_Scrambled):
    """Diana and Perri (2010), model 2: report W * (beta U + (1 - beta) y), beta in [0, 1);
    ``mu = [mean of W, mean of U]``. RRTCS's ``DianaPerri2(z, mu, beta, ...)``."""

    model: ClassVar[str] = "diana_perri_2"
    summary: ClassVar[str] = "W * (beta U + (1 - beta) y)"
    reference: ClassVar[str] = DianaPerri1.reference
    _names: ClassVar[tuple[str, ...]] = ("W", "U")

    beta: float

    def _check_own(self) -> None:
        beta = _p("beta", self.beta)
        if beta >= 1:
            raise ParameterError(f"beta ({beta:g}) must be below 1: with beta = 1 the answer "
                                 "does not involve the true value")
        object.__setattr__(self, "beta", beta)

    def _steps(self):
        beta = as_fraction(self.beta)
        return ((Step("scramble", Fraction(1), 1 - beta, multiplier="W", inner="U",
                      inner_coefficient=beta),),)



@dataclass(frozen=True, kw_only=True)
class Saha(_Scrambled):
    """Saha (2007): report W * (y + U); ``mu = [mean of W, mean of U]``. RRTCS's
    ``Saha(z, mu, sigma, ...)``.

    >>> import math
    >>> Saha(mu=[1.5, 5.5], sigma=[math.sqrt(1 / 12), math.sqrt(81 / 12)],
    ...      scrambler="uniform").scramblers["U"].describe()
    'uniform on [1, 10]'
    """

    model: ClassVar[str] = "saha"
    summary: ClassVar[str] = "W * (y + U)"
    reference: ClassVar[str] = ("Saha, A. (2007). A simple randomized response technique in "
                                "complex surveys. Metron LXV, 59-66.")
    _names: ClassVar[tuple[str, ...]] = ("W", "U")

    def _steps(self):
        return ((Step("scramble", Fraction(1), Fraction(1), multiplier="W", inner="U"),),)



@dataclass(frozen=True, kw_only=True)
class Additive(_Scrambled):
    """Additive scrambling: report your true value plus a scrambling number S (Warner 1971;
    with S Laplace, the Laplace mechanism of differential privacy).

    >>> Additive(mu=0, sigma=2, scrambler="laplace").scramblers["S"].describe()
    'Laplace with centre 0 and scale 1.41421'
    """

    model: ClassVar[str] = "additive"
    summary: ClassVar[str] = "true value plus a scrambling number S"
    reference: ClassVar[str] = ("Warner, S. L. (1971). The linear randomized response model. "
                                "JASA 66, 884-888.")

    def _steps(self):
        return ((Step("scramble", Fraction(1), Fraction(1), offset="S"),),)



@dataclass(frozen=True, kw_only=True)
class MixNorm(QuantitativeDesign):
    """RRreg's ``mix.norm`` (Greenberg et al. 1971): with probability p report your true
    value, otherwise a number drawn from a normal distribution with mean mu and sd sigma
    (RRreg's ``p = c(p, mu, sigma)``)."""

    model: ClassVar[str] = "mix_norm"
    summary: ClassVar[str] = "true value with probability p, else a draw from N(mu, sigma)"
    reference: ClassVar[str] = ("Greenberg, B. G., Kuebler, R. R., Abernathy, J. R., Horvitz, "
                                "D. G. (1971). Applications of the randomized response technique "
                                "in obtaining quantitative data. JASA 66, 243-250.")

    p: float
    mu: float
    sigma: float
    dont_know: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "p", _p("p", self.p))
        if self.p == 0:
            raise ParameterError("p (0) must be greater than 0: with p = 0 no answer is true")
        object.__setattr__(self, "mu", check_number("mu", self.mu))
        object.__setattr__(self, "sigma", check_number("sigma", self.sigma, positive=True))
        object.__setattr__(self, "dont_know", float(check_dont_know(self.dont_know)))

    def _steps(self):
        p = as_fraction(self.p)
        return ((Step("truthful", p, Fraction(1)), Step("draw", 1 - p, offset="S")),)

    def _scrambler_map(self):
        return {"S": Normal(mu=self.mu, sigma=self.sigma)}



@dataclass(frozen=True, kw_only=True)
class MixExp(QuantitativeDesign):
    """RRreg's ``mix.exp``: with probability p report your true value, otherwise a number
    drawn from an exponential distribution with mean mu (RRreg's ``p = c(p, mu)``)."""

    model: ClassVar[str] = "mix_exp"
    summary: ClassVar[str] = "true value with probability p, else a draw from Exp(mean mu)"
    reference: ClassVar[str] = MixNorm.reference

    p: float
    mu: float
    dont_know: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "p", _p("p", self.p))
        if self.p == 0:
            raise ParameterError("p (0) must be greater than 0: with p = 0 no answer is true")
        object.__setattr__(self, "mu", check_number("mu", self.mu, positive=True))
        object.__setattr__(self, "dont_know", float(check_dont_know(self.dont_know)))

    def _steps(self):
        p = as_fraction(self.p)
        return ((Step("truthful", p, Fraction(1)), Step("draw", 1 - p, offset="S")),)

    def _scrambler_map(self):
        return {"S": Exponential(mu=self.mu)}



@dataclass(frozen=True, kw_only=True)
class MixUnknown(QuantitativeDesign):
    """RRreg's ``mix.unknown``: two groups; in group g report your true value with probability
    ``p[g]``, otherwise your true answer to an unrelated numeric question X whose
    distribution is unknown. The two groups' means identify both means.

    >>> MixUnknown(p=[0.8, 0.3]).moments(1)
    AnswerMoments(a=0.0, b=0.3, t=0.7, variance_coefficients=None)
    """

    model: ClassVar[str] = "mix_unknown"
    summary: ClassVar[str] = ("two groups: true value with probability p[g], else the answer "
                              "to an unrelated question")
    reference: ClassVar[str] = MixNorm.reference

    p: Sequence[float]
    dont_know: float = 0.0

    def __post_init__(self) -> None:
        if isinstance(self.p, str | bytes) or not isinstance(self.p, Sequence | np.ndarray):
            raise ParameterError(f"p ({self.p!r}) must be a list of 2 probabilities, "
                                 "e.g. p = [0.8, 0.3]")
        items = list(self.p)
        if len(items) != 2:
            raise ParameterError(f"p ({items!r}) must have 2 entries, one per group")
        p = tuple(_p(f"p[{i}]", v) for i, v in enumerate(items, start=1))
        if p[0] == p[1]:
            raise ParameterError(
                f"p[1] and p[2] ({p[0]:g}) must differ: with equal probabilities the two "
                "groups answer alike and the true mean cannot be told from the unrelated one")
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "dont_know", float(check_dont_know(self.dont_know)))

    def _steps(self):
        out = []
        for value in self.p:
            p = as_fraction(value)
            out.append((Step("truthful", p, Fraction(1)), Step("unrelated", 1 - p, offset="X")))
        return tuple(out)

    def _scrambler_map(self):
        return {"X": Unknown()}



#: The numeric-answer presets by name, in documentation order.
QUANTITATIVE_PRESETS: Mapping[str, type[QuantitativeDesign]] = MappingProxyType({
    cls.model: cls for cls in (
        Eriksson, EichhornHayre, BarLev, ChaudhuriChristofides, DianaPerri1, DianaPerri2, Saha,
        MixNorm, MixExp, MixUnknown, Additive)
})
