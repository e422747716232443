"""Forced-response designs: the direct question, forced response, Mangat, and k-category GRR.

* ``direct``: no randomization (RRreg's group 0): everybody answers truthfully.
* ``fr`` (forced response, Boruch 1971; RRreg's ``"FR"``): with probability
  p[i] the respondent is told to answer category i whatever the truth, and
  with 1 - sum(p) truthfully. Categories are numbered as in RRreg: for a yes/no
  question p = [forced "no", forced "yes"]; for m categories "0", ..., "m-1"
  unless ``categories`` names them.
* ``mangat`` (Mangat 1994; RRreg's ``"Mangat"``): respondents with the trait
  answer yes; the others answer truthfully with probability p, else yes.
* ``grr`` (generalized randomized response, the local-differential-privacy
  standard for k categories, "k-RR"): the true category with probability p,
  each other category with (1 - p)/(k - 1). ``epsilon`` may be given instead
  of p: p = e^eps / (e^eps + k - 1).

Every design here also takes ``dont_know`` (the paper's branch).

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

import numpy as np

from surveykit.designs.base import (
    BINARY_STATES,
    DONT_KNOW,
    NO,
    YES,
    BudgetFamily,
    Design,
    DontKnowBranch,
    Instruction,
    Protocol,
    Structure,
    as_fraction,
    check_dont_know,
    check_probabilities,
    check_probability,
    instructions_with_dont_know,
    matrix_from_instructions,
    one_free_entry,
    readonly,
)
from surveykit.errors import ParameterError

__all__ = ["Direct", "ForcedResponse", "GeneralizedRandomizedResponse", "Mangat"]

# k-category designs: beyond this many categories the Walley loss (2^k events) is refused.
MAX_CATEGORIES = 16


def category_labels(given: object, count: int | None, name: str = "categories"
                    ) -> tuple[str, ...]:
    """Category labels: the given list (yes/no reordered to yes, no), else "0".."k-1"."""
    if given is None:
        if count is None:
            return BINARY_STATES
        return BINARY_STATES if count == 2 else tuple(str(i) for i in range(count))
    if isinstance(given, str) or not isinstance(given, list | tuple):
        raise ParameterError(f"{name} ({given!r}) must be a list of labels, e.g. [\"a\", \"b\"]")
    labels = tuple(str(label).strip() for label in given)
    if count is not None and len(labels) != count:
        raise ParameterError(f"{name} ({list(labels)!r}) must have {count} labels, "
                             f"one per category, not {len(labels)}")
    if len(labels) < 2 or len(labels) > MAX_CATEGORIES:
        raise ParameterError(f"{name} ({list(labels)!r}) must have 2 to {MAX_CATEGORIES} labels")
    if any(not label for label in labels) or len({s.casefold() for s in labels}) != len(labels):
        raise ParameterError(f"{name} ({list(labels)!r}) must be distinct, non-empty labels")
    if DONT_KNOW in labels:
        raise ParameterError(f"{name} ({list(labels)!r}): {DONT_KNOW!r} is the don't-know "
                             "answer of every design; it cannot be a category")
    return labels


def _ordered(labels: tuple[str, ...]) -> tuple[str, ...]:
    """yes/no designs list yes first, whatever order the user gave."""
    return BINARY_STATES if set(labels) == set(BINARY_STATES) else labels


def categorical_structure(categories: tuple[str, ...], instructions, dont_know: Fraction,
                          kind: str = "instructions") -> Structure:
    """A one-group design over ``categories`` whose respondents follow ``instructions``."""
    responses = (*categories, DONT_KNOW)
    instructions = instructions_with_dont_know(instructions, dont_know)
    matrix = matrix_from_instructions(instructions, categories, responses)
    return Structure(
        states=categories, categories=categories, responses=responses, groups=("1",),
        base=readonly(matrix[None]), slopes=readonly(np.zeros((0, 1, len(responses),
                                                                len(categories)))),
        nuisance=(), protocol=Protocol(kind, (instructions,)), privacy_states=categories,
        state_parameters={})


@dataclass(frozen=True, kw_only=True)
class Direct(DontKnowBranch, Design):
    """The direct question: no randomization, every answer is the truth (RRreg's group 0).

    Its privacy loss is infinite; it is here so that a survey can ask a
    question directly and compare it with a randomized one.

    >>> Direct().matrix()[0].tolist()
    [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]
    """

    model: ClassVar[str] = "direct"
    summary: ClassVar[str] = "no randomization: everybody answers truthfully"

    categories: tuple[str, ...] | None = None
    dont_know: float = 0.0

    def __post_init__(self) -> None:
        labels = BINARY_STATES if self.categories is None else _ordered(
            category_labels(self.categories, None))
        object.__setattr__(self, "categories", labels)
        object.__setattr__(self, "dont_know", float(check_dont_know(self.dont_know)))

    def parameters(self) -> dict[str, object]:
        out: dict[str, object] = {}
        if self.categories != BINARY_STATES:
            out["categories"] = list(self.categories)
        out["dont_know"] = self.dont_know
        return out

    def _build(self) -> Structure:
        return categorical_structure(self.categories, [Instruction("truthful", Fraction(1))],
                                     self.designed_dont_know)


@dataclass(frozen=True, kw_only=True)
class ForcedResponse(DontKnowBranch, Design):
    """Forced response: answer category i with probability p[i] whatever the truth, else truthfully.

    P(response i | true j) = p[i] + (1 - sum p) [i = j] (RRreg's ``"FR"``).
    For a yes/no question p = [forced "no", forced "yes"], as in RRreg.

    >>> fr = ForcedResponse(p=[0.1, 0.2])      # forced "no" 0.1, forced "yes" 0.2
    >>> fr.matrix()[0].round(4).tolist()        # rows yes, no, don't know; columns yes, no
    [[0.9, 0.2], [0.1, 0.8], [0.0, 0.0]]
    """

    model: ClassVar[str] = "fr"
    summary: ClassVar[str] = ("forced response: answer category i with probability p[i], "
                              "else truthfully; yes/no: p = [forced no, forced yes] as in "
                              "RRreg")

    @classmethod
    def _natural_budget_family(cls, parameters: dict[str, object]) -> BudgetFamily:
        """Symmetric forced answers: every forced-answer probability takes the value x."""
        if "p" in parameters:
            raise ParameterError(
                "p is what the budget chooses for design 'fr' (equal forced-answer "
                "probabilities); drop --param p, or mark the entries to solve for with ?, "
                "e.g. p=?,0.1")
        count = len(parameters.get("categories") or ()) or 2
        return BudgetFamily({**parameters, "p": [None] * count}, 0.0, 1.0 / count)

    p: tuple[float, ...]
    categories: tuple[str, ...] | None = None
    dont_know: float = 0.0

    def __post_init__(self) -> None:
        p = check_probabilities("p", self.p)
        if len(p) < 2:
            raise ParameterError(
                f"p ({list(p)!r}) must give one forced-answer probability per category "
                "(at least 2; for yes/no: [forced no, forced yes])")
        forced = sum(as_fraction(v) for v in p)
        if forced > 1:
            raise ParameterError(
                f"p ({list(p)!r}): the forced-answer probabilities sum to {float(forced):.6g}, "
                "above 1; they must leave a chance to answer truthfully")
        if forced == 1:
            raise ParameterError(
                f"p ({list(p)!r}): the forced-answer probabilities sum to 1, so nobody "
                "answers truthfully and the answers identify nothing; lower them")
        labels = category_labels(self.categories, len(p)) if self.categories is not None \
            else None
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "categories", labels)
        object.__setattr__(self, "dont_know", float(check_dont_know(self.dont_know)))

    def _labels(self) -> tuple[str, ...]:
        """Labels in the order of p: RRreg's 0, 1, ... (for yes/no: no, yes)."""
        if self.categories is not None:
            return self.categories
        return (NO, YES) if len(self.p) == 2 else tuple(str(i) for i in range(len(self.p)))

    def parameters(self) -> dict[str, object]:
        out: dict[str, object] = {"p": list(self.p)}
        if self.categories is not None:
            out["categories"] = list(self.categories)
        out["dont_know"] = self.dont_know
        return out

    def _build(self) -> Structure:
        labels = self._labels()
        p = [as_fraction(v) for v in self.p]
        instructions = [Instruction("truthful", 1 - sum(p))]
        instructions += [Instruction("say", share, say=label)
                         for label, share in zip(labels, p, strict=True)]
        return categorical_structure(_ordered(labels), instructions, self.designed_dont_know)


@dataclass(frozen=True, kw_only=True)
class Mangat(DontKnowBranch, Design):
    """Mangat (1994): respondents with the trait answer yes; the others answer truthfully with
    probability p and yes otherwise (RRreg's ``"Mangat"``; p = 0 identifies nothing).

    >>> Mangat(p=0.7).matrix()[0].round(4).tolist()
    [[1.0, 0.3], [0.0, 0.7], [0.0, 0.0]]
    """

    model: ClassVar[str] = "mangat"
    summary: ClassVar[str] = ("yes if you have the trait; otherwise truthfully with "
                              "probability p, else yes")

    @classmethod
    def _natural_budget_family(cls, parameters: dict[str, object]) -> BudgetFamily:
        return one_free_entry(cls.model, parameters, "p", 0.0, 1.0)

    p: float
    dont_know: float = 0.0

    def __post_init__(self) -> None:
        p = check_probability("p", self.p)
        if p == 0:
            raise ParameterError(
                "p (0) must be above 0: with p = 0 everybody answers yes and the answers "
                "identify nothing")
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "dont_know", float(check_dont_know(self.dont_know)))

    def parameters(self) -> dict[str, object]:
        return {"p": self.p, "dont_know": self.dont_know}

    def _build(self) -> Structure:
        p = as_fraction(self.p)
        instructions = [Instruction("truthful", p), Instruction("say", 1 - p, say=YES)]
        return categorical_structure(BINARY_STATES, instructions, self.designed_dont_know)


@dataclass(frozen=True, kw_only=True)
class GeneralizedRandomizedResponse(DontKnowBranch, Design):
    """k-category randomized response ("k-RR", GRR): the truth with probability p, each
    other category with (1 - p)/(k - 1).

    Give ``p`` or ``epsilon`` (then p = e^eps / (e^eps + k - 1), the design
    whose Shafer loss is eps), and ``categories`` (labels) or ``k``.

    >>> grr = GeneralizedRandomizedResponse(epsilon=math.log(3), categories=["a", "b", "c"])
    >>> round(grr.p, 4), round(grr.epsilon_shafer, 4)
    (0.6, 1.0986)
    """

    model: ClassVar[str] = "grr"
    summary: ClassVar[str] = ("k categories: the truth with probability p, each other "
                              "category with (1 - p)/(k - 1)")
    @classmethod
    def _natural_budget_family(cls, parameters: dict[str, object]) -> BudgetFamily:
        if "p" not in parameters and "epsilon" in parameters:
            raise ParameterError("design 'grr': give the budget as --epsilon, not as a "
                                 "parameter, when planning")
        return one_free_entry(cls.model, parameters, "p", 0.0, 1.0)

    p: float | None = None
    epsilon: float | None = None
    categories: tuple[str, ...] | None = None
    k: int | None = None
    dont_know: float = 0.0

    def __post_init__(self) -> None:
        k = self.k
        if k is not None and (isinstance(k, bool) or not isinstance(k, int | np.integer)
                              or not 2 <= k <= MAX_CATEGORIES):
            raise ParameterError(f"k ({k!r}) must be a whole number of categories from 2 to "
                                 f"{MAX_CATEGORIES}")
        if self.categories is None and k is None:
            raise ParameterError("grr needs the categories (labels) or their number k")
        labels = _ordered(category_labels(self.categories, None if k is None else int(k))) \
            if self.categories is not None else category_labels(None, int(k))
        k = len(labels)
        if (self.p is None) == (self.epsilon is None):
            raise ParameterError("grr needs exactly one of p (probability of the true category) "
                                 "and epsilon (Shafer privacy budget)")
        if self.epsilon is not None:
            epsilon = self.epsilon
            if isinstance(epsilon, bool) or not isinstance(epsilon, int | float) \
                    or not math.isfinite(epsilon) or epsilon <= 0:
                raise ParameterError(f"epsilon ({epsilon!r}) must be a positive, finite budget")
            p = 1 / (1 + (k - 1) * math.exp(-epsilon))
        else:
            p = check_probability("p", self.p)
        if p <= 1 / k:
            raise ParameterError(
                f"p ({p:g}) must be above 1/k = {1 / k:.4g}: otherwise the true category is "
                "reported no more often than any other and the answers identify nothing")
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "categories", labels)
        object.__setattr__(self, "k", k)
        object.__setattr__(self, "dont_know", float(check_dont_know(self.dont_know)))

    def parameters(self) -> dict[str, object]:
        out: dict[str, object] = {"p": self.p}
        if self.epsilon is not None:
            out["epsilon"] = self.epsilon
        out["categories"] = list(self.categories)
        out["dont_know"] = self.dont_know
        return out

    def _build(self) -> Structure:
        labels = self.categories
        k = len(labels)
        p = as_fraction(self.p) if self.epsilon is None else Fraction(self.p)
        other = (1 - p) / (k - 1)
        # the truth with p - other, then each category (the true one included) with other
        instructions = [Instruction("truthful", p - other)]
        instructions += [Instruction("say", other, say=label) for label in labels]
        return categorical_structure(labels, instructions, self.designed_dont_know)
