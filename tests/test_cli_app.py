"""The command group itself: help, exit codes, one error translator."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from surveykit.cli import main
from surveykit.guides import TOPICS
from tests.store_support import run_cli

ROOT = Path(__file__).resolve().parent.parent


def test_a_group_without_a_command_prints_its_help_and_succeeds_in_a_real_process():
    # the exit status a shell sees: a real process, not Click's runner
    result = subprocess.run([sys.executable, "-m", "surveykit"], capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Usage: surveykit")
    assert result.stderr == ""


@pytest.mark.parametrize("args", [[], ["survey"]])
def test_a_group_without_a_command_prints_its_help_and_succeeds(args):
    result = run_cli(*args)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("Usage: surveykit")
    assert result.stderr == ""


@pytest.fixture
def empty_folder(tmp_path, monkeypatch) -> Path:
    """An empty working folder, and no SURVEYKIT_DB: what a new user has."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SURVEYKIT_DB", raising=False)
    return tmp_path


def test_the_readme_path_runs_from_an_empty_folder(empty_folder):
    # issue 11: 'survey add academic_integrity.toml' found no file outside the repository;
    # 'init --example' writes the example next to the new database
    for args in (["init", "--example"], ["survey", "add", "academic_integrity.toml"],
                 ["import", "responses_long.csv", "--survey", "academic_integrity"],
                 ["report", "--survey", "academic_integrity"]):
        result = run_cli(*args)
        assert result.exit_code == 0, (args, result.stderr)
    assert sorted(p.name for p in empty_folder.iterdir()) == [
        "academic_integrity.toml", "responses_long.csv", "responses_wide.csv", "surveykit.db"]


def test_messages_and_help_point_to_guides_an_installed_copy_has(empty_folder):
    # issue 11: generate pointed to docs/questionnaires.md, which an installed copy lacks
    sample = ROOT / "sample_data" / "academic_integrity.toml"
    assert run_cli("init").exit_code == 0
    assert run_cli("survey", "add", str(sample)).exit_code == 0
    generate = run_cli("generate", "--survey", "academic_integrity", "--respondents", "2",
                       "--out", "forms")
    assert generate.exit_code == 0, generate.stderr
    assert "('surveykit docs questionnaires')" in generate.stdout
    texts = [generate.stdout]

    def helps(group: click.Group, prefix: list[str]) -> None:
        for name, command in group.commands.items():
            if isinstance(command, click.Group):
                helps(command, [*prefix, name])
            else:
                result = CliRunner().invoke(main, [*prefix, name, "--help"])
                assert result.exit_code == 0, (prefix, name)
                texts.append(result.output)

    helps(main, [])
    for text in texts:
        assert not re.search(r"docs/[\w-]+\.md", text), text
    topics = {topic for text in texts for topic in re.findall(r"surveykit\s+docs\s+([a-z][\w-]*)",
                                                              text)}
    assert "questionnaires" in topics and topics <= set(TOPICS)
    for topic in sorted(topics):
        shown = run_cli("docs", topic)
        assert shown.exit_code == 0, (topic, shown.stderr)
        assert shown.stdout.startswith("# ")
