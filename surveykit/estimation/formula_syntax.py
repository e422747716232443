"""R model formulas as data: a tokenizer, a parser into a frozen tree, and R's algebra of terms.

A formula such as ``rrt ~ age.c * leftRight.c + C(faculty)`` comes from the
command line or from a survey file that colleagues share, so it is read here as
data, never run as code: a tokenizer and a recursive-descent parser turn it into
a small tree of frozen nodes (:class:`Name`, :class:`Number`, :class:`Text`,
:class:`Call`, :class:`Chain`, :class:`Power`, :class:`Unary`, :class:`Paren`),
:func:`read_formula` checks that tree against the data's columns and a fixed list
of functions, and expands the right-hand side into terms as R's
``terms.formula`` does (Chambers and Hastie 1992, *Statistical Models in S*,
ch. 2; R's ``src/library/stats/src/model.c``: ``EncodeVars``, ``PlusTerms``,
``InteractTerms``, ``CrossTerms``, ``PowerTerms``, ``InTerms``, ``NestTerms``,
``DeleteTerms``, terms sorted by order, otherwise in the order written).
Nothing here calls ``eval``, looks up an attribute or imports anything by name;
:mod:`surveykit.estimation.formulas` evaluates the tree with numpy.

What a formula may hold:

* columns, as R names them (``age``, ``age.c``, ``cov.age``) or in backticks
  (```my column```); numbers; strings only as factor levels;
* the operators ``+ - * / : ^ %in%`` with R's meanings, ``1``/``0`` and ``- 1``
  for the intercept, parentheses; ``|`` is refused (it means random effects or
  conditioning elsewhere, nothing in a plain regression);
* the functions :data:`FUNCTIONS`: ``I()`` with arithmetic (``+ - * / ^``,
  unary minus, parentheses) on columns and numbers, the elementwise ``log``,
  ``log1p``, ``log2``, ``log10``, ``exp``, ``sqrt``, ``abs``, the stateful
  ``scale`` and ``center``, ``poly(x, degree)``, ``factor(x, levels = c(...))``,
  ``C(x, levels = c(...))`` and ``relevel(x, ref = "b")``.

Limits keep every formula cheap to read and to evaluate: :data:`MAX_LENGTH`
characters, nesting :data:`MAX_DEPTH` deep, interactions of at most
:data:`MAX_ORDER` variables, :data:`MAX_TERMS` terms, powers inside calls with a
constant exponent of at most :data:`MAX_EXPONENT` in size. Every refusal is a
one-line :class:`~surveykit.errors.ParameterError` naming the formula, the
token, its column in the formula and what to write instead.

>>> f = read_formula("rrt ~ age.c * leftRight.c", ["rrt", "age.c", "leftRight.c"])
>>> f.response, f.columns, f.terms.labels
('rrt', ('age.c', 'leftRight.c'), ('age.c', 'leftRight.c', 'age.c:leftRight.c'))

This module is pure: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import keyword
import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from surveykit.errors import ParameterError

__all__ = ["FUNCTIONS", "MAX_DEPTH", "MAX_EXPONENT", "MAX_LENGTH", "MAX_ORDER", "MAX_TERMS",
           "Call", "Chain", "Formula", "Keyword", "Link", "Name", "Number", "Paren", "Power",
           "Terms", "Text", "Unary", "deparse", "r_number", "read_formula"]

#: Characters in a formula.
MAX_LENGTH = 10_000
#: Nesting of parentheses, calls, signs and powers.
MAX_DEPTH = 32
#: Variables in one interaction term, and the largest formula power ``(a + b)^k``.
MAX_ORDER = 6
#: Terms of the expanded right-hand side.
MAX_TERMS = 1_000
#: Largest size of a power's exponent inside a call (``I(x^2)``, ``I(x^-1)``).
MAX_EXPONENT = 16
#: Characters in a string (a factor level).
MAX_TEXT = 1_000

#: The functions a formula may call: name -> what it does (as the error messages list them).
FUNCTIONS = {
    "I": "arithmetic as is, e.g. I(age^2)",
    "log": "natural logarithm", "log1p": "log(1 + x)", "log2": "base-2 logarithm",
    "log10": "base-10 logarithm", "exp": "exponential", "sqrt": "square root",
    "abs": "absolute value",
    "scale": "(x - mean) / standard deviation of the data",
    "center": "x - mean of the data",
    "poly": "orthogonal polynomials as R's poly(x, degree)",
    "factor": "categories, optionally factor(x, levels = c(\"a\", \"b\"))",
    "C": "categories, as factor()",
    "relevel": "categories with another reference, relevel(x, ref = \"b\")",
}
# elementwise functions of numbers: usable inside I() and other calls
NUMERIC_FUNCTIONS = frozenset({"I", "log", "log1p", "log2", "log10", "exp", "sqrt", "abs",
                               "scale", "center"})
FACTOR_FUNCTIONS = frozenset({"factor", "C", "relevel"})
_KEYWORDS = {"factor": ("levels",), "C": ("levels",), "relevel": ("ref",),
             "poly": ("degree",)}
_KEYWORD_HELP = "levels = (factor, C), ref = (relevel), degree = (poly)"

# R's reserved words and Python's keywords: never a column unless the data has one so named
_RESERVED = frozenset({"if", "else", "repeat", "while", "function", "for", "next", "break",
                       "TRUE", "FALSE", "NULL", "Inf", "NaN", "NA", "NA_integer_", "NA_real_",
                       "NA_character_", "in", *keyword.kwlist})
_R_RESERVED = frozenset({"if", "else", "repeat", "while", "function", "for", "next", "break",
                         "TRUE", "FALSE", "NULL", "Inf", "NaN", "NA", "NA_integer_",
                         "NA_real_", "NA_character_", "in"})

_SPACE = " \t\r\n"
_NUMBER = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NAME = re.compile(r"(?:[^\W\d]|\.(?![0-9]))[\w.]*")
_SYNTACTIC = re.compile(r"(?:[^\W\d_]|\.(?![0-9]))[\w.]*\Z|\.\Z")
_OPERATORS = ("%in%", "**", ":=", "==", "!=", "<-", "~", "+", "-", "*", "/", ":", "^", "(",
              ")", ",", "=", "|")
_NOT_PART = {
    "[": "subscripts ('[ ]') are not part of a formula",
    "]": "subscripts ('[ ]') are not part of a formula",
    "$": "'$' (element access) is not part of a formula",
    "@": "'@' (attribute access) is not part of a formula",
    "{": "braces are not part of a formula",
    "}": "braces are not part of a formula",
    ";": "';' would start a second expression; a formula is one",
    "#": "comments ('#') are not part of a formula",
    "!": "comparisons and logical operators are not part of a formula; make such a column "
         "before the regression",
    "&": "comparisons and logical operators are not part of a formula; make such a column "
         "before the regression",
    "<": "comparisons and logical operators are not part of a formula; make such a column "
         "before the regression",
    ">": "comparisons and logical operators are not part of a formula; make such a column "
         "before the regression",
    "?": "'?' is not part of a formula",
    "\\": "a backslash only escapes a quote inside a string",
    "%": "of R's %...% operators only %in% is part of a formula",
    ":=": "':=' (assignment) is not part of a formula",
    "==": "comparisons and logical operators are not part of a formula; make such a column "
          "before the regression",
    "!=": "comparisons and logical operators are not part of a formula; make such a column "
          "before the regression",
    "<-": "assignment ('<-') is not part of a formula",
}
_BAR = ("'|' has no meaning in a regression formula here (it marks random effects or "
        "conditioning in other packages); remove it and the part after it")


# ---------------------------------------------------------------------------------------------
# The tree. Positions are 1-based columns in the formula text; they are left out of equality,
# so the same expression written twice is one variable (as in R, where terms match by their
# deparsed text).

@dataclass(frozen=True)
class Name:
    """A column, as written (``age.c``) or in backticks."""

    name: str
    position: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Number:
    """A number, as a float (its R spelling comes from :func:`r_number`)."""

    value: float
    position: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Text:
    """A string: a factor level in ``levels = c(...)`` or ``ref = ...``."""

    value: str
    position: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Keyword:
    """A named argument, ``levels = c("a", "b")``."""

    name: str
    value: Node
    position: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Call:
    """A call of one of :data:`FUNCTIONS` (or ``c()`` inside ``levels =``)."""

    function: str
    args: tuple[Node, ...]
    keywords: tuple[Keyword, ...] = ()
    position: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Link:
    """One operator and its right operand in a :class:`Chain`."""

    op: str
    operand: Node
    position: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Chain:
    """Left-associative operators of one precedence, ``a + b - c`` or ``a:b:c``, flat, so
    that a long formula is a wide tree rather than a deep one."""

    first: Node
    links: tuple[Link, ...]


@dataclass(frozen=True)
class Power:
    """``base ^ exponent`` (right-associative; R reads ``**`` as ``^``)."""

    base: Node
    exponent: Node
    position: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Unary:
    """A sign, ``-x`` or ``+x``."""

    op: str
    operand: Node
    position: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Paren:
    """Parentheses, kept so that a term's name shows them as written (``I((x/10)^2)``)."""

    inner: Node
    position: int = field(default=0, compare=False)


Node = Name | Number | Text | Call | Chain | Power | Unary | Paren


@dataclass(frozen=True)
class Terms:
    """The right-hand side expanded: the intercept, the variables (each an expression
    evaluated to one or more columns) in R's order, and the terms as sets of variable
    indices (R's bit patterns), sorted by order (main effects first) and otherwise as
    written."""

    intercept: bool
    variables: tuple[Node, ...]
    terms: tuple[frozenset[int], ...]

    @property
    def labels(self) -> tuple[str, ...]:
        """R's term labels: ``age.c``, ``age.c:leftRight.c``."""
        names = [deparse(v) for v in self.variables]
        return tuple(":".join(names[i] for i in members(term)) for term in self.terms)


def members(term: frozenset[int]) -> list[int]:
    """The variables of a term, in R's order."""
    return sorted(term)


@dataclass(frozen=True)
class Formula:
    """A formula read and checked: the response column (or None), the right-hand side's
    text, the data columns it uses (in order of appearance) and its :class:`Terms`."""

    text: str
    response: str | None
    rhs: str
    columns: tuple[str, ...]
    terms: Terms


# ---------------------------------------------------------------------------------------------
# Deparsing: R's spelling of an expression, which names terms and model-matrix columns.

def r_number(value: float) -> str:
    """A number as R prints it (15 significant digits; fixed notation unless scientific is
    shorter), e.g. in term names and factor levels.

    >>> r_number(10.0), r_number(1e5), r_number(0.0001), r_number(123456.0), r_number(0.5)
    ('10', '1e+05', '1e-04', '123456', '0.5')
    """
    if value == 0:
        return "0"
    if not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Inf" if value > 0 else "-Inf")
    sign = "-" if value < 0 else ""
    x = abs(value)
    mantissa, exponent = f"{x:.14e}".split("e")
    digits = mantissa.replace(".", "").rstrip("0") or "0"
    power = int(exponent)
    sci = (digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
           + ("e-" if power < 0 else "e+") + f"{abs(power):02d}")
    fixed = f"{x:.{max(0, len(digits) - 1 - power)}f}"
    return sign + (fixed if len(fixed) <= len(sci) else sci)


def _name_label(name: str) -> str:
    if _SYNTACTIC.match(name) and name not in _R_RESERVED:
        return name
    return f"`{name}`"


def deparse(node: Node) -> str:
    """R's text of an expression (``deparse``): spaces around ``+ - *`` and ``%in%``, none
    around ``/ ^ :``, parentheses as written, strings in double quotes.

    >>> f = read_formula("~ I( (cov.age / 10)**2 ) + factor(f, levels=c('b','a'))",
    ...                  ["cov.age", "f"], response=False)
    >>> f.terms.labels
    ('I((cov.age/10)^2)', 'factor(f, levels = c("b", "a"))')
    """
    if isinstance(node, Name):
        return _name_label(node.name)
    if isinstance(node, Number):
        return r_number(node.value)
    if isinstance(node, Text):
        return '"' + node.value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(node, Call):
        parts = [deparse(a) for a in node.args]
        parts += [f"{k.name} = {deparse(k.value)}" for k in node.keywords]
        return f"{node.function}({', '.join(parts)})"
    if isinstance(node, Chain):
        out = [deparse(node.first)]
        for link in node.links:
            op = link.op if link.op in ("/", ":") else f" {link.op} "
            out.append(op + deparse(link.operand))
        return "".join(out)
    if isinstance(node, Power):
        return f"{deparse(node.base)}^{deparse(node.exponent)}"
    if isinstance(node, Unary):
        return node.op + deparse(node.operand)
    return f"({deparse(node.inner)})"


# ---------------------------------------------------------------------------------------------
# Tokens

class _Problem(Exception):
    """A refusal at a column of the formula, turned into a ParameterError by read_formula."""

    def __init__(self, position: int, message: str):
        super().__init__(message)
        self.position = position
        self.message = message


@dataclass(frozen=True)
class _Token:
    kind: str            # "name", "number", "string", "op", "end"
    text: str            # as written ("**" for a power written so)
    value: object        # the name, the float, the string, or the operator ("^" for "**")
    position: int
    quoted: bool = False

    def is_op(self, *ops: str) -> bool:
        return self.kind == "op" and self.value in ops


def _describe(char: str) -> str:
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X}" + (f" ({name.lower()})" if name else "")


def _tokens(text: str) -> list[_Token]:
    for i, char in enumerate(text):
        if char not in _SPACE and unicodedata.category(char)[0] == "C":
            raise _Problem(i + 1, f"control character {_describe(char)} at column {i + 1} is "
                                  "not allowed in a formula; remove it")
    out: list[_Token] = []
    i = 0
    while i < len(text):
        char = text[i]
        position = i + 1
        if char in _SPACE:
            i += 1
            continue
        match = _NUMBER.match(text, i)
        if match:
            literal = match.group()
            value = float(literal)
            if not math.isfinite(value):
                raise _Problem(position, f"the number {_short(literal)} at column {position} "
                                         "is too large for a float; write a smaller one")
            out.append(_Token("number", literal, value, position))
            i = match.end()
            continue
        match = _NAME.match(text, i)
        if match:
            out.append(_Token("name", match.group(), match.group(), position))
            i = match.end()
            continue
        if char == "`":
            end = text.find("`", i + 1)
            if end < 0:
                raise _Problem(position, f"the backtick at column {position} is not closed; "
                                         "write a column name as `name`")
            if end == i + 1:
                raise _Problem(position, f"the backticks at column {position} are empty; "
                                         "write a column name between them")
            out.append(_Token("name", text[i:end + 1], text[i + 1:end], position, quoted=True))
            i = end + 1
            continue
        if char in "\"'":
            value, i = _string(text, i)
            out.append(_Token("string", text[position - 1:i], value, position))
            continue
        op = next((op for op in _OPERATORS if text.startswith(op, i)), None)
        if op in _NOT_PART or (op is None and char in _NOT_PART):
            shown = op or char
            raise _Problem(position, f"'{shown}' at column {position}: {_NOT_PART[shown]}")
        if op is None:
            raise _Problem(position, f"character {char!r} ({_describe(char)}) at column "
                                     f"{position} is not part of a formula; a column whose "
                                     "name has it goes in backticks: `name`")
        out.append(_Token("op", op, "^" if op == "**" else op, position))
        i += len(op)
    out.append(_Token("end", "", None, len(text) + 1))
    return out


def _string(text: str, start: int) -> tuple[str, int]:
    quote = text[start]
    out = []
    i = start + 1
    while i < len(text):
        char = text[i]
        if char == quote:
            if i - start - 1 > MAX_TEXT:
                raise _Problem(start + 1, f"the string at column {start + 1} is longer than "
                                          f"{MAX_TEXT:,} characters")
            return "".join(out), i + 1
        if char == "\\":
            following = text[i + 1:i + 2]
            if following not in ("\\", '"', "'"):
                raise _Problem(i + 1, f"the escape '\\{following}' at column {i + 1} is not "
                                      "allowed; only \\\\, \\\" and \\' are")
            out.append(following)
            i += 2
            continue
        out.append(char)
        i += 1
    raise _Problem(start + 1, f"the string at column {start + 1} is not closed; end it with "
                              f"{quote}")


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


# ---------------------------------------------------------------------------------------------
# The parser (R's precedence, highest first: ^, unary - +, :, %in%, * /, binary + -)

class _Parser:
    def __init__(self, tokens: list[_Token], columns: frozenset[str] | None):
        self.tokens = tokens
        self.at = 0
        self.depth = 0
        self.columns = columns

    def peek(self, ahead: int = 0) -> _Token:
        return self.tokens[min(self.at + ahead, len(self.tokens) - 1)]

    def take(self) -> _Token:
        token = self.peek()
        self.at += 1
        return token

    def enter(self, token: _Token) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _Problem(token.position, f"'{token.text}' at column {token.position} nests "
                                           f"deeper than {MAX_DEPTH} levels (parentheses, "
                                           "calls, signs, powers); simplify the formula")

    def leave(self) -> None:
        self.depth -= 1

    def chain(self, operand, ops: tuple[str, ...]) -> Node:
        first = operand()
        links = []
        while self.peek().is_op(*ops):
            token = self.take()
            links.append(Link(token.value, operand(), token.position))
        return Chain(first, tuple(links)) if links else first

    def sum(self) -> Node:
        return self.chain(self.product, ("+", "-"))

    def product(self) -> Node:
        return self.chain(self.within, ("*", "/"))

    def within(self) -> Node:
        return self.chain(self.interaction, ("%in%",))

    def interaction(self) -> Node:
        return self.chain(self.unary, (":",))

    def unary(self) -> Node:
        token = self.peek()
        if token.is_op("+", "-"):
            self.take()
            self.enter(token)
            operand = self.unary()
            self.leave()
            return Unary(token.value, operand, token.position)
        return self.power()

    def power(self) -> Node:
        base = self.primary()
        token = self.peek()
        if token.is_op("^"):
            self.take()
            self.enter(token)
            exponent = self.unary()
            self.leave()
            return Power(base, exponent, token.position)
        return base

    def primary(self) -> Node:
        token = self.take()
        if token.kind == "number":
            return Number(token.value, token.position)
        if token.kind == "string":
            return Text(token.value, token.position)
        if token.kind == "name":
            if not token.quoted and token.value in _RESERVED and (
                    self.columns is None or token.value not in self.columns):
                raise _Problem(token.position, _keyword(token))
            if self.peek().is_op("("):
                return self.call(token)
            return Name(token.value, token.position)
        if token.is_op("("):
            self.enter(token)
            inner = self.sum()
            self.close(token)
            self.leave()
            return Paren(inner, token.position)
        raise _Problem(token.position, self.unexpected(token))

    def call(self, name: _Token) -> Call:
        opening = self.take()
        self.enter(opening)
        args: list[Node] = []
        keywords: list[Keyword] = []
        if not self.peek().is_op(")"):
            while True:
                token = self.peek()
                if token.kind == "name" and self.peek(1).is_op("="):
                    self.take()
                    self.take()
                    keywords.append(Keyword(token.value, self.sum(), token.position))
                else:
                    args.append(self.sum())
                if not self.peek().is_op(","):
                    break
                self.take()
        self.close(opening, name.value)
        self.leave()
        return Call(name.value, tuple(args), tuple(keywords), name.position)

    def close(self, opening: _Token, function: str | None = None) -> None:
        token = self.peek()
        if token.is_op(")"):
            self.take()
            return
        if token.kind == "end":
            what = f"the call of {function!r}" if function else "it"
            raise _Problem(opening.position, f"'(' at column {opening.position} is not closed "
                                             f"({what} needs a ')')")
        raise _Problem(token.position, self.unexpected(token))

    def unexpected(self, token: _Token) -> str:
        """Why ``token`` cannot stand where it is."""
        where = f"at column {token.position}"
        index = next(k for k, t in enumerate(self.tokens) if t is token)
        previous = self.tokens[index - 1] if index else None
        if token.kind == "end":
            if previous is not None and previous.kind == "op":
                return (f"'{previous.text}' at column {previous.position} needs a term after "
                        f"it; add one or remove the '{previous.text}'")
            return "the formula ends where a term is expected"
        if token.is_op("|"):
            return f"'|' {where}: {_BAR}"
        if token.is_op(")"):
            return (f"')' {where} has no matching '(', or an argument is missing before it")
        if token.is_op("="):
            return (f"'=' {where} names an argument and belongs inside a call: "
                    f"{_KEYWORD_HELP}")
        if token.is_op(","):
            return f"',' {where} separates the arguments of a call and belongs inside one"
        if token.is_op("~"):
            return f"a second '~' {where}: a formula has one"
        if token.kind == "op":
            return f"'{token.text}' {where} needs a term before it"
        if token.kind == "name" and not token.quoted and token.value in _RESERVED and (
                self.columns is None or token.value not in self.columns):
            return _keyword(token)
        if token.kind == "name" and token.value.startswith("."):
            return (f"'{token.text}' {where} looks like attribute access, which is not part "
                    "of a formula")
        if (token.kind == "string" and previous is not None and previous.kind == "name"
                and previous.position + len(previous.text) == token.position):
            return (f"'{previous.text}{_short(token.text)}' at column {previous.position}: "
                    "prefixed strings (f-strings) are not part of a formula")
        shown = "a string" if token.kind == "string" else repr(_short(token.text))
        return (f"{shown} {where} follows a term without an operator; join terms with '+', "
                "':' or '*'")


def _keyword(token: _Token) -> str:
    return (f"{token.value!r} at column {token.position} is a keyword, not a column or a "
            "function: a formula has no lambdas, loops, conditions or imports, only columns, "
            "numbers, operators and the functions " + ", ".join(FUNCTIONS))


# ---------------------------------------------------------------------------------------------
# Checking the tree and expanding the terms

class _Reader:
    """Checks a parsed right-hand side against the columns and expands it into terms."""

    def __init__(self, columns: Sequence[str], unknown):
        self.columns = frozenset(columns)
        self.unknown = unknown      # (column name, position) -> the ParameterError to raise
        self.used: dict[str, None] = {}
        self.variables: dict[str, int] = {}
        self.nodes: list[Node] = []
        self.intercept = True
        self.parity = True
        self.pairs = 0          # pairs of terms formed so far: the work of the expansion

    # --- names and values -----------------------------------------------------------------
    def column(self, node: Name) -> None:
        if node.name not in self.columns:
            raise self.unknown(node.name, node.position)
        self.used.setdefault(node.name)

    def value(self, node: Node, inside: str) -> None:
        """An expression evaluated to numbers (inside a call): columns, numbers, arithmetic,
        and the elementwise functions."""
        if isinstance(node, Name):
            self.column(node)
        elif isinstance(node, Number):
            return
        elif isinstance(node, Text):
            raise _Problem(node.position, _text_here(node, inside))
        elif isinstance(node, Chain):
            self.value(node.first, inside)
            for link in node.links:
                if link.op in (":", "%in%"):
                    raise _Problem(link.position, (
                        f"'{link.op}' at column {link.position} is a formula operator; inside "
                        f"{inside} use arithmetic (+ - * / ^), or move the interaction out"))
                self.value(link.operand, inside)
        elif isinstance(node, Power):
            self.value(node.base, inside)
            _exponent(_constant(node.exponent), node.position)
        elif isinstance(node, Unary | Paren):
            self.value(node.operand if isinstance(node, Unary) else node.inner, inside)
        else:
            self.call(node, inside)

    def call(self, node: Call, inside: str | None) -> None:
        """A call: one of FUNCTIONS with its arguments; ``inside`` is None for a term of
        its own, else the call it is an argument of."""
        name = node.function
        where = f"at column {node.position}"
        if name not in FUNCTIONS:
            if name == "c":
                raise _Problem(node.position, f"'c(' {where} lists factor levels and belongs "
                                              "after levels =, e.g. factor(x, levels = "
                                              "c(\"a\", \"b\"))")
            raise _Problem(node.position, (
                f"{name!r} {where} is not a function formulas know{_non_ascii(name)}; they "
                f"are {', '.join(FUNCTIONS)}"))
        if inside is not None and name not in NUMERIC_FUNCTIONS and not (
                name in FACTOR_FUNCTIONS and inside in _FACTOR_CALLS):
            kind = "several columns" if name == "poly" else "categories"
            raise _Problem(node.position, (
                f"{name}() {where} makes {kind}, so it is a term of its own, not an argument "
                f"of {inside}; write it beside the other terms, e.g. ~ {name}(x) + ..."))
        allowed = _KEYWORDS.get(name, ())
        for kw in node.keywords:
            if kw.name not in allowed:
                takes = (f"{name}() takes {', '.join(k + ' =' for k in allowed)}" if allowed
                         else f"{name}() takes no named arguments")
                raise _Problem(kw.position, (
                    f"the argument name {kw.name!r} at column {kw.position} is not allowed: "
                    f"{takes} (the named arguments are {_KEYWORD_HELP})"))
        named = {kw.name: kw.value for kw in node.keywords}
        if len(named) != len(node.keywords):
            raise _Problem(node.position, f"{name}() {where} names an argument twice")
        positional = {"factor": 2, "C": 1, "relevel": 2, "poly": 2}.get(name, 1)
        if not 1 <= len(node.args) <= positional or (
                len(node.args) == 2 and allowed[0] in named):
            usage = {"factor": "factor(x) or factor(x, levels = c(\"a\", \"b\"))",
                     "C": "C(x) or C(x, levels = c(\"a\", \"b\")) (treatment contrasts only)",
                     "relevel": "relevel(x, ref = \"b\")",
                     "poly": "poly(x, 2)"}.get(name, f"{name}(x)")
            raise _Problem(node.position, f"{name}() {where} takes one column or expression"
                                          f" as its first argument: write {usage}")
        x = node.args[0]
        if name in FACTOR_FUNCTIONS:
            if isinstance(x, Call) and x.function in FACTOR_FUNCTIONS:
                self.call(x, f"{name}()")
            else:
                self.value(x, f"{name}()")
            extra = node.args[1] if len(node.args) > 1 else named.get(allowed[0])
            if extra is not None and name == "relevel":
                _level(extra, "ref")
            elif extra is not None:
                _levels(extra)
            elif name == "relevel":
                raise _Problem(node.position, f"relevel() {where} needs the new reference "
                                              "level: relevel(x, ref = \"b\")")
        elif name == "poly":
            self.value(x, "poly()")
            degree = node.args[1] if len(node.args) > 1 else named.get("degree")
            if degree is not None:
                poly_degree(degree)
        else:
            self.value(x, f"{name}()")

    # --- terms (R's EncodeVars) -----------------------------------------------------------
    def encode(self, node: Node) -> list[frozenset[int]]:
        if isinstance(node, Number):
            if node.value not in (0.0, 1.0):
                raise _Problem(node.position, (
                    f"the number {r_number(node.value)} at column {node.position} is not a "
                    "term: only 1 (the intercept) and 0 (none) stand alone; arithmetic goes "
                    "inside I(), e.g. I(x * 2)"))
            self.intercept = (node.value == 1.0) == self.parity
            return []
        if isinstance(node, Text):
            raise _Problem(node.position, _text_here(node, None))
        if isinstance(node, Name):
            self.column(node)
            return [self.install(node)]
        if isinstance(node, Call):
            self.call(node, None)
            return [self.install(node)]
        if isinstance(node, Paren):
            return self.encode(node.inner)
        if isinstance(node, Unary):
            return self.delete([], node.operand) if node.op == "-" else self.encode(
                node.operand)
        if isinstance(node, Power):
            return self.power(node)
        terms = self.encode(node.first)
        for link in node.links:
            if link.op == "-":
                terms = self.delete(terms, link.operand)
                continue
            right = self.encode(link.operand)
            if link.op == "+":
                terms = _unique(terms + right)
            elif link.op == ":":
                terms = self.product(terms, right, link.position)
            elif link.op == "*":
                terms = _unique(terms + right + self.product(terms, right, link.position))
            elif link.op == "/":      # NestTerms: a/b = a + b %in% a
                whole = _union(terms)
                terms = _unique(terms + self.product([whole], right, link.position))
            else:                     # InTerms: b %in% a = b:a
                terms = self.product(terms, [_union(right)], link.position)
            self.bound(terms, link.position)
        return terms

    def install(self, node: Node) -> frozenset[int]:
        label = deparse(node)
        if label not in self.variables:
            self.variables[label] = len(self.nodes)
            self.nodes.append(node)
        return frozenset((self.variables[label],))

    def delete(self, terms: list[frozenset[int]], node: Node) -> list[frozenset[int]]:
        self.parity = not self.parity
        right = self.encode(node)
        self.parity = not self.parity
        return [t for t in terms if t not in right]

    def product(self, left: list[frozenset[int]], right: list[frozenset[int]], position: int
                ) -> list[frozenset[int]]:
        self.pairs += len(left) * len(right)
        if len(left) * len(right) > _MAX_PAIRS or self.pairs > 10 * _MAX_PAIRS:
            raise _Problem(position, _too_many(position))
        out = []
        for a in left:
            for b in right:
                term = a | b
                if len(term) > MAX_ORDER:
                    raise _Problem(position, (
                        f"the interaction at column {position} joins {len(term)} "
                        f"variables; at most {MAX_ORDER} can interact"))
                out.append(term)
        return _unique(out)

    def power(self, node: Power) -> list[frozenset[int]]:
        exponent = node.exponent
        if not (isinstance(exponent, Number) and exponent.value == int(exponent.value)
                and 2 <= exponent.value <= MAX_ORDER):
            raise _Problem(node.position, (
                f"the power '^{_short(deparse(exponent))}' at column {node.position} of a "
                f"formula term must be a whole number from 2 to {MAX_ORDER} (interactions up "
                "to that order); an arithmetic power goes inside I(), e.g. I(x^2)"))
        left = self.encode(node.base)
        terms = left
        for _ in range(int(exponent.value) - 1):
            terms = self.product(left, terms, node.position)
            self.bound(terms, node.position)
        return terms

    def bound(self, terms: list[frozenset[int]], position: int) -> None:
        if len(terms) > MAX_TERMS:
            raise _Problem(position, _too_many(position))


_FACTOR_CALLS = frozenset({"factor()", "C()", "relevel()"})
# Pairs of terms one interaction may form: (a + b + ...):(c + d + ...) beyond this cannot
# come back to MAX_TERMS terms (fewer variables could not make so many distinct terms); and
# ten times that in the whole formula, which keeps its expansion to a second or so.
_MAX_PAIRS = 100 * MAX_TERMS


def _too_many(position: int) -> str:
    return (f"the formula expands to more than {MAX_TERMS:,} terms at column {position}; "
            "use fewer interactions")


def _unique(terms: list[frozenset[int]]) -> list[frozenset[int]]:
    """R's TrimRepeats: the first of each term, and no empty term."""
    return [t for t in dict.fromkeys(terms) if t]


def _union(terms: list[frozenset[int]]) -> frozenset[int]:
    return frozenset().union(*terms)


def _text_here(node: Text, inside: str | None) -> str:
    where = f" in {inside}" if inside else ""
    return (f"the string {_short(repr(node.value))} at column {node.position}{where} is not "
            "allowed: strings only name factor levels, as in factor(x, levels = c(\"a\", "
            "\"b\")) or relevel(x, ref = \"b\")")


def _non_ascii(name: str) -> str:
    odd = [char for char in name if ord(char) > 127]
    if not odd:
        return ""
    return f" (it holds the non-ASCII character {_describe(odd[0])})"


def _constant(node: Node) -> float:
    """The value of a constant exponent (numbers, signs, arithmetic, parentheses), computed
    with the same bounds as the formula's own powers."""
    if isinstance(node, Number):
        return node.value
    if isinstance(node, Paren):
        return _constant(node.inner)
    if isinstance(node, Unary):
        value = _constant(node.operand)
        return -value if node.op == "-" else value
    if isinstance(node, Power):
        base = _constant(node.base)
        exponent = _exponent(_constant(node.exponent), node.position)
        return _finite(_power(base, exponent), node.position)
    if isinstance(node, Chain):
        value = _constant(node.first)
        for link in node.links:
            right = _constant(link.operand)
            if link.op == "+":
                value += right
            elif link.op == "-":
                value -= right
            elif link.op == "*":
                value *= right
            elif link.op == "/" and right != 0:
                value /= right
            else:
                raise _Problem(link.position, (
                    f"'{link.op}' at column {link.position} cannot be computed in an exponent "
                    "(division by 0 or a formula operator)"))
            value = _finite(value, link.position)
        return value
    position = getattr(node, "position", 0)
    raise _Problem(position, (
        f"the exponent at column {position} must be a number (e.g. x^2 or x^-1); a power of a "
        "column is not bounded"))


def _exponent(value: float, position: int) -> float:
    """A power's exponent, refused beyond MAX_EXPONENT in size before anything is raised
    to it (``9^9^9``)."""
    if abs(value) > MAX_EXPONENT:
        raise _Problem(position, (
            f"the exponent {r_number(value)} of '^' at column {position} is larger than "
            f"{MAX_EXPONENT} in size; use a smaller power"))
    return value


def _power(base: float, exponent: float) -> float:
    try:
        return math.pow(base, exponent)
    except (OverflowError, ValueError, ZeroDivisionError):
        return math.nan


def _finite(value: float, position: int) -> float:
    if not math.isfinite(value) or abs(value) > 1e300:
        raise _Problem(position, f"the constant at column {position} is too large (or not a "
                                 "number); use smaller numbers")
    return value


def _level(node: Node, what: str) -> str:
    if isinstance(node, Text):
        return node.value
    if isinstance(node, Number):
        return r_number(node.value)
    position = getattr(node, "position", 0)
    raise _Problem(position, (
        f"{what} at column {position} must be a level in quotes, e.g. {what} = \"b\", or a "
        "number"))


def _levels(node: Node) -> tuple[str, ...]:
    items = node.args if isinstance(node, Call) and node.function == "c" else (node,)
    if isinstance(node, Call) and node.function == "c" and node.keywords:
        raise _Problem(node.keywords[0].position, "c() lists levels without names")
    labels = tuple(_level(item, "a level") for item in items)
    if not labels:
        raise _Problem(getattr(node, "position", 0), "levels = c() lists no levels")
    if len(set(labels)) != len(labels):
        repeated = next(label for label in labels if labels.count(label) > 1)
        raise _Problem(getattr(node, "position", 0), (
            f"levels at column {getattr(node, 'position', 0)} lists {repeated!r} twice"))
    return labels


def factor_levels(node: Call) -> tuple[str, ...] | None:
    """The levels a ``factor()`` or ``C()`` call lists, or None; ``relevel()``'s ``ref``."""
    allowed = _KEYWORDS[node.function][0]
    extra = node.args[1] if len(node.args) > 1 else next(
        (k.value for k in node.keywords if k.name == allowed), None)
    if extra is None:
        return None
    return (_level(extra, "ref"),) if node.function == "relevel" else _levels(extra)


def poly_degree(node: Node | None) -> int:
    """The degree of ``poly(x, degree)``: a whole number from 1 to MAX_EXPONENT (1 if
    omitted)."""
    if node is None:
        return 1
    if not (isinstance(node, Number) and node.value == int(node.value)
            and 1 <= node.value <= MAX_EXPONENT):
        position = getattr(node, "position", 0)
        raise _Problem(position, (
            f"the degree of poly() at column {position} must be a whole number from 1 to "
            f"{MAX_EXPONENT}"))
    return int(node.value)


def poly_argument(node: Call) -> Node | None:
    """The degree argument of a ``poly()`` call, positional or ``degree =``."""
    if len(node.args) > 1:
        return node.args[1]
    return next((k.value for k in node.keywords if k.name == "degree"), None)


# ---------------------------------------------------------------------------------------------

def read_formula(text: str, columns: Iterable[str], *, option: str = "formula",
                 response: bool = True) -> Formula:
    """Read ``text`` into a checked :class:`Formula` over the data's ``columns``.

    ``response=True`` needs ``column ~ terms``; ``False`` takes ``~ terms``
    only. Raises a one-line ParameterError naming ``option``, the formula, the
    offending token and its column.

    >>> read_formula("y ~ open(x)", ["y", "x"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    surveykit.errors.ParameterError: formula ('y ~ open(x)') does not parse: 'open' at column 5 ...
    >>> read_formula("y ~ x | x", ["y", "x"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    surveykit.errors.ParameterError: formula ('y ~ x | x') does not parse: '|' at column 7: ...
    """
    columns = [str(c) for c in columns]
    if not isinstance(text, str):
        raise ParameterError(f"{option} ({text!r}) must be a text such as \"rrt ~ age\"")
    shown = _shown(text)
    if len(text) > MAX_LENGTH:
        raise ParameterError(f"{option} ({shown!r}) is {len(text):,} characters long; a "
                             f"formula has at most {MAX_LENGTH:,}")

    def problem(error: _Problem) -> ParameterError:
        return ParameterError(f"{option} ({shown!r}) does not parse: {error.message}")

    try:
        tokens = _tokens(text)
    except _Problem as error:
        raise problem(error) from None
    tildes = [t for t in tokens if t.is_op("~")]
    if len(tildes) != 1:
        raise ParameterError(
            f"{option} ({shown!r}) must have one '~' between the response and the terms, "
            "e.g. \"rrt ~ age + C(faculty)\"" if response else
            f"{option} ({shown!r}) must read '~ terms', e.g. \"~ 1\" or \"~ age\"")
    split = tokens.index(tildes[0])
    right = text[tildes[0].position:].strip()
    lhs = None
    if response:
        if split == 0:
            raise ParameterError(f"{option} ({shown!r}) needs a response before '~'")
        first = tokens[0]
        if split != 1 or first.kind != "name":
            raise problem(_Problem(first.position, (
                f"the response at column {first.position} must be one column name; transform "
                "it in the data, not in the formula")))
        lhs = first.value
        if lhs not in columns:
            raise ParameterError(_unknown(option, shown, lhs, columns))
    elif split:
        raise ParameterError(f"{option} ({shown!r}) takes no response: write "
                             f"'~ {_shown(right)}'")
    if not right:
        raise ParameterError(f"{option} ({shown!r}) needs terms after '~' (\"~ 1\" for none)")
    parser = _Parser(tokens, frozenset(columns))
    parser.at = split + 1

    def unknown(name: str, position: int) -> ParameterError:
        return ParameterError(_unknown(option, shown, name, columns))

    reader = _Reader(columns, unknown)
    try:
        tree = parser.sum()
        if parser.peek().kind != "end":
            raise _Problem(parser.peek().position, parser.unexpected(parser.peek()))
        terms = reader.encode(tree)
    except _Problem as error:
        raise problem(error) from None
    expanded = Terms(intercept=reader.intercept, variables=tuple(reader.nodes),
                     terms=tuple(sorted(terms, key=len)))
    if not expanded.terms and not expanded.intercept:
        raise ParameterError(f"{option} ({shown!r}) has no terms and no intercept; write "
                             "\"~ 1\" for the intercept alone")
    return Formula(text=text, response=lhs, rhs=right, columns=tuple(reader.used),
                   terms=expanded)


def _shown(text: str, limit: int = 200) -> str:
    """The formula as error messages quote it: at most ``limit`` characters."""
    return text if len(text) <= limit else text[:limit] + "..."


def _unknown(option: str, text: str, column: str, columns: Sequence[str]) -> str:
    shown = ", ".join(columns[:30]) + (", ..." if len(columns) > 30 else "")
    hint = _non_ascii(column)
    owner = next((c for c in sorted(columns, key=len, reverse=True)
                  if column.startswith(c + ".")), None)
    if owner is not None:
        hint += (f" (there is no attribute access in a formula: '.' is part of an R name, "
                 f"and {owner!r} is a column)")
    return (f"{option} {text!r} uses column {column!r}{hint}, which is not in the data; the "
            f"columns are {shown}")
