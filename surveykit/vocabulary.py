"""The words surveykit reads and writes, defined once: answer spellings and their canonical form.

Every design's responses end with ``"dont_know"``; yes/no designs answer
``"yes"`` and ``"no"``. People type these many ways; :func:`canonical_spelling`
folds case, spaces and curly quotes, and :data:`BUILTIN_SPELLINGS` maps the
usual spellings of a yes/no design's answers. An empty cell is *missing*,
never "don't know".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType

__all__ = [
    "BUILTIN_SPELLINGS",
    "DONT_KNOW_SPELLINGS",
    "INFINITE_LOSS",
    "canonical_spelling",
    "loss_fields",
    "response_spellings",
]

# Field tools export choice labels: "I don't know" is the usual English one.
DONT_KNOW_SPELLINGS: tuple[str, ...] = ("dont_know", "don't know", "dont know", "dk",
                                        "don't_know", "do not know", "i don't know",
                                        "i dont know", "i do not know")

# Spellings every yes/no survey accepts, after canonical_spelling().
BUILTIN_SPELLINGS: Mapping[str, str] = MappingProxyType({
    **dict.fromkeys(("yes", "y", "1", "true"), "yes"),
    **dict.fromkeys(("no", "n", "0", "false"), "no"),
    **dict.fromkeys(DONT_KNOW_SPELLINGS, "dont_know"),
})

#: How JSON writes an unbounded privacy loss (a design that protects some answer not at all):
#: a string, which no JSON parser reads as null (unknown) or 0 (perfect protection);
#: Python's ``float("inf")`` reads it back.
INFINITE_LOSS = "inf"


def loss_fields(name: str, value: float | None) -> dict[str, object]:
    """The JSON fields of one privacy loss: ``name`` holds the number, or ``"inf"``
    (:data:`INFINITE_LOSS`) when the loss is unbounded, and ``name_finite`` says which.
    Both are null only where no loss was computed (a nuisance value the data leave open).

    >>> loss_fields("epsilon_shafer", float("inf"))
    {'epsilon_shafer': 'inf', 'epsilon_shafer_finite': False}
    >>> loss_fields("epsilon_walley", 1.0986)
    {'epsilon_walley': 1.0986, 'epsilon_walley_finite': True}
    """
    if value is None:
        return {name: None, f"{name}_finite": None}
    finite = math.isfinite(value)
    return {name: float(value) if finite else INFINITE_LOSS, f"{name}_finite": finite}


def canonical_spelling(raw: str) -> str:
    """The form answers are compared in: trimmed, case-folded, one space, straight quotes.

    >>> canonical_spelling("  Don’t   KNOW ")
    "don't know"
    """
    return " ".join(raw.replace("\u2019", "'").casefold().split())


def response_spellings(responses: Sequence[str]) -> dict[str, str]:
    """Canonical spelling -> response label, for a design with these ``responses``.

    A yes/no design takes the built-in spellings (yes/y/1/true, ...); any
    design takes its own labels in any case and the usual spellings of
    "don't know".

    >>> response_spellings(("0", "1", "2", "dont_know"))["1"]
    '1'
    >>> response_spellings(("yes", "no", "dont_know"))["1"]
    'yes'
    """
    spellings: dict[str, str] = dict.fromkeys(DONT_KNOW_SPELLINGS, "dont_know")
    if set(responses) == {"yes", "no", "dont_know"}:
        spellings.update(BUILTIN_SPELLINGS)
    for label in responses:
        spellings[canonical_spelling(label)] = label
    return spellings
