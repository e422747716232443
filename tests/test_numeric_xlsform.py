"""Numeric questions (type = "number", issue 23) in ``surveykit export xlsform``.

A survey mixing a yes/no question with three numeric ones (Eriksson's cards with "don't
know", Bar-Lev with a two-card deck and decimals, Eichhorn and Hayre with two dice) is
exported self-randomized and device-randomized, converted by pyxform, passed by ODK
Validate, and filled in JavaRosa (ODK Collect's engine) and ODK Web Forms' engine: a
reported number is taken, numbers no rule can give (outside the reported range, too many
decimals) are refused, "don't know" is taken, and the submission holds the reported value
and nothing random. ``survey add`` of numeric surveys is another helper's work, so the
export runs through the library function on a parsed survey
(:func:`surveykit.collection.xlsform.export_survey_xlsform`).
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from field_clients import FillJob, JavaRosa, WebForms, convert_many, fills_of, leaves

from surveykit.collection.numeric import number_rules
from surveykit.collection.randomizer import GRID_BITS, instruction_thresholds
from surveykit.collection.render import load_wording_defaults, make_environment
from surveykit.collection.xlsform import build_xlsform, export_survey_xlsform
from surveykit.definition.survey import parse_survey
from surveykit.designs.quantitative import QUANTITATIVE_PRESETS
from surveykit.errors import ParameterError
from surveykit.reading.columns import QuestionResolver
from tests.numeric_support import choice_question, hours_question, income_question, numeric_survey

PARTNERS = '''[[questions]]
id = "partners"
text = "How many sexual partners have you had?"
type = "number"
range = [0, 50]
decimals = 0
[questions.design]
model = "eichhorn_hayre"
scrambler = "dice"
'''
SURVEY = numeric_survey(
    choice_question(text="Have you ever cheated on a tax return?", p=0.75),
    income_question(text="How much income did you leave out of your last tax return?"),
    hours_question("How many hours a week do you work off the books?", unit="hours"),
    PARTNERS, title="Tax and time")
WORDING = load_wording_defaults(make_environment())
GRID = 1 << GRID_BITS
# What a respondent types: FIRST/SECOND (SECOND after the first question is cleared);
# NAME!=VALUE must be refused first.
NUMBER = {"respondent_id": "7KQ2-M9XD-4FRT-8BT", "cheat": "yes/no", "income_value": "5000",
          "income_dk": "dont_know", "hours": "12.5", "partners": "17"}
REFUSED = [("income_value", "-5"), ("income_value", "100001"), ("hours", "60.5"),
           ("hours", "1.25"), ("hours", "-1"), ("partners", "601")]
DONT_KNOW = {**NUMBER, "income_value": ""}


def _survey(text: str = SURVEY):
    return parse_survey(text, "tax.toml")


def _rows(form) -> dict[str, dict]:
    return {str(row["name"]): row for row in form.survey}


def _label(row) -> str:
    return next(iter(row["label"].values()))


def test_the_reported_range_is_every_number_a_rule_can_give_by_enumeration():
    """reported_range against brute force over the true range's ends and every card and
    die face: the interval arithmetic must hit the extremes exactly."""
    designs = [QUANTITATIVE_PRESETS["eriksson"](p=0.6, scrambler=[-3, 0, 1000, 5000]),
               QUANTITATIVE_PRESETS["eichhorn_hayre"](scrambler=[0.5, 1, 1.5]),
               QUANTITATIVE_PRESETS["bar_lev"](p=0.3, scrambler=[-2, 0.5]),
               QUANTITATIVE_PRESETS["chaudhuri_christofides"](scrambler=[[-1, 2], "die"]),
               QUANTITATIVE_PRESETS["diana_perri_1"](p=0.5, scrambler=[[1, 2], [-4, 3]]),
               QUANTITATIVE_PRESETS["diana_perri_2"](beta=0.25, scrambler=[[0.5, 2], [-8, 8]]),
               QUANTITATIVE_PRESETS["saha"](scrambler=["dice", [-10, 10]]),
               QUANTITATIVE_PRESETS["additive"](scrambler=[-7, 0, 7])]
    for design in designs:
        for low, high in ((0, 100), (-50, 20), (-9.5, -2.5)):
            reported = []
            for steps in design.protocol.groups:
                for step in steps:
                    names = step.scrambler_names
                    faces = [[float(v) for v in design.scramblers[n].values] for n in names]
                    for y in (low, high):
                        for values in itertools.product(*faces):
                            draws = {n: np.array([v]) for n, v in zip(names, values, strict=True)}
                            reported.append(float(step.answer(np.array([float(y)]), draws)[0]))
            assert design.reported_range(low, high) == (min(reported), max(reported)), design


def test_the_reported_range_is_unbounded_where_the_true_value_or_a_scrambler_is():
    eriksson = QUANTITATIVE_PRESETS["eriksson"](p=0.6, scrambler=[0, 10])
    assert eriksson.reported_range() == (-math.inf, math.inf)
    assert eriksson.reported_range(0, math.inf) == (0.0, math.inf)
    mix_exp = QUANTITATIVE_PRESETS["mix_exp"](p=0.6, mu=10)
    assert mix_exp.reported_range(0, 5) == (0.0, math.inf)
    # a scrambler of 0 times an unbounded value adds nothing, not NaN
    hayre = QUANTITATIVE_PRESETS["eichhorn_hayre"](scrambler=[0, 2])
    assert hayre.reported_range(0, math.inf) == (0.0, math.inf)


def test_simulated_answers_stay_in_the_reported_range():
    design = QUANTITATIVE_PRESETS["diana_perri_1"](p=0.4, scrambler=[[0.5, 1, 2], [-3, 4]])
    rng = np.random.default_rng(23)
    values = rng.uniform(-5, 30, 20_000)
    answers = design.simulate(values, rng=rng).answers
    low, high = design.reported_range(-5, 30)
    assert low <= answers.min() and answers.max() <= high
    # and the range is not loose: answers come within 2% of both ends
    assert answers.min() < low + 0.02 * (high - low) and answers.max() > high - 0.02 * (high - low)


def test_a_self_randomized_numeric_question_is_a_die_note_and_a_typed_number():
    rows = _rows(build_xlsform(_survey()))
    note = _label(rows["income_die"])
    assert note.startswith("Question 2 (d100): How much income")
    # 0.6 * 0.9 = 54%, 0.4 * 0.9 = 36%, 10% "don't know", and the cards: the die-mode
    # paper form's rules and device (the survey's wording), as for choice questions
    assert "Roll 1–54: Write your true value." in note
    assert "Roll 55–90: Write your number S, whatever your true value." in note
    assert "Roll 91–100: Answer \"don't know\", whatever the truth is." in note
    assert note.endswith("Your number S: roll in private and find your roll below.\n"
                         "Roll (d4) 1: 0\nRoll (d4) 2: 1000\nRoll (d4) 3: 5000\n"
                         "Roll (d4) 4: 20000")
    value = rows["income_value"]
    assert value["type"] == "integer" and "required" not in value
    assert _label(value) == ("Question 2. How much income did you leave out of your last "
                             "tax return? (EUR)")
    # the reported range: a card (up to 20000) or the true value (up to 100000)
    assert value["constraint"] == ". >= 0 and . <= 100000"
    dont_know = rows["income_dk"]
    assert dont_know["relevant"] == "${income_value} = ''" and dont_know["required"] == "yes"
    assert rows["income"]["type"] == "calculate"
    hours = rows["hours"]
    assert hours["type"] == "decimal" and hours["required"] == "yes"
    # y or y * S with S in {0.5, 1.5}: up to 60 hours, one decimal
    assert hours["constraint"] == (". >= 0 and . <= 60 and "
                                   "abs(. * 10 - round(. * 10)) < 0.000001")
    # the steps' formulas, escaped as every form text ("*" is Markdown to the clients)
    assert "\ny; y \\* S\nUnit: hours" in _label({"label": hours["hint"]})
    assert "Decimals at most: 1." in _label({"label": hours["constraint_message"]})
    # Eichhorn and Hayre: one step, nothing to roll, two dice give S
    assert _label(rows["partners_die"]).splitlines() == [
        "Question 4: How many sexual partners have you had?", "",
        "Multiply your true value by your number S and write the result. Round it to a "
        "whole number.", "",
        "Your number S: roll d6 + d6 in private and add up the faces shown."]
    assert rows["partners"]["constraint"] == ". >= 0 and . <= 600"
    # nothing random on a self-randomized form
    assert not [row for row in rows.values() if "random" in str(row.get("calculation", ""))
                or "random" in str(row.get("default", ""))]


@pytest.mark.parametrize(("design", "fragment"), [
    ('model = "mix_norm"\np = 0.7\nmu = 40\nsigma = 15',
     "scrambling number S is normal with mean 40 and sd 15, which no card deck or die gives"),
    ('model = "eichhorn_hayre"\nmu = 1.1\nsigma = 0.5',
     "scrambling number S is a scrambler with mean 1.1 and sd 0.5 (distribution not stated)"),
    ('model = "mix_unknown"\np = [0.6, 0.8]',
     "report their answer to an unrelated numeric question, whose text a survey file cannot "
     "give"),
])
@pytest.mark.parametrize("randomize", ["self", "device"])
def test_a_design_no_card_or_die_realizes_is_refused_in_one_line(tmp_path, design, fragment,
                                                                  randomize):
    text = SURVEY.replace('model = "eriksson"\np = 0.6\nscrambler = [0, 1000, 5000, 20000]',
                          design)
    out = tmp_path / "tax.xlsx"
    with pytest.raises(ParameterError) as raised:
        export_survey_xlsform(_survey(text), out=out, randomize=randomize,
                              acknowledge_risk=True)
    message = str(raised.value)
    assert message.startswith("question 'income': ") and fragment in message
    assert "\n" not in message and not out.exists()


def test_probabilities_no_die_gives_are_refused_naming_the_way_out():
    text = SURVEY.replace("p = 0.6\nscrambler", "p = 0.613\nscrambler")
    with pytest.raises(ParameterError, match=r"^question 'income': no die in d2, .* realizes "
                       r"the steps of eriksson \(truthful 0\.5517 .*export with "
                       r"--randomize device"):
        build_xlsform(_survey(text))
    # the device draws any probability
    assert "income_draw" in _rows(build_xlsform(_survey(text), randomize="device"))


def test_the_device_form_is_refused_without_the_acknowledged_risks(tmp_path):
    with pytest.raises(ParameterError, match="--randomize device is not private on every "
                                             "client"):
        export_survey_xlsform(_survey(), out=tmp_path / "tax.xlsx", randomize="device")


def test_numeric_texts_are_escaped_as_every_form_text():
    text = SURVEY.replace('unit = "EUR"', 'unit = "${cheat} *EUR*"')
    rows = _rows(build_xlsform(_survey(text)))
    assert _label(rows["income_value"]).endswith("($\u2060{cheat} \\*EUR\\*)")
    assert _label({"label": rows["income_value"]["hint"]}).endswith(
        "Unit: $\u2060{cheat} \\*EUR\\*")


@pytest.mark.parametrize("randomize", ["self", "device"])
def test_imports_ignore_every_field_of_the_form_but_the_id_and_the_answers(randomize):
    """The import reads the column named after each question and ignores the form's other
    fields (notes, draws, the typed number and "don't know" choice behind a numeric answer),
    so a KoboToolbox or ODK Central export of this form imports as it comes."""
    survey = _survey()
    resolver = QuestionResolver(survey)
    form = build_xlsform(survey, randomize=randomize)
    names = {str(row["name"]) for row in form.survey}
    answers = set(form.answer_fields) | {"respondent_id"}
    assert answers <= names and {"income_value", "income_dk"} <= names
    assert [name for name in sorted(names - answers) if not resolver.is_form_field(name)] == []
    assert [name for name in answers if resolver.is_form_field(name)] == []


# -- the field clients ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def xforms(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("numeric-xlsform")
    xlsforms = {}
    for randomize in ("self", "device"):
        xlsform = folder / f"tax-{randomize}.xlsx"
        export_survey_xlsform(_survey(), out=xlsform, randomize=randomize,
                              acknowledge_risk=True)
        xlsforms[randomize] = xlsform
    # pyxform, then ODK Validate on both in one run: no warning
    warnings = convert_many({x: x.with_suffix(".xml") for x in xlsforms.values()})
    assert list(warnings.values()) == [[], []]
    return {randomize: x.with_suffix(".xml") for randomize, x in xlsforms.items()}


def _refusals() -> dict[str, str]:
    """NAME!=BAD|BAD...: the numbers each client must refuse before the answer."""
    found: dict[str, list[str]] = {}
    for name, value in REFUSED:
        found.setdefault(f"{name}!", []).append(value)
    return {name: "|".join(values) for name, values in found.items()}


def _plain_text(shown: str) -> str:
    """A label as it reads: Markdown escapes undone, runs of spaces as one (Web Forms keeps
    the spaces pyxform writes around an output)."""
    return " ".join(re.sub(r"\\(.)", r"\1", shown).split())


def _picked(shares, draw: str) -> int:
    """Index of what ``draw`` picks with the slips' thresholds: k when draw 2^53 < t_k."""
    scaled = Fraction(float(draw)) * GRID  # the double the client drew, exactly
    for k, threshold in enumerate(instruction_thresholds(shares)):
        if scaled < threshold:
            return k
    raise AssertionError("unreachable: the last threshold is 2^53")


@dataclass(frozen=True)
class _Card:
    probability: Fraction


def _expected_note(question_id: str, number: int, draws: dict[str, str]) -> str:
    question = _survey().question(question_id)
    steps = question.design.protocol.groups[0]
    step = steps[_picked(steps, draws[f"{question_id}_draw"])] if len(steps) > 1 else steps[0]
    rule = next(rule for rule in number_rules(question, WORDING)[0] if rule.step == step)
    text = rule.device_text(WORDING)
    note = f"Question {number}. Your rule: {text}"
    for name in step.scrambler_names:
        points = question.design.scramblers[name].points()
        value, _ = points[_picked([_Card(p) for _, p in points], draws[f"{question_id}_draw_1"])]
        note += f" {name} = {value.numerator if value.denominator == 1 else float(value)}."
    return note


CLIENTS = {"javarosa": JavaRosa.shared, "webforms": WebForms}
# What a finalized submission may hold: the id, the answers, the helper fields of the
# "don't know" choice, and the engines' metadata.
ALLOWED = {"respondent_id", "cheat", "income", "income_value", "income_dk", "hours",
           "partners", "instanceID", "instanceName"}


ANSWERS = {"number": NUMBER, "dont_know": DONT_KNOW}


@pytest.fixture(scope="module")
def filled(xforms, tmp_path_factory):
    """client name -> (answers, randomize) -> its fill or the HarnessError that stopped it:
    the four fills of a client in one run of its harness (a JVM or Node start costs
    seconds), made when a test first asks for that client."""
    runs = {}

    def of(client_name: str):
        if client_name not in runs:
            folder = tmp_path_factory.mktemp(f"numeric-fills-{client_name}")
            keys = [(answers, randomize) for answers in ANSWERS for randomize in xforms]
            jobs = [FillJob(xform=xforms[randomize], out=folder / f"{answers}-{randomize}",
                            answers={**ANSWERS[answers], **_refusals()})
                    for answers, randomize in keys]
            runs[client_name] = dict(zip(keys, CLIENTS[client_name]().fill_many(jobs),
                                         strict=True))
        return runs[client_name]
    return of


@pytest.mark.parametrize("client_name", sorted(CLIENTS))
@pytest.mark.parametrize("randomize", ["self", "device"])
@pytest.mark.parametrize("answers", [NUMBER, DONT_KNOW], ids=["number", "dont_know"])
def test_each_client_takes_the_reported_number_refuses_impossible_ones_and_stores_no_draw(
        filled, client_name, randomize, answers):
    key = "number" if answers is NUMBER else "dont_know"
    [fill] = fills_of(filled(client_name)[key, randomize])
    submission = leaves(fill.submission)
    filled = {name: text for name, text in submission.items() if text}
    assert set(filled) <= ALLOWED, filled
    assert not [name for name in submission if re.search(r"_(draw|code)(_\d+)?$",
                                                          name)]
    assert filled["cheat"] == "no"          # the second answer, after clearing the first
    assert filled["hours"] == "12.5" and filled["partners"] == "17"
    if answers is NUMBER:
        assert filled["income"] == filled["income_value"] == "5000"
        assert "income_dk" not in filled    # not relevant once a number is typed
    else:
        assert filled["income"] == filled["income_dk"] == "dont_know"
        assert "income_value" not in filled
    # every impossible number was refused, in the first pass
    refused = [(name, text[len("REFUSED "):]) for step, name, text in fill.events
               if step == "fill" and text.startswith("REFUSED ")]
    assert refused == REFUSED
    shown = fill.shown("fill")
    if randomize == "self":
        assert "Roll 55–90: Write your number S, whatever your true value." in \
            _plain_text(shown["income_die"])
        assert not [name for name in leaves(fill.start) if "draw" in name]
    else:
        # one rule per question, the one the slips' thresholds give for the draws the
        # client made (read from the draft saved when the form opened: limit 2 of device
        # forms, as for choice questions), with the card the thresholds give
        draws = leaves(fill.start)
        for question, number in (("income", 2), ("hours", 3), ("partners", 4)):
            notes = [_plain_text(text) for name, text in shown.items()
                     if name.startswith(f"{question}_rule_")]
            assert notes == [_expected_note(question, number, draws)], question
