"""Questionnaires: answer sheets leak nothing but the id, slips carry no id, user text is
escaped in HTML and Markdown, templates are strict, and the output is golden-tested.

Golden files live in tests/golden/; after an intended template change, regenerate
them with ``SURVEYKIT_UPDATE_GOLDEN=1 python -m pytest tests/test_questionnaire.py``
and review the diff before committing.
"""

from __future__ import annotations

import csv
import difflib
import os
import re
import stat
from dataclasses import replace
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from surveykit.collection.dice import DieDesignError
from surveykit.collection.generation import write_questionnaires
from surveykit.collection.questionnaire import build_layout
from surveykit.collection.randomizer import seeded_source
from surveykit.collection.render import (
    TemplateRenderError,
    get_template,
    load_wording_defaults,
    make_environment,
)
from surveykit.collection.respondent_ids import ID_PATTERN
from surveykit.definition.survey import parse_survey
from surveykit.errors import ParameterError, SurveyDefinitionError

GOLDEN = Path(__file__).parent / "golden"
UPDATE_GOLDEN = os.environ.get("SURVEYKIT_UPDATE_GOLDEN") == "1"

SURVEY_TOML = (Path(__file__).parent / "surveys" / "integrity.toml").read_text(encoding="utf-8")

HOSTILE_TEXT = ('<script>alert("x")</script> & *bold* _it_ [link](http://evil.example) '
                '| cell | `code` ~~gone~~ &amp; <b>tag</b>')
HOSTILE_TOML = f"""
name = "hostile"
title = "Title <i>with</i> *markup* | pipe"
[mechanism]
p = 0.6
q = 0.2
[[questions]]
id = "q1"
text = '''{HOSTILE_TEXT}'''
[questions.wording]
answer_yes = "# Yes [really](x)"
"""

FRENCH_TOML = """
name = "integrite"
title = "Enquête sur l'intégrité"
language = "fr"
[mechanism]
p = 0.6
q = 0.2
[wording]
sheet_title = "Feuille de réponses"
respondent_id_label = "Identifiant"
question_label = "Question"
slip_title = "Vos instructions personnelles"
slip_keep = "Gardez ce papier. Ne le rendez pas avec vos réponses."
rule_truthful = "Répondez sincèrement."
rule_opposite = "Donnez la réponse contraire."
rule_dont_know = "Répondez « je ne sais pas »."
answer_yes = "Oui"
answer_no = "Non"
answer_dont_know = "Je ne sais pas"
[[questions]]
id = "examen"
text = "Avez-vous déjà copié pendant un examen ?"
[questions.wording]
answer_dont_know = "Ne sais pas"
"""


def render_part(survey, part: str, fmt: str, mode: str = "slips", *, group: int = 0,
                **context) -> str:
    """Render one template part; ``respondent_ids`` become pages of survey group ``group``."""
    environment = make_environment()
    layout = build_layout(survey, mode=mode, wording_defaults=load_wording_defaults(environment))
    ids = context.get("respondent_ids", [])
    context.setdefault("pages", layout.pages(ids, [group] * len(ids)))
    return get_template(environment, part, fmt).render(layout=layout, **context)


def changed_lines(a: str, b: str) -> list[str]:
    return [line for line in difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="",
                                                  n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]


@pytest.fixture(scope="module")
def survey():
    return parse_survey(SURVEY_TOML, "integrity.toml")


# -- what the pages reveal ---------------------------------------------------------


@pytest.mark.parametrize(("part", "mode"), [("sheets", "slips"), ("die", "die")])
@pytest.mark.parametrize("fmt", ["html", "markdown"])
def test_answer_sheets_of_two_respondents_differ_only_in_the_id(survey, part, mode, fmt):
    first_id, second_id = "AAAA-BBBB-CCCC-DD", "2345-6789-WXYZ-00"
    first = render_part(survey, part, fmt, mode, respondent_ids=[first_id])
    second = render_part(survey, part, fmt, mode, respondent_ids=[second_id])
    diff = changed_lines(first, second)
    assert len(diff) == 2, diff
    assert diff[0].startswith("-") and first_id in diff[0]
    assert diff[1].startswith("+") and second_id in diff[1]
    assert diff[0][1:].replace(first_id, second_id) == diff[1][1:]
    assert first.replace(first_id, second_id) == second


def test_generated_slips_carry_no_respondent_id_and_tell_the_respondent_to_keep_them(
        survey, tmp_path):
    key = tmp_path / "private" / "key.csv"
    key.parent.mkdir()
    result = write_questionnaires(survey, respondents=30, out_dir=tmp_path / "out",
                                  key_file=key, rng=seeded_source(1), per_file=10)
    slips = [p for p in result.files if p.name.startswith("slips-")]
    sheets = [p for p in result.files if p.name.startswith("sheets-")]
    assert len(slips) == len(sheets) == 3
    ids = result.respondent_ids
    slip_text = "".join(p.read_text(encoding="utf-8") for p in slips)
    sheet_text = "".join(p.read_text(encoding="utf-8") for p in sheets)
    assert all(rid in sheet_text for rid in ids)
    assert not any(rid in slip_text for rid in ids)
    assert not re.search(ID_PATTERN.pattern.strip("^$"), slip_text)
    assert slip_text.count("Keep this slip. Do not return it with your answers") == 30
    # the sheets carry no rule at all, so they reveal no code
    assert "Give the opposite" not in sheet_text and "Answer truthfully" not in sheet_text


def test_key_file_lists_every_code_and_agrees_with_the_slips(survey, tmp_path):
    key = tmp_path / "key.csv"
    result = write_questionnaires(survey, respondents=25, out_dir=tmp_path / "out",
                                  key_file=key, rng=seeded_source(2), per_file=25)
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    with key.open(newline="", encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream))
    assert list(rows[0]) == ["respondent_id", "group", "question_id", "code"]
    assert len(rows) == 25 * 2
    assert [r["respondent_id"] for r in rows[::2]] == list(result.respondent_ids)
    assert {r["group"] for r in rows} == {"1"}
    for question in ("exam", "paid"):
        codes = [r["code"] for r in rows if r["question_id"] == question]
        assert set(codes) <= {"truthful", "opposite", "dont_know"}
    # slip k of the file is respondent k's slip: its rules follow the key file's codes
    slip_rules = re.findall(r'class="rule (rule-\w+)"', (tmp_path / "out" / "slips-00001.html")
                            .read_text(encoding="utf-8"))
    assert slip_rules == [f"rule-{r['code']}" for r in rows]


def test_key_file_inside_the_output_folder_or_over_an_old_key_is_refused(survey, tmp_path):
    with pytest.raises(ParameterError, match="is inside the --out folder"):
        write_questionnaires(survey, respondents=2, out_dir=tmp_path / "out",
                             key_file=tmp_path / "out" / "key.csv")
    old = tmp_path / "old.csv"
    old.write_text("keep me")
    with pytest.raises(ParameterError, match="already exists; choose a new file name"):
        write_questionnaires(survey, respondents=2, out_dir=tmp_path / "out2", key_file=old)
    assert old.read_text() == "keep me"
    # nothing left behind: no --out folder, no staging folder
    assert sorted(path.name for path in tmp_path.iterdir()) == ["old.csv"]


def test_output_folder_of_an_earlier_run_is_refused(survey, tmp_path):
    write_questionnaires(survey, respondents=2, out_dir=tmp_path)
    with pytest.raises(ParameterError, match=r"already holds sheets-00001.html from an earlier"):
        write_questionnaires(survey, respondents=2, out_dir=tmp_path)


def test_files_hold_at_most_per_file_questionnaires(survey, tmp_path):
    result = write_questionnaires(survey, respondents=7, out_dir=tmp_path, per_file=3,
                                  fmt="markdown", rng=seeded_source(4))
    names = [p.name for p in result.files]
    assert names == ["sheets-00001.md", "slips-00001.md", "sheets-00002.md", "slips-00002.md",
                     "sheets-00003.md", "slips-00003.md"]
    counts = [p.read_text(encoding="utf-8").count("## Answer sheet") for p in result.files
              if p.name.startswith("sheets")]
    assert counts == [3, 3, 1]
    assert len(set(result.respondent_ids)) == 7


def test_html_pages_break_after_each_questionnaire(survey, tmp_path):
    write_questionnaires(survey, respondents=3, out_dir=tmp_path, rng=seeded_source(4))
    html = (tmp_path / "sheets-00001.html").read_text(encoding="utf-8")
    assert html.count('<section class="page sheet">') == 3
    assert "@page { size: auto; margin: 15mm; }" in html
    assert "page-break-after: always" in html


# -- escaping -----------------------------------------------------------------------


def test_question_text_with_html_is_escaped_in_html():
    hostile = parse_survey(HOSTILE_TOML, "hostile.toml")
    for part, mode in (("sheets", "slips"), ("die", "die")):
        html = render_part(hostile, part, "html", mode, respondent_ids=["AAAA-BBBB-CCCC-DD"])
        assert "<script>" not in html and "<b>tag</b>" not in html and "<i>with</i>" not in html
        assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; *bold*" in html
        assert "&amp;amp;" in html
    slips = render_part(hostile, "slips", "html", slips=[
        build_layout(hostile, mode="slips",
                     wording_defaults=load_wording_defaults(make_environment())).slip(0, [0])])
    assert "<script>" not in slips and "&lt;script&gt;" in slips


@pytest.mark.parametrize(("part", "mode"), [("sheets", "slips"), ("die", "die")])
def test_markdown_special_text_stays_literal_in_markdown(part, mode):
    hostile = parse_survey(HOSTILE_TOML, "hostile.toml")
    markdown = render_part(hostile, part, "markdown", mode, respondent_ids=["AAAA-BBBB-CCCC-DD"])
    html = MarkdownIt("commonmark").enable("table").render(markdown)
    # the user's text comes through as text: no script, link, emphasis, code or extra cell
    for forbidden in ("<script", "<a href", "<em>", "<strong>bold", "<code>code", "<b>tag",
                      "<i>with"):
        assert forbidden not in html, forbidden
    assert ('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; *bold* _it_ '
            '[link](http://evil.example) | cell | `code` ~~gone~~ &amp;amp; &lt;b&gt;tag&lt;/b&gt;'
            ) in html
    assert "# Yes [really](x)" in html  # a wording override is escaped too
    assert "Title &lt;i&gt;with&lt;/i&gt; *markup* | pipe" in html


# -- wording ------------------------------------------------------------------------


def test_a_survey_in_french_overrides_the_wording_per_survey_and_per_question(tmp_path):
    french = parse_survey(FRENCH_TOML, "integrite.toml")
    result = write_questionnaires(french, respondents=1, out_dir=tmp_path,
                                  rng=seeded_source(3))
    sheet = (tmp_path / "sheets-00001.html").read_text(encoding="utf-8")
    slip = (tmp_path / "slips-00001.html").read_text(encoding="utf-8")
    assert '<html lang="fr">' in sheet
    assert "Feuille de réponses" in sheet and "Identifiant" in sheet
    assert '<span class="box">Oui</span><span class="box">Non</span>' in sheet
    assert '<span class="box">Ne sais pas</span>' in sheet  # the question's own override
    assert "Yes" not in sheet and "Answer sheet" not in sheet
    assert "Gardez ce papier. Ne le rendez pas avec vos réponses." in slip
    assert result.respondents == 1
    expected = {"truthful": "Répondez sincèrement.", "opposite": "Donnez la réponse contraire.",
                "dont_know": "Répondez « je ne sais pas »."}
    (drawn,) = slip_rules(slip)
    assert expected[drawn.removeprefix("rule-")] in slip


def test_unknown_wording_key_is_refused_with_the_known_keys():
    # at the door: the survey file does not parse (issue 11: it used to fail at generate)
    with pytest.raises(SurveyDefinitionError, match=r"^typo.toml: questions\[1\].wording.remindr: "
                                                    r"unknown wording key 'remindr' \(keys like "
                                                    r"it: reminder\)"):
        parse_survey(SURVEY_TOML.replace("reminder =", "remindr ="), "typo.toml")
    # and a Survey built in code is still refused when its questionnaire is rendered
    survey = parse_survey(SURVEY_TOML, "typo.toml")
    question = replace(survey.questions[1], wording={"remindr": "Mind"})
    survey = replace(survey, questions=(survey.questions[0], question, *survey.questions[2:]))
    with pytest.raises(ParameterError, match=r"question 'paid' wording: unknown wording key "
                                             r"'remindr'; known keys are answer_dont_know, "):
        render_part(survey, "sheets", "html", respondent_ids=["X"])


# -- die mode -----------------------------------------------------------------------


def test_die_mode_prints_the_exact_face_mapping(survey):
    html = render_part(survey, "die", "html", "die", respondent_ids=["AAAA-BBBB-CCCC-DD"])
    assert "<th>Roll (d10)</th>" in html and "<td>1–6</td><td>Answer truthfully.</td>" in html
    assert "<td>7–8</td><td>Give the opposite of the true answer.</td>" in html
    assert "<th>Roll (d4)</th>" in html and "<td>3</td><td>Give the opposite" in html


def test_die_mode_with_an_unrealizable_design_names_the_question_and_the_nearest_design(
        tmp_path):
    odd = parse_survey(SURVEY_TOML.replace("p = 0.5\nq = 0.25", "p = 0.333\nq = 0.111"), "x")
    with pytest.raises(DieDesignError, match=r"^question 'paid': no die in d2, .* nearest "
                                             r"design with no more privacy loss: p = "
                                             r"0.3333333333333333 \(1/3\), q = "
                                             r"0.1111111111111111 \(1/9\) with two d6"):
        write_questionnaires(odd, respondents=1, out_dir=tmp_path, mode="die")
    assert not list(tmp_path.iterdir())


def test_key_file_is_refused_in_die_mode(survey, tmp_path):
    with pytest.raises(ParameterError, match="--key-file needs --mode slips"):
        write_questionnaires(survey, respondents=1, out_dir=tmp_path / "o", mode="die",
                             key_file=tmp_path / "k.csv")


# -- strict templates ----------------------------------------------------------------


def test_an_undefined_variable_fails_and_leaves_no_files(survey, tmp_path):
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "slips.html.j2").write_text(
        "{% for slip in slips %}{{ slip }}\n{{ layout.no_such_thing }}{% endfor %}\n")
    out = tmp_path / "out"
    with pytest.raises(TemplateRenderError, match=r"slips.html.j2, line 2: .* has no "
                                                  r"attribute 'no_such_thing'"):
        write_questionnaires(survey, respondents=3, out_dir=out, templates_dir=templates,
                             key_file=tmp_path / "key.csv")
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["templates"]
    assert not (tmp_path / "key.csv").exists()


def test_a_user_template_folder_overrides_single_files(survey, tmp_path):
    (tmp_path / "sheets.md.j2").write_text(
        "{% for r in respondent_ids %}ID {{ r }}: {{ layout.title }}\n{% endfor %}")
    write_questionnaires(survey, respondents=2, out_dir=tmp_path / "out", fmt="markdown",
                         templates_dir=tmp_path, rng=seeded_source(9))
    sheets = (tmp_path / "out" / "sheets-00001.md").read_text(encoding="utf-8")
    assert re.fullmatch(r"(ID \w{4}-\w{4}-\w{4}-\w{3}: Integrity survey\n){2}", sheets)
    # slips.md.j2 came from the shipped templates
    assert "## Your private instructions" in (tmp_path / "out" / "slips-00001.md").read_text(
        encoding="utf-8")


def test_missing_template_folder_is_a_clear_error(survey, tmp_path):
    with pytest.raises(ParameterError, match=r"--templates '.*nowhere' is not a folder"):
        write_questionnaires(survey, respondents=1, out_dir=tmp_path,
                             templates_dir=tmp_path / "nowhere")


# -- golden files --------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["slips", "die"])
@pytest.mark.parametrize("fmt", ["html", "markdown"])
def test_output_matches_the_golden_files(survey, tmp_path, mode, fmt):
    result = write_questionnaires(survey, respondents=2, out_dir=tmp_path, mode=mode, fmt=fmt,
                                  rng=seeded_source(2024))
    for path in result.files:
        golden = GOLDEN / f"{mode}-{path.name}"
        produced = path.read_text(encoding="utf-8")
        if UPDATE_GOLDEN:
            GOLDEN.mkdir(exist_ok=True)
            golden.write_text(produced, encoding="utf-8")
        assert golden.exists(), f"{golden} is missing: run with SURVEYKIT_UPDATE_GOLDEN=1"
        expected = golden.read_text(encoding="utf-8")
        assert produced == expected, "\n".join(changed_lines(expected, produced)[:20])


# -- every design: groups, k categories, combined questions, per-state tables -----------------

GROUPS_TOML = (Path(__file__).parent / "surveys" / "groups.toml").read_text(encoding="utf-8")
CATEGORIES_TOML = (Path(__file__).parent / "surveys" / "categories.toml").read_text(
    encoding="utf-8")


@pytest.fixture(scope="module")
def groups_survey():
    return parse_survey(GROUPS_TOML, "groups.toml")


@pytest.fixture(scope="module")
def categories_survey():
    return parse_survey(CATEGORIES_TOML, "categories.toml")


@pytest.mark.parametrize("name", ["groups", "categories"])
@pytest.mark.parametrize("mode", ["slips", "die"])
@pytest.mark.parametrize("fmt", ["html", "markdown"])
def test_multi_group_and_k_category_output_matches_the_golden_files(name, mode, fmt, tmp_path):
    survey = parse_survey(GROUPS_TOML if name == "groups" else CATEGORIES_TOML, name)
    result = write_questionnaires(survey, respondents=4, out_dir=tmp_path, mode=mode, fmt=fmt,
                                  rng=seeded_source(2024))
    for path in result.files:
        golden = GOLDEN / f"{name}-{mode}-{path.name}"
        produced = path.read_text(encoding="utf-8")
        if UPDATE_GOLDEN:
            golden.write_text(produced, encoding="utf-8")
        assert golden.exists(), f"{golden} is missing: run with SURVEYKIT_UPDATE_GOLDEN=1"
        expected = golden.read_text(encoding="utf-8")
        assert produced == expected, "\n".join(changed_lines(expected, produced)[:20])


@pytest.mark.parametrize(("part", "mode"), [("sheets", "slips"), ("die", "die")])
@pytest.mark.parametrize("fmt", ["html", "markdown"])
def test_sheets_of_two_groups_differ_only_in_the_id_the_form_version_and_its_dice(
        groups_survey, part, mode, fmt):
    ids = ["AAAA-BBBB-CCCC-DD", "2345-6789-WXYZ-00"]
    same = [render_part(groups_survey, part, fmt, mode, respondent_ids=[rid]) for rid in ids]
    assert same[0].replace(ids[0], ids[1]) == same[1]
    short = render_part(groups_survey, part, fmt, mode, group=0, respondent_ids=ids[:1])
    long = render_part(groups_survey, part, fmt, mode, group=1, respondent_ids=ids[:1])
    diff = changed_lines(short, long)
    assert any("short" in line for line in diff) and any("long" in line for line in diff)
    # the form version line, and in die mode the rows of the two-group designs' tables
    # (SLD and unrelated question; Kuk's and the crosswise question's are the same)
    assert len(diff) == (2 if mode == "slips" else 10), diff
    assert all("Form version" in line or "truthfully" in line or "Yes" in line
               for line in diff), diff


def test_die_forms_give_each_group_its_own_exact_table(groups_survey):
    short = render_part(groups_survey, "die", "html", "die", group=0, respondent_ids=["X"])
    long = render_part(groups_survey, "die", "html", "die", group=1, respondent_ids=["X"])
    # SLD p = [0.25, 0.75]: group short answers truthfully on 1 of a d4, group long on 1-3
    assert ("<td>1</td><td>Answer truthfully.</td></tr>\n<tr><td>2–4</td><td>Answer "
            "&#34;Yes&#34;, whatever the truth is.</td>") in short
    assert ("<td>1–3</td><td>Answer truthfully.</td></tr>\n<tr><td>4</td><td>Answer "
            "&#34;Yes&#34;, whatever the truth is.</td>") in long
    # Kuk's cards drawn twice: one d4 per deck, rolled twice, the same for both groups
    for html in (short, long):
        assert "If your true answer is Yes:" in html and "If your true answer is No:" in html
        assert "Roll the d4 2 times and count the rolls that show 1–3. Mark that number." in html
        assert "Roll the d4 2 times and count the rolls that show 1. Mark that number." in html


def test_crosswise_sheets_ask_the_combined_question_with_its_own_answers(groups_survey):
    sheet = render_part(groups_survey, "sheets", "html", respondent_ids=["X"])
    tax = sheet[sheet.index("Question 2."):sheet.index("Question 3.")]
    assert "Second question:</span> Is your mother&#39;s birthday in January" in tax
    assert "Do not answer either question on its own." in tax
    assert re.findall(r'<span class="box">([^<]*)</span>', tax) == [
        "Both the same (both yes or both no)", "Different (one yes, one no)"]
    # designs without a "don't know" branch offer no "don't know" box; Kuk offers counts
    fare = sheet[sheet.index("Question 4."):]
    assert re.findall(r'<span class="box">([^<]*)</span>', fare) == ["0", "1", "2"]


def test_k_category_sheets_offer_the_categories_and_dont_know_where_designed(
        categories_survey):
    sheet = render_part(categories_survey, "sheets", "html", respondent_ids=["X"])
    first = sheet[sheet.index("Question 1."):sheet.index("Question 2.")]
    assert re.findall(r'<span class="box">([^<]*)</span>', first) == [
        "never", "once", "more often", "Don&#39;t know"]
    second = sheet[sheet.index("Question 2."):]
    assert re.findall(r'<span class="box">([^<]*)</span>', second) == [
        "0", "1", "2", "3 or more"]


def test_slips_of_a_multi_group_survey_follow_the_key_file_and_carry_no_id(groups_survey,
                                                                            tmp_path):
    key = tmp_path / "key.csv"
    result = write_questionnaires(groups_survey, respondents=40, out_dir=tmp_path / "out",
                                  key_file=key, rng=seeded_source(6), per_file=40)
    with key.open(newline="", encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream))
    # groups are balanced and each id keeps one group
    by_id = {}
    for row in rows:
        by_id.setdefault(row["respondent_id"], set()).add(row["group"])
    assert all(len(g) == 1 for g in by_id.values())
    assert sorted(g.pop() for g in by_id.values()).count("1") == 20
    assert result.group_counts == {1: 20, 2: 20}
    assert list(result.respondent_groups) == [int(rows[4 * k]["group"]) for k in range(40)]
    slips = (tmp_path / "out" / "slips-00001.html").read_text(encoding="utf-8")
    sheets = (tmp_path / "out" / "sheets-00001.html").read_text(encoding="utf-8")
    names = {"1": "short", "2": "long"}
    # slip k and sheet k show the form version of respondent k; pages are ordered by group
    slip_groups = re.findall(r'<span class="group-name">(\w+)</span>', slips)
    sheet_groups = re.findall(r'<span class="group-name">(\w+)</span>', sheets)
    assert slip_groups == sheet_groups == [names[rows[4 * k]["group"]] for k in range(40)]
    assert slip_groups == sorted(slip_groups, key=["short", "long"].index)
    kinds = {"say": "say", "table": "answer_table"}
    assert slip_rules(slips) == [f"rule-{kinds.get(r['code'].split(':')[0], r['code'])}"
                                 for r in rows]
    assert not any(rid in slips for rid in by_id)


def slip_rules(html: str) -> list[str]:
    return re.findall(r'class="rule (rule-\w+)"', html)


def test_kuk_slips_say_what_to_answer_in_either_true_state(groups_survey):
    layout = build_layout(groups_survey, mode="slips",
                          wording_defaults=load_wording_defaults(make_environment()))
    fare = layout.slip_lines[3][0]
    assert [line.code for line in fare][:2] == ["table:yes=0;no=0", "table:yes=0;no=1"]
    assert fare[1].instruction == ("If your true answer is Yes, answer 0. "
                                   "If your true answer is No, answer 1.")
    assert fare[1].rule == "answer_table"


HOSTILE_GROUPS_TOML = f"""
name = "hostile_groups"
title = "Groups"
[design]
model = "sld"
p = [0.25, 0.75]
groups = ["<b>A</b> *x*", "| [B](http://evil.example)"]
[[questions]]
id = "q1"
text = "Ever?"
[[questions]]
id = "q2"
text = "Again?"
[questions.design]
model = "crosswise"
p = 0.25
innocuous = '''{HOSTILE_TEXT}'''
[[questions]]
id = "q3"
text = "How often?"
[questions.design]
model = "fr"
p = [0.25, 0.25, 0.25]
categories = ["<i>never</i>", "`once`", "| often"]
[[questions]]
id = "q4"
text = "Other?"
[questions.design]
model = "uqtknown"
p = [0.75, 0.5]
innocuous = '''{HOSTILE_TEXT}'''
"""


@pytest.fixture(scope="module")
def hostile_groups():
    return parse_survey(HOSTILE_GROUPS_TOML, "hostile.toml")


def hostile_pages(survey, fmt: str) -> list[str]:
    layout = build_layout(survey, mode="slips",
                          wording_defaults=load_wording_defaults(make_environment()))
    # every instruction of every question, on slips of both groups
    slips = [layout.slip(g, [min(i, len(lines[g]) - 1) for lines in layout.slip_lines])
             for g in (0, 1) for i in range(4)]
    pages = [render_part(survey, "slips", fmt, slips=slips)]
    for part, mode in (("sheets", "slips"), ("die", "die")):
        for group in (0, 1):
            pages.append(render_part(survey, part, fmt, mode, group=group,
                                     respondent_ids=["AAAA-BBBB-CCCC-DD"]))
    return pages


def test_group_names_labels_and_innocuous_text_are_escaped_in_html(hostile_groups):
    for html in hostile_pages(hostile_groups, "html"):
        for raw in ("<script>", "<b>A</b>", "<i>never</i>", "<b>tag</b>"):
            assert raw not in html, raw
        assert "&lt;b&gt;A&lt;/b&gt; *x*" in html or "| [B](http://evil.example)" in html
    sheet = hostile_pages(hostile_groups, "html")[1]
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in sheet  # the innocuous text
    assert "&lt;i&gt;never&lt;/i&gt;" in sheet  # a category label


def test_group_names_labels_and_innocuous_text_stay_literal_in_markdown(hostile_groups):
    renderer = MarkdownIt("commonmark").enable("table")
    for markdown in hostile_pages(hostile_groups, "markdown"):
        html = renderer.render(markdown)
        for forbidden in ("<script", "<a href", "<em>", "<b>", "<i>"):
            assert forbidden not in html, (forbidden, markdown)
        # the only code span is the respondent id (none on slips)
        assert html.count("<code>") == html.count("<code>AAAA-BBBB-CCCC-DD</code>")
    slips = renderer.render(hostile_pages(hostile_groups, "markdown")[0])
    assert "&lt;b&gt;A&lt;/b&gt; *x*" in slips and "| [B](http://evil.example)" in slips
    assert "Answer &quot;&lt;i&gt;never&lt;/i&gt;&quot;, whatever the truth is." in slips
    assert ("Answer this other question truthfully instead: &lt;script&gt;alert(&quot;x&quot;)"
            "&lt;/script&gt;") in slips


def test_a_placeholder_the_key_does_not_know_is_refused_when_the_layout_is_built():
    with pytest.raises(SurveyDefinitionError, match=r"questions\[0\].wording.rule_say: 'Say "
                                                    r"\{answr\}' uses the placeholder"):
        parse_survey(SURVEY_TOML.replace('text = "Have you ever copied',
                                         'wording = { rule_say = "Say {answr}" }\n'
                                         'text = "Have you ever copied'), "typo.toml")
    survey = parse_survey(SURVEY_TOML, "typo.toml")
    survey = replace(survey, questions=(replace(survey.questions[0],
                                                wording={"rule_say": "Say {answr}"}),
                                        *survey.questions[1:]))
    with pytest.raises(ParameterError, match=r"^question 'exam' wording: rule_say \('Say "
                                             r"\{answr\}'\) uses the placeholder \{answr\}; "
                                             r"it allows \{answer\}"):
        render_part(survey, "sheets", "html", respondent_ids=["X"])
