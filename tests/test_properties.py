"""Property tests of the error contract (issue 11): generated malformed response files and
survey files, fed to the real commands. Whatever the input: no traceback, the right exit
status, and a refused input leaves the database exactly as it was. A survey file that
``survey add`` accepts works with generate, report, export and serve (validation at the
door).

The default run tries a few inputs per property (the conftest's "suite" profile) and
every input these properties ever found a bug with (@example); the same properties run
with many more under ``-m slow``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from migrated import migrated_sqlite
from store_support import run_cli

from surveykit.definition.survey import wording_keys
from surveykit.designs.registry import EXAMPLES, PRESETS
from surveykit.resources import locate_resource

SURVEY = "academic_integrity"
SAMPLE = locate_resource("sample_data")
QUESTIONS = ("exam_cheating", "plagiarism", "contract_cheating", "fabricated_data")

# The default run: the conftest's "suite" profile (a short derandomized search) plus the
# @example cases of every bug these properties found; -m slow runs the long searches.
FAST = settings(deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])
SLOW = settings(FAST, max_examples=400, derandomize=False)


def cli(*args: str):
    """Run a command in this process (closing the connections of the engines it opened, as
    the end of a real run does); a Python exception (a traceback) fails the test."""
    result = run_cli(*args)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    text = result.stdout + result.stderr
    assert "Traceback" not in text and "failed unexpectedly" not in text, text
    return result


def rows_of(database: Path) -> list[str]:
    """The database's content (SQL dump), to compare before and after a command (whose
    engines :func:`cli` has disposed: a full gc.collect() here was two thirds of the time)."""
    with closing(sqlite3.connect(database)) as conn:
        return list(conn.iterdump())


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("properties")
    database = folder / "surveykit.db"
    migrated_sqlite(database)
    assert cli("survey", "add", str(SAMPLE / "academic_integrity.toml"), "--db",
               str(database)).exit_code == 0
    return folder


# -- response files ------------------------------------------------------------------------

_JUNK = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)),
                max_size=12)
_CELL = st.one_of(
    st.sampled_from(["yes", "No", " dk ", "Don't know", "1", "0", "TRUE", "", "maybe",
                     "=HYPERLINK(\"x\")", "\x1b[31mred", '"', '""', ",", ";", "\n", "\r\n",
                     "\x00", "AI-0001", "ai-0001", " AI-0002 ", "7KQ2-M9XD-4FRT-8BT"]),
    st.sampled_from(QUESTIONS), _JUNK,
    st.builds(lambda n: "x" * n, st.sampled_from([0, 1, 64, 65, 201, 140_000])),
)
_HEADERS = st.one_of(
    st.just(["respondent_id", "question_id", "answer"]),
    st.just(["respondent_id", *QUESTIONS]),
    st.just(["respondent_id", "exam_cheating", "_notes", "group"]),
    st.lists(st.one_of(st.sampled_from(["respondent_id", "answer", "question_id", "group",
                                        *QUESTIONS]), _JUNK), min_size=0, max_size=6),
)


@st.composite
def response_files(draw) -> bytes:
    """A response file as bytes: a header and rows of valid and malformed cells, written
    with a random delimiter, quoting, line ending and encoding, sometimes cut or binary."""
    header = draw(_HEADERS)
    width = max(1, len(header))
    rows = draw(st.lists(st.lists(_CELL, min_size=0, max_size=width + 2), max_size=8))
    delimiter = draw(st.sampled_from([",", ";", "\t", "|"]))
    buffer = io.StringIO()
    if draw(st.booleans()):
        writer = csv.writer(buffer, delimiter=delimiter,
                            lineterminator=draw(st.sampled_from(["\n", "\r\n", "\r"])))
        writer.writerow(header)
        writer.writerows(rows)
        text = buffer.getvalue()
    else:  # no quoting at all: stray quotes and separators inside cells stay as they are
        text = "\n".join(delimiter.join(row) for row in [header, *rows])
    encoding = draw(st.sampled_from(["utf-8", "utf-8-sig", "latin-1", "utf-16"]))
    data = text.encode(encoding, errors="replace")
    cut = draw(st.one_of(st.none(), st.integers(0, max(0, len(data)))))
    if cut is not None:
        data = data[:cut]
    prefix = draw(st.sampled_from([b"", b"", b"", b"PK\x03\x04", b"\xd0\xcf\x11\xe0",
                                   b"%PDF-1.4\n", b"\x89PNG\r\n"]))
    return prefix + data


def _import_property(workspace: Path, content: bytes, options: list[str]) -> None:
    database = workspace / "surveykit.db"
    path = workspace / "answers.csv"
    path.write_bytes(content)
    rejects = workspace / "rejects.csv"
    rejects.unlink(missing_ok=True)
    before = rows_of(database)
    extra = ["--skip-invalid", "--rejects", str(rejects)] if "--skip-invalid" in options \
        else [option for option in options if option != "--skip-invalid"]
    result = cli("import", str(path), "--survey", SURVEY, "--db", str(database), *extra)
    assert result.exit_code in (0, 1), (result.exit_code, result.output)
    if result.exit_code == 1:
        assert result.stderr.startswith("Error: "), result.stderr
        # the first line names the file (or the column/row/value problems under it)
        assert str(path) in result.stderr or "answers.csv" in result.stderr, result.stderr
        assert rows_of(database) == before
        assert not rejects.exists() or "--skip-invalid" in options
    else:
        assert result.stdout.startswith(("Imported", f"{path} was already imported",
                                         "Dry run")), result.stdout
        if "--dry-run" in options:
            assert rows_of(database) == before


_OPTIONS = st.sampled_from([[], [], ["--skip-invalid"], ["--dry-run"], ["--replace"],
                            ["--layout", "long"], ["--layout", "wide"]])


@FAST
@given(content=response_files(), options=_OPTIONS)
# found by this test: a carriage return before a byte that is not UTF-8 crashed the reader
@example(content=b"respondent_id,question_id,answer\n\r\x80", options=[])
def test_a_malformed_response_file_is_one_error_and_changes_nothing(workspace, content,
                                                                    options):
    _import_property(workspace, content, options)


@pytest.mark.slow
@SLOW
@given(content=response_files(), options=_OPTIONS)
def test_a_malformed_response_file_is_one_error_and_changes_nothing_thoroughly(
        workspace, content, options):
    _import_property(workspace, content, options)


# -- survey files ----------------------------------------------------------------------------

_NUMBER = st.one_of(st.sampled_from([0, 1, 0.5, 0.6, 0.2, 1e-300, 1e-7, -0.1, 1.5, 2,
                                     math.nan, math.inf, True]),
                    st.floats(-0.5, 1.5, allow_nan=False))
_TEXT = st.one_of(st.sampled_from(["Ever?", "Have you ever cheated?", "", " ", " q1 ",
                                   "\x1b[2J", "a\u202eb", "{answer}", "{nope}", "x" * 300,
                                   "Innocent?", "A", "B", "2", "1"]), _JUNK)
_ID = st.one_of(st.sampled_from(["q1", "q2", "Q1", " q1", "q1 ", "1q", "q-1", "answer",
                                 "respondent_id", "q1_die", "q1_draw", "intro", "group",
                                 "x" * 70]), _JUNK)
_VALUE = st.deferred(lambda: st.one_of(
    _NUMBER, _TEXT, st.lists(_NUMBER, max_size=4), st.lists(_TEXT, max_size=3),
    st.lists(st.lists(_NUMBER, max_size=3), max_size=3),
    st.dictionaries(_ID, _NUMBER, max_size=2)))


@st.composite
def designs(draw) -> dict:
    """A [design] table: a real model with its example parameters, perturbed."""
    model = draw(st.sampled_from([*PRESETS, "nope", "Warner", "FR"]))
    table: dict = {"model": model}
    for key, text in EXAMPLES.get(model, {}).items():
        values = [float(v) if re.fullmatch(r"[-0-9.e]+", v) else v
                  for v in text.replace(";", ",").split(",")]
        table[key] = values if len(values) > 1 else values[0]
    for key in list(table):
        if key != "model" and draw(st.integers(0, 4)) == 0:
            table[key] = draw(_VALUE)
    if draw(st.booleans()):
        table[draw(st.sampled_from(["dont_know", "groups", "innocuous", "p", "bogus"]))] = \
            draw(_VALUE)
    if model in ("uqtknown", "uqtunknown", "crosswise", "triangular") and draw(st.booleans()):
        table["innocuous"] = "Born in spring?"
    return table


@st.composite
def survey_documents(draw) -> dict:
    document: dict = {"name": draw(st.one_of(st.just("prop"), _ID)),
                      "title": draw(_TEXT)}
    default = draw(st.sampled_from(["mechanism", "design", "none"]))
    if default == "mechanism":
        document["mechanism"] = {"p": draw(_NUMBER), "q": draw(_NUMBER)}
    elif default == "design":
        document["design"] = draw(designs())
    if draw(st.booleans()):
        keys = st.one_of(st.sampled_from(sorted(wording_keys())), _ID)
        document["wording"] = draw(st.dictionaries(keys, _TEXT, max_size=3))
    if draw(st.booleans()):
        document["aliases"] = draw(st.dictionaries(_TEXT, st.sampled_from(
            ["yes", "no", "dont_know", "maybe"]), max_size=2))
    questions = []
    for _ in range(draw(st.integers(0, 3))):
        question: dict = {"id": draw(_ID), "text": draw(_TEXT)}
        own = draw(st.sampled_from(["none", "none", "mechanism", "design"]))
        if own == "mechanism":
            question["mechanism"] = {"p": draw(_NUMBER), "q": draw(_NUMBER)}
        elif own == "design":
            question["design"] = draw(designs())
        if draw(st.integers(0, 3)) == 0:
            question[draw(st.sampled_from(["aliases", "wording", "extra"]))] = draw(_VALUE)
        questions.append(question)
    document["questions"] = questions
    if draw(st.integers(0, 5)) == 0:  # structure itself wrong
        key = draw(st.sampled_from(["questions", "name", "design", "import", "mechanism"]))
        document[key] = draw(_VALUE)
    return document


def _toml_string(text: str) -> str:
    # JSON's escapes are TOML's, except that TOML wants DEL escaped too
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") \
            if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) \
        + "}"


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else _toml_string(key)


def to_toml(document: dict) -> str:
    """The document as TOML: scalars and inline values at the top, then tables."""
    lines, tables = [], []
    for key, value in document.items():
        if key == "questions" and isinstance(value, list) and all(
                isinstance(q, dict) for q in value):
            continue
        if isinstance(value, dict):
            tables.append((key, value))
        else:
            lines.append(f"{_toml_key(key)} = {_toml_value(value)}")
    for key, value in tables:
        lines += ["", f"[{_toml_key(key)}]"]
        lines += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()]
    questions = document.get("questions")
    if isinstance(questions, list) and all(isinstance(q, dict) for q in questions):
        for question in questions:
            lines += ["", "[[questions]]"]
            lines += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in question.items()]
    return "\n".join(lines) + "\n"


@st.composite
def survey_files(draw) -> bytes:
    """A survey file: a generated document, or the sample with a line cut or bytes changed."""
    if draw(st.integers(0, 3)) == 0:
        lines = (SAMPLE / "academic_integrity.toml").read_text(encoding="utf-8").splitlines()
        lines = [line.replace('name = "academic_integrity"', 'name = "mutant"')
                 for line in lines]
        index = draw(st.integers(0, len(lines) - 1))
        how = draw(st.sampled_from(["drop", "duplicate", "junk", "nest"]))
        if how == "drop":
            del lines[index]
        elif how == "duplicate":
            lines.insert(index, lines[index])
        elif how == "junk":
            lines[index] = lines[index][:draw(st.integers(0, len(lines[index])))] + draw(_JUNK)
        else:
            lines.insert(index, "x = " + "[" * 3000 + "]" * 3000)
        return "\n".join(lines).encode("utf-8")
    return to_toml(draw(survey_documents())).encode("utf-8")


def _survey_property(workspace: Path, content: bytes) -> None:
    database = workspace / "surveykit.db"
    path = workspace / "survey.toml"
    path.write_bytes(content)
    before = rows_of(database)
    result = cli("survey", "add", str(path), "--db", str(database))
    assert result.exit_code in (0, 1), (result.exit_code, result.output)
    if result.exit_code == 1:
        assert result.stderr.startswith(f"Error: {path}") or result.stderr.startswith(
            "Error: a different survey named") or result.stderr.startswith(
            "Error: survey "), result.stderr
        assert len(result.stderr.splitlines()) == 1, result.stderr
        assert rows_of(database) == before
        return
    # accepted at the door: every command that uses a survey works with it
    name = re.search(r"survey '([^']+)'|Survey '([^']+)'", result.stdout)
    name = next(group for group in name.groups() if group)
    out = workspace / "forms"
    shutil.rmtree(out, ignore_errors=True)
    generated = cli("generate", "--survey", name, "--respondents", "2", "--out", str(out),
                    "--db", str(database), "--seed", "1")
    assert generated.exit_code == 0, generated.output
    for fmt in ("text", "json", "html"):
        reported = cli("report", "--survey", name, "--db", str(database), "--format", fmt)
        assert reported.exit_code == 0, reported.output
    for mode in ("self", "device"):
        exported = cli("export", "xlsform", "--survey", name, "--out",
                       str(workspace / "form.xlsx"), "--randomize", mode,
                       "--acknowledge-risk", "--db", str(database))
        # a mode may not fit a design (no die table; not drawable on a device): usage, 2
        assert exported.exit_code in (0, 2), exported.output
    from surveykit.store import open_engine
    from surveykit.web.app import create_app

    engine = open_engine(str(database))
    try:
        create_app(engine, name)  # what serve builds before it listens
    finally:
        engine.dispose()


@FAST
@given(content=survey_files())
# found by this test: a wording key holding \x1e (which str.splitlines splits at) broke the
# one-line error in two
@example(content=b'name = "prop"\ntitle = "Ever?"\nquestions = 0\n\n[wording]\n'
                 b'"\\u001e" = "Ever?"\n')
def test_a_survey_file_is_refused_in_one_line_or_works_with_every_command(workspace, content):
    _survey_property(workspace, content)


@pytest.mark.slow
@SLOW
@given(content=survey_files())
def test_a_survey_file_is_refused_in_one_line_or_works_with_every_command_thoroughly(
        workspace, content):
    _survey_property(workspace, content)


def test_the_generators_make_valid_files_too():
    """The survey generator reaches accepted files (else the door property tests nothing)."""
    text = to_toml({"name": "ok", "title": "OK", "mechanism": {"p": 0.6, "q": 0.2},
                    "questions": [{"id": "q1", "text": "Ever?"}]})
    from surveykit.definition.survey import parse_survey

    assert parse_survey(text).questions[0].id == "q1"
    assert os.path.exists(SAMPLE / "academic_integrity.toml")
