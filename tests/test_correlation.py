"""Correlations with randomized answers (surveykit.estimation.correlation, RRreg's RRcor).

Reference values: tests/reference/rrcor_minarets.json, written by
tools/r_reference/rrcor_minarets.R (RRreg's RRcor on its minarets data; the file's
"provenance" block names R, RRreg and the calls). The point estimates are deterministic and
agree to rounding; bootstrap standard errors are Monte Carlo quantities, compared within
their Monte Carlo error.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from surveykit.cli import main
from surveykit.designs import make_design
from surveykit.errors import EstimationError, ParameterError
from surveykit.estimation.correlation import correlate

DATA = Path(__file__).parent / "data"
REFERENCE = json.loads((Path(__file__).parent / "reference" / "rrcor_minarets.json")
                       .read_text())
SLD = make_design("sld", p=[2 / 12, 10 / 12])


@pytest.fixture(scope="module")
def minarets_rr() -> pd.DataFrame:
    frame = pd.read_csv(DATA / "minarets.csv")
    return frame[frame.RRdesign == 1].reset_index(drop=True)


def test_rrcor_on_the_minarets_data_is_reproduced(minarets_rr):
    result = correlate(minarets_rr, {"rrt": SLD}, ["age", "leftRight"],
                       groups={"rrt": "condition"})
    assert result.n == REFERENCE["n"] == 1256
    r = {(p.x, p.y): p.r for p in result.pairs}
    assert r[("rrt", "age")] == pytest.approx(REFERENCE["r"]["rrt_age"], abs=1e-9)
    assert r[("rrt", "leftRight")] == pytest.approx(REFERENCE["r"]["rrt_leftRight"], abs=1e-9)
    # RRuni's moment estimates lie inside [0, 1], so they are the maximum-likelihood ones
    assert result.estimates["rrt"]["pi"] == pytest.approx(REFERENCE["rruni"]["pi"], abs=1e-9)
    assert result.estimates["rrt"]["t"] == pytest.approx(REFERENCE["rruni"]["t"], abs=1e-9)


@pytest.mark.slow
def test_rrcor_s_bootstrap_standard_errors_are_reproduced(minarets_rr):
    """Both bootstraps draw 1,000 replicates; the SD of heavy-tailed replicates (r near
    1 when pi is near 1) has a Monte Carlo error of a few percent, so the SEs agree within
    15% and the bootstrap quantiles within 0.03."""
    boot = REFERENCE["bootstrap"]
    result = correlate(minarets_rr, {"rrt": SLD}, ["age", "leftRight"],
                       groups={"rrt": "condition"}, bootstrap=boot["replicates"],
                       rng=np.random.default_rng(2018))
    se = {(p.x, p.y): p.se for p in result.pairs}
    assert se[("rrt", "age")] == pytest.approx(boot["se"]["rrt_age"], rel=0.15)
    assert se[("rrt", "leftRight")] == pytest.approx(boot["se"]["rrt_leftRight"], rel=0.15)


def test_a_direct_question_gives_pearson_s_correlation():
    rng = np.random.default_rng(3)
    yes = rng.random(300) < 0.3
    age = rng.normal(size=300) + yes
    frame = pd.DataFrame({"q": np.where(yes, "yes", "no"), "age": age,
                          "smoker": np.where(rng.random(300) < 0.5, "Yes", "no")})
    result = correlate(frame, {"q": make_design("direct")}, ["age", "smoker"])
    r = {(p.x, p.y): p.r for p in result.pairs}
    assert r[("q", "age")] == pytest.approx(np.corrcoef(yes, age)[0, 1], abs=1e-12)
    smoker = (frame.smoker == "Yes").to_numpy(float)
    assert r[("q", "smoker")] == pytest.approx(np.corrcoef(yes, smoker)[0, 1], abs=1e-12)
    assert ("age", "smoker") not in r     # two ordinary variables: not RRcor's business


@pytest.mark.parametrize(("name", "params", "nuisance", "truth", "mask"), [
    # RRreg R/RRcor.models.R: p.truth and y.mean per model
    ("warner", {"p": 0.8}, None, 2 * 0.8 - 1, 0.5),
    ("crosswise", {"p": 0.3}, None, 2 * 0.3 - 1, 0.5),
    ("triangular", {"p": 0.3}, None, 1 - 0.3, 1.0),
    ("mangat", {"p": 0.7}, None, 0.7, 1.0),
    ("kuk", {"p": [0.7, 0.3]}, None, 0.7 - 0.3, 0.3 / (1 - 0.7 + 0.3)),
    ("fr", {"p": [0.1, 0.2]}, None, 1 - 0.3, (1 / 0.3) * 0.2),
    ("uqtknown", {"p": [0.7, 0.3]}, None, 0.7, 0.3),
    ("sld", {"p": [2 / 12, 10 / 12]}, {"t": 0.6}, 0.6 - 1 + 2 / 12,
     (1 - 2 / 12) / (2 - 0.6 - 2 / 12)),
])
def test_the_design_matrix_gives_rrreg_s_truth_and_mask_per_model(name, params, nuisance,
                                                                   truth, mask):
    """pt = P(yes | yes) - P(yes | no) and y = P(yes | no) / (1 - pt) (group 1)."""
    design = make_design(name, **params)
    matrix = design.matrix(None if nuisance is None else list(nuisance.values()))[0]
    a, b = matrix[0, 0], matrix[0, 1]
    assert a - b == pytest.approx(truth, abs=1e-12)
    assert b / (1 - (a - b)) == pytest.approx(mask, abs=1e-12)


def _rrgen(rng, n, design, truth, groups=None, nuisance=None):
    matrix = design.matrix(nuisance)
    g = np.zeros(n, dtype=int) if groups is None else groups - 1
    p_yes = matrix[g, 0, np.where(truth, 0, 1)]
    return np.where(rng.random(n) < p_yes, "yes", "no")


def test_a_seeded_survey_recovers_the_correlation_within_3_bootstrap_se():
    """RRgen-like data: a covariate with point-biserial correlation 0.3 with the truth,
    answers through the SLD (t = 0.8) and, for a second trait, the unrelated question."""
    rng = np.random.default_rng(77)
    n, pi, rho = 3000, 0.4, 0.3
    truth = rng.random(n) < pi
    shift = math.sqrt(rho**2 / (pi * (1 - pi) * (1 - rho**2)))   # RRsimu's diffMean
    covariate = rng.normal(size=n) + shift * truth
    second = rng.random(n) < np.where(truth, 0.6, 0.2)
    groups = rng.integers(1, 3, size=n)
    uqt = make_design("uqtknown", p=[0.7, 0.3])
    frame = pd.DataFrame({"rrt": _rrgen(rng, n, SLD, truth, groups, [0.8]), "cov": covariate,
                          "g": groups, "other": _rrgen(rng, n, uqt, second)})
    result = correlate(frame, {"rrt": SLD, "other": uqt}, ["cov"], groups={"rrt": "g"},
                       bootstrap=200, rng=np.random.default_rng(1))
    r = {(p.x, p.y): p for p in result.pairs}
    assert abs(r[("rrt", "cov")].r - np.corrcoef(truth, covariate)[0, 1]) < 3 * r[
        ("rrt", "cov")].se
    assert abs(r[("rrt", "other")].r - np.corrcoef(truth, second)[0, 1]) < 3 * r[
        ("rrt", "other")].se
    assert set(r) == {("rrt", "other"), ("rrt", "cov"), ("other", "cov")}


def test_the_same_seed_gives_the_same_standard_errors(minarets_rr):
    runs = [correlate(minarets_rr, {"rrt": SLD}, ["leftRight"], groups={"rrt": "condition"},
                      bootstrap=20, rng=np.random.default_rng(5)) for _ in range(2)]
    assert runs[0].pairs[0].se == runs[1].pairs[0].se is not None


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"sensitive": {"rrt": make_design("grr", p=0.7, categories=["a", "b", "c"])},
      "with_columns": ["age"]}, ParameterError,
     "column 'rrt': design 'grr' is not a yes/no design whose states are its answers; "
     "correlations take yes/no designs (RRcor's)"),
    ({"sensitive": {"rrt": SLD}, "with_columns": ["height"], "groups": {"rrt": "condition"}},
     ParameterError, "column 'height' is not in the data; the columns are age, leftRight, "
     "rrt, condition, RRdesign, leftRight.c, age.c"),
    ({"sensitive": {"rrt": SLD}, "with_columns": ["age"], "groups": {"rrt": "condition"},
      "bootstrap": 10}, ParameterError,
     "a bootstrap needs rng, a numpy Generator, e.g. numpy.random.default_rng(seed)"),
    ({"sensitive": {"rrt": SLD}, "with_columns": [], "groups": {"rrt": "condition"}},
     ParameterError, "give at least two variables: a randomized column and another "
     "(--with COLUMN)"),
])
def test_bad_input_is_one_line(minarets_rr, kwargs, error, message):
    with pytest.raises(error) as raised:
        correlate(minarets_rr, **kwargs)
    assert str(raised.value) == message


def test_respondents_asked_directly_are_refused_with_a_hint():
    frame = pd.read_csv(DATA / "minarets.csv")
    with pytest.raises(ParameterError, match="respondents asked directly \\(group 0\\)"):
        correlate(frame, {"rrt": SLD}, ["age"], groups={"rrt": "condition"})


def test_too_few_rows_is_an_error():
    frame = pd.DataFrame({"q": ["yes", "no"], "x": [1.0, 2.0]})
    with pytest.raises(EstimationError, match=r"too few complete rows \(2\)"):
        correlate(frame, {"q": make_design("warner", p=0.8)}, ["x"])


# -- the command ----------------------------------------------------------------------------


def _cli(args):
    return CliRunner().invoke(main, ["correlate", *args], prog_name="surveykit")


@pytest.fixture(scope="module")
def minarets_file(tmp_path_factory, minarets_rr) -> Path:
    path = tmp_path_factory.mktemp("correlate") / "minarets_rr.csv"
    minarets_rr.to_csv(path, index=False)
    return path


def test_the_command_prints_a_list_of_pairs_in_json(minarets_file):
    result = _cli([str(minarets_file), "--sensitive", "rrt", "--design", "sld", "--param",
                   f"p={2 / 12},{10 / 12}", "--group", "condition", "--with", "age,leftRight",
                   "--bootstrap", "10", "--seed", "3", "--format", "json"])
    assert result.exit_code == 0, result.output
    pairs = json.loads(result.output)
    assert [(p["x"], p["y"]) for p in pairs] == [("rrt", "age"), ("rrt", "leftRight")]
    assert pairs[0]["r"] == pytest.approx(REFERENCE["r"]["rrt_age"], abs=1e-9)
    assert all(p["se"] > 0 and p["n"] == 1256 for p in pairs)
    again = _cli([str(minarets_file), "--sensitive", "rrt", "--design", "sld", "--param",
                  f"p={2 / 12},{10 / 12}", "--group", "condition", "--with", "age,leftRight",
                  "--bootstrap", "10", "--seed", "3", "--format", "json"])
    assert json.loads(again.output) == pairs


def test_the_command_prints_a_table_in_text(minarets_file):
    result = _cli([str(minarets_file), "--sensitive", "rrt", "--design", "sld", "--param",
                   f"p={2 / 12},{10 / 12}", "--group", "condition", "--with", "leftRight"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["x", "y", "r", "se"]
    assert lines[1].split() == ["rrt", "leftRight",
                                f"{REFERENCE['r']['rrt_leftRight']:.4f}", "-"]


@pytest.mark.parametrize(("args", "message"), [
    (["--sensitive", "rrt", "--design", "sld", "--param", "p=0.1667,0.8333", "--with", "age"],
     "Error: design 'sld' has 2 groups: give the group column (--group COLUMN), which says "
     "which group each respondent was in"),
    (["--sensitive", "rrt", "--design", "sld", "--param", "p=0.1667,0.8333", "--group",
      "condition"], "Error: Missing option '--with'. (see 'surveykit correlate --help')"),
])
def test_command_errors_are_one_line_with_exit_2(minarets_file, args, message):
    result = _cli([str(minarets_file), *args])
    assert result.exit_code == 2, result.output
    assert result.output.strip() == message


def test_column_names_are_escaped_in_the_text_output(tmp_path):
    rng = np.random.default_rng(4)
    yes = rng.random(200) < 0.4
    hostile = "age\x1b[2J"
    path = tmp_path / "hostile.csv"
    pd.DataFrame({"q": np.where(yes, "yes", "no"), hostile: rng.normal(size=200)}).to_csv(
        path, index=False)
    result = _cli([str(path), "--sensitive", "q", "--design", "warner", "--param", "p=0.8",
                   "--with", hostile])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "age\\x1b[2J" in result.output
