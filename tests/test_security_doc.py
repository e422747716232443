"""docs/security.md stays true: every test file it names exists and holds the checks it
says it holds, and the guide ships (``surveykit docs security``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from surveykit.errors import printable
from surveykit.guides import TOPICS, guide_text

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
NAMED = sorted(set(re.findall(r"`(tests/test_[a-z_]+\.py)`", DOC)))

# What the guide says each file checks, as a name that must appear in that file's code.
CLAIMS = {
    "tests/test_formula_security.py": ["__import__", "--sensitive-formula", "report"],
    "tests/test_xlsform_security.py": ["pyxform", "javarosa", "webforms"],
    "tests/test_generate_privacy.py": ["postgresql", "AUDIT_MINIMUM_PER_GROUP"],
    "tests/test_web_security.py": ["csrf", "traceback", "refused"],
    "tests/test_tampered_store.py": ["--repair", "postgresql"],
    "tests/test_concurrent_imports.py": ["postgresql", "import"],
    "tests/test_reading_properties.py": ["hypothesis", "parquet", "duckdb"],
}


def test_the_guide_names_test_files_that_exist():
    assert len(NAMED) >= 10
    missing = [name for name in NAMED if not (ROOT / name).is_file()]
    assert missing == []


@pytest.mark.parametrize("name", sorted(CLAIMS))
def test_each_named_test_file_holds_the_checks_the_guide_claims(name):
    assert name in NAMED
    code = (ROOT / name).read_text(encoding="utf-8").lower()
    absent = [word for word in CLAIMS[name] if word.lower() not in code]
    assert absent == []


def test_the_guide_ships_and_is_listed():
    assert "security" in TOPICS
    assert guide_text("security").startswith("# Security")


@pytest.mark.parametrize("character", ["\x1b", "\x07", "\x9b", "\u202e", "\u2066", "\u200e",
                                       "\u200f", "\u061c"])
def test_printable_escapes_every_character_that_reorders_or_drives_a_terminal(character):
    # the guide promises that user text reaches a terminal escaped, bidirectional marks too
    shown = printable(f"a{character}b")
    assert character not in shown and shown.startswith("a\\") and shown.endswith("b")
