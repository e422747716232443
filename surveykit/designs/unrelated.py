"""Designs that mix the sensitive question with an innocuous one.

* ``uqtknown`` (unrelated question, Greenberg et al. 1969; RRreg's
  ``"UQTknown"``): with probability p[1] the respondent answers the sensitive
  question, otherwise an innocuous question whose "yes" share p[2] is known
  ("Were you born in January to March?").
* ``uqtunknown`` (RRreg's ``"UQTunknown"``): the same with the innocuous share
  unknown; two groups answer the sensitive question with probabilities p[1]
  and p[2], which identifies both prevalences. The innocuous share
  ``pi_innocuous`` is a nuisance parameter estimated from the data.
* ``crosswise`` (Yu, Tian and Tang 2008; RRreg's ``"Crosswise"``): "Are your
  answers to both questions the same (both yes or both no)?"; p is the
  innocuous question's "yes" share. "yes" here means *the same*.
* ``triangular`` (Yu, Tian and Tang 2008; RRreg's ``"Triangular"``): "Is the
  answer to at least one question yes?"; p is the innocuous "yes" share. "yes"
  means *at least one yes* (the triangle), "no" *both no* (the circle).

Crosswise and triangular need no randomizer: the questionnaire asks the
combined question. Every design here also takes ``dont_know``.

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType
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
    NuisanceParameter,
    Protocol,
    Structure,
    TwoGroups,
    as_fraction,
    check_dont_know,
    check_probabilities,
    check_probability,
    instructions_with_dont_know,
    one_free_entry,
    readonly,
    with_dont_know,
)
from surveykit.errors import ParameterError

__all__ = ["CombinedQuestion", "Crosswise", "Triangular", "UnrelatedQuestionKnown",
           "UnrelatedQuestionUnknown"]

_RESPONSES = (YES, NO, DONT_KNOW)


def _one_group(answers: np.ndarray, instructions, dont_know: Fraction, kind: str) -> Structure:
    matrix = with_dont_know(answers[None], dont_know)
    return Structure(
        states=BINARY_STATES, categories=BINARY_STATES, responses=_RESPONSES, groups=("1",),
        base=readonly(matrix), slopes=readonly(np.zeros((0, 1, 3, 2))), nuisance=(),
        protocol=Protocol(kind, (instructions_with_dont_know(instructions, dont_know),)),
        privacy_states=BINARY_STATES, state_parameters={})


@dataclass(frozen=True, kw_only=True)
class UnrelatedQuestionKnown(DontKnowBranch, Design):
    """Unrelated question with a known innocuous prevalence: p = [P(sensitive question),
    P(yes to the innocuous question)].

    P(yes | yes) = p[0] + (1 - p[0]) p[1], P(yes | no) = (1 - p[0]) p[1].

    >>> UnrelatedQuestionKnown(p=[0.7, 1 / 12]).matrix()[0].round(4).tolist()
    [[0.725, 0.025], [0.275, 0.975], [0.0, 0.0]]
    """

    model: ClassVar[str] = "uqtknown"
    summary: ClassVar[str] = ("answer the sensitive question (p[1]) or an innocuous one "
                              "with known yes share p[2]")
    asks_innocuous: ClassVar[bool] = True
    population_parameters: ClassVar[frozenset[tuple[str, int | None]]] = frozenset({("p", 1)})
    budget_example: ClassVar[str | None] = (
        "p=?,0.0833 (p[1] for the budget, p[2] the innocuous yes share)")

    p: tuple[float, float]
    dont_know: float = 0.0

    def __post_init__(self) -> None:
        p = check_probabilities("p", self.p, 2)
        if p[0] == 0:
            raise ParameterError(
                f"p[1] ({p[0]:g}), the probability of answering the sensitive question, must "
                "be above 0: otherwise the answers identify nothing")
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "dont_know", float(check_dont_know(self.dont_know)))

    def parameters(self) -> dict[str, object]:
        return {"p": list(self.p), "dont_know": self.dont_know}

    def _build(self) -> Structure:
        sensitive, innocuous = (as_fraction(v) for v in self.p)
        yes_yes = sensitive + (1 - sensitive) * innocuous
        yes_no = (1 - sensitive) * innocuous
        answers = np.array([[float(yes_yes), float(yes_no)],
                            [float(1 - yes_yes), float(1 - yes_no)]])
        instructions = [Instruction("sensitive", sensitive),
                        Instruction("innocuous", 1 - sensitive)]
        return _one_group(answers, instructions, self.designed_dont_know, "instructions")


@dataclass(frozen=True, kw_only=True)
class UnrelatedQuestionUnknown(TwoGroups):
    """Unrelated question with an unknown innocuous prevalence, two groups: p[g] is the
    probability of answering the sensitive question in group g.

    P(yes | yes, g) = p[g] + (1 - p[g]) u, P(yes | no, g) = (1 - p[g]) u, with
    u = ``pi_innocuous`` estimated from the data. p[0] = p[1] identifies nothing.

    >>> UnrelatedQuestionUnknown(p=[0.8, 0.3]).nuisance[0].name
    'pi_innocuous'
    """

    model: ClassVar[str] = "uqtunknown"
    summary: ClassVar[str] = ("two groups answer the sensitive question with probabilities "
                              "p[1], p[2], else an innocuous one")

    asks_innocuous: ClassVar[bool] = True
    budget_example: ClassVar[str | None] = "p=0.8,? (p[2] for the budget, given p[1])"

    equal_p_reason: ClassVar[str] = (
        "the two groups must answer the sensitive question with different probabilities; "
        "with equal ones the innocuous share and pi cannot be told apart")
    nuisance_parameter: ClassVar[NuisanceParameter | None] = NuisanceParameter(
        "pi_innocuous", "share of yes to the innocuous question (RRreg's piUQ)")

    def _group(self, g: int) -> tuple[list[list[float]], list[list[float]], list[Instruction]]:
        share = self.p[g]
        exact = as_fraction(share)
        # yes | yes = share + (1 - share) u;  yes | no = (1 - share) u
        return ([[share, 0.0], [1 - share, 1.0]],
                [[1 - share, 1 - share], [-(1 - share), -(1 - share)]],
                [Instruction("sensitive", exact), Instruction("innocuous", 1 - exact)])


@dataclass(frozen=True, kw_only=True)
class CombinedQuestion(DontKnowBranch, Design):
    """Designs that ask one combined question about the sensitive and an innocuous one, with
    no randomizer (crosswise, triangular): the sheet words the question and its answers
    (``{model}_instructions``, ``{model}_yes``, ``{model}_no``), the innocuous yes share p
    is a fact about the population, and a budget chooses p in (0, ``budget_high``). One
    value of p, ``excluded_p``, identifies nothing (``excluded_p_reason`` says why); a
    preset gives its 2 x 2 matrix P(yes/no | yes/no) in :meth:`_answers`."""

    model: ClassVar[str]
    asks_innocuous: ClassVar[bool] = True
    population_parameters: ClassVar[frozenset[tuple[str, int | None]]] = frozenset(
        {("p", None)})
    combined_wording: ClassVar[Mapping[str, str]]
    budget_high: ClassVar[float]
    excluded_p: ClassVar[float]
    #: The end of the message refusing ``excluded_p``, after "p (value) ".
    excluded_p_reason: ClassVar[str]

    p: float
    dont_know: float = 0.0

    def __post_init__(self) -> None:
        p = check_probability("p", self.p)
        if p == self.excluded_p:
            raise ParameterError(f"p ({p:g}) {self.excluded_p_reason}")
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "dont_know", float(check_dont_know(self.dont_know)))

    def parameters(self) -> dict[str, object]:
        return {"p": self.p, "dont_know": self.dont_know}

    def _answers(self, p: Fraction) -> np.ndarray:  # pragma: no cover - every preset defines it
        """P(response | state) for responses (yes, no) and states (yes, no), given p."""
        raise NotImplementedError

    def _build(self) -> Structure:
        answers = self._answers(as_fraction(self.p))
        return _one_group(answers, [Instruction("sensitive", Fraction(1))],
                          self.designed_dont_know, "combined")

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        model = cls.__dict__.get("model")
        if model is not None:
            cls.combined_wording = MappingProxyType({
                "prompt": f"{model}_instructions", "yes": f"{model}_yes", "no": f"{model}_no"})

    @classmethod
    def _natural_budget_family(cls, parameters: dict[str, object]) -> BudgetFamily:
        return one_free_entry(cls.model, parameters, "p", 0.0, cls.budget_high)


@dataclass(frozen=True, kw_only=True)
class Crosswise(CombinedQuestion):
    """Crosswise model: "yes" means the answers to the sensitive and the innocuous question
    are the same; p is the innocuous question's yes share (p = 1/2 identifies nothing).

    P(yes | yes) = p, P(yes | no) = 1 - p: Warner's matrix, without a randomizer.

    >>> Crosswise(p=0.25).matrix()[0].round(4).tolist()
    [[0.25, 0.75], [0.75, 0.25], [0.0, 0.0]]
    """

    model: ClassVar[str] = "crosswise"
    summary: ClassVar[str] = ("are your answers to the sensitive and an innocuous question "
                              "(yes share p) the same?")
    budget_high: ClassVar[float] = 0.5
    excluded_p: ClassVar[float] = 0.5
    excluded_p_reason: ClassVar[str] = (
        "must not be 0.5: with an innocuous yes share of one half, \"same\" and \"different\" "
        "are equally likely whatever the truth")

    def _answers(self, p: Fraction) -> np.ndarray:
        return np.array([[float(p), float(1 - p)], [float(1 - p), float(p)]])


@dataclass(frozen=True, kw_only=True)
class Triangular(CombinedQuestion):
    """Triangular model: "yes" means at least one of the sensitive and the innocuous
    question is answered yes; p is the innocuous yes share (p = 1 identifies nothing).

    P(yes | yes) = 1, P(yes | no) = p.

    >>> Triangular(p=0.25).matrix()[0].round(4).tolist()
    [[1.0, 0.25], [0.0, 0.75], [0.0, 0.0]]
    """

    model: ClassVar[str] = "triangular"
    summary: ClassVar[str] = ("is the answer to the sensitive or an innocuous question "
                              "(yes share p) yes?")
    budget_high: ClassVar[float] = 1.0
    excluded_p: ClassVar[float] = 1.0
    excluded_p_reason: ClassVar[str] = (
        "must be below 1: if everybody answers the innocuous question yes, everybody is in "
        "the triangle and the answers identify nothing")

    def _answers(self, p: Fraction) -> np.ndarray:
        return np.array([[1.0, float(p)], [0.0, float(1 - p)]])
