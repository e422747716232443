"""Hypothesis-testing trade-offs of a concrete evidential mechanism (Theorems 3.5, 3.18).

An attacker tests H0: the input is x against H1: the input is x', from one
output of Q (or two, for the product Q x Q of Corollaries 3.6 and 3.19), with
a rejection rule phi: Y -> [0, 1]. Under a mass function m_x the output's
distribution is only known to lie in the credal set P_x = {pr >= bel_x}, so
every error has an upper and a lower value. For a mass function these are
Choquet integrals with a closed form (Shafer 1976; Walley 1990, Sec. 5.13):

    sup_{pr in P_x} E_pr(phi) = sum_B m_x(B) max_{y in B} phi(y)
    inf_{pr in P_x} E_pr(phi) = sum_B m_x(B) min_{y in B} phi(y)

For a rejection region R (phi = 1 on R) they are pl_x(R) and bel_x(R).

The errors (paper, Section 3, before Theorem 3.5, and Definition 3.17; the
definition of alpha^pe prints P_{bel_x'}, which must be P_{bel_x}: a type I
error is made under H0):

* pessimistic (the paper's SLDP errors, "the same as those in SLDP"):
  alpha_pe = sup_{P_x} E(phi) = pl_x(R),   beta_pe = sup_{P_x'} E(1 - phi) = 1 - bel_x'(R);
* optimistic:
  alpha_op = inf_{P_x} E(phi) = bel_x(R),  beta_op = inf_{P_x'} E(1 - phi) = 1 - pl_x'(R).

:func:`check_tradeoff_bounds` enumerates rejection rules (all regions, and a
grid of randomized rules) and checks each printed bound, and the readings of
it that are true, rule by rule. docs/reproduction.md reports what fails.

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from surveykit.errors import ParameterError
from surveykit.privacy.bounds import (
    tradeoff_f2_op,
    tradeoff_f2_pe,
    tradeoff_f_op,
    tradeoff_f_pe,
    tradeoff_U,
    tradeoff_u,
    tradeoff_U2,
    tradeoff_u2,
)
from surveykit.privacy.evidential import EvidentialMechanism, compose
from surveykit.vocabulary import Semantics, check_semantics

__all__ = [
    "BoundCheck",
    "evaluate_all_rules",
    "RuleErrors",
    "check_tradeoff_bounds",
    "optimistic_tradeoff_as_defined",
    "rejection_rules",
    "evaluate_rules",
    "tradeoff_U2_corrected",
]

# Bounds are compared with this slack: the errors are sums of a few products.
_TOLERANCE = 1e-12
# A rule grid with more than this many rules is refused (levels^|Y| grows fast).
_MAX_RULES = 200_000


def tradeoff_U2_corrected(alpha, epsilon):  # noqa: N802 - the paper's name
    """Two-fold upper bound with the middle term the symmetry of the region demands.

    U2(alpha) = min{e^2eps (1 - alpha), 1 - alpha e^-2eps, 2 e^eps / (e^eps + 1) - alpha}

    The complement 1 - phi of a rule turns the error pair (alpha, beta) into
    (1 - alpha, 1 - beta), so the upper boundary of an achievable region is
    1 - u2(1 - alpha); that gives the middle term above. Corollaries 3.6 and
    3.19 print (3 - e^-2eps)/(e^eps + 1) - alpha instead, which is below 1 at
    alpha = 0 for eps > 0.48 and so excludes the rule that never rejects
    (alpha = 0, beta = 1). For Warner's mechanism (p = e^eps/(e^eps + 1)) the
    corrected bound is attained: its kinks are the two-fold tests.

    >>> round(float(tradeoff_U2_corrected(0.0, math.log(3))), 12)
    1.0
    """
    a = np.asarray(alpha, dtype=float)
    e = float(epsilon)
    return np.minimum.reduce(
        [np.exp(2 * e) * (1 - a), 1 - a * np.exp(-2 * e), 2 * np.exp(e) / (np.exp(e) + 1) - a]
    )


def rejection_rules(outputs: int, *, levels: int = 2) -> np.ndarray:
    """Every rule phi: Y -> {0, 1/(levels-1), ..., 1}, one row per rule.

    ``levels=2`` gives the 2^|Y| deterministic rejection regions (phi = 1 on R).

    >>> rejection_rules(2).tolist()
    [[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]
    """
    if isinstance(outputs, bool) or not isinstance(outputs, int) or outputs < 1:
        raise ParameterError(f"outputs ({outputs!r}) must be a positive whole number")
    if isinstance(levels, bool) or not isinstance(levels, int) or levels < 2:
        raise ParameterError(f"levels ({levels!r}) must be a whole number, at least 2")
    if levels**outputs > _MAX_RULES:
        raise ParameterError(
            f"levels^outputs = {levels}^{outputs} rules is more than {_MAX_RULES}; "
            "use fewer levels"
        )
    values = np.linspace(0.0, 1.0, levels)
    return np.array(list(itertools.product(values, repeat=outputs)), dtype=float)


@dataclass(frozen=True, kw_only=True)
class RuleErrors:
    """Upper and lower type I / II errors of many rules, for H0: x against H1: x'.

    ``rules[k, j]`` is the rejection probability of rule k on output j (in the
    order of ``mechanism.outputs``).
    """

    mechanism: EvidentialMechanism = field(repr=False)
    null: object
    alternative: object
    rules: np.ndarray = field(repr=False)
    alpha_pessimistic: np.ndarray = field(repr=False)
    beta_pessimistic: np.ndarray = field(repr=False)
    alpha_optimistic: np.ndarray = field(repr=False)
    beta_optimistic: np.ndarray = field(repr=False)

    @property
    def deterministic(self) -> np.ndarray:
        """Mask of the rules that are rejection regions (values 0 and 1 only)."""
        return np.all((self.rules == 0) | (self.rules == 1), axis=1)

    def region(self, k: int) -> list:
        """The outputs on which rule k rejects with positive probability."""
        return [y for y, v in zip(self.mechanism.outputs, self.rules[k], strict=True) if v > 0]


def _choquet(mechanism: EvidentialMechanism, x: object, rules: np.ndarray, kind: str):
    """sum_B m_x(B) max_B phi (kind='upper') or min_B phi (kind='lower'), for every rule."""
    row = mechanism.masses[mechanism.inputs.index(x)]
    index = {y: j for j, y in enumerate(mechanism.outputs)}
    inside = np.zeros((len(mechanism.focal_sets), len(mechanism.outputs)), dtype=bool)
    for b, focal in enumerate(mechanism.focal_sets):
        for y in focal:
            inside[b, index[y]] = True
    carried = row > 0
    inside = inside[carried]
    if kind == "upper":
        extreme = np.where(inside[None], rules[:, None, :], -np.inf).max(axis=2)
    else:
        extreme = np.where(inside[None], rules[:, None, :], np.inf).min(axis=2)
    return extreme @ row[carried]


def evaluate_rules(
    mechanism: EvidentialMechanism, *, null: object, alternative: object, rules: np.ndarray
) -> RuleErrors:
    """The pessimistic and optimistic type I and II errors of each rule.

    alpha_pe = E^*_x(phi), beta_pe = 1 - E_*x'(phi), alpha_op = E_*x(phi),
    beta_op = 1 - E^*_x'(phi), with E^* and E_* the upper and lower expectations
    over the credal sets (module docstring).

    >>> from surveykit.designs.warner import GeneralizedWarner
    >>> q = GeneralizedWarner(p=0.6, q=0.2).to_evidential()
    >>> e = evaluate_rules(q, null="yes", alternative="no", rules=np.array([[1.0, 0.0]]))
    >>> [round(float(v[0]), 12) for v in (e.alpha_pessimistic, e.beta_pessimistic)]  # pl, 1 - bel
    [0.8, 0.8]
    """
    for name, value in (("null", null), ("alternative", alternative)):
        if value not in mechanism.inputs:
            raise ParameterError(f"{name} ({value!r}) is not one of {list(mechanism.inputs)!r}")
    rules = np.asarray(rules, dtype=float)
    if rules.ndim != 2 or rules.shape[1] != len(mechanism.outputs):
        raise ParameterError(
            f"rules has shape {rules.shape}, expected (k, {len(mechanism.outputs)}): "
            "one rejection probability per output"
        )
    if np.any((rules < 0) | (rules > 1)):
        raise ParameterError("rules must be rejection probabilities between 0 and 1")
    return RuleErrors(
        mechanism=mechanism,
        null=null,
        alternative=alternative,
        rules=rules,
        alpha_pessimistic=_choquet(mechanism, null, rules, "upper"),
        beta_pessimistic=1 - _choquet(mechanism, alternative, rules, "lower"),
        alpha_optimistic=_choquet(mechanism, null, rules, "lower"),
        beta_optimistic=1 - _choquet(mechanism, alternative, rules, "upper"),
    )


@dataclass(frozen=True, kw_only=True)
class BoundCheck:
    """One inequality checked on every enumerated rule (and every ordered input pair).

    ``worst_excess`` is the largest amount by which a rule breaks the inequality
    (<= 0 when it holds everywhere); ``examples`` lists up to five breaking
    rules as plain dicts (region, randomized rule, alpha, beta, bound).
    """

    claim: str
    statement: str
    as_printed: bool
    semantics: Semantics
    folds: int
    epsilon: float
    checked: int
    violations: int
    worst_excess: float
    examples: tuple = ()

    @property
    def holds(self) -> bool:
        """True when no enumerated rule breaks the inequality."""
        return self.violations == 0

    def to_dict(self) -> dict:
        return {
            "claim": self.claim,
            "statement": self.statement,
            "as_printed": self.as_printed,
            "semantics": self.semantics,
            "folds": self.folds,
            "epsilon": self.epsilon,
            "checked": self.checked,
            "violations": self.violations,
            "worst_excess": self.worst_excess,
            "holds": self.holds,
            "examples": list(self.examples),
        }


# (claim, statement, as printed?, side: "lower" means beta >= bound, the errors
#  the bound takes and is compared with, and the bound function) for each
# semantics and number of folds.
_Bound = Callable[[np.ndarray, float], np.ndarray]
_CLAIMS: dict[tuple[str, int], list[tuple[str, str, bool, str, str, str, _Bound]]] = {
    ("shafer", 1): [
        ("Theorem 3.5, lower bound u", "beta_pe >= u(alpha_pe)", True, "lower",
         "alpha_pessimistic", "beta_pessimistic", tradeoff_u),
        ("Theorem 3.5, upper bound U", "beta_pe <= U(alpha_pe)", True, "upper",
         "alpha_pessimistic", "beta_pessimistic", tradeoff_U),
        ("Theorem 3.5 read on intervals, lower", "beta_op >= u(alpha_pe)", False, "lower",
         "alpha_pessimistic", "beta_optimistic", tradeoff_u),
        ("Theorem 3.5 read on intervals, upper", "beta_pe <= U(alpha_op)", False, "upper",
         "alpha_optimistic", "beta_pessimistic", tradeoff_U),
    ],
    ("shafer", 2): [
        ("Corollary 3.6, lower bound u2", "beta_pe >= u2(alpha_pe)", True, "lower",
         "alpha_pessimistic", "beta_pessimistic", tradeoff_u2),
        ("Corollary 3.6, upper bound U2", "beta_pe <= U2(alpha_pe)", True, "upper",
         "alpha_pessimistic", "beta_pessimistic", tradeoff_U2),
        ("Corollary 3.6 read on intervals, lower", "beta_op >= u2(alpha_pe)", False, "lower",
         "alpha_pessimistic", "beta_optimistic", tradeoff_u2),
        ("Corollary 3.6 read on intervals, printed U2", "beta_pe <= U2(alpha_op)", False,
         "upper", "alpha_optimistic", "beta_pessimistic", tradeoff_U2),
        ("Corollary 3.6 read on intervals, corrected U2",
         "beta_pe <= U2_corrected(alpha_op)", False, "upper",
         "alpha_optimistic", "beta_pessimistic", tradeoff_U2_corrected),
    ],
    ("walley", 1): [
        ("Theorem 3.18, pessimistic bound f_pe", "beta_pe >= f_pe(alpha_pe)", True, "lower",
         "alpha_pessimistic", "beta_pessimistic", tradeoff_f_pe),
        ("Theorem 3.18, optimistic bound f_op, rule by rule", "beta_op <= f_op(alpha_op)",
         False, "upper", "alpha_optimistic", "beta_optimistic", tradeoff_f_op),
        ("Theorem 3.18, pessimistic errors below f_op", "beta_pe <= f_op(alpha_pe)", False,
         "upper", "alpha_pessimistic", "beta_pessimistic", tradeoff_f_op),
    ],
    ("walley", 2): [
        ("Corollary 3.19, pessimistic bound f2_pe", "beta_pe >= f2_pe(alpha_pe)", True,
         "lower", "alpha_pessimistic", "beta_pessimistic", tradeoff_f2_pe),
        ("Corollary 3.19, optimistic bound f2_op, rule by rule",
         "beta_op <= f2_op(alpha_op)", True, "upper",
         "alpha_optimistic", "beta_optimistic", tradeoff_f2_op),
        ("Corollary 3.19, corrected optimistic bound, rule by rule",
         "beta_op <= U2_corrected(alpha_op)", False, "upper",
         "alpha_optimistic", "beta_optimistic", tradeoff_U2_corrected),
    ],
}


def _folded(mechanism: EvidentialMechanism, folds: int) -> EvidentialMechanism:
    if folds == 1:
        return mechanism
    if folds == 2:
        return compose(mechanism, mechanism)
    raise ParameterError(f"folds ({folds!r}) must be 1 or 2 (Theorem 3.5/3.18 or Cor. 3.6/3.19)")


def _epsilon(mechanism: EvidentialMechanism, semantics: str) -> float:
    if check_semantics(semantics) == "shafer":
        return mechanism.epsilon_shafer()
    return mechanism.epsilon_walley()


def evaluate_all_rules(
    mechanism: EvidentialMechanism, *, folds: int = 1, levels: int = 2
) -> list[RuleErrors]:
    """:func:`evaluate_rules` of every rule on a grid, for every ordered pair of inputs.

    For ``folds=2`` the mechanism is the product Q x Q
    (:func:`~surveykit.privacy.evidential.compose`), whose outputs are pairs of answers.
    """
    folded = _folded(mechanism, folds)
    rules = rejection_rules(len(folded.outputs), levels=levels)
    return [
        evaluate_rules(folded, null=x, alternative=y, rules=rules)
        for x, y in itertools.permutations(folded.inputs, 2)
    ]


def check_tradeoff_bounds(
    mechanism: EvidentialMechanism,
    *,
    semantics: Semantics,
    folds: int = 1,
    levels: int = 2,
) -> list[BoundCheck]:
    """Check the paper's trade-off bounds, and their true readings, on every rule.

    epsilon is the mechanism's own loss in the named semantics (Shafer for
    Theorem 3.5 / Corollary 3.6, Walley for Theorem 3.18 / Corollary 3.19),
    of the single mechanism also for ``folds=2`` (the bounds carry the 2 eps).
    Rules are all of Y -> {0, 1/(levels - 1), ..., 1}; ``levels=2`` gives
    exactly the rejection regions.

    >>> from surveykit.designs.warner import GeneralizedWarner
    >>> checks = check_tradeoff_bounds(GeneralizedWarner(p=0.6, q=0.2).to_evidential(),
    ...                                semantics="shafer")
    >>> [(c.statement, c.violations) for c in checks][:2]
    [('beta_pe >= u(alpha_pe)', 0), ('beta_pe <= U(alpha_pe)', 2)]
    """
    epsilon = _epsilon(mechanism, semantics)
    if not math.isfinite(epsilon):
        raise ParameterError(
            f"the mechanism's {semantics} loss is infinite: no trade-off bound applies"
        )
    errors = evaluate_all_rules(mechanism, folds=folds, levels=levels)
    checks = []
    for claim, statement, as_printed, side, alpha_name, beta_name, bound in _CLAIMS[
        (semantics, folds)
    ]:
        excesses, examples = [], []
        for e in errors:
            alpha = getattr(e, alpha_name)
            beta = getattr(e, beta_name)
            limit = bound(alpha, epsilon)
            excess = limit - beta if side == "lower" else beta - limit
            excesses.append(excess)
            for k in np.argsort(-excess)[:5]:
                if excess[k] > _TOLERANCE and len(examples) < 5:
                    examples.append({
                        "null": e.null,
                        "alternative": e.alternative,
                        "region": e.region(int(k)),
                        "rule": e.rules[k].tolist(),
                        "alpha": float(alpha[k]),
                        "beta": float(beta[k]),
                        "bound": float(limit[k]),
                    })
        excess = np.concatenate(excesses)
        checks.append(
            BoundCheck(
                claim=claim,
                statement=statement,
                as_printed=as_printed,
                semantics=semantics,
                folds=folds,
                epsilon=epsilon,
                checked=int(excess.size),
                violations=int(np.sum(excess > _TOLERANCE)),
                worst_excess=float(excess.max()),
                examples=tuple(examples),
            )
        )
    if semantics == "walley":
        checks.append(_optimistic_as_defined_check(errors, epsilon, folds))
    return checks


def _optimistic_as_defined_check(errors: list[RuleErrors], epsilon: float,
                                 folds: int) -> BoundCheck:
    """T^op(alpha) <= f_op(alpha) with T^op = sup (Definition 3.17), on a grid of alpha."""
    alpha = np.linspace(0.0, 1.0, 101)
    bound = tradeoff_f_op if folds == 1 else tradeoff_f2_op
    excess = np.concatenate([
        optimistic_tradeoff_as_defined(e, alpha) - bound(alpha, epsilon) for e in errors
    ])
    name = "T^op" if folds == 1 else "T_2^op"
    claim = ("Theorem 3.18, optimistic half as defined" if folds == 1
             else "Corollary 3.19, optimistic half as defined")
    return BoundCheck(
        claim=claim,
        statement=f"{name}(alpha) = sup{{beta_op : alpha_op <= alpha}} <= "
                  f"{'f_op' if folds == 1 else 'f2_op'}(alpha)",
        as_printed=True,
        semantics="walley",
        folds=folds,
        epsilon=epsilon,
        checked=int(excess.size),
        violations=int(np.sum(excess > _TOLERANCE)),
        worst_excess=float(excess.max()),
    )


def optimistic_tradeoff_as_defined(errors: RuleErrors, alpha: np.ndarray) -> np.ndarray:
    """T^op(alpha) = sup{beta_op : alpha_op <= alpha} over the rules, as Definition 3.17 prints.

    The rule that never rejects has alpha_op = 0 and beta_op = 1, so this is 1
    for every alpha, above f_op(alpha) < 1 for all alpha > 0: with "sup" the
    optimistic half of Theorem 3.18 cannot hold. Read rule by rule
    (beta_op <= f_op(alpha_op)) it does (:func:`check_tradeoff_bounds`).
    """
    alpha = np.asarray(alpha, dtype=float)
    allowed = errors.alpha_optimistic[None, :] <= alpha[:, None] + _TOLERANCE
    return np.where(allowed, errors.beta_optimistic[None, :], -np.inf).max(axis=1)
