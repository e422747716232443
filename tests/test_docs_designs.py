"""docs/designs.md cannot rot: its examples run, and its numbers are the designs' own.

* Every ```python block is a doctest; they run in order in one namespace, so
  the page's output is what surveykit prints today.
* Every ``<!-- card: SPEC -->`` marker is followed by a ```text block that must
  equal ``design_cards.card`` of that design (matrix, protocol, losses).
* Every preset has a section, and the table of presets lists every preset and
  every long name.
"""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest
from design_cards import build, card

from surveykit.designs import ALIASES, PRESETS

PAGE = Path(__file__).resolve().parent.parent / "docs" / "designs.md"
TEXT = PAGE.read_text(encoding="utf-8")
CARDS = re.findall(r"<!-- card: (.*?) -->\n```text\n(.*?)\n```", TEXT, re.S)


def test_every_python_block_runs_and_prints_what_the_page_shows():
    blocks = re.findall(r"^```python\n(.*?)^```", TEXT, re.S | re.M)
    assert len(blocks) >= 16
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    namespace: dict = {}
    for number, block in enumerate(blocks, start=1):
        test = parser.get_doctest(block, namespace, f"designs.md block {number}", str(PAGE), 0)
        runner.run(test, clear_globs=False)
        namespace.update(test.globs)  # DocTest copies its globals; the next block needs them
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} example(s) in docs/designs.md print other output"


@pytest.mark.parametrize(("spec", "shown"), CARDS, ids=[spec for spec, _ in CARDS])
def test_every_block_of_numbers_is_the_design_s_own(spec, shown):
    body, _, at = spec.partition("@")
    nuisance = [float(v) for v in at.split(",")] if at.strip() else None
    assert card(build(body.strip()), nuisance) == shown


def test_every_preset_has_a_section_and_a_row_with_its_long_names():
    assert len(CARDS) >= len(PRESETS)
    for name in PRESETS:
        assert re.search(rf"^## {name}: ", TEXT, re.M), f"no section for {name}"
        row = re.search(rf"^\| `{name}` \|(.*)$", TEXT, re.M)
        assert row, f"no row for {name} in the table of presets"
        for alias, target in ALIASES.items():
            if target == name:
                assert f"`{alias}`" in row.group(1), f"{alias} missing from the row of {name}"
