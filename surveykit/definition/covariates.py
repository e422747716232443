"""Respondent covariates and declared models of a survey (``[covariates]``, ``[[models]]``).

A response file often carries more than the randomized answers: the
respondent's age, faculty, region. A survey keeps such columns only when it
declares them, with a type, so a misspelt column is an error on import and
never a silent new covariate::

    [covariates]
    age = "number"
    faculty = "category"
    year = { type = "number", min = 1, max = 8 }
    campus = { type = "category", levels = ["north", "south"] }

    [[models]]                       # fitted by 'surveykit report'
    formula = "exam_cheating ~ age + C(faculty)"

A number cell holds digits with a dot for decimals (``21``, ``21.5``,
``2e1``); a category cell any text, or with ``levels`` one of them (in any
case; stored as declared). An empty cell, or a label the survey's ``[import]``
profile maps to "missing", is a missing value: not stored.

Covariates are not randomized: unlike the answers, they are what the
respondent (or the register) says, in the clear, and several of them
together can narrow who a respondent is. See docs/store.md, "Covariates and
privacy".

A model (``[[models]]``) names one question, whose randomized answers are the
response (logistic regression of the true answer) or a term (with ``family``
the outcome's model and ``sensitive_formula`` the true answer's), and
covariates; :func:`surveykit.estimation.regression.regress` fits it. A survey
file is shared and downloaded, so its formulas are data: they are read here by
the same reader as ``regress``'s (:mod:`surveykit.estimation.formula_syntax`:
columns, numbers, R's operators and a fixed list of functions, within bounds),
and one that reaches for anything else is refused with a one-line error before
the survey is stored.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from surveykit.definition.tables import table_entries
from surveykit.errors import ParameterError, allowed_keys
from surveykit.estimation.formula_syntax import read_formula
from surveykit.vocabulary import canonical_spelling

__all__ = ["COVARIATE_KINDS", "COVARIATE_NAME_LENGTH", "COVARIATE_VALUE_LENGTH", "Covariate",
           "ModelSpec", "numeric_predictor_message", "parse_covariates", "parse_models"]

#: The types a covariate can be declared with.
COVARIATE_KINDS = ("number", "category")
#: Covariate names are identifiers like question ids; values are numbers or category texts
#: (the store's column sizes, surveykit.store.models).
COVARIATE_NAME_LENGTH = 64
COVARIATE_VALUE_LENGTH = 200
_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}\Z")
_MODEL_KEYS = frozenset({"formula", "family", "sensitive_formula"})
# Field tools and spreadsheets write these for "no number"; they are not numbers here.
_NOT_FINITE = frozenset({"nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"})


@dataclass(frozen=True)
class Covariate:
    """One declared covariate: its name, type ("number" or "category") and checks.

    ``levels`` (categories) lists the allowed values; ``low`` and ``high``
    (numbers) bound them, inclusive.

    >>> Covariate(name="age", kind="number", low=16).read(" 21.50 ")
    ('21.5', None)
    >>> Covariate(name="age", kind="number").read("21,5")[1][0]
    'not a number'
    >>> Covariate(name="campus", kind="category", levels=("North", "South")).read("north")
    ('North', None)
    """

    name: str
    kind: str
    levels: tuple[str, ...] | None = None
    low: float | None = None
    high: float | None = None

    def read(self, raw: str) -> tuple[str | None, tuple[str, str] | None]:
        """``(stored text, None)`` for a good cell, ``(None, (kind, reason))`` for a bad one.

        The cell is not missing (callers check that first). Numbers are
        stored in their shortest form (``21``, ``21.5``), so ``21.0`` and
        ``21`` are the same value. ``kind`` is the short reason import
        summaries count by ("not a number", "not a level", ...).
        """
        text = raw.strip()
        if self.kind == "number":
            return self._number(text)
        if self.levels is not None:
            wanted = canonical_spelling(text)
            for level in self.levels:
                if canonical_spelling(level) == wanted:
                    return level, None
            shown = ", ".join(repr(level) for level in self.levels)
            return None, ("not a level", f"covariate {self.name!r} takes {shown}; fix the "
                                         f"cell, or add the level to [covariates] {self.name}")
        if len(text) > COVARIATE_VALUE_LENGTH:
            return None, ("covariate too long", f"covariate {self.name!r} holds at most "
                                                f"{COVARIATE_VALUE_LENGTH} characters")
        return text, None

    def _number(self, text: str) -> tuple[str | None, tuple[str, str] | None]:
        try:
            if text.casefold() in _NOT_FINITE or "_" in text:
                raise ValueError(text)
            number = float(text)
        except ValueError:
            return None, ("not a number", f"covariate {self.name!r} is a number; write digits "
                                          "with a dot for decimals (21 or 21.5)")
        if (self.low is not None and number < self.low) or (
                self.high is not None and number > self.high):
            return None, ("out of range", f"covariate {self.name!r} must be between "
                                          f"{_bound(self.low, '-inf')} and "
                                          f"{_bound(self.high, 'inf')}")
        return number_text(number), None

    def describe(self) -> str:
        """The declaration in words, for ``import --dry-run``: "number", "category (2 levels)"."""
        if self.levels is not None:
            return f"category ({len(self.levels)} levels)"
        if self.low is not None or self.high is not None:
            return f"number, {_bound(self.low, '-inf')} to {_bound(self.high, 'inf')}"
        return self.kind


def number_text(number: float) -> str:
    """The stored form of a number covariate: the shortest text that reads back the same.

    >>> number_text(21.0), number_text(21.5), number_text(1e21)
    ('21', '21.5', '1e+21')
    """
    text = repr(float(number))
    return text[:-2] if text.endswith(".0") else text


def _bound(value: float | None, infinite: str) -> str:
    return infinite if value is None else number_text(value)


@dataclass(frozen=True)
class ModelSpec:
    """One ``[[models]]`` entry: the formula, the question whose randomized answers it
    uses (``question``), and for a question among the terms ``family`` and
    ``sensitive_formula`` (see :func:`surveykit.estimation.regression.regress`)."""

    formula: str
    question: str
    family: str | None = None
    sensitive_formula: str = "~ 1"


def parse_covariates(value: object, taken: Sequence[str],
                     fail: Callable[[str, str], Exception]) -> tuple[Covariate, ...]:
    """Validate a ``[covariates]`` table; ``taken`` are names already in use (question ids,
    the response file's own columns); ``fail(key_path, message)`` makes the error.

    >>> def fail(where, message): return ValueError(f"{where}: {message}")
    >>> parse_covariates({"age": "number", "faculty": {"type": "category"}}, ["q1"], fail)[1]
    Covariate(name='faculty', kind='category', levels=None, low=None, high=None)
    >>> parse_covariates({"age": "numeric"}, ["q1"], fail)
    Traceback (most recent call last):
    ...
    ValueError: covariates.age: 'numeric' must be "number" or "category"
    """
    if not isinstance(value, dict):
        raise fail("covariates", 'must be a table of name = "number" | "category", e.g. '
                                 '[covariates] age = "number"')
    folded = {name.casefold() for name in taken}
    seen: set[str] = set()
    out = []
    for name, spec in value.items():
        where = f"covariates.{name}"
        if not _IDENTIFIER.match(name):
            raise fail(where, f"{name!r} must start with a letter and contain only letters, "
                              "digits and '_' (at most 64), so that formulas can name it")
        if name.casefold() in folded:
            raise fail(where, f"{name!r} is already a question id or a column name of "
                              "response files; choose another name")
        if name.casefold() in seen:
            raise fail(where, f"{name!r} is declared twice (case does not count)")
        seen.add(name.casefold())
        out.append(_covariate(name, spec, where, fail))
    return tuple(out)


def _covariate(name: str, spec: object, where: str,
               fail: Callable[[str, str], Exception]) -> Covariate:
    if isinstance(spec, str):
        spec = {"type": spec}
    if not isinstance(spec, dict):
        raise fail(where, f'{spec!r} must be "number", "category", or a table such as '
                          '{ type = "category", levels = ["a", "b"] }')
    kind = spec.get("type")
    if kind not in COVARIATE_KINDS:
        raise fail(where if "type" not in spec or len(spec) == 1 else f"{where}.type",
                   f'{kind!r} must be "number" or "category"')
    allowed = {"type", "levels"} if kind == "category" else {"type", "min", "max"}
    unknown = sorted(set(spec) - allowed)
    if unknown:
        raise fail(f"{where}.{unknown[0]}",
                   f"unknown key for a {kind}{allowed_keys(unknown[0], allowed)}")
    if kind == "category":
        levels = spec.get("levels")
        if levels is None:
            return Covariate(name=name, kind=kind)
        if not isinstance(levels, list) or not levels or not all(
                isinstance(level, str) and level.strip()
                and len(level.strip()) <= COVARIATE_VALUE_LENGTH for level in levels):
            raise fail(f"{where}.levels", f"{levels!r} must be a list of texts, e.g. "
                                          'levels = ["law", "medicine"]')
        spellings = [canonical_spelling(level) for level in levels]
        if len(set(spellings)) != len(spellings):
            raise fail(f"{where}.levels", "two levels differ only in case or spaces; cells "
                                          "are matched in any case, so keep one")
        return Covariate(name=name, kind=kind, levels=tuple(level.strip() for level in levels))
    bounds: dict[str, float | None] = {}
    for key in ("min", "max"):
        number = spec.get(key)
        if number is not None and (isinstance(number, bool)
                                   or not isinstance(number, int | float)
                                   or not math.isfinite(number)):
            raise fail(f"{where}.{key}", f"{number!r} must be a number")
        bounds[key] = None if number is None else float(number)
    if bounds["min"] is not None and bounds["max"] is not None and bounds["min"] > bounds["max"]:
        raise fail(f"{where}.min", f"min ({number_text(bounds['min'])}) must not be greater "
                                   f"than max ({number_text(bounds['max'])})")
    return Covariate(name=name, kind=kind, low=bounds["min"], high=bounds["max"])


def numeric_predictor_message(formula: str, outcome: str, scrambled: str) -> str:
    """Why a numeric question cannot be a covariate of another question's model, and what
    to do instead."""
    return (f"{formula!r} uses the numeric question {scrambled!r} as a covariate of "
            f"question {outcome!r}, whose answers are randomized too: {scrambled}'s unbiased "
            "transform is its true value plus noise, and in a model that is not linear in "
            "the covariate (the logistic model of a randomized answer) that noise biases "
            "every coefficient, with no known correction; fit each question on the "
            f"covariates instead (\"{outcome} ~ age\", \"{scrambled} ~ age\"), or use "
            f"{scrambled!r} as a predictor of a covariate (\"satisfaction ~ {scrambled}\": "
            "linear, with the randomization corrected)")


def parse_models(value: object, questions: Sequence[str], covariates: Sequence[Covariate],
                 fail: Callable[[str, str], Exception], *,
                 numeric: Sequence[str] = ()) -> tuple[ModelSpec, ...]:
    """Validate ``[[models]]``: each formula uses one question and declared covariates;
    ``numeric`` names the numeric questions (``type = "number"``), whose use as a second
    question gets its own reason.

    >>> def fail(where, message): return ValueError(f"{where}: {message}")
    >>> age = Covariate(name="age", kind="number")
    >>> parse_models([{"formula": "q1 ~ age"}], ["q1", "q2"], [age], fail)[0].question
    'q1'
    >>> parse_models([{"formula": "q1 ~ q2"}], ["q1", "q2"], [age], fail)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: models[0].formula: 'q1 ~ q2' uses the randomized answers of 2 questions (q1, q2)...
    """
    entries = table_entries(value, "models", _MODEL_KEYS, 'formula = "QUESTION ~ ..."', fail)
    if not value:
        return ()
    # the formula reader regress and report use: the formula becomes a tree of columns,
    # numbers, R's operators and a fixed list of functions, never code, so a hostile formula
    # in a shared survey file is refused here
    names = [*questions, *(c.name for c in covariates)]
    by_folded = {question.casefold(): question for question in questions}
    out = []
    for where, entry in entries:
        formula = entry.get("formula")
        if not isinstance(formula, str) or not formula.strip():
            raise fail(f"{where}.formula", f"{formula!r} must be a formula in quotes, e.g. "
                                           '"exam_cheating ~ age + C(faculty)"')
        try:
            parsed = read_formula(formula, names)
        except ParameterError as exc:
            raise fail(f"{where}.formula", _columns_message(str(exc), questions,
                                                            covariates)) from None
        used = [c for c in dict.fromkeys([parsed.response, *parsed.columns])
                if c is not None and c.casefold() in by_folded]
        scrambled = [c for c in used[1:] if c in numeric and parsed.response == used[0]]
        if len(used) == 2 and scrambled:
            raise fail(f"{where}.formula", numeric_predictor_message(formula, used[0],
                                                                      scrambled[0]))
        if len(used) != 1:
            listed = ", ".join(used)
            raise fail(f"{where}.formula", (
                f"{formula!r} uses no question: name the question whose randomized answers "
                "the model is about, e.g. \"exam_cheating ~ age\"" if not used else
                f"{formula!r} uses the randomized answers of {len(used)} questions "
                f"({listed}): a model has one; the others are randomized too and cannot be "
                "covariates"))
        family = entry.get("family")
        sensitive_formula = entry.get("sensitive_formula", "~ 1")
        if parsed.response == used[0]:
            if family not in (None, "binomial"):
                raise fail(f"{where}.family", f"{family!r}: question {used[0]!r} is the "
                                              "response, so the model is logistic; remove "
                                              "family")
            if "sensitive_formula" in entry:
                raise fail(f"{where}.sensitive_formula",
                           f"question {used[0]!r} is the response, so its model is the "
                           "formula itself; remove sensitive_formula")
        else:
            if family not in (None, "gaussian", "binomial"):
                raise fail(f"{where}.family", f'{family!r} must be "gaussian" or "binomial"')
            if not isinstance(sensitive_formula, str):
                raise fail(f"{where}.sensitive_formula",
                           f"{sensitive_formula!r} must be a formula such as \"~ age\"")
            try:
                read_formula(sensitive_formula, [c.name for c in covariates],
                             option="sensitive formula", response=False)
            except ParameterError as exc:
                raise fail(f"{where}.sensitive_formula", _columns_message(
                    str(exc), questions, covariates, questions_allowed=False)) from None
        out.append(ModelSpec(formula=formula.strip(), question=used[0], family=family,
                             sensitive_formula=sensitive_formula.strip()))
    return tuple(out)


def _columns_message(message: str, questions: Sequence[str], covariates: Sequence[Covariate],
                     questions_allowed: bool = True) -> str:
    """A formula error from the regression library, told in the survey's words."""
    marker = "which is not in the data; the columns are"
    if marker not in message:
        return message
    head = message.split(marker)[0]
    declared = ", ".join(c.name for c in covariates) or "none"
    if questions_allowed:
        return (f"{head}which is neither a question nor a declared covariate (questions: "
                f"{', '.join(questions)}; covariates: {declared}); declare it in [covariates]")
    return (f"{head}which is not a declared covariate (covariates: {declared}); the true "
            "answer's model uses covariates only")


def covariate_map(covariates: Sequence[Covariate]) -> Mapping[str, Covariate]:
    """Name (case-folded) -> covariate, for header matching."""
    return {covariate.name.casefold(): covariate for covariate in covariates}
