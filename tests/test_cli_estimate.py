"""`surveykit estimate` and the CLI's conventions, through real invocations."""

import json
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from surveykit import GeneralizedWarner, estimate
from surveykit.cli import main

REQUIRED_KEYS = {
    "n", "yes", "no", "dont_know", "p", "q", "pi_hat", "pi_mle", "variance", "se",
    "ci_low", "ci_high", "ci_level", "ci_method", "epsilon_shafer", "epsilon_walley",
}
ARGS = ["estimate", "--yes", "312", "--no", "451", "--dont-know", "237", "--p", "0.6", "--q", "0.2"]


def run(args):
    return CliRunner().invoke(main, args, catch_exceptions=False)


def test_json_output_has_the_documented_keys_and_the_library_numbers():
    result = run([*ARGS, "--format", "json"])
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert REQUIRED_KEYS <= set(data)
    expected = estimate(yes=312, no=451, dont_know=237, mechanism=GeneralizedWarner(p=0.6, q=0.2))
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


def test_no_protection_prints_inf_and_json_null():
    args = ["estimate", "--yes", "5", "--no", "5", "--dont-know", "0", "--p", "1", "--q", "0"]
    assert "Shafer inf, Walley inf" in run(args).stdout
    assert json.loads(run([*args, "--format", "json"]).stdout)["epsilon_shafer"] is None


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
    bad = subprocess.run([sys.executable, "-m", "surveykit", *ARGS[:-3], "0.3", "--q", "0.4"],
                         capture_output=True, text=True)
    assert bad.returncode == 2
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
