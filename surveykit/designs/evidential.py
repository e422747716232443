"""A design's privacy map: the evidential mechanism and its privacy losses.

A design carries its privacy map (as an OpenDP measurement does): its matrix,
read as mass functions, gives its losses (:meth:`surveykit.designs.base.Design.to_evidential`).
What is built from mechanisms (composition, post-processing, trade-off bounds,
budgets) is :mod:`surveykit.privacy`'s.

Notation follows Li, Zhou, Qin and Xu, *Local Differential Privacy for Belief
Functions* (``../shared/paper/paper.md``; "the paper" below). A mechanism maps
each input x in X to a *mass function* m_x over the non-empty subsets (focal
sets) of an output alphabet Y (Section 3). From m_x follow

    bel_x(E) = sum_{B subset of E} m_x(B),   pl_x(E) = sum_{B meets E} m_x(B).

Privacy losses (all are >= 0 because x = x' gives the ratio 1):

* Shafer (Def. 3.1):  eps_S = ln max_{x, x', E} m_x(E) / m_x'(E)
* bel/pl variants (Lemma 3.2): the same maximum with bel or pl in place of m
* Walley (Def. 3.13, through Lemma 3.14 and its proof):
  eps_W = ln max_{x, x', E} pl_x(E) / bel_x'(E)

A ratio a/0 with a > 0 is unbounded (the loss is ``inf``); 0/0 says nothing
about x against x' and is skipped. No division ever runs on a zero.

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from surveykit.errors import ParameterError

__all__ = ["EvidentialMechanism", "Semantics"]

# Rows of a mass function must sum to one up to this (floating-point) slack.
_SUM_TOLERANCE = 1e-9
# Enumerating all events of Y costs 2^|Y|; beyond this the losses are refused.
_MAX_EVENT_OUTPUTS = 16

Semantics = Literal["shafer", "bel", "pl", "walley"]


def _max_log_ratio(numerators: np.ndarray, denominators: np.ndarray) -> float:
    """ln max over (x, x', E) of numerators[x, E] / denominators[x', E].

    Pairs where both are zero are skipped; a positive numerator over a zero
    denominator makes the result ``inf``. Never divides by zero.
    """
    num = numerators[:, None, :]
    den = denominators[None, :, :]
    positive_over_zero = (num > 0) & (den <= 0)
    if np.any(positive_over_zero):
        return math.inf
    usable = den > 0
    ratios = np.divide(num, den, out=np.zeros(np.broadcast_shapes(num.shape, den.shape)),
                       where=usable)
    best = float(ratios.max()) if ratios.size else 1.0
    # Numerical noise may push a ratio of equal quantities an ulp below 1.
    return max(0.0, math.log(best)) if best > 0 else 0.0


def _max_log_ratio_paired(numerators: np.ndarray, denominators: np.ndarray) -> float:
    """ln max numerators / denominators, element by element, with :func:`_max_log_ratio`'s
    rules for zeros (a positive over zero is ``inf``, 0/0 is skipped); at least 0."""
    if np.any((numerators > 0) & (denominators <= 0)):
        return math.inf
    usable = denominators > 0
    if not np.any(usable):
        return 0.0
    best = float((numerators[usable] / denominators[usable]).max())
    return max(0.0, math.log(best)) if best > 0 else 0.0


@dataclass(frozen=True, kw_only=True)
class EvidentialMechanism:
    """A privacy mechanism whose rows are mass functions (paper, Section 3).

    Parameters
    ----------
    inputs:
        The input alphabet X (e.g. ``("has property", "does not")``).
    outputs:
        The output alphabet Y.
    focal_sets:
        The subsets of Y that columns of ``masses`` refer to; each must be a
        non-empty subset of ``outputs``. ``frozenset()`` is accepted only to
        report a helpful error when it carries mass.
    masses:
        A ``len(inputs) x len(focal_sets)`` matrix; row x is the mass function m_x.

    Example
    -------
    >>> m = EvidentialMechanism(
    ...     inputs=("x1", "x2"), outputs=("yes", "no"),
    ...     focal_sets=[{"yes"}, {"no"}, {"yes", "no"}],
    ...     masses=[[0.6, 0.2, 0.2], [0.2, 0.6, 0.2]])
    >>> round(m.epsilon_shafer(), 4)  # ln(0.6 / 0.2)
    1.0986
    """

    inputs: tuple[Hashable, ...]
    outputs: tuple[Hashable, ...]
    focal_sets: tuple[frozenset, ...]
    masses: np.ndarray = field(repr=False)

    def __post_init__(self) -> None:
        inputs = tuple(self.inputs)
        outputs = tuple(self.outputs)
        if len(set(inputs)) != len(inputs) or not inputs:
            raise ParameterError(f"inputs {inputs!r} must be a non-empty list of distinct values")
        if len(set(outputs)) != len(outputs) or not outputs:
            raise ParameterError(
                f"outputs {outputs!r} must be a non-empty list of distinct values"
            )
        focal_sets = tuple(frozenset(s) for s in self.focal_sets)
        if len(set(focal_sets)) != len(focal_sets):
            raise ParameterError("focal_sets must be distinct: merge the columns of repeated sets")
        for s in focal_sets:
            unknown = s - set(outputs)
            if unknown:
                raise ParameterError(
                    f"focal set {sorted(map(str, s))} contains {sorted(map(str, unknown))}, "
                    f"which are not outputs {list(outputs)!r}"
                )
        masses = np.array(self.masses, dtype=float, copy=True)
        if masses.shape != (len(inputs), len(focal_sets)):
            raise ParameterError(
                f"masses has shape {masses.shape}, expected {(len(inputs), len(focal_sets))} "
                "(one row per input, one column per focal set)"
            )
        for i, x in enumerate(inputs):
            row = masses[i]
            if not np.all(np.isfinite(row)):
                raise ParameterError(f"row {x!r}: masses {row.tolist()} must be finite numbers")
            negative = np.flatnonzero(row < 0)
            if negative.size:
                j = negative[0]
                raise ParameterError(
                    f"row {x!r}: mass {row[j]} on {sorted(map(str, focal_sets[j]))} is negative; "
                    "masses must be >= 0"
                )
            for j, s in enumerate(focal_sets):
                if not s and row[j] > 0:
                    raise ParameterError(
                        f"row {x!r}: mass {row[j]} on the empty set; a normal mass function "
                        "puts no mass on the empty set"
                    )
            total = float(row.sum())
            if abs(total - 1.0) > _SUM_TOLERANCE:
                raise ParameterError(
                    f"row {x!r}: masses sum to {total:.10g}, not 1; rescale the row"
                )
        masses.setflags(write=False)
        object.__setattr__(self, "inputs", inputs)
        object.__setattr__(self, "outputs", outputs)
        object.__setattr__(self, "focal_sets", focal_sets)
        object.__setattr__(self, "masses", masses)

    # -- belief and plausibility -------------------------------------------------

    def _event(self, event: Iterable[Hashable]) -> frozenset:
        event = frozenset(event)
        unknown = event - set(self.outputs)
        if unknown:
            raise ParameterError(
                f"event contains {sorted(map(str, unknown))}, not outputs {list(self.outputs)!r}"
            )
        return event

    def mass(self, x: Hashable, event: Iterable[Hashable]) -> float:
        """m_x(E): the mass the row of input x puts exactly on E."""
        event = self._event(event)
        row = self.masses[self._row(x)]
        return float(sum(row[j] for j, s in enumerate(self.focal_sets) if s == event))

    def belief(self, x: Hashable, event: Iterable[Hashable]) -> float:
        """bel_x(E) = sum of m_x(B) over focal sets B contained in E (paper, Section 2)."""
        event = self._event(event)
        row = self.masses[self._row(x)]
        return float(sum(row[j] for j, s in enumerate(self.focal_sets) if s and s <= event))

    def plausibility(self, x: Hashable, event: Iterable[Hashable]) -> float:
        """pl_x(E) = sum of m_x(B) over focal sets B that meet E (paper, Section 2)."""
        event = self._event(event)
        row = self.masses[self._row(x)]
        return float(sum(row[j] for j, s in enumerate(self.focal_sets) if s & event))

    def _row(self, x: Hashable) -> int:
        try:
            return self.inputs.index(x)
        except ValueError:
            raise ParameterError(f"input {x!r} is not one of {list(self.inputs)!r}") from None

    def _events(self) -> list[frozenset]:
        if len(self.outputs) > _MAX_EVENT_OUTPUTS:
            raise ParameterError(
                f"{len(self.outputs)} outputs give 2^{len(self.outputs)} events; "
                f"bel/pl losses are limited to {_MAX_EVENT_OUTPUTS} outputs"
            )
        return [
            frozenset(c)
            for r in range(1, len(self.outputs) + 1)
            for c in itertools.combinations(self.outputs, r)
        ]

    def _event_matrices(self) -> tuple[np.ndarray, np.ndarray]:
        events = self._events()
        inside = np.array(
            [[1.0 if s and s <= e else 0.0 for s in self.focal_sets] for e in events]
        )
        meets = np.array([[1.0 if s & e else 0.0 for s in self.focal_sets] for e in events])
        return self.masses @ inside.T, self.masses @ meets.T

    def _answers_and_whole(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(inputs x outputs) masses of the single outputs and (inputs,) the mass of all of
        Y, when every focal set is one output or all of Y (a design's mechanism: an answer,
        or "don't know"); None otherwise."""
        if len(self.outputs) < 2:
            return None
        whole = frozenset(self.outputs)
        column = {y: j for j, y in enumerate(self.outputs)}
        answers = np.zeros((len(self.inputs), len(self.outputs)))
        rest = np.zeros(len(self.inputs))
        for j, focal in enumerate(self.focal_sets):
            if focal == whole:
                rest += self.masses[:, j]
            elif len(focal) == 1:
                answers[:, column[next(iter(focal))]] += self.masses[:, j]
            elif focal:
                return None
        return answers, rest

    def _without_events(self, semantics: str) -> float | None:
        """The bel, pl or Walley loss without enumerating the 2^|Y| events, for mechanisms
        whose focal sets are single outputs a and all of Y (mass d); None for others.

        With a_x(E) the singletons' mass in a proper event E, bel_x(E) = a_x(E) and
        pl_x(E) = a_x(E) + d_x (both 1 on Y). A ratio of sums is at most the largest
        ratio of its terms (the mediant inequality), so the bel loss (a over a) and the
        Walley loss ((a + d) over a: d goes with one term) are attained at one output.
        The pl loss, (d_x + a_x(E)) / (d_x' + a_x'(E)), is attained at a prefix of the
        outputs sorted by a_x(y) / a_x'(y), or at one output (Dinkelbach's argument: an
        optimal E holds every y whose ratio beats the optimum and none below it, or is
        one output when none beats it); both are computed.
        """
        parts = self._answers_and_whole()
        if parts is None:
            return None
        answers, rest = parts
        if semantics == "bel":
            return _max_log_ratio(answers, answers)
        if semantics == "walley":
            return _max_log_ratio(answers + rest[:, None], answers)
        singles = rest[:, None] + answers
        loss = _max_log_ratio(singles, singles)
        numerators, denominators = [], []
        for x, y in itertools.permutations(range(len(self.inputs)), 2):
            a, b = answers[x], answers[y]
            ratio = np.divide(a, b, out=np.where(a > 0, math.inf, -math.inf), where=b > 0)
            order = np.argsort(-ratio, kind="stable")
            numerators.append(rest[x] + np.cumsum(a[order])[None, :])
            denominators.append(rest[y] + np.cumsum(b[order])[None, :])
        return max([loss, *(_max_log_ratio_paired(n, d)
                            for n, d in zip(numerators, denominators, strict=True))])

    def _event_losses(self, semantics: str) -> float:
        if len(self.outputs) > _MAX_EVENT_OUTPUTS:
            loss = self._without_events(semantics)
            if loss is not None:
                return loss
        bel, pl = self._event_matrices()
        first, second = {"bel": (bel, bel), "pl": (pl, pl), "walley": (pl, bel)}[semantics]
        return _max_log_ratio(first, second)

    # -- privacy losses ----------------------------------------------------------

    def epsilon_shafer(self) -> float:
        """Shafer privacy loss eps_S = ln max m_x(E)/m_x'(E) (Def. 3.1)."""
        return _max_log_ratio(self.masses, self.masses)

    def epsilon_bel(self) -> float:
        """ln max bel_x(E)/bel_x'(E) over events E (Lemma 3.2); never above eps_S."""
        return self._event_losses("bel")

    def epsilon_pl(self) -> float:
        """ln max pl_x(E)/pl_x'(E) over events E (Lemma 3.2); never above eps_S."""
        return self._event_losses("pl")

    def epsilon_walley(self) -> float:
        """Walley privacy loss eps_W = ln max pl_x(E)/bel_x'(E) (Def. 3.13, Lemma 3.14).

        The supremum over the credal sets of pr_x(E)/pr_x'(E) is attained at
        pr_x(E) = pl_x(E) and pr_x'(E) = bel_x'(E) (proof of Lemma 3.14). Beyond
        16 outputs the events are not enumerated where the focal sets allow it
        (:meth:`_without_events`: Kuk's design with up to 100 cards).
        """
        return self._event_losses("walley")

    def epsilon(self, semantics: Semantics = "shafer") -> float:
        """The privacy loss in the named semantics: shafer, bel, pl or walley."""
        methods: dict[str, Callable[[], float]] = {
            "shafer": self.epsilon_shafer,
            "bel": self.epsilon_bel,
            "pl": self.epsilon_pl,
            "walley": self.epsilon_walley,
        }
        if semantics not in methods:
            raise ParameterError(
                f"semantics {semantics!r} is not one of {sorted(methods)}"
            )
        return methods[semantics]()
