"""Designing a survey within a privacy budget: choose p, q and the sample size.

For a Shafer budget eps and a don't-know probability d, the best generalized
Warner mechanism has p + q = c = 1 - d and p / q = e^eps (Corollary 3.12):
p = c e^eps / (e^eps + 1), q = c / (e^eps + 1). For a Walley budget the loss
ln((1 - q)/q) fixes q = 1 / (e^eps + 1), and p = 1 - q - d (Section 3.2).

Precision is the exact standard error sqrt(Var(pi_hat | N1 + N2 > 0)) at a
prevalence pi (default 1/2, where q1 q2 and hence the variance is largest),
and the sample size for a target standard error is the smallest n that meets
it. Warner's mechanism (d = 0) at the same budget is computed alongside, as the
yardstick: "don't know" costs precision (Corollary 3.11), and the design shows
how much.

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from surveykit.designs.warner import GeneralizedWarner
from surveykit.errors import ParameterError

__all__ = ["Design", "design_survey", "smallest_sample_size"]

Semantics = Literal["shafer", "walley"]
# Sample sizes beyond this are not surveys; the search stops there.
_MAX_N = 10**12


@dataclass(frozen=True, kw_only=True)
class Design:
    """One design: a mechanism, its privacy losses and its precision at n respondents.

    ``n`` and ``se`` are ``None`` when neither a sample size nor a target was given.
    """

    semantics: Semantics
    budget: float
    mechanism: GeneralizedWarner
    pi: float
    n: int | None
    se: float | None
    target_se: float | None

    @property
    def epsilon_shafer(self) -> float:
        """ln(p/q), Def. 3.1."""
        return self.mechanism.epsilon_shafer

    @property
    def epsilon_walley(self) -> float:
        """ln((1 - q)/q), Def. 3.13."""
        return self.mechanism.epsilon_walley

    def to_dict(self) -> dict:
        """Plain numbers for JSON (keys p, q, dont_know, epsilon_shafer, epsilon_walley, n, se)."""
        return {
            "semantics": self.semantics,
            "budget": self.budget,
            "p": self.mechanism.p,
            "q": self.mechanism.q,
            "dont_know": self.mechanism.dont_know,
            "epsilon_shafer": self.epsilon_shafer,
            "epsilon_walley": self.epsilon_walley,
            "pi": self.pi,
            "n": self.n,
            "se": self.se,
            "target_se": self.target_se,
        }


def standard_error(mechanism: GeneralizedWarner, *, n: int, pi: float) -> float:
    """sqrt(Var(pi_hat | N1 + N2 > 0)), the exact conditional standard error."""
    return math.sqrt(mechanism.conditional_variance(pi=pi, n=n))


def smallest_sample_size(mechanism: GeneralizedWarner, *, target_se: float, pi: float) -> int:
    """The smallest n whose exact conditional standard error is at most ``target_se``.

    The standard error falls as n grows (E[1/M | M > 0] decreases in n), so a
    doubling search followed by bisection finds the boundary; the answer is
    then checked on both sides.

    >>> gw = GeneralizedWarner(p=0.6, q=0.2)
    >>> n = smallest_sample_size(gw, target_se=0.05, pi=0.5)
    >>> standard_error(gw, n=n, pi=0.5) <= 0.05 < standard_error(gw, n=n - 1, pi=0.5)
    True
    """
    if not (isinstance(target_se, int | float) and math.isfinite(target_se) and target_se > 0):
        raise ParameterError(f"target_se ({target_se!r}) must be a positive standard error")
    if standard_error(mechanism, n=1, pi=pi) <= target_se:
        return 1
    high = 2
    while standard_error(mechanism, n=high, pi=pi) > target_se:
        high *= 2
        if high > _MAX_N:
            raise ParameterError(
                f"target_se ({target_se}) needs more than {_MAX_N:.0e} respondents; "
                "raise the target or the privacy budget"
            )
    low = high // 2  # se(low) > target_se >= se(high)
    while high - low > 1:
        middle = (low + high) // 2
        if standard_error(mechanism, n=middle, pi=pi) > target_se:
            low = middle
        else:
            high = middle
    return high


def design_survey(
    *,
    epsilon: float,
    dont_know: float = 0.0,
    semantics: Semantics = "shafer",
    n: int | None = None,
    target_se: float | None = None,
    pi: float = 0.5,
) -> tuple[Design, Design]:
    """The generalized Warner design for a budget, and Warner's design at the same budget.

    Give at most one of ``n`` (report the standard error there) and
    ``target_se`` (find the smallest n that reaches it; each design gets its own n).

    >>> ours, warner = design_survey(epsilon=math.log(3), dont_know=0.2, n=1000)
    >>> round(ours.mechanism.p, 4), round(ours.mechanism.q, 4)
    (0.6, 0.2)
    >>> ours.se > warner.se   # "don't know" costs precision at the same Shafer budget
    True
    """
    if semantics not in ("shafer", "walley"):
        raise ParameterError(f"semantics ({semantics!r}) must be 'shafer' or 'walley'")
    if n is not None and target_se is not None:
        raise ParameterError("give either n or target_se, not both")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise ParameterError(f"n ({n!r}) must be a whole number of respondents, at least 1")
    if not (isinstance(pi, int | float) and 0 <= pi <= 1):
        raise ParameterError(f"pi ({pi!r}) must be a prevalence between 0 and 1")
    if semantics == "shafer":
        mechanism = GeneralizedWarner.optimal(epsilon=epsilon, dont_know=dont_know)
    else:
        mechanism = GeneralizedWarner.for_walley_budget(epsilon=epsilon, dont_know=dont_know)
    # Warner's mechanism has equal Shafer and Walley losses, ln(p / (1 - p)).
    warner = GeneralizedWarner.optimal(epsilon=epsilon, dont_know=0.0)

    def build(m: GeneralizedWarner) -> Design:
        size = n
        if target_se is not None:
            size = smallest_sample_size(m, target_se=target_se, pi=pi)
        se = standard_error(m, n=size, pi=pi) if size is not None else None
        return Design(semantics=semantics, budget=float(epsilon), mechanism=m, pi=float(pi),
                      n=size, se=se, target_se=target_se)

    return build(mechanism), build(warner)
