"""JSON writes an unbounded privacy loss as "inf", never null, in every command that prints
losses (issue 22, item 6). Mangat's design protects only "yes": its loss is infinite."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from surveykit.cli import main
from surveykit.workflows.report import report_for_survey

SURVEY = """
name = "unprotected"
title = "A design that protects only yes"
[design]
model = "mangat"
p = 0.7
[[questions]]
id = "mangat_q"
text = "Mangat's question?"
[[questions]]
id = "warner_q"
text = "Warner's question?"
[questions.design]
model = "warner"
p = 0.7
"""


def run_json(args: list[str]):
    result = CliRunner().invoke(main, [*args, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def losses(data, path="") -> dict[str, object]:
    """Every epsilon_... value in a JSON document, by its path (companions excluded)."""
    found = {}
    if isinstance(data, dict):
        for key, value in data.items():
            if key.startswith("epsilon") and not key.endswith("_finite"):
                found[f"{path}/{key}"] = (value, data.get(f"{key}_finite", "absent"))
            found.update(losses(value, f"{path}/{key}"))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            found.update(losses(value, f"{path}/{index}"))
    return found


def assert_losses_explicit(data, infinite: set[str]) -> None:
    """No loss is null; "inf" with _finite false exactly at the paths in ``infinite``;
    every finite loss is a positive number with _finite true."""
    found = losses(data)
    assert found, "no privacy loss in the output"
    for path, (value, finite) in found.items():
        if path in infinite:
            assert (value, finite) == ("inf", False), path
            assert float(value) == math.inf
        else:
            assert isinstance(value, float) and math.isfinite(value) and value > 0, path
            assert finite is True, path
    assert infinite <= set(found)


@pytest.fixture
def database(tmp_path):
    (tmp_path / "survey.toml").write_text(SURVEY, encoding="utf-8")
    answers = tmp_path / "answers.csv"
    answers.write_text("respondent_id,mangat_q,warner_q\n" + "".join(
        f"r{i:03d},{'yes' if i % 3 else 'no'},{'yes' if i % 2 else 'no'}\n" for i in range(90)),
        encoding="utf-8")
    db = f"sqlite:///{tmp_path / 'survey.db'}"
    runner = CliRunner()
    for args in (["init"], ["survey", "add", str(tmp_path / "survey.toml")],
                 ["import", str(answers), "--survey", "unprotected"]):
        result = runner.invoke(main, [*args, "--db", db])
        assert result.exit_code == 0, result.output
    counts = tmp_path / "counts.csv"
    counts.write_text(runner.invoke(main, ["counts", "--survey", "unprotected", "--db", db,
                                           "--data", str(answers), "--format", "csv"]).output,
                      encoding="utf-8")
    return db, counts


def test_estimate_writes_an_infinite_loss_as_inf():
    data = run_json(["estimate", "--design", "mangat", "--param", "p=0.7",
                     "--counts", "yes=60,no=40"])
    assert_losses_explicit(data, {"/epsilon_shafer", "/epsilon_walley"})


def test_estimate_with_a_nuisance_at_its_boundary_writes_inf_at_the_estimate():
    # the SLD's worst case over t is infinite; at the estimate it is finite
    data = run_json(["estimate", "--design", "sld", "--param", "p=0.1667,0.8333",
                     "--counts", "1:yes=60,no=40", "--counts", "2:yes=35,no=65"])
    assert_losses_explicit(data, {"/epsilon_shafer", "/epsilon_walley"})
    assert isinstance(data["epsilon_shafer_at_estimate"], float)


def test_design_writes_an_infinite_loss_as_inf():
    data = run_json(["design", "--design", "mangat", "--param", "p=0.7", "--n", "500"])
    assert_losses_explicit(data, {"/epsilon_shafer", "/epsilon_walley"})
    data = run_json(["design", "--design", "sld", "--param", "p=0.1667,0.8333",
                     "--nuisance", "t=1", "--n", "500"])
    assert_losses_explicit(data, {"/epsilon_shafer", "/epsilon_walley",
                                  "/epsilon_shafer_at_nuisance", "/epsilon_walley_at_nuisance"})


def test_design_for_a_budget_writes_finite_losses_with_their_flag():
    data = run_json(["design", "--epsilon", "1.0986", "--dont-know", "0.2", "--n", "500"])
    assert_losses_explicit(data, set())


def test_report_and_estimate_from_a_counts_table_write_inf(database):
    db, counts = database
    infinite = {"/epsilon_total_shafer", "/epsilon_total_walley",
                "/questions/0/epsilon_shafer", "/questions/0/epsilon_walley"}
    assert_losses_explicit(run_json(["report", "--survey", "unprotected", "--db", db]), infinite)
    assert_losses_explicit(run_json(["report", "--survey", "unprotected", "--db", db,
                                     "--counts-file", str(counts)]), infinite)
    data = run_json(["estimate", "--counts-file", str(counts), "--db", db])
    assert_losses_explicit(data, {"/questions/0/epsilon_shafer", "/questions/0/epsilon_walley"})


def test_the_notebook_view_of_an_estimate_shows_inf():
    from surveykit import estimate, make_design

    result = estimate(design=make_design("mangat", p=0.7), counts={"yes": 60, "no": 40})
    assert "Shafer inf, Walley inf" in result._repr_html_()


def test_the_report_frame_keeps_losses_as_numbers(database):
    db, _ = database
    frame = report_for_survey(db, "unprotected").to_frame()
    assert frame.loc["mangat_q", "epsilon_shafer"] == math.inf
    assert frame["epsilon_shafer"].dtype == float
