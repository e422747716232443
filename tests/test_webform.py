"""The web page's survey data: the slips' thresholds and texts for every protocol kind, wording.

The thresholds' exactness (within 2^-54 of every cumulative probability) is tested once,
in test_randomizer.py; here: the page gets exactly those thresholds.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from surveykit.collection.instructions import instruction_lines
from surveykit.collection.randomizer import GRID_BITS, instruction_thresholds
from surveykit.collection.render import load_wording_defaults, make_environment
from surveykit.collection.webform import build_web_form
from surveykit.definition.survey import load_survey_file, parse_survey
from surveykit.designs.registry import PRESETS, make_design, parameter_names
from surveykit.errors import ParameterError
from tests.web_support import MIXED

GRID = 1 << GRID_BITS
WORDING = load_wording_defaults(make_environment())
SURVEYS = Path(__file__).resolve().parent / "surveys"
INNOCUOUS_MODELS = ("uqtknown", "uqtunknown", "crosswise", "triangular")



def form_of(text: str):
    return build_web_form(parse_survey(text), wording_defaults=WORDING)


PRESET_PARAMETERS = {
    "warner": {"p": 0.7}, "generalized_warner": {"p": 0.6, "q": 0.2}, "fr": {"p": [0.1, 0.2]},
    "uqtknown": {"p": [0.7, 0.25]}, "uqtunknown": {"p": [0.7, 0.3]}, "mangat": {"p": 0.7},
    "kuk": {"p": [0.7, 0.3]}, "crosswise": {"p": 0.25}, "triangular": {"p": 0.25},
    "cdm": {"p": [0.2, 0.8]}, "cdmsym": {"p": [0.2, 0.8, 0.1, 0.1]}, "sld": {"p": [0.2, 0.8]},
    "grr": {"p": 0.7, "categories": ["a", "b", "c"]}, "direct": {},
    "custom": {"matrix": [[0.8, 0.3], [0.2, 0.7]]}}


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_gets_the_slips_thresholds_and_texts_in_every_group(name):
    params = dict(PRESET_PARAMETERS[name])
    if "dont_know" in parameter_names(PRESETS[name]):
        params["dont_know"] = 0.1
    design = make_design(name, **params)
    survey = parse_survey(f'name = "p"\ntitle = "P"\n[[questions]]\nid = "q"\ntext = "Ever?"\n'
                          f'[questions.design]\nmodel = "{name}"\n'
                          + "".join(f"{k} = {json.dumps(v)}\n" for k, v in params.items())
                          + ('innocuous = "Spring?"\n' if name in INNOCUOUS_MODELS else ""))
    question = build_web_form(survey, wording_defaults=WORDING).questions[0]
    assert len(question.rules) == len(design.group_names)
    for group, rules in enumerate(question.rules):
        instructions = design.protocol.for_group(group)
        assert [rule.below for rule in rules] == list(instruction_thresholds(instructions))
        assert [rule.lines for rule in rules] == [
            instruction_lines(i, design, WORDING, innocuous="Spring?") for i in instructions]


def test_rule_texts_follow_each_instruction_kind():
    form = form_of(MIXED)
    rules = {q.id: [rule.lines for rule in q.rules[0]] for q in form.questions}
    assert rules["warner"] == [("Answer truthfully.",), ("Give the opposite of the true answer.",),
                               ("Answer \"don't know\", whatever the truth is.",)]
    assert rules["forced"] == [("Answer truthfully.",),
                               ('Answer "No", whatever the truth is.',),
                               ('Answer "Yes", whatever the truth is.',),
                               ("Answer \"don't know\", whatever the truth is.",)]
    # Kuk: one response per true state (the cards drawn ahead of time)
    assert rules["cards"][0] == ("If your true answer is Yes, answer Yes.",
                                 "If your true answer is No, answer Yes.")
    # crosswise: answer the combined question; only "don't know" is drawn
    assert rules["cross"] == [("Answer the question truthfully.",),
                              ("Answer \"don't know\", whatever the truth is.",)]
    assert rules["unrelated"] == [
        ("Answer the question truthfully.",),
        ("Answer this other question truthfully instead: Were you born in spring?",)]
    assert rules["colour"][1] == ('Answer "red", whatever the truth is.',)


def test_buttons_prompt_and_the_other_question_are_the_paper_sheets():
    form = form_of(MIXED)
    by_id = {q.id: q for q in form.questions}
    assert by_id["warner"].answers == (("yes", "Yes"), ("no", "No"),
                                       ("dont_know", "Don't know"))
    # a design that never tells anybody to answer "don't know" offers no such button
    assert by_id["colour"].answers == (("red", "red"), ("green", "green"), ("blue", "blue"))
    assert by_id["cards"].answers == (("yes", "Yes"), ("no", "No"))
    # crosswise: both questions, the paper's prompt and its combined answers
    cross = by_id["cross"]
    assert cross.innocuous.startswith("Is your mother's birthday")
    assert cross.prompt == WORDING["crosswise_instructions"]
    assert cross.answers == (("yes", WORDING["crosswise_yes"]), ("no", WORDING["crosswise_no"]),
                             ("dont_know", "Don't know"))
    assert by_id["unrelated"].innocuous is None  # shown inside its rule instead
    assert by_id["unrelated"].prompt == ""
    assert by_id["warner"].progress == "Question 1 of 6"


def test_a_k_category_survey_offers_its_categories_and_dont_know_where_designed():
    form = build_web_form(load_survey_file(SURVEYS / "categories.toml"),
                          wording_defaults=WORDING)
    first, second = form.questions
    assert first.answers == (("never", "never"), ("once", "once"),
                             ("more often", "more often"), ("dont_know", "Don't know"))
    assert [rule.lines[0] for rule in first.rules[0]] == [
        "Answer truthfully.", 'Answer "never", whatever the truth is.',
        'Answer "once", whatever the truth is.', 'Answer "more often", whatever the truth is.',
        "Answer \"don't know\", whatever the truth is."]
    assert [label for label, _ in second.answers] == ["0", "1", "2", "3 or more"]


def test_multi_group_designs_give_one_rule_list_per_group():
    form = form_of('name = "g"\ntitle = "G"\n[design]\nmodel = "sld"\np = [0.2, 0.8]\n'
                   'groups = ["short", "long"]\n[[questions]]\nid = "q"\ntext = "Ever?"')
    assert form.groups == ("short", "long")
    first, second = form.questions[0].rules
    assert [rule.below for rule in first][0] == round(Fraction(1, 5) * GRID)
    assert [rule.below for rule in second][0] == round(Fraction(4, 5) * GRID)


def test_survey_and_question_wording_override_the_defaults():
    form = form_of('name = "w"\ntitle = "W"\n[mechanism]\np = 0.6\nq = 0.2\n'
                   '[wording]\nanswer_yes = "Oui"\nweb_submit = "Envoyer"\n'
                   '[[questions]]\nid = "q"\ntext = "Jamais ?"\n'
                   '[questions.wording]\nrule_truthful = "Répondez sincèrement."')
    question = form.questions[0]
    assert question.answers[0] == ("yes", "Oui")
    assert question.progress == "Question 1 of 1"
    assert question.rules[0][0].lines == ("Répondez sincèrement.",)
    assert form.wording["web_submit"] == "Envoyer"


def test_an_unknown_wording_key_is_refused_with_the_known_ones():
    survey = parse_survey('name = "w"\ntitle = "W"\n[mechanism]\np = 0.6\nq = 0.2\n'
                          '[wording]\nweb_sumbit = "Send"\n[[questions]]\nid = "q"\ntext = "?"')
    with pytest.raises(ParameterError, match="unknown wording key 'web_sumbit'"):
        build_web_form(survey, wording_defaults=WORDING)


def test_the_page_data_is_json_with_integer_thresholds():
    data = json.loads(json.dumps(form_of(MIXED).to_dict()))
    assert data["grid_bits"] == 53
    assert all(isinstance(rule["below"], int) and 0 <= rule["below"] <= GRID
               for question in data["questions"] for group in question["rules"]
               for rule in group)
    # no instruction codes: the page needs only what it shows
    assert "code" not in json.dumps(data["questions"])
