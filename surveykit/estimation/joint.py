"""Several sensitive questions together: their joint distribution by maximum likelihood.

A respondent answers each question through its own design, with independent
random instructions, so the answers to questions 1..m given the true states
(s_1, ..., s_m) and the groups (g_1, ..., g_m) follow the *product design*

    P(r_1, ..., r_m | s_1, ..., s_m, g) = prod_j P_j(r_j | s_j, g_j),

the Kronecker product of the questions' matrices per group combination (as
RRreg combines designs; Heck and Moshagen 2018, J. Stat. Softw. 85(2),
Sec. 2; Fox and Tracy 1984 for two questions). The shares pi of the
k_1 x ... x k_m joint states are estimated by maximum likelihood from the
cross-classified answers with surveykit's likelihood machinery
(:func:`surveykit.estimation.likelihood.maximize` and
:func:`~surveykit.estimation.likelihood.covariance`): the product design is
:class:`ProductLikelihood`, a likelihood problem whose matrix is the product
of the questions' matrices, each affine in its own nuisance parameters (so the
product is multilinear in them, and they are estimated jointly with pi). A
product of designs without nuisance parameters is a ``custom`` design (one
matrix per group combination); with them it is not, since a design's matrix
is affine in its nuisance parameters, hence the problem of its own.

From the joint shares and their covariance (inverse observed information;
the expected information where an estimate sits on the boundary) every pair
of questions gets, by the delta method: the shares "a and b", "a but not b",
"b but not a", "neither", the margins, the conditional shares "b among a",
"a among b", "b among not a", the odds ratio and the correlation phi (yes/no
questions), each with a standard error and a Wald interval on a scale that
keeps it in range (logit for shares, log for the odds ratio, Fisher's z for
phi). Independence is tested by the likelihood ratio of the joint fit against
the product of the questions' own fits on the same respondents, with
(prod k_j - 1) - sum (k_j - 1) degrees of freedom.

:func:`joint` reads one row per respondent (a pandas DataFrame);
:func:`joint_from_counts` takes the cross-classified counts
(:class:`surveykit.joint_counts.JointCounts`), which is all a store needs to
produce.

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np
import pandas as pd

from surveykit.designs.base import DONT_KNOW, NO, YES, Design
from surveykit.errors import EstimationError, ParameterError
from surveykit.estimation.answers import (
    _DIRECT_SPELLINGS,
    DIRECT_GROUP,
    _with_direct_group,
    code_answers,
)
from surveykit.estimation.likelihood import covariance, maximize
from surveykit.joint_counts import MAX_QUESTIONS, JointCounts
from surveykit.vocabulary import canonical_spelling, response_spellings

__all__ = ["MAX_QUESTIONS", "IndependenceTest", "JointEstimate", "PairSummary",
           "ProductLikelihood", "Quantity", "joint", "joint_from_counts"]

#: Joint states beyond this are refused (k-category questions multiply fast).
MAX_STATES = 256
#: Respondents per joint state below which the analysis is refused.
MIN_PER_STATE = 5
# Shares this close to 0 or 1 are 0 or 1 (round-off of the fit, as in estimate.py).
_EDGE = 1e-12


# -- the questions and the product likelihood -------------------------------------------------


@dataclass(frozen=True, eq=False)
class _Question:
    """One question of the product: its design's arrays over the groups that occur (the
    design's groups, then the direct question's when some respondents were asked directly)."""

    name: str
    design: Design
    groups: tuple[str, ...]
    base: np.ndarray     # (groups, responses, states)
    slopes: np.ndarray   # (nuisance, groups, responses, states)

    @classmethod
    def of(cls, name: str, design: Design, direct: bool) -> _Question:
        labels = design.group_names + ((DIRECT_GROUP,) if direct else ())
        base, slopes = _with_direct_group(design, labels)
        return cls(name, design, labels, base, slopes)

    def group_index(self, label: str) -> int:
        if canonical_spelling(label) in _DIRECT_SPELLINGS and DIRECT_GROUP in self.groups:
            return self.groups.index(DIRECT_GROUP)
        return self.design.group_index(label)


def _outer(factors: Sequence[np.ndarray]) -> np.ndarray:
    """Row-wise Kronecker product: (cells, k_1), ..., (cells, k_m) -> (cells, k_1 ... k_m),
    the first factor varying slowest (the order of :func:`itertools.product`)."""
    out = factors[0]
    for factor in factors[1:]:
        out = (out[:, :, None] * factor[:, None, :]).reshape(out.shape[0], -1)
    return out


class ProductLikelihood:
    """The log-likelihood of cross-classified counts under the product design, with the
    interface of :class:`surveykit.estimation.likelihood.LikelihoodProblem` (so that
    :func:`~surveykit.estimation.likelihood.maximize` and
    :func:`~surveykit.estimation.likelihood.covariance` work on it).

    ``counts`` has the axes (groups of question 1, ..., of question m, responses of
    question 1, ..., of question m). The parameters are the joint shares (states in
    :func:`itertools.product` order) and every question's nuisance parameters in turn.
    With one question it is that question's likelihood.
    """

    def __init__(self, questions: Sequence[_Question], counts: np.ndarray) -> None:
        self.questions = tuple(questions)
        self.m = len(self.questions)
        counts = np.asarray(counts, dtype=float)
        index = np.indices(counts.shape).reshape(counts.ndim, -1)
        flat = counts.reshape(-1)
        observed = flat > 0
        self.n = flat[observed]
        self._observed = index[:, observed]
        self._all = index
        # each cell's group combination total, for the expected information
        group_totals = counts.reshape(counts.shape[:self.m] + (-1,)).sum(axis=-1)
        self._all_totals = group_totals[tuple(index[:self.m])]
        # (question, its nuisance parameter) of each nuisance parameter, in order
        self.owners = [(j, e) for j, q in enumerate(self.questions)
                       for e in range(q.slopes.shape[0])]
        self.states = int(np.prod([q.base.shape[2] for q in self.questions]))
        self.nuisance = len(self.owners)
        self.size = self.states + self.nuisance
        parameters = [self.questions[j].design.nuisance[e] for j, e in self.owners]
        self.low = np.array([p.low for p in parameters], dtype=float)
        self.high = np.array([p.high for p in parameters], dtype=float)

    def split(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return x[:self.states], x[self.states:]

    def _factors(self, eta: np.ndarray, index: np.ndarray):
        """Per question: P_j(r_j | s_j, g_j) of every cell (cells, k_j), and its slopes."""
        factors, slopes, offset = [], [], 0
        for j, q in enumerate(self.questions):
            g, r = index[j], index[self.m + j]
            count = q.slopes.shape[0]
            slope = q.slopes[:, g, r, :]
            factor = q.base[g, r, :]
            if count:
                factor = factor + np.tensordot(eta[offset:offset + count], slope, axes=1)
            factors.append(factor)
            slopes.append(slope)
            offset += count
        return factors, slopes

    def _replaced(self, factors, slopes, which: dict[int, int]) -> np.ndarray:
        """The product with question j's factor replaced by its slope l, for j, l in
        ``which``."""
        return _outer([slopes[j][which[j]] if j in which else factors[j]
                       for j in range(self.m)])

    def mu(self, x: np.ndarray) -> np.ndarray:
        pi, eta = self.split(x)
        factors, _ = self._factors(eta, self._observed)
        return _outer(factors) @ pi

    def loglik(self, x: np.ndarray) -> float:
        mu = self.mu(x)
        if np.any(mu <= 0) or not np.all(np.isfinite(mu)):
            return -math.inf
        return float(self.n @ np.log(mu))

    def _jacobian(self, x: np.ndarray, index: np.ndarray):
        pi, eta = self.split(x)
        factors, slopes = self._factors(eta, index)
        product = _outer(factors)
        replaced = [self._replaced(factors, slopes, {j: e}) for j, e in self.owners]
        columns = [product] + [(r @ pi)[:, None] for r in replaced]
        return product @ pi, np.concatenate(columns, axis=1), factors, slopes, replaced

    def derivatives(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Gradient and Hessian of the log-likelihood at ``x`` (all parameters free)."""
        pi, _ = self.split(x)
        mu, J, factors, slopes, replaced = self._jacobian(x, self._observed)
        k = self.states
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            w = self.n / mu
            gradient = J.T @ w
            hessian = -(J.T * (self.n / mu**2)) @ J
            # second derivatives of mu: d2/dpi_s deta = the replaced product's column s;
            # d2/deta deta' = both replaced (0 within one question: affine there)
            for a, product in enumerate(replaced):
                cross = product.T @ w
                hessian[:k, k + a] += cross
                hessian[k + a, :k] += cross
            for a, b in itertools.combinations(range(self.nuisance), 2):
                (j, e), (i, f) = self.owners[a], self.owners[b]
                if i == j:
                    continue
                value = (self._replaced(factors, slopes, {j: e, i: f}) @ pi) @ w
                hessian[k + a, k + b] += value
                hessian[k + b, k + a] += value
        return gradient, hessian

    def expected_information(self, x: np.ndarray) -> np.ndarray:
        """Fisher's information at ``x`` for the group combinations' observed sizes."""
        mu, J, *_ = self._jacobian(x, self._all)
        weights = np.divide(self._all_totals, mu, out=np.zeros_like(mu), where=mu > 0)
        return (J.T * weights) @ J


# -- results ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Quantity:
    """An estimate with its standard error (delta method) and its Wald interval at the level
    of the summary (on the logit scale for shares, log for the odds ratio, Fisher's z for
    phi; ``se`` is on the natural scale). None where it is undefined (a share of 0 in a
    denominator)."""

    name: str
    estimate: float | None
    se: float | None
    low: float | None
    high: float | None

    def to_dict(self) -> dict[str, float | None]:
        return {"estimate": self.estimate, "se": self.se, "ci_low": self.low,
                "ci_high": self.high}


@dataclass(frozen=True)
class IndependenceTest:
    """The likelihood-ratio test of independence of ``questions``' true answers."""

    questions: tuple[str, ...]
    lr: float
    df: int
    p_value: float

    def to_dict(self) -> dict[str, object]:
        return {"questions": list(self.questions), "lr": self.lr, "df": self.df,
                "p_value": self.p_value}


@dataclass(frozen=True)
class PairSummary:
    """Two questions' joint distribution: ``cells[(state_a, state_b)]`` with standard errors,
    and for yes/no questions the named quantities (both, a_not_b, b_given_a, odds_ratio,
    phi, ...)."""

    a: str
    b: str
    level: float
    cells: Mapping[tuple[str, str], Quantity]
    quantities: Mapping[str, Quantity]
    independence: IndependenceTest

    def __getitem__(self, name: str) -> Quantity:
        return self.quantities[name]

    def to_frame(self) -> pd.DataFrame:
        """One row per quantity (yes/no pairs: both, a_not_b, ..., phi; otherwise the
        cells): estimate, se and the interval."""
        named = self.quantities or {q.name: q for q in self.cells.values()}
        return pd.DataFrame([{"quantity": name, **q.to_dict()} for name, q in named.items()]
                            ).set_index("quantity")

    def to_dict(self) -> dict[str, object]:
        return {"a": self.a, "b": self.b, "level": self.level,
                "cells": [{"a": sa, "b": sb, **q.to_dict()} for (sa, sb), q in
                          self.cells.items()],
                **{name: q.to_dict() for name, q in self.quantities.items()},
                "independence": self.independence.to_dict()}


@dataclass(frozen=True, kw_only=True)
class JointEstimate:
    """The joint distribution of several questions' true answers.

    ``states`` are the joint states (one label per question, the first question
    varying slowest), ``shares`` their maximum-likelihood shares and ``covariance`` the
    covariance of (shares, nuisance) (``identified`` marks the parameters with a finite
    variance). ``n`` respondents answered every question; ``left_out`` says how many
    were left out and why.
    """

    questions: tuple[str, ...]
    designs: tuple[Design, ...]
    states: tuple[tuple[str, ...], ...]
    shares: np.ndarray = field(repr=False)
    covariance: np.ndarray = field(repr=False)
    identified: np.ndarray = field(repr=False)
    nuisance: Mapping[str, float]
    loglik: float
    n: int
    independence: IndependenceTest
    pair_tests: Mapping[tuple[str, str], IndependenceTest]
    converged: bool
    iterations: int
    left_out: Mapping[str, int] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    @property
    def _k(self) -> int:
        return len(self.states)

    def share(self, **states: str) -> Quantity:
        """The share of respondents in the given states (any subset of the questions), e.g.
        ``share(a="yes", b="no")``, with its standard error."""
        unknown = sorted(set(states) - set(self.questions))
        if unknown:
            raise ParameterError(f"{unknown[0]!r} is not one of the questions "
                                 f"{', '.join(self.questions)}")
        weights = np.array([all(state[self.questions.index(q)] == value
                                for q, value in states.items()) for state in self.states],
                           dtype=float)
        for q, value in states.items():
            labels = self.designs[self.questions.index(q)].state_labels
            if value not in labels:
                raise ParameterError(f"{value!r} is not a state of question {q!r}; its states "
                                     f"are {', '.join(labels)}")
        estimate = float(weights @ self.shares)
        se = _se(weights, self._cov)
        low, high = _share_interval(estimate, se, _z(0.95))
        return Quantity(",".join(f"{q}={v}" for q, v in states.items()), estimate, se, low,
                        high)

    @property
    def _cov(self) -> np.ndarray:
        k = self._k
        cov = self.covariance[:k, :k].copy()
        undefined = ~self.identified[:k]
        cov[undefined, :] = np.nan
        cov[:, undefined] = np.nan
        return cov

    def pair(self, a: str, b: str, *, level: float = 0.95) -> PairSummary:
        """What questions ``a`` and ``b`` say together (:class:`PairSummary`)."""
        for name in (a, b):
            if name not in self.questions:
                raise ParameterError(f"{name!r} is not one of the questions "
                                     f"{', '.join(self.questions)}")
        if a == b:
            raise ParameterError(f"a pair needs two questions, not {a!r} twice")
        ia, ib = self.questions.index(a), self.questions.index(b)
        labels_a, labels_b = self.designs[ia].state_labels, self.designs[ib].state_labels
        z = _z(level)
        rows = [(sa, sb) for sa in labels_a for sb in labels_b]
        L = np.array([[float(state[ia] == sa and state[ib] == sb) for state in self.states]
                      for sa, sb in rows])
        p = L @ self.shares
        cov = L @ self._cov @ L.T
        cells = {}
        for i, key in enumerate(rows):
            se = _sqrt(cov[i, i])
            cells[key] = Quantity(f"{a}={key[0]},{b}={key[1]}", float(p[i]), se,
                                  *_share_interval(float(p[i]), se, z))
        quantities = _binary_quantities(a, b, p, cov, z) if (
            labels_a == (YES, NO) and labels_b == (YES, NO)) else {}
        key = (a, b) if (a, b) in self.pair_tests else (b, a)
        return PairSummary(a=a, b=b, level=level, cells=cells, quantities=quantities,
                           independence=self.pair_tests[key])

    def pairs(self, *, level: float = 0.95) -> list[PairSummary]:
        """Every pair of questions, in order."""
        return [self.pair(a, b, level=level) for a, b in itertools.combinations(self.questions, 2)]

    def table(self) -> pd.DataFrame:
        """One row per joint state: the questions' states, the share and its standard error."""
        rows = [{**dict(zip(self.questions, state, strict=True)), "share": float(v),
                 "se": _sqrt(self._cov[i, i])}
                for i, (state, v) in enumerate(zip(self.states, self.shares, strict=True))]
        return pd.DataFrame(rows)

    def to_dict(self, *, level: float = 0.95) -> dict[str, object]:
        """Plain data for JSON."""
        return {
            "questions": list(self.questions),
            "designs": {q: d.spec() for q, d in zip(self.questions, self.designs, strict=True)},
            "n": self.n,
            "left_out": dict(self.left_out),
            "joint": [{"states": dict(zip(self.questions, state, strict=True)),
                       "share": float(v), "se": _sqrt(self._cov[i, i])}
                      for i, (state, v) in enumerate(zip(self.states, self.shares,
                                                         strict=True))],
            "nuisance": dict(self.nuisance),
            "loglik": self.loglik,
            "independence": self.independence.to_dict(),
            "pairs": [pair.to_dict() for pair in self.pairs(level=level)],
            "converged": self.converged,
            "warnings": list(self.warnings),
        }


# -- the delta method ----------------------------------------------------------------------------


def _z(level: float) -> float:
    if isinstance(level, bool) or not isinstance(level, int | float) or not 0 < level < 1:
        raise ParameterError(f"level ({level!r}) must be a confidence level between 0 and 1, "
                             "e.g. 0.95")
    return NormalDist().inv_cdf(0.5 + level / 2)


def _sqrt(variance: float) -> float | None:
    if not np.isfinite(variance):
        return None
    return math.sqrt(max(0.0, float(variance)))


def _se(gradient: np.ndarray, cov: np.ndarray) -> float | None:
    if not np.all(np.isfinite(gradient)):
        return None
    used = gradient != 0
    return _sqrt(float(gradient[used] @ cov[np.ix_(used, used)] @ gradient[used]))


def _share_interval(estimate: float | None, se: float | None, z: float
                    ) -> tuple[float | None, float | None]:
    """Wald on the logit scale inside (0, 1); on the natural scale, clipped, at the edges."""
    if estimate is None or se is None:
        return None, None
    if 0 < estimate < 1 and se > 0:
        center, spread = math.log(estimate / (1 - estimate)), z * se / (estimate * (1 - estimate))
        return 1 / (1 + math.exp(-(center - spread))), 1 / (1 + math.exp(-(center + spread)))
    return max(0.0, estimate - z * se), min(1.0, estimate + z * se)


def _ratio(numerator: np.ndarray, denominator: np.ndarray, p: np.ndarray, cov: np.ndarray,
           name: str, z: float) -> Quantity:
    """A conditional share num . p / den . p (num a subset of den)."""
    top, bottom = float(numerator @ p), float(denominator @ p)
    if bottom <= 0:
        return Quantity(name, None, None, None, None)
    value = top / bottom
    gradient = (numerator * bottom - denominator * top) / bottom**2
    se = _se(gradient, cov)
    return Quantity(name, value, se, *_share_interval(value, se, z))


def _binary_quantities(a: str, b: str, p: np.ndarray, cov: np.ndarray, z: float
                       ) -> dict[str, Quantity]:
    """Named quantities of a yes/no pair; p = (yes yes, yes no, no yes, no no) shares."""
    e = np.eye(4)
    out: dict[str, Quantity] = {}
    for name, weights in (("both", e[0]), ("a_not_b", e[1]), ("b_not_a", e[2]),
                          ("neither", e[3]), ("a", e[0] + e[1]), ("b", e[0] + e[2])):
        value = float(weights @ p)
        se = _se(weights, cov)
        out[name] = Quantity(name, value, se, *_share_interval(value, se, z))
    out["b_given_a"] = _ratio(e[0], e[0] + e[1], p, cov, "b_given_a", z)
    out["a_given_b"] = _ratio(e[0], e[0] + e[2], p, cov, "a_given_b", z)
    out["b_given_not_a"] = _ratio(e[2], e[2] + e[3], p, cov, "b_given_not_a", z)
    p11, p10, p01, p00 = (float(v) for v in p)
    # the odds ratio p11 p00 / (p10 p01); its log has gradient (1/p11, -1/p10, -1/p01, 1/p00)
    if min(p11, p10, p01, p00) > 0:
        ratio = p11 * p00 / (p10 * p01)
        log_se = _se(np.array([1 / p11, -1 / p10, -1 / p01, 1 / p00]), cov)
        low = high = None
        if log_se is not None:
            low, high = ratio * math.exp(-z * log_se), ratio * math.exp(z * log_se)
        out["odds_ratio"] = Quantity("odds_ratio", ratio,
                                     None if log_se is None else ratio * log_se, low, high)
    else:
        out["odds_ratio"] = Quantity("odds_ratio", None, None, None, None)
    # phi = D / sqrt(S), D = p11 p00 - p10 p01, S = pa qa pb qb
    pa, qa, pb, qb = p11 + p10, p01 + p00, p11 + p01, p10 + p00
    S = pa * qa * pb * qb
    if S > 0:
        D = p11 * p00 - p10 * p01
        dD = np.array([p00, -p01, -p10, p11])
        dS = np.array([qa * qb * (pa + pb), qa * pb * (qb + pa), pa * qb * (pb + qa),
                       pa * pb * (qb + qa)])
        phi = D / math.sqrt(S)
        gradient = dD / math.sqrt(S) - D * dS / (2 * S**1.5)
        se = _se(gradient, cov)
        low = high = None
        if se is not None:
            if abs(phi) < 1 and se > 0:
                center, spread = math.atanh(phi), z * se / (1 - phi**2)
                low, high = math.tanh(center - spread), math.tanh(center + spread)
            else:
                low, high = max(-1.0, phi - z * se), min(1.0, phi + z * se)
        out["phi"] = Quantity("phi", phi, se, low, high)
    else:
        out["phi"] = Quantity("phi", None, None, None, None)
    return out


# -- fitting ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Fit:
    pi: np.ndarray
    eta: np.ndarray
    loglik: float
    covariance: np.ndarray
    identified: np.ndarray
    converged: bool
    iterations: int
    at_bound: bool


def _fit(questions: Sequence[_Question], counts: np.ndarray) -> _Fit:
    problem = ProductLikelihood(questions, counts)
    best = maximize(problem)
    pi = np.array(best.pi, dtype=float)
    pi[np.abs(pi) <= _EDGE] = 0.0
    eta = np.array(best.eta, dtype=float)
    at_bound = bool(np.any(pi <= 0) or np.any(eta <= problem.low) or np.any(eta >= problem.high))
    cov, identified = covariance(problem, np.concatenate([pi, eta]), expected=at_bound)
    return _Fit(pi, eta, best.loglik, cov, identified, best.converged, best.iterations,
                at_bound)


def _marginal(counts: np.ndarray, m: int, keep: Sequence[int]) -> np.ndarray:
    """The counts of the questions ``keep`` (sum over the others' groups and responses)."""
    axes = tuple(j for j in range(m) if j not in keep) + tuple(
        m + j for j in range(m) if j not in keep)
    return counts.sum(axis=axes) if axes else counts


def _independence(questions: Sequence[_Question], counts: np.ndarray, joint_loglik: float
                  ) -> IndependenceTest:
    """LR of the joint fit of ``questions`` against the product of their own fits."""
    from scipy import stats

    m = len(questions)
    separate = sum(_fit([q], _marginal(counts, m, [j])).loglik for j, q in enumerate(questions))
    ks = [q.base.shape[2] for q in questions]
    df = int(np.prod(ks)) - 1 - sum(k - 1 for k in ks)
    lr = max(0.0, 2 * (joint_loglik - separate))
    return IndependenceTest(tuple(q.name for q in questions), lr, df,
                            float(stats.chi2.sf(lr, df)))


def _check_designs(designs: Mapping[str, Design]) -> list[tuple[str, Design]]:
    if not isinstance(designs, Mapping):
        raise ParameterError("designs must map each question (column) to its design, e.g. "
                             "{\"exam\": make_design(\"warner\", p=0.7), ...}")
    items = [(str(name), design) for name, design in designs.items()]
    if not 2 <= len(items) <= MAX_QUESTIONS:
        raise ParameterError(f"a joint analysis takes 2 to {MAX_QUESTIONS} questions, not "
                             f"{len(items)}")
    for name, design in items:
        if not isinstance(design, Design):
            raise ParameterError(f"the design of question {name!r} ({design!r}) must be a "
                                 "design, e.g. make_design(\"warner\", p=0.7)")
        s = design.structure
        if s.states != s.categories:
            extra = [state for state in s.states if state not in s.categories]
            raise ParameterError(
                f"question {name!r}: design {design.model!r} has the state {extra[0]!r} besides "
                "its answers; a joint analysis takes designs whose true states are the answers")
    states = int(np.prod([len(d.state_labels) for _, d in items]))
    if states > MAX_STATES:
        raise ParameterError(f"questions {', '.join(n for n, _ in items)} have {states} joint "
                             f"states; a joint analysis takes at most {MAX_STATES}")
    return items


def joint_from_counts(counts: JointCounts, designs: Mapping[str, Design]) -> JointEstimate:
    """The joint distribution from cross-classified counts (one design per question, in the
    order of ``counts.questions``; group labels are the designs' groups, or "0"/"direct" for
    respondents asked directly).

    >>> from surveykit.designs import make_design
    >>> c = JointCounts.from_mapping(("a", "b"), {("1", "1"): {
    ...     ("yes", "yes"): 30, ("yes", "no"): 20, ("no", "yes"): 10, ("no", "no"): 40}})
    >>> direct = make_design("direct")
    >>> e = joint_from_counts(c, {"a": direct, "b": direct})
    >>> pair = e.pair("a", "b")
    >>> round(pair["both"].estimate, 4), round(pair["b_given_a"].estimate, 4)
    (0.3, 0.6)
    """
    if not isinstance(counts, JointCounts):
        raise ParameterError(f"counts ({type(counts).__name__}) must be JointCounts, e.g. "
                             "JointCounts.from_mapping((\"a\", \"b\"), {...})")
    items = _check_designs(designs)
    names = [name for name, _ in items]
    if sorted(names) != sorted(counts.questions):
        raise ParameterError(f"the counts are of questions {', '.join(counts.questions)}; the "
                             f"designs are for {', '.join(names)}")
    by_name = dict(items)
    m = len(counts.questions)
    direct = [any(canonical_spelling(g[j]) in _DIRECT_SPELLINGS for g, _, _ in counts)
              for j in range(m)]
    questions = [_Question.of(name, by_name[name], direct[j])
                 for j, name in enumerate(counts.questions)]
    spellings = [response_spellings(q.design.response_labels) for q in questions]
    shape = tuple(len(q.groups) for q in questions) + tuple(
        len(q.design.response_labels) for q in questions)
    array = np.zeros(shape, dtype=np.int64)
    for groups, responses, n in counts:
        gi = tuple(q.group_index(label) for q, label in zip(questions, groups, strict=True))
        ri = []
        for q, spelling, label in zip(questions, spellings, responses, strict=True):
            response = spelling.get(canonical_spelling(label))
            if response is None:
                raise ParameterError(
                    f"question {q.name!r}: response {label!r} is not an answer of design "
                    f"{q.design.model!r}; its answers are {', '.join(q.design.response_labels)}")
            ri.append(q.design.response_labels.index(response))
        array[gi + tuple(ri)] += n
    return _estimate(questions, array, {})


def _possible(q: _Question) -> np.ndarray:
    possible = np.any(q.base > 0, axis=2)
    if q.slopes.shape[0]:
        possible |= np.any(q.slopes != 0, axis=(0, 3))
    return possible


def _estimate(questions: list[_Question], counts: np.ndarray, left_out: dict[str, int]
              ) -> JointEstimate:
    m = len(questions)
    warnings: list[str] = []
    # answers a question's design never gives: "don't know" without the branch is an
    # opt-out (the respondent is left out); anything else is an error in the data
    keep = np.ones(counts.shape, dtype=bool)
    for j, q in enumerate(questions):
        possible = _possible(q)
        shape = [1] * counts.ndim
        shape[j], shape[m + j] = possible.shape
        allowed = possible.reshape(shape)
        bad = (counts > 0) & ~allowed
        if not bad.any():
            continue
        for index in zip(*np.nonzero(bad), strict=True):
            label = q.design.response_labels[index[m + j]]
            if label != DONT_KNOW:
                raise EstimationError(
                    f"question {q.name!r}: {counts[index]} answer(s) {label!r} in group "
                    f"{q.groups[index[j]]}, which design {q.design.model!r} never gives there; "
                    "check the design's parameters or the answers")
        dropped = int(counts[bad].sum())
        left_out[f"{q.name}: don't know without the branch"] = dropped
        keep &= allowed | (counts == 0)
        warnings.append(f"{dropped} respondent(s) answered \"don't know\" to {q.name!r}, whose "
                        "design has no don't-know branch: they are left out")
    counts = np.where(keep, counts, 0)
    n = int(counts.sum())
    names = ", ".join(q.name for q in questions)
    k = int(np.prod([q.base.shape[2] for q in questions]))
    if n == 0:
        raise EstimationError(f"no respondent answered all of {names}")
    if n < MIN_PER_STATE * k:
        raise EstimationError(
            f"too few answers for a joint analysis of {names}: {n} respondent(s) answered all "
            f"of them, fewer than {MIN_PER_STATE} per joint state ({k} states need at least "
            f"{MIN_PER_STATE * k}); add answers or analyse fewer questions")
    problem = ProductLikelihood(questions, counts)
    start = np.concatenate([np.full(k, 1.0 / k), (problem.low + problem.high) / 2])
    _, identified = covariance(problem, start, expected=True)
    if not identified.all():
        groups = [" x ".join(q.groups[g] for q, g in zip(questions, combination, strict=True))
                  for combination in itertools.product(*[range(len(q.groups))
                                                         for q in questions])
                  if counts[combination].sum() == 0]
        raise EstimationError(
            f"the answers to {names} do not identify their joint shares: the designs need "
            "answers from every group combination"
            + (f"; group combination {groups[0]} has none" if groups else ""))
    fit = _fit(questions, counts)
    states = tuple(itertools.product(*[q.design.state_labels for q in questions]))
    nuisance = {}
    for (j, e), value in zip(problem.owners, fit.eta, strict=True):
        nuisance[f"{questions[j].name}.{questions[j].design.nuisance[e].name}"] = float(value)
    if not fit.converged:
        warnings.append("the maximum-likelihood search did not converge; the estimates may be "
                        "off")
    if fit.at_bound:
        warnings.append("some joint shares are estimated at 0: their standard errors come from "
                        "the expected information and the chi-square of the independence test "
                        "is a rough approximation")
    overall = _independence(questions, counts, fit.loglik)
    pair_tests = {}
    for a, b in itertools.combinations(range(m), 2):
        pair = [questions[a], questions[b]]
        sub = _marginal(counts, m, [a, b])
        pair_fit = fit.loglik if m == 2 else _fit(pair, sub).loglik
        pair_tests[(questions[a].name, questions[b].name)] = _independence(pair, sub, pair_fit)
    return JointEstimate(
        questions=tuple(q.name for q in questions), designs=tuple(q.design for q in questions),
        states=states, shares=_readonly(fit.pi), covariance=_readonly(fit.covariance),
        identified=_readonly(fit.identified), nuisance=nuisance, loglik=fit.loglik, n=n,
        independence=overall, pair_tests=pair_tests, converged=fit.converged,
        iterations=fit.iterations, left_out=left_out, warnings=tuple(warnings))


def _readonly(array: np.ndarray) -> np.ndarray:
    out = np.array(array, copy=True)
    out.setflags(write=False)
    return out


def joint(data: pd.DataFrame, designs: Mapping[str, Design], *,
          groups: Mapping[str, str] | None = None) -> JointEstimate:
    """The joint distribution of the true answers in ``designs``' columns of ``data`` (one row
    per respondent; ``groups`` maps a question to the column with its group, for split-sample
    designs; 0 there marks respondents asked directly).

    Respondents who left one of the questions empty are left out (``left_out``
    counts them); a question pair nobody answered together is an error.

    >>> from surveykit.designs import make_design
    >>> frame = pd.DataFrame({"a": ["yes", "yes", "no", "no"] * 10,
    ...                       "b": ["yes", "no", "no", "no"] * 10})
    >>> e = joint(frame, {"a": make_design("direct"), "b": make_design("direct")})
    >>> round(e.pair("a", "b")["phi"].estimate, 4)    # Pearson's r of the 0/1 answers
    0.5774
    """
    if not isinstance(data, pd.DataFrame):
        raise ParameterError(f"data must be a pandas DataFrame, not {type(data).__name__}")
    items = _check_designs(designs)
    groups = dict(groups or {})
    columns = [str(c) for c in data.columns]
    for name, _ in items:
        if name not in columns:
            raise ParameterError(f"question column {name!r} is not in the data; the columns "
                                 f"are {', '.join(columns[:30])}")
    for name, column in groups.items():
        if name not in dict(items):
            raise ParameterError(f"groups: {name!r} is not one of the questions "
                                 f"{', '.join(n for n, _ in items)}")
        if column not in columns:
            raise ParameterError(f"group column {column!r} of question {name!r} is not in the "
                                 f"data; the columns are {', '.join(columns[:30])}")
    answered = {name: data[name].notna() & (data[groups[name]].notna() if name in groups
                                            else True) for name, _ in items}
    for (a, _), (b, _) in itertools.combinations(items, 2):
        if not (answered[a] & answered[b]).any():
            raise EstimationError(
                f"questions {a!r} and {b!r} have no respondent in common: they were asked of "
                "different respondents, so nothing says how their answers go together")
    complete = np.logical_and.reduce([answered[name].to_numpy() for name, _ in items])
    left_out = {"missing answers": int((~complete).sum())} if (~complete).any() else {}
    frame = data.loc[complete]
    codes, group_codes, labels, kept = [], [], [], np.ones(len(frame), dtype=bool)
    for name, design in items:
        rows = code_answers(design, frame[name], frame[groups[name]] if name in groups else None,
                            column=name, group_column=groups.get(name, "group"))
        full = np.full(len(frame), -1)
        full[rows.kept] = rows.responses
        group_full = np.zeros(len(frame), dtype=np.intp)
        group_full[rows.kept] = rows.groups
        codes.append(full)
        group_codes.append(group_full)
        labels.append(rows.group_labels)
        if rows.dont_know_left_out:
            left_out[f"{name}: don't know without the branch"] = rows.dont_know_left_out
        kept &= rows.kept
    rows = np.nonzero(kept)[0]
    m = len(items)
    # one count per (groups, responses) combination that occurs
    combinations, sizes = np.unique(
        np.stack([g[rows] for g in group_codes] + [c[rows] for c in codes], axis=1),
        axis=0, return_counts=True)
    table: dict[tuple[str, ...], dict[tuple[str, ...], int]] = {}
    for combination, size in zip(combinations, sizes, strict=True):
        key = tuple(labels[j][combination[j]] for j in range(m))
        answer = tuple(items[j][1].response_labels[combination[m + j]] for j in range(m))
        table.setdefault(key, {})[answer] = int(size)
    counts = JointCounts.from_mapping([name for name, _ in items], table)
    result = joint_from_counts(counts, dict(items))
    return dataclasses.replace(result, left_out={**left_out, **result.left_out})
