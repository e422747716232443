"""The words surveykit reads and writes, defined once: answer spellings and their canonical form.

Every design's responses end with ``"dont_know"``; yes/no designs answer
``"yes"`` and ``"no"``. People type these many ways; :func:`canonical_spelling`
folds case, spaces and curly quotes, and :data:`BUILTIN_SPELLINGS` maps the
usual spellings of a yes/no design's answers. An empty cell is *missing*,
never "don't know".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

__all__ = [
    "BUILTIN_SPELLINGS",
    "DONT_KNOW_SPELLINGS",
    "canonical_spelling",
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
