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
from migrated import migrated_sqlite
from openpyxl import load_workbook

from surveykit.cli import main
from surveykit.collection.randomizer import instruction_thresholds, question_protocols
from surveykit.collection.render import load_wording_defaults, make_environment
from surveykit.collection.respondent_ids import new_respondent_ids
from surveykit.collection.xlsform import DEVICE_RISKS, build_xlsform, id_constraint
from surveykit.definition.survey import load_survey_file, parse_survey
from surveykit.errors import ParameterError
from surveykit.resources import locate_resource
from surveykit.store import add_survey, open_engine

SAMPLE = locate_resource("sample_data") / "academic_integrity.toml"
SURVEYS = Path(__file__).resolve().parent / "surveys"
WORDING = load_wording_defaults(make_environment())


def run(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def db(tmp_path) -> str:
    url = migrated_sqlite(tmp_path / "survey.db")
    engine = open_engine(url)
    add_survey(engine, load_survey_file(SAMPLE))
    engine.dispose()
    return url


def label(row) -> str:
    return row["label"]["English (en)"]


def choices(form, row) -> list[tuple[str, str]]:
    name = row["type"].split()[1]
    return [(c["name"], c["label"]["English (en)"]) for c in form.choices
            if c["list_name"] == name]


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
    # the slips' integer thresholds: round(0.6 * 2^53) and round(0.8 * 2^53)
    # the draw times 2^53, read also from exponent notation (JavaRosa writes draws below
    # 10^-3 as 1.96E-4, which XPath's number() cannot read: see _scaled)
    draw = "${exam_cheating_draw}"
    text = f"translate({draw}, 'e', 'E')"
    scaled = (f"if(contains({text}, 'E'), round(number(substring-before({text}, 'E')) * "
              f"pow(10, number(substring-after({text}, 'E'))) * 9007199254740992), "
              f"{draw} * 9007199254740992)")
    assert rows["exam_cheating_code"]["calculation"] == (
        f"if({draw} = '', '', if({scaled} < 5404319552844595, '1', "
        f"if({scaled} < 7205759403792794, '2', '3')))")
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
    # ids issued before the check symbol (4-4-4-2) still pass
    assert re.fullmatch(pattern, "7KQ2-M9XD-4FRT-8B")
    for bad in ("7KQ2-M9XD-4FRT-8U", "7KQ2-M9XD-4FRT", "7KQ2-M9XD-4FRT-8BT9",
                "7KQ2/M9XD/4FRT/8BT"):
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


def one_question(design: str, **extra: str) -> str:
    lines = "".join(f"{key} = {value}\n" for key, value in extra.items())
    return (f'name = "s"\ntitle = "S"\n[design]\n{design}\n{lines}'
            '[[questions]]\nid = "q"\ntext = "Ever?"')


def test_self_randomized_form_refuses_a_design_no_die_realizes_with_the_nearest_one():
    survey = parse_survey(one_question('model = "sld"\np = [0.1667, 0.8333]'))
    with pytest.raises(ParameterError) as error:
        build_xlsform(survey)
    assert str(error.value) == (
        "question 'q': no die in d2, d4, d6, d8, d10, d12, d20, d100 or pair of dice realizes "
        "sld with p = [0.1667 (1667/10000), 0.8333 (8333/10000)], dont_know = 0 exactly; "
        "nearest design with no more privacy loss: p = [0.16666666666666666 (1/6), "
        "0.8333333333333334 (5/6)] with one d6 (Shafer loss inf, Walley inf; requested inf "
        "and inf); use it in the survey file or export with --randomize device "
        "(--randomize device has two limits: 'surveykit docs field-collection')")
    # the device form draws any design
    assert build_xlsform(survey, randomize="device").randomize == "device"


def test_export_of_a_design_no_die_realizes_exits_2_and_the_device_form_is_written(db,
                                                                                   tmp_path):
    engine = open_engine(db)
    add_survey(engine, parse_survey(one_question('model = "sld"\np = [0.1667, 0.8333]')))
    engine.dispose()
    out = tmp_path / "s.xlsx"
    refused = run("export", "xlsform", "--survey", "s", "--out", str(out), "--db", db)
    assert refused.exit_code == 2
    assert refused.output.startswith("Error: question 'q': no die in d2, d4, d6, d8, d10, d12, "
                                     "d20, d100 or pair of dice realizes sld with ")
    assert not out.exists()
    device = run("export", "xlsform", "--survey", "s", "--out", str(out), "--randomize",
                 "device", "--acknowledge-risk", "--db", db)
    assert device.exit_code == 0, device.output
    assert [row["name"] for row in _sheet(out, "survey")][-5:] == [
        "q_draw", "q_code", "q_rule_1", "q_rule_2", "q"]


def test_self_randomized_form_of_a_matrix_no_die_realizes_points_to_the_device_form():
    survey = parse_survey(one_question('model = "custom"\nmatrix = [[0.333, 0.5], [0.667, 0.5]]'))
    with pytest.raises(ParameterError, match=r"realizes custom with its matrix, dont_know = 0 "
                                             r"exactly; export with --randomize device, which "
                                             r"realizes any design \(--randomize device has two "
                                             r"limits: 'surveykit docs field-collection'\)$"):
        build_xlsform(survey)


def test_self_randomized_multi_group_form_shows_each_group_its_own_die_note():
    form = build_xlsform(load_survey_file(SURVEYS / "groups.toml"))
    rows = {row["name"]: row for row in form.survey}
    assert [row["name"] for row in form.survey] == [
        "intro", "respondent_id", "group", "drugs_die_1", "drugs_die_2", "drugs", "tax",
        "shoplift_die_1", "shoplift_die_2", "shoplift", "fare_die", "fare"]
    # SLD p = [0.25, 0.75]: a d4, truthful on 1 in group short, on 1-3 in group long
    assert rows["drugs_die_1"]["relevant"] == "${group} = '1'"
    assert rows["drugs_die_2"]["relevant"] == "${group} = '2'"
    assert label(rows["drugs_die_1"]).splitlines() == [
        "Question 1 (d4): Have you used an illegal drug in the last twelve months?", "",
        "Roll 1: Answer truthfully.", 'Roll 2–4: Answer "Yes", whatever the truth is.']
    assert label(rows["drugs_die_2"]).splitlines()[2:] == [
        "Roll 1–3: Answer truthfully.", 'Roll 4: Answer "Yes", whatever the truth is.']
    assert label(rows["shoplift_die_2"]).splitlines()[2:] == [
        "Roll 1–4: Answer the question truthfully.",
        "Roll 5–10: Answer this other question truthfully instead: Is the last digit of your "
        "phone number odd?"]
    # Kuk's cards drawn twice: one d4 per deck, rolled twice, the same for every group
    assert "relevant" not in rows["fare_die"]
    assert label(rows["fare_die"]).splitlines() == [
        "Question 4 (d4): Have you ridden public transport without a ticket this year?", "",
        "If your true answer is Yes:",
        "Roll the d4 2 times and count the rolls that show 1–3. Mark that number.", "",
        "If your true answer is No:",
        "Roll the d4 2 times and count the rolls that show 1. Mark that number."]
    # crosswise: nothing to roll; the answer asks the combined question with its own answers
    assert label(rows["tax"]).splitlines() == [
        "Question 2. Have you ever under-reported your income to the tax office?", "",
        "Second question: Is your mother's birthday in January, February or March?", "",
        WORDING["crosswise_instructions"]]
    assert choices(form, rows["tax"]) == [("yes", WORDING["crosswise_yes"]),
                                          ("no", WORDING["crosswise_no"])]
    assert choices(form, rows["fare"]) == [("0", "0"), ("1", "1"), ("2", "2")]
    assert choices(form, rows["drugs"]) == [("yes", "Yes"), ("no", "No")]  # no "don't know"
    assert not [row for row in form.survey if row["type"] == "calculate"]


def test_self_randomized_kuk_k_category_and_crosswise_dont_know_tables():
    survey = parse_survey('''name = "s"
title = "S"
[[questions]]
id = "cards"
text = "Cards?"
[questions.design]
model = "kuk"
p = [0.7, 0.3]
[[questions]]
id = "cross"
text = "Crosswise?"
[questions.design]
model = "crosswise"
p = 0.25
dont_know = 0.1
innocuous = "Born in spring?"
[[questions]]
id = "often"
text = "How often?"
[questions.design]
model = "fr"
p = [0.1, 0.1, 0.2]
categories = ["never", "once", "more often"]
dont_know = 0.2''')
    form = build_xlsform(survey)
    rows = {row["name"]: row for row in form.survey}
    # Kuk's cards drawn once: a d10 per deck (7 red of 10, 3 red of 10), faces -> answer
    assert label(rows["cards_die"]).splitlines() == [
        "Question 1 (d10): Cards?", "", "If your true answer is Yes:",
        'Roll 1–7: Answer "Yes".', 'Roll 8–10: Answer "No".', "",
        "If your true answer is No:", 'Roll 1–3: Answer "Yes".', 'Roll 4–10: Answer "No".']
    # crosswise with a "don't know" branch: a die for the branch only
    assert label(rows["cross_die"]).splitlines() == [
        "Question 2 (d10): Crosswise?", "", "Roll 1–9: Answer the question truthfully.",
        "Roll 10: Answer \"don't know\", whatever the truth is."]
    assert choices(form, rows["cross"])[-1] == ("dont_know", "Don't know")
    # forced response 0.1, 0.1, 0.2 of 0.8, truthful 0.6 of 0.8, "don't know" 0.2: a d100
    assert label(rows["often_die"]).splitlines()[2:] == [
        "Roll 1–48: Answer truthfully.", 'Roll 49–56: Answer "never", whatever the truth is.',
        'Roll 57–64: Answer "once", whatever the truth is.',
        'Roll 65–80: Answer "more often", whatever the truth is.',
        "Roll 81–100: Answer \"don't know\", whatever the truth is."]
    assert choices(form, rows["often"]) == [("never", "never"), ("once", "once"),
                                            ("more often", "more often"),
                                            ("dont_know", "Don't know")]


def test_device_form_draws_every_protocol_with_the_slips_thresholds():
    survey = load_survey_file(SURVEYS / "groups.toml")
    form = build_xlsform(survey, randomize="device")
    rows = {row["name"]: row for row in form.survey}
    for question in survey.questions:
        for instructions in question_protocols(question.design, 2):
            used = [i for i in instructions if i.probability > 0]
            if len(used) == 1:
                continue
            calculation = rows[f"{question.id}_code"]["calculation"]
            found = [int(t) for t in re.findall(r"9007199254740992\) < (\d+)", calculation)]
            assert set(instruction_thresholds(used)[:-1]) <= set(found), question.id
    # Kuk's cards drawn twice: the slips' nine per-state rules, one note each
    notes = [label(row) for name, row in rows.items() if name.startswith("fare_rule_")]
    assert len(notes) == 9
    assert notes[5] == ("Question 4. Your rule: If your true answer is Yes, answer 1. If your "
                        "true answer is No, answer 2.")
    # a crosswise question without "don't know" draws nothing: its one rule, no draw
    assert "tax_draw" not in rows and "tax_code" not in rows
    assert label(rows["tax_rule_1"]) == "Question 2. Your rule: Answer the question truthfully."
    assert rows["tax_rule_1"]["relevant"] == "${tax} = ''"
    # groups: SLD's thresholds differ by group, so the code asks the group first
    assert rows["drugs_code"]["calculation"].startswith(
        "if(${drugs_draw} = '', '', if(${group} = '1', ")


def test_answer_lists_follow_each_questions_wording():
    survey = parse_survey('''name = "s"
title = "S"
[mechanism]
p = 0.6
q = 0.2
[[questions]]
id = "a"
text = "A?"
[[questions]]
id = "b"
text = "B?"
[questions.wording]
answer_yes = "Oui"''')
    form = build_xlsform(survey)
    rows = {row["name"]: row for row in form.survey}
    assert rows["a"]["type"] == "select_one answers"
    assert choices(form, rows["b"])[0] == ("yes", "Oui")


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


@pytest.mark.parametrize(("out", "status", "message"), [
    ("form.xls", 2, "Error: --out '{tmp}/form.xls' must end in .xlsx: field tools read "
                    "XLSForms as Excel workbooks"),
    # a missing folder is the file system's problem, not a usage mistake: status 1
    ("missing/form.xlsx", 1, "Error: --out {tmp}/missing/form.xlsx: the folder {tmp}/missing "
                             "does not exist; create it (mkdir -p {tmp}/missing) or choose "
                             "another path"),
])
def test_bad_out_path_is_one_line_with_the_fix(db, tmp_path, out, status, message):
    result = run("export", "xlsform", "--survey", "academic_integrity", "--out",
                 str(tmp_path / out), "--db", db)
    assert result.exit_code == status
    assert result.output == message.format(tmp=tmp_path) + "\n"


def test_unknown_survey_exits_1(db, tmp_path):
    result = run("export", "xlsform", "--survey", "nope", "--out", str(tmp_path / "f.xlsx"),
                 "--db", db)
    assert result.exit_code == 1
    assert result.output.startswith("Error: ")
    assert "nope" in result.output
