"""Designs that detect respondents who do not follow the instructions (two groups each).

* ``cdm`` (cheating detection model, Clark and Desharnais 1998; RRreg's
  ``"CDM"``): in group g a respondent is told to answer yes with probability
  p[g], else truthfully. Three kinds of respondents: carriers who comply
  (share pi, always yes), honest non-carriers (beta) and cheaters (gamma =
  1 - pi - beta), who answer no whatever they are told. pi is a lower bound of
  the prevalence; gamma is estimated too.
* ``cdmsym`` (symmetric CDM, Ostapczuk et al. 2009; RRreg's ``"CDMsym"``):
  forced yes and forced no in each group: p = [yes in group 1, no in group 1,
  yes in group 2, no in group 2].
* ``sld`` (stochastic lie detector, Moshagen, Musch and Erdfelder 2012;
  RRreg's ``"SLD"``): non-carriers answer truthfully ("no") with probability
  p[g] and yes otherwise; carriers are told to answer yes, and do so with
  probability t (honesty, a nuisance parameter estimated from the data).

Every design here also takes ``dont_know`` and optional ``groups`` names.

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import ClassVar

from surveykit.designs.base import (
    DONT_KNOW,
    NO,
    YES,
    Instruction,
    NuisanceParameter,
    TwoGroups,
    as_fraction,
    check_probabilities,
)
from surveykit.errors import ParameterError

__all__ = ["CheatingDetection", "CheatingDetectionSymmetric", "StochasticLieDetector"]

CHEATER = "cheater"
_RESPONSES = (YES, NO, DONT_KNOW)


@dataclass(frozen=True, kw_only=True)
class CheatingDetection(TwoGroups):
    """Cheating detection model: in group g answer yes with probability p[g], else truthfully;
    cheaters (share gamma) answer no whatever they are told.

    States: yes (compliant carriers, pi), no (honest non-carriers, beta) and
    cheater (gamma). P(yes | yes) = 1, P(yes | no, g) = p[g], P(yes | cheater) = 0.

    >>> CheatingDetection(p=[0.3, 0.7]).state_labels
    ('yes', 'no', 'cheater')
    """

    model: ClassVar[str] = "cdm"
    summary: ClassVar[str] = ("cheating detection: yes with probability p[g] in group g, "
                              "else truthfully; estimates cheaters")

    budget_example: ClassVar[str | None] = "p=0.3,? (p[2] for the budget, given p[1])"

    equal_p_reason: ClassVar[str] = (
        "the two groups must be told to answer yes with different probabilities; with equal "
        "ones cheaters and honest respondents cannot be told apart")
    extra_states: ClassVar[Mapping[str, str]] = MappingProxyType({CHEATER: "gamma"})

    def _group(self, g: int) -> tuple[list[list[float]], None, list[Instruction]]:
        share = self.p[g]
        exact = as_fraction(share)
        return ([[1.0, share, 0.0], [0.0, 1 - share, 1.0]], None,
                [Instruction("say", exact, say=YES), Instruction("truthful", 1 - exact)])


@dataclass(frozen=True, kw_only=True)
class CheatingDetectionSymmetric(TwoGroups):
    """Symmetric cheating detection: p = [forced yes, forced no] of group 1, then of group 2.

    P(yes | yes, g) = 1 - no_g, P(yes | no, g) = yes_g, P(yes | cheater) = 0.

    >>> CheatingDetectionSymmetric(p=[0.2, 0.1, 0.1, 0.2]).matrix()[1, 0].round(4).tolist()
    [0.8, 0.1, 0.0]
    """

    model: ClassVar[str] = "cdmsym"
    summary: ClassVar[str] = ("symmetric cheating detection: forced yes and forced no "
                              "in each of two groups")

    budget_example: ClassVar[str | None] = (
        "p=0.2,0.1,?,? (group 2's forced answers, given group 1's)")

    extra_states: ClassVar[Mapping[str, str]] = MappingProxyType({CHEATER: "gamma"})

    p: tuple[float, float, float, float]

    def _checked_p(self) -> tuple[float, ...]:
        p = check_probabilities("p", self.p, 4)
        for g in range(2):
            if as_fraction(p[2 * g]) + as_fraction(p[2 * g + 1]) > 1:
                raise ParameterError(
                    f"p ({list(p)!r}): in group {g + 1} forced yes ({p[2 * g]:g}) and forced no "
                    f"({p[2 * g + 1]:g}) sum above 1")
        yes1, no1, yes2, no2 = (as_fraction(v) for v in p)
        # P(yes | g) = pi (1 - no_g) + beta yes_g: two equations for pi and beta, solvable
        # unless their determinant vanishes (e.g. the same forced answers in both groups)
        if (1 - no1) * yes2 == (1 - no2) * yes1:
            raise ParameterError(
                f"p ({list(p)!r}): with p = [yes_1, no_1, yes_2, no_2], (1 - no_1) yes_2 must "
                "differ from (1 - no_2) yes_1, or compliant carriers, honest non-carriers and "
                "cheaters cannot be told apart; change one group's forced answers")
        return p

    def _group(self, g: int) -> tuple[list[list[float]], None, list[Instruction]]:
        forced_yes, forced_no = as_fraction(self.p[2 * g]), as_fraction(self.p[2 * g + 1])
        return ([[float(1 - forced_no), float(forced_yes), 0.0],
                 [float(forced_no), float(1 - forced_yes), 1.0]], None,
                [Instruction("say", forced_yes, say=YES), Instruction("say", forced_no, say=NO),
                 Instruction("truthful", 1 - forced_yes - forced_no)])


@dataclass(frozen=True, kw_only=True)
class StochasticLieDetector(TwoGroups):
    """Stochastic lie detector: non-carriers answer truthfully with probability p[g] in group
    g, else yes; carriers answer yes honestly with probability t (estimated).

    P(yes | yes) = t, P(yes | no, g) = 1 - p[g]: group 1 has p[1] (RRreg's p[1], R
    counting from 1).

    >>> sld = StochasticLieDetector(p=[0.1667, 0.8333])
    >>> sld.matrix([1.0])[0].round(4).tolist()   # t = 1: every carrier is honest
    [[1.0, 0.8333], [0.0, 0.1667], [0.0, 0.0]]
    """

    model: ClassVar[str] = "sld"
    summary: ClassVar[str] = ("stochastic lie detector: truthful with p[g] in group g, else "
                              "yes; estimates the honesty t")

    budget_example: ClassVar[str | None] = "p=0.1667,? (p[2] for the budget, given p[1])"

    equal_p_reason: ClassVar[str] = (
        "the two groups must answer truthfully with different probabilities; with equal ones "
        "pi and the honesty t cannot be told apart")
    nuisance_parameter: ClassVar[NuisanceParameter | None] = NuisanceParameter(
        "t", "share of carriers who answer yes honestly")

    def _group(self, g: int) -> tuple[list[list[float]], list[list[float]], list[Instruction]]:
        share = self.p[g]
        exact = as_fraction(share)
        # carriers: yes with t (base 0, slope +1), no with 1 - t (base 1, slope -1)
        return ([[0.0, 1 - share], [1.0, share]], [[1.0, 0.0], [-1.0, 0.0]],
                [Instruction("truthful", exact), Instruction("say", 1 - exact, say=YES)])
