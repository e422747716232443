"""Did respondents follow the design? The don't-know compliance test.

A design with a "don't know" branch tells a known share of respondents to
answer "don't know" (``Design.designed_dont_know``). The number of "don't
know" answers among all answers is then Binomial(answered, designed share);
an exact two-sided binomial test (``scipy.stats.binomtest``'s method and numbers,
from :func:`surveykit.estimation.distributions.binomial_test` without importing
``scipy.stats``) tells when the observed share is out of line. More than
designed means some respondents opted out instead of following their
instruction; fewer means some answered when told to say "don't know".

One function for every caller: ``surveykit report`` (per question),
``surveykit estimate`` and :meth:`surveykit.estimation.Estimate.dont_know_check`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from surveykit.estimation.distributions import binomial_test
from surveykit.vocabulary import percent_text

__all__ = ["ALPHA", "DontKnowCheck", "dont_know_check"]

#: Checks warn at this level.
ALPHA = 0.01


@dataclass(frozen=True)
class DontKnowCheck:
    """The test's numbers: ``pvalue`` is None when there are no answers; ``warning`` is
    the plain-language warning when the test fails at ``alpha`` (else empty)."""

    dont_know: int
    answered: int
    designed: float
    pvalue: float | None
    warning: str
    alpha: float = ALPHA

    @property
    def observed(self) -> float | None:
        """The observed share of "don't know" answers (None without answers)."""
        return self.dont_know / self.answered if self.answered else None

    @property
    def passed(self) -> bool:
        return not self.warning

    def to_dict(self) -> dict:
        """The JSON keys of ``estimate --format json`` and the report."""
        return {"dont_know_observed": self.observed, "dont_know_designed": self.designed,
                "dont_know_pvalue": self.pvalue, "dont_know_warning": self.warning or None}


def dont_know_check(dont_know: int, answered: int, designed: Fraction | float, *,
                    alpha: float = ALPHA) -> DontKnowCheck:
    """The exact binomial test of ``dont_know`` "don't know" answers among ``answered``
    against the design's share ``designed`` (two-sided).

    >>> check = dont_know_check(388, 1955, Fraction(1, 5))
    >>> round(check.pvalue, 3), check.passed
    (0.888, True)
    >>> dont_know_check(290, 1000, 0.2).warning[:31]
    'More "don\\'t know" than designed'
    """
    designed = float(designed)
    if answered == 0:
        return DontKnowCheck(dont_know, answered, designed, None, "", alpha)
    if designed == 0:
        pvalue = 1.0 if dont_know == 0 else 0.0
    elif designed == 1:
        pvalue = 1.0 if dont_know == answered else 0.0
    else:
        pvalue = binomial_test(dont_know, answered, designed)
    if pvalue >= alpha:
        return DontKnowCheck(dont_know, answered, designed, pvalue, "", alpha)
    observed = dont_know / answered
    shares = (f"{percent_text(observed)} answered \"don't know\" where the design expects "
              f"{percent_text(designed)} (exact binomial test, p = {pvalue:.2g})")
    if observed > designed:
        warning = (
            f"More \"don't know\" than designed: {shares}. Some respondents seem to have "
            "opted out instead of following their instructions. The estimate uses only the "
            "other answers, so it stays unbiased only if opting out is unrelated to the truth; "
            "if people with the trait opt out more often, pi is underestimated.")
    else:
        warning = (
            f"Fewer \"don't know\" than designed: {shares}. Some respondents seem to have "
            "given another answer when their instruction said \"don't know\"; those answers do "
            "not follow the design, so the estimate may be biased.")
    return DontKnowCheck(dont_know, answered, designed, pvalue, warning, alpha)
