"""Model formulas read as data and turned into model matrices (surveykit.estimation.formulas).

Oracles: R's own ``model.matrix`` on fixed data (tests/golden/formulas/model_matrices.json,
made by model_matrices.R beside it with R 4.2.2: term names, column order and every value,
and new data coded through R's ``makepredictcall``), and for random formulas a plain
construction of treatment-coded columns from the rule as Chambers and Hastie (1992, ch. 2)
state it for hierarchical models.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from surveykit.errors import ParameterError
from surveykit.estimation.formula_syntax import MAX_LENGTH, r_number, read_formula
from surveykit.estimation.formulas import (
    MAX_COLUMNS,
    MAX_LEVELS,
    build_matrix,
    check_columns,
    parse_formula,
)

GOLDEN = json.loads((Path(__file__).parent / "golden" / "formulas" /
                     "model_matrices.json").read_text(encoding="utf-8"))
R_DATA = pd.DataFrame(GOLDEN["data"])
R_NEWDATA = pd.DataFrame(GOLDEN["newdata"])


def matrix(formula: str, data: pd.DataFrame):
    return build_matrix(parse_formula(formula, data.columns, response=False), data)


def message(formula: str, columns=("y", "x", "age", "f")) -> str:
    with pytest.raises(ParameterError) as caught:
        frame = pd.DataFrame({c: [1.0, 2.0, 3.0] for c in columns})
        build_matrix(parse_formula(formula, columns), frame)
    text = str(caught.value)
    assert "\n" not in text
    return text


# -- R's model.matrix as the oracle -----------------------------------------------------------


@pytest.mark.parametrize("case", GOLDEN["matrices"], ids=lambda case: case["formula"])
def test_term_names_order_and_values_equal_r_model_matrix(case):
    m = matrix(case["formula"], R_DATA)
    assert list(m.terms) == case["columns"]
    np.testing.assert_allclose(m.values, np.array(case["values"]).T, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", GOLDEN["predictions"], ids=lambda case: case["formula"])
def test_new_data_is_coded_as_r_predicts(case):
    # poly's recurrence coefficients, scale's centre and scale, the factors' levels: learnt
    # from the data, reused on new data whose own mean, spread and levels differ
    m = matrix(case["formula"], R_DATA)
    np.testing.assert_allclose(m.for_data(R_NEWDATA), np.array(case["values"]).T,
                               rtol=1e-12, atol=1e-12)


def test_a_stateful_transform_inside_another_call_keeps_its_state_on_new_data():
    # R's makepredictcall sees only a variable's outermost call and would rescale by the new
    # data; the tree keeps scale()'s state wherever it sits
    m = matrix("~ log(scale(a) + 3) + center(a)", R_DATA)
    mean, sd = R_DATA.a.mean(), R_DATA.a.std(ddof=1)
    new = R_NEWDATA.a.to_numpy()
    np.testing.assert_allclose(m.for_data(R_NEWDATA),
                               np.column_stack([np.ones(3), np.log((new - mean) / sd + 3),
                                                new - mean]), rtol=1e-14)


def test_numbers_are_spelt_as_r_prints_them():
    # R 4.2.2: as.character(c(1e5, 1e4, 1e-4, 123456, 0.1, 1/3, 1e15, 2.5e-7, 100))
    assert [r_number(v) for v in (1e5, 1e4, 1e-4, 123456.0, 0.1, 1 / 3, 1e15, 2.5e-7, 100.0)
            ] == ["1e+05", "10000", "1e-04", "123456", "0.1", "0.333333333333333", "1e+15",
                  "2.5e-07", "100"]


# -- random formulas against a plain construction ----------------------------------------------

FACTORS = {"f": ("x", "y", "z"), "g": ("u", "v")}
NUMERIC = ("x1", "x2")


def _frame(seed: int, rows: int = 40) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({name: rng.normal(size=rows) for name in NUMERIC})
    for name, levels in FACTORS.items():
        # every level present: the oracle's levels are the declared ones
        values = list(levels) + list(rng.choice(levels, rows - len(levels)))
        frame[name] = rng.permutation(values)
    return frame


@st.composite
def hierarchical_formulas(draw):
    """A random hierarchical formula (every margin of a term is a term), written with its
    terms and the variables inside them in random order, with or without an intercept."""
    names = list(NUMERIC) + list(FACTORS)
    tops = draw(st.lists(st.sets(st.sampled_from(names), min_size=1, max_size=3),
                         min_size=1, max_size=3))
    closure = {frozenset(sub) for top in tops for k in range(1, len(top) + 1)
               for sub in itertools.combinations(sorted(top), k)}
    terms = draw(st.permutations(sorted(closure, key=sorted)))
    written = [draw(st.permutations(sorted(term))) for term in terms]
    intercept = draw(st.booleans())
    text = " + ".join(":".join(term) for term in written)
    return ("~ " if intercept else "~ 0 + ") + text, written, intercept


def _oracle(written, intercept, frame):
    """Chambers and Hastie's coding of a hierarchical formula: terms by order, otherwise as
    written; a term's variables in order of first appearance; each factor by treatment
    contrasts (its margin is in the model), except that without an intercept the first
    factor's main effect has a column for every level; the first variable varies fastest."""
    order = list(dict.fromkeys(v for term in written for v in term))
    terms = sorted(written, key=len)   # stable: as written within an order
    first_factor = next((term[0] for term in terms if len(term) == 1 and term[0] in FACTORS),
                        None)
    names, columns = [], []
    if intercept:
        names.append("(Intercept)")
        columns.append(np.ones(len(frame)))
    for term in terms:
        variables = sorted(term, key=order.index)
        blocks = []
        for v in variables:
            if v in FACTORS:
                levels = FACTORS[v]
                full = not intercept and len(term) == 1 and v == first_factor
                blocks.append([(v + level, (frame[v] == level).to_numpy(float))
                               for level in (levels if full else levels[1:])])
            else:
                blocks.append([(v, frame[v].to_numpy())])
        for combination in itertools.product(*reversed(blocks)):
            parts = combination[::-1]
            names.append(":".join(name for name, _ in parts))
            columns.append(np.prod([values for _, values in parts], axis=0))
    return names, np.column_stack(columns)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hierarchical_formulas(), st.integers(0, 2**32 - 1))
def test_random_hierarchical_formulas_match_the_plain_construction(case, seed):
    text, written, intercept = case
    frame = _frame(seed)
    m = matrix(text, frame)
    names, values = _oracle(written, intercept, frame)
    assert list(m.terms) == names
    np.testing.assert_array_equal(m.values, values)


@st.composite
def stateful_formulas(draw):
    pieces = draw(st.lists(st.sampled_from([
        "x1", "scale(x1)", "center(x2)", "poly(x1, 2)", "poly(x2, 3)", "f", "factor(g)",
        "relevel(f, ref = \"z\")", "C(g, levels = c(\"v\", \"u\"))", "I(x1^2 - x2/3)",
        "log(abs(x2) + 1)", "scale(x1):f", "poly(x2, 2):g"]), min_size=1, max_size=4,
        unique=True))
    return "~ " + " + ".join(pieces)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stateful_formulas(), st.integers(0, 2**32 - 1), st.data())
def test_for_data_reproduces_the_rows_it_was_fitted_on(text, seed, data):
    # stateful transforms keep what they learnt: any subset of the rows, coded again on its
    # own, gives exactly those rows of the fitted matrix (poly by R's recurrence instead of
    # the QR decomposition: equal to rounding)
    frame = _frame(seed)
    m = matrix(text, frame)
    rows = data.draw(st.lists(st.integers(0, len(frame) - 1), min_size=1, max_size=8))
    np.testing.assert_allclose(m.for_data(frame.iloc[rows]), m.values[rows], rtol=1e-9,
                               atol=1e-12)


_PIECES = st.sampled_from([
    "x", "y", "age", "f", "1", "0", "2", "9", "1e999", ".5", "'a'", "\"b\"", "`x`", "`", "+",
    "-", "*", "/", ":", "^", "**", "%in%", "%%", "|", "~", "(", ")", ",", "=", "[", "]", ".",
    "$", "@", "I(", "log(", "poly(", "factor(", "C(", "relevel(", "scale(", "c(", "open(",
    "__import__(", "lambda", "for", " ", "\x00", "\x1b", "é", "ｅ", "levels", "ref"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=40))
def test_any_text_is_a_formula_or_a_one_line_parameter_error(pieces):
    text = "".join(pieces)
    try:
        read_formula(text, ["y", "x", "age", "f"], response=False)
    except ParameterError as error:
        assert "\n" not in str(error)


# -- limits and messages ---------------------------------------------------------------------


def test_a_formula_longer_than_the_limit_is_refused_before_reading():
    text = "y ~ " + " + ".join(["x"] * (MAX_LENGTH // 4))
    assert message(text).startswith(f"formula ('{text[:200]}...') is {len(text):,} characters "
                                    f"long; a formula has at most {MAX_LENGTH:,}")


@pytest.mark.parametrize("formula, expected", [
    ("y ~ x +", "'+' at column 7 needs a term after it; add one or remove the '+'"),
    ("y ~ (x", "'(' at column 5 is not closed (it needs a ')')"),
    ("y ~ x)", "')' at column 6 has no matching '(', or an argument is missing before it"),
    ("y ~ x | age", "'|' at column 7: '|' has no meaning in a regression formula here (it "
                    "marks random effects or conditioning in other packages); remove it and "
                    "the part after it"),
    ("y ~ x[1]", "'[' at column 6: subscripts ('[ ]') are not part of a formula"),
    ("y ~ x$a", "'$' at column 6: '$' (element access) is not part of a formula"),
    ("y ~ open(x)", "'open' at column 5 is not a function formulas know; they are I, log, "
                    "log1p, log2, log10, exp, sqrt, abs, scale, center, poly, factor, C, "
                    "relevel"),
    ("y ~ lambda: x", "'lambda' at column 5 is a keyword, not a column or a function"),
    ("y ~ I('a' * 3)", "the string 'a' at column 7 in I() is not allowed: strings only name "
                       "factor levels"),
    ("y ~ I(x^100)", "the exponent 100 of '^' at column 8 is larger than 16 in size"),
    ("y ~ I(9^9^9)", "the exponent 387420489 of '^' at column 8 is larger than 16 in size"),
    ("y ~ I(x^age)", "the exponent at column 9 must be a number"),
    ("y ~ (x + age + f)^50", "the power '^50' at column 18 of a formula term must be a whole "
                             "number from 2 to 6"),
    ("y ~ 2", "the number 2 at column 5 is not a term"),
    ("y ~ log(x, base = 2)", "the argument name 'base' at column 12 is not allowed: log() "
                             "takes no named arguments"),
    ("y ~ poly(x, 99)", "the degree of poly() at column 13 must be a whole number from 1 to "
                        "16"),
    ("y ~ I(x:age)", "':' at column 8 is a formula operator; inside I() use arithmetic"),
    ("y ~ log(poly(x, 2))", "poly() at column 9 makes several columns, so it is a term of its "
                            "own"),
    ("y ~ x\x00", "control character U+0000 at column 6 is not allowed in a formula"),
    ("y ~ 1e999", "the number 1e999 at column 5 is too large for a float"),
    ("y ~ " + "I(" * 40 + "x" + ")" * 40, "'(' at column 70 nests deeper than 32 levels"),
    ("y ~ ｅxp(x)", "'ｅxp' at column 5 is not a function formulas know (it holds the "
                    "non-ASCII character U+FF45 (fullwidth latin small letter e))"),
])
def test_a_formula_that_does_not_parse_names_the_token_and_its_column(formula, expected):
    text = message(formula)
    assert text.startswith(f"formula ({formula!r}) does not parse: ")
    assert expected in text


def test_an_interaction_of_more_than_six_variables_is_refused():
    columns = ["y", *(f"v{k}" for k in range(7))]
    text = message("y ~ " + ":".join(columns[1:]), columns)
    assert "the interaction at column 22 joins 7 variables; at most 6 can interact" in text


def test_interactions_that_expand_past_the_term_limit_are_refused():
    columns = [f"x{k}" for k in range(600)]
    left = "+".join(columns[:300])
    right = "+".join(columns[300:])
    with pytest.raises(ParameterError, match=f"at column {len(left) + 5}; use fewer "
                                             "interactions"):
        read_formula(f"~ ({left}):({right})", columns, response=False)
    with pytest.raises(ParameterError, match="expands to more than 1,000 terms"):
        read_formula("~ (" + "+".join(columns[:12]) + ")^6", columns, response=False)


def test_too_many_model_columns_are_refused_before_they_are_made():
    frame = pd.DataFrame({"f": [f"a{k}" for k in range(200)],
                          "g": [f"b{k % 50}" for k in range(200)]})
    with pytest.raises(ParameterError) as caught:
        matrix("~ f:g", frame)
    assert str(caught.value) == (f"formula '~ f:g' makes 10,001 model columns; at most "
                                 f"{MAX_COLUMNS:,}: use fewer interactions or fewer levels")


def test_a_factor_with_too_many_levels_is_refused():
    frame = pd.DataFrame({"f": [f"a{k}" for k in range(MAX_LEVELS + 1)]})
    with pytest.raises(ParameterError, match="factor\\(f\\) has 1,001 levels; a factor has at "
                                             "most 1,000"):
        matrix("~ factor(f)", frame)


def test_text_in_arithmetic_names_the_column():
    frame = pd.DataFrame({"f": ["law", "arts"], "x": [1.0, 2.0]})
    with pytest.raises(ParameterError) as caught:
        matrix("~ I(f + 1)", frame)
    assert str(caught.value) == (
        "formula '~ I(f + 1)': column 'f' holds text ('law'), which I() cannot compute with; "
        "use the column as a term of its own or in factor()")


def test_an_overflow_names_the_term_and_the_row():
    frame = pd.DataFrame({"x": [1.0, 800.0, 2.0]})
    with pytest.raises(ParameterError) as caught:
        matrix("~ exp(x)", frame)
    assert str(caught.value) == (
        "formula '~ exp(x)': term 'exp(x)' is not a finite number in row 2 of the rows used "
        "(e.g. log of 0, or an overflow); transform the column differently")


def test_a_huge_value_names_the_term_and_the_row():
    frame = pd.DataFrame({"x": [1.0, 2.0, 1e308]})
    with pytest.raises(ParameterError) as caught:
        matrix("~ x", frame)
    assert str(caught.value) == (
        "formula '~ x': term 'x' is 1e+308 in row 3 of the rows used; values beyond 1e+100 in "
        "size cannot be fitted in floating point: rescale the column (e.g. I(x/1e6))")


def test_a_level_missing_from_levels_is_named():
    frame = pd.DataFrame({"f": ["a", "b", "c"]})
    with pytest.raises(ParameterError) as caught:
        matrix("~ factor(f, levels = c(\"a\", \"b\"))", frame)
    assert str(caught.value) == (
        "formula '~ factor(f, levels = c(\"a\", \"b\"))': factor(f, levels = c(\"a\", \"b\")) "
        "holds 'c' in row 3 of the rows used, which is not among the levels (a, b)")


def test_new_data_with_an_unseen_level_is_refused_naming_it():
    m = matrix("~ f", pd.DataFrame({"f": ["a", "b"]}))
    with pytest.raises(ParameterError) as caught:
        m.for_data(pd.DataFrame({"f": ["c"]}))
    assert str(caught.value) == (
        "newdata cannot be coded like the data: formula '~ f': f holds 'c' in row 1 of "
        "newdata, which was not in the data (a, b)")


def test_a_factor_with_one_level_is_refused():
    with pytest.raises(ParameterError, match="C\\(f\\) has only law in the rows used; a factor "
                                             "needs two levels or more"):
        matrix("~ C(f)", pd.DataFrame({"f": ["law", "law"]}))


def test_collinearity_check_is_scale_free_and_does_not_overflow():
    rng = np.random.default_rng(3)
    x = rng.normal(size=50) * 1e200
    values = np.column_stack([np.ones(50), x, 3 * x])
    with np.errstate(all="raise"):
        with pytest.raises(ParameterError, match="term 'z' is a linear combination of 'x'"):
            check_columns(values, ["(Intercept)", "x", "z"], "formula")
        check_columns(values[:, :2], ["(Intercept)", "x"], "formula")
