"""Is a design within a privacy budget? One check, with a message that says what to change.

A design is eps-LDP in a semantics when its privacy loss in that semantics
is at most eps (paper, Def. 3.1 for Shafer's, Def. 3.13 for Walley's; the
bel and pl variants of Lemma 3.2 likewise). Where a design has nuisance
parameters (the SLD's honesty t, the unrelated question's unknown innocuous
share), the loss depends on them: give their values, or the check takes the
worst case over their ranges, which is what a respondent can be promised.

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from surveykit.designs.base import Design
from surveykit.errors import ParameterError

__all__ = ["SEMANTICS", "check_budget"]

#: The semantics a loss can be measured in, and how messages name them.
SEMANTICS: Mapping[str, str] = {"shafer": "Shafer", "walley": "Walley", "bel": "belief",
                                "pl": "plausibility"}

# A design built for a budget (GeneralizedWarner.optimal, grr with epsilon=...) has a loss
# computed from floating-point probabilities, which may exceed the budget in the last bits
# (1 + 2e-16 times it). Losses within this relative slack count as within the budget; a
# loss above the budget by 1e-9 does not.
_RELATIVE_SLACK = 1e-12


def check_budget(design: Design, epsilon: float, semantics: str = "shafer",
                 nuisance: Sequence[float] | Mapping[str, float] | None = None) -> float:
    """The design's privacy loss in ``semantics`` if it is at most ``epsilon``; otherwise a
    ParameterError that names the budget, the loss and what to change.

    ``nuisance`` gives the nuisance parameters' values (a list in the order of
    ``design.nuisance``, or a mapping by name); without it the loss is the
    worst case over their ranges (:meth:`Design.privacy_loss`).

    >>> from surveykit.designs import Warner
    >>> round(check_budget(Warner(p=0.75), 1.1), 4)   # ln 3
    1.0986
    >>> check_budget(Warner(p=0.75), 1.0)
    Traceback (most recent call last):
    ...
    surveykit.errors.ParameterError: epsilon (1) is below the Shafer privacy loss of warner (p = 0.75, dont_know = 0), 1.098612289: allow at least that, or choose parameters that randomize more
    """  # noqa: E501
    if isinstance(epsilon, bool) or not isinstance(epsilon, int | float) \
            or math.isnan(epsilon) or epsilon <= 0:
        raise ParameterError(f"epsilon ({epsilon!r}) must be a positive privacy budget, e.g. 1.0")
    if semantics not in SEMANTICS:
        raise ParameterError(
            f"semantics ({semantics!r}) must be one of {', '.join(SEMANTICS)}")
    loss = design.privacy_loss(semantics, nuisance)
    if loss <= epsilon * (1 + _RELATIVE_SLACK):
        return loss
    name = SEMANTICS[semantics]
    where = ""
    if design.nuisance:
        if nuisance is None:
            ranges = ", ".join(f"{p.name} in [{p.low:g}, {p.high:g}]" for p in design.nuisance)
            example = ", ".join(f"{p.name!r}: ..." for p in design.nuisance)
            where = f" (worst case over {ranges}; pass nuisance={{{example}}} for a value)"
        else:
            where = " at the given " + ", ".join(p.name for p in design.nuisance)
    if math.isinf(loss):
        raise ParameterError(
            f"epsilon ({epsilon:g}): {design.describe()} has no finite {name} privacy "
            f"loss{where}: some answer comes only from respondents in one true state, so no "
            "budget allows it; choose a design in which every answer can come from every "
            "true state")
    raise ParameterError(
        f"epsilon ({epsilon:g}) is below the {name} privacy loss of {design.describe()}"
        f"{where}, {loss:.10g}: allow at least that, or choose parameters that randomize more")
