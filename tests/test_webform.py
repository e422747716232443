"""The web page's survey data: exact thresholds, rule texts for every protocol kind, wording."""

from __future__ import annotations

import json
from dataclasses import replace
from fractions import Fraction

import pytest

from surveykit.collection.render import load_wording_defaults, make_environment
from surveykit.collection.webform import GRID_BITS, build_web_form, grid_thresholds
from surveykit.definition.survey import parse_survey
from surveykit.designs.registry import PRESETS, make_design, parameter_names
from surveykit.errors import ParameterError, SurveyDefinitionError
from tests.web_support import MIXED

GRID = 1 << GRID_BITS
WORDING = load_wording_defaults(make_environment())



def form_of(text: str):
    return build_web_form(parse_survey(text), wording_defaults=WORDING)


def test_thresholds_are_the_rounded_cumulative_probabilities_and_end_at_the_grid():
    probabilities = [Fraction(63, 100), Fraction(9, 100), Fraction(18, 100), Fraction(1, 10)]
    thresholds = grid_thresholds(probabilities)
    assert thresholds[-1] == GRID
    total = Fraction(0)
    for p, threshold in zip(probabilities, thresholds, strict=True):
        total += p
        assert abs(threshold - total * GRID) <= Fraction(1, 2)


def test_each_rule_is_drawn_within_two_to_the_minus_53_of_its_probability():
    # Thirds cannot be exact on a binary grid: the error is at most one grid step.
    probabilities = [Fraction(1, 3)] * 3
    thresholds = (0, *grid_thresholds(probabilities))
    for k, p in enumerate(probabilities):
        drawn = Fraction(thresholds[k + 1] - thresholds[k], GRID)
        assert abs(drawn - p) <= Fraction(1, GRID)


def test_a_zero_probability_rule_gets_an_empty_interval():
    assert grid_thresholds([Fraction(1, 2), Fraction(0), Fraction(1, 2)], bits=2) == (2, 2, 4)


@pytest.mark.parametrize("probabilities, message", [
    ([Fraction(1, 2), Fraction(1, 3)], "add up to exactly 1"),
    ([Fraction(3, 2), Fraction(-1, 2)], "must be >= 0"),
    ([], "must not be empty"),
])
def test_thresholds_refuse_probabilities_that_are_not_a_distribution(probabilities, message):
    with pytest.raises(ParameterError, match=message):
        grid_thresholds(probabilities)


def test_thresholds_refuse_a_grid_javascript_cannot_hold_exactly():
    with pytest.raises(ParameterError, match=r"bits \(54\) must be a whole number from 1 to 53"):
        grid_thresholds([Fraction(1)], bits=54)


def test_every_preset_gives_thresholds_matching_its_protocol_in_every_group():
    for name, cls in PRESETS.items():
        params = {"warner": {"p": 0.7}, "generalized_warner": {"p": 0.6, "q": 0.2},
                  "fr": {"p": [0.1, 0.2]}, "uqtknown": {"p": [0.7, 0.25]},
                  "uqtunknown": {"p": [0.7, 0.3]}, "mangat": {"p": 0.7},
                  "kuk": {"p": [0.7, 0.3]}, "crosswise": {"p": 0.25},
                  "triangular": {"p": 0.25}, "cdm": {"p": [0.2, 0.8]},
                  "cdmsym": {"p": [0.2, 0.8, 0.1, 0.1]}, "sld": {"p": [0.2, 0.8]},
                  "grr": {"p": 0.7, "categories": ["a", "b", "c"]}, "direct": {},
                  "custom": {"matrix": [[0.8, 0.3], [0.2, 0.7]]}}[name]
        if "dont_know" in parameter_names(cls):
            params["dont_know"] = 0.1
        design = make_design(name, **params)
        for group in range(len(design.group_names)):
            instructions = design.protocol.for_group(group)
            thresholds = grid_thresholds([i.probability for i in instructions])
            previous = 0
            for instruction, threshold in zip(instructions, thresholds, strict=True):
                assert abs(Fraction(threshold - previous, GRID) - instruction.probability) \
                    <= Fraction(1, GRID), (cls.__name__, group)
                previous = threshold


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
    # crosswise: the rule is the combined question; only "don't know" is drawn
    assert rules["cross"] == [(WORDING["combined_crosswise"],),
                              ("Answer \"don't know\", whatever the truth is.",)]
    assert rules["unrelated"] == [
        ("Answer the question truthfully.",),
        ("Answer this other question truthfully instead: Were you born in spring?",)]
    assert rules["colour"][1] == ('Answer "red", whatever the truth is.',)


def test_buttons_and_the_other_question_come_from_the_design():
    form = form_of(MIXED)
    by_id = {q.id: q for q in form.questions}
    assert by_id["warner"].answers == (("yes", "Yes"), ("no", "No"),
                                       ("dont_know", "Don't know"))
    assert [label for label, _ in by_id["colour"].answers] == ["red", "green", "blue",
                                                               "dont_know"]
    assert by_id["cross"].innocuous.startswith("Is your mother's birthday")
    assert by_id["unrelated"].innocuous is None  # shown inside its rule instead
    assert by_id["warner"].progress == "Question 1 of 6"


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
    assert question.rules[0][0].lines == ("Répondez sincèrement.",)
    assert form.wording["web_submit"] == "Envoyer"


def test_an_unknown_wording_key_is_refused_with_the_known_ones():
    text = ('name = "w"\ntitle = "W"\n[mechanism]\np = 0.6\nq = 0.2\n'
            '[wording]\nweb_sumbit = "Send"\n[[questions]]\nid = "q"\ntext = "?"')
    # refused when the survey file is read (survey add), with the nearest key
    with pytest.raises(SurveyDefinitionError, match=r"wording.web_sumbit: unknown wording key "
                                                    r"'web_sumbit' \(keys like it: web_submit"):
        parse_survey(text)
    # and still when a Survey built in code reaches the web form
    survey = replace(parse_survey(text.replace("web_sumbit", "web_submit")),
                     wording={"web_sumbit": "Send"})
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
