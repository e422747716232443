"""The words surveykit reads and writes, defined once: answer spellings, numbers in text.

Every design's responses end with ``"dont_know"``; yes/no designs answer
``"yes"`` and ``"no"``. People type these many ways; :func:`canonical_spelling`
folds case, spaces and curly quotes, and :data:`BUILTIN_SPELLINGS` maps the
usual spellings of a yes/no design's answers. An empty cell is *missing*,
never "don't know".

Numbers in reports, tables and messages are written by :func:`number_text`
(fixed decimals), :func:`amount_text` (significant digits: means and totals of
numeric answers), :func:`p_value_text` and :func:`percent_text`, so that every
table says "no value" and "no protection" the same way: a number that is not
there is :data:`MISSING` in text, Markdown and HTML, and null in JSON. A
numeric answer is stored as :func:`decimal_text` writes it. A privacy budget is stated in one of
:data:`BUDGET_SEMANTICS`, checked by :func:`check_semantics`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from decimal import Decimal
from types import MappingProxyType
from typing import Literal

from surveykit.errors import ParameterError

__all__ = [
    "domain_order",
    "BUDGET_SEMANTICS",
    "BUILTIN_SPELLINGS",
    "DONT_KNOW_SPELLINGS",
    "INFINITE_LOSS",
    "MISSING",
    "P_VALUE_FLOOR",
    "Semantics",
    "amount_text",
    "canonical_spelling",
    "check_semantics",
    "decimal_text",
    "level_text",
    "loss_fields",
    "number_text",
    "p_value_text",
    "percent_text",
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

#: How text, Markdown and HTML show a number that is not there (not computed, not
#: estimable, not a number); JSON writes null.
MISSING = "-"

#: Below this a p-value prints as "< 2e-16": the machine epsilon, R's floor in
#: ``format.pval`` (smaller p-values are not told apart in floating point).
P_VALUE_FLOOR = 2.220446049250313e-16

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


def number_text(value: float | str | None, digits: int = 3, *, missing: str = MISSING,
                infinite: str = "inf") -> str:
    """``value`` with ``digits`` decimals, as text tables print numbers.

    ``missing`` stands for None or NaN (no value), ``infinite`` for an infinite
    value (a privacy loss without protection; also JSON's :data:`INFINITE_LOSS`, so
    that a loss read back from JSON output prints alike); a value that rounds to
    zero prints without a minus sign.

    >>> number_text(0.25), number_text(None), number_text(float("inf"), 2), number_text(-1e-17)
    ('0.250', '-', 'inf', '0.000')
    >>> number_text(INFINITE_LOSS), number_text(float("nan"))
    ('inf', '-')
    """
    if value == INFINITE_LOSS:
        value = math.inf
    if value is None or math.isnan(value):
        return missing
    if math.isinf(value):
        return infinite if value > 0 else f"-{infinite}"
    text = f"{value:.{digits}f}"
    # -1e-17 is zero at this precision: print 0.000, not -0.000
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def amount_text(value: float | None, digits: int = 4, *, unit: str | None = None) -> str:
    """An amount (a mean, a total, their standard errors) to ``digits`` significant digits
    with thousands separators; from 10^digits on in full, not in exponent form (a total
    of 28,700,000 is not 2.87e+07); ``unit`` follows when given. None and NaN are
    :data:`MISSING`, as in :func:`number_text`.

    >>> amount_text(12.34567), amount_text(28_712_345.6), amount_text(1234.5, 6, unit="EUR")
    ('12.35', '28,712,346', '1,234.5 EUR')
    >>> amount_text(None), amount_text(float("inf"))
    ('-', 'inf')
    """
    if value is None or math.isnan(value):
        return MISSING
    if math.isinf(value):
        text = "inf" if value > 0 else "-inf"
    else:
        text = f"{value:,.{digits}g}" if abs(value) < 10 ** digits else f"{value:,.0f}"
    return f"{text} {unit}" if unit else text


def p_value_text(p: float | None) -> str:
    """A p-value to 3 significant digits, trailing zeros kept so that a column lines up
    (0.200, not 0.2), "< 2e-16" below :data:`P_VALUE_FLOOR` (R's ``format.pval``),
    :data:`MISSING` where there is none.

    >>> p_value_text(0.22649), p_value_text(0.2), p_value_text(6.5e-05), p_value_text(1e-300)
    ('0.226', '0.200', '6.50e-05', '< 2e-16')
    >>> p_value_text(None)
    '-'
    """
    if p is None or math.isnan(p):
        return MISSING
    return "< 2e-16" if p < P_VALUE_FLOOR else f"{p:#.3g}"


def decimal_text(value: Decimal) -> str:
    """A finite number as a numeric answer is stored (docs/web-collection.md, issue 23): no
    exponent, no thousands separator, '.' as the decimal point, no trailing zeros after it,
    '-' for negatives and never "-0".

    >>> [decimal_text(Decimal(t)) for t in ("1234.50", "0012", "-0.0", "1E+3", "-3")]
    ['1234.5', '12', '0', '1000', '-3']
    """
    if not value.is_finite():
        raise ParameterError(f"a numeric answer must be a finite number, not {value}")
    text = format(value, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def percent_text(share: float, digits: int = 1) -> str:
    """A share (0.123) as a percentage with ``digits`` decimals.

    >>> percent_text(0.1234)
    '12.3%'
    """
    return f"{100 * share:.{digits}f}%"


def level_text(level: float) -> str:
    """A confidence level as people write it: 95%, 97.5% (no trailing .0).

    >>> level_text(0.95), level_text(0.975)
    ('95%', '97.5%')
    """
    whole = round(level * 100, 6) == round(level * 100)
    return percent_text(level, 0 if whole else 1)


#: The semantics a privacy budget, a plan or a plot is stated in: Shafer's (the paper's)
#: or Walley's (docs/designs.md, "Privacy").
Semantics = Literal["shafer", "walley"]
BUDGET_SEMANTICS: tuple[str, ...] = ("shafer", "walley")


def check_semantics(semantics: str) -> str:
    """``semantics`` itself when it is one of :data:`BUDGET_SEMANTICS`; else a ParameterError.

    >>> check_semantics("walley")
    'walley'
    """
    if semantics not in BUDGET_SEMANTICS:
        raise ParameterError(f"semantics ({semantics!r}) must be 'shafer' or 'walley'")
    return semantics


def domain_order(label: str) -> tuple:
    """The sort key of a domain's label, as reports list domains: numbers in numeric order
    before texts in text order.

    >>> sorted(["10", "b", "9", "a"], key=domain_order)
    ['9', '10', 'a', 'b']
    """
    try:
        return (0, float(label), "")
    except ValueError:
        return (1, 0.0, label)
