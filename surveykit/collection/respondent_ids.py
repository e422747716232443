"""Unguessable respondent ids that are easy to read aloud and type.

An id is 14 symbols of Crockford's base32 alphabet ``0-9 A-Z`` without
``I L O U`` (no 1/I/L or 0/O confusion, no accidental words), printed in
groups ``XXXX-XXXX-XXXX-XX``. Each symbol carries 5 bits, so an id carries
70 bits of entropy: guessing any one of a million issued ids takes about
2^50 tries. With the default randomness (operating-system entropy) nobody can
predict or recompute the ids.

:func:`normalize_respondent_id` reads an id the way people type it (any case,
with or without hyphens or spaces, ``I``/``L`` for ``1`` and ``O`` for ``0``,
as Crockford's decoding rules say) and returns the canonical form, so imports
can compare typed ids with issued ones.
"""

from __future__ import annotations

import re

import numpy as np

from surveykit.collection.randomizer import RandomSource, uniform_integers
from surveykit.errors import ParameterError

__all__ = [
    "ID_ALPHABET",
    "ID_BITS",
    "ID_GROUPS",
    "ID_LENGTH",
    "ID_PATTERN",
    "new_respondent_ids",
    "normalize_respondent_id",
]

#: Crockford's base32 symbols: digits and capitals without I, L, O, U.
ID_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
#: How the 14 symbols are grouped for printing.
ID_GROUPS: tuple[int, ...] = (4, 4, 4, 2)
ID_LENGTH = sum(ID_GROUPS)
ID_BITS = 5 * ID_LENGTH
#: A canonical id, e.g. ``7KQ2-M9XD-4FRT-8B``.
ID_PATTERN = re.compile(
    "-".join(f"[{ID_ALPHABET}]{{{n}}}" for n in ID_GROUPS).join(("^", "$"))
)

_SYMBOLS = np.array(list(ID_ALPHABET))
# Crockford's decoding: lower case is upper case; I and L read as 1, O as 0.
_TYPED = str.maketrans({"I": "1", "L": "1", "O": "0"})
_SEPARATORS = re.compile(r"[\s\-]+")
# Ids are redrawn when they collide; with 70 bits this practically never loops.
_MAX_ROUNDS = 100


def _group(symbols: str) -> str:
    parts, start = [], 0
    for n in ID_GROUPS:
        parts.append(symbols[start:start + n])
        start += n
    return "-".join(parts)


def new_respondent_ids(count: int, *, rng: RandomSource | None = None,
                       exclude: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """``count`` distinct new ids, none of them in ``exclude``.

    Each id is 14 independent uniform base32 symbols (70 bits); ``rng=None``
    uses operating-system entropy (:class:`surveykit.collection.randomizer.SystemEntropy`).

    >>> ids = new_respondent_ids(3)
    >>> len(set(ids)), all(ID_PATTERN.match(i) for i in ids)
    (3, True)
    """
    if isinstance(count, bool) or not isinstance(count, int | np.integer) or count < 0:
        raise ParameterError(f"count ({count!r}) must be a whole number >= 0")
    issued: dict[str, None] = {}
    for _ in range(_MAX_ROUNDS):
        missing = int(count) - len(issued)
        if missing == 0:
            return list(issued)
        symbols = _SYMBOLS[uniform_integers(rng, (missing, ID_LENGTH), bits=5)]
        for row in symbols:
            new_id = _group("".join(row))
            if new_id not in exclude:
                issued.setdefault(new_id, None)
    raise ParameterError(  # only a broken random source gets here
        f"could not draw {count} distinct ids in {_MAX_ROUNDS} rounds: the random source "
        "repeats itself"
    )


def normalize_respondent_id(text: str) -> str:
    """The canonical form of a typed id, or a ParameterError saying what is wrong.

    >>> normalize_respondent_id(" 7kq2 m9xd 4frt 8b ")
    '7KQ2-M9XD-4FRT-8B'
    >>> normalize_respondent_id("7KQ2-M9XD-4FRT-8i")  # typed I for 1
    '7KQ2-M9XD-4FRT-81'
    """
    symbols = _SEPARATORS.sub("", str(text)).upper().translate(_TYPED)
    bad = sorted({c for c in symbols if c not in ID_ALPHABET})
    if bad:
        raise ParameterError(
            f"respondent id {text!r} contains {''.join(bad)!r}; ids use only "
            f"{ID_ALPHABET} (Crockford base32, e.g. 7KQ2-M9XD-4FRT-8B)"
        )
    if len(symbols) != ID_LENGTH:
        raise ParameterError(
            f"respondent id {text!r} has {len(symbols)} symbols, expected {ID_LENGTH} "
            "(e.g. 7KQ2-M9XD-4FRT-8B)"
        )
    return _group(symbols)
