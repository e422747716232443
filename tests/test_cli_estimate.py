"""`surveykit estimate` and the CLI's conventions, through real invocations."""

import json
import math
import subprocess

import click
import pytest
from click.testing import CliRunner
from scipy.stats import binomtest

from surveykit import GeneralizedWarner, estimate
from surveykit.cli import main

REQUIRED_KEYS = {
    "n", "yes", "no", "dont_know", "p", "q", "pi_hat", "pi_mle", "variance", "se",
    "ci_low", "ci_high", "ci_level", "ci_method", "epsilon_shafer", "epsilon_walley",
}
ARGS = ["estimate", "--yes", "312", "--no", "451", "--dont-know-count", "237", "--p", "0.6",
        "--q", "0.2"]


def run(args):
    return CliRunner().invoke(main, args, catch_exceptions=False)


def test_json_output_has_the_documented_keys_and_the_library_numbers():
    result = run([*ARGS, "--format", "json"])
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert REQUIRED_KEYS <= set(data)
    expected = estimate(yes=312, no=451, dont_know=237, design=GeneralizedWarner(p=0.6, q=0.2))
    assert data["pi_hat"] == expected.pi_hat
    assert data["se"] == expected.se
    assert (data["ci_low"], data["ci_high"]) == tuple(expected.confidence_interval())


def test_text_output_fits_an_80_column_terminal():
    result = run([*ARGS, "--level", "0.9", "--method", "likelihood-ratio"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert len(lines) >= 6
    assert max(len(line) for line in lines) <= 80
    assert "90% CI (likelihood-ratio)" in result.stdout


def test_no_protection_prints_inf_and_json_inf_not_null():
    args = ["estimate", "--yes", "5", "--no", "5", "--dont-know-count", "0", "--p", "1",
            "--q", "0"]
    assert "Shafer inf, Walley inf" in run(args).stdout
    data = json.loads(run([*args, "--format", "json"]).stdout)
    assert (data["epsilon_shafer"], data["epsilon_shafer_finite"]) == ("inf", False)


@pytest.mark.parametrize(
    ("extra", "status", "message"),
    [
        (["--p", "0.2", "--q", "0.6"], 2, "Error: p (0.2) must be greater than q (0.6)"),
        (["--p", "0.7", "--q", "0.5"], 2, "Error: p + q (0.7 + 0.5 = 1.2) must be at most 1"),
        (["--yes", "-3"], 2, "Error: yes (-3) must not be negative"),
        (["--yes", "2.5"], 2, "Error: Invalid value for '--yes': '2.5' is not a valid integer."),
        (["--level", "2"], 2, "Error: level (2.0) must be strictly between 0 and 1"),
        (["--yes", "0", "--no", "0"], 1, "Error: no yes/no answers: pi cannot be estimated"),
    ],
)
def test_bad_input_exits_with_one_line_and_no_traceback(extra, status, message):
    result = CliRunner().invoke(main, [*ARGS, *extra])
    assert result.exit_code == status
    assert result.stderr.startswith(message)
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.output


def test_missing_option_is_a_usage_error_with_status_2():
    result = CliRunner().invoke(main, ["estimate", "--yes", "3"])
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: Missing option '--no'")


def test_installed_console_script_runs_and_fails_cleanly():
    ok = subprocess.run(["surveykit", *ARGS, "--format", "json"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["n"] == 1000
    # the failure in this process: the console script's wiring is what needed the process
    bad = CliRunner().invoke(main, [*ARGS[:-3], "0.3", "--q", "0.4"], prog_name="surveykit")
    assert bad.exit_code == 2
    assert bad.stderr.strip().splitlines() == [
        "Error: p (0.3) must be greater than q (0.4): with p <= q the answers carry no "
        "information about pi (not identifiable) or point the wrong way"
    ]


def _commands(group, path=()):
    for name, command in group.commands.items():
        yield (*path, name), command
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))


def test_every_command_has_help():
    runner = CliRunner()
    assert run(["--help"]).exit_code == 0
    for path, command in _commands(main):
        assert command.help, f"surveykit {' '.join(path)} has no help text"
        result = runner.invoke(main, [*path, "--help"])
        assert result.exit_code == 0, result.output
        assert "Usage: " in result.stdout


def test_top_level_help_lists_commands_in_workflow_order():
    text = run(["--help"]).stdout
    commands = text.split("Commands:")[1]
    positions = [commands.index(f"  {name} ") for name in
                 ("demo", "design", "init", "survey", "generate", "import", "report")]
    assert positions == sorted(positions)
    assert "surveykit survey add my_survey.toml" in text


# -- issue 11: numbers at the boundary, the don't-know check ---------------------------------


@pytest.mark.parametrize(("yes", "no", "dont_know", "p", "q", "pi"), [
    (600, 400, 0, "0.6", "0.4", 1.0),      # the example: (0.6 - 0.4) / (0.6 - 0.4)
    (750, 250, 250, "0.6", "0.2", 1.0),    # (0.75 * 0.8 - 0.2) / 0.4; float: 1 + 2.2e-16
    (350, 650, 250, "0.52", "0.28", 0.0),  # (0.35 * 0.8 - 0.28) / 0.24; float: -2.3e-16
])
def test_an_estimate_exactly_on_the_edge_is_0_or_1_with_no_warning(yes, no, dont_know, p, q,
                                                                    pi):
    # pi_hat in exact arithmetic is 0 or 1; floating point printed -0.0000 or gave
    # 1.0000000000000002 and the warning "above 1"
    args = ["estimate", "--yes", str(yes), "--no", str(no), "--dont-know-count",
            str(dont_know), "--p", p, "--q", q]
    data = json.loads(run([*args, "--format", "json"]).stdout)
    assert data["pi_hat"] == pi and data["pi_mle"] == pi
    assert math.copysign(1.0, data["pi_hat"]) == 1.0
    assert data["estimates"][0]["pi_hat"] == pi and data["estimates"][1]["pi_hat"] == 1 - pi
    assert data["warnings"] == []
    text = run(args).stdout
    assert f"pi_hat (Eq. 2)      {pi:.4f}" in text and "-0.0" not in text
    assert "above 1" not in text and "below 0" not in text
    result = estimate(yes=yes, no=no, dont_know=dont_know,
                      design=GeneralizedWarner(p=float(p), q=float(q)))
    assert result.pi_hat == pi and not result.warnings


def test_30_of_100_under_warner_07_is_zero_not_minus_zero():
    # pi_hat = (0.3 - (1 - 0.7)) / (2 * 0.7 - 1) = 0 exactly; it printed -0.0000
    args = ["estimate", "--design", "warner", "--param", "p=0.7", "--counts", "yes=30,no=70"]
    text = run(args).stdout
    assert "pi (yes)           0.0000" in text and "-0.0" not in text
    data = json.loads(run([*args, "--format", "json"]).stdout)
    assert data["pi_hat"] == 0.0 and math.copysign(1.0, data["pi_hat"]) == 1.0
    assert '"pi_hat": -0.0' not in run([*args, "--format", "json"]).stdout


def test_estimate_runs_the_dont_know_check_as_the_report_does():
    # 300 "don't know" of 1,000 where the design asks for 20%: the exact binomial test
    # (scipy.stats.binomtest, two-sided) gives p = 5.6e-14, so estimate warns
    args = ["estimate", "--yes", "400", "--no", "300", "--dont-know-count", "300", "--p",
            "0.6", "--q", "0.2"]
    expected = binomtest(300, 1000, 0.2).pvalue
    text = " ".join(run(args).stdout.split())
    assert "don't know 30.0% observed, 20.0% designed (exact binomial test" in text
    assert 'More "don\'t know" than designed: 30.0%' in text
    data = json.loads(run([*args, "--format", "json"]).stdout)
    assert data["dont_know_designed"] == 0.2
    assert data["dont_know_pvalue"] == pytest.approx(expected, rel=1e-9)
    assert data["dont_know_warning"].startswith('More "don\'t know" than designed')
    check = estimate(yes=400, no=300, dont_know=300,
                     design=GeneralizedWarner(p=0.6, q=0.2)).dont_know_check()
    assert check.pvalue == pytest.approx(expected, rel=1e-9) and check.warning
    # answers that follow the design: the check runs and stays quiet
    fine = json.loads(run(["estimate", "--yes", "500", "--no", "300", "--dont-know-count",
                           "200", "--p", "0.6", "--q", "0.2", "--format", "json"]).stdout)
    assert fine["dont_know_pvalue"] > 0.01 and fine["dont_know_warning"] is None


def test_dont_know_as_the_count_of_the_0_1_form_still_works_with_a_note():
    """--dont-know is a probability in every command; surveykit 0.1's `--dont-know N` (a count,
    in the form without --design) still gives the same output, and says so on stderr."""
    old = [*ARGS[:5], "--dont-know", "237", *ARGS[7:]]
    assert ARGS[5:7] == ["--dont-know-count", "237"]
    result = CliRunner().invoke(main, old)
    assert result.exit_code == 0, result.output
    assert result.stdout == run(ARGS).stdout
    assert result.stderr == ("Note: --dont-know 237 as the count of \"don't know\" answers is "
                             "deprecated (--dont-know is a probability); use --dont-know-count "
                             "237\n")
    both = CliRunner().invoke(main, [*ARGS, "--dont-know", "0.2"])
    assert both.exit_code == 2
    assert "the 0.1 form takes the count of \"don't know\" answers as --dont-know-count" \
        in both.stderr
