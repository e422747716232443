"""Numeric questions on ``surveykit serve`` (issue 23): the browser draws, only the number leaves.

* the page data: each numeric question's steps with the thresholds slips use,
  its scramblers (a deck's cards with exact thresholds of their own, the
  continuous kinds with their parameters), the answers its design can give
  for its range; a scrambler the page cannot draw is one line at start;
* the server, over real HTTP on SQLite and PostgreSQL: a typed number is
  stored as canonical text, once (the same number again changes nothing);
  text, NaN, exponents, too many decimals, huge strings, JSON numbers and
  numbers no respondent can report are one line of JSON each, and nothing is
  stored;
* Chromium: a respondent answers with scripted draws (the rule and numbers
  shown are the ones the thresholds and the inversion formulas give), goes
  Back (nothing is drawn again) and submits; the request carries the typed
  number only and the row holds its canonical text; with the page's own
  crypto.getRandomValues the numbers it shows follow the scramblers'
  distributions (chi-square for dice, Kolmogorov-Smirnov for the continuous
  kinds).
"""

from __future__ import annotations

import json
import math
import re
import shutil
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from migrated import DATABASES, migrated_database, migrated_sqlite
from scipy import stats
from sqlalchemy import Engine, select

from surveykit import store
from surveykit.cli import main
from surveykit.collection.randomizer import instruction_thresholds
from surveykit.collection.render import load_wording_defaults, make_environment
from surveykit.collection.webform import build_web_form
from surveykit.definition.survey import parse_survey
from surveykit.designs.quantitative import QUANTITATIVE_PRESETS
from surveykit.designs.scramblers import Deck
from surveykit.errors import ParameterError
from surveykit.store import database
from surveykit.web.app import create_app
from tests.numeric_support import choice_question, income_question, numeric_survey
from tests.test_web_app import page_token, post
from tests.test_web_browser import Watched, counted_uniforms
from tests.web_support import launch_chromium, serving, snapshot

WORDING = load_wording_defaults(make_environment())
GRID = 2 ** 53

# A choice question, Eriksson's cards with "don't know", and y * W + S2 with W uniform on
# [1, 2] and S2 a card from 0..3 (Chaudhuri and Christofides); markup in every text the
# author typed.
DAYS = '''[[questions]]
id = "days"
text = "On how many days?"
type = "number"
range = [0, 30]
decimals = 1
[questions.design]
model = "chaudhuri_christofides"
scrambler = ["uniform", [0, 1, 2, 3]]
mu = [1.5, 1.5]
sigma = [0.28867513459481287, 1.118033988749895]
'''
NUMERIC = numeric_survey(
    choice_question(),
    income_question(text='How much did you <img src=x onerror=\\"window.pwned = 1\\"> not declare?',
                    unit="<i>EUR</i>"),
    DAYS, title="Tax <b>survey</b>")


def add(engine: Engine, text: str = NUMERIC):
    survey = parse_survey(text)
    store.add_survey(engine, survey)
    return survey, build_web_form(survey, wording_defaults=WORDING)


def stored(engine: Engine) -> dict[tuple[str, str], str]:
    """(respondent, question) -> stored answer."""
    responses, questions = database.responses, database.questions
    query = select(responses.c.respondent_id, questions.c.name, responses.c.answer).join(
        questions, questions.c.id == responses.c.question_id)
    with engine.connect() as conn:
        return {(rid, name): answer for rid, name, answer in conn.execute(query)}


# -- the page data -------------------------------------------------------------------------


def test_the_page_data_carries_each_numeric_step_and_the_exact_thresholds_of_the_cards():
    survey = parse_survey(NUMERIC)
    form = build_web_form(survey, wording_defaults=WORDING)
    cheat, income, days = form.questions
    assert cheat.number_answer is None and cheat.to_dict()["type"] == "choice"
    data = income.to_dict()
    assert data["type"] == "number" and data["number"] == 2
    assert data["progress"] == "Question 2 of 3"
    steps = survey.questions[1].design.protocol.for_group(0)
    assert [rule["below"] for rule in data["rules"][0]] == list(instruction_thresholds(steps))
    # truthful 0.6 * 0.9, a card 0.4 * 0.9, don't know 0.1: exact on the 2^53 grid
    assert [rule["below"] for rule in data["rules"][0]] == [
        round(Fraction(54, 100) * GRID), round(Fraction(90, 100) * GRID), GRID]
    assert [rule["kind"] for rule in data["rules"][0]] == ["truthful", "draw", "dont_know"]
    assert data["rules"][0][1]["lines"] == [WORDING["web_number_draw"]]
    deck = data["number_answer"]["scramblers"]["S"]
    assert deck == {"kind": "deck", "decimals": 0, "values": [0.0, 1000.0, 5000.0, 20000.0],
                    "below": [GRID // 4, GRID // 2, 3 * GRID // 4, GRID], "parameters": {}}
    # the typed number: whole, within what the design can give for [0, 100000] (a card or
    # the true value), with half a unit for rounding; "don't know" is a button
    answer = data["number_answer"]
    assert (answer["unit"], answer["decimals"], answer["step"]) == ("<i>EUR</i>", 0, "1")
    assert (answer["low"], answer["high"]) == (-0.5, 100000.5)
    assert answer["range_problem"] == "Type a number from 0 to 100000."
    assert data["answers"] == [{"label": "dont_know", "text": WORDING["answer_dont_know"]}]
    # y * W + S2: one step (nothing to draw), W shown to 3 decimals (sd 0.289), the cards whole
    rule, = days.to_dict()["rules"][0]
    assert (rule["multiplier"], rule["offset"], rule["factor_decimals"],
            rule["offset_decimals"]) == ("S1", "S2", 3, 0)
    assert rule["lines"] == [WORDING["web_number_linear"],
                             "Round the result to the nearest 0.1."]
    scramblers = days.number_answer.to_dict()["scramblers"]
    assert scramblers["S1"]["kind"] == "uniform" and scramblers["S1"]["decimals"] == 3
    assert scramblers["S1"]["parameters"] == pytest.approx({"low": 1.0, "high": 2.0})
    assert (days.number_answer.low, days.number_answer.high) == (-0.05, 63.05)
    assert days.answers == ()  # no "don't know" branch, no button


# Every preset with scramblers the page can draw (parameters as in RRTCS's and RRreg's
# examples, distributions stated).
PRESETS = {"eriksson": "p = 0.6\nscrambler = [1, 2, 3]",
           "eichhorn_hayre": "scrambler = \"uniform\"\nmu = 1.5\nsigma = 0.28867513459481287",
           "bar_lev": "p = 0.6\nscrambler = \"die\"",
           "chaudhuri_christofides": "scrambler = [[1, 2], [0, 5]]",
           "diana_perri_1": "p = 0.6\nscrambler = [[1, 2], [0, 1, 2]]",
           "diana_perri_2": "beta = 0.3\nscrambler = [[1, 2], [0, 1, 2]]",
           "saha": "scrambler = [[1, 2], [1, 2, 3]]",
           "mix_norm": "p = 0.7\nmu = 40\nsigma = 15", "mix_exp": "p = 0.7\nmu = 40",
           "mix_unknown": "p = [0.6, 0.8]",
           "additive": "scrambler = \"laplace\"\nmu = 0\nsigma = 10"}
TEMPLATES = {"truthful": "web_number_truthful", "draw": "web_number_draw",
             "dont_know": "rule_dont_know", "unrelated": "web_number_unrelated"}


def test_every_numeric_preset_is_served_with_its_steps_and_scramblers():
    assert set(PRESETS) == set(QUANTITATIVE_PRESETS)
    for model, parameters in PRESETS.items():
        text = (f'name = "s"\ntitle = "S"\n[[questions]]\nid = "n"\ntext = "How many?"\n'
                f'type = "number"\ndecimals = 2\n[questions.design]\nmodel = "{model}"\n'
                f'{parameters}\ndont_know = 0.125\n')
        design = parse_survey(text).questions[0].design
        question = build_web_form(parse_survey(text), wording_defaults=WORDING).questions[0]
        assert len(question.rules) == len(design.group_names), model
        for steps, rules in zip(design.protocol.groups, question.rules, strict=True):
            assert [rule.below for rule in rules] == list(instruction_thresholds(steps))
            for step, rule in zip(steps, rules, strict=True):
                unrelated = step.offset == "X"
                assert rule.kind == ("unrelated" if unrelated else step.kind), model
                if rule.kind in TEMPLATES:
                    assert rule.lines[0] == WORDING[TEMPLATES[rule.kind]], model
                    continue
                # a scrambled step: W (c y + k U) + V as factor and offset, then rounding
                assert (rule.multiplier, rule.inner, rule.offset) == (
                    step.multiplier, step.inner, step.offset), model
                assert rule.coefficient == float(step.coefficient), model
                assert rule.lines[1] == "Round the result to the nearest 0.01.", model
        drawn = {name for steps in design.protocol.groups for step in steps
                 for name in step.scrambler_names}
        assert set(question.number_answer.scramblers) == drawn, model
        assert question.answers == (("dont_know", WORDING["answer_dont_know"]),), model
    # Diana and Perri's model 2, W (0.3 U + 0.7 y): factor 0.7 W, offset 0.3 W U, cards whole
    text = ('name = "s"\ntitle = "S"\n[[questions]]\nid = "n"\ntext = "How many?"\n'
            'type = "number"\n[questions.design]\nmodel = "diana_perri_2"\n'
            + PRESETS["diana_perri_2"])
    rule, = build_web_form(parse_survey(text), wording_defaults=WORDING).questions[0].rules[0]
    assert (rule.coefficient, rule.inner_coefficient) == (0.7, 0.3)
    assert (rule.factor_decimals, rule.offset_decimals) == (1, 1)
    assert rule.lines[0] == WORDING["web_number_linear"]


def test_every_numeric_preset_with_a_range_is_served_and_says_only_finite_limits(
        tmp_path):
    """A range with an unbounded scrambler (normal, exponential, Laplace) crashed survey
    add: the page's range message printed the reported range's infinite end. Now an
    unbounded side is no limit: mix_norm's page checks no range and says nothing, mix_exp's
    only its lowest number, a card deck's both."""
    for model, parameters in PRESETS.items():
        text = (f'name = "s"\ntitle = "S"\n[[questions]]\nid = "n"\ntext = "How many?"\n'
                f'type = "number"\nrange = [0, 100]\n[questions.design]\nmodel = "{model}"\n'
                f'{parameters}\n')
        answer = build_web_form(parse_survey(text),
                                wording_defaults=WORDING).questions[0].number_answer
        low, high = parse_survey(text).questions[0].design.reported_range(0.0, 100.0)
        assert answer.low == (None if math.isinf(low) else low), model
        assert answer.high == (None if math.isinf(high) else high), model
        if answer.low is None and answer.high is None:
            assert answer.range_problem == "", model
        else:
            assert answer.range_problem.startswith("Type a number from "), model
            assert ("∞" in answer.range_problem) == (answer.high is None
                                                     or answer.low is None), model
    url = migrated_sqlite(tmp_path / "ranges.db")
    expected = {"mix_norm": (None, None, ""),
                "mix_exp": (0.0, None, "Type a number from 0 to ∞."),
                "eriksson": (0.0, 100.0, "Type a number from 0 to 100.")}
    for model, (low, high, said) in expected.items():
        text = (f'name = "s"\ntitle = "S"\n[[questions]]\nid = "n"\ntext = "How many?"\n'
                f'type = "number"\nrange = [0, 100]\n[questions.design]\nmodel = "{model}"\n'
                f'{PRESETS[model]}\n')
        answer = build_web_form(parse_survey(text),
                                wording_defaults=WORDING).questions[0].number_answer
        assert (answer.low, answer.high, answer.range_problem) == (low, high, said), model
        survey_file = tmp_path / f"{model}.toml"
        survey_file.write_text(text.replace('name = "s"', f'name = "{model}"'),
                               encoding="utf-8")
        result = CliRunner().invoke(main, ["survey", "add", str(survey_file), "--db", url])
        assert result.exit_code == 0, (model, result.output)


def test_dice_are_drawn_by_the_exact_probabilities_of_their_totals():
    text = ('name = "d"\ntitle = "D"\n[[questions]]\nid = "n"\ntext = "How many?"\n'
            'type = "number"\n[questions.design]\nmodel = "eichhorn_hayre"\nscrambler = "dice"\n')
    form = build_web_form(parse_survey(text), wording_defaults=WORDING)
    dice = form.questions[0].number_answer.scramblers["S"]
    assert dice.values == tuple(float(v) for v in range(2, 13))
    # P(total t) = (6 - |t - 7|) / 36, cumulated and rounded on the grid
    cumulative = [sum(Fraction(6 - abs(t - 7), 36) for t in range(2, top + 1))
                  for top in range(2, 13)]
    assert dice.below == tuple(round(c * GRID) for c in cumulative)
    assert Deck.dice(2).points()[5] == (7, Fraction(1, 6))


def test_a_scrambler_known_only_by_its_mean_and_sd_cannot_be_served(tmp_path):
    text = ('name = "m"\ntitle = "M"\n[[questions]]\nid = "n"\ntext = "How many?"\n'
            'type = "number"\n[questions.design]\nmodel = "eichhorn_hayre"\nmu = 1.1\n'
            'sigma = 0.5\n')
    sqlite_url = migrated_sqlite(tmp_path / "m.db")
    engine = store.open_engine(sqlite_url)
    store.add_survey(engine, parse_survey(text))
    engine.dispose()
    result = CliRunner().invoke(main, ["serve", "--survey", "m", "--db", sqlite_url])
    assert result.exit_code != 0
    assert result.stderr == (
        "Error: question 'n': the web page cannot draw scrambler S, a scrambler with mean 1.1 "
        "and sd 0.5 (distribution not stated): give its distribution in the survey file "
        "(scrambler = \"uniform\", \"normal\", \"laplace\", \"exponential\", \"die\", \"dice\" "
        "or a list of card values)\n")


def test_cards_with_more_decimals_than_the_answer_allows_cannot_be_served(tmp_path):
    text = NUMERIC.replace("scrambler = [0, 1000, 5000, 20000]", "scrambler = [0, 0.5, 1]")
    engine = store.open_engine(migrated_sqlite(tmp_path / "tax.db"))
    store.add_survey(engine, parse_survey(text))
    with pytest.raises(ParameterError, match=r"^question 'income': scrambler S has cards with 1 "
                                        r"decimals, more than the question's decimals = 0"):
        create_app(engine, "tax")
    engine.dispose()


# -- the server ----------------------------------------------------------------------------


@contextmanager
def client(engine: Engine) -> Iterator[httpx.Client]:
    with serving(create_app(engine, "tax", rate_limit=0)) as url, \
            httpx.Client(base_url=url, timeout=30) as http:
        yield http


def test_the_server_stores_a_typed_number_as_canonical_text_once(engine: Engine):
    add(engine)
    with client(engine) as http:
        token = page_token(http)
        served = http.get("/survey.json")
        assert served.json()["questions"][1]["number_answer"]["step"] == "1"
        first = post(http, "/submit", {"respondent_id": "r-1", "answers": {
            "cheat": "no", "income": "0012000", "days": "-0.0"}}, token)
        assert first.status_code == 201, first.text
        # the same numbers, written otherwise: nothing changes
        again = post(http, "/submit", {"respondent_id": "r-1", "answers": {
            "cheat": "no", "income": "12000", "days": "0.00"}}, token)
        assert (again.status_code, again.json()) == (200, {"status": "already_recorded"})
        other = post(http, "/submit", {"respondent_id": "r-1", "answers": {
            "cheat": "no", "income": "12001", "days": "0"}}, token)
        assert other.status_code == 409
        told = post(http, "/submit", {"respondent_id": "r-2", "answers": {
            "income": "dont_know", "days": "63.0"}}, token)
        assert told.status_code == 201, told.text
    assert stored(engine) == {("r-1", "cheat"): "no", ("r-1", "income"): "12000",
                              ("r-1", "days"): "0", ("r-2", "income"): "dont_know",
                              ("r-2", "days"): "63"}
    # numeric answers are not tallied per value; the choice answer is
    with engine.connect() as conn:
        counted = conn.execute(select(database.answer_counts.c.answer)).scalars().all()
    assert counted == ["no"]


BAD = [
    ("income", "abc", "must be a number or \"dont_know\", as a text of digits"),
    ("income", "NaN", "must be a number or \"dont_know\", as a text of digits"),
    ("income", "Infinity", "must be a number or \"dont_know\", as a text of digits"),
    ("income", "1e3", "must be a number or \"dont_know\", as a text of digits"),
    ("income", "1,200", "must be a number or \"dont_know\", as a text of digits"),
    ("income", " 12", "must be a number or \"dont_know\", as a text of digits"),
    ("income", "", "must be a number or \"dont_know\", as a text of digits"),
    ("income", "9" * 4000, "must be a number or \"dont_know\", as a text of digits"),
    ("income", "1" * 16, "must be a number or \"dont_know\", as a text of digits"),
    ("income", 12, "must be a number or \"dont_know\", as a text of digits"),
    ("income", None, "must be a number or \"dont_know\", as a text of digits"),
    ("income", "12.5", "must have at most 0 decimals"),
    ("days", "1.25", "must have at most 1 decimal"),
    ("income", "-1", "must be between -0.5 and 100000"),
    ("income", "100001", "must be between -0.5 and 100000"),
    ("days", "dont_know", "must be a number, as a text of digits"),
]


@pytest.fixture(scope="module", params=DATABASES)
def tax_server(request, tmp_path_factory) -> Iterator[tuple[Engine, httpx.Client, str]]:
    """The tax survey served once per database (SQLite, PostgreSQL) for the bad numbers:
    each is refused and checks that the database is as it was before it, so one server
    and one database serve them all. Its engine, a client and the page's CSRF token."""
    with migrated_database(request.param, tmp_path_factory.mktemp("tax")) as url:
        engine = store.open_engine(url)
        try:
            add(engine)
            with client(engine) as http:
                yield engine, http, page_token(http)
        finally:
            engine.dispose()


@pytest.mark.parametrize(("question", "value", "message"), BAD,
                         ids=[f"{q}-{str(v)[:12]}" for q, v, _ in BAD])
def test_a_bad_number_is_one_line_of_json_and_nothing_is_stored(
        tax_server, question: str, value, message: str):
    engine, http, token = tax_server
    before = snapshot(engine)
    answers = {"cheat": "yes", "income": "100", "days": "1.5", question: value}
    reply = post(http, "/submit", {"respondent_id": "bad-1", "answers": answers}, token)
    assert reply.status_code == 422
    assert reply.json()["reason"] == "invalid"
    assert message in reply.json()["error"]
    assert f"question {question!r}" in reply.json()["error"]
    assert "\n" not in reply.text
    if isinstance(value, str) and len(value) > 3:
        assert value not in reply.text  # what the client sent is never repeated
    assert snapshot(engine) == before


# -- Chromium ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with launch_chromium() as launched:
        yield launched


def uniform_open(value: int) -> float:
    """The page's uniform on (0, 1) from U: (floor(U / 2) + 1/2) / 2^52."""
    return ((value >> 1) + 0.5) / 2 ** 52


def trimmed(value: float, decimals: int) -> str:
    text = f"{value:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def test_a_respondent_answers_numeric_questions_and_only_the_typed_numbers_are_sent(
        browser, engine: Engine):
    survey, form = add(engine)
    cheat, income, days = form.questions
    income_rules = income.rules[0]
    deck = income.number_answer.scramblers["S"]
    cards = days.number_answer.scramblers["S2"]
    w_draw = 3_141_592_653_589_793 * 2  # the page's uniform: 0.697567..., W = 1.698 (no tie)
    # draws in order: cheat's rule (truthful), income's rule (a card), the card (index 2,
    # 5000), days' W (uniform on [1, 2]) and its card S2 (index 2: 2); one step, no rule draw
    values = [0, income_rules[0].below, deck.below[1], w_draw, cards.below[1]]
    w = round(1 + uniform_open(w_draw), 3)
    factor = trimmed(w, 3)
    assert factor == "1.698"
    with serving(create_app(engine, "tax")) as url:
        watched = Watched(browser)
        watched.page.add_init_script(counted_uniforms(values))
        watched.start(url, "NUM-1")
        page = watched.page
        page.get_by_text(cheat.progress, exact=True).wait_for()
        page.get_by_role("button", name="Yes", exact=True).click()
        page.get_by_text(income.progress, exact=True).wait_for()
        # the author's text and unit are shown as text, never as markup
        assert page.locator("#question-text").inner_text() == survey.questions[1].text
        assert (page.locator("#number-label").inner_text()
                == "The number your rule gives (<i>EUR</i>)")
        assert page.evaluate("window.pwned") is None
        assert page.locator("main img, main i").count() == 0
        assert watched.rule() == "Type 5000, whatever your true answer is."
        assert page.get_by_role("button", name=WORDING["answer_dont_know"]).is_visible()
        # the page refuses what the server would, before anything is sent
        for typed, problem in (("12.5", WORDING["web_number_whole"]),
                               ("-3", "Type a number from 0 to 100000."),
                               ("", WORDING["web_number_invalid"])):
            page.locator("#number-input").fill(typed)
            page.locator("#number-next").click()
            assert page.locator("#number-problem").inner_text() == problem
        page.locator("#number-input").fill("5000")
        page.keyboard.press("Enter")
        page.get_by_text(days.progress, exact=True).wait_for()
        expected_rule = (f"Multiply your true answer by {factor}, add 2 and type the result.\n"
                         "Round the result to the nearest 0.1.")
        assert watched.rule() == expected_rule
        assert page.get_by_role("button", name=WORDING["answer_dont_know"]).count() == 0
        page.locator("#number-input").fill("9.40")
        page.locator("#number-next").click()
        page.get_by_text(WORDING["web_done"]).wait_for()
        items = page.locator("#review-list li")
        assert [items.nth(i).locator("p").all_text_contents() for i in range(3)] == [
            [cheat.text, "Yes"], [income.text, "5000 <i>EUR</i>"], [days.text, "9.40"]]
        assert factor not in page.locator("#review").inner_text()
        # Back to the last question: the same rule and numbers, the number typed, no draw
        page.locator("#review-back").click()
        page.get_by_text(days.progress, exact=True).wait_for()
        assert watched.rule() == expected_rule
        assert page.locator("#number-input").input_value() == "9.40"
        page.locator("#back-button").click()
        page.get_by_text(income.progress, exact=True).wait_for()
        assert watched.rule() == "Type 5000, whatever your true answer is."
        assert page.evaluate("window.draws") == 5
        page.locator("#number-next").click()
        page.get_by_text(days.progress, exact=True).wait_for()
        page.locator("#number-next").click()
        page.get_by_role("button", name=WORDING["web_submit"]).click()
        page.get_by_text(WORDING["web_thanks"]).wait_for()
        assert page.evaluate("window.draws") == 5
        bodies = [(address.rsplit("/", 1)[1], json.loads(data))
                  for method, address, data in watched.requests if method == "POST"]
        assert bodies == [("start", {"respondent_id": "NUM-1"}),
                          ("submit", {"respondent_id": "NUM-1", "answers": {
                              "cheat": "yes", "income": "5000", "days": "9.40"}})]
        sent = "".join(f"{address} {data}" for _, address, data in watched.requests)
        assert factor not in sent and "Multiply" not in sent
        assert watched.errors == []
        watched.close()
        # "don't know" is a button where the design has that branch
        other = Watched(browser)
        other.start(url, "NUM-2")
        other.page.get_by_text(cheat.progress, exact=True).wait_for()
        other.page.get_by_role("button", name="No", exact=True).click()
        other.page.get_by_text(income.progress, exact=True).wait_for()
        other.page.get_by_role("button", name=WORDING["answer_dont_know"]).click()
        other.page.get_by_text(days.progress, exact=True).wait_for()
        other.page.locator("#number-input").fill("0")
        other.page.locator("#number-next").click()
        other.page.get_by_role("button", name=WORDING["web_submit"]).click()
        other.page.get_by_text(WORDING["web_thanks"]).wait_for()
        assert other.errors == []
        other.close()
    assert stored(engine) == {
        ("NUM-1", "cheat"): "yes", ("NUM-1", "income"): "5000", ("NUM-1", "days"): "9.4",
        ("NUM-2", "cheat"): "no", ("NUM-2", "income"): "dont_know", ("NUM-2", "days"): "0"}


# One question per continuous kind (sd 10: shown to 1 decimal) and the sum of two dice,
# each "report your true value plus S", repeated.
KINDS = {"normal": "scrambler = \"normal\"\nmu = 0\nsigma = 10",
         "laplace": "scrambler = \"laplace\"\nmu = 0\nsigma = 10",
         "uniform": "scrambler = \"uniform\"\nmu = 0\nsigma = 10",
         "exponential": "scrambler = \"exponential\"\nmu = 10",
         "dice": "scrambler = \"dice\""}
REPEATS = 120


def kinds_survey() -> str:
    text = 'name = "kinds"\ntitle = "Kinds"\n'
    for i in range(REPEATS):
        for kind, parameters in KINDS.items():
            text += (f'[[questions]]\nid = "{kind}_{i}"\ntext = "How many?"\ntype = "number"\n'
                     f'[questions.design]\nmodel = "additive"\n{parameters}\n')
    return text


@pytest.fixture(scope="module")
def kinds_database(tmp_path_factory) -> tuple[Path, object]:
    """A database at head holding kinds_survey, and its web form, built once (600 questions:
    reading the survey takes most of a second): each test works on a copy (kinds_engine)."""
    path = tmp_path_factory.mktemp("kinds") / "kinds.db"
    survey = parse_survey(kinds_survey())
    engine = store.open_engine(migrated_sqlite(path))
    try:
        store.add_survey(engine, survey)
    finally:
        engine.dispose()
    return path, build_web_form(survey, wording_defaults=WORDING)


@pytest.fixture
def kinds_engine(kinds_database, tmp_path) -> Iterator[tuple[Engine, object]]:
    """A copy of kinds_database and the survey's web form."""
    path, form = kinds_database
    shutil.copyfile(path, tmp_path / "kinds.db")
    engine = store.open_engine(f"sqlite:///{tmp_path / 'kinds.db'}")
    try:
        yield engine, form
    finally:
        engine.dispose()


def test_the_inversion_formulas_give_the_quantiles_of_each_kind(browser, kinds_engine):
    # scripted uniforms: each continuous draw is the scrambler's quantile at the page's u
    # (scipy as the oracle); the normal is Box and Muller's (1958) pair of uniforms
    engine, form = kinds_engine
    picks = [123_456_789_012_345 * 2, 7_000_000_000_000_000, 9_007_199_254_740_991 - 1,
             1_000_000_000 * 2]
    u = [uniform_open(v) for v in picks]
    sqrt3, sqrt2 = math.sqrt(3), math.sqrt(2)
    expected = {
        "normal": 10 * math.sqrt(-2 * math.log(u[0])) * math.cos(2 * math.pi * u[1]),
        "laplace": stats.laplace.ppf(u[2], 0, 10 / sqrt2),
        "uniform": stats.uniform.ppf(u[3], -10 * sqrt3, 20 * sqrt3),
        "exponential": stats.expon.ppf(1 - u[0], 0, 10),
    }
    # draws: normal takes two uniforms, then laplace, uniform, exponential, dice (U = 0: 2)
    values = [picks[0], picks[1], picks[2], picks[3], picks[0], 0]
    with serving(create_app(engine, "kinds")) as url:
        watched = Watched(browser)
        watched.page.add_init_script(counted_uniforms(values))
        watched.start(url, "inv-1")
        shown = {}
        for question, kind in zip(form.questions, KINDS, strict=False):
            watched.page.get_by_text(question.progress, exact=True).wait_for()
            shown[kind] = watched.rule()
            watched.page.locator("#number-input").fill("1")
            watched.page.locator("#number-next").click()
        assert watched.errors == []
        watched.close()
    for kind, value in expected.items():
        assert shown[kind] == f"Add {trimmed(value, 1)} to your true answer and type the " \
                              "result.", kind
    assert shown["dice"] == "Add 2 to your true answer and type the result."


def test_the_numbers_the_page_draws_follow_the_scramblers_distributions(browser,
                                                                        kinds_engine):
    engine, form = kinds_engine
    sessions = 4  # x 120 questions per kind: 480 draws of each
    lines: list[str] = []
    with serving(create_app(engine, "kinds", rate_limit=0)) as url:
        watched = Watched(browser)
        for session in range(sessions):
            watched.start(url, f"dist-{session}")
            watched.page.get_by_text(form.questions[0].progress, exact=True).wait_for()
            # the same handlers a person's typing runs: read the rule, type 1, press Next
            lines += watched.page.evaluate("""(count) => {
                const seen = [];
                for (let i = 0; i < count; i++) {
                    seen.push(document.getElementById("rule-lines").innerText);
                    document.getElementById("number-input").value = "1";
                    document.getElementById("number-next").click();
                }
                return seen;
            }""", len(form.questions))
            watched.page.get_by_role("button", name=WORDING["web_submit"]).click()
            watched.page.get_by_text(WORDING["web_thanks"]).wait_for()
        assert watched.errors == []
        watched.close()
    drawn: dict[str, list[float]] = {kind: [] for kind in KINDS}
    kinds = list(KINDS) * REPEATS * sessions
    for kind, line in zip(kinds, lines, strict=True):
        drawn[kind].append(float(re.fullmatch(r"Add (-?[0-9.]+) to .*", line).group(1)))
    # Chromium's generator cannot be seeded: each check fails by chance once in 10^6 runs.
    # Draws are shown to 1 decimal: the distribution functions are of the rounded draw
    # (the continuous one moves by at most density * 0.05 < 0.002, far inside the bounds).
    sqrt3, sqrt2 = math.sqrt(3), math.sqrt(2)
    continuous = {"normal": stats.norm(0, 10), "laplace": stats.laplace(0, 10 / sqrt2),
                  "uniform": stats.uniform(-10 * sqrt3, 20 * sqrt3),
                  "exponential": stats.expon(0, 10)}
    for kind, law in continuous.items():
        values = drawn[kind]
        assert all(round(v, 1) == v for v in values), kind
        result = stats.kstest(values, law.cdf)
        assert result.pvalue > 1e-6, (kind, result)
        # the mean within 5 standard errors
        assert abs(sum(values) / len(values) - law.mean()) < 5 * law.std() / len(values) ** 0.5
    totals = Counter(drawn["dice"])
    assert set(totals) <= {float(t) for t in range(2, 13)}
    n = len(drawn["dice"])
    expected = [n * (6 - abs(t - 7)) / 36 for t in range(2, 13)]
    chi2 = sum((totals[float(t)] - e) ** 2 / e for t, e in zip(range(2, 13), expected,
                                                                strict=True))
    assert chi2 < stats.chi2.isf(1e-6, df=10), (chi2, totals)
    assert len(stored(engine)) == sessions * len(form.questions)



def test_mix_unknown_draws_from_the_group_of_the_issued_id(browser, tmp_path):
    # RRreg's mix.unknown: truthful with p = 0.6 in group 1 and 0.8 in group 2, otherwise the
    # unrelated question (its text from the question's wording); U = 0.7 * 2^53 falls on the
    # unrelated step in group 1 and on the truthful one in group 2
    text = ('name = "mix"\ntitle = "Mix"\n[[questions]]\nid = "partners"\n'
            'text = "How many partners?"\ntype = "number"\ndecimals = 0\n'
            '[questions.wording]\nweb_number_unrelated = "Type your shoe size instead."\n'
            '[questions.design]\nmodel = "mix_unknown"\np = [0.6, 0.8]\n')
    engine = store.open_engine(migrated_sqlite(tmp_path / "mix.db"))
    survey, form = add(engine, text)
    database.record_generation(engine, "mix", ["MIX-1", "MIX-2"], {}, groups=[1, 2])
    question = form.questions[0]
    middle = 7 * GRID // 10
    with serving(create_app(engine, "mix")) as url:
        # one page, loaded afresh for each respondent (the script runs again on each load)
        watched = Watched(browser)
        watched.page.add_init_script(counted_uniforms([middle]))
        for respondent, shown, typed in (("MIX-1", "Type your shoe size instead.", "42"),
                                         ("MIX-2", WORDING["web_number_truthful"], "3")):
            watched.start(url, respondent)
            watched.page.get_by_text(question.progress, exact=True).wait_for()
            assert watched.rule() == shown
            watched.page.locator("#number-input").fill(typed)
            watched.page.locator("#number-next").click()
            watched.page.get_by_role("button", name=WORDING["web_submit"]).click()
            watched.page.get_by_text(WORDING["web_thanks"]).wait_for()
            assert watched.page.evaluate("window.draws") == 1
            assert watched.errors == []
        watched.close()
    assert stored(engine) == {("MIX-1", "partners"): "42", ("MIX-2", "partners"): "3"}
    with engine.connect() as conn:
        groups = dict(conn.execute(select(database.responses.c.respondent_id,
                                          database.responses.c.group_number)).all())
    assert groups == {"MIX-1": 1, "MIX-2": 2}
    engine.dispose()
