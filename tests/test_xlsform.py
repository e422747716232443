"""`surveykit export xlsform`: the workbook it writes and the command's messages.

What the field tools make of the workbook is checked in test_xlsform_clients.py;
here: the sheets and cells, the version, the refusals, real CLI runs on SQLite.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from openpyxl import load_workbook

from surveykit.cli import main
from surveykit.collection.respondent_ids import new_respondent_ids
from surveykit.collection.xlsform import DEVICE_RISKS, build_xlsform, id_constraint
from surveykit.definition.survey import load_survey_file, parse_survey
from surveykit.resources import locate_resource
from surveykit.store import add_survey, init_database, open_engine

SAMPLE = locate_resource("sample_data") / "academic_integrity.toml"


def run(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def db(tmp_path) -> str:
    url = f"sqlite:///{tmp_path / 'survey.db'}"
    engine = open_engine(url)
    init_database(engine)
    add_survey(engine, load_survey_file(SAMPLE))
    engine.dispose()
    return url


def _sheet(path: Path, name: str) -> list[dict[str, str]]:
    rows = list(load_workbook(path)[name].iter_rows(values_only=True))
    return [dict(zip(rows[0], row, strict=True)) for row in rows[1:]]


def test_self_randomized_workbook_has_die_notes_required_answers_and_no_draw(db, tmp_path):
    out = tmp_path / "form.xlsx"
    result = run("export", "xlsform", "--survey", "academic_integrity", "--out", str(out),
                 "--db", db)
    assert result.exit_code == 0, result.output
    survey = _sheet(out, "survey")
    assert [row["name"] for row in survey] == [
        "intro", "respondent_id", "exam_cheating_die", "exam_cheating", "plagiarism_die",
        "plagiarism", "contract_cheating_die", "contract_cheating", "fabricated_data_die",
        "fabricated_data"]
    assert list(survey[0]) == ["type", "name", "label::English (en)", "hint::English (en)",
                               "required", "constraint", "constraint_message::English (en)"]
    exam = {row["name"]: row for row in survey}
    assert exam["exam_cheating"]["type"] == "select_one answers"
    assert exam["exam_cheating"]["required"] == "yes"
    # p = 0.6, q = 0.2: one d10, faces 1-6 truthful, 7-8 opposite, 9-10 don't know
    assert exam["exam_cheating_die"]["label::English (en)"].splitlines() == [
        "Question 1 (d10): Have you ever copied answers from another student during an exam?",
        "",
        "Roll 1–6: Answer truthfully.",
        "Roll 7–8: Give the opposite of the true answer.",
        "Roll 9–10: Answer \"don't know\", whatever the truth is."]
    assert not [row for row in survey if row["type"] == "calculate"]
    choices = _sheet(out, "choices")
    assert [(c["list_name"], c["name"], c["label::English (en)"]) for c in choices] == [
        ("answers", "yes", "Yes"), ("answers", "no", "No"), ("answers", "dont_know", "Don't know")]
    [settings] = _sheet(out, "settings")
    assert settings["form_id"] == "academic_integrity"
    assert settings["instance_name"] == "concat('academic_integrity ', ${respondent_id})"
    assert settings["default_language"] == "English (en)"
    assert re.fullmatch(r"[0-9a-f]{12}", settings["version"])
    assert result.output.splitlines()[0] == (
        f"wrote {out}: XLSForm 'academic_integrity' version {settings['version']}, "
        "4 question(s), respondents roll dice (self-randomized)")


def test_device_form_is_refused_without_acknowledging_both_limits(db, tmp_path):
    out = tmp_path / "form.xlsx"
    result = run("export", "xlsform", "--survey", "academic_integrity", "--out", str(out),
                 "--randomize", "device", "--db", db)
    assert result.exit_code == 2
    assert result.output == (
        "Error: --randomize device is not private on every client: (1) " + DEVICE_RISKS[0]
        + " (2) " + DEVICE_RISKS[1] + " Pass --acknowledge-risk to write it anyway, or use "
        "--randomize self (respondents roll dice), which is private on every client.\n")
    assert not out.exists()


def test_device_form_states_its_limits_and_guards_the_draw(db, tmp_path):
    out = tmp_path / "form.xlsx"
    result = run("export", "xlsform", "--survey", "academic_integrity", "--out", str(out),
                 "--randomize", "device", "--acknowledge-risk", "--db", db)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[1:3] == [f"Limit 1: {DEVICE_RISKS[0]}", f"Limit 2: {DEVICE_RISKS[1]}"]
    rows = {row["name"]: row for row in _sheet(out, "survey")}
    draw = rows["exam_cheating_draw"]
    assert (draw["type"], draw["default"], draw["relevant"]) == (
        "calculate", "random()", "${exam_cheating} = ''")
    # never the naive form: no draw outside a relevance guard
    for row in rows.values():
        if "random()" in str(row.get("default")) + str(row.get("calculation")):
            assert row["relevant"] == f"${{{row['name'][:-len('_draw')]}}} = ''"
    assert rows["exam_cheating_code"]["calculation"] == (
        "if(${exam_cheating_draw} = '', '', if(${exam_cheating_draw} < 0.6, '1', "
        "if(${exam_cheating_draw} < 0.8, '2', '3')))")
    assert rows["exam_cheating_rule_2"]["relevant"] == (
        "${exam_cheating} = '' and ${exam_cheating_code} = '2'")
    assert rows["exam_cheating"]["required"] == "yes"


def test_json_output_names_the_answer_fields_and_risks(db, tmp_path):
    result = run("export", "xlsform", "--survey", "academic_integrity", "--out",
                 str(tmp_path / "f.xlsx"), "--randomize", "device", "--acknowledge-risk",
                 "--format", "json", "--db", db)
    data = json.loads(result.output)
    assert data["answer_fields"] == ["exam_cheating", "plagiarism", "contract_cheating",
                                     "fabricated_data"]
    assert data["risks"] == list(DEVICE_RISKS)
    assert data["languages"] == ["English (en)"]


def test_version_changes_with_the_content_and_only_then():
    survey = load_survey_file(SAMPLE)
    first = build_xlsform(survey).settings["version"]
    assert build_xlsform(survey).settings["version"] == first
    reworded = parse_survey(survey.source.replace("Have you ever paid", "Did you ever pay"))
    assert build_xlsform(reworded).settings["version"] != first
    assert build_xlsform(survey, randomize="device").settings["version"] != first


def test_every_issued_id_passes_the_constraint_and_typed_variants_too():
    pattern = re.search(r"'(.*)'", id_constraint()).group(1)
    for issued in new_respondent_ids(200):
        for typed in (issued, issued.lower(), issued.replace("-", ""),
                      issued.replace("-", " "), issued.replace("0", "O").replace("1", "l")):
            assert re.fullmatch(pattern, typed), typed
    for bad in ("7KQ2-M9XD-4FRT-8U", "7KQ2-M9XD-4FRT", "7KQ2-M9XD-4FRT-8B9", "7KQ2/M9XD/4FRT/8B"):
        assert not re.fullmatch(pattern, bad), bad


def test_cells_are_text_so_a_leading_equals_sign_is_no_formula(tmp_path):
    survey = parse_survey('''name = "s"
title = "=HYPERLINK(\\"x\\")"
[mechanism]
p = 0.6
q = 0.2
[[questions]]
id = "q"
text = "=1+1"''')
    from surveykit.collection.xlsform import write_xlsform

    path = write_xlsform(build_xlsform(survey), tmp_path / "f.xlsx")
    sheet = load_workbook(path)["survey"]
    cells = [cell for row in sheet.iter_rows() for cell in row
             if str(cell.value).startswith("Question 1. =1+1")]
    assert cells and all(cell.data_type == "s" for cell in cells)
    assert load_workbook(path)["settings"]["A2"].value == '=HYPERLINK("x")'


def test_self_randomized_form_refuses_a_design_without_die_tables(tmp_path):
    survey = parse_survey('''name = "s"
title = "S"
[design]
model = "sld"
p = [0.2, 0.8]
[[questions]]
id = "q"
text = "Ever?"''')
    with pytest.raises(ValueError) as error:
        build_xlsform(survey)
    assert str(error.value) == (
        "question 'q': --randomize self needs a die table, and surveykit has die tables for "
        "the generalized Warner design (p, q) only, not yet for sld (p = [0.2, 0.8], "
        "dont_know = 0); give "
        "the question a [questions.mechanism] with p and q, or see 'surveykit docs "
        "field-collection' for --randomize device and its limits")


def test_question_id_that_collides_with_a_helper_field_is_named(tmp_path):
    survey = parse_survey('''name = "s"
title = "S"
[mechanism]
p = 0.6
q = 0.2
[[questions]]
id = "q"
text = "Ever?"
[[questions]]
id = "q_die"
text = "Ever again?"''')
    with pytest.raises(ValueError) as error:
        build_xlsform(survey)
    assert str(error.value) == (
        "question id 'q_die': the form needs the field name 'q_die' for question 'q'; rename the "
        "question in the survey file")


@pytest.mark.parametrize(("out", "message"), [
    ("form.xls", "Error: --out '{tmp}/form.xls' must end in .xlsx: field tools read "
                 "XLSForms as Excel workbooks"),
    ("missing/form.xlsx", "Error: --out '{tmp}/missing/form.xlsx': the folder "
                          "'{tmp}/missing' does not exist; create it first"),
])
def test_bad_out_path_is_one_line_with_the_fix(db, tmp_path, out, message):
    result = run("export", "xlsform", "--survey", "academic_integrity", "--out",
                 str(tmp_path / out), "--db", db)
    assert result.exit_code == 2
    assert result.output == message.format(tmp=tmp_path) + "\n"


def test_unknown_survey_exits_1(db, tmp_path):
    result = run("export", "xlsform", "--survey", "nope", "--out", str(tmp_path / "f.xlsx"),
                 "--db", db)
    assert result.exit_code == 1
    assert result.output.startswith("Error: ")
    assert "nope" in result.output
