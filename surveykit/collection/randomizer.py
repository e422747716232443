"""Draw each respondent's private codes: T (truthful), L (opposite), D (don't know).

For a question with the generalized Warner mechanism Q2x3 (paper, Section 3,
before Eq. 2) a respondent is told to answer truthfully with probability p, to
give the opposite answer with probability q and to say "don't know" with
probability 1 - p - q. This module draws those instructions and knows nothing
but the mechanism (no storage, no rendering).

Randomness is injected. The default source is :class:`SystemEntropy`, the
operating system's cryptographically secure generator (``os.urandom``): nobody
can recompute its codes. A seeded ``numpy.random.Generator`` (see
:func:`seeded_source`) is accepted for reproducible tests only; anybody who
knows the seed can recompute every code, so :data:`SEED_WARNING` must be shown
to the user whenever one is used.

How a code is drawn (exact to 2^-53): a uniform integer U on [0, 2^53) is
compared with the integer thresholds t1 = round(p 2^53) and
t2 = round((p + q) 2^53), computed exactly with ``fractions.Fraction`` from the
floating-point p and q:

    code = T if U < t1,  L if t1 <= U < t2,  D otherwise,

so P(T) = t1 / 2^53 differs from p by at most 2^-54 (and likewise for L, D).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from surveykit.designs.warner import GeneralizedWarner
from surveykit.errors import ParameterError

__all__ = [
    "CODES",
    "SEED_WARNING",
    "RandomSource",
    "SystemEntropy",
    "code_thresholds",
    "draw_codes",
    "draw_code_matrix",
    "seeded_source",
    "tally_codes",
    "uniform_integers",
]

#: The three codes, in the order of their probabilities (p, q, 1 - p - q).
CODES: tuple[str, str, str] = ("T", "L", "D")
_CODE_ARRAY = np.array(CODES)

_GRID_BITS = 53
_GRID = 1 << _GRID_BITS

SEED_WARNING = (
    "Warning: --seed makes the respondent ids and codes reproducible: anyone who knows "
    "the seed can recompute every id and every respondent's code. Use it only for tests "
    "and demonstrations, never in the field."
)


class SystemEntropy:
    """The operating system's cryptographically secure generator (``os.urandom``).

    The default randomness of every function here. It has no state and no
    seed: its output cannot be reproduced, which is the point.

    >>> SystemEntropy().uniform_integers(3, bits=53).shape
    (3,)
    """

    def uniform_integers(self, size: int | tuple[int, ...], *, bits: int) -> np.ndarray:
        """Independent uniform integers on [0, 2^bits), bits <= 64, as uint64."""
        count = int(np.prod(size))
        raw = np.frombuffer(os.urandom(8 * count), dtype="<u8").reshape(size)
        # The top `bits` bits of a uniform 64-bit word are uniform on [0, 2^bits).
        return raw >> np.uint64(64 - bits)

    def __repr__(self) -> str:
        return "SystemEntropy()"


RandomSource = SystemEntropy | np.random.Generator


def seeded_source(seed: int) -> np.random.Generator:
    """A reproducible source for tests; see :data:`SEED_WARNING` before using it.

    >>> a = draw_codes(GeneralizedWarner(p=0.6, q=0.2), 5, rng=seeded_source(1))
    >>> b = draw_codes(GeneralizedWarner(p=0.6, q=0.2), 5, rng=seeded_source(1))
    >>> bool((a == b).all())
    True
    """
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ParameterError(f"seed ({seed!r}) must be a whole number >= 0")
    return np.random.default_rng(int(seed))


def uniform_integers(rng: RandomSource | None, size: int | tuple[int, ...], *,
                     bits: int) -> np.ndarray:
    """Uniform integers on [0, 2^bits) from ``rng`` (None: :class:`SystemEntropy`)."""
    if not 1 <= bits <= 64:
        raise ParameterError(f"bits ({bits}) must be between 1 and 64")
    if rng is None:
        rng = SystemEntropy()
    if isinstance(rng, SystemEntropy):
        return rng.uniform_integers(size, bits=bits)
    if isinstance(rng, np.random.Generator):
        if bits == 64:
            return rng.integers(0, np.iinfo(np.uint64).max, size=size, dtype=np.uint64,
                                endpoint=True)
        return rng.integers(0, 1 << bits, size=size, dtype=np.uint64)
    raise ParameterError(
        f"rng ({rng!r}) must be None (operating-system entropy), SystemEntropy() "
        "or a numpy.random.Generator (seeded, for tests only)"
    )


def code_thresholds(mechanism: GeneralizedWarner) -> tuple[int, int]:
    """The integer thresholds (t1, t2) = (round(p 2^53), round((p + q) 2^53)).

    Computed exactly from the floats p and q; P(T) = t1 / 2^53,
    P(L) = (t2 - t1) / 2^53, P(D) = 1 - t2 / 2^53.

    >>> code_thresholds(GeneralizedWarner(p=0.5, q=0.25)) == (2**52, 3 * 2**51)
    True
    """
    kinds = {i.kind: i.probability for i in mechanism.protocol.for_group(0)}
    p = kinds.get("truthful", Fraction(0))
    q = kinds.get("opposite", Fraction(0))
    t1 = round(p * _GRID)
    t2 = min(_GRID, round((p + q) * _GRID))
    return t1, t2


def _codes_from_uniforms(mechanism: GeneralizedWarner, uniforms: np.ndarray) -> np.ndarray:
    t1, t2 = code_thresholds(mechanism)
    index = (uniforms >= np.uint64(t1)).astype(np.int8)
    index += uniforms >= np.uint64(t2)
    return _CODE_ARRAY[index]


def draw_codes(mechanism: GeneralizedWarner, size: int, *,
               rng: RandomSource | None = None) -> np.ndarray:
    """Draw ``size`` independent codes for one question: an array of "T", "L", "D".

    P(T) = p, P(L) = q, P(D) = 1 - p - q, each exact to 2^-54 (module docstring).
    ``rng=None`` uses operating-system entropy.

    >>> draw_codes(GeneralizedWarner(p=1.0, q=0.0), 3).tolist()
    ['T', 'T', 'T']
    """
    size = _check_size(size)
    return _codes_from_uniforms(mechanism, uniform_integers(rng, size, bits=_GRID_BITS))


def draw_code_matrix(mechanisms: Sequence[GeneralizedWarner], size: int, *,
                     rng: RandomSource | None = None) -> np.ndarray:
    """Codes for ``size`` respondents and each question: shape (size, len(mechanisms)).

    Column j follows ``mechanisms[j]``; every entry is drawn independently.

    >>> draw_code_matrix([GeneralizedWarner(p=0.6, q=0.2)] * 2, 4).shape
    (4, 2)
    """
    size = _check_size(size)
    uniforms = uniform_integers(rng, (size, len(mechanisms)), bits=_GRID_BITS)
    codes = np.empty((size, len(mechanisms)), dtype=_CODE_ARRAY.dtype)
    for j, mechanism in enumerate(mechanisms):
        codes[:, j] = _codes_from_uniforms(mechanism, uniforms[:, j])
    return codes


def tally_codes(codes: np.ndarray) -> dict[str, int]:
    """Counts of "T", "L" and "D" in an array of codes (zeros included).

    >>> tally_codes(np.array(["T", "D", "T"]))
    {'T': 2, 'L': 0, 'D': 1}
    """
    return {code: int(np.count_nonzero(codes == code)) for code in CODES}


def _check_size(size: object) -> int:
    if isinstance(size, bool) or not isinstance(size, int | np.integer) or size < 0:
        raise ParameterError(f"size ({size!r}) must be a whole number >= 0")
    return int(size)
