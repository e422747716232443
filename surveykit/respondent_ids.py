"""Unguessable respondent ids that are easy to read aloud and type, with a check symbol.

An id is 14 random symbols of Crockford's base32 alphabet ``0-9 A-Z`` without
``I L O U`` (no 1/I/L or 0/O confusion, no accidental words) followed by
Crockford's check symbol, printed in groups ``XXXX-XXXX-XXXX-XXC``, e.g.
``7KQ2-M9XD-4FRT-8BT``. The random symbols carry 5 bits each, 70 bits in all
(69.8 after the redraw below): guessing any one of a million issued ids takes
about 2^50 tries. With the default randomness (operating-system entropy)
nobody can predict or recompute the ids.

The check symbol (Douglas Crockford, "Base32", https://www.crockford.com/base32.html)
is the value of the 14 symbols, read as a base-32 number, modulo 37, written
with the 32 symbols and ``* ~ $ = U`` for 32 to 36. Because 37 is prime and
32 is not a multiple of it, a single mistyped symbol always changes the
remainder, and so does swapping two adjacent different symbols (their
difference times 31 times a power of 32 is never a multiple of 37): every
such typo is caught. Ids whose check value would need one of the five extra
symbols are drawn again, so issued ids use only the 32 symbols people can type
on any keyboard; those symbols are still read when typed.

Ids issued before the check symbol (14 symbols, ``XXXX-XXXX-XXXX-XX``) stay
valid: they are recognized by their length and compared as they are.

:func:`normalize_respondent_id` reads an id the way people type it (any case,
with or without hyphens or spaces, ``I``/``L`` for ``1`` and ``O`` for ``0``,
as Crockford's decoding rules say) and returns the canonical form, so imports
can compare typed ids with issued ones; :func:`diagnose_unknown_id` says why an
id is not among the issued ones: a typo the check symbol catches, an id that
was never issued, or text that is no id at all, and names the issued id one
edit away when there is exactly one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable

import numpy as np

from surveykit.errors import ParameterError
from surveykit.randomness import RandomSource, uniform_integers

__all__ = [
    "CHECK_ALPHABET",
    "ID_ALPHABET",
    "ID_BITS",
    "ID_EXAMPLE",
    "ID_GROUPS",
    "ID_LENGTH",
    "ID_PATTERN",
    "LEGACY_GROUPS",
    "LEGACY_LENGTH",
    "IdDiagnosis",
    "RespondentIdTypo",
    "check_symbol",
    "diagnose_unknown_id",
    "new_respondent_ids",
    "normalize_respondent_id",
]

#: Crockford's base32 symbols: digits and capitals without I, L, O, U.
ID_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
#: The check symbol's alphabet: the 32 symbols, then * ~ $ = U for the values 32 to 36.
CHECK_ALPHABET = ID_ALPHABET + "*~$=U"
#: Random symbols of an id (the check symbol follows them).
RANDOM_LENGTH = 14
#: How the 15 symbols (14 random and the check symbol) are grouped for printing.
ID_GROUPS: tuple[int, ...] = (4, 4, 4, 3)
ID_LENGTH = sum(ID_GROUPS)
#: Random bits of an id.
ID_BITS = 5 * RANDOM_LENGTH
#: Ids issued before the check symbol: 14 symbols in groups 4-4-4-2.
LEGACY_GROUPS: tuple[int, ...] = (4, 4, 4, 2)
LEGACY_LENGTH = sum(LEGACY_GROUPS)
#: A canonical id, e.g. ``7KQ2-M9XD-4FRT-8BT``.
ID_PATTERN = re.compile(
    "-".join(f"[{ID_ALPHABET}]{{{n}}}" for n in ID_GROUPS).join(("^", "$"))
)
#: The id examples in messages use (its check symbol is right).
ID_EXAMPLE = "7KQ2-M9XD-4FRT-8BT"

_SYMBOLS = np.array(list(ID_ALPHABET))
_VALUE = {symbol: value for value, symbol in enumerate(CHECK_ALPHABET)}
# Crockford's decoding: lower case is upper case; I and L read as 1, O as 0.
_TYPED = str.maketrans({"I": "1", "L": "1", "O": "0"})
_SEPARATORS = re.compile(r"[\s\-]+")
# Ids are redrawn when they collide; with 70 bits this practically never loops.
_MAX_ROUNDS = 100


class RespondentIdTypo(ParameterError):
    """A typed id whose check symbol does not match its other symbols: a typo."""


def _group(symbols: str) -> str:
    parts, start = [], 0
    for n in (ID_GROUPS if len(symbols) == ID_LENGTH else LEGACY_GROUPS):
        parts.append(symbols[start:start + n])
        start += n
    return "-".join(parts)


def check_symbol(symbols: str) -> str:
    """Crockford's check symbol of ``symbols`` (base32, canonical upper case).

    >>> check_symbol("7KQ2M9XD4FRT8B")
    'T'
    """
    value = 0
    for symbol in symbols:
        value = (value * 32 + _VALUE[symbol]) % 37
    return CHECK_ALPHABET[value]


def new_respondent_ids(count: int, *, rng: RandomSource | None = None,
                       exclude: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """``count`` distinct new ids, none of them in ``exclude``.

    Each id is 14 independent uniform base32 symbols and their check symbol;
    ids whose check symbol is not one of the 32 ordinary symbols are drawn
    again (about 1 in 7). ``rng=None`` uses operating-system entropy
    (:class:`surveykit.randomness.SystemEntropy`).

    >>> ids = new_respondent_ids(3)
    >>> len(set(ids)), all(ID_PATTERN.match(i) for i in ids)
    (3, True)
    >>> all(normalize_respondent_id(i) == i for i in ids)
    True
    """
    if isinstance(count, bool) or not isinstance(count, int | np.integer) or count < 0:
        raise ParameterError(f"count ({count!r}) must be a whole number >= 0")
    issued: dict[str, None] = {}
    for _ in range(_MAX_ROUNDS):
        missing = int(count) - len(issued)
        if missing == 0:
            return list(issued)
        # 37/32 of what is missing, and a little more, so one round almost always suffices
        rows = missing + missing // 6 + 8
        symbols = _SYMBOLS[uniform_integers(rng, (rows, RANDOM_LENGTH), bits=5)]
        for row in symbols:
            data = "".join(row)
            check = check_symbol(data)
            if check not in ID_ALPHABET:
                continue
            new_id = _group(data + check)
            if new_id not in exclude:
                issued.setdefault(new_id, None)
                if len(issued) == count:
                    break
    if len(issued) == count:
        return list(issued)
    raise ParameterError(  # only a broken random source gets here
        f"could not draw {count} distinct ids in {_MAX_ROUNDS} rounds: the random source "
        "repeats itself"
    )


def _symbols(text: str) -> str:
    return _SEPARATORS.sub("", str(text)).upper().translate(_TYPED)


def normalize_respondent_id(text: str) -> str:
    """The canonical form of a typed id, or a ParameterError saying what is wrong
    (a :class:`RespondentIdTypo` when the check symbol catches a typo).

    >>> normalize_respondent_id(" 7kq2 m9xd 4frt 8bt ")
    '7KQ2-M9XD-4FRT-8BT'
    >>> normalize_respondent_id("7KQ2-M9XD-4FRT-8i")  # an id without check symbol; I for 1
    '7KQ2-M9XD-4FRT-81'
    >>> normalize_respondent_id("7KQ2-M9XD-4FRT-8CT")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    surveykit.respondent_ids.RespondentIdTypo: respondent id '7KQ2-M9XD-4FRT-8CT' \
has a typo: ...
    """
    symbols = _symbols(text)
    body, last = symbols[:-1], symbols[-1:]
    bad = sorted({c for c in body if c not in ID_ALPHABET}
                 | {c for c in last if c not in CHECK_ALPHABET})
    if bad:
        raise ParameterError(
            f"respondent id {text!r} contains {''.join(bad)!r}; ids use only "
            f"{ID_ALPHABET} (Crockford base32, e.g. {ID_EXAMPLE})"
        )
    if len(symbols) == LEGACY_LENGTH and last in ID_ALPHABET:
        return _group(symbols)  # issued before ids had a check symbol
    if len(symbols) != ID_LENGTH:
        raise ParameterError(
            f"respondent id {text!r} has {len(symbols)} symbols, expected {ID_LENGTH} "
            f"(e.g. {ID_EXAMPLE})"
        )
    if check_symbol(body) != last:
        raise RespondentIdTypo(
            f"respondent id {text!r} has a typo: its last symbol, the check symbol, does not "
            "match the others (a symbol mistyped, or two swapped)")
    return _group(symbols)


class IdDiagnosis(tuple):
    """Why an id is not an issued one: ``(reason, kind)``; ``kind`` groups reasons in
    summaries ("respondent id mistyped", "respondent id not issued")."""

    __slots__ = ()

    def __new__(cls, reason: str, kind: str) -> IdDiagnosis:
        return super().__new__(cls, (reason, kind))

    @property
    def reason(self) -> str:
        return self[0]

    @property
    def kind(self) -> str:
        return self[1]


def diagnose_unknown_id(typed: str, issued: Callable[[set[str]], Collection[str]], *,
                        survey: str, suggest: bool = True) -> IdDiagnosis:
    """Why ``typed`` is not an issued id of ``survey``, telling a typo (the check symbol
    fails) from an id that was never issued; with ``suggest``, the issued id one edit
    (one symbol changed, added, removed, or two neighbours swapped) away, when exactly one
    is. ``issued(candidates)`` returns the candidates that were issued.

    Suggestions are for the analyst importing a file, never for a web respondent: they
    would let anyone find issued ids by trying ids near a guess.

    >>> known = {"7KQ2-M9XD-4FRT-8BT"}
    >>> lookup = lambda ids: ids & known
    >>> print(diagnose_unknown_id("7KQ2-M9XD-4FRT-8CT", lookup, survey="s").reason)
    ... # doctest: +ELLIPSIS
    this respondent id has a typo: ...; did you mean 7KQ2-M9XD-4FRT-8BT, the only issued ...
    >>> diagnose_unknown_id("7KQ2-M9XD-4FRT-8AS", lookup, survey="s").kind
    'respondent id not issued'
    """
    not_issued = (f"this respondent id was not issued for survey {survey!r} (only issued "
                  "questionnaire ids are accepted)")
    try:
        canonical = normalize_respondent_id(typed)
    except RespondentIdTypo:
        reason = ("this respondent id has a typo: its check symbol (the last) does not match "
                  "the others")
        near = _nearest(_symbols(typed), issued) if suggest else None
        reason += (f"; did you mean {near}, the only issued id one symbol away?" if near
                   else "; copy it again from the answer sheet")
        return IdDiagnosis(reason, "respondent id mistyped")
    except ParameterError:
        symbols = _symbols(typed)
        near = (_nearest(symbols, issued) if suggest and symbols.isalnum()
                and abs(len(symbols) - ID_LENGTH) <= 1 else None)
        if near:
            return IdDiagnosis(f"{not_issued}; did you mean {near}, the only issued id one "
                               "symbol away?", "respondent id not issued")
        return IdDiagnosis(not_issued, "respondent id not issued")
    near = _nearest(_symbols(canonical), issued) if suggest else None
    if near:
        return IdDiagnosis(f"{not_issued}; did you mean {near}, the only issued id one "
                           "symbol away?", "respondent id not issued")
    return IdDiagnosis(not_issued, "respondent id not issued")


def _one_edit(symbols: str) -> Iterable[str]:
    """Every text one edit from ``symbols``: a symbol changed, removed or added, or two
    neighbours swapped (ids of 14 or 15 symbols only)."""
    n = len(symbols)
    for i in range(n):
        for symbol in ID_ALPHABET:
            if symbol != symbols[i]:
                yield symbols[:i] + symbol + symbols[i + 1:]
        yield symbols[:i] + symbols[i + 1:]
        if i + 1 < n and symbols[i] != symbols[i + 1]:
            yield symbols[:i] + symbols[i + 1] + symbols[i] + symbols[i + 2:]
    for i in range(n + 1):
        for symbol in ID_ALPHABET:
            yield symbols[:i] + symbol + symbols[i:]


def _nearest(symbols: str, issued: Callable[[set[str]], Collection[str]]) -> str | None:
    """The one issued id one edit from ``symbols``, or None (none, or several)."""
    candidates = set()
    for text in _one_edit(symbols):
        if len(text) == ID_LENGTH and check_symbol(text[:-1]) == text[-1]:
            candidates.add(_group(text))
        elif len(text) == LEGACY_LENGTH and all(c in ID_ALPHABET for c in text):
            candidates.add(_group(text))
    found = set(issued(candidates)) if candidates else set()
    return next(iter(found)) if len(found) == 1 else None
