"""``surveykit power``: the names the issue's checks use, rr's design names, exact one-line
errors with exit status 2, and the power curve picture."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
from click.testing import CliRunner  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from surveykit.cli import main  # noqa: E402
from surveykit.designs import make_design  # noqa: E402
from surveykit.power_analysis.analytic import power  # noqa: E402
from surveykit.reporting.plots import MIN_TEXT_PT  # noqa: E402
from surveykit.reporting.power_plots import power_figure  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = json.loads((ROOT / "tests" / "reference" / "rr_power.json").read_text())


def _run(args: list[str]):
    return CliRunner().invoke(main, ["power", *args], prog_name="surveykit")


def _reference(label: str) -> dict:
    return next(case for case in REFERENCE["cases"] if case["label"] == label)


def test_json_prints_the_power_of_rr_s_documented_case_under_rr_s_names():
    """rr 1.4.2, man/power.rr.test.Rd: forced-known, p = 2/3, p1 = p0 = 1/6, n = 200, pi 0.2
    against 0, alpha 0.01, one-sided."""
    result = _run(["--design", "forced-known", "--param", "p=0.666666666666667",
                   "--param", "p0=0.166666666666667", "--param", "p1=0.166666666666667",
                   "--pi", "0.2", "--null", "0", "--n", "200", "--alpha", "0.01",
                   "--alternative", "greater", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    reference = _reference("forced-known, documented example")["result"]["power"]
    assert data["power"] == pytest.approx(reference, abs=1e-4)
    assert data["design"] == {"name": "fr", "parameters": {"p": [0.166666666666667] * 2,
                                                           "dont_know": 0.0}}


def test_json_prints_n_when_the_power_is_given():
    result = _run(["--design", "mirrored", "--param", "p=0.7", "--pi", "0.1", "--null", "0",
                   "--power", "0.8", "--alternative", "greater", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    expected = power(make_design("warner", p=0.7), pi=0.1, null=0.0, power=0.8,
                     alternative="greater")
    assert data["n"] == expected.n == 831
    assert data["solved"] == "n" and data["power"] >= 0.8


def test_the_mirrored_two_sided_case_matches_rr():
    result = _run(["--design", "mirrored", "--param", "p=0.7", "--pi", "0.2", "--null", "0",
                   "--n", "500", "--alpha", "0.05", "--alternative", "two-sided",
                   "--format", "json"])
    data = json.loads(result.output)
    reference = _reference("mirrored p = 0.7, n = 500, two-sided")["result"]["power"]
    assert data["power"] == pytest.approx(reference, abs=1e-4)


def test_rr_s_disguised_and_unrelated_known_names_are_kuk_and_uqtknown():
    disguised = _reference("grid: disguised, setting 1")
    result = _run(["--design", "disguised", "--param", "p=0.75", "--pi", "0.15", "--null", "0",
                   "--n", "300", "--alternative", "greater", "--format", "json"])
    data = json.loads(result.output)
    assert data["design"]["name"] == "kuk" and data["design"]["parameters"]["p"] == [0.75, 0.25]
    assert data["power"] == pytest.approx(disguised["result"]["power"], abs=1e-4)
    unrelated = _reference("grid: unrelated-known, setting 4")
    result = _run(["--design", "unrelated-known", "--param", "p=0.7", "--param", "q=0.3",
                   "--pi", "0.3", "--pi2", "0.2", "--null", "0.2", "--n", "1600",
                   "--alternative", "greater", "--format", "json"])
    data = json.loads(result.output)
    assert data["design"] == {"name": "uqtknown", "parameters": {"p": [0.7, 0.3],
                                                                 "dont_know": 0.0}}
    assert data["power"] == pytest.approx(unrelated["result"]["power"], abs=1e-4)
    assert data["sample_sizes"] == [800, 800]


def test_rr_names_work_in_other_commands_too():
    result = CliRunner().invoke(main, ["estimate", "--design", "mirrored", "--param", "p=0.7",
                                       "--counts", "yes=40,no=60", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["design"]["name"] == "warner"


def test_text_output_names_the_test_the_power_and_the_direct_question():
    result = _run(["--design", "warner", "--param", "p=0.7", "--pi", "0.3", "--null", "0.2",
                   "--n", "1000"])
    assert result.exit_code == 0, result.output
    expected = power(make_design("warner", p=0.7), pi=0.3, null=0.2, n=1000)
    lines = result.output.splitlines()
    assert lines[0] == "Power of a one-sample test (two-sided, alpha = 0.05)"
    assert f"power           {expected.power:.4f}" in lines
    assert f"respondents     {expected.n:,}" in lines
    assert any(line.startswith("asked directly  power 1.0000 with 1,000 respondents; "
                               f"{expected.n_direct} respondents") for line in lines)
    assert all(len(line) <= 80 for line in lines)


def test_the_detectable_share_is_printed_with_n_and_power():
    result = _run(["--design", "warner", "--param", "p=0.75", "--n", "800", "--power", "0.8",
                   "--format", "json"])
    data = json.loads(result.output)
    check = power(make_design("warner", p=0.75), pi=data["pi"], null=0.0, n=800)
    assert data["solved"] == "pi" and check.power == pytest.approx(0.8, abs=1e-9)


@pytest.mark.parametrize(("args", "message"), [
    (["--design", "warner", "--param", "p=0.7", "--pi", "0.2"],
     "Error: give two of --pi, --n and --power: --pi and --n compute the power, --pi and "
     "--power the n, --n and --power the share the test detects (see 'surveykit power "
     "--help')"),
    (["--design", "warner", "--param", "p=0.7", "--pi", "0.2", "--n", "100", "--alpha", "1.5"],
     "Error: alpha (1.5) must be strictly between 0 and 1"),
    (["--design", "warner", "--param", "p=0.7", "--pi", "0.2", "--null", "0.3", "--power",
      "0.8", "--alternative", "greater"],
     "Error: the alternative lies on the wrong side for alternative 'greater' (the test "
     "detects shares above the null): its power falls to 0 as n grows; use the other "
     "alternative or two-sided"),
    (["--design", "forced-known", "--param", "p=0.7", "--pi", "0.2", "--n", "100"],
     "Error: design 'forced-known' (rr's name): p (0.7) is the probability of answering "
     "truthfully; give p0 (forced no) and p1 (forced yes) too, e.g. p=0.6667 p0=0.1667 "
     "p1=0.1667 (or fr's own p=0.1667,0.1667: forced no, forced yes)"),
    (["--design", "forced-known", "--param", "p=0.7", "--param", "p0=0.2", "--param", "p1=0.2",
      "--pi", "0.2", "--n", "100"],
     "Error: design 'forced-known' (rr's name): p (0.7, answer truthfully), p0 (0.2) and p1 "
     "(0.2) must add up to 1"),
    (["--design", "sld", "--param", "p=0.1667,0.8333", "--pi", "0.2", "--n", "100",
      "--nuisance", "honesty=0.9"],
     "Error: design 'sld' has no parameter 'honesty' to plan at; its unknown parameters are t"),
    (["--design", "warner", "--param", "p=0.7", "--pi", "0.2", "--n", "0"],
     "Error: Invalid value for '--n': 0 is not in the range x>=1. (see 'surveykit power "
     "--help')"),
])
def test_bad_input_is_one_line_and_exits_2(args, message):
    result = _run(args)
    assert result.exit_code == 2, result.output
    assert result.output.strip() == message


def test_the_plot_is_a_png_with_readable_text(tmp_path):
    target = tmp_path / "power.png"
    result = _run(["--design", "sld", "--param", "p=0.1667,0.8333", "--nuisance", "t=0.9",
                   "--pi", "0.3", "--pi2", "0.2", "--n", "800", "--plot", str(target)])
    assert result.exit_code == 0, result.output
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    figure = power_figure(power(make_design("sld", p=[0.1667, 0.8333]), pi=0.3, pi2=0.2, n=800,
                                nuisance={"t": 0.9}))
    figure.canvas.draw()
    sizes = [t.get_fontsize() for t in figure.findobj(Text) if t.get_text().strip()]
    # 120 dpi: 9 pt is 15 px, at least the 12 px the house asks for
    assert min(sizes) >= MIN_TEXT_PT and MIN_TEXT_PT * 120 / 72 >= 12
    labels = [t.get_text() for t in figure.axes[0].get_legend().get_texts()]
    assert labels[:2] == ["sld", "direct question"]


def test_the_console_script_runs_the_command():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "surveykit", "power", "--design", "warner",
                           "--param", "p=0.7", "--pi", "0.2", "--n", "500", "--format", "json"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["power"] == pytest.approx(
        _reference("mirrored p = 0.7, n = 500, two-sided")["result"]["power"], abs=1e-4)


def test_help_explains_the_three_modes():
    result = _run(["--help"])
    assert result.exit_code == 0
    assert "Give two of --pi, --n and --power" in result.output
    assert "'surveykit docs power'" in result.output


def test_category_labels_are_escaped_in_the_text_output():
    hostile = "b\x1b[2J"
    result = _run(["--design", "grr", "--param", "epsilon=1", "--param",
                   f"categories=a,{hostile},c", "--pi", "0.5,0.3,0.2", "--null", "0.4,0.3,0.3",
                   "--category", "a", "--n", "100"])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output
    assert "shares of a, b\\x1b[2J, c" in result.output
