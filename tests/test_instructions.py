"""Instruction texts: one wording for every instruction of every preset, answer boxes per
design, and placeholders checked before anything is printed."""

from __future__ import annotations

import pytest

from surveykit.collection.instructions import (
    PLACEHOLDERS,
    answer_options,
    check_placeholders,
    instruction_lines,
    instruction_text,
    wording_text,
)
from surveykit.collection.render import load_wording_defaults, make_environment
from surveykit.designs.registry import make_design
from surveykit.errors import ParameterError

WORDING = load_wording_defaults(make_environment())
INNOCUOUS = "Were you born in spring?"

PRESETS = [
    ("warner", {"p": 0.7, "dont_know": 0.1}),
    ("generalized_warner", {"p": 0.6, "q": 0.2}),
    ("fr", {"p": [0.1, 0.2]}),
    ("fr", {"p": [0.1, 0.1, 0.1], "categories": ["never", "once", "often"]}),
    ("uqtknown", {"p": [0.7, 0.25]}),
    ("uqtunknown", {"p": [0.8, 0.3]}),
    ("mangat", {"p": 0.7}),
    ("kuk", {"p": [0.7, 0.3], "repetitions": 2}),
    ("crosswise", {"p": 0.25, "dont_know": 0.1}),
    ("triangular", {"p": 0.25}),
    ("cdm", {"p": [0.3, 0.7]}),
    ("cdmsym", {"p": [0.2, 0.1, 0.1, 0.2]}),
    ("sld", {"p": [0.25, 0.75]}),
    ("grr", {"p": 0.5, "k": 3}),
    ("direct", {}),
    ("custom", {"matrix": [[0.8, 0.3], [0.2, 0.7]], "states": ["no", "yes"],
                "responses": ["no", "yes"]}),
]


def test_the_shipped_wording_has_every_placeholder_key_with_its_placeholders():
    check_placeholders(WORDING, "templates/wording.json")
    for key in PLACEHOLDERS:
        assert key in WORDING, key
    assert WORDING["rule_say"] == 'Answer "{answer}", whatever the truth is.'
    assert WORDING["rule_innocuous"] == "Answer this other question truthfully instead: {innocuous}"
    assert WORDING["rule_table"] == "If your true answer is {state}, answer {response}."
    assert WORDING["rule_sensitive"] == "Answer the question truthfully."


@pytest.mark.parametrize(("name", "parameters"), PRESETS)
def test_every_instruction_of_every_preset_has_a_filled_in_text(name, parameters):
    design = make_design(name, **parameters)
    for g in range(len(design.group_names)):
        for instruction in design.protocol.for_group(g):
            text = instruction_text(instruction, design, WORDING, innocuous=INNOCUOUS)
            assert text and "{" not in text and "}" not in text, (instruction, text)
            # the web page shows the same sentences, a per-state rule one line per state
            lines = instruction_lines(instruction, design, WORDING, innocuous=INNOCUOUS)
            assert " ".join(lines) == text
            assert len(lines) == (len(instruction.table) if instruction.table else 1)


def test_instruction_texts_name_the_answer_the_other_question_and_the_table():
    fr = make_design("fr", p=[0.1, 0.1, 0.1], categories=["never", "once", "often"])
    say = [i for i in fr.protocol.for_group(0) if i.kind == "say"][2]
    assert instruction_text(say, fr, WORDING) == 'Answer "often", whatever the truth is.'
    sld = make_design("sld", p=[0.25, 0.75])
    assert instruction_text(sld.protocol.for_group(0)[1], sld, WORDING) == \
        'Answer "Yes", whatever the truth is.'
    uqt = make_design("uqtknown", p=[0.7, 0.25])
    assert instruction_text(uqt.protocol.for_group(0)[1], uqt, WORDING, innocuous=INNOCUOUS) \
        == "Answer this other question truthfully instead: Were you born in spring?"
    kuk = make_design("kuk", p=[0.7, 0.3], repetitions=2)
    table = next(i for i in kuk.protocol.for_group(0) if i.code == "table:yes=2;no=0")
    assert instruction_text(table, kuk, WORDING) == (
        "If your true answer is Yes, answer 2. If your true answer is No, answer 0.")
    with pytest.raises(ParameterError, match=r"design 'uqtknown' tells respondents to answer "
                                             r"an innocuous question; give its text"):
        instruction_text(uqt.protocol.for_group(0)[1], uqt, WORDING)


@pytest.mark.parametrize(("name", "parameters", "boxes"), [
    ("generalized_warner", {"p": 0.6, "q": 0.2}, ["Yes", "No", "Don't know"]),
    ("warner", {"p": 0.7}, ["Yes", "No"]),
    ("kuk", {"p": [0.7, 0.3], "repetitions": 3, "dont_know": 0.1}, ["0", "1", "2", "3",
                                                                     "Don't know"]),
    ("crosswise", {"p": 0.25}, ["Both the same (both yes or both no)",
                                "Different (one yes, one no)"]),
    ("triangular", {"p": 0.25, "dont_know": 0.2}, ["At least one yes", "Both no",
                                                   "Don't know"]),
    ("grr", {"p": 0.5, "categories": ["a", "b", "c"]}, ["a", "b", "c"]),
])
def test_answer_boxes_are_the_designs_responses(name, parameters, boxes):
    design = make_design(name, **parameters)
    assert [text for _, text in answer_options(design, WORDING)] == boxes
    labels = [label for label, _ in answer_options(design, WORDING)]
    assert set(labels) <= set(design.response_labels)


def test_a_missing_key_or_a_broken_placeholder_is_a_clear_error():
    with pytest.raises(ParameterError, match=r"wording key 'rule_say' is missing; add it to "
                                             r"your wording.json"):
        wording_text({}, "rule_say")
    with pytest.raises(ParameterError, match=r"x: rule_table \('If \{state, answer'\) is not a "
                                             r"valid text with placeholders"):
        check_placeholders({"rule_table": "If {state, answer"}, "x")
    # literal braces are written doubled
    check_placeholders({"rule_say": "Answer {{exactly}} {answer}"}, "x")


def test_every_shipped_text_is_written_once():
    # one wording for slips, dice, XLSForms and the web page: no text under two keys
    texts = list(WORDING.values())
    assert len(texts) == len(set(texts))
    assert not [key for key in WORDING if key.startswith("combined_")]
    for model in ("crosswise", "triangular"):
        assert {f"{model}_instructions", f"{model}_yes", f"{model}_no"} <= set(WORDING)


def test_the_web_progress_heading_is_checked_like_every_placeholder():
    assert WORDING["web_progress"] == "Question {number} of {total}"
    with pytest.raises(ParameterError, match=r"web_progress \('{n} of {total}'\) uses the "
                                             r"placeholder \{n\}; it allows \{number\}, "
                                             r"\{total\}"):
        check_placeholders({"web_progress": "{n} of {total}"}, "x")
