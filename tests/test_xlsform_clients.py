"""Exported XLSForms in the field tools themselves: pyxform + ODK Validate, JavaRosa
(ODK Collect's engine) and @getodk/xforms-engine (ODK Web Forms' engine).

Each form is converted and validated once per session; each client fills it as a
respondent does (answer, go back, clear and answer again, save a draft, reopen it,
finalize). The finalized submission must hold the answers, the id and metadata, and
nothing else: no draw, no code, no instruction text. tests/field_clients.py runs the
tools; docs/field-collection.md quotes what these tests show.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import pytest
from field_clients import Fill, HarnessError, JavaRosa, WebForms, convert, leaves

from surveykit.collection.render import load_wording_defaults, make_environment
from surveykit.collection.xlsform import build_xlsform, instruction_text, write_xlsform
from surveykit.definition.survey import Survey, load_survey_file, parse_survey
from surveykit.resources import locate_resource

WORDING = load_wording_defaults(make_environment())
# The stochastic lie detector's "say yes" rule has no shipped wording yet (it arrives with
# the instruction texts for every design); the test gives one to exercise groups.
SAY_WORDING = {**WORDING, "rule_say": 'Answer "{answer}", whatever the truth is.'}

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

LIE_DETECTOR = '''
name = "lie_detector"
title = "Two groups"
[design]
model = "sld"
p = [0.2, 0.8]
groups = ["short", "long"]
[[questions]]
id = "tax_evasion"
text = "Have you ever evaded taxes?"
[[questions]]
id = "bribe"
text = "Have you ever paid a bribe?"
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
    "groups-device": Case(parse_survey(LIE_DETECTOR, "lie.toml"), "device", {
        "respondent_id": "7KQ2-M9XD-4FRT-8B", "group": "2", "tax_evasion": "yes/no",
        "bribe": "dont_know"}, SAY_WORDING),
}
CLIENTS = ("javarosa", "webforms")


@pytest.fixture(scope="session")
def xforms(tmp_path_factory) -> dict[str, Path]:
    """Every case's form, exported, converted by pyxform and passed by ODK Validate."""
    folder = tmp_path_factory.mktemp("xforms")
    converted = {}
    for name, case in CASES.items():
        form = build_xlsform(case.survey, randomize=case.randomize,
                             wording_defaults=case.wording)
        xlsx = write_xlsform(form, folder / f"{name}.xlsx")
        xform = folder / f"{name}.xml"
        warnings = convert(xlsx, xform)
        assert not warnings, f"{name}: pyxform warned {warnings}"
        converted[name] = xform
    return converted


@pytest.fixture(scope="session")
def clients():
    """The two engines by name; JavaRosa's harness is compiled once per session."""
    return lambda name: JavaRosa.shared() if name == "javarosa" else WebForms()


def _draws(document: str) -> dict[str, str]:
    return {name[:-len("_draw")]: value for name, value in leaves(document).items()
            if name.endswith("_draw")}


def _expected_rule(case: Case, question_id: str, draw: float) -> str:
    """The rule text the design's protocol gives for ``draw`` (cumulative probabilities)."""
    question = case.survey.question(question_id)
    group = int(case.answers.get("group", "1")) - 1
    instructions = [i for i in question.design.protocol.for_group(group) if i.probability > 0]
    cumulative = Fraction(0)
    for instruction in instructions:
        cumulative += instruction.probability
        if draw < float(cumulative) or instruction is instructions[-1]:
            return instruction_text(instruction, case.wording, question.innocuous)
    raise AssertionError("unreachable")


def _instruction_texts(case: Case) -> set[str]:
    texts = {value for key, value in case.wording.items() if key.startswith("rule_")}
    return {text.split("{")[0].strip() for text in texts if text.split("{")[0].strip()}


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
        assert text not in fill.submission
    assert not re.search(r"0\.\d{6,}", fill.submission), "a draw reached the submission"


def check_device(case: Case, fill: Fill) -> None:
    first = case.survey.questions[0].id
    start = _draws(fill.start)
    # Limit 2 of --randomize device: a draft saved before the answers holds every draw.
    assert set(start) == {q.id for q in case.survey.questions}
    shown = fill.shown("fill")
    for question in case.survey.questions:
        rules = {name: text for name, text in shown.items()
                 if name.startswith(f"{question.id}_rule_")}
        assert len(rules) == 1, rules
        expected = _expected_rule(case, question.id, float(start[question.id]))
        assert next(iter(rules.values())).endswith(expected)
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
    shown = fill.shown("fill")
    for question in case.survey.questions:
        table = shown[f"{question.id}_die"]
        assert question.text in table
        for key in ("rule_truthful", "rule_opposite", "rule_dont_know"):
            assert case.wording[key] in table


@pytest.mark.parametrize("client_name", CLIENTS)
@pytest.mark.parametrize("case_name", list(CASES))
def test_exported_form_fills_and_submits_only_answers_id_and_metadata(
        case_name, client_name, xforms, clients, tmp_path):
    case = CASES[case_name]
    client = clients(client_name)
    fills = client.fill(xforms[case_name], tmp_path, case.answers, runs=2)
    for fill in fills:
        check_submission(case, fill)
        (check_self if case.randomize == "self" else check_device)(case, fill)


@pytest.mark.parametrize("client_name", CLIENTS)
def test_two_dice_table_and_french_labels_reach_the_respondent(client_name, xforms, clients,
                                                               tmp_path):
    case = CASES["two-dice-french"]
    fill = clients(client_name).fill(xforms["two-dice-french"], tmp_path, case.answers)[0]
    table = fill.shown("fill")["triche_die"]
    # 11/36 truthful, 5/36 opposite with two d6: first die 1 -> second die 1-6 truthful, ...
    assert "(d6 + d6)" in table
    assert "First die 2, Second die shows 1–5: Answer truthfully." in table
    assert "First die 2, Second die shows 6: Give the opposite of the true answer." in table
    assert "« A & B »" in table


@pytest.mark.parametrize("client_name", CLIENTS)
def test_say_rule_names_the_answer_as_the_form_labels_it(client_name, xforms, clients, tmp_path):
    case = CASES["groups-device"]
    fill = clients(client_name).fill(xforms["groups-device"], tmp_path, case.answers)[0]
    rules = {text for name, text in fill.shown("fill").items() if "_rule_" in name}
    assert rules <= {"Question 1. Your rule: Answer truthfully.",
                     'Question 1. Your rule: Answer "Yes", whatever the truth is.',
                     "Question 2. Your rule: Answer truthfully.",
                     'Question 2. Your rule: Answer "Yes", whatever the truth is.'}


@pytest.mark.parametrize("client_name", CLIENTS)
@pytest.mark.parametrize("typed", ["7KQ2-M9XD-4FRT-8U", "7KQ2_M9XD_4FRT_8B"])
def test_respondent_id_constraint_refuses_what_is_not_an_id(client_name, typed, xforms, clients,
                                                            tmp_path):
    case = CASES["sample-self"]
    with pytest.raises(HarnessError, match="respondent_id refused"):
        clients(client_name).fill(xforms["sample-self"], tmp_path,
                                  {**case.answers, "respondent_id": typed})
