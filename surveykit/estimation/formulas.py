"""Model formulas as R users write them, turned into model matrices with numpy.

``rrt ~ age * left_right + C(faculty)`` means here what it means in R's
``model.frame``/``model.matrix`` (Chambers and Hastie 1992, ch. 2):
interactions ``a:b`` and crossings ``a * b``, powers ``(a + b)^2``, nesting
``a/b`` and ``b %in% a``, ``- 1`` or ``0 +`` for no intercept, categorical
coding by treatment contrasts with the first level as reference (text and
logical columns, ``factor(x)``, ``C(x)``, ``relevel(x, ref = "b")``), and
arithmetic inside ``I()`` with ``^`` for powers.

A formula is data, never code: :mod:`surveykit.estimation.formula_syntax` reads
it into a tree of frozen nodes (columns, numbers, the R operators and a fixed list
of functions, within bounds on length, nesting, interaction order and exponents),
and this module walks that tree with numpy. There is no ``eval``, no attribute
access and no name but the data's columns and the listed functions, so a formula
from a shared survey file cannot run anything.

* Column names are R's (``age.c``, ``cov.age``, or any name in backticks).
* Terms and columns are named and ordered as R's ``model.matrix`` names them:
  ``(Intercept)``, ``age.c:leftRight.c``, ``C(faculty)law``, ``factor(f)b``,
  ``I((cov.age/10)^2)``, ``poly(x, 2)1``; a factor in a term is coded by
  contrasts when the term without it is in the model, else by one column per
  level (R's ``TermCode``, Chambers and Hastie 1992, p. 38), and without an
  intercept the first factor gets all its levels.
* Stateful transforms (``scale``, ``center``, ``poly``, factor levels) keep what
  they learnt from the data, so :meth:`ModelMatrix.for_data` codes new data
  (predictions) exactly as the data were coded; ``poly`` on new data uses R's
  three-term recurrence (``predict(poly(...))``).
* At most :data:`MAX_COLUMNS` model columns and :data:`MAX_LEVELS` levels per
  factor; a value that is not finite (``log(0)``, an overflow) or larger than
  :data:`MAX_MAGNITUDE` in size is a one-line error naming the term and the row.

Every problem is a one-line :class:`~surveykit.errors.ParameterError` that names
the formula and, for a formula that does not parse, the token and its column.
Rows with a missing value in a used column are dropped before the matrices are
built (R's ``na.omit``), and counted (:func:`drop_missing`).

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from surveykit.errors import ParameterError
from surveykit.estimation.formula_syntax import (
    Call,
    Chain,
    Formula,
    Name,
    Node,
    Number,
    Paren,
    Power,
    Terms,
    Unary,
    deparse,
    factor_levels,
    members,
    poly_argument,
    poly_degree,
    r_number,
    read_formula,
)

__all__ = ["MAX_COLUMNS", "MAX_LEVELS", "MAX_MAGNITUDE", "MatrixSpec", "ModelMatrix",
           "ParsedFormula", "build_matrix", "check_columns", "drop_missing", "parse_formula"]

#: Columns of a model matrix.
MAX_COLUMNS = 1_000
#: Levels of one factor.
MAX_LEVELS = 1_000
#: Largest size of a model-matrix value: beyond it the likelihood's sums of squares and
#: products leave floating point (a covariate of 1e308 squared is infinite); rescale such a
#: column (e.g. ``I(income/1e6)``).
MAX_MAGNITUDE = 1e100
# Collinearity: a column whose part not explained by the earlier ones has a squared norm
# below this fraction of its own is aliased (R's lm uses a QR tolerance of 1e-7 on norms).
_ALIAS_TOLERANCE = 1e-10
_ELEMENTWISE = {"log": np.log, "log1p": np.log1p, "log2": np.log2, "log10": np.log10,
                "exp": np.exp, "sqrt": np.sqrt, "abs": np.abs}


#: A formula split at ``~`` and read into terms: the response column (or None), the
#: right-hand side's text, the data columns it uses (in order of appearance) and its expanded
#: :class:`~surveykit.estimation.formula_syntax.Terms` (the reader's own result type).
ParsedFormula = Formula


def parse_formula(text: str, columns: Iterable[str], *, option: str = "formula",
                  response: bool = True) -> ParsedFormula:
    """Read ``text`` and check it against the data's ``columns``.

    ``response=True`` needs ``column ~ terms``; ``False`` takes ``~ terms``
    (a right-hand side only, e.g. ``--sensitive-formula "~ age"``).

    >>> f = parse_formula("rrt ~ age.c * leftRight.c", ["rrt", "age.c", "leftRight.c"])
    >>> f.response, f.columns
    ('rrt', ('age.c', 'leftRight.c'))
    >>> parse_formula("rrt ~ agee", ["rrt", "age"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    surveykit.errors.ParameterError: formula 'rrt ~ agee' uses column 'agee', which is not in ...
    >>> parse_formula("rrt ~ I(age.__class__)", ["rrt", "age"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    surveykit.errors.ParameterError: formula 'rrt ~ I(age.__class__)' uses column ...
    """
    return read_formula(text, columns, option=option, response=response)


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


# ---------------------------------------------------------------------------------------------
# What a variable evaluates to

@dataclass(frozen=True, eq=False)
class _Numbers:
    """A numeric variable: (rows, k) values; ``suffixes`` name its columns after the
    variable's label ("" for one column, "1", "2", ... for poly)."""

    values: np.ndarray
    suffixes: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class _Factor:
    """A categorical variable: each row's level index, and the levels' labels."""

    codes: np.ndarray
    levels: tuple[str, ...]


@dataclass(frozen=True)
class _Levels:
    """What a factor learnt from the data: its levels' labels."""

    labels: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class MatrixSpec:
    """How a formula's matrix was made: the terms, what the stateful transforms learnt
    from the data (keyed by their expression), and each term's coding (per variable:
    True = treatment contrasts, False = one column per level)."""

    terms: Terms
    state: Mapping[Node, object]
    coding: tuple[tuple[bool, ...], ...]
    columns: tuple[str, ...]


class _Problem(Exception):
    """A value that cannot be computed (text in arithmetic, an unseen level, ...)."""


class _Evaluator:
    """Walks a formula's variables over ``data``: learns the state of stateful transforms
    (``fitting``) or uses the state learnt before."""

    def __init__(self, data: pd.DataFrame, state: dict[Node, object], fitting: bool,
                 where: str = "of the rows used"):
        self.data = data
        self.rows = len(data)
        self.state = state
        self.fitting = fitting
        self.where = where      # how messages place a row: "row 3 of the rows used"
        # formulas name columns by their text (a data frame's labels may be numbers)
        self.labels_by_name = {str(label): label for label in data.columns}

    def column(self, name: str) -> pd.Series:
        return self.data[self.labels_by_name[name]]

    def learnt(self, node: Node, compute):
        if node not in self.state:
            if not self.fitting:
                raise _Problem(f"{deparse(node)} was not in the formula fitted")
            self.state[node] = compute()
        return self.state[node]

    # --- numbers ------------------------------------------------------------------------
    def numbers(self, node: Node, inside: str) -> np.ndarray | float:
        """The value of an arithmetic expression: an array of rows, or a constant."""
        if isinstance(node, Number):
            return node.value
        if isinstance(node, Name):
            column = self.column(node.name)
            if _is_numeric(column) or pd.api.types.is_bool_dtype(column.dtype):
                return column.to_numpy(dtype=float)
            first = column.iloc[0] if len(column) else ""
            raise _Problem(f"column {node.name!r} holds text ({_short(first)!r}), which "
                           f"{inside} cannot compute with; use the column as a term of its "
                           "own or in factor()")
        if isinstance(node, Paren):
            return self.numbers(node.inner, inside)
        if isinstance(node, Unary):
            value = self.numbers(node.operand, inside)
            return -value if node.op == "-" else value
        if isinstance(node, Power):
            exponent = self.numbers(node.exponent, inside)
            return np.power(self.numbers(node.base, inside), exponent)
        if isinstance(node, Chain):
            value = self.numbers(node.first, inside)
            for link in node.links:
                right = self.numbers(link.operand, inside)
                if link.op == "+":
                    value = value + right
                elif link.op == "-":
                    value = value - right
                elif link.op == "*":
                    value = value * right
                else:
                    value = np.divide(value, right)
            return value
        return self.function(node)

    def function(self, node: Call) -> np.ndarray | float:
        name = node.function
        x = self.numbers(node.args[0], f"{name}()")
        if name == "I":
            return x
        if name in _ELEMENTWISE:
            return _ELEMENTWISE[name](x)
        x = np.broadcast_to(np.asarray(x, dtype=float), (self.rows,))
        if name == "center":
            mean = self.learnt(node, lambda: float(np.mean(x)) if x.size else 0.0)
            return x - mean
        mean, sd = self.learnt(node, lambda: _mean_sd(x))     # scale
        if not sd > 0:
            raise _Problem(f"{deparse(node)} divides by the standard deviation of the data, "
                           "which is 0 (the values are all equal); drop the term")
        return (x - mean) / sd

    def vector(self, node: Node, inside: str) -> np.ndarray:
        value = self.numbers(node, inside)
        return np.broadcast_to(np.asarray(value, dtype=float), (self.rows,))

    # --- variables ----------------------------------------------------------------------
    def variable(self, node: Node) -> _Numbers | _Factor:
        """A term's variable: numbers (one or more columns) or a factor."""
        if isinstance(node, Name):
            column = self.column(node.name)
            if _is_numeric(column):
                return _Numbers(column.to_numpy(dtype=float)[:, None], ("",))
            return self.factor(node)
        if node.function in ("factor", "C", "relevel"):
            return self.factor(node)
        if node.function == "poly":
            return self.poly(node)
        return _Numbers(self.vector(node, f"{node.function}()")[:, None], ("",))

    def poly(self, node: Call) -> _Numbers:
        degree = poly_degree(poly_argument(node))
        x = self.vector(node.args[0], "poly()")
        if self.fitting and node not in self.state:
            values, alpha, norm2 = _poly_fit(x, degree, deparse(node))
            self.state[node] = (alpha, norm2)
            return _Numbers(values, tuple(str(k) for k in range(1, degree + 1)))
        alpha, norm2 = self.learnt(node, lambda: None)
        values = _poly_predict(x, alpha, norm2)
        return _Numbers(values, tuple(str(k) for k in range(1, degree + 1)))

    def factor(self, node: Node) -> _Factor:
        """A categorical variable: a text or logical column, factor(), C() or relevel()."""
        if isinstance(node, Call) and node.function == "relevel":
            inner = self.factor(node.args[0])
            (ref,) = factor_levels(node)
            if ref not in inner.levels:
                raise _Problem(f"{deparse(node)}: ref {ref!r} is not a level of "
                               f"{deparse(node.args[0])}; its levels are "
                               f"{_listed(inner.levels)}")
            order = [inner.levels.index(ref)] + [k for k, label in enumerate(inner.levels)
                                                 if label != ref]
            position = np.empty(len(order), dtype=np.intp)
            position[order] = np.arange(len(order))
            return _Factor(position[inner.codes], tuple(inner.levels[k] for k in order))
        source = node.args[0] if isinstance(node, Call) else node
        given = factor_levels(node) if isinstance(node, Call) else None
        if isinstance(source, Call) and source.function in ("factor", "C", "relevel"):
            inner = self.factor(source)
            codes, uniques, natural = inner.codes, list(inner.levels), list(inner.levels)
        else:
            codes, uniques, natural = self.labels(source)
        if given is not None:
            levels = self.learnt(node, lambda: _Levels(given)).labels
        else:
            levels = self.learnt(node, lambda: _Levels(tuple(natural))).labels
        if len(levels) > MAX_LEVELS:
            raise _Problem(f"{deparse(node)} has {len(levels):,} levels; a factor has at most "
                           f"{MAX_LEVELS:,}")
        absent = np.flatnonzero(codes < 0)
        if absent.size:
            raise _Problem(f"{deparse(node)} has no value in row {absent[0] + 1} "
                           f"{self.where}")
        index = {label: k for k, label in enumerate(levels)}
        mapping = np.array([index.get(label, -1) for label in uniques], dtype=np.intp)
        missing = np.flatnonzero(mapping < 0)
        if missing.size:
            label = uniques[int(missing[0])]
            row = int(np.flatnonzero(codes == missing[0])[0]) + 1
            seen = "is not among the levels" if given is not None else "was not in the data"
            raise _Problem(f"{deparse(node)} holds {label!r} in row {row} {self.where}, "
                           f"which {seen} ({_listed(levels)})")
        return _Factor(mapping[codes] if mapping.size else codes, tuple(levels))

    def labels(self, node: Node) -> tuple[np.ndarray, list[str], list[str]]:
        """Each row's index into ``uniques`` (the distinct labels as R prints them) and the
        natural level order (categories' order; numbers by value; text sorted)."""
        column = self.column(node.name) if isinstance(node, Name) else None
        if column is not None and isinstance(column.dtype, pd.CategoricalDtype):
            labels = [_label(c) for c in column.cat.categories]
            return column.cat.codes.to_numpy(dtype=np.intp), labels, labels
        if column is not None and pd.api.types.is_bool_dtype(column.dtype):
            return column.to_numpy(dtype=np.intp), ["FALSE", "TRUE"], ["FALSE", "TRUE"]
        if column is not None and not _is_numeric(column):
            codes, uniques = pd.factorize(column.astype(str), sort=True)
            labels = [str(u) for u in uniques]
            return codes.astype(np.intp), labels, labels
        if column is not None and pd.api.types.is_integer_dtype(column.dtype):
            codes, uniques = pd.factorize(column, sort=True)
            labels = [str(int(u)) for u in uniques]
            return codes.astype(np.intp), labels, labels
        values = self.vector(node, "factor()")
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            raise _Problem(f"{deparse(node)} is not a finite number in row {bad[0] + 1} "
                           f"{self.where}")
        codes, uniques = pd.factorize(values, sort=True)
        labels = [r_number(float(u)) for u in uniques]
        return codes.astype(np.intp), labels, labels


def _is_numeric(column: pd.Series) -> bool:
    dtype = column.dtype
    return (pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
            and not isinstance(dtype, pd.CategoricalDtype))


def _label(value: object) -> str:
    if isinstance(value, bool | np.bool_):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return r_number(float(value))
    return str(value)


def _short(value: object, limit: int = 40) -> str:
    text = str(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _listed(levels: Sequence[str], limit: int = 10) -> str:
    shown = ", ".join(levels[:limit])
    return shown + (", ..." if len(levels) > limit else "")


def _mean_sd(x: np.ndarray) -> tuple[float, float]:
    # R's scale(): the standard deviation with divisor n - 1
    mean = float(np.mean(x)) if x.size else 0.0
    sd = float(np.std(x, ddof=1)) if x.size > 1 else 0.0
    return mean, sd


def _poly_fit(x: np.ndarray, degree: int, label: str
              ) -> tuple[np.ndarray, tuple[float, ...], tuple[float, ...]]:
    """R's ``poly(x, degree)``: orthonormal polynomials of the centred x from a QR
    decomposition of its powers, and the recurrence coefficients (alpha, norm2) that
    reproduce them on new data (R's ``stats::poly``)."""
    if degree >= len(np.unique(x)):
        raise _Problem(f"{label}: the degree must be less than the number of distinct values "
                       f"({len(np.unique(x))})")
    mean = float(np.mean(x))
    centred = x - mean
    powers = centred[:, None] ** np.arange(degree + 1)
    q, r = np.linalg.qr(powers)
    z = q * np.diag(r)                   # the monic orthogonal polynomials at x
    norm2 = np.sum(z ** 2, axis=0)
    alpha = (np.sum(centred[:, None] * z ** 2, axis=0) / norm2 + mean)[:degree]
    return (z[:, 1:] / np.sqrt(norm2[1:]), tuple(float(a) for a in alpha),
            (1.0, *(float(v) for v in norm2)))


def _poly_predict(x: np.ndarray, alpha: Sequence[float], norm2: Sequence[float]) -> np.ndarray:
    """R's ``poly(x, coefs = ...)``: the three-term recurrence with the coefficients learnt
    from the data."""
    degree = len(alpha)
    z = np.ones((len(x), degree + 1))
    z[:, 1] = x - alpha[0]
    for i in range(1, degree):
        z[:, i + 1] = (x - alpha[i]) * z[:, i] - (norm2[i + 1] / norm2[i]) * z[:, i - 1]
    return z[:, 1:] / np.sqrt(np.asarray(norm2[2:]))


# ---------------------------------------------------------------------------------------------

def _coding(terms: Terms, factors: Sequence[bool]) -> tuple[tuple[bool, ...], ...]:
    """R's choice between contrasts (True) and one column per level (False) for each factor
    of each term: contrasts if the term without the factor is empty or contained in an
    earlier term (TermCode); without an intercept, the first factor of the first term that
    has one gets all its levels."""
    out = []
    for j, term in enumerate(terms.terms):
        codes = []
        for i in members(term):
            rest = term - {i}
            codes.append(not rest or any(rest <= earlier for earlier in terms.terms[:j]))
        out.append(codes)
    if not terms.intercept:
        for j, term in enumerate(terms.terms):
            first = next((k for k, i in enumerate(members(term)) if factors[i]), None)
            if first is not None:
                out[j][first] = False
                break
    return tuple(tuple(codes) for codes in out)


def _blocks(variable: _Numbers | _Factor, label: str, contrasts: bool
            ) -> list[tuple[str, object]]:
    """A variable's columns in a term: (name, column index or level index)."""
    if isinstance(variable, _Numbers):
        if len(variable.suffixes) == 1:
            return [(label, 0)]
        return [(label + suffix, k) for k, suffix in enumerate(variable.suffixes)]
    start = 1 if contrasts else 0
    return [(label + level, k) for k, level in enumerate(variable.levels) if k >= start]


def _matrix(evaluator: _Evaluator, terms: Terms, coding, text: str, what: str
            ) -> tuple[np.ndarray, tuple[str, ...], tuple[tuple[bool, ...], ...]]:
    """Evaluate the variables and fill the model matrix column by column."""
    labels = [deparse(v) for v in terms.variables]
    variables: list[_Numbers | _Factor | None] = [None] * len(terms.variables)
    used = sorted({i for term in terms.terms for i in members(term)})
    with np.errstate(all="ignore"):
        for i in used:
            try:
                variables[i] = evaluator.variable(terms.variables[i])
            except _Problem as problem:
                raise ParameterError(f"{what} {text!r}: {problem}") from None
            if isinstance(variables[i], _Numbers):
                _check_finite(variables[i].values, labels[i], text, what, evaluator.where)
            elif evaluator.fitting and len(variables[i].levels) < 2:
                raise ParameterError(
                    f"{what} {text!r}: {labels[i]} has only "
                    f"{_listed(variables[i].levels) or 'no level'} in the rows used; a factor "
                    "needs two levels or more: drop the term or check the data")
    if coding is None:
        coding = _coding(terms, [isinstance(v, _Factor) for v in variables])
    plan = []
    for term, codes in zip(terms.terms, coding, strict=True):
        blocks = [_blocks(variables[i], labels[i], code)
                  for i, code in zip(members(term), codes, strict=True)]
        plan.append((members(term), blocks))
    count = int(terms.intercept) + sum(int(np.prod([len(b) for b in blocks]))
                                       for _, blocks in plan)
    if count > MAX_COLUMNS:
        raise ParameterError(f"{what} {text!r} makes {count:,} model columns; at most "
                             f"{MAX_COLUMNS:,}: use fewer interactions or fewer levels")
    values = np.empty((evaluator.rows, count), dtype=float, order="F")
    names = []
    j = 0
    if terms.intercept:
        values[:, 0] = 1.0
        names.append("(Intercept)")
        j = 1
    for indices, blocks in plan:
        # the first variable's columns vary fastest, as in R
        for combination in itertools.product(*reversed(blocks)):
            parts = combination[::-1]
            column = values[:, j]
            column[:] = 1.0
            for i, (_, which) in zip(indices, parts, strict=True):
                variable = variables[i]
                if isinstance(variable, _Numbers):
                    column *= variable.values[:, which]
                else:
                    column *= variable.codes == which
            names.append(":".join(name for name, _ in parts))
            j += 1
    _check_magnitude(values, names, text, what, evaluator.where)
    return values, tuple(names), coding


def _check_finite(values: np.ndarray, label: str, text: str, what: str, where: str) -> None:
    bad = ~np.isfinite(values)
    if bad.any():
        row = int(np.argwhere(bad)[0][0])
        raise ParameterError(
            f"{what} {text!r}: term {label!r} is not a finite number in row {row + 1} {where} "
            "(e.g. log of 0, or an overflow); transform the column differently")


def _check_magnitude(values: np.ndarray, names: Sequence[str], text: str, what: str,
                     where: str) -> None:
    for j, name in enumerate(names):
        column = values[:, j]
        big = np.abs(column) > MAX_MAGNITUDE
        if big.any():
            row = int(np.flatnonzero(big)[0])
            raise ParameterError(
                f"{what} {text!r}: term {name!r} is {r_number(float(column[row]))} in row "
                f"{row + 1} {where}; values beyond {r_number(MAX_MAGNITUDE)} in size "
                "cannot be fitted in floating point: rescale the column (e.g. I(x/1e6))")


@dataclass(frozen=True, eq=False)
class ModelMatrix:
    """The model matrix of a formula's right-hand side, with R's term names.

    ``values`` (rows, columns) as floats; ``terms`` the column names as R prints
    them; ``spec`` what the stateful transforms learnt; :meth:`for_data` codes new
    data the same way (the same levels and the same centring and scaling), for
    predictions.
    """

    formula: ParsedFormula
    values: np.ndarray
    terms: tuple[str, ...]
    spec: MatrixSpec

    @property
    def has_intercept(self) -> bool:
        return "(Intercept)" in self.terms

    def for_data(self, data: pd.DataFrame, *, what: str = "newdata") -> np.ndarray:
        """The model matrix of ``data`` (the formula's columns must be there and complete).

        >>> frame = pd.DataFrame({"y": [0, 1, 1], "x": [1.0, 2.0, 6.0], "f": ["a", "b", "a"]})
        >>> m = build_matrix(parse_formula("y ~ scale(x) + f", frame.columns), frame)
        >>> m.for_data(pd.DataFrame({"x": [3.0], "f": ["b"]})).tolist()
        [[1.0, 0.0, 1.0]]
        """
        present = {str(label) for label in data.columns}
        missing = [c for c in self.formula.columns if c not in present]
        if missing:
            raise ParameterError(
                f"{what} lacks column {missing[0]!r}, which the formula "
                f"{self.formula.text!r} uses")
        evaluator = _Evaluator(data, dict(self.spec.state), fitting=False,
                               where=f"of {what}")
        values, _, _ = _matrix(evaluator, self.spec.terms, self.spec.coding, self.formula.text,
                               f"{what} cannot be coded like the data: formula")
        return values

    def check_rank(self, what: str = "formula") -> None:
        """Refuse collinear terms, naming the first term the earlier ones explain (R's
        aliasing in ``lm``)."""
        check_columns(self.values, self.terms, f"{what} {self.formula.text!r}")


def check_columns(values: np.ndarray, terms: Sequence[str], what: str) -> None:
    """Refuse a model matrix whose columns are linearly dependent, naming the first aliased
    term and the earlier terms it is a combination of.

    Each column is first divided by its largest value in size: collinearity does not
    depend on the columns' scales, and the Gram matrix of scaled columns cannot overflow.
    """
    size = np.max(np.abs(values), axis=0) if values.size else np.ones(values.shape[1])
    scaled = values / np.where(size > 0, size, 1.0)
    gram = scaled.T @ scaled
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


def build_matrix(formula: ParsedFormula, data: pd.DataFrame) -> ModelMatrix:
    """The model matrix of ``formula``'s right-hand side on ``data`` (no missing values).

    >>> frame = pd.DataFrame({"y": [0, 1, 1], "age.c": [-1.0, 0.0, 1.0], "f": ["a", "b", "a"]})
    >>> m = build_matrix(parse_formula("y ~ age.c * f", frame.columns), frame)
    >>> m.terms
    ('(Intercept)', 'age.c', 'fb', 'age.c:fb')
    """
    state: dict[Node, object] = {}
    evaluator = _Evaluator(data, state, fitting=True)
    values, names, coding = _matrix(evaluator, formula.terms, None, formula.text, "formula")
    spec = MatrixSpec(terms=formula.terms, state=dict(state), coding=coding, columns=names)
    return ModelMatrix(formula=formula, values=values, terms=names, spec=spec)
