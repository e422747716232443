"""The power of tests of a prevalence, from the design's Fisher information, for any design.

A study that asks a sensitive question through a design estimates the share
pi of a category (the "yes" share of a yes/no question). Its estimate is
approximately normal with standard error se(pi) = s(pi) / sqrt(n), where
s(pi)^2 is the inverse Fisher information of one respondent at pi
(:func:`surveykit.planning.precision`'s "fisher" method: every design, its
groups, the don't-know branch, nuisance parameters held at given values).
As in R's ``rr::power.rr.test`` (Blair, Imai and Zhou 2015, JASA 110(511);
rr 1.4.2, R/power.R), a test of pi = pi0 rejects when the estimate passes
the null's critical value, computed with the standard error *at the null*,
and the power is the chance of that under the alternative, computed with the
standard error *at the alternative*::

    greater:   P(N(pi1, se1) > pi0 + z_{1-alpha} se0)
    less:      P(N(pi1, se1) < pi0 - z_{1-alpha} se0)
    two-sided: P(N(pi1, se1) < pi0 - z_{1-alpha/2} se0) + P(N(pi1, se1) > pi0 + z_{1-alpha/2} se0)

(rr's ``"one.sided"`` is ``greater``). A two-sample test compares two
independent samples (two faculties, or two domains of one sample: ``split``
is the first one's share of the n respondents) through the difference of
their shares, with se^2 = se_1^2 + se_2^2 at the alternative and at the null.

rr's n in a two-sample test is the size of *each* sample; here n counts both
(rr's n = 500 is n = 1000 with split 0.5). Group sizes within a design are n
times the allocation, not rounded, as in rr. A design effect ``deff`` (a
complex sample's variance over a simple random sample's) divides n: the
study has the power of n / deff respondents.

Solving for n is an exact search on whole numbers (the power grows with n:
with delta = pi1 - pi0 on the tested side, each tail term is monotone in
sqrt(n)), so the answer is the smallest n that reaches the power (rr scans
1..100000 and returns the first n within 0.01 of it). The detectable share at
a given n is the root of power(pi1) - target (Brent's method), from the null
outward.

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Literal

import numpy as np

from surveykit.designs.base import YES, Design
from surveykit.designs.forced import Direct
from surveykit.errors import ParameterError
from surveykit.planning import _allocation, _fisher_se, group_sizes, nuisance_values, state_shares

__all__ = ["ALTERNATIVES", "PowerCurve", "PowerResult", "power", "power_curve"]

#: The alternatives a test can have (rr's "one.sided" is "greater").
ALTERNATIVES: tuple[str, ...] = ("two-sided", "greater", "less")
Alternative = Literal["two-sided", "greater", "less"]
_NORMAL = NormalDist()
# Sample sizes beyond this are not surveys; the search stops there.
_MAX_N = 10**12
# Grid over the share on which the first crossing of the target power is sought.
_SCAN = 200


# -- the test, reduced to three numbers ----------------------------------------------------------


@dataclass(frozen=True)
class _Sample:
    """One sample: a design, the shares under the alternative and the null, where it is
    evaluated (nuisance values, behavioural shares, allocation over its groups)."""

    design: Design
    pi: float | tuple[float, ...]
    null: float | tuple[float, ...]
    nuisance: Mapping[str, float]
    allocation: tuple[float, ...]
    category: str

    def value(self, pi: float | tuple[float, ...]) -> float:
        """The tested share in ``pi``."""
        if isinstance(pi, tuple):
            return float(pi[self.design.category_labels.index(self.category)])
        return float(pi)

    def unit_se(self, pi: float | tuple[float, ...]) -> float:
        """The standard error of the tested share with one respondent (over the groups)."""
        exact = _boundary_se(self.design, pi, self.nuisance)
        if exact is not None:
            return exact
        try:
            ses = _fisher_se(self.design, sizes=self.allocation, pi=pi, nuisance=self.nuisance)
        except ParameterError as error:
            raise ParameterError(f"at pi = {_shown(pi)}: {error}") from None
        return float(ses[YES if self.design.is_binary else self.category])

    def impossible_share(self, pi: float | tuple[float, ...]) -> float:
        """The probability under ``pi`` of the answers the null rules out (those whose
        probability is 0 at the null though it depends on the state)."""
        def cells(shares) -> tuple[np.ndarray, np.ndarray]:
            values = [self.nuisance[p.name] for p in self.design.nuisance] or None
            matrix = self.design.matrix(values)
            at = state_shares(self.design, pi=shares, nuisance=self.nuisance)
            return matrix @ at, np.ptp(matrix, axis=2) > 0

        null_cells, varies = cells(self.null)
        alt_cells, _ = cells(pi)
        ruled_out = (null_cells <= 0) & varies
        return float(np.asarray(self.allocation) @ np.where(ruled_out, alt_cells, 0.0).sum(
            axis=1))


@dataclass(frozen=True)
class _Test:
    """A test reduced to the difference it detects and its per-respondent standard errors:
    se(n) = unit / sqrt(n / deff) at the alternative and at the null.

    ``first_answer`` is set where the null's standard error is 0 (a one-sample null on the
    boundary where some answer is impossible, such as a direct question at 0): the test
    rejects when such an answer comes (its size is 0), and its power is exactly
    1 - (1 - first_answer)^(n / deff), first_answer the probability of those answers under
    the alternative; the normal approximation would call any n enough.
    """

    effect: float
    unit_se: float
    unit_se_null: float
    alpha: float
    alternative: str
    deff: float
    first_answer: float | None = None

    def _on_the_tested_side(self) -> bool:
        if self.alternative == "greater":
            return self.effect > 0
        if self.alternative == "less":
            return self.effect < 0
        return self.effect != 0

    def power(self, n: float) -> float:
        """The power with n respondents (all samples together)."""
        m = n / self.deff
        if self.first_answer is not None:
            return -math.expm1(m * math.log1p(-self.first_answer)) \
                if self._on_the_tested_side() and self.first_answer < 1 else \
                float(self._on_the_tested_side())
        se, se_null = self.unit_se / math.sqrt(m), self.unit_se_null / math.sqrt(m)
        if self.alternative == "greater":
            return _above(self.effect, se, _NORMAL.inv_cdf(1 - self.alpha) * se_null)
        if self.alternative == "less":
            return _below(self.effect, se, -_NORMAL.inv_cdf(1 - self.alpha) * se_null)
        z = _NORMAL.inv_cdf(1 - self.alpha / 2)
        return _below(self.effect, se, -z * se_null) + _above(self.effect, se, z * se_null)

    def limit(self) -> float:
        """The power as n grows without bound."""
        if self.first_answer is not None:
            return float(self._on_the_tested_side() and self.first_answer > 0)
        if self.effect == 0:
            return self.power(1.0)  # se and se_null shrink alike: the ratio stays
        if self.alternative == "greater":
            return 1.0 if self.effect > 0 else 0.0
        if self.alternative == "less":
            return 1.0 if self.effect < 0 else 0.0
        return 1.0


def _above(mean: float, sd: float, threshold: float) -> float:
    """P(N(mean, sd) > threshold); a point mass when sd = 0 (R's pnorm does the same)."""
    if sd == 0:
        return 1.0 if mean > threshold else 0.0
    return 1.0 - _NORMAL.cdf((threshold - mean) / sd)


def _below(mean: float, sd: float, threshold: float) -> float:
    """P(N(mean, sd) < threshold)."""
    if sd == 0:
        return 1.0 if mean < threshold else 0.0
    return _NORMAL.cdf((threshold - mean) / sd)


def _boundary_se(design: Design, pi, nuisance: Mapping[str, float]) -> float | None:
    """0 where an answer that depends on the state is impossible at ``pi`` (a direct
    question at pi = 0: one "yes" refutes the null), else None.

    The Fisher information there is infinite along pi, so the variance of pi is 0 (its
    limit from inside); the information formula would leave the impossible answer out.
    Shown for yes/no designs whose nuisance parameters do not move that answer; other
    such points are refused.
    """
    shares = state_shares(design, pi=pi, nuisance=nuisance)
    values = nuisance_values(design, nuisance)
    matrix = design.matrix([values[p.name] for p in design.nuisance] or None)
    cells = matrix @ shares
    impossible = (cells <= 0) & (np.ptp(matrix, axis=2) > 0)
    if not impossible.any():
        return None
    structure = design.structure
    groups, responses = np.nonzero(impossible)
    moved = structure.slopes.shape[0] and np.any(structure.slopes[:, groups, responses] != 0)
    if design.is_binary and structure.states == structure.categories and not moved:
        return 0.0
    answer = structure.responses[int(responses[0])]
    raise ParameterError(
        f"at pi = {_shown(pi)} design {design.model!r} never gives the answer {answer!r}, "
        "and the normal approximation behind the power has no standard error there; test "
        "a share inside (0, 1)")


def _shown(pi) -> str:
    if isinstance(pi, tuple):
        return "[" + ", ".join(f"{v:g}" for v in pi) + "]"
    return f"{pi:g}"


# -- the result ---------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class PowerResult:
    """The power of a test of a prevalence, the sample size, or the detectable share.

    ``solved`` says which was computed: ``"power"`` (at ``n``), ``"n"`` (the
    smallest n with at least ``target_power``) or ``"pi"`` (the share closest
    to the null that the test detects with ``target_power`` at ``n``; for a
    two-sided test ``pi`` lies above the null and ``pi_below`` below).

    ``n`` counts every respondent (both samples of a two-sample test);
    ``sample_sizes`` splits it; ``se`` and ``se_null`` are the standard errors
    of the tested share (of the difference, two samples) at the alternative and
    the null. ``n_direct`` is the sample size a direct question would need for
    the same power (``privacy_cost`` = n / n_direct), ``power_direct`` its
    power with n respondents.
    """

    solved: Literal["power", "n", "pi"]
    test: Literal["one-sample", "two-sample"]
    alternative: str
    alpha: float
    design: Design
    design2: Design | None
    category: str
    pi: float | tuple[float, ...]
    null: float | tuple[float, ...]
    pi2: float | tuple[float, ...] | None
    null2: float | tuple[float, ...] | None
    pi_below: float | None
    nuisance: Mapping[str, float]
    nuisance2: Mapping[str, float] | None
    allocation: tuple[float, ...]
    split: float | None
    deff: float
    n: int
    sample_sizes: tuple[int, ...]
    power: float
    target_power: float | None
    effect: float
    se: float
    se_null: float
    power_direct: float
    n_direct: int | None
    _test: _Test = field(repr=False, compare=False)
    _direct: _Test = field(repr=False, compare=False)

    @property
    def privacy_cost(self) -> float | None:
        """n / n_direct: how many times the respondents a direct question would need for the
        same power (None when the direct question's n is not defined)."""
        return None if not self.n_direct else self.n / self.n_direct

    def to_dict(self) -> dict[str, object]:
        """Plain numbers for JSON."""
        def plain(value):
            return list(value) if isinstance(value, tuple) else value

        return {
            "solved": self.solved,
            "test": self.test,
            "alternative": self.alternative,
            "alpha": self.alpha,
            "design": self.design.spec(),
            "design2": None if self.design2 is None else self.design2.spec(),
            "category": self.category,
            "pi": plain(self.pi),
            "null": plain(self.null),
            "pi2": plain(self.pi2),
            "null2": plain(self.null2),
            "pi_below": self.pi_below,
            "nuisance": dict(self.nuisance),
            "nuisance2": None if self.nuisance2 is None else dict(self.nuisance2),
            "allocation": list(self.allocation),
            "split": self.split,
            "deff": self.deff,
            "n": self.n,
            "sample_sizes": list(self.sample_sizes),
            "power": self.power,
            "target_power": self.target_power,
            "effect": self.effect,
            "se": self.se,
            "se_null": self.se_null,
            "power_direct": self.power_direct,
            "n_direct": self.n_direct,
            "privacy_cost": self.privacy_cost,
        }


# -- checks -------------------------------------------------------------------------------------


def _probability(name: str, value: object, *, open_interval: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ParameterError(f"{name} ({value!r}) must be a number between 0 and 1")
    value = float(value)
    inside = 0 < value < 1 if open_interval else 0 <= value <= 1
    if not math.isfinite(value) or not inside:
        bounds = "strictly between 0 and 1" if open_interval else "between 0 and 1"
        raise ParameterError(f"{name} ({value:g}) must be {bounds}")
    return value


def _shares(design: Design, name: str, value: object, nuisance: Mapping[str, float]
            ) -> float | tuple[float, ...]:
    """A prevalence (yes/no designs) or one share per category, checked."""
    if design.is_binary:
        if isinstance(value, Sequence) and not isinstance(value, str):
            raise ParameterError(f"{name} ({list(value)!r}) must be one prevalence (the share "
                                 f"of yes) for design {design.model!r}")
        value = _probability(name, value, open_interval=False)
    else:
        if isinstance(value, str) or not isinstance(value, Sequence | np.ndarray):
            raise ParameterError(
                f"{name} ({value!r}) must be one share per category of design "
                f"{design.model!r} ({', '.join(design.category_labels)}), e.g. "
                + ",".join(["0.2"] * len(design.category_labels)))
        value = tuple(float(v) for v in value)
    try:
        state_shares(design, pi=value, nuisance=nuisance)
    except ParameterError as error:
        raise ParameterError(f"{name}: {error}") from None
    return value


def _design(value: object, name: str) -> Design:
    if not isinstance(value, Design):
        raise ParameterError(f"{name} ({value!r}) must be a design, e.g. make_design(\"warner\", "
                             "p=0.7)")
    return value


def _category(design: Design, category: str | None) -> str:
    if design.is_binary:
        if category not in (None, YES):
            raise ParameterError(f"category ({category!r}): design {design.model!r} is a yes/no "
                                 "design; its tested share is that of yes")
        return YES
    if category is None:
        raise ParameterError(
            f"design {design.model!r} has categories {', '.join(design.category_labels)}: name "
            "the one whose share is tested (category)")
    if category not in design.category_labels:
        raise ParameterError(f"category ({category!r}) is not one of "
                             f"{', '.join(design.category_labels)}")
    return category


def _nuisance(design: Design, nuisance: Mapping[str, float] | None) -> dict[str, float]:
    """The values the information is evaluated at (given ones, else the middle of each
    range; behavioural shares 0)."""
    if nuisance is not None and not isinstance(nuisance, Mapping):
        raise ParameterError(f"nuisance ({nuisance!r}) must map parameter names to values, "
                             "e.g. {\"t\": 0.9}")
    return nuisance_values(design, dict(nuisance or {}))


def _pooled(split: float, pi, pi2):
    if isinstance(pi, tuple):
        return tuple(split * a + (1 - split) * b for a, b in zip(pi, pi2, strict=True))
    return split * pi + (1 - split) * pi2


# -- the one entry point -----------------------------------------------------------------------


def power(design: Design, *, pi: float | Sequence[float] | None = None,
          null: float | Sequence[float] | None = None, n: int | None = None,
          power: float | None = None, alpha: float = 0.05,
          alternative: Alternative = "two-sided",
          pi2: float | Sequence[float] | None = None,
          null2: float | Sequence[float] | None = None, design2: Design | None = None,
          split: float = 0.5, nuisance: Mapping[str, float] | None = None,
          nuisance2: Mapping[str, float] | None = None,
          allocation: Sequence[float] | None = None, deff: float = 1.0,
          category: str | None = None) -> PowerResult:
    """The power of a test of ``pi`` against ``null`` with ``n`` respondents; or, with
    ``power`` instead of ``n``, the smallest n that reaches it; or, with ``n`` and
    ``power`` and no ``pi``, the share the test detects.

    One sample: ``null`` defaults to 0 (as in rr). Two samples: give ``pi2`` (the
    second sample's share; ``design2`` if it is asked differently); the test is of
    pi - pi2 against null - null2, and both null shares default to the pooled
    split * pi + (1 - split) * pi2 (``null`` alone: both at it). ``nuisance`` holds
    the values of nuisance parameters and behavioural shares (the SLD's t, the CDM's
    gamma); ``allocation`` the shares of the design's groups; k-category designs take
    one share per category in ``pi`` and ``null`` and the tested ``category``.

    rr's documented example (forced response, truthful 2/3, forced yes and no 1/6
    each; rr's p = 2/3, p0 = p1 = 1/6):

    >>> from surveykit.designs import make_design
    >>> fr = make_design("fr", p=[1 / 6, 1 / 6])
    >>> round(power(fr, pi=0.2, null=0, n=200, alpha=0.01, alternative="greater").power, 6)
    0.986887
    >>> power(fr, pi=0.2, null=0, power=0.9, alpha=0.01, alternative="greater").n
    119
    """
    design = _design(design, "design")
    if alternative not in ALTERNATIVES:
        raise ParameterError(f"alternative ({alternative!r}) must be one of "
                             f"{', '.join(ALTERNATIVES)}")
    alpha = _probability("alpha", alpha)
    if isinstance(deff, bool) or not isinstance(deff, int | float) or not math.isfinite(
            deff) or deff <= 0:
        raise ParameterError(f"deff ({deff!r}) must be a positive design effect, e.g. 1.5 "
                             "(the variance is 1.5 times a simple random sample's)")
    deff = float(deff)
    if n is not None and (isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1):
        raise ParameterError(f"n ({n!r}) must be a whole number of respondents, at least 1")
    target = None if power is None else _probability("power", power)
    if n is None and target is None:
        raise ParameterError("give n (to compute the power) or power (to find n), or both "
                             "without pi (to find the share the test detects)")
    if pi is None and (n is None or target is None):
        raise ParameterError("give pi, the share under the alternative (or give n and power "
                             "to find the share the test detects)")
    if pi is not None and n is not None and target is not None:
        raise ParameterError("give two of pi, n and power: the third is what is computed")
    category = _category(design, category)
    values = _nuisance(design, nuisance)
    shares = _allocation(design, allocation)
    two = pi2 is not None or design2 is not None or null2 is not None
    if two:
        if pi2 is None:
            raise ParameterError("a two-sample test needs pi2, the second sample's share")
        split = _probability("split", split)
        design2 = design if design2 is None else _design(design2, "design2")
        if design2.category_labels != design.category_labels:
            raise ParameterError(
                f"design2 ({design2.model!r}) has categories "
                f"{', '.join(design2.category_labels)}; the first sample's design has "
                f"{', '.join(design.category_labels)}: both must measure the same trait")
        values2 = values if nuisance2 is None and design2 is design else _nuisance(
            design2, nuisance2)
        shares2 = shares if design2 is design else _allocation(design2, None)
        pi2 = _shares(design2, "pi2", pi2, values2)
    if pi is not None:
        pi = _shares(design, "pi", pi, values)
    if null2 is not None and null is None:
        raise ParameterError("null2 goes with null: give both null shares, or neither (then "
                             "both are the pooled share)")
    if not two:
        if null is None:
            if not design.is_binary:
                raise ParameterError("give null, the shares under the null hypothesis (one per "
                                     "category)")
            null = 0.0
        null = _shares(design, "null", null, values)
        first = _Sample(design, pi if pi is not None else null, null, values, shares, category)
        samples = [first]
    else:
        if null is None:
            null = null2 = pi2 if pi is None else _pooled(split, pi, pi2)
        null = _shares(design, "null", null, values)
        null2 = _shares(design2, "null2", null if null2 is None else null2, values2)
        samples = [_Sample(design, pi if pi is not None else pi2, null, values, shares,
                           category),
                   _Sample(design2, pi2, null2, values2, shares2, category)]
    weights = (1.0,) if not two else (split, 1 - split)

    def build(pi_first, which: Sequence[_Sample]) -> _Test:
        alt = [pi_first, *[s.pi for s in which[1:]]]
        effect = which[0].value(alt[0]) - which[0].value(which[0].null)
        if two:
            effect -= which[1].value(alt[1]) - which[1].value(which[1].null)
        unit = math.sqrt(sum(s.unit_se(a) ** 2 / w for s, a, w in zip(which, alt, weights,
                                                                      strict=True)))
        unit_null = math.sqrt(sum(s.unit_se(s.null) ** 2 / w for s, w in zip(which, weights,
                                                                             strict=True)))
        first = which[0].impossible_share(alt[0]) if not two and unit_null == 0 else None
        return _Test(effect, unit, unit_null, alpha, alternative, deff, first)

    direct_design = Direct() if design.is_binary else Direct(categories=design.category_labels)
    direct_samples = [_Sample(direct_design, s.pi, s.null, {}, (1.0,), category)
                      for s in samples]
    minimum = 2 if two else 1
    pi_below = None
    if pi is None:
        solved = "pi"
        pi, pi_below = _detectable(samples, build, n, target, alternative)
        direct_samples[0] = _Sample(direct_design, pi, samples[0].null, {}, (1.0,), category)
        test = build(pi, samples)
        achieved = test.power(n)
    elif n is None:
        solved = "n"
        test = build(pi, samples)
        n = _smallest_n(test, target, minimum, samples[0], pi)
        achieved = test.power(n)
    else:
        solved = "power"
        test = build(pi, samples)
        achieved = test.power(n)
    direct = build(direct_samples[0].pi, direct_samples)
    try:
        n_direct = _smallest_n(direct, achieved, minimum, samples[0], pi) \
            if 0 < achieved < 1 else None
    except ParameterError:
        n_direct = None
    m = n / deff
    return PowerResult(
        solved=solved, test="two-sample" if two else "one-sample", alternative=alternative,
        alpha=alpha, design=design, design2=design2 if two else None, category=category,
        pi=pi, null=null, pi2=pi2 if two else None, null2=null2 if two else None,
        pi_below=pi_below, nuisance=values, nuisance2=values2 if two else None,
        allocation=shares, split=split if two else None, deff=deff, n=int(n),
        sample_sizes=group_sizes(int(n), weights), power=achieved, target_power=target,
        effect=test.effect, se=test.unit_se / math.sqrt(m),
        se_null=test.unit_se_null / math.sqrt(m), power_direct=direct.power(n),
        n_direct=n_direct, _test=test, _direct=direct)


def _smallest_n(test: _Test, target: float, minimum: int, sample: _Sample, pi) -> int:
    """The smallest whole n >= minimum with power(n) >= target: doubling, then bisection
    (the power grows with n)."""
    if test.power(minimum) >= target:
        return minimum
    if test.limit() < target:
        raise ParameterError(_unreachable(test, target, sample, pi))
    low, high = minimum, 2 * minimum
    while test.power(high) < target:
        low, high = high, 2 * high
        if high > _MAX_N:
            raise ParameterError(f"power {target:g} needs more than {_MAX_N:.0e} respondents; "
                                 "test a larger difference or lower the power")
    while high - low > 1:  # power(low) < target <= power(high)
        middle = (low + high) // 2
        if test.power(middle) >= target:
            high = middle
        else:
            low = middle
    return high


def _unreachable(test: _Test, target: float, sample: _Sample, pi) -> str:
    if test.effect == 0:
        return (f"pi ({_shown(pi)}) is the null: the power stays at {test.limit():.4g} whatever "
                f"n, below {target:g}; test a share that differs from the null")
    side = "above" if test.alternative == "greater" else "below"
    return (f"the alternative lies on the wrong side for alternative {test.alternative!r} "
            f"(the test detects shares {side} the null): its power falls to 0 as n grows; "
            "use the other alternative or two-sided")


def _detectable(samples: list[_Sample], build, n: int, target: float, alternative: str
                ) -> tuple[float, float | None]:
    """The share of the first sample nearest the null that the test detects with power
    ``target`` at n, above (greater, two-sided) and below (less, two-sided)."""
    first = samples[0]
    if not first.design.is_binary:
        raise ParameterError(
            f"the detectable share is found for yes/no designs; design {first.design.model!r} "
            "has categories: give pi and compute the power or n instead")
    null = first.null
    behavioural = sum(v for k, v in first.nuisance.items()
                      if k in first.design.structure.state_parameters.values())
    top = 1.0 - behavioural

    def gap(x: float) -> float:
        return build(x, samples).power(n) - target

    def crossing(ends: tuple[float, float]) -> float | None:
        grid = np.linspace(ends[0], ends[1], _SCAN + 1)[1:]
        previous = ends[0]
        for x in grid:
            try:
                value = gap(float(x))
            except ParameterError:
                previous = float(x)
                continue
            if value >= 0:
                from scipy.optimize import brentq

                try:
                    gap(previous)
                except ParameterError:
                    return float(x)
                return float(brentq(gap, previous, float(x), xtol=1e-12, rtol=1e-12))
            previous = float(x)
        return None

    above = crossing((null, top)) if alternative in ("greater", "two-sided") else None
    below = crossing((null, 0.0)) if alternative in ("less", "two-sided") else None
    found = above if alternative != "less" else below
    if found is None:
        where = "above" if alternative != "less" else "below"
        raise ParameterError(
            f"no share {where} the null ({null:g}) reaches power {target:g} with n = {n}; raise "
            "n or lower the power")
    return found, (below if alternative == "two-sided" else None)


# -- curves for pictures -----------------------------------------------------------------------


@dataclass(frozen=True)
class PowerCurve:
    """The power along sample sizes (``x`` = n) of the design and of a direct question."""

    n: np.ndarray
    power: np.ndarray
    power_direct: np.ndarray


def power_curve(result: PowerResult, *, points: int = 120) -> PowerCurve:
    """Power against n, from one respondent per sample to well past the result's n (and the
    direct question's), for ``--plot``.

    >>> from surveykit.designs import make_design
    >>> r = power(make_design("warner", p=0.7), pi=0.2, null=0.0, n=500)
    >>> curve = power_curve(r, points=5)
    >>> curve.n.tolist()[0], bool(np.all(np.diff(curve.power) >= 0))
    (2.0, True)
    """
    top = max(result.n, result.n_direct or 0) * 1.6
    ns = np.unique(np.round(np.linspace(2.0, max(top, 10.0), points)))
    return PowerCurve(n=ns, power=np.array([result._test.power(float(v)) for v in ns]),
                      power_direct=np.array([result._direct.power(float(v)) for v in ns]))
