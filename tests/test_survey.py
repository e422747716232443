"""Survey definition files: parsing, defaults, and errors that name file, field and fix."""

from __future__ import annotations

import textwrap

import pytest

from surveykit.definition.survey import canonical_spelling, load_survey_file, parse_survey
from surveykit.designs.warner import GeneralizedWarner
from surveykit.errors import SurveyDefinitionError

MINIMAL = """
name = "demo"
title = "Demo survey"
[mechanism]
p = 0.6
q = 0.2
[[questions]]
id = "q1"
text = "Have you ever cheated on an exam?"
"""


def test_sample_survey_has_four_questions_with_their_own_mechanisms(sample_survey):
    assert sample_survey.name == "academic_integrity"
    assert sample_survey.language == "en"
    assert [q.id for q in sample_survey.questions] == [
        "exam_cheating", "plagiarism", "contract_cheating", "fabricated_data"]
    mechanisms = {q.id: q.design for q in sample_survey.questions}
    assert mechanisms["exam_cheating"] == GeneralizedWarner(p=0.6, q=0.2)  # the default
    assert mechanisms["plagiarism"] == GeneralizedWarner(p=0.7, q=0.15)
    assert mechanisms["contract_cheating"] == GeneralizedWarner(p=0.5, q=0.25)
    assert sample_survey.wording["intro"].startswith("Your answers are protected")
    assert sample_survey.questions[2].wording["reminder"].startswith("Remember")


def test_sample_survey_source_is_the_file_text(sample_survey, sample_survey_path):
    assert sample_survey.source == sample_survey_path.read_text(encoding="utf-8")
    assert parse_survey(sample_survey.source, "again") == sample_survey


def test_survey_level_aliases_reach_every_question_and_question_aliases_add_to_them(
        sample_survey):
    first, last = sample_survey.questions[0], sample_survey.questions[-1]
    assert first.aliases == {"yes, i have": "yes", "no, never": "no"}
    assert last.aliases["made up"] == "yes"
    assert last.answer_spellings()["no, never"] == "no"
    assert "made up" not in first.answer_spellings()


def test_defaults_language_en_and_empty_wording():
    survey = parse_survey(MINIMAL, "demo.toml")
    assert survey.language == "en"
    assert dict(survey.wording) == {}
    assert dict(survey.questions[0].aliases) == {}
    assert survey.questions[0].design == survey.design


def test_survey_and_questions_are_immutable():
    survey = parse_survey(MINIMAL, "demo.toml")
    with pytest.raises(AttributeError):
        survey.name = "other"
    with pytest.raises(TypeError):
        survey.questions[0].aliases["x"] = "yes"


def test_question_lookup_ignores_case_and_names_the_questions():
    survey = parse_survey(MINIMAL, "demo.toml")
    assert survey.question("Q1").id == "q1"
    with pytest.raises(SurveyDefinitionError, match=r"no question 'q9'; its questions are q1"):
        survey.question("q9")


@pytest.mark.parametrize("raw, expected", [
    ("  Don’t   KNOW ", "don't know"),
    ("YES", "yes"),
    ("\tn\n", "n"),
])
def test_canonical_spelling(raw, expected):
    assert canonical_spelling(raw) == expected


def broken(replace_from: str, replace_to: str) -> str:
    assert replace_from in MINIMAL
    return MINIMAL.replace(replace_from, replace_to)


@pytest.mark.parametrize("text, message", [
    (broken('name = "demo"\n', ""), r"demo\.toml: name: missing"),
    (broken('name = "demo"', 'name = "no spaces allowed"'), r"demo\.toml: name: 'no spaces"),
    (broken('title = "Demo survey"', "title = 3"), r"demo\.toml: title: 3 must be a non-empty"),
    (broken('title = "Demo survey"', 'title = "Demo"\ntitel = "typo"'),
     r"demo\.toml:4:1: top level: unknown key 'titel', did you mean 'title'\? Allowed keys"),
    (broken('[mechanism]\np = 0.6\nq = 0.2\n', ""),
     r"demo\.toml: design: missing: questions\[0\] has no design"),
    (broken("p = 0.6", "p = 1.6"), r"demo\.toml: mechanism\.p: 1\.6 must be a probability"),
    (broken("p = 0.6", 'p = "0.6"'), r"demo\.toml: mechanism\.p: '0\.6' must be a number"),
    (broken("p = 0.6", "p = true"), r"mechanism\.p: True must be a number"),
    (broken("q = 0.2", ""), r"demo\.toml: mechanism\.q: missing"),
    (broken("p = 0.6", "p = 0.1"), r"demo\.toml: mechanism: p \(0\.1\) must be greater than q"),
    (broken("p = 0.6", "p = 0.9"), r"demo\.toml: mechanism: p \+ q .* must be at most 1"),
    (broken('[[questions]]\nid = "q1"\ntext = "Have you ever cheated on an exam?"\n', ""),
     r"demo\.toml: questions: missing: add at least one"),
    (broken('id = "q1"', 'id = "1st"'), r"demo\.toml: questions\[0\]\.id: '1st' must start"),
    (broken('id = "q1"', 'id = "answer"'), r"questions\[0\]\.id: 'answer' is a column name"),
    (broken('id = "q1"', ""), r"demo\.toml: questions\[0\]\.id: missing"),
    (broken('text = "Have you ever cheated on an exam?"', 'text = ""'),
     r"questions\[0\]\.text: '' must be a non-empty text"),
    (broken('text = "Have you ever cheated on an exam?"',
            'text = "x"\noptions = 1'), r"demo\.toml:\d+:1: questions\[0\]: unknown key 'options'"),
    (MINIMAL + '[[questions]]\nid = "Q1"\ntext = "Again?"\n',
     r"questions\[1\]\.id: 'Q1' repeats the id of questions\[0\]"),
    (MINIMAL + '[[questions]]\nid = "q2"\ntext = "x"\n[questions.mechanism]\np = 0.3\nq = 0.4\n',
     r"demo\.toml: questions\[1\]\.mechanism: p \(0\.3\) must be greater than q \(0\.4\)"),
    (MINIMAL + '[[questions]]\nid = "q2"\ntext = "x"\n[questions.mechanism]\np = -0.1\nq = 0\n',
     r"demo\.toml: questions\[1\]\.mechanism\.p: -0\.1 must be a probability"),
    (MINIMAL + '[questions.aliases]\n"si" = "si"\n',
     r"questions\[0\]\.aliases\.\"si\": 'si' must be one of"),
    (MINIMAL + '[questions.aliases]\n"1" = "no"\n',
     r"questions\[0\]\.aliases\.\"1\": '1' already means 'yes'"),
    (MINIMAL + '[questions.aliases]\n"  " = "no"\n', r"an empty answer is missing"),
    (MINIMAL + '[questions.wording]\nintro = 3\n', r"questions\[0\]\.wording\.intro: 3 must be"),
    (broken('name = "demo"', 'name = "demo"\nlanguage = "english!"'),
     r"demo\.toml: language: 'english!' must be a language tag"),
    ('name = "demo\n', r"demo\.toml: not valid TOML: .*line 1"),
])
def test_definition_errors_name_file_field_and_problem(text, message):
    with pytest.raises(SurveyDefinitionError, match=message):
        parse_survey(text, "demo.toml")


def test_an_alias_may_repeat_a_builtin_meaning():
    survey = parse_survey(MINIMAL + '[questions.aliases]\n"Y" = "yes"\n"Sí" = "yes"\n', "x")
    assert survey.questions[0].aliases == {"y": "yes", "sí": "yes"}


def test_load_survey_file_reports_missing_file_and_non_utf8(tmp_path):
    with pytest.raises(SurveyDefinitionError, match=r"nope\.toml: cannot read the survey file"):
        load_survey_file(tmp_path / "nope.toml")
    latin = tmp_path / "latin.toml"
    latin.write_bytes(MINIMAL.replace("Demo survey", "Enquête").encode("latin-1"))
    with pytest.raises(SurveyDefinitionError, match=r"latin\.toml: byte \d+ is not UTF-8"):
        load_survey_file(latin)


def test_load_survey_file_accepts_a_byte_order_mark(tmp_path):
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + textwrap.dedent(MINIMAL).encode())
    assert load_survey_file(path).name == "demo"
