"""How one cell of a numeric question is read: a number in canonical text, or why not.

A numeric question's answer (``type = "number"`` in the survey file) is the
number the respondent reported, after scrambling. A cell is read by these
rules, the same for every reader (import, file counting, web submissions):

* a cell that is empty (or only spaces) is *missing* (callers check that
  first); ``0`` is the number zero, never missing;
* "don't know" and its spellings are read by the caller
  (:meth:`surveykit.definition.survey.Question.answer_spellings`), for a question whose
  design has the "don't know" branch; without it (``dont_know = 0``, so the web page, the
  paper sheet and the XLSForm offer no "don't know") they are refused, saying so;
* a number is digits with an optional sign, a decimal point and (as
  spreadsheets write very large or small numbers) an exponent: ``1234``,
  ``-3``, ``1234.5``, ``1.5e-05``. A file whose numbers are written with a
  decimal comma (``1234,5``) is read with ``decimal_comma`` (``surveykit import
  --decimal-comma``): then ``,`` is the decimal sign and a ``.`` is refused;
* thousands separators (``1,234``, ``1.234,5``, ``1 234``, ``1'234``) are
  refused, with what the number looks like and how to write it: a separator
  cannot be told from a decimal sign in general (is ``1,234`` one thousand
  two hundred thirty-four, or 1.234?);
* at most ``decimals`` decimals (the survey file's ``decimals``; trailing
  zeros do not count: ``1234.50`` has one), at most 15 significant digits
  and below 10^15 in size (so sums in a float stay exact to the unit);
* within the answers the design can give for true values in the question's
  ``range`` (:func:`surveykit.designs.quantitative_privacy.answer_bounds`,
  widened by half a unit of the last decimal for the respondent's rounding, as
  the web server checks them; a design with an unbounded scrambler, e.g.
  normal noise, can give any number).

The stored form is :func:`surveykit.vocabulary.decimal_text`: no exponent, no
thousands separator, ``.`` for the decimal point, no trailing zeros, ``-`` for
negatives (``1234.5``, ``0``, ``-3``), so ``1234.50`` and ``1234.5`` are one
answer.

>>> reader = NumberReader(decimals=1, low=0, high=100000)
>>> reader.read(" 1234.50 ")
('1234.5', None)
>>> reader.read("1.234,5")[1][0]
'decimal comma'
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from surveykit.definition.limits import MAX_DIGITS
from surveykit.designs.quantitative_privacy import answer_bounds
from surveykit.errors import printable
from surveykit.vocabulary import DONT_KNOW_SPELLINGS, canonical_spelling, decimal_text

__all__ = ["MAX_DIGITS", "NumberReader", "number_reader"]

_LIMIT = Decimal(10) ** MAX_DIGITS

_POINT = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\Z")
_COMMA = re.compile(r"[+-]?(?:\d+(?:,\d*)?|,\d+)\Z")
# digits in groups of three after a first group: 1,234 / 1.234.567 / 1 234 / 1'234
_GROUPED = re.compile(r"[+-]?\d{1,3}(?:(?P<sep>[,. '\u00a0\u202f\u2009])\d{3})"
                      r"(?:(?P=sep)\d{3})*(?:(?P<dec>[.,])\d+)?\Z")
# text beside digits: a unit or currency sign (1234 EUR, EUR 1234, 1234€, $12)
_LETTERS = re.compile(r"[^\d\s.,'+\-\u00a0\u202f\u2009]")


def _decimals(value: Decimal) -> int:
    """The decimals of a number, trailing zeros not counted (1234.50 has 1)."""
    exponent = value.normalize().as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def _number_words(value: float) -> str:
    return decimal_text(Decimal(repr(value)))


@dataclass(frozen=True, kw_only=True)
class NumberReader:
    """The rules of one numeric question's cells: ``decimals`` (None: any), the smallest and
    largest answer the design can give (``low``, ``high``; None: unbounded), what they come
    from (``range_text``, for messages), whether the file writes decimal commas, and whether
    the question takes "don't know" (``dont_know``: its design has the branch; the caller
    reads it, and without it a "don't know" cell is refused as such).

    :meth:`read` returns ``(canonical text, None)`` or ``(None, (kind, reason))``; ``kind``
    is the short reason import summaries count by.

    >>> NumberReader(decimal_comma=True).read("1234,5")
    ('1234.5', None)
    >>> NumberReader(decimals=0).read("12.5")[1][1][:50]
    '12.5 has 1 decimal; this question takes whole numb'
    >>> NumberReader(dont_know=False).read("Don't know")[1][0]
    "no don't know branch"
    """

    decimals: int | None = None
    low: float | None = None
    high: float | None = None
    range_text: str = ""
    decimal_comma: bool = False
    dont_know: bool = True

    def read(self, raw: str) -> tuple[str | None, tuple[str, str] | None]:
        text = raw.strip()
        value, problem = self._parse(text)
        if problem is not None:
            return None, problem
        assert value is not None
        digits = len(value.normalize().as_tuple().digits)
        if abs(value) >= _LIMIT or digits > MAX_DIGITS:
            return None, ("number too large", (
                f"{self._shown(text)} has more than {MAX_DIGITS} digits; numbers up to "
                f"{MAX_DIGITS} significant digits and below 10^{MAX_DIGITS} are stored"))
        places = _decimals(value)
        if self.decimals is not None and places > self.decimals:
            takes = ("whole numbers" if self.decimals == 0 else
                     f"at most {self.decimals} decimal{'s' if self.decimals != 1 else ''}")
            return None, ("too many decimals", (
                f"{self._shown(text)} has {places} decimal{'s' if places != 1 else ''}; this "
                f"question takes {takes} (decimals = {self.decimals} in the survey file): "
                "write the number as reported, rounded by the respondent"))
        number = float(value)
        if (self.low is not None and number < self.low) or (
                self.high is not None and number > self.high):
            side = (f"below {_number_words(self.low)}, the smallest" if self.low is not None
                    and number < self.low else f"above {_number_words(self.high)}, the largest")
            return None, ("out of range", (
                f"{self._shown(text)} is {side} answer the design can give{self.range_text}; "
                "check the cell (a typo, or an answer of another question?)"))
        return decimal_text(value), None

    @staticmethod
    def _shown(text: str) -> str:
        return printable(text)

    def _parse(self, text: str) -> tuple[Decimal | None, tuple[str, str] | None]:
        pattern = _COMMA if self.decimal_comma else _POINT
        if pattern.match(text):
            try:
                return Decimal(text.replace(",", ".")), None
            except InvalidOperation:  # pragma: no cover - the patterns admit only numbers
                pass
        return None, self._why_not(text)

    def _why_not(self, text: str) -> tuple[str, str]:
        shown = self._shown(text)
        if not self.dont_know and canonical_spelling(text) in DONT_KNOW_SPELLINGS:
            return "no don't know branch", (
                "\"don't know\" is not an answer to this question: its design "
                "has no \"don't know\" branch (dont_know = 0 in [questions.design], so no "
                "questionnaire offers it); write the number the respondent reported, or leave "
                "the cell empty if the answer is missing")
        grouped = _GROUPED.match(text)
        if grouped is not None:
            sep, dec = grouped.group("sep"), grouped.group("dec")
            bare = re.sub(r"[,. '\u00a0\u202f\u2009]", "", text[:grouped.start("dec")]
                          if dec else text)
            if dec and dec != sep:
                plain = f"{bare}.{text[grouped.end('dec'):]}"
                if not self.decimal_comma and dec == ",":
                    return "decimal comma", (
                        f"{shown} looks like {plain} written with a decimal comma and "
                        f"{sep!r} between thousands; write {plain} (a dot for decimals, no "
                        "thousands separators), or, if every number in the file has a decimal "
                        "comma, import it with --decimal-comma and write "
                        f"{plain.replace('.', ',')}")
                written = plain if not self.decimal_comma else plain.replace(".", ",")
                return "thousands separator", (
                    f"{shown} has {sep!r} between thousands; write {written} (no thousands "
                    "separators)")
            if sep in ",." and not dec:
                other = text.replace(sep, ".", 1) if sep == "," else text
                return "thousands separator", (
                    f"{shown} is ambiguous: {sep!r} may separate thousands ({bare}) or be "
                    f"the decimal sign ({other.replace(',', '.')}); write numbers without "
                    "thousands separators and with a "
                    + ("comma" if self.decimal_comma else "dot") + " for decimals"
                    + (", or import the file without --decimal-comma" if self.decimal_comma
                       else ", or import the file with --decimal-comma if every number in "
                            "it has a decimal comma"))
            return "thousands separator", (
                f"{shown} has {sep!r} between thousands; write {bare} (no thousands "
                "separators)")
        if not self.decimal_comma and _COMMA.match(text):
            plain = text.replace(",", ".")
            return "decimal comma", (
                f"{shown} has a decimal comma; write {plain} (a dot for decimals), or, if "
                "every number in the file has a decimal comma, import it with --decimal-comma")
        if self.decimal_comma and _POINT.match(text):
            return "decimal point", (
                f"{shown} has a dot, but the file is read with --decimal-comma (a comma for "
                f"decimals): write {text.replace('.', ',')}, or import without "
                "--decimal-comma")
        lowered = text.casefold()
        if lowered in ("nan", "inf", "-inf", "+inf", "infinity", "-infinity"):
            return "not a number", f"{shown} is not a finite number"
        if _LETTERS.search(text) and re.search(r"\d", text):
            return "not a number", (
                f"{shown} has text beside the number; write the number only (the unit is in "
                "the survey file)")
        sign = "a comma" if self.decimal_comma else "a dot"
        dont_know = ", \"don't know\"," if self.dont_know else ""
        return "not a number", (
            f"{shown} is not a number: write the reported number (digits, with {sign} for "
            f"decimals){dont_know} or leave the cell empty if the answer is missing")


def number_reader(question, *, decimal_comma: bool = False) -> NumberReader:
    """The :class:`NumberReader` of a numeric ``question``
    (:class:`surveykit.definition.survey.Question`): its decimals, and the answers its design
    can give for true values in its range.

    >>> from surveykit.definition.survey import Question
    >>> from surveykit.designs.quantitative import Eriksson
    >>> q = Question("income", "Income?", Eriksson(p=0.6, scrambler=[0, 1000, 5000]),
    ...              type="number", range=(0.0, 100000.0), decimals=0)
    >>> reader = number_reader(q)
    >>> (reader.low, reader.high), reader.read("-5")[1][0]
    ((-0.5, 100000.5), 'out of range')
    """
    low = high = None
    text = ""
    if question.range is not None:
        found = answer_bounds(question.design, *question.range,
                              decimals=question.decimals)
        low = found[0] if math.isfinite(found[0]) else None
        high = found[1] if math.isfinite(found[1]) else None
        text = (f" (from {_number_words(found[0]) if low is not None else '-inf'} to "
                f"{_number_words(found[1]) if high is not None else 'inf'}) for true values "
                f"in range = [{_number_words(question.range[0])}, "
                f"{_number_words(question.range[1])}]")
    return NumberReader(decimals=question.decimals, low=low, high=high, range_text=text,
                        decimal_comma=decimal_comma,
                        dont_know=question.design.designed_dont_know > 0)
