"""Designing a survey within a privacy budget: choose the design's parameters and the sample size.

Any design (:func:`plan_design`): the free parameter for a privacy budget
(:func:`solve_for_budget`), then the precision at a prevalence pi: the exact
conditional variance for one-group yes/no designs, the inverse Fisher
information otherwise (:func:`precision`), and the smallest sample size for a
target standard error. The generalized Warner design beside Warner's, as
surveykit 0.1 planned it, is :func:`design_survey`:

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

import dataclasses
import itertools
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from surveykit.designs.base import (
    YES,
    has_free_entries,
    mechanism_deprecated,
    with_dont_know_parameter,
)
from surveykit.designs.base import Design as RRDesign
from surveykit.designs.quantitative import QuantitativeDesign
from surveykit.designs.quantitative_privacy import QuantitativePrivacy
from surveykit.designs.registry import design_class, make_design, parse_parameters
from surveykit.errors import ParameterError
from surveykit.estimation import binomial
from surveykit.estimation.likelihood import LikelihoodProblem, covariance
from surveykit.validation import check_epsilon, check_sample_size
from surveykit.vocabulary import Semantics, loss_fields

__all__ = ["FreeParameter", "Plan", "Precision", "design_survey", "free_parameter",
           "group_sizes", "parse_free_parameters", "plan_design", "precision",
           "smallest_sample_size", "solve_for_budget", "trade_off_curve",
           "trade_off_curves"]

# Sample sizes beyond this are not surveys; the search stops there.
_MAX_N = 10**12


def standard_error(mechanism: RRDesign, *, n: int, pi: float) -> float:
    """sqrt(Var(pi_hat | M > 0)), the exact conditional standard error of a one-group yes/no
    design (:func:`surveykit.estimation.binomial.conditional_variance`)."""
    return math.sqrt(binomial.conditional_variance(mechanism, pi=pi, n=n))


def smallest_sample_size(mechanism: RRDesign, *, target_se: float, pi: float) -> int:
    """The smallest n whose exact conditional standard error is at most ``target_se``.

    The standard error falls as n grows (E[1/M | M > 0] decreases in n), so a
    doubling search followed by bisection finds the boundary; the answer is
    then checked on both sides.

    >>> from surveykit.designs.warner import GeneralizedWarner
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
) -> tuple[Plan, Plan]:
    """The generalized Warner design for a budget, and Warner's design at the same budget:
    two :func:`plan_design` plans, side by side (surveykit 0.1's ``surveykit design``).

    Give at most one of ``n`` (report the standard error there) and
    ``target_se`` (find the smallest n that reaches it; each design gets its own n).
    Warner's design is the generalized Warner's with no "don't know"; its Shafer and
    Walley losses are equal, ln(p / (1 - p)).

    >>> ours, warner = design_survey(epsilon=math.log(3), dont_know=0.2, n=1000)
    >>> round(ours.design.p, 4), round(ours.design.q, 4)
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
    ours = plan_design("generalized_warner", epsilon=epsilon, semantics=semantics,
                       dont_know=dont_know, pi=pi, n=n, target_se=target_se)
    # Corollary 3.12 at d = 0 is Warner's design for either loss; the table shows it under
    # the budget's semantics
    warner = plan_design("generalized_warner", epsilon=epsilon, dont_know=0.0, pi=pi, n=n,
                         target_se=target_se)
    return ours, dataclasses.replace(warner, semantics=semantics)


# -- any design --------------------------------------------------------------------------------

#: How finely the free parameter's range is scanned for the budget's boundary (then bisected).
_SCAN_POINTS = 400
_BISECTIONS = 200


@dataclass(frozen=True)
class FreeParameter:
    """The entries of a design's parameters that planning chooses; all take one value x.

    ``parameters`` are the design's parameters with ``None`` where x goes
    (``{"p": [0.1667, None]}``: p[2] is free; entries count from 1); x ranges over
    (low, high).
    """

    model: str
    parameters: Mapping[str, object]
    low: float
    high: float

    @property
    def label(self) -> str:
        """``p``, ``p[2]``, ``p[1] = p[2]``: the free entries, numbered from 1 as users
        number groups."""
        names: list[str] = []
        for key, value in self.parameters.items():
            if value is None:
                names.append(key)
            elif isinstance(value, list | tuple):
                names += [f"{key}[{i}]" for i, v in enumerate(value, start=1) if v is None]
        return " = ".join(names)

    def build(self, value: float) -> RRDesign:
        """The design with x = ``value`` in every free entry."""
        def fill(v: object) -> object:
            if v is None:
                return value
            if isinstance(v, list | tuple):
                return [value if item is None else item for item in v]
            return v

        return make_design(self.model, **{k: fill(v) for k, v in self.parameters.items()})


@dataclass(frozen=True)
class BuiltFamily(FreeParameter):
    """A family whose designs the design class builds from x itself
    (:attr:`~surveykit.designs.base.BudgetFamily.build`: the generalized Warner designs with
    p + q = 1 - dont_know, Corollary 3.12's family)."""

    family_label: str = ""
    builder: Callable[[float], RRDesign] | None = field(default=None, compare=False,
                                                        repr=False)
    solver: Callable[[float, str], tuple[RRDesign, float]] | None = field(
        default=None, compare=False, repr=False)

    @property
    def label(self) -> str:
        return self.family_label or super().label

    def build(self, value: float) -> RRDesign:
        assert self.builder is not None
        return self.builder(value)


def parse_free_parameters(name: str, texts: Mapping[str, str]) -> dict[str, object]:
    """:func:`~surveykit.designs.registry.parse_parameters`, with ``?`` marking the entries
    to solve for (they become ``None``).

    >>> parse_free_parameters("sld", {"p": "0.1667,?"})
    {'p': [0.1667, None]}
    """
    plain = {key: text for key, text in texts.items() if "?" not in text}
    out = parse_parameters(name, plain)
    for key, text in texts.items():
        if key in plain:
            continue
        items = [item.strip() for item in text.split(",")]
        numbers = parse_parameters(name, {key: ",".join("0" if i == "?" else i for i in items)})
        value = numbers[key]
        if len(items) == 1:
            out[key] = None
        else:
            out[key] = [None if item == "?" else v for item, v in zip(items, value, strict=True)]
    return {key: out[key] for key in texts}


def free_parameter(name: str, parameters: Mapping[str, object] | None = None, *,
                   dont_know: float | None = None) -> FreeParameter:
    """What planning chooses for a budget: the entries marked ``None``, else the design's
    natural free parameter.

    Natural free parameters: Warner's p (above 1/2), the crosswise and
    triangular innocuous share p (crosswise: below 1/2), Mangat's p, the forced
    response's forced-answer probabilities (all equal: symmetric forced
    answers), the k-RR's p (above 1/k), and the generalized Warner's p with
    p + q = 1 - dont_know. Other designs (two groups, Kuk's decks, the known
    innocuous share of the unrelated question) need the free entry marked.

    >>> free_parameter("sld", {"p": [0.1667, None]}).label
    'p[2]'
    >>> free_parameter("fr").label
    'p[1] = p[2]'
    """
    cls = design_class(name)
    family = cls.budget_family(dict(parameters or {}), dont_know)
    if family.build is not None:
        return BuiltFamily(cls.model, family.parameters, family.low, family.high,
                           family_label=family.label or "", builder=family.build,
                           solver=family.solve)
    return FreeParameter(cls.model, family.parameters, family.low, family.high)


def _loss(design: RRDesign, semantics: str, nuisance: Mapping[str, float] | None) -> float:
    """The loss the budget limits: at the given nuisance values, else the worst case."""
    values = {p.name: nuisance[p.name] for p in design.nuisance
              if nuisance and p.name in nuisance}
    if design.nuisance and len(values) == len(design.nuisance):
        return design.privacy_loss(semantics, values)
    return design.privacy_loss(semantics)


def solve_for_budget(free: FreeParameter, *, epsilon: float, semantics: str = "shafer",
                     nuisance: Mapping[str, float] | None = None,
                     rank: Callable[[RRDesign], float] | None = None) -> tuple[RRDesign, float]:
    """The design of the family ``free`` that spends the budget ``epsilon`` exactly.

    The loss (the design's :meth:`~surveykit.designs.base.Design.privacy_loss`
    in ``semantics``, at the ``nuisance`` values when every nuisance parameter
    has one, else the worst case over their ranges) is scanned over the free
    parameter's range and each crossing of ``epsilon`` is bisected to the last
    floating-point value that stays within the budget: the result's loss is at
    most ``epsilon`` and as close to it as floating point allows. Where several
    values spend the budget (a free entry with room on both sides), ``rank``
    (default: the first) picks the one with the smallest rank, e.g. the
    standard error.

    >>> design, p = solve_for_budget(free_parameter("warner"), epsilon=math.log(3))
    >>> round(p, 12), round(design.epsilon_shafer, 12)   # p / (1 - p) = 3
    (0.75, 1.098612288668)
    """
    if semantics not in ("shafer", "walley"):
        raise ParameterError(f"semantics ({semantics!r}) must be 'shafer' or 'walley'")
    solver = getattr(free, "solver", None)
    if solver is not None:  # the family's closed form (the generalized Warner's Cor. 3.12)
        return solver(epsilon, semantics)
    epsilon = check_epsilon(epsilon)
    errors: list[ParameterError] = []

    def loss_at(x: float) -> float | None:
        try:
            return _loss(free.build(x), semantics, nuisance)
        except ParameterError as error:  # outside the design's valid range (e.g. p = 1/2)
            errors.append(error)
            return None

    scan = [(float(x), loss_at(float(x)))
            for x in np.linspace(free.low, free.high, _SCAN_POINTS + 1)]
    points = [(x, loss) for x, loss in scan if loss is not None]
    # where the valid range ends between two grid points, walk up to its edge: the budget's
    # boundary may lie there (a Walley budget near p = q with a large don't-know share)
    for (x0, l0), (x1, l1) in zip(scan, scan[1:], strict=False):
        if (l0 is None) != (l1 is None):
            valid, invalid = (x0, x1) if l1 is None else (x1, x0)
            for _ in range(_BISECTIONS):
                middle = (valid + invalid) / 2
                if middle in (valid, invalid):
                    break
                if loss_at(middle) is None:
                    invalid = middle
                else:
                    valid = middle
            points.append((valid, loss_at(valid)))
    points.sort()
    if not points:
        raise ParameterError(f"no value of {free.label} gives a valid {free.model!r} design"
                             + (f": {errors[-1]}" if errors else ""))
    candidates: list[float] = []
    for (x0, l0), (x1, l1) in zip(points, points[1:], strict=False):
        if (l0 <= epsilon) != (l1 <= epsilon):
            candidates.append(_bisect(free, semantics, nuisance, epsilon,
                                      inside=x0 if l0 <= epsilon else x1,
                                      outside=x1 if l0 <= epsilon else x0))
    if not candidates:
        finite = [(loss, x) for x, loss in points if math.isfinite(loss)]
        if not finite:
            middle = points[len(points) // 2][0]
            raise ParameterError(_unbounded_message(free, middle, semantics, nuisance))
        best = min(finite)
        if best[0] > epsilon:
            raise ParameterError(
                f"no value of {free.label} meets a {semantics.capitalize()} budget of "
                f"{epsilon:g} for design {free.model!r}: the smallest loss is {best[0]:.4g} "
                f"(at {free.label} = {best[1]:.4g}); raise the budget or change the other "
                "parameters")
        raise ParameterError(
            f"every value of {free.label} meets a {semantics.capitalize()} budget of "
            f"{epsilon:g} for design {free.model!r}; the budget does not choose it")
    designs = [(free.build(x), x) for x in candidates]
    if rank is not None and len(designs) > 1:
        return min(designs, key=lambda pair: rank(pair[0]))
    return designs[0]


def _bisect(free: FreeParameter, semantics: str, nuisance, epsilon: float, *, inside: float,
            outside: float) -> float:
    """The value next to the budget's boundary on its inside (loss <= epsilon)."""
    for _ in range(_BISECTIONS):
        middle = (inside + outside) / 2
        if middle in (inside, outside):
            break
        try:
            within = _loss(free.build(middle), semantics, nuisance) <= epsilon
        except ParameterError:
            within = False
        if within:
            inside = middle
        else:
            outside = middle
    return inside


def _unbounded_message(free: FreeParameter, x: float, semantics: str, nuisance) -> str:
    """Why no value has a finite loss: an answer some state never gives."""
    design = free.build(x)
    structure = design.structure
    values = {p.name: nuisance[p.name] for p in design.nuisance if nuisance and p.name in nuisance}
    where = ""
    corners: list[dict[str, float]] = [values]
    if design.nuisance and len(values) < len(design.nuisance):
        ranges = ", ".join(f"{p.name} in [{p.low:g}, {p.high:g}]" for p in design.nuisance)
        where = (f" in the worst case over {ranges} (give --nuisance "
                 f"{design.nuisance[0].name}=VALUE to plan at a value)")
        corners = [{p.name: v for p, v in zip(design.nuisance, corner, strict=True)}
                   for corner in itertools.product(*[(p.low, p.high) for p in design.nuisance])]
    columns = [structure.states.index(state) for state in structure.privacy_states]
    for corner in corners:
        matrix = design.matrix(corner or None)
        for g in range(matrix.shape[0]):
            for r, answer in enumerate(design.answer_labels):
                row = matrix[g, r, columns]
                if np.any(row <= 0) and np.any(row > 0):
                    never = structure.privacy_states[int(np.argmin(row))]
                    when = "" if corner == values else " (at " + ", ".join(
                        f"{k} = {v:g}" for k, v in corner.items()) + ")"
                    return (f"design {free.model!r} loses unbounded privacy "
                            f"({semantics.capitalize()}) for every {free.label}{where}: "
                            f"respondents in state {never!r} never answer {answer!r}{when}, "
                            "so that answer rules the state out; no value meets a finite "
                            "budget")
    return (f"design {free.model!r} loses unbounded privacy ({semantics.capitalize()}) for "
            f"every {free.label}{where}; no value meets a finite budget")


# -- precision --------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Precision:
    """The standard errors of a design's estimates at n respondents.

    ``se`` is the standard error of pi (yes/no designs) or the largest over the
    categories; ``se_by_category`` lists each; ``method`` is ``"exact"`` (the
    exact conditional variance of one-group yes/no designs) or ``"fisher"``
    (the inverse expected Fisher information).
    """

    n: int
    group_sizes: tuple[int, ...]
    se: float
    se_by_category: Mapping[str, float]
    method: Literal["exact", "fisher"]


def group_sizes(n: int, allocation: Sequence[float]) -> tuple[int, ...]:
    """``n`` respondents split by ``allocation`` (shares), rounded by largest remainder.

    >>> group_sizes(101, [0.5, 0.5])
    (51, 50)
    """
    shares = np.asarray(allocation, dtype=float)
    exact = n * shares
    sizes = np.floor(exact).astype(int)
    for index in np.argsort(-(exact - sizes), kind="stable")[: n - int(sizes.sum())]:
        sizes[index] += 1
    return tuple(int(v) for v in sizes)


def _allocation(design: RRDesign, allocation: Sequence[float] | None) -> tuple[float, ...]:
    groups = len(design.group_names)
    if allocation is None:
        return (1.0 / groups,) * groups
    values = tuple(float(v) for v in allocation)
    if len(values) != groups:
        raise ParameterError(
            f"allocation ({list(values)!r}) must give one share per group of design "
            f"{design.model!r}, which has {groups} group{'s' if groups != 1 else ''}")
    if any(not math.isfinite(v) or v <= 0 for v in values) or not math.isclose(
            sum(values), 1.0, abs_tol=1e-9):
        raise ParameterError(
            f"allocation ({list(values)!r}) must be positive shares of the respondents that "
            "add up to 1, e.g. 0.5,0.5")
    return values


def state_shares(design: RRDesign, *, pi: float | Sequence[float] | None,
                 nuisance: Mapping[str, float] | None = None) -> np.ndarray:
    """The shares of the design's true states for a prevalence ``pi`` (yes/no designs,
    default 1/2; a list of category shares for k categories, default equal) and
    behavioural shares such as the CDM's gamma (named in ``nuisance``, default 0)."""
    s = design.structure
    shares = np.zeros(len(s.states))
    named = {name: state for state, name in s.state_parameters.items()}
    behavioural = 0.0
    for name, state in named.items():
        value = float((nuisance or {}).get(name, 0.0))
        if not 0 <= value <= 1:
            raise ParameterError(f"{name} ({value:g}) must be a share between 0 and 1")
        shares[s.states.index(state)] = value
        behavioural += value
    categories = design.category_labels
    if design.is_binary:
        pi = 0.5 if pi is None else pi
        if isinstance(pi, Sequence) or not isinstance(pi, int | float | np.floating):
            raise ParameterError(f"pi ({pi!r}) must be one prevalence for a yes/no design")
        pi = float(pi)
        if not 0 <= pi <= 1 - behavioural:
            raise ParameterError(f"pi ({pi:g}) must be a prevalence between 0 and "
                                 f"{1 - behavioural:g}")
        shares[s.states.index(YES)] = pi
        shares[s.states.index("no")] = 1 - behavioural - pi
        return shares
    values = np.full(len(categories), 1.0 / len(categories)) if pi is None \
        else np.atleast_1d(np.asarray(pi, dtype=float))
    if values.shape != (len(categories),) or np.any(values < 0) or not math.isclose(
            float(values.sum()), 1.0, abs_tol=1e-9):
        raise ParameterError(
            f"pi ({np.asarray(pi).tolist()!r}) must be one share per category "
            f"({', '.join(categories)}) adding up to 1")
    for category, value in zip(categories, values, strict=True):
        shares[s.states.index(category)] = value
    return shares


def precision(design: RRDesign, *, n: int, pi: float | Sequence[float] | None = None,
              nuisance: Mapping[str, float] | None = None,
              allocation: Sequence[float] | None = None) -> Precision:
    """Standard errors of the estimates with ``n`` respondents (split over the groups by
    ``allocation``, default equal).

    One-group yes/no designs: sqrt(Var(pi_hat | M > 0)), the exact conditional
    variance (:mod:`surveykit.estimation.binomial`). Every other design: the
    inverse of the expected Fisher information
    I = sum_g n_g sum_r (d mu_gr)(d mu_gr)^T / mu_gr over the shares and the
    nuisance parameters (Heck and Moshagen 2018, Sec. 2; it is the observed
    information of :func:`surveykit.estimation.likelihood.covariance` at the
    expected counts n_g mu_gr, where the second-derivative terms vanish because
    every column of the design's matrix sums to one).

    >>> from surveykit.designs import StochasticLieDetector
    >>> sld = StochasticLieDetector(p=[0.1667, 0.8333])
    >>> round(precision(sld, n=1000, pi=0.3, nuisance={"t": 0.9}).se, 4)
    0.0404
    """
    n = check_sample_size(n)
    shares_per_group = _allocation(design, allocation)
    sizes = group_sizes(n, shares_per_group)
    if binomial.binomial_map(design) is not None:
        pi = 0.5 if pi is None else pi
        if isinstance(pi, Sequence):
            raise ParameterError(f"pi ({pi!r}) must be one prevalence for a yes/no design")
        se = standard_error(design, n=n, pi=float(pi))
        return Precision(n=n, group_sizes=sizes, se=se, se_by_category={YES: se},
                         method="exact")
    ses = _fisher_se(design, sizes=sizes, pi=pi, nuisance=nuisance)
    return Precision(n=n, group_sizes=sizes, se=max(ses.values()), se_by_category=ses,
                     method="fisher")


def _nuisance_vector(design: RRDesign, nuisance: Mapping[str, float] | None) -> np.ndarray:
    known = {p.name for p in design.nuisance} | set(design.structure.state_parameters.values())
    unknown = sorted(set(nuisance or {}) - known)
    if unknown:
        names = ", ".join(sorted(known)) if known else "none"
        raise ParameterError(f"design {design.model!r} has no parameter {unknown[0]!r} to "
                             f"plan at; its unknown parameters are {names}")
    values = [float((nuisance or {}).get(p.name, (p.low + p.high) / 2)) for p in design.nuisance]
    for value, p in zip(values, design.nuisance, strict=True):
        if not p.low <= value <= p.high:
            raise ParameterError(f"{p.name} ({value:g}) must be between {p.low:g} and "
                                 f"{p.high:g}")
    return np.array(values, dtype=float)


def nuisance_values(design: RRDesign, nuisance: Mapping[str, float] | None = None
                    ) -> dict[str, float]:
    """The values precision is evaluated at: given ones, else the middle of each nuisance
    range and 0 for behavioural shares (the CDM's gamma)."""
    eta = _nuisance_vector(design, nuisance)
    out = {p.name: float(v) for p, v in zip(design.nuisance, eta, strict=True)}
    for name in design.structure.state_parameters.values():
        out[name] = float((nuisance or {}).get(name, 0.0))
    return out


def _fisher_se(design: RRDesign, *, sizes: Sequence[int], pi, nuisance) -> dict[str, float]:
    s = design.structure
    eta = _nuisance_vector(design, nuisance)
    shares = state_shares(design, pi=pi, nuisance=nuisance)
    matrix = s.base + np.tensordot(eta, s.slopes, axes=1) if eta.size else s.base
    expected = np.asarray(sizes, dtype=float)[:, None] * (matrix @ shares)
    low = np.array([p.low for p in s.nuisance])
    high = np.array([p.high for p in s.nuisance])
    problem = LikelihoodProblem(s.base, s.slopes, expected, low, high)
    cov, identified = covariance(problem, np.concatenate([shares, eta]))
    out: dict[str, float] = {}
    for category in design.category_labels:
        index = s.states.index(category)
        if not identified[index] or not np.isfinite(cov[index, index]):
            raise ParameterError(
                f"the answers carry no information about the share of {category!r} at these "
                "values (e.g. a nuisance parameter cannot be estimated when pi = 0, or a group "
                "has no respondents); change pi, the nuisance values or n")
        out[category] = math.sqrt(max(0.0, float(cov[index, index])))
    if design.is_binary:
        return {YES: out[YES]}
    return out


def _smallest_n(design: RRDesign, *, target_se: float, pi, nuisance, allocation) -> Precision:
    """The smallest total n whose standard error is at most ``target_se``."""
    if not (isinstance(target_se, int | float) and math.isfinite(target_se) and target_se > 0):
        raise ParameterError(f"target_se ({target_se!r}) must be a positive standard error")
    if binomial.binomial_map(design) is not None:
        n = smallest_sample_size(design, target_se=target_se, pi=0.5 if pi is None else pi)
        return precision(design, n=n, pi=pi)
    groups = len(design.group_names)

    def se_at(n: int) -> float:
        if n < groups:
            return math.inf
        try:
            return precision(design, n=n, pi=pi, nuisance=nuisance, allocation=allocation).se
        except ParameterError:
            if n <= 10 * groups:  # too few respondents for a group
                return math.inf
            raise

    # the information grows in proportion to n: start from n = se(1 respondent)^2 / target^2
    reference = 10**6
    per_respondent = se_at(reference) * math.sqrt(reference)
    n = max(groups, math.ceil((per_respondent / target_se) ** 2))
    if n > _MAX_N:
        raise ParameterError(
            f"target_se ({target_se}) needs more than {_MAX_N:.0e} respondents; raise the "
            "target or the privacy budget")
    while se_at(n) > target_se:  # rounding of group sizes can cost a respondent or two
        n += 1
    while n > groups and se_at(n - 1) <= target_se:
        n -= 1
    return precision(design, n=n, pi=pi, nuisance=nuisance, allocation=allocation)


# -- a plan --------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Plan:
    """A design chosen for a budget (or given), its privacy losses and its precision."""

    design: RRDesign
    free: FreeParameter | None
    value: float | None
    semantics: str
    budget: float | None
    pi: float | tuple[float, ...]
    nuisance: Mapping[str, float]
    allocation: tuple[float, ...]
    precision: Precision | None
    target_se: float | None
    losses: Mapping[str, float] = field(default_factory=dict)
    #: The nuisance values the budget was spent at; None: the worst case over their ranges.
    budget_at: Mapping[str, float] | None = None

    @property
    def n(self) -> int | None:
        """Respondents in all groups (None without --n or a target)."""
        return None if self.precision is None else self.precision.n

    @property
    def se(self) -> float | None:
        """The standard error at n (None without --n or a target)."""
        return None if self.precision is None else self.precision.se

    @property
    def epsilon_shafer(self) -> float:
        """The design's Shafer privacy loss (Def. 3.1), worst case over nuisance ranges."""
        return self.losses["shafer"]

    @property
    def epsilon_walley(self) -> float:
        """The design's Walley privacy loss (Def. 3.13), worst case over nuisance ranges."""
        return self.losses["walley"]

    @property
    def mechanism(self) -> RRDesign:
        """Deprecated: the plan's :attr:`design` (surveykit 0.1's name for it)."""
        mechanism_deprecated("Plan.mechanism")
        return self.design

    def to_dict(self) -> dict:
        """Plain numbers for JSON; an infinite loss is ``"inf"`` with ``..._finite`` false
        (:func:`surveykit.vocabulary.loss_fields`)."""
        data: dict[str, object] = {
            "design": self.design.spec(),
            "solved": None if self.free is None else {"parameter": self.free.label,
                                                      "value": self.value},
            "semantics": self.semantics,
            "budget": self.budget,
            "budget_at": None if self.budget_at is None else dict(self.budget_at),
            **loss_fields("epsilon_shafer", self.losses["shafer"]),
            **loss_fields("epsilon_walley", self.losses["walley"]),
        }
        if self.design.nuisance:
            data.update(loss_fields("epsilon_shafer_at_nuisance", self.losses["shafer_at"]))
            data.update(loss_fields("epsilon_walley_at_nuisance", self.losses["walley_at"]))
        data.update({
            "pi": list(self.pi) if isinstance(self.pi, tuple) else self.pi,
            "nuisance": dict(self.nuisance),
            "allocation": list(self.allocation),
            "n": self.n,
            "group_sizes": None if self.precision is None else list(self.precision.group_sizes),
            "se": self.se,
            "se_by_category": None if self.precision is None
            else dict(self.precision.se_by_category),
            "variance": None if self.precision is None else self.precision.method,
            "target_se": self.target_se,
        })
        return data


def plan_design(name: str, parameters: Mapping[str, object] | None = None, *,
                epsilon: float | None = None, semantics: str = "shafer",
                dont_know: float | None = None, pi: float | Sequence[float] | None = None,
                nuisance: Mapping[str, float] | None = None,
                allocation: Sequence[float] | None = None, n: int | None = None,
                target_se: float | None = None) -> Plan:
    """Plan a survey with any design: solve the free parameter for ``epsilon`` (when given),
    then the standard error at ``n`` or the smallest n for ``target_se``.

    ``parameters`` mark the entries to solve for with ``None``
    (:func:`free_parameter` says what is free by default); ``nuisance`` holds the
    values of nuisance parameters and behavioural shares the precision (and, when
    every nuisance parameter has one, the budget) is evaluated at.

    >>> plan = plan_design("sld", {"p": [0.1667, None]}, epsilon=2.0, nuisance={"t": 0.9},
    ...                    target_se=0.05, pi=0.3)
    >>> plan.free.label, round(plan.value, 4), plan.n, plan.precision.group_sizes
    ('p[2]', 0.7389, 912, (456, 456))
    """
    if n is not None and target_se is not None:
        raise ParameterError("give either n or target_se, not both")
    if semantics not in ("shafer", "walley"):
        raise ParameterError(f"semantics ({semantics!r}) must be 'shafer' or 'walley'")
    parameters = dict(parameters or {})
    free: FreeParameter | None = None
    value: float | None = None
    if epsilon is not None:
        free = free_parameter(name, parameters, dont_know=dont_know)

        def rank(candidate: RRDesign) -> float:
            try:
                return precision(candidate, n=1000, pi=pi, nuisance=nuisance,
                                 allocation=allocation).se
            except ParameterError:
                return math.inf

        design, value = solve_for_budget(free, epsilon=epsilon, semantics=semantics,
                                         nuisance=nuisance, rank=rank)
    else:
        if has_free_entries(parameters):
            raise ParameterError("entries marked ? are solved for a budget: give --epsilon")
        design = make_design(name, **with_dont_know_parameter(parameters, dont_know))
    values = nuisance_values(design, nuisance)
    at = {p.name: values[p.name] for p in design.nuisance}
    losses = {"shafer": design.epsilon_shafer, "walley": design.epsilon_walley}
    if design.nuisance:
        losses["shafer_at"] = design.privacy_loss("shafer", at)
        losses["walley_at"] = design.privacy_loss("walley", at)
    shares = _allocation(design, allocation)
    state_shares(design, pi=pi, nuisance=values)  # checks pi and the behavioural shares
    result = None
    if n is not None:
        result = precision(design, n=n, pi=pi, nuisance=values, allocation=shares)
    elif target_se is not None:
        result = _smallest_n(design, target_se=target_se, pi=pi, nuisance=values,
                             allocation=shares)
    if pi is None:
        pi = 0.5 if design.is_binary else (1 / len(design.category_labels),) * len(
            design.category_labels)
    spent_at = {p.name: float(nuisance[p.name]) for p in design.nuisance
                if nuisance and p.name in nuisance}
    return Plan(design=design, free=free, value=value, semantics=semantics,
                budget=None if epsilon is None else float(epsilon),
                budget_at=spent_at if design.nuisance and epsilon is not None
                and len(spent_at) == len(design.nuisance) else None,
                pi=tuple(float(v) for v in pi) if isinstance(pi, Sequence) else float(pi),
                nuisance=values, allocation=shares, precision=result, target_se=target_se,
                losses=losses)


def trade_off_curve(plan: Plan, *, n: int, points: int = 80
                    ) -> list[tuple[np.ndarray, np.ndarray]]:
    """(privacy loss, standard error at n) along the plan's free parameter, one pair of
    arrays per branch (a free entry with room on both sides of the uninformative value
    has two); the plan's own design lies on one of them."""
    return trade_off_curves(plan, n=n, semantics=(plan.semantics,), points=points)[
        plan.semantics]


def trade_off_curves(plan: Plan, *, n: int, semantics: Sequence[str],
                     points: int = 80) -> dict[str, list[tuple[np.ndarray, np.ndarray]]]:
    """:func:`trade_off_curve` in each of ``semantics`` (the plan's own is ignored): the
    designs along the free parameter and their standard errors do not depend on the
    semantics, so they are built and computed once for all of them (a report draws Shafer
    and Walley curves for every question, and building the designs is most of the cost)."""
    if plan.free is None:
        raise ParameterError("the trade-off curve needs a free parameter: give --epsilon")
    free = plan.free
    rows: dict[str, list[tuple[float, float, float]]] = {name: [] for name in semantics}
    for x in np.linspace(free.low, free.high, points + 2)[1:-1]:
        try:
            design = free.build(float(x))
        except ParameterError:
            continue
        losses = {}
        for name in semantics:
            try:
                losses[name] = _loss(design, name, plan.nuisance)
            except ParameterError:
                continue
        if not losses:
            continue
        try:
            se = precision(design, n=n, pi=plan.pi, nuisance=plan.nuisance,
                           allocation=plan.allocation).se
        except ParameterError:
            continue
        for name, loss in losses.items():
            if math.isfinite(loss) and math.isfinite(se):
                rows[name].append((float(x), loss, se))
    return {name: _branches(found) for name, found in rows.items()}


def _branches(rows: list[tuple[float, float, float]]) -> list[tuple[np.ndarray, np.ndarray]]:
    """(x, loss, se) rows in parameter order split where the standard error peaks."""
    if not rows:
        return []
    # the branches meet at the least informative value (Warner's p = 1/2, the SLD's
    # p[1] = p[0]), where the standard error peaks
    turn = int(np.argmax([r[2] for r in rows]))
    branches = [rows[: turn + 1], rows[turn:]]
    return [(np.array([r[1] for r in b]), np.array([r[2] for r in b]))
            for b in branches if len(b) > 1]


def __getattr__(name: str) -> object:
    # planning.Design was surveykit 0.1's plan of the generalized Warner design; it is a Plan
    # now (a Design is what surveykit.designs builds)
    if name == "Design":
        warnings.warn("surveykit.planning.Design is deprecated; use surveykit.planning.Plan",
                      DeprecationWarning, stacklevel=2)
        return Plan
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# -- numeric questions ---------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class NumericPlan:
    """A design for numeric answers before fielding: its privacy loss for the true values'
    range and the standard error of the estimated mean at ``n`` respondents (or the
    smallest ``n`` for ``target_se``), for true values with an assumed ``mean`` and ``sd``.

    The mean of the answered respondents' transforms r has variance Var(r) / (n (1 - d)):
    n (1 - d) respondents answer with a number when the design tells a share d to answer
    "don't know" (:meth:`QuantitativeDesign.answer_variance` gives Var(r)).
    """

    design: QuantitativeDesign
    privacy: QuantitativePrivacy | None
    mean: float | None
    sd: float | None
    n: int | None
    se: float | None
    target_se: float | None

    def to_dict(self) -> dict[str, object]:
        privacy = self.privacy.to_dict() if self.privacy is not None else None
        return {"design": self.design.spec(),
                **loss_fields("epsilon_shafer", None if self.privacy is None
                              else self.privacy.shafer),
                **loss_fields("epsilon_walley", None if self.privacy is None
                              else self.privacy.walley),
                "privacy": privacy, "mean": self.mean, "sd": self.sd, "n": self.n,
                "se": self.se, "target_se": self.target_se}


def plan_numeric(design: QuantitativeDesign, *, low: float | None = None,
                 high: float | None = None, decimals: int | None = None,
                 mean: float | None = None, sd: float | None = None, n: int | None = None,
                 target_se: float | None = None) -> NumericPlan:
    """Plan a numeric question: the privacy loss for true values in [``low``, ``high``]
    (with ``decimals``), and the precision at ``n`` or for ``target_se`` given the true
    values' assumed ``mean`` and ``sd``.

    >>> from surveykit.designs.quantitative import Eriksson
    >>> plan = plan_numeric(Eriksson(p=0.5, scrambler=[0, 1, 2, 3]), low=0, high=3,
    ...                     decimals=0, mean=1.5, sd=1, n=400)
    >>> round(plan.privacy.shafer, 4), round(plan.se, 4)
    (1.6094, 0.1061)
    """
    privacy = None
    if low is not None or high is not None:
        if low is None or high is None:
            raise ParameterError("give the range of true values as low and high")
        privacy = design.privacy_loss(low, high, decimals)
    if (n is not None or target_se is not None) and (mean is None or sd is None):
        raise ParameterError("the standard error depends on the true values: give their "
                             "assumed mean and sd (e.g. mean = 5000, sd = 4000)")
    if n is not None and target_se is not None:
        raise ParameterError("give n (the standard error it gives) or target_se (the n it "
                             "needs), not both")
    if sd is not None and (not math.isfinite(sd) or sd < 0):
        raise ParameterError(f"sd ({sd!r}) must be a finite number, 0 or more")
    se = None
    if n is not None or target_se is not None:
        if not design.has_transform:
            raise ParameterError(
                f"design {design.model!r} estimates its mean from two groups with an unknown "
                "unrelated mean: plan it by simulation (design.simulate) instead")
        per_answer = design.answer_variance(mean=float(mean), sd=float(sd))
        answering = 1 - float(design.designed_dont_know)
        if target_se is not None:
            if not target_se > 0:
                raise ParameterError(f"target_se ({target_se!r}) must be positive")
            n = math.ceil(per_answer / (answering * target_se ** 2))
        if n < 2:
            raise ParameterError(f"n ({n}) must be at least 2")
        se = math.sqrt(per_answer / (n * answering))
    return NumericPlan(design=design, privacy=privacy, mean=mean, sd=sd, n=n, se=se,
                       target_se=target_se)
