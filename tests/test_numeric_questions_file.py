"""Numeric questions in survey files (issue 23): type = "number", range, unit, decimals, and
a design for numeric answers; every mistake a one-line error naming the key."""

from __future__ import annotations

import jsonschema
import pytest

from surveykit.definition.survey import parse_survey
from surveykit.definition.survey_schema import survey_schema
from surveykit.designs.quantitative import QUANTITATIVE_PRESETS, Eriksson, MixUnknown
from surveykit.errors import SurveyDefinitionError
from tests.numeric_support import choice_question, income_question, numeric_survey

try:
    import tomllib
except ImportError:  # pragma: no cover - Python 3.11 has it
    raise

BASE = numeric_survey(choice_question(), income_question())

VALIDATOR = jsonschema.Draft7Validator(survey_schema())


def test_a_numeric_question_reads_with_its_design_range_unit_and_decimals():
    survey = parse_survey(BASE, "tax.toml")
    choice, number = survey.questions
    assert not choice.numeric and choice.type == "choice"
    assert number.numeric and number.type == "number"
    assert number.design == Eriksson(p=0.6, scrambler=[0, 1000, 5000, 20000], dont_know=0.1)
    assert number.range == (0.0, 100000.0)
    assert (number.unit, number.decimals) == ("EUR", 0)
    # its only label is "don't know": numbers are not spellings
    assert set(number.answer_spellings().values()) == {"dont_know"}
    assert list(VALIDATOR.iter_errors(tomllib.loads(BASE))) == []


def test_a_two_group_numeric_design_gives_the_survey_its_groups():
    text = BASE.replace('model = "eriksson"\np = 0.6\nscrambler = [0, 1000, 5000, 20000]',
                        'model = "mix.unknown"\np = [0.6, 0.8]')
    survey = parse_survey(text, "tax.toml")
    assert isinstance(survey.questions[1].design, MixUnknown)
    assert survey.groups == ("1", "2")
    assert list(VALIDATOR.iter_errors(tomllib.loads(text))) == []


def test_every_numeric_design_reads_from_a_survey_file_by_its_name():
    examples = {"eriksson": "p = 0.6\nscrambler = [1, 2, 3]", "eichhorn_hayre":
                "mu = 1.1\nsigma = 0.5", "bar_lev": "p = 0.6\nmu = 1.0\nsigma = 0.5",
                "chaudhuri_christofides": "mu = [1.0, 2.0]\nsigma = [0.5, 1.0]",
                "diana_perri_1": "p = 0.6\nmu = [1.0, 2.0]\nsigma = [0.5, 1.0]",
                "diana_perri_2": "beta = 0.3\nmu = [1.0, 2.0]\nsigma = [0.5, 1.0]",
                "saha": "scrambler = [[1, 2], [1, 2, 3]]",
                "mix_norm": "p = 0.7\nmu = 40\nsigma = 15", "mix_exp": "p = 0.7\nmu = 40",
                "mix_unknown": "p = [0.6, 0.8]", "additive": "mu = 0\nsigma = 10"}
    assert set(examples) == set(QUANTITATIVE_PRESETS)
    for model, parameters in examples.items():
        text = (f'name = "s"\ntitle = "S"\n[[questions]]\nid = "n"\ntext = "How many?"\n'
                f'type = "number"\n[questions.design]\nmodel = "{model}"\n{parameters}\n')
        design = parse_survey(text, "s.toml").questions[0].design
        assert design.model == model
        assert list(VALIDATOR.iter_errors(tomllib.loads(text))) == [], model


def test_a_default_numeric_design_serves_numeric_questions():
    text = '''name = "s"
title = "S"
[design]
model = "mix_norm"
p = 0.7
mu = 40
sigma = 15
[[questions]]
id = "a"
text = "How many?"
type = "number"
[[questions]]
id = "b"
text = "How many more?"
type = "number"
'''
    survey = parse_survey(text, "s.toml")
    assert [q.design.model for q in survey.questions] == ["mix_norm", "mix_norm"]
    assert survey.questions[0].range is None and survey.questions[0].decimals is None


MISTAKES = {
    "an unknown type": (('type = "number"', 'type = "numeric"'),
                        "questions[1].type", "must be \"choice\""),
    "range on a choice question": (('type = "number"\n', ''), "questions[1].range",
                                   "range is for numeric questions"),
    "a yes/no design for a number": (('model = "eriksson"\np = 0.6\nscrambler = [0, 1000, '
                                      '5000, 20000]', 'model = "warner"\np = 0.7'),
                                     "questions[1].design.model", "asks for a number"),
    "a numeric design for a choice": (('model = "warner"\np = 0.7', 'model = "mix_norm"\n'
                                       'p = 0.7\nmu = 4\nsigma = 1'),
                                      "questions[0].design.model", "add type = \"number\""),
    "a range the wrong way round": (("range = [0, 100000]", "range = [100, 0]"),
                                    "questions[1].range", "must be below high"),
    "a range of one number": (("range = [0, 100000]", "range = [5]"), "questions[1].range",
                              "must be two numbers"),
    "a range beyond stored numbers": (("range = [0, 100000]", "range = [0, 1e300]"),
                                      "questions[1].range", "below 10^15"),
    "a range with decimals": (("range = [0, 100000]", "range = [0, 0.5]"),
                              "questions[1].range", "more decimals than decimals = 0"),
    "too many decimals": (("decimals = 0", "decimals = 9"), "questions[1].decimals",
                          "from 0 to 6"),
    "decimals as text": (("decimals = 0", 'decimals = "2"'), "questions[1].decimals",
                         "whole number"),
    "an empty unit": (('unit = "EUR"', 'unit = " "'), "questions[1].unit",
                      "must be a text"),
    "a long unit": (('unit = "EUR"', f'unit = "{"x" * 40}"'), "questions[1].unit",
                    "at most 32"),
    "aliases on a number": (('decimals = 0\n', 'decimals = 0\n[questions.aliases]\n'
                             '"none" = "dont_know"\n'), "questions[1].aliases",
                            "need no aliases"),
    "a bad numeric parameter": (("p = 0.6\nscrambler", "p = 1.6\nscrambler"),
                                "questions[1].design.p", "p"),
    "a parameter of another design": (("p = 0.6\nscrambler", "beta = 0.6\np = 0.6\nscrambler"),
                                      "questions[1].design", "unknown key 'beta'"),
}


@pytest.mark.parametrize("name", list(MISTAKES))
def test_each_mistake_is_one_line_naming_the_key(name):
    (old, new), where, words = MISTAKES[name]
    assert old in BASE
    with pytest.raises(SurveyDefinitionError) as caught:
        parse_survey(BASE.replace(old, new, 1), "tax.toml")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("tax.toml")
    assert where in message and words in message, message


def test_a_misspelt_numeric_design_gets_a_suggestion_and_the_list():
    with pytest.raises(SurveyDefinitionError) as caught:
        parse_survey(BASE.replace('model = "eriksson"', 'model = "erikson"'), "tax.toml")
    message = str(caught.value)
    assert "did you mean 'eriksson'" in message
    assert "for numeric answers" in message and "mix_unknown" in message
