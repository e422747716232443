"""Exported XLSForms in the field tools themselves: pyxform + ODK Validate, JavaRosa
(ODK Collect's engine) and @getodk/xforms-engine (ODK Web Forms' engine).

Each form is converted and validated once per session; each client fills it as a
respondent does (answer, go back, clear and answer again, save a draft, reopen it,
finalize): every fill of this file in one run of each client (``filled``), each test
reading its own. The finalized submission must hold the answers, the id and metadata, and
nothing else: no draw, no code, no instruction text. tests/field_clients.py runs the
tools; docs/field-collection.md quotes what these tests show.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import pytest
from field_clients import (
    Fill,
    FillJob,
    HarnessError,
    JavaRosa,
    WebForms,
    convert_many,
    fills_of,
    leaves,
)

from surveykit.collection.instructions import instruction_text
from surveykit.collection.randomizer import GRID_BITS, instruction_thresholds, question_protocols
from surveykit.collection.render import load_wording_defaults, make_environment
from surveykit.collection.xlsform import XLSForm, build_xlsform, write_xlsform
from surveykit.definition.survey import Survey, load_survey_file, parse_survey
from surveykit.resources import locate_resource

WORDING = load_wording_defaults(make_environment())
SURVEYS = Path(__file__).resolve().parent / "surveys"
GRID = 1 << GRID_BITS

FRENCH_TWO_DICE = '''
name = "integrite"
title = "Intégrité académique"
language = "fr"
[mechanism]
p = 0.3055555555555556   # 11/36: only a pair of d6 realizes it
q = 0.1388888888888889   # 5/36
[wording]
answer_yes = "Oui"
answer_no = "Non"
answer_dont_know = "Je ne sais pas"
question_label = "Question"
[[questions]]
id = "triche"
text = "=Avez-vous déjà copié à un examen ? « A & B »"
[questions.wording]
reminder = "Suivez la règle de vos dés."
'''

@dataclass(frozen=True)
class Case:
    """A survey, how it randomizes, and how the respondent fills it."""

    survey: Survey
    randomize: str
    answers: dict[str, str]   # NAME=FIRST[/SECOND]: SECOND after clearing the first question
    wording: dict[str, str]

    def first_answer(self, name: str) -> str:
        return self.answers[name].split("/")[0]

    def final_answer(self, name: str) -> str:
        return self.answers[name].split("/")[-1]


def _sample() -> Survey:
    return load_survey_file(locate_resource("sample_data") / "academic_integrity.toml")


def _surveys(name: str) -> Survey:
    """tests/surveys/NAME.toml: groups (SLD, crosswise, unrelated question in two groups,
    Kuk's cards drawn twice) or categories (forced response over three named categories
    with "don't know", k-RR over four)."""
    return load_survey_file(SURVEYS / f"{name}.toml")


CASES = {
    "sample-self": Case(_sample(), "self", {
        "respondent_id": "7KQ2-M9XD-4FRT-8B", "exam_cheating": "yes/no",
        "plagiarism": "no", "contract_cheating": "dont_know", "fabricated_data": "yes"},
        WORDING),
    "sample-device": Case(_sample(), "device", {
        "respondent_id": "7kq2 m9xd 4frt 8b", "exam_cheating": "yes/dont_know",
        "plagiarism": "no", "contract_cheating": "dont_know", "fabricated_data": "yes"},
        WORDING),
    "two-dice-french": Case(parse_survey(FRENCH_TWO_DICE, "integrite.toml"), "self", {
        "respondent_id": "7KQ2M9XD4FRT8B", "triche": "no/yes"}, WORDING),
    "groups-self": Case(_surveys("groups"), "self", {
        "respondent_id": "7KQ2-M9XD-4FRT-8B", "group": "2", "drugs": "yes/no", "tax": "yes",
        "shoplift": "no", "fare": "2"}, WORDING),
    "groups-device": Case(_surveys("groups"), "device", {
        "respondent_id": "7KQ2-M9XD-4FRT-8B", "group": "1", "drugs": "yes/no", "tax": "no",
        "shoplift": "yes", "fare": "1"}, WORDING),
    "categories-self": Case(_surveys("categories"), "self", {
        "respondent_id": "7KQ2-M9XD-4FRT-8B", "drink_drive": "more often/dont_know",
        "partners": "3 or more"}, WORDING),
    "categories-device": Case(_surveys("categories"), "device", {
        "respondent_id": "7KQ2-M9XD-4FRT-8B", "drink_drive": "never/more often",
        "partners": "0"}, WORDING),
}
CLIENTS = ("javarosa", "webforms")


def form_of(case: Case) -> XLSForm:
    return build_xlsform(case.survey, randomize=case.randomize, wording_defaults=case.wording)


# Draws the engines write in exponent notation: JavaRosa below 10^-3 (Java's
# Double.toString), Web Forms below 10^-6 (JavaScript). Each must get the rule of its value:
# before the fix XPath read such text as NaN and every one of them got the last rule.
SMALL_DRAWS = ("1.9658100254305033E-4", "1.2e-7", "9.313225746154785E-10", "0.5")


def _fixed(draw: str) -> XLSForm:
    """The sample-device form with every draw fixed to ``draw`` (text an engine writes)."""
    form = form_of(CASES["sample-device"])
    rows = tuple({**row, "default": "", "calculation": f"'{draw}'"}
                 if str(row["name"]).endswith("_draw") else row for row in form.survey)
    return dataclasses.replace(form, survey=rows)


@pytest.fixture(scope="session")
def xforms(tmp_path_factory) -> dict[str, Path]:
    """Every case's form and the sample-device form with each of SMALL_DRAWS fixed
    (key ``fixed DRAW``), exported, converted by pyxform (no warning) and passed by ODK
    Validate, all in one run (a JVM per form costs seconds)."""
    folder = tmp_path_factory.mktemp("xforms")
    xlsforms = {name: write_xlsform(form_of(case), folder / f"{name}.xlsx")
                for name, case in CASES.items()}
    for number, draw in enumerate(SMALL_DRAWS):
        xlsforms[f"fixed {draw}"] = write_xlsform(_fixed(draw), folder / f"fixed-{number}.xlsx")
    warnings = convert_many({x: x.with_suffix(".xml") for x in xlsforms.values()})
    for name, xlsx in xlsforms.items():
        assert not warnings[xlsx], f"{name}: pyxform warned {warnings[xlsx]}"
    return {name: xlsx.with_suffix(".xml") for name, xlsx in xlsforms.items()}


#: Every fill of this file: key -> (form, answers, runs); the tests below say what each
#: shows.
FILLS: dict[str, tuple[str, dict[str, str], int]] = {
    **{f"submits {name}": (name, case.answers, 2) for name, case in CASES.items()},
    "two dice": ("two-dice-french", CASES["two-dice-french"].answers, 1),
    "device rules": ("groups-device", CASES["groups-device"].answers, 1),
    "crosswise": ("groups-self", CASES["groups-self"].answers, 1),
    "k categories": ("categories-self", CASES["categories-self"].answers, 1),
    **{f"typed {typed}": ("sample-self", {**CASES["sample-self"].answers,
                                          "respondent_id": typed}, 1)
       for typed in ("7KQ2-M9XD-4FRT-8U", "7KQ2_M9XD_4FRT_8B")},
    **{f"draw {draw}": (f"fixed {draw}", CASES["sample-device"].answers, 1)
       for draw in SMALL_DRAWS},
}


@pytest.fixture(scope="session")
def filled(xforms, tmp_path_factory):
    """client name -> FILLS key -> its fills or the HarnessError that stopped them: every
    fill of a client in one run of its harness (a JVM or Node start costs seconds), made
    when a test first asks for that client."""
    runs: dict[str, dict[str, list[Fill] | HarnessError]] = {}

    def of(client_name: str) -> dict[str, list[Fill] | HarnessError]:
        if client_name not in runs:
            client = JavaRosa.shared() if client_name == "javarosa" else WebForms()
            folder = tmp_path_factory.mktemp(f"fills-{client_name}")
            jobs = [FillJob(xform=xforms[form], out=folder / str(number), answers=answers,
                            runs=count)
                    for number, (form, answers, count) in enumerate(FILLS.values())]
            runs[client_name] = dict(zip(FILLS, client.fill_many(jobs), strict=True))
        return runs[client_name]
    return of


def _draws(document: str) -> dict[str, str]:
    return {name[:-len("_draw")]: value for name, value in leaves(document).items()
            if name.endswith("_draw")}


def _group(case: Case) -> int:
    return int(case.answers.get("group", "1")) - 1


def _used(case: Case, question_id: str):
    """The instructions of the respondent's group with a positive probability."""
    question = case.survey.question(question_id)
    instructions = question_protocols(question.design, len(case.survey.groups))[_group(case)]
    return [i for i in instructions if i.probability > 0]


def _expected_rule(case: Case, question_id: str, draw: str) -> str:
    """The rule text the slips' thresholds give for ``draw``: rule k when draw 2^53 < t_k."""
    question = case.survey.question(question_id)
    used = _used(case, question_id)
    scaled = Fraction(float(draw)) * GRID  # the double the client drew, exactly
    for instruction, threshold in zip(used, instruction_thresholds(used), strict=True):
        if scaled < threshold:
            return instruction_text(instruction, question.design, case.wording,
                                    innocuous=question.innocuous)
    raise AssertionError("unreachable: the last threshold is 2^53")


def _drawn(case: Case) -> set[str]:
    """The questions whose rule the device draws (more than one possible rule)."""
    return {q.id for q in case.survey.questions if len(_used(case, q.id)) > 1}


def _instruction_texts(case: Case) -> set[str]:
    """Every rule text any respondent of the survey can be shown."""
    texts = set()
    for question in case.survey.questions:
        for instructions in question.design.protocol.instructions:
            texts |= {instruction_text(i, question.design, case.wording,
                                       innocuous=question.innocuous) for i in instructions}
    return texts


def check_submission(case: Case, fill: Fill) -> None:
    values = leaves(fill.submission)
    survey = case.survey
    expected = {"respondent_id": case.answers["respondent_id"]}
    if "group" in case.answers:
        expected["group"] = case.answers["group"]
    for question in survey.questions:
        expected[question.id] = case.final_answer(question.id)
    for name, value in expected.items():
        assert values.get(name) == value, (name, values)
    assert re.fullmatch(r"uuid:[0-9a-f-]{36}", values["instanceID"])
    assert values["instanceName"] == f"{survey.name} {case.answers['respondent_id']}"
    # Nothing else carries a value: notes are empty elements, draws and codes are absent.
    filled = {name for name, value in values.items() if value}
    assert filled == set(expected) | {"instanceID", "instanceName"}
    assert not [name for name in values if name.endswith(("_draw", "_code"))]
    for text in _instruction_texts(case):
        assert text not in fill.submission, text
    assert not re.search(r"0\.\d{6,}", fill.submission), "a draw reached the submission"


def check_device(case: Case, fill: Fill) -> None:
    first = case.survey.questions[0].id
    start = _draws(fill.start)
    # Limit 2 of --randomize device: a draft saved before the answers holds every draw.
    assert set(start) == _drawn(case)
    shown = fill.shown("fill")
    for question in case.survey.questions:
        rules = {name: text for name, text in shown.items()
                 if name.startswith(f"{question.id}_rule_")}
        assert len(rules) == 1, rules
        if question.id in start:
            expected = _expected_rule(case, question.id, start[question.id])
        else:
            [only] = _used(case, question.id)
            expected = instruction_text(only, question.design, case.wording,
                                        innocuous=question.innocuous)
        assert next(iter(rules.values())).endswith(f": {expected}"), (rules, expected)
    # Going back shows no rule (answered questions hide theirs) ...
    assert not [name for name in fill.shown("back") if "_rule_" in name]
    # ... clearing the answer shows the same rule again: the draw is kept, not redrawn.
    assert _draws(fill.again_cleared)[first] == start[first]
    first_rule = {n: t for n, t in shown.items() if n.startswith(f"{first}_rule_")}
    assert fill.shown("again") == first_rule
    # A draft saved with every answer given holds no draw (none was relevant) ...
    assert _draws(fill.answered) == {}
    # ... so clearing an answer of the reopened draft draws a new rule for that question.
    assert _draws(fill.reopen_cleared).get(first, "") != ""
    assert len([n for n in fill.shown("reopen") if n.startswith(f"{first}_rule_")]) == 1


def check_self(case: Case, fill: Fill) -> None:
    for document in (fill.start, fill.answered, fill.reopen_cleared, fill.submission):
        assert _draws(document) == {}
        assert "_code" not in document
    # Every die note of the form, and the ones the respondent's group must see.
    notes = {str(row["name"]): (str(row.get("relevant", "")), row["label"])
             for row in form_of(case).survey if "_die" in str(row["name"])}
    group = case.answers.get("group")
    expected = {name: next(iter(label.values())) for name, (relevant, label) in notes.items()
                if not relevant or relevant == f"${{group}} = '{group}'"}
    shown = fill.shown("fill")
    assert {name: text for name, text in shown.items() if name in notes} == expected
    for question in case.survey.questions:
        die = [text for name, text in expected.items() if name.startswith(f"{question.id}_die")]
        if not die:  # nothing to roll: a crosswise question without "don't know"
            assert question.design.protocol.kind == "combined"
            continue
        [table] = die
        assert question.text in table
        for instruction in _used(case, question.id):
            if instruction.kind != "answer_table":  # per-state tables name answers instead
                assert instruction_text(instruction, question.design, case.wording,
                                        innocuous=question.innocuous) in table


@pytest.mark.parametrize("client_name", CLIENTS)
@pytest.mark.parametrize("case_name", list(CASES))
def test_exported_form_fills_and_submits_only_answers_id_and_metadata(
        case_name, client_name, filled):
    case = CASES[case_name]
    fills = fills_of(filled(client_name)[f"submits {case_name}"])
    assert len(fills) == 2
    for fill in fills:
        check_submission(case, fill)
        (check_self if case.randomize == "self" else check_device)(case, fill)


@pytest.mark.parametrize("client_name", CLIENTS)
def test_two_dice_table_and_french_labels_reach_the_respondent(client_name, filled):
    [fill] = fills_of(filled(client_name)["two dice"])
    table = fill.shown("fill")["triche_die"]
    # 11/36 truthful, 5/36 opposite with two d6: first die 1 -> second die 1-6 truthful, ...
    assert "(d6 + d6)" in table
    assert "First die 2, Second die shows 1–5: Answer truthfully." in table
    assert "First die 2, Second die shows 6: Give the opposite of the true answer." in table
    assert "« A & B »" in table


@pytest.mark.parametrize("client_name", CLIENTS)
def test_device_rules_of_every_protocol_read_as_on_the_slips(client_name, filled):
    [fill] = fills_of(filled(client_name)["device rules"])
    rules = {name.rsplit("_rule_", 1)[0]: text for name, text in fill.shown("fill").items()
             if "_rule_" in name}
    # group 1 (short): SLD says "yes" or truthful; crosswise has one rule; Kuk one per state
    assert rules["drugs"] in {"Question 1. Your rule: Answer truthfully.",
                              'Question 1. Your rule: Answer "Yes", whatever the truth is.'}
    assert rules["tax"] == "Question 2. Your rule: Answer the question truthfully."
    assert re.fullmatch(r"Question 4\. Your rule: If your true answer is Yes, answer [012]\. "
                        r"If your true answer is No, answer [012]\.", rules["fare"])


@pytest.mark.parametrize("client_name", CLIENTS)
def test_crosswise_question_shows_both_questions_and_its_combined_answers(client_name, filled):
    [fill] = fills_of(filled(client_name)["crosswise"])
    label, choices = fill.asked("fill")["tax"]
    assert label.splitlines() == [
        "Question 2. Have you ever under-reported your income to the tax office?", "",
        "Second question: Is your mother's birthday in January, February or March?", "",
        WORDING["crosswise_instructions"]]
    assert choices == (WORDING["crosswise_yes"], WORDING["crosswise_no"])
    assert fill.asked("fill")["fare"][1] == ("0", "1", "2")  # Kuk's cards drawn twice
    values = leaves(fill.submission)
    assert (values["tax"], values["fare"], values["group"]) == ("yes", "2", "2")


@pytest.mark.parametrize("client_name", CLIENTS)
def test_k_category_answers_with_spaces_survive_drafts_and_submission(client_name, filled):
    [fill] = fills_of(filled(client_name)["k categories"])
    asked = fill.asked("fill")
    assert asked["drink_drive"][1] == ("never", "once", "more often", "Don't know")
    assert asked["partners"][1] == ("0", "1", "2", "3 or more")
    assert leaves(fill.answered)["partners"] == "3 or more"
    assert leaves(fill.submission)["partners"] == "3 or more"


@pytest.mark.parametrize("client_name", CLIENTS)
@pytest.mark.parametrize("typed", ["7KQ2-M9XD-4FRT-8U", "7KQ2_M9XD_4FRT_8B"])
def test_respondent_id_constraint_refuses_what_is_not_an_id(client_name, typed, filled):
    with pytest.raises(HarnessError, match="respondent_id refused"):
        fills_of(filled(client_name)[f"typed {typed}"])


@pytest.mark.parametrize("client_name", CLIENTS)
@pytest.mark.parametrize("draw", SMALL_DRAWS)
def test_a_draw_written_in_exponent_notation_selects_the_rule_of_its_value(
        client_name, draw, filled):
    """Found by the instanceID attack test: a recovered draw of 0.000197 was shown the
    "don't know" rule instead of "truthful". Here every draw of the form is fixed to text
    an engine writes, and the rule shown must be the slips' rule for its value."""
    case = CASES["sample-device"]
    [fill] = fills_of(filled(client_name)[f"draw {draw}"])
    shown = fill.shown("fill")
    for question in _drawn(case):
        [rule] = [text for name, text in shown.items() if name.startswith(f"{question}_rule_")]
        assert rule.endswith(f": {_expected_rule(case, question, draw)}"), (question, rule)
    if float(draw) < 0.001:  # the first rule (its share is far above 10^-3), not the last
        question = case.survey.question(sorted(_drawn(case))[0])
        first = instruction_text(_used(case, question.id)[0], question.design, case.wording,
                                 innocuous=question.innocuous)
        assert _expected_rule(case, question.id, draw) == first
