"""surveykit.estimation.answers.factorize codes cells as pandas.factorize(sort=False) does.

code_answers used pandas.factorize; it now uses a dict so that the store's reports, which
import surveykit.estimation.answers, do not load pandas (issue 25). pandas is the oracle here:
the same codes (first appearance order, -1 for missing cells) and the same distinct values, on
inputs chosen to be awkward (None, NaN, NaT, pandas.NA, empty strings, mixed types, numbers
equal across types, nullable and categorical columns).
"""

from __future__ import annotations

import decimal

import numpy as np
import pandas as pd
import pytest

from surveykit.designs import Warner
from surveykit.estimation.answers import code_answers, factorize

AWKWARD = {
    "strings": ["yes", "no", "Yes", "no", "yes"],
    "none-nan-empty": ["no", None, "", float("nan"), "yes", "", None, np.nan],
    "mixed-types": [1, "1", 1.0, True, 0, False, "0", 0.0, "yes", 2.5],
    "float-first": [1.0, 1, True, 0.0, -0.0, 0],
    "nat-and-na": ["a", pd.NaT, np.datetime64("NaT"), pd.NA, "b", "a", decimal.Decimal("nan")],
    "all-missing": [None, float("nan"), pd.NA],
    "empty": [],
    "numpy-scalars": [np.int64(1), np.float64(1.0), np.bool_(True), np.str_("x"), "x"],
}


def _oracle(values):
    return pd.factorize(pd.Series(np.asarray(values, dtype=object)), sort=False)


def _same_values(ours, theirs) -> bool:
    # element by element with the types: 1 and "1" differ, 1 and 1.0 are the first to appear
    return len(ours) == len(theirs) and all(
        type(a) is type(b) and (a == b) for a, b in zip(ours, theirs, strict=True))


@pytest.mark.parametrize("name", list(AWKWARD))
def test_factorize_matches_pandas(name):
    values = AWKWARD[name]
    codes, uniques = factorize(values)
    expected_codes, expected_uniques = _oracle(values)
    assert codes.dtype == np.intp
    assert codes.tolist() == expected_codes.tolist()
    assert _same_values(uniques, list(expected_uniques)), (uniques, list(expected_uniques))


@pytest.mark.parametrize("series", [
    pd.Series([1.0, np.nan, 0.0, 1.0]),
    pd.Series([1, None, 0, 1], dtype="Int64"),
    pd.Series(["yes", None, "no", "yes"], dtype="string"),
    pd.Series(["no", "yes", None, "no"], dtype="category"),
    pd.Series([True, False, True]),
])
def test_factorize_matches_pandas_on_typed_columns(series):
    codes, uniques = factorize(series)
    expected_codes, expected_uniques = pd.factorize(series, sort=False)
    assert codes.tolist() == expected_codes.tolist()
    assert [str(u) for u in uniques] == [str(u) for u in expected_uniques]


def test_factorize_on_a_large_random_column_matches_pandas():
    rng = np.random.default_rng(25)
    pool = np.array(["yes", "no", "", None, np.nan, 1, 0.0, True, "dk"], dtype=object)
    values = pool[rng.integers(0, pool.size, 5000)]
    codes, uniques = factorize(values)
    expected_codes, expected_uniques = _oracle(values)
    assert codes.tolist() == expected_codes.tolist()
    assert _same_values(uniques, list(expected_uniques))


def test_code_answers_reads_a_nullable_column_and_reports_its_empty_cells():
    rows = code_answers(Warner(p=0.7), pd.Series(["yes", "no", "dk", "No"], dtype="string"))
    assert rows.responses.tolist() == [0, 1, 1] and rows.dont_know_left_out == 1
    with pytest.raises(Exception, match="column 'answers' has empty cells"):
        code_answers(Warner(p=0.7), pd.Series(["yes", None], dtype="string"))


TYPED = {
    "float": pd.Series([1.0, np.nan, 0.0, 1.0]),
    "Int64": pd.Series([1, None, 0, 1], dtype="Int64"),
    "string": pd.Series(["yes", None, "no", "yes"], dtype="string"),
    "category": pd.Series(["no", "yes", None, "no"], dtype="category"),
    "bool": pd.Series([True, False, True]),
    "str": pd.Series(["yes", "no", "yes", "dk"]),
    "int": pd.Series([2, 1, 2, 0]),
}


@pytest.mark.parametrize("name", [*AWKWARD, *TYPED])
def test_a_pandas_column_and_its_cells_factorize_alike(name):
    # a Series or Index takes pandas' own factorize (fast on a million cells); any other
    # input the dict: the two paths give the same codes and the same values, types included
    series = TYPED[name] if name in TYPED else pd.Series(np.asarray(AWKWARD[name], dtype=object))
    cells = series.to_numpy(dtype=object)
    for pandas_input in (series, pd.Index(series)):
        codes, uniques = factorize(pandas_input)
        cell_codes, cell_uniques = factorize(cells)
        assert codes.dtype == np.intp
        assert codes.tolist() == cell_codes.tolist(), name
        assert _same_values(uniques, cell_uniques), (name, uniques, cell_uniques)
