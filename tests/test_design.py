"""`surveykit design`: the mechanism for a budget, its precision and the sample size."""

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from surveykit.cli import main
from surveykit.errors import ParameterError
from surveykit.planning import design_survey, smallest_sample_size, standard_error


@pytest.mark.parametrize(("epsilon", "dont_know", "target", "pi"),
                         [(1.0, 0.2, 0.03, 0.5), (0.5, 0.4, 0.05, 0.2), (2.0, 0.0, 0.01, 0.5),
                          (3.0, 0.6, 0.2, 0.5)])
def test_sample_size_is_the_smallest_that_meets_the_target(epsilon, dont_know, target, pi):
    ours, warner = design_survey(epsilon=epsilon, dont_know=dont_know, target_se=target, pi=pi)
    for design in (ours, warner):
        n = design.n
        assert standard_error(design.design, n=n, pi=pi) <= target
        if n > 1:
            assert standard_error(design.design, n=n - 1, pi=pi) > target
    assert ours.n >= warner.n  # don't know never buys precision at a fixed Shafer budget


@pytest.mark.parametrize("semantics", ["shafer", "walley"])
def test_design_spends_exactly_the_budget_in_its_semantics(semantics):
    ours, warner = design_survey(epsilon=1.2, dont_know=0.25, semantics=semantics, n=400)
    spent = ours.epsilon_shafer if semantics == "shafer" else ours.epsilon_walley
    assert spent == pytest.approx(1.2, rel=1e-12)
    assert ours.design.dont_know == pytest.approx(0.25, abs=1e-12)
    assert warner.epsilon_shafer == pytest.approx(1.2, rel=1e-12)
    assert warner.design.dont_know == 0.0


@pytest.mark.parametrize(("epsilon", "dont_know", "n", "pi"),
                         [(1.0, 0.2, 150, 0.5), (0.7, 0.5, 40, 0.1)])
def test_design_standard_error_matches_a_seeded_simulation(epsilon, dont_know, n, pi):
    """40,000 simulated surveys; the SD of pi_hat given N1+N2 > 0 agrees within 4 SE."""
    ours, _ = design_survey(epsilon=epsilon, dont_know=dont_know, n=n, pi=pi)
    gw = ours.design
    rng = np.random.default_rng(5)
    counts = rng.multinomial(n, gw.probabilities(pi), size=40_000)
    m = counts[:, 0] + counts[:, 1]
    counts, m = counts[m > 0], m[m > 0]
    pi_hat = (counts[:, 1] * gw.q - counts[:, 0] * gw.p) / (m * (gw.q - gw.p))
    variance = np.var(pi_hat, ddof=1)
    centred = pi_hat - pi_hat.mean()
    se_of_variance = math.sqrt((np.mean(centred**4) - variance**2) / pi_hat.size)
    assert abs(variance - ours.se**2) <= 4 * se_of_variance


def test_design_refuses_contradictory_or_impossible_requests():
    with pytest.raises(ParameterError, match="either n or target_se, not both"):
        design_survey(epsilon=1.0, n=100, target_se=0.1)
    with pytest.raises(ParameterError, match="dont_know .* is too large for a Walley budget"):
        design_survey(epsilon=0.3, dont_know=0.5, semantics="walley", n=10)
    with pytest.raises(ParameterError, match="needs more than"):
        smallest_sample_size(design_survey(epsilon=0.01)[0].design, target_se=1e-7, pi=0.5)


def test_cli_json_has_the_documented_keys():
    result = CliRunner().invoke(main, ["design", "--epsilon", "1.1", "--dont-know", "0.2",
                                       "--target-se", "0.03", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {"p", "q", "dont_know", "epsilon_shafer", "epsilon_walley", "n", "se"} <= set(data)
    assert set(data["warner"]) >= {"p", "q", "n", "se"}
    ours, _ = design_survey(epsilon=1.1, dont_know=0.2, target_se=0.03)
    assert data["n"] == ours.n and data["se"] == ours.se


def test_cli_text_is_a_side_by_side_table_within_80_columns():
    result = CliRunner().invoke(main, ["design", "--epsilon", "1", "--dont-know", "0.2",
                                       "--n", "1000"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert max(map(len, lines)) <= 80
    assert any(line.startswith("standard error") for line in lines)
    assert "Warner" in lines[2]


def test_cli_usage_errors_exit_2_with_one_line():
    result = CliRunner().invoke(main, ["design", "--epsilon", "-1"])
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "Error: epsilon (-1.0) must be a positive, finite privacy budget"
    )


@pytest.mark.parametrize(("suffix", "magic"), [(".png", b"\x89PNG"), (".svg", b"<?xml")])
def test_design_plot_writes_a_picture(tmp_path, suffix, magic):
    path = tmp_path / f"design{suffix}"
    result = CliRunner().invoke(main, ["design", "--epsilon", "1", "--dont-know", "0.2",
                                       "--target-se", "0.04", "--plot", str(path)])
    assert result.exit_code == 0, result.output
    assert path.read_bytes().startswith(magic)
    assert f"Wrote the trade-off picture to {path}" in result.stderr
    if suffix == ".svg":
        assert "<svg" in path.read_text(encoding="utf-8")


def test_design_plot_refuses_an_unknown_picture_format(tmp_path):
    result = CliRunner().invoke(main, ["design", "--epsilon", "1", "--plot",
                                       str(tmp_path / "design.gif")])
    assert result.exit_code == 2
    assert "must end in .png, .svg or .pdf" in result.stderr
    assert not (tmp_path / "design.gif").exists()


def test_old_names_of_the_plan_still_work_with_a_deprecation_warning():
    import surveykit.planning as planning

    ours, _ = design_survey(epsilon=1.0, dont_know=0.2, n=100)
    with pytest.warns(DeprecationWarning, match="Plan.mechanism"):
        assert ours.mechanism is ours.design
    with pytest.warns(DeprecationWarning, match="planning.Design is deprecated"):
        assert planning.Design is planning.Plan
