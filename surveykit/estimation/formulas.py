"""Model formulas as R users write them, turned into model matrices by formulaic.

``rrt ~ age * left_right + C(faculty)`` means here what it means in R's
``model.frame``/``model.matrix`` (Chambers and Hastie 1992, ch. 2):
interactions ``a:b`` and crossings ``a * b``, powers ``(a + b)^2``,
``- 1`` or ``0 +`` for no intercept, categorical coding by treatment
contrasts with the first level as reference (strings, ``C(x)`` and
``factor(x)``), and arithmetic inside ``I()`` with R's ``^`` for powers.
The parsing is formulaic's (a maintained implementation of Wilkinson
formulas); this module adds what R users expect on top of it:

* column names R allows but Python does not (``age.c``, ``cov.age``, or any
  name in backticks) are usable everywhere, also inside ``I()``;
* term names read as R prints them: ``(Intercept)``, ``age.c:leftRight.c``,
  ``C(faculty)law``, ``I((cov.age/10)^2)``;
* an unknown column, a formula that does not parse and collinear terms are
  one-line :class:`~surveykit.errors.ParameterError`\\ s that name the column or
  the term.

Rows with a missing value in a used column are dropped before the matrices are
built (R's ``na.omit``), and counted (:func:`drop_missing`).

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from surveykit.errors import ParameterError

__all__ = ["ModelMatrix", "ParsedFormula", "build_matrix", "drop_missing", "parse_formula"]

# R spells a name with letters, digits, dots and underscores, not starting with a digit or
# with a dot followed by a digit; anything else goes in backticks.
_NAME = re.compile(r"`[^`]+`|(?<![A-Za-z0-9_.])(?:\.(?![0-9])|[A-Za-z_])[A-Za-z0-9_.]*")
_PLACEHOLDER = "_sk{}_"
# Collinearity: a column whose part not explained by the earlier ones has a squared norm
# below this fraction of its own is aliased (R's lm uses a QR tolerance of 1e-7 on norms).
_ALIAS_TOLERANCE = 1e-10


def _context() -> dict[str, object]:
    """Names R formulas use that formulaic does not define: factor() is C()."""
    from formulaic.transforms import C

    return {"factor": C, "exp": np.exp, "sqrt": np.sqrt, "abs": np.abs, "log2": np.log2,
            "log10": np.log10}


@dataclass(frozen=True)
class ParsedFormula:
    """A formula split at ``~``: the response column (or None) and the right-hand side.

    ``python_rhs`` is the right-hand side as formulaic reads it (R names that are
    not Python names replaced by placeholders, ``^`` inside calls by ``**``);
    ``names`` maps each placeholder back to its column; ``columns`` lists the data
    columns the right-hand side uses.
    """

    text: str
    response: str | None
    rhs: str
    python_rhs: str
    names: Mapping[str, str]
    columns: tuple[str, ...]

    def r_name(self, formulaic_name: str) -> str:
        """A column name from formulaic as R prints it.

        >>> f = parse_formula("y ~ I((cov.age/10)^2) + C(f)", ["y", "cov.age", "f"])
        >>> f.r_name("I((_sk0_ / 10) ** 2)"), f.r_name("C(f)[T.b]"), f.r_name("Intercept")
        ('I((cov.age/10)^2)', 'C(f)b', '(Intercept)')
        """
        if formulaic_name == "Intercept":
            return "(Intercept)"
        name = re.sub(r"\[T\.([^\]]*)\]", r"\1", formulaic_name)
        name = re.sub(r"\[(?:S\.)?([^\]]*)\]", r"\1", name)
        name = name.replace(" ** ", "^").replace(" / ", "/")
        for placeholder, column in self.names.items():
            name = name.replace(placeholder, column)
        return name


def parse_formula(text: str, columns: Iterable[str], *, option: str = "formula",
                  response: bool = True) -> ParsedFormula:
    """Check ``text`` against the data's ``columns`` and prepare it for formulaic.

    ``response=True`` needs ``column ~ terms``; ``False`` takes ``~ terms``
    (a right-hand side only, e.g. ``--sensitive-formula "~ age"``).

    >>> f = parse_formula("rrt ~ age.c * leftRight.c", ["rrt", "age.c", "leftRight.c"])
    >>> f.response, f.columns
    ('rrt', ('age.c', 'leftRight.c'))
    >>> parse_formula("rrt ~ agee", ["rrt", "age"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    surveykit.errors.ParameterError: formula 'rrt ~ agee' uses column 'agee', which is not in ...
    """
    from formulaic import Formula
    from formulaic.errors import FormulaicError

    columns = list(columns)
    if not isinstance(text, str) or text.count("~") != 1:
        raise ParameterError(
            f"{option} ({text!r}) must have one '~' between the response and the terms, "
            "e.g. \"rrt ~ age + C(faculty)\"" if response else
            f"{option} ({text!r}) must read '~ terms', e.g. \"~ 1\" or \"~ age\"")
    left, right = (part.strip() for part in text.split("~"))
    if response:
        lhs = left[1:-1] if left.startswith("`") and left.endswith("`") else left
        if not lhs:
            raise ParameterError(f"{option} ({text!r}) needs a response before '~'")
        if lhs not in columns:
            raise ParameterError(_unknown(option, text, lhs, columns))
    elif left:
        raise ParameterError(f"{option} ({text!r}) takes no response: write '~ {right}'")
    else:
        lhs = None
    if not right:
        raise ParameterError(f"{option} ({text!r}) needs terms after '~' (\"~ 1\" for none)")
    names: dict[str, str] = {}

    def replace(match: re.Match) -> str:
        token = match.group(0)
        name = token[1:-1] if token.startswith("`") else token
        if name in columns and (token.startswith("`") or not name.isidentifier()):
            placeholder = next((p for p, c in names.items() if c == name), None)
            if placeholder is None:
                placeholder = _PLACEHOLDER.format(len(names))
                names[placeholder] = name
            return placeholder
        return token

    python_rhs = _powers_inside_calls(_NAME.sub(replace, right))
    try:
        required = Formula(python_rhs).required_variables
    except FormulaicError as error:
        raise ParameterError(
            f"{option} ({text!r}) does not parse: {_first_line(error)}") from None
    used = []
    functions = _context()
    for variable in sorted(required, key=python_rhs.find):
        column = names.get(variable, variable)
        if column not in columns and column in functions:
            continue
        if column not in columns:
            raise ParameterError(_unknown(option, text, column, columns))
        used.append(column)
    return ParsedFormula(text=text, response=lhs, rhs=right, python_rhs=python_rhs,
                         names=names, columns=tuple(dict.fromkeys(used)))


def _unknown(option: str, text: str, column: str, columns: Sequence[str]) -> str:
    shown = ", ".join(columns[:30]) + (", ..." if len(columns) > 30 else "")
    return (f"{option} {text!r} uses column {column!r}, which is not in the data; "
            f"the columns are {shown}")


def _first_line(error: Exception) -> str:
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(error))
    return text.strip().splitlines()[0].strip() if text.strip() else type(error).__name__


def _powers_inside_calls(text: str) -> str:
    """R's ``^`` is a power inside a call (``I(x^2)``, ``log(x^2)``) and an interaction
    power outside (``(a + b)^2``); Python's power is ``**``."""
    out, calls = [], []
    for i, char in enumerate(text):
        if char == "(":
            before = text[:i].rstrip()
            calls.append(bool(calls and calls[-1]) or bool(before) and (
                before[-1].isalnum() or before[-1] in "_."))
        elif char == ")" and calls:
            calls.pop()
        out.append("**" if char == "^" and calls and calls[-1] else char)
    return "".join(out)


def drop_missing(data: pd.DataFrame, columns: Iterable[str]) -> tuple[pd.DataFrame, int]:
    """The rows of ``data`` with a value in every one of ``columns``, and how many were dropped.

    >>> frame = pd.DataFrame({"y": [1, None, 0], "x": [1.0, 2.0, None], "z": [None, 1, 2]})
    >>> kept, dropped = drop_missing(frame, ["y", "x"])
    >>> len(kept), dropped
    (1, 2)
    """
    columns = list(dict.fromkeys(columns))
    if not columns:
        return data, 0
    complete = data[columns].notna().all(axis=1).to_numpy()
    dropped = int(complete.size - complete.sum())
    return (data if dropped == 0 else data.loc[complete]), dropped


@dataclass(frozen=True, eq=False)
class ModelMatrix:
    """The model matrix of a formula's right-hand side, with R's term names.

    ``values`` (rows, columns) as floats; ``terms`` the column names as R prints
    them; :meth:`for_data` codes new data the same way (the same levels and the
    same centring of stateful transforms), for predictions.
    """

    formula: ParsedFormula
    values: np.ndarray
    terms: tuple[str, ...]
    spec: object

    @property
    def has_intercept(self) -> bool:
        return "(Intercept)" in self.terms

    def for_data(self, data: pd.DataFrame, *, what: str = "newdata") -> np.ndarray:
        """The model matrix of ``data`` (the formula's columns must be there and complete)."""
        from formulaic.errors import FormulaicError

        missing = [c for c in self.formula.columns if c not in data.columns]
        if missing:
            raise ParameterError(
                f"{what} lacks column {missing[0]!r}, which the formula "
                f"{self.formula.text!r} uses")
        frame = _renamed(data[list(self.formula.columns)], self.formula)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                matrix = self.spec.get_model_matrix(frame, na_action="ignore")
            except (FormulaicError, Warning, ValueError, TypeError) as error:
                raise ParameterError(f"{what} cannot be coded like the data: "
                                     f"{_first_line(error)}") from None
        return _as_array(matrix)

    def check_rank(self, what: str = "formula") -> None:
        """Refuse collinear terms, naming the first term the earlier ones explain (R's
        aliasing in ``lm``)."""
        check_columns(self.values, self.terms, f"{what} {self.formula.text!r}")


def check_columns(values: np.ndarray, terms: Sequence[str], what: str) -> None:
    """Refuse a model matrix whose columns are linearly dependent, naming the first aliased
    term and the earlier terms it is a combination of."""
    gram = values.T @ values
    kept: list[int] = []
    for j in range(len(terms)):
        norm = gram[j, j]
        if norm <= 0:
            raise ParameterError(f"{what}: term {terms[j]!r} is zero in every row; drop it")
        if kept:
            sub = gram[np.ix_(kept, kept)]
            coef = np.linalg.solve(sub, gram[kept, j])
            residual = norm - gram[kept, j] @ coef
        else:
            coef, residual = np.zeros(0), norm
        if residual <= _ALIAS_TOLERANCE * norm:
            involved = [terms[k] for k, c in zip(kept, coef, strict=True)
                        if abs(c) * np.sqrt(gram[k, k] / norm) > 1e-6]
            raise ParameterError(
                f"{what}: term {terms[j]!r} is a linear combination of "
                f"{', '.join(repr(t) for t in involved) or 'earlier terms'} (collinear), so "
                "the data cannot tell their effects apart; drop one of them")
        kept.append(j)


def _as_array(matrix: pd.DataFrame) -> np.ndarray:
    """The model matrix as floats, column by column into a Fortran-ordered array (pandas'
    row-major interleaving of separate columns is ten times slower on a million rows)."""
    values = np.empty(matrix.shape, dtype=float, order="F")
    for j in range(matrix.shape[1]):
        values[:, j] = matrix.iloc[:, j].to_numpy(dtype=float)
    return values


def _renamed(data: pd.DataFrame, formula: ParsedFormula) -> pd.DataFrame:
    columns = {column: placeholder for placeholder, column in formula.names.items()}
    return data.rename(columns=columns) if columns else data


def build_matrix(formula: ParsedFormula, data: pd.DataFrame) -> ModelMatrix:
    """The model matrix of ``formula``'s right-hand side on ``data`` (no missing values).

    >>> frame = pd.DataFrame({"y": [0, 1, 1], "age.c": [-1.0, 0.0, 1.0], "f": ["a", "b", "a"]})
    >>> m = build_matrix(parse_formula("y ~ age.c * f", frame.columns), frame)
    >>> m.terms
    ('(Intercept)', 'age.c', 'fb', 'age.c:fb')
    """
    from formulaic import model_matrix
    from formulaic.errors import FormulaicError

    frame = _renamed(data[list(formula.columns)] if formula.columns else
                     pd.DataFrame(index=data.index), formula)
    with warnings.catch_warnings():
        # formulaic warns about levels it casts to NaN; here every level is seen once
        warnings.simplefilter("ignore")
        try:
            matrix = model_matrix(formula.python_rhs, frame, context=_context(),
                                  na_action="ignore")
        except FormulaicError as error:
            raise ParameterError(
                f"formula {formula.text!r} cannot be evaluated: {_first_line(error)}") from None
    values = _as_array(matrix)
    if values.shape[0] != len(data):  # an intercept-only formula on no columns
        values = np.ones((len(data), values.shape[1]))
    if not np.all(np.isfinite(values)):
        row, col = np.argwhere(~np.isfinite(values))[0]
        term = formula.r_name(str(matrix.columns[col]))
        raise ParameterError(
            f"formula {formula.text!r}: term {term!r} is not a finite number in row "
            f"{row + 1} of the rows used (e.g. log of 0); transform the column differently")
    terms = tuple(formula.r_name(str(c)) for c in matrix.columns)
    return ModelMatrix(formula=formula, values=values, terms=terms, spec=matrix.model_spec)
