"""Where surveykit's randomness comes from: the operating system's secure generator by default.

The draws of respondent ids, instructions and groups take an ``rng`` argument: None
or :class:`SystemEntropy` (``os.urandom``: nobody can recompute its draws), or a seeded
``numpy.random.Generator`` from :func:`seeded_source`, for reproducible tests only
(whoever uses one shows :data:`SEED_WARNING`). :func:`uniform_integers` turns either into
uniform integers on [0, 2^bits). The randomizer (:mod:`surveykit.collection.randomizer`)
and the respondent ids (:mod:`surveykit.respondent_ids`) draw through it.
"""

from __future__ import annotations

import os

import numpy as np

from surveykit.errors import ParameterError

__all__ = ["SEED_WARNING", "RandomSource", "SystemEntropy", "seeded_source", "uniform_integers"]

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

    >>> a = uniform_integers(seeded_source(1), 5, bits=53)
    >>> b = uniform_integers(seeded_source(1), 5, bits=53)
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
