"""The sample survey that ``surveykit init --example`` writes and the demo runs (issue 22):
its wording speaks of the *rule* the forms show, and "prefer not to say" is no answer,
never the designed "don't know"."""

from __future__ import annotations

import re

import pytest

from surveykit.definition.survey import parse_survey
from surveykit.errors import CsvImportError
from surveykit.example import write_example
from surveykit.resources import locate_resource
from surveykit.store import database as store
from surveykit.store.importer import import_responses

SAMPLE = locate_resource("sample_data") / "academic_integrity.toml"


def test_the_example_written_by_init_is_the_sample_survey(tmp_path):
    written = {path.name: path for path in write_example(tmp_path)}
    assert written["academic_integrity.toml"].read_bytes() == SAMPLE.read_bytes()


def test_prefer_not_to_say_is_never_the_designed_dont_know(engine, tmp_path):
    """"Don't know" is an outcome of the rules (a respondent told to say it, or one who
    does not know): the estimator models it. A respondent who prefers not to say gave no
    answer. The sample survey mapped it to "dont_know" and so counted refusals as a
    designed outcome; now such a cell is refused with the fix, which the survey file's
    comment gives: map it to a missing answer."""
    text = SAMPLE.read_text(encoding="utf-8")
    survey = parse_survey(text, SAMPLE.name)
    assert all("prefer not to say" not in question.answer_spellings()
               for question in survey.questions)
    store.add_survey(engine, survey)
    path = tmp_path / "answers.csv"
    path.write_text("respondent_id,exam_cheating,plagiarism\n"
                    "r1,Prefer not to say,yes\nr2,I don't know,PREFER NOT TO SAY\n",
                    encoding="utf-8")
    with pytest.raises(CsvImportError) as refused:
        import_responses(engine, path, survey.name)
    error = refused.value
    assert error.kinds == {"not an answer": 2}
    assert [(p.line, p.column, p.value) for p in error.problems] == [
        (2, "exam_cheating", "Prefer not to say"), (3, "plagiarism", "PREFER NOT TO SAY")]
    # the fix the survey file's comment gives, uncommented
    fix = re.search(r"^#   (\[import\.labels\])\n#   (.*)$", text, re.M)
    assert fix, "the sample survey shows how to map 'prefer not to say' to missing"
    store.update_survey(engine, parse_survey(text + "\n" + "\n".join(fix.groups()) + "\n",
                                             SAMPLE.name))
    result = import_responses(engine, path, survey.name)
    assert (result.imported, result.missing, result.rejected) == (2, 2, 0)
    counts = {c.question_id: (c.yes, c.no, c.dont_know, c.missing)
              for c in store.count_responses(engine, survey.name)}
    assert counts["exam_cheating"] == (0, 0, 1, 1)
    assert counts["plagiarism"] == (1, 0, 0, 1)


def test_the_sample_survey_says_rule_where_the_forms_show_a_rule():
    """The slips, the die forms and the web page call what a respondent follows a "rule"
    (``rule_label``: "Your rule"); the sample survey's own wording said "code"."""
    survey = parse_survey(SAMPLE.read_text(encoding="utf-8"), SAMPLE.name)
    texts = [*survey.wording.values()]
    for question in survey.questions:
        texts += question.wording.values()
    assert texts, "the sample survey has wording of its own"
    assert not [text for text in texts if re.search(r"\bcodes?\b", text, re.I)]
    assert any(re.search(r"\brule\b", text) for text in texts)
