"""docs/power.md and docs/joint.md show real output: in a fresh folder (with the minarets data
where the docs read it), every ``python`` block runs, every ``pycon`` block is run as a
doctest, and every ``console`` block's command is run and its output compared with the
block, character for character."""

from __future__ import annotations

import doctest
import re
import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from surveykit.cli import main
from surveykit.guides import TOPICS, guide_text

ROOT = Path(__file__).resolve().parent.parent
DOCS = ("power", "joint")


def _blocks(name: str, kind: str) -> list[str]:
    text = (ROOT / "docs" / f"{name}.md").read_text(encoding="utf-8")
    return re.findall(rf"^```{kind}\n(.*?)^```", text, re.S | re.M)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A fresh folder where the docs' python blocks have run (they write the data files)."""
    path = tmp_path_factory.mktemp("docs")
    (path / "tests" / "data").mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "data" / "minarets.csv", path / "tests" / "data")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(path)
        for name in DOCS:
            for block in _blocks(name, "python"):
                exec(compile(block, f"docs/{name}.md", "exec"), {})
    return path


def _examples():
    return [(name, block) for name in DOCS for block in _blocks(name, "console")]


def test_the_docs_have_examples_and_are_guides():
    assert len(_examples()) >= 8
    for name in DOCS:
        assert name in TOPICS
        assert guide_text(name).startswith("# ")
        assert _blocks(name, "pycon")


@pytest.mark.parametrize(("name", "block"), _examples(), ids=lambda v: v[:70])
def test_doc_example_output_is_real(name, block, folder, monkeypatch):
    monkeypatch.chdir(folder)
    command, _, output = block.partition("\n")
    assert command.startswith("$ surveykit ")
    result = CliRunner().invoke(main, shlex.split(command)[2:], prog_name="surveykit")
    assert result.exit_code == 0, result.output
    assert result.stdout == output


@pytest.mark.parametrize("name", DOCS)
def test_doc_python_sessions_are_real(name, folder, monkeypatch):
    monkeypatch.chdir(folder)
    text = "\n".join(_blocks(name, "pycon"))
    parser = doctest.DocTestParser()
    test = parser.get_doctest(text, {}, f"docs/{name}.md", f"docs/{name}.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.failures == 0
