"""docs/regression.md shows real output: every ``console`` block's command is run here and its
output compared with the block, character for character."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from surveykit.cli import main

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "regression.md"


def _examples() -> list[tuple[str, str]]:
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"^```console\n\$ (surveykit [^\n]*)\n(.*?)^```", text, re.S | re.M)
    return [(command, output) for command, output in blocks]


def test_the_doc_has_examples():
    assert len(_examples()) >= 2


@pytest.mark.parametrize(("command", "output"), _examples(), ids=lambda v: v[:60])
def test_doc_example_output_is_real(command, output, monkeypatch):
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, shlex.split(command)[1:])
    assert result.exit_code == 0, result.output
    assert result.output == output
