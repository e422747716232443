"""The command group itself: help, exit codes, one error translator."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("args", [[], ["survey"]])
def test_a_group_without_a_command_prints_its_help_and_succeeds(args):
    result = subprocess.run([sys.executable, "-m", "surveykit", *args], capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Usage: surveykit")
    assert result.stderr == ""
