"""docs/numeric-questions.md shows real output: every ``console`` block's command is run and
its output compared with the block, character for character; its survey file reads, and
it is a guide 'surveykit docs numeric-questions' prints."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from surveykit.cli import main
from surveykit.definition.survey import parse_survey
from surveykit.guides import TOPICS, guide_text

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "numeric-questions.md").read_text(encoding="utf-8")


def _blocks(kind: str) -> list[str]:
    return re.findall(rf"^```{kind}\n(.*?)^```", DOC, re.S | re.M)


def test_the_guide_is_listed_and_its_survey_file_reads():
    assert "numeric-questions" in TOPICS
    assert guide_text("numeric-questions") == DOC
    (survey_text,) = _blocks("toml")
    survey = parse_survey(survey_text, "numeric-questions.md")
    assert [q.type for q in survey.questions] == ["choice", "number"]


@pytest.mark.parametrize("block", _blocks("console"), ids=lambda v: v[:60])
def test_doc_example_output_is_real(block):
    command, _, output = block.partition("\n")
    assert command.startswith("$ surveykit ")
    result = CliRunner().invoke(main, shlex.split(command)[2:], prog_name="surveykit")
    assert result.exit_code == 0, result.output
    assert result.output == output
