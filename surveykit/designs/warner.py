"""Warner's design and its relatives: the generalized Warner mechanism and Kuk's cards.

* ``warner`` (Warner 1965): with probability p the respondent answers the
  sensitive statement ("I have done X"), otherwise its negation; so P(yes | yes)
  = p and P(yes | no) = 1 - p. RRreg's ``"Warner"``, the same p.
* ``generalized_warner`` (the paper's Q2x3, Section 3): answer truthfully with
  probability p, give the opposite answer with probability q, "don't know"
  with 1 - p - q. It is Warner's design (p / (p + q)) with the don't-know
  branch 1 - p - q.
* ``kuk`` (Kuk 1990): two decks of cards; a respondent who has the trait draws
  from deck 1 (a share p[1] of red cards), others from deck 2 (p[2]), and
  reports the colour; with ``repetitions`` draws, the number of red cards.
  RRreg's ``"Kuk"`` with ``Kukrep``.

Every design here also takes ``dont_know`` (the paper's branch), except the
generalized Warner, whose don't-know share is 1 - p - q.

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
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
    has_free_entries,
    instructions_with_dont_know,
    one_free_entry,
    readonly,
    with_dont_know,
)
from surveykit.errors import ParameterError
from surveykit.validation import check_epsilon, check_sample_size

__all__ = [
    "DONT_KNOW",
    "NO",
    "YES",
    "GeneralizedWarner",
    "Kuk",
    "Warner",
    "estimate_redistributed",
    "generalized_warner_equivalent",
]

_PROB_SLACK = 1e-12
#: The most draws Kuk's design takes (RRTCS's bundled Kuk survey draws 25 cards).
MAX_KUK_CARDS = 100
_check_probability = check_probability
_BINARY_RESPONSES = (YES, NO, DONT_KNOW)


def _binary_structure(matrix: np.ndarray, instructions, kind: str = "instructions"
                      ) -> Structure:
    """A one-group yes/no design from its (3 x 2) matrix and instructions."""
    return Structure(
        states=BINARY_STATES, categories=BINARY_STATES, responses=_BINARY_RESPONSES,
        groups=("1",), base=readonly(matrix[None]), slopes=readonly(np.zeros((0, 1, 3, 2))),
        nuisance=(), protocol=Protocol(kind, (tuple(instructions),)),
        privacy_states=BINARY_STATES, state_parameters={})


@dataclass(frozen=True, kw_only=True)
class GeneralizedWarner(Design):
    """The paper's Q2x3: answer truthfully (p), the opposite (q), "don't know" (1 - p - q).

    ::

                 yes   no    don't know
        Q2x3 = ( p     q     1 - p - q )   true status: has the property
               ( q     p     1 - p - q )   true status: does not

    "Don't know" is the focal set {yes, no}: it says nothing about the truth.
    The share of "yes" is q1 = pi p + (1 - pi) q, of "no" q2 = pi q + (1 - pi) p,
    of "don't know" q3 = 1 - p - q (paper, Section 3, before Eq. 2).

    Parameters are validated here, once: p and q are probabilities, p + q <= 1,
    and p > q (with p <= q the answers carry no information about pi, or
    reversed information).

    >>> gw = GeneralizedWarner(p=0.6, q=0.2)
    >>> gw.dont_know, round(gw.epsilon_shafer, 4), round(gw.epsilon_walley, 4)
    (0.2, 1.0986, 1.3863)
    """

    model: ClassVar[str] = "generalized_warner"
    summary: ClassVar[str] = ("the paper's mechanism: truthful p, opposite q, "
                              "don't know 1 - p - q")

    flat_parameters: ClassVar[bool] = True

    @classmethod
    def budget_family(cls, parameters: Mapping[str, object],
                      dont_know: float | None = None) -> BudgetFamily:
        """Corollary 3.12's family: p in ((1 - d)/2, 1 - d) with q = 1 - d - p, at the
        don't-know probability d = ``dont_know``; entries marked ``None`` as for any design.

        >>> family = GeneralizedWarner.budget_family({}, 0.2)
        >>> family.low, family.high, family.build(0.5)
        (0.4, 0.8, GeneralizedWarner(p=0.5, q=0.30000000000000004))
        """
        parameters = dict(parameters)
        if has_free_entries(parameters):
            if dont_know is not None:
                raise ParameterError("design 'generalized_warner' has no dont_know parameter: "
                                     "its don't-know probability is 1 - p - q")
            return BudgetFamily(parameters, 0.0, 1.0)
        for key in ("p", "q"):
            if key in parameters:
                raise ParameterError(
                    f"{key} is what the budget chooses for design 'generalized_warner' (with "
                    "p + q = 1 - dont_know); give dont_know instead of p and q")
        d = 0.0 if dont_know is None else _check_probability("dont_know", dont_know)
        if d >= 1:
            raise ParameterError(
                f"dont_know ({dont_know}) must be below 1: someone must answer yes or no")
        answered = 1 - d

        def solve(epsilon: float, semantics: str) -> tuple[GeneralizedWarner, float]:
            design = (cls.for_walley_budget(epsilon=epsilon, dont_know=d)
                      if semantics == "walley" else cls.optimal(epsilon=epsilon, dont_know=d))
            return design, design.p

        return BudgetFamily(parameters, answered / 2, answered,
                            label="p (q = 1 - dont_know - p)",
                            build=lambda value: cls(p=value, q=answered - value), solve=solve)

    p: float
    q: float

    def __post_init__(self) -> None:
        p = _check_probability("p", self.p)
        q = _check_probability("q", self.q)
        if p + q > 1 + _PROB_SLACK:
            raise ParameterError(
                f"p + q ({p} + {q} = {p + q:.6g}) must be at most 1: "
                "1 - p - q is the probability of answering \"don't know\""
            )
        if p <= q:
            raise ParameterError(
                f"p ({p}) must be greater than q ({q}): with p <= q the answers carry "
                "no information about pi (not identifiable) or point the wrong way"
            )
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "q", q)

    def parameters(self) -> dict[str, object]:
        return {"p": self.p, "q": self.q}

    def _build(self) -> Structure:
        p, q, d = self.p, self.q, self.dont_know
        matrix = np.array([[p, q], [q, p], [d, d]])
        instructions = [Instruction("truthful", as_fraction(p)),
                        Instruction("opposite", as_fraction(q))]
        if self.designed_dont_know > 0:
            instructions.append(Instruction("dont_know", self.designed_dont_know))
        return _binary_structure(matrix, instructions)

    # -- constructors --------------------------------------------------------------

    @classmethod
    def optimal(cls, *, epsilon: float, dont_know: float = 0.0) -> GeneralizedWarner:
        """The optimal mechanism for a Shafer budget with p + q = c fixed (Corollary 3.12).

        p = c e^eps / (e^eps + 1), q = c / (e^eps + 1), c = 1 - dont_know
        (docs/errata.md, item 4: c is p + q, not the don't-know probability).

        >>> gw = GeneralizedWarner.optimal(epsilon=math.log(3), dont_know=0.2)
        >>> round(gw.p, 12), round(gw.q, 12)
        (0.6, 0.2)
        """
        epsilon = check_epsilon(epsilon)
        c = 1.0 - _check_probability("dont_know", dont_know)
        if c <= 0:
            raise ParameterError(
                f"dont_know ({dont_know}) must be below 1: someone must answer yes or no"
            )
        # 1 / (e^eps + 1) written with exp(-eps) so a large budget does not overflow
        q = c * math.exp(-epsilon) / (1 + math.exp(-epsilon))
        return cls(p=c - q, q=q)

    @classmethod
    def for_walley_budget(cls, *, epsilon: float, dont_know: float = 0.0) -> GeneralizedWarner:
        """The mechanism whose Walley loss ln((1 - q)/q) equals epsilon, for a don't-know rate.

        q = 1 / (e^eps + 1) and p = 1 - q - dont_know (Section 3.2, eps^W).
        Among mechanisms with this Walley loss and don't-know rate it is the only one.
        """
        epsilon = check_epsilon(epsilon)
        dont_know = _check_probability("dont_know", dont_know)
        q = math.exp(-epsilon) / (1 + math.exp(-epsilon))
        p = 1.0 - q - dont_know
        if p <= q:
            raise ParameterError(
                f"dont_know ({dont_know}) is too large for a Walley budget of {epsilon}: "
                f"it leaves p = {p:.4g} <= q = {q:.4g}; lower dont_know below {1 - 2 * q:.4g}"
            )
        return cls(p=p, q=q)

    # -- derived quantities --------------------------------------------------------

    # -- derived quantities --------------------------------------------------------

    @property
    def designed_dont_know(self) -> Fraction:
        """1 - p - q as an exact fraction (p and q read as the decimals they were typed as).

        Shares within 1e-12 of 0 are 0: p and q computed in floating point
        (``optimal``) would otherwise leave a don't-know share of 2e-17.
        """
        share = 1 - as_fraction(self.p) - as_fraction(self.q)
        return Fraction(0) if share <= _PROB_SLACK else share

    @property
    def dont_know(self) -> float:
        """q3 = 1 - p - q, the probability of answering "don't know" (exact: 1 - 0.7 - 0.15
        is 0.15, not 0.15000000000000002)."""
        return float(self.designed_dont_know)

    @property
    def answer_rate(self) -> float:
        """p + q, the probability of a yes/no answer."""
        return self.p + self.q

    @property
    def epsilon_optimistic(self) -> float:
        """eps_O(p, q): the smallest loss among the redistributions Q_lambda (Section 3.2).

        Q_lambda is Warner's mechanism with truth probability
        p + lambda (1 - p - q) in [p, 1 - q]; its loss |ln(t / (1 - t))| is
        smallest at lambda = 0 when p >= 1/2, and 0 when p < 1/2.
        """
        return math.log(self.p / (1 - self.p)) if self.p > 0.5 else 0.0

    def probabilities(self, pi: float | np.ndarray) -> tuple:
        """(q1, q2, q3): shares of yes, no and don't know when the prevalence is pi."""
        pi = np.asarray(pi, dtype=float)
        q1 = pi * self.p + (1 - pi) * self.q
        q2 = pi * self.q + (1 - pi) * self.p
        q3 = np.full_like(q1, self.dont_know)
        if q1.ndim == 0:
            return float(q1), float(q2), float(q3)
        return q1, q2, q3

    # -- Walley's redistributions Q_lambda (Section 3.2) -----------------------------

    def redistribute(self, *, lam: float) -> GeneralizedWarner:
        """Q_lambda: the don't-know mass goes to the truthful answer with weight lambda.

        Q_lambda is Warner's mechanism with truth probability p + lambda (1 - p - q)
        and lie probability q + (1 - lambda)(1 - p - q). The variances of the extreme
        ones, nu_W and nu_O, are :func:`surveykit.estimation.exact.nu_walley` and
        :func:`~surveykit.estimation.exact.nu_optimistic`.
        """
        lam = _check_probability("lam", lam)
        truth = self.p + lam * self.dont_know
        return GeneralizedWarner(p=truth, q=1.0 - truth)


@dataclass(frozen=True, kw_only=True)
class Warner(DontKnowBranch, Design):
    """Warner's (1965) randomized response, with the paper's optional "don't know" branch.

    With probability p the respondent answers the statement "I have done X",
    otherwise "I have not done X"; the analyst sees only yes or no::

                    true yes        true no
        yes      p (1 - d)       (1 - p)(1 - d)
        no       (1 - p)(1 - d)  p (1 - d)
        don't know   d               d

    It is the generalized Warner mechanism with truthful p (1 - d) and
    opposite (1 - p)(1 - d). p = 1/2 identifies nothing and is refused.

    >>> Warner(p=0.75)
    Warner(p=0.75, dont_know=0.0)
    >>> round(Warner(p=0.75).epsilon_shafer, 4)  # ln 3
    1.0986
    """

    model: ClassVar[str] = "warner"
    summary: ClassVar[str] = "answer the statement (p) or its negation (1 - p)"

    @classmethod
    def _natural_budget_family(cls, parameters: dict[str, object]) -> BudgetFamily:
        return one_free_entry(cls.model, parameters, "p", 0.5, 1.0)

    p: float
    dont_know: float = 0.0

    def __post_init__(self) -> None:
        p = _check_probability("p", self.p)
        if p == 0.5:
            raise ParameterError(
                "p (0.5) must not be 0.5: respondents with and without the trait would "
                "then answer yes equally often and the answers identify nothing")
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "dont_know", float(check_dont_know(self.dont_know)))

    def parameters(self) -> dict[str, object]:
        return {"p": self.p, "dont_know": self.dont_know}

    def _build(self) -> Structure:
        p = as_fraction(self.p)
        d = self.designed_dont_know
        answers = np.array([[float(p), float(1 - p)], [float(1 - p), float(p)]])
        matrix = with_dont_know(answers[None], d)[0]
        instructions = instructions_with_dont_know(
            [Instruction("truthful", p), Instruction("opposite", 1 - p)], d)
        return _binary_structure(matrix, instructions)


@dataclass(frozen=True, kw_only=True)
class Kuk(DontKnowBranch, Design):
    """Kuk's (1990) card design, with ``repetitions`` draws and the optional "don't know" branch.

    A respondent with the trait draws from deck 1 (share p[1] of red cards),
    one without from deck 2 (share p[2]), puts the card back, repeats
    ``repetitions`` times and reports the number of red cards: responses
    "0", "1", ..., str(repetitions), Binomial(repetitions, p[1]) or
    Binomial(repetitions, p[2]). With one draw the responses are "yes" (red)
    and "no" (black). Equal shares identify nothing and are refused.

    >>> Kuk(p=[0.7, 0.3], repetitions=2).answer_labels
    ('0', '1', '2')
    """

    model: ClassVar[str] = "kuk"
    summary: ClassVar[str] = ("two decks of cards (red shares p[1] for yes, p[2] for no), "
                              "report the number of red cards")
    budget_example: ClassVar[str | None] = (
        "p=?,0.3 (deck 1's red share for the budget, given deck 2's)")

    p: tuple[float, float]
    repetitions: int = 1
    dont_know: float = 0.0

    def __post_init__(self) -> None:
        p = check_probabilities("p", self.p, 2)
        if p[0] == p[1]:
            raise ParameterError(
                f"p ({list(p)!r}): the two decks must have different shares of red cards; "
                "with equal shares the cards drawn say nothing about the trait")
        reps = self.repetitions
        if isinstance(reps, bool) or not isinstance(reps, int | np.integer) \
                or not 1 <= reps <= MAX_KUK_CARDS:
            raise ParameterError(
                f"repetitions ({reps!r}) must be a whole number of draws from 1 to "
                f"{MAX_KUK_CARDS}")
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "repetitions", int(reps))
        object.__setattr__(self, "dont_know", float(check_dont_know(self.dont_know)))

    def repeated_draw(self) -> tuple[tuple[Fraction, ...], int] | None:
        """The red share of each deck (per true state) and the number of draws, when
        respondents draw more than once.

        >>> Kuk(p=[0.7, 0.3], repetitions=2).repeated_draw()
        ((Fraction(7, 10), Fraction(3, 10)), 2)
        """
        if self.repetitions == 1:
            return None
        return tuple(as_fraction(share) for share in self.p), self.repetitions

    def parameters(self) -> dict[str, object]:
        return {"p": list(self.p), "repetitions": self.repetitions, "dont_know": self.dont_know}

    def _build(self) -> Structure:
        k = self.repetitions
        red = [as_fraction(share) for share in self.p]
        labels = (YES, NO) if k == 1 else tuple(str(i) for i in range(k + 1))

        def binomial(share: Fraction) -> list[Fraction]:
            # one draw: "yes" (red) first, then "no"
            if k == 1:
                return [share, 1 - share]
            return [Fraction(math.comb(k, i)) * share**i * (1 - share) ** (k - i)
                    for i in range(k + 1)]

        columns = [binomial(red[0]), binomial(red[1])]
        d = self.designed_dont_know
        answers = np.array([[float(c[i]) for c in columns] for i in range(len(labels))])
        matrix = with_dont_know(answers[None], d)
        # slips draw, ahead of time, the response for either true state
        table = [Instruction("answer_table", a * b, table=((YES, ra), (NO, rb)))
                 for ra, a in zip(labels, columns[0], strict=True)
                 for rb, b in zip(labels, columns[1], strict=True)]
        instructions = instructions_with_dont_know(table, d)
        responses = (*labels, DONT_KNOW)
        return Structure(
            states=BINARY_STATES, categories=BINARY_STATES, responses=responses,
            groups=("1",), base=readonly(matrix),
            slopes=readonly(np.zeros((0, 1, len(responses), 2))),
            nuisance=(), protocol=Protocol("per_state", (instructions,)),
            privacy_states=BINARY_STATES, state_parameters={})


def estimate_redistributed(*, yes: int, n: int, mechanism: GeneralizedWarner, lam: float) -> float:
    """Estimator of pi under Q_lambda (Section 3.2; docs/errata.md, item 6).

    pi_hat = (n1/n - (1 - lambda)(1 - p - q) - q) / (p - q + (2 lambda - 1)(1 - p - q))

    Here every respondent answers yes or no; ``yes`` is n1 out of ``n``.
    """
    n = check_sample_size(n)
    lam = _check_probability("lam", lam)
    r = mechanism.dont_know
    denominator = mechanism.p - mechanism.q + (2 * lam - 1) * r
    if denominator == 0:
        raise ParameterError(f"lam ({lam}) makes Q_lambda uninformative (truth probability 1/2)")
    return (yes / n - (1 - lam) * r - mechanism.q) / denominator


def generalized_warner_equivalent(design: Design) -> GeneralizedWarner | None:
    """The generalized Warner design with the same matrix, for symmetric one-group yes/no
    designs (Warner with or without don't know, crosswise); None for the others.

    >>> generalized_warner_equivalent(Warner(p=0.75))
    GeneralizedWarner(p=0.75, q=0.25)
    """
    if isinstance(design, GeneralizedWarner):
        return design
    if not design.is_simple_binary:
        return None
    matrix = design.matrix()[0]
    yes = design.state_labels.index(YES)
    truthful, opposite = float(matrix[0, yes]), float(matrix[0, 1 - yes])
    symmetric = np.isclose(matrix[1, 1 - yes], truthful) and np.isclose(matrix[1, yes], opposite)
    if not symmetric or truthful == opposite:
        return None
    # a design that says "yes" more often for "no" (crosswise with p < 1/2) is the same
    # design with its answers renamed: same privacy, same precision
    return GeneralizedWarner(p=max(truthful, opposite), q=min(truthful, opposite))
