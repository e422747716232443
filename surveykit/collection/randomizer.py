"""Draw each respondent's private instruction per question, and each respondent's group.

A design's protocol (:attr:`surveykit.designs.base.Design.protocol`) lists,
per group, the instructions a respondent may be told to follow ("answer
truthfully", "answer yes whatever the truth is", "answer this other
question", "if your true answer is yes, answer 2", ...) with their exact
probabilities (``fractions.Fraction``). This module draws one instruction per
respondent and question from that list, and one group per respondent for
multi-group surveys. It knows nothing but the designs (no storage, no
rendering).

Randomness is injected. The default source is :class:`SystemEntropy`, the
operating system's cryptographically secure generator (``os.urandom``): nobody
can recompute its draws. A seeded ``numpy.random.Generator`` (see
:func:`seeded_source`) is accepted for reproducible tests only; anybody who
knows the seed can recompute every draw, so :data:`SEED_WARNING` must be shown
to the user whenever one is used.

How an instruction is drawn (exact integer arithmetic): with probabilities
p_1, ..., p_m (exact fractions, summing to s = 1), the cumulative sums
C_i = p_1 + ... + p_i become integer thresholds on the grid of 2^53,

    t_i = round(C_i / s * 2^53),   t_m = 2^53 exactly,

computed with ``fractions.Fraction``, and a uniform integer U on [0, 2^53)
picks instruction i when t_(i-1) <= U < t_i. So every cumulative probability
t_i / 2^53 is within 2^-54 of C_i, every instruction's probability within
2^-53 of p_i, and both are exact when the p_i are dyadic with denominator up
to 2^53 (1/2, 3/8, ...). (s differs from 1 only for a custom matrix typed as
decimals, whose columns must add up to 1 within 1e-9.) These thresholds are
the only ones surveykit computes: the web page's browser draws with them
(:mod:`surveykit.collection.webform`) and device-randomized XLSForms compare
``random() * 2^53`` with them (:mod:`surveykit.collection.xlsform`).

How a numeric question's scrambling number is drawn (:func:`draw_numbers`): a card of a
deck (or a sum of dice) with the deck's exact probabilities on the same 2^53 grid; a
continuous scrambler (uniform, normal, exponential, Laplace) as its inverse distribution
function at (U + 1/2) / 2^53, rounded to ``decimals`` decimals (what a slip prints; see
docs/questionnaires.md, "Numeric questions", for what the rounding does to the design).

How groups are drawn: a *balanced* assignment (every group gets n // G
respondents and n mod G groups, chosen at random, one more) in an order given
by a uniformly random permutation; the permutation sorts distinct 64-bit
random keys (a tie, probability below n^2 / 2^65, draws all keys again), so
every order is exactly equally likely.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from surveykit.designs.base import Design, Instruction
from surveykit.designs.scramblers import Deck, Exponential, Laplace, Normal, Scrambler, Uniform
from surveykit.errors import ParameterError
from surveykit.randomness import (
    SEED_WARNING,
    RandomSource,
    SystemEntropy,
    seeded_source,
    uniform_integers,
)

__all__ = [
    "GRID_BITS",
    "SEED_WARNING",
    "RandomSource",
    "SystemEntropy",
    "balanced_groups",
    "draw_instruction_matrix",
    "draw_instructions",
    "draw_numbers",
    "instruction_indices",
    "instruction_thresholds",
    "probability_thresholds",
    "question_protocols",
    "random_permutation",
    "seeded_source",
    "uniform_integers",
]

#: Bits of the grid the thresholds live on.
GRID_BITS = 53
_GRID = 1 << GRID_BITS
# A custom matrix typed as decimals may add up to 1 within this slack.
_SUM_TOLERANCE = Fraction(1, 10**9)

# -- instructions ------------------------------------------------------------------------


def instruction_thresholds(instructions: Sequence[Instruction]) -> tuple[int, ...]:
    """The integer thresholds t_i = round(C_i / s 2^53) of the cumulative probabilities.

    Instruction i is drawn when t_(i-1) <= U < t_i for U uniform on [0, 2^53)
    (module docstring); the last threshold is 2^53.

    >>> from surveykit.designs.warner import GeneralizedWarner
    >>> instruction_thresholds(GeneralizedWarner(p=0.5, q=0.25).protocol.for_group(0)) \\
    ...     == (2**52, 3 * 2**51, 2**53)
    True
    """
    if not instructions:
        raise ParameterError(
            "the design has no instructions to draw (a custom matrix with more than 4096 "
            "combinations of responses); give respondents fewer responses per state")
    return probability_thresholds([Fraction(i.probability) for i in instructions])


def probability_thresholds(probabilities: Sequence[Fraction]) -> tuple[int, ...]:
    """The integer thresholds t_i = round(C_i / s 2^53) of exact probabilities adding up to
    s = 1 (within 1e-9): outcome i is drawn when t_(i-1) <= U < t_i (module docstring).
    Instructions (:func:`instruction_thresholds`) and the cards of a deck or the totals of
    dice that the web page draws for numeric questions (:mod:`surveykit.collection.webform`)
    both use them.

    >>> probability_thresholds([Fraction(1, 6)] * 6)[:2]
    (1501199875790165, 3002399751580331)
    """
    if any(p < 0 for p in probabilities):
        raise ParameterError(f"instruction probabilities ({[str(p) for p in probabilities]}) "
                             "must be >= 0")
    total = sum(probabilities, Fraction(0))
    if abs(total - 1) > _SUM_TOLERANCE:
        raise ParameterError(
            f"instruction probabilities add up to {float(total):.12g}, not 1; every respondent "
            "must get exactly one instruction")
    return _thresholds(probabilities, total)


def _thresholds(probabilities: Sequence[Fraction], total: Fraction = Fraction(1)
                ) -> tuple[int, ...]:
    return tuple(round(c / total * _GRID) for c in itertools.accumulate(probabilities))


def instruction_indices(instructions: Sequence[Instruction], uniforms: np.ndarray
                        ) -> np.ndarray:
    """The instruction each uniform integer on [0, 2^53) picks: i when t_(i-1) <= U < t_i.

    >>> from surveykit.designs.warner import GeneralizedWarner
    >>> gw = GeneralizedWarner(p=0.5, q=0.25).protocol.for_group(0)
    >>> instruction_indices(gw, np.array([0, 2**52 - 1, 2**52, 2**53 - 1], dtype=np.uint64))
    array([0, 0, 1, 2])
    """
    thresholds = np.array(instruction_thresholds(instructions), dtype=np.uint64)
    return np.searchsorted(thresholds, uniforms, side="right")


def draw_instructions(instructions: Sequence[Instruction], size: int, *,
                      rng: RandomSource | None = None) -> np.ndarray:
    """Draw ``size`` independent instructions: indices into ``instructions``.

    P(index i) = probability of instruction i, to 2^-53 (module docstring).
    ``rng=None`` uses operating-system entropy.

    >>> from surveykit.designs.forced import ForcedResponse
    >>> protocol = ForcedResponse(p=[0.0, 0.5], dont_know=0.5).protocol.for_group(0)
    >>> [i.code for i in protocol]
    ['truthful', 'say:yes', 'dont_know']
    >>> sorted({protocol[i].code for i in draw_instructions(protocol, 1000)})
    ['dont_know', 'say:yes', 'truthful']
    """
    size = _check_size(size)
    uniforms = uniform_integers(rng, size, bits=GRID_BITS)
    return instruction_indices(instructions, uniforms)


def question_protocols(design: Design, groups: int) -> tuple[tuple[Instruction, ...], ...]:
    """The instructions a respondent of each of the survey's ``groups`` gets for ``design``.

    A multi-group design gives group g its own instructions; a one-group
    design gives every group the same.

    >>> from surveykit.designs.detection import StochasticLieDetector
    >>> [[i.code for i in group] for group in question_protocols(
    ...     StochasticLieDetector(p=[0.25, 0.75]), 2)]
    [['truthful', 'say:yes'], ['truthful', 'say:yes']]
    """
    own = len(design.group_names)
    if own == 1:
        return (design.protocol.for_group(0),) * groups
    if own != groups:
        raise ParameterError(
            f"design {design.model!r} has {own} groups but the survey has {groups}; every "
            "multi-group question of a survey must have the survey's groups")
    return tuple(design.protocol.for_group(g) for g in range(groups))


def draw_instruction_matrix(designs: Sequence[Design], groups: np.ndarray | None = None, *,
                            size: int | None = None, rng: RandomSource | None = None
                            ) -> np.ndarray:
    """One instruction per respondent and question: indices of shape (respondents, questions).

    ``groups`` holds each respondent's survey group (0-based; None: one group,
    give ``size``). Entry (r, j) indexes
    ``question_protocols(designs[j], G)[groups[r]]``; every entry is drawn
    independently.

    >>> from surveykit.designs.warner import GeneralizedWarner
    >>> draw_instruction_matrix([GeneralizedWarner(p=0.6, q=0.2)] * 2, size=4).shape
    (4, 2)
    """
    if groups is None:
        groups = np.zeros(_check_size(size), dtype=np.intp)
    groups = np.asarray(groups)
    group_total = max([1] + [len(d.group_names) for d in designs])
    if groups.size and not 0 <= int(groups.min()) <= int(groups.max()) < group_total:
        raise ParameterError(
            f"groups must be group indices 0 to {group_total - 1} (the designs have "
            f"{group_total} group(s)); got {int(groups.min())} to {int(groups.max())}")
    uniforms = uniform_integers(rng, (groups.size, len(designs)), bits=GRID_BITS)
    drawn = np.zeros((groups.size, len(designs)), dtype=np.int16)
    masks = [groups == g for g in range(group_total)] if group_total > 1 else None
    for j, design in enumerate(designs):
        protocols = question_protocols(design, group_total)
        if masks is None or len(set(protocols)) == 1:
            drawn[:, j] = instruction_indices(protocols[0], uniforms[:, j])
            continue
        for mask, protocol in zip(masks, protocols, strict=True):
            drawn[mask, j] = instruction_indices(protocol, uniforms[mask, j])
    return drawn


# -- numbers -----------------------------------------------------------------------------


def draw_numbers(scrambler: Scrambler, size: int, *, decimals: int | None = None,
                 rng: RandomSource | None = None) -> tuple[Fraction, ...]:
    """``size`` independent draws of a numeric question's scrambling number, exactly as
    printed: a card of a :class:`~surveykit.designs.scramblers.Deck` (exact probabilities on
    the 2^53 grid, as instructions are drawn), or a continuous scrambler's inverse
    distribution function at (U + 1/2) / 2^53 rounded to ``decimals`` decimals (required for
    continuous scramblers; round half to even). ``rng=None`` uses operating-system entropy.

    >>> from surveykit.designs.scramblers import Deck, Normal
    >>> sorted(set(draw_numbers(Deck.from_cards([0, 10]), 50)))
    [Fraction(0, 1), Fraction(10, 1)]
    >>> all(x.denominator in (1, 2, 5, 10) for x in draw_numbers(Normal(mu=0, sigma=1), 20,
    ...                                                          decimals=1))
    True
    """
    size = _check_size(size)
    uniforms = uniform_integers(rng, size, bits=GRID_BITS)
    if isinstance(scrambler, Deck):
        points = scrambler.points()
        thresholds = np.array(_thresholds([p for _, p in points]), dtype=np.uint64)
        return tuple(points[i][0] for i in np.searchsorted(thresholds, uniforms, side="right"))
    if decimals is None or isinstance(decimals, bool) or not 0 <= decimals <= 12:
        raise ParameterError(f"decimals ({decimals!r}) must be a whole number from 0 to 12 "
                             f"for a continuous scrambler ({scrambler.describe()})")
    u = (uniforms.astype(np.float64) + 0.5) / float(_GRID)
    values = _inverse_cdf(scrambler, u)
    scale = 10 ** decimals
    return tuple(Fraction(int(n), scale) for n in np.rint(values * scale))


def _inverse_cdf(scrambler: Scrambler, u: np.ndarray) -> np.ndarray:
    """The quantile function of a continuous scrambler at ``u`` in (0, 1)."""
    if isinstance(scrambler, Uniform):
        return scrambler.low + u * (scrambler.high - scrambler.low)
    if isinstance(scrambler, Normal):
        from scipy.special import ndtri

        return scrambler.mu + scrambler.sigma * ndtri(u)
    if isinstance(scrambler, Exponential):
        return -scrambler.mu * np.log1p(-u)
    if isinstance(scrambler, Laplace):
        centred = u - 0.5
        return scrambler.mu - scrambler.scale * np.sign(centred) * np.log1p(
            -2 * np.abs(centred))
    raise ParameterError(
        f"cannot draw from {scrambler.describe()}: give its distribution (a list of card "
        "values, \"die\", \"dice\", \"uniform\", \"normal\", \"exponential\" or "
        "\"laplace\")")


# -- groups -------------------------------------------------------------------------------


def random_permutation(size: int, *, rng: RandomSource | None = None) -> np.ndarray:
    """A uniformly random permutation of 0, ..., size - 1 (argsort of distinct 64-bit keys).

    >>> sorted(random_permutation(5).tolist())
    [0, 1, 2, 3, 4]
    """
    size = _check_size(size)
    while True:
        keys = uniform_integers(rng, size, bits=64)
        order = np.argsort(keys, kind="stable")
        ranked = keys[order]
        if size < 2 or bool(np.all(ranked[1:] != ranked[:-1])):
            return order


def balanced_groups(size: int, count: int, *, rng: RandomSource | None = None) -> np.ndarray:
    """Each of ``size`` respondents' group (0-based), balanced over ``count`` groups.

    Every group gets size // count respondents; size mod count groups, chosen
    at random, get one more; the order is a uniformly random permutation.

    >>> groups = balanced_groups(7, 2)
    >>> sorted(np.bincount(groups, minlength=2).tolist())
    [3, 4]
    """
    size = _check_size(size)
    if isinstance(count, bool) or not isinstance(count, int | np.integer) or count < 1:
        raise ParameterError(f"count ({count!r}) must be a whole number of groups >= 1")
    if count == 1:
        return np.zeros(size, dtype=np.intp)
    extra = random_permutation(count, rng=rng)[: size % count]
    labels = np.concatenate([np.tile(np.arange(count), size // count), np.sort(extra)])
    return labels[random_permutation(size, rng=rng)].astype(np.intp)


def _check_size(size: object) -> int:
    if isinstance(size, bool) or not isinstance(size, int | np.integer) or size < 0:
        raise ParameterError(f"size ({size!r}) must be a whole number >= 0")
    return int(size)
