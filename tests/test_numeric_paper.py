"""Numeric questions on paper (issue 23 item 3): `surveykit generate` prints a box for the
reported number on the sheet, the drawn step and its numbers on the private slip, and dice,
die tables or printed cards in die mode.

What is checked, and against what:
* the sheet holds no draw and no rule (every sheet the same but for the id);
* the slips' steps and cards follow the design's exact probabilities (seeded draws, each
  count within 4 binomial standard errors of n p);
* a slip's rule, read as a respondent reads it and applied to a true value, gives numbers
  whose mean and variance are the design's closed forms (``design.moments``), within 4
  standard errors, and whose distribution matches ``design.simulate`` (two-sample KS);
* a printed continuous draw's exact moments (``rounded_moments``) against the design's,
  with the bound and table of docs/questionnaires.md;
* user text is escaped (HTML, Markdown); a scrambler no device realizes is refused in die
  mode with a one-line error; the database keeps step totals only, never a drawn number.
"""

from __future__ import annotations

import csv
import html
import json
import math
import re
import shutil
import sqlite3
from collections import Counter
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from migrated import sqlite_with_survey
from scipy import stats

from surveykit.cli import main
from surveykit.collection.dice import numeric_die_plan
from surveykit.collection.generation import write_questionnaires
from surveykit.collection.numeric import draw_decimals, rounded_moments
from surveykit.collection.randomizer import draw_numbers, seeded_source
from surveykit.collection.render import load_wording_defaults, make_environment
from surveykit.definition.limits import AUDIT_MINIMUM_PER_GROUP
from surveykit.definition.survey import parse_survey
from surveykit.designs.scramblers import Deck, Exponential, Laplace, Normal, Uniform
from tests.numeric_support import choice_question, income_question, numeric_survey

WORDING = load_wording_defaults(make_environment())
DOCS = Path(__file__).resolve().parent.parent / "docs" / "questionnaires.md"
# Monte Carlo checks: a count or a mean within this many standard errors of the oracle.
SE = 4.0

PARTNERS = '''[[questions]]
id = "partners"
text = "How many partners?"
type = "number"
decimals = 1
[questions.design]
model = "mix_norm"
p = 0.7
mu = 40
sigma = 15
'''
MIXED = numeric_survey(
    choice_question(),
    income_question(text="How much <script>alert(1)</script> did you *not* declare | [x](y)?",
                    unit="<i>EUR</i>"),
    PARTNERS, title="Tax <b>&amp;</b> *income*")


def survey_text(model: str, parameters: str, *, decimals: str = "") -> str:
    return (f'name = "s"\ntitle = "S"\n[[questions]]\nid = "n"\ntext = "How much?"\n'
            f'type = "number"\n{decimals}[questions.design]\nmodel = "{model}"\n{parameters}\n')


@pytest.fixture(scope="module")
def database_template(tmp_path_factory) -> Path:
    """A real SQLite file at head with the mixed survey (stored by the library: `survey add`
    of a numeric survey waits for serve and report, other helpers' work), built once per
    module: the tests work on copies (database)."""
    return sqlite_with_survey(tmp_path_factory.mktemp("tax") / "tax.db", MIXED, "tax.toml")


@pytest.fixture
def database(database_template, tmp_path) -> Path:
    path = tmp_path / "tax.db"
    shutil.copyfile(database_template, path)
    return path


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def pages(path: Path, kind: str) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return re.findall(rf'<section class="page {kind}">(.*?)</section>', text, flags=re.S)


def rules_of(page: str) -> list[tuple[str, str]]:
    """(rule kind, rule text as the respondent reads it) of each question on a slip page."""
    return [(kind, html.unescape(text)) for kind, text in
            re.findall(r'<span class="rule rule-(\w+)">(.*?)</span>', page, flags=re.S)]


# -- the respondent: reads a rule and writes a number -------------------------------------

_NUMBER = r"-?[0-9]+(?:\.[0-9]+)?"


def _pattern(key: str) -> re.Pattern:
    text = re.escape(WORDING[key])
    text = re.sub(r"\\\{(\w+)\\\}", lambda m: f"(?P<{m.group(1)}>{_NUMBER})", text)
    rounding = "|".join(re.escape(WORDING[k]).replace(r"\{decimals\}", "[0-9]+")
                        for k in ("number_round_whole", "number_round"))
    return re.compile(rf"^{text}(?: (?:{rounding}))?$")


# What each rule tells a respondent with true value y to write (None: "don't know").
_FOLLOW = {
    "number_truthful": lambda y, v: y,
    "number_draw": lambda y, v: v["number"],
    "number_times": lambda y, v: y * v["multiplier"],
    "number_plus": lambda y, v: y + v["addend"],
    "number_times_plus": lambda y, v: y * v["multiplier"] + v["addend"],
    "number_plus_times": lambda y, v: (y + v["addend"]) * v["multiplier"],
    "number_scaled_plus_times": lambda y, v: (v["factor"] * y + v["addend"]) * v["multiplier"],
    "rule_dont_know": lambda y, v: None,
}
_PATTERNS = {key: _pattern(key) for key in _FOLLOW}


def follow(rule: str, y: Fraction) -> Fraction | None:
    """The number a respondent with true value ``y`` writes when the slip says ``rule``
    (exact arithmetic; rounding left out: the questions here state no decimals)."""
    for key, pattern in _PATTERNS.items():
        found = pattern.match(rule)
        if found:
            values = {name: Fraction(text) for name, text in found.groupdict().items()}
            return _FOLLOW[key](y, values)
    raise AssertionError(f"no wording key reads {rule!r}")


# -- generate through the CLI -------------------------------------------------------------


def test_cli_generate_prints_number_boxes_on_sheets_and_drawn_rules_on_slips(database,
                                                                            tmp_path):
    out, key = tmp_path / "out", tmp_path / "vault" / "key.csv"
    key.parent.mkdir()
    n = AUDIT_MINIMUM_PER_GROUP + 10
    result = run("generate", "--survey", "tax", "--respondents", str(n), "--out", str(out),
                 "--db", str(database), "--seed", "11", "--key-file", str(key),
                 "--output", "json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["audit"]["tallied"] is True
    sheets = pages(out / "sheets-00001.html", "sheet")
    slips = pages(out / "slips-00001.html", "slip")
    assert len(sheets) == len(slips) == n

    # The sheet: a box for the number with its unit, "don't know" where the design has it,
    # and nothing drawn: all sheets are the same but for the id.
    first = sheets[0]
    items = re.findall(r"<li>(.*?)</li>", first, flags=re.S)
    assert '<span class="box">Yes</span>' in items[0]
    assert items[1].count('class="number-box"') == 1
    assert '<span class="unit">&lt;i&gt;EUR&lt;/i&gt;</span>' in items[1]
    assert '<span class="box">Don&#39;t know</span>' in items[1]
    assert WORDING["number_whole"] in items[1]
    assert items[2].count('class="number-box"') == 1
    assert 'class="box"' not in items[2]             # mix_norm has no "don't know" branch
    assert "Write at most 1 digits after the decimal point." in items[2]
    without_id = {re.sub(r'<span class="respondent-id">[^<]*</span>', "", s) for s in sheets}
    assert len(without_id) == 1
    rule_texts = [piece for key in _FOLLOW for piece in re.split(r"\{\w+\}", WORDING[key])
                  if len(piece) >= 12]
    assert rule_texts and not [text for text in rule_texts if html.escape(text) in first]
    assert "rule-" not in first

    # The slips: one rule per question, numbers filled in; the key file says the same.
    with key.open(newline="", encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream))
    codes = [row["code"] for row in rows]
    assert len(codes) == 3 * n
    for page, (_, income, partners) in zip(slips, zip(*[iter(codes)] * 3, strict=True),
                                           strict=True):
        (_, _), (kind, text), (kind2, text2) = rules_of(page)
        assert kind == income.split(":")[0] and kind2 == partners.split(":")[0]
        if income.startswith("draw:"):
            card = income.split("=")[1]
            assert text == WORDING["number_draw"].format(number=card)
            assert card in {"0", "1000", "5000", "20000"}
        if partners.startswith("draw:"):
            drawn = partners.split("=")[1]
            assert text2 == WORDING["number_draw"].format(number=drawn)
            assert re.fullmatch(r"-?[0-9]+(\.[0-9])?", drawn)   # the question's 1 decimal
        assert "EUR" not in page and "respondent-id" not in page

    # The database: ids and step totals (truthful, draw, dont_know), never a drawn number.
    with sqlite3.connect(database) as conn:
        tallies = dict(conn.execute(
            "SELECT code, SUM(count) FROM code_tallies JOIN questions ON questions.id = "
            "code_tallies.question_id WHERE questions.name = 'income' GROUP BY code"))
        every_code = {row[0] for row in conn.execute("SELECT code FROM code_tallies")}
    assert sum(tallies.values()) == n
    assert set(tallies) <= {"truthful", "draw", "dont_know"}
    assert tallies == dict(Counter(c.split(":")[0] for c in codes[1::3]))
    assert not any("=" in code or ":" in code for code in every_code)


def test_markdown_slips_and_sheets_escape_what_users_typed(database, tmp_path):
    result = run("generate", "--survey", "tax", "--respondents", "2", "--out",
                 str(tmp_path / "out"), "--db", str(database), "--format", "markdown")
    assert result.exit_code == 0, result.output
    sheet = (tmp_path / "out" / "sheets-00001.md").read_text(encoding="utf-8")
    assert r"How much \<script\>alert(1)\</script\> did you \*not\* declare \| \[x\](y)?" \
        in sheet
    assert r"\_\_\_\_\_\_\_\_\_\_\_\_ \<i\>EUR\</i\>" in sheet
    assert r"# Tax \<b\>\&amp;\</b\> \*income\*" in sheet
    assert "<script>" not in sheet and "<i>" not in sheet
    html_result = run("generate", "--survey", "tax", "--respondents", "2", "--out",
                      str(tmp_path / "html"), "--db", str(database))
    assert html_result.exit_code == 0, html_result.output
    for name in ("sheets-00001.html", "slips-00001.html"):
        page = (tmp_path / "html" / name).read_text(encoding="utf-8")
        assert "<script>" not in page and "<i>EUR" not in page
        assert "How much &lt;script&gt;alert(1)&lt;/script&gt; did you *not* declare" in page
        assert "<title>Tax &lt;b&gt;&amp;amp;&lt;/b&gt; *income* - " in page


def test_die_mode_refuses_a_continuous_scrambler_in_one_line_and_records_nothing(database,
                                                                                 tmp_path):
    out = tmp_path / "out"
    result = run("generate", "--survey", "tax", "--respondents", "3", "--out", str(out),
                 "--db", str(database), "--mode", "die")
    assert result.exit_code != 0
    assert result.stderr.strip().splitlines() == [
        "Error: question 'partners': scrambler S of mix_norm is normal with mean 40 and sd "
        "15: no dice or printed cards draw it exactly; generate with --mode slips (the "
        "randomizer draws it and prints it on the slip) or give a card deck or dice "
        "(scrambler = [0, 1, 3, 5, 8], \"die\" or \"dice\")"]
    assert "Traceback" not in result.output
    with sqlite3.connect(database) as conn:
        assert conn.execute("SELECT COUNT(*) FROM respondents").fetchone() == (0,)
    assert not out.exists() or not list(out.iterdir())


def test_die_mode_prints_the_step_table_and_a_device_that_realizes_the_deck(tmp_path):
    text = MIXED.split('[[questions]]\nid = "partners"')[0]
    survey = parse_survey(text, "tax.toml")
    result = write_questionnaires(survey, respondents=2, out_dir=tmp_path / "out", mode="die",
                                  rng=seeded_source(3))
    form = pages(result.files[0], "form")[0]
    income = re.findall(r"<li>(.*?)</li>", form, flags=re.S)[1]
    tables = re.findall(r'<table class="die">(.*?)</table>', income, flags=re.S)
    assert len(tables) == 2
    # the step: p = 0.6 of 0.9 truthful, 0.4 of 0.9 a card, 0.1 don't know on a d100
    steps = re.findall(r"<tr><td>(\d+)(?:–(\d+))?</td><td>(.*?)</td></tr>", tables[0])
    widths = {html.unescape(rule): int(high or low) - int(low) + 1 for low, high, rule in steps}
    assert "Roll (d100)" in tables[0]
    assert widths == {"Write your true value.": 54,
                      "Write your number S, whatever your true value.": 36,
                      "Answer \"don't know\", whatever the truth is.": 10}
    # the number: Eriksson's four cards are one d4, a face each
    assert "Your number S: roll in private and find your roll below." in income
    assert "<th>Roll (d4)</th><th>Your number S</th>" in tables[1]
    faces = re.findall(r"<tr><td>(\d+)</td><td>(\d+)</td></tr>", tables[1])
    assert faces == [("1", "0"), ("2", "1000"), ("3", "5000"), ("4", "20000")]


@pytest.mark.parametrize(("scrambler", "device"), [
    ("\"dice\"", "Your number S: roll d6 + d6 in private and add up the faces shown."),
    ("\"die\"", "Your number S: roll d6 in private; it is the face shown."),
    ("[1, 2, 3, 4, 5, 6, 7]", "Your number S: make 7 cards showing 1, 2, 3, 4, 5, 6, 7, "
                              "shuffle them, draw one in private and put it back."),
])
def test_die_mode_draws_dice_sums_and_odd_decks_with_real_devices(tmp_path, scrambler,
                                                                   device):
    survey = parse_survey(survey_text("bar_lev", f"p = 0.5\nscrambler = {scrambler}"),
                          "s.toml")
    result = write_questionnaires(survey, respondents=1, out_dir=tmp_path / "o", mode="die",
                                  fmt="markdown", rng=seeded_source(1))
    form = result.files[0].read_text(encoding="utf-8")
    assert f"**{device}**" in form
    assert ("| 2 | Multiply your true value by your number S and write the result. |"
            in form)
    steps, devices = numeric_die_plan(survey.questions[0].design)
    deck = survey.questions[0].design.scramblers["S"]
    if devices[0].kind == "cards":
        assert Counter(devices[0].values) == dict(zip(deck.values, deck.weights, strict=True))
    else:
        assert Deck.dice(len(devices[0].dice), devices[0].dice[0]) == deck


def test_a_scrambler_known_only_by_its_moments_and_mix_unknown_are_refused_on_paper(tmp_path):
    for text, message in [
        (survey_text("eichhorn_hayre", "mu = 1.1\nsigma = 0.5"),
         "question 'n': scrambler S of the eichhorn_hayre design is a scrambler with mean "
         "1.1 and sd 0.5 (distribution not stated): a slip or form needs a number drawn"),
        (survey_text("mix_unknown", "p = [0.6, 0.8]"),
         "question 'n': the mix_unknown design tells respondents to answer an unrelated "
         "numeric question, and the survey gives no text for it, so no slip or form can ask "
         "it; give it in the question's design, e.g. innocuous = "),
    ]:
        for mode in ("slips", "die"):
            with pytest.raises(Exception, match=re.escape(message)):
                write_questionnaires(parse_survey(text, "s.toml"), respondents=2,
                                     out_dir=tmp_path / mode, mode=mode)
            assert not (tmp_path / mode).exists()


def test_a_written_draw_coarser_than_a_tenth_of_its_sd_is_refused_naming_the_decimals(
        tmp_path):
    text = survey_text("mix_norm", "p = 0.7\nmu = 3\nsigma = 1.5", decimals="decimals = 0\n")
    with pytest.raises(Exception, match=re.escape(
            "question 'n': scrambler S of the mix_norm design (normal with mean 3 and sd 1.5) "
            "is written in the answer, so it is printed with decimals = 0 of the question, a "
            "grid above a tenth of its sd that changes its variance by about 3.7%; allow more "
            "decimals (decimals = 1)")):
        write_questionnaires(parse_survey(text, "s.toml"), respondents=1,
                             out_dir=tmp_path / "o")
    fine = text.replace("decimals = 0", "decimals = 1")
    write_questionnaires(parse_survey(fine, "s.toml"), respondents=1, out_dir=tmp_path / "o")


# -- the draws follow the design ----------------------------------------------------------


def test_slips_steps_and_cards_follow_the_designs_exact_probabilities(tmp_path):
    survey = parse_survey(MIXED, "tax.toml")
    n = 6000
    key = tmp_path / "key.csv"
    write_questionnaires(survey, respondents=n, out_dir=tmp_path / "o", key_file=key,
                         per_file=n, rng=seeded_source(2026))
    with key.open(newline="", encoding="utf-8") as stream:
        codes = [row["code"] for row in csv.DictReader(stream) if row["question_id"] == "income"]
    steps = Counter(code.split(":")[0] for code in codes)
    design = survey.question("income").design
    expected = {step.code: step.probability for step in design.protocol.groups[0]}
    assert expected == {"truthful": Fraction(27, 50), "draw": Fraction(9, 25),
                        "dont_know": Fraction(1, 10)}
    for code, p in expected.items():
        assert abs(steps[code] - n * p) <= SE * math.sqrt(n * p * (1 - p)), (code, steps)
    cards = Counter(code.split("=")[1] for code in codes if code.startswith("draw:"))
    drawn = steps["draw"]
    for value, p in design.scramblers["S"].points():
        count = cards[str(value)]
        assert abs(count - drawn * p) <= SE * math.sqrt(drawn * p * (1 - p)), (value, cards)


# One question per design, with every kind of scrambler and every shape of rule; no decimals
# (answers are not rounded), so the respondent's number is exactly the design's Z.
DESIGNS = {
    "eriksson": "p = 0.6\nscrambler = [0, 1000, 5000, 20000]\ndont_know = 0.1",
    "mix_norm": "p = 0.7\nmu = 40\nsigma = 15",
    "mix_exp": "p = 0.5\nmu = 20",
    "eichhorn_hayre": "mu = 1.5\nsigma = 0.28867513459481287\nscrambler = \"uniform\"",
    "bar_lev": "p = 0.5\nscrambler = \"dice\"",
    "chaudhuri_christofides": "mu = [1.0, 5.0]\nsigma = [0.5, 2.0]\n"
                              "scrambler = [\"normal\", \"laplace\"]",
    "diana_perri_1": "p = 0.4\nscrambler = [[1, 2], \"die\"]",
    "diana_perri_2": "beta = 0.3\nmu = [1.5, 10]\nsigma = [0.28867513459481287, 3]\n"
                     "scrambler = [\"uniform\", \"normal\"]",
    "saha": "scrambler = [[0.5, 1, 1.5], [0, 10, 20, 30]]",
    "additive": "mu = 0\nsigma = 10\nscrambler = \"laplace\"",
}


# three designs in the fast subset (every kind of device and the two-scrambler rules), the
# others with -m slow
FAST = ("chaudhuri_christofides", "diana_perri_2", "eriksson")


@pytest.mark.parametrize("model", [
    model if model in FAST else pytest.param(model, marks=pytest.mark.slow)
    for model in sorted(DESIGNS)])
def test_a_slips_rule_applied_to_a_true_value_gives_the_designs_answer_distribution(
        tmp_path, model):
    survey = parse_survey(survey_text(model, DESIGNS[model]), "s.toml")
    design = survey.questions[0].design
    n, y = 3000, Fraction(50)
    result = write_questionnaires(survey, respondents=n, out_dir=tmp_path / "o", per_file=n,
                                  rng=seeded_source(7))
    slips = pages([f for f in result.files if f.name.startswith("slips")][0], "slip")
    written = [follow(rules_of(page)[0][1], y) for page in slips]
    answers = np.array([float(z) for z in written if z is not None])
    dont_know = len(written) - answers.size
    d = float(design.designed_dont_know)
    assert abs(dont_know - n * d) <= SE * math.sqrt(n * d * (1 - d)) + 1e-9
    # closed forms: E[Z | y] = a + b y, Var(Z | y) = A y^2 + B y + C
    moments = design.moments()
    mean, variance = float(moments.mean(float(y))), float(moments.variance(float(y)))
    m = answers.size
    assert abs(answers.mean() - mean) <= SE * math.sqrt(variance / m), (answers.mean(), mean)
    centred = answers - answers.mean()
    variance_se = math.sqrt((np.mean(centred ** 4) - np.mean(centred ** 2) ** 2) / m)
    assert abs(answers.var(ddof=1) - variance) <= SE * variance_se, (answers.var(), variance)
    # the same distribution as the design's own simulation
    simulated = design.simulate(np.full(n, float(y)), rng=np.random.default_rng(8))
    other = simulated.answers[~simulated.dont_know]
    assert stats.ks_2samp(answers, other).pvalue > 1e-4


# -- what printing continuous draws on a grid does -----------------------------------------


def test_rounded_moments_sum_the_grid_exactly_on_a_hand_computed_case():
    # uniform on [1, 2] to one decimal: 1.0 and 2.0 with mass 0.05, 1.1 ... 1.9 with 0.1
    grid = [1.0] + [1 + k / 10 for k in range(1, 10)] + [2.0]
    mass = [0.05] + [0.1] * 9 + [0.05]
    mean = sum(g * w for g, w in zip(grid, mass, strict=True))
    variance = sum(w * (g - mean) ** 2 for g, w in zip(grid, mass, strict=True))
    assert rounded_moments(Uniform(low=1, high=2), 1) == pytest.approx((mean, variance),
                                                                        rel=1e-12)
    deck = Deck.from_cards([0, 1, 3, 5, 8])
    assert rounded_moments(deck, None) == (deck.mean, deck.variance)


@pytest.mark.parametrize("scrambler", [
    Normal(mu=40, sigma=15), Normal(mu=1.37, sigma=0.5), Normal(mu=-3, sigma=0.002),
    Uniform(low=1, high=2), Uniform(low=0.123, high=7.9), Exponential(mu=40),
    Exponential(mu=0.3), Laplace(mu=0, scale=7.0710678), Laplace(mu=2.5, scale=0.05),
])
def test_at_the_default_grid_the_printed_draw_keeps_the_designs_moments(scrambler):
    decimals = draw_decimals(scrambler)
    h = 10.0 ** -decimals
    assert scrambler.sd / 10_000 < h <= scrambler.sd / 1_000
    mean, variance = rounded_moments(scrambler, decimals)
    # docs/questionnaires.md: mean within h / 2, variance within 2 h^2 / 12 (relative 2e-7)
    assert abs(mean - scrambler.mean) <= h / 2
    assert abs(variance - scrambler.variance) <= 2 * h * h / 12 + 1e-12 * scrambler.variance
    assert abs(variance / scrambler.variance - 1) <= 2e-7


def test_the_draws_are_the_rounded_distribution(tmp_path):
    scrambler = Exponential(mu=10)
    values = np.array([float(v) for v in draw_numbers(scrambler, 40_000, decimals=0,
                                                     rng=seeded_source(5))])
    assert set(np.unique(values)) <= set(range(0, 400))
    mean, variance = rounded_moments(scrambler, 0)
    assert abs(values.mean() - mean) <= SE * math.sqrt(variance / values.size)
    # P(R = 0) = P(S < 0.5), exactly what the grid cell holds
    p0 = float(scrambler.cdf(0.5))
    assert abs((values == 0).sum() - values.size * p0) <= SE * math.sqrt(
        values.size * p0 * (1 - p0))


def test_the_docs_rounding_table_is_what_rounded_moments_gives():
    section = DOCS.read_text(encoding="utf-8").split(
        "### How drawn numbers are printed")[1].split("###")[0]
    rows = re.findall(r"^\| (normal|uniform|exponential|Laplace)([^|]*)\| (\d+) decimals \| "
                      r"([^|]+) \| ([^|]+) \|$", section, flags=re.M)
    assert len(rows) == 6
    for kind, described, decimals, mean_text, variance_text in rows:
        numbers = [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", described.split("(")[0])]
        first, second = (numbers + [0.0])[:2]
        scrambler = (Normal(mu=first, sigma=second) if kind == "normal"
                     else Uniform(low=first, high=second) if kind == "uniform"
                     else Exponential(mu=first) if kind == "exponential"
                     else Laplace(mu=first, scale=second))
        mean, variance = rounded_moments(scrambler, int(decimals))
        shift = (mean - scrambler.mean) / scrambler.sd
        if mean_text.strip().startswith("0"):
            assert abs(shift) < 1e-14, (kind, shift)
        else:
            assert f"{shift:.1e}" == mean_text.strip(), (kind, shift)
        assert f"{variance / scrambler.variance - 1:.1e}" == variance_text.strip(), kind
        if not described.strip().endswith("= 0`)"):
            assert int(decimals) == draw_decimals(scrambler)


def test_a_numeric_question_in_a_two_group_survey_is_asked_alike_in_both_form_versions(
        tmp_path):
    text = (Path(__file__).parent / "surveys" / "groups.toml").read_text(encoding="utf-8")
    text += ('\n[[questions]]\nid = "income"\ntext = "How much?"\ntype = "number"\n'
             '[questions.design]\nmodel = "eriksson"\np = 0.5\nscrambler = [1, 2, 3, 4]\n')
    survey = parse_survey(text, "groups.toml")
    assert survey.groups == ("short", "long")
    key = tmp_path / "key.csv"
    result = write_questionnaires(survey, respondents=40, out_dir=tmp_path / "s",
                                  key_file=key, rng=seeded_source(4))
    with key.open(newline="", encoding="utf-8") as stream:
        rows = [row for row in csv.DictReader(stream) if row["question_id"] == "income"]
    assert {row["group"] for row in rows} == {"1", "2"}
    slips = pages([f for f in result.files if f.name.startswith("slips")][0], "slip")
    for page, row in zip(slips, rows, strict=True):
        kind, rule = rules_of(page)[-1]
        assert kind == row["code"].split(":")[0]
        assert follow(rule, Fraction(9)) in {Fraction(9), Fraction(1), Fraction(2),
                                             Fraction(3), Fraction(4)}
    forms = write_questionnaires(survey, respondents=2, out_dir=tmp_path / "d", mode="die",
                                 rng=seeded_source(4))
    both = pages(forms.files[0], "form")
    for form in both:
        income = re.findall(r"<li>(.*?)</li>", form, flags=re.S)[-1]
        assert "<th>Roll (d2)</th><th>Your rule</th>" in income
        assert "<th>Roll (d4)</th><th>Your number S</th>" in income


def test_mix_unknown_asks_the_unrelated_question_a_survey_gives_it_per_form_version(tmp_path):
    survey = parse_survey(survey_text(
        "mix_unknown", 'p = [0.6, 0.8]\ninnocuous = "How many <b>siblings</b> do you have?"'),
        "s.toml")
    assert survey.questions[0].innocuous == "How many <b>siblings</b> do you have?"
    n = 2000
    key = tmp_path / "key.csv"
    result = write_questionnaires(survey, respondents=n, out_dir=tmp_path / "s", key_file=key,
                                  per_file=n, rng=seeded_source(9))
    slips = (tmp_path / "s" / "slips-00001.html").read_text(encoding="utf-8")
    assert ("Write your true answer to this other question instead: How many "
            "&lt;b&gt;siblings&lt;/b&gt; do you have?") in slips
    with key.open(newline="", encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream))
    for group, p in (("1", 0.6), ("2", 0.8)):
        codes = Counter(row["code"] for row in rows if row["group"] == group)
        m = sum(codes.values())
        assert m == result.group_counts[int(group)] == n // 2
        assert set(codes) == {"truthful", "unrelated"}
        assert abs(codes["truthful"] - m * p) <= SE * math.sqrt(m * p * (1 - p))


def test_only_a_design_that_asks_an_unrelated_question_takes_its_text():
    with pytest.raises(Exception, match=re.escape(
            "questions[0].design: unknown key 'innocuous'")):
        parse_survey(survey_text("mix_norm", 'p = 0.7\nmu = 40\nsigma = 15\n'
                                             'innocuous = "How many siblings?"'), "s.toml")
    with pytest.raises(Exception, match=re.escape(
            "questions[0].design.innocuous: 3 must be the unrelated question's text in quotes")):
        parse_survey(survey_text("mix_unknown", "p = [0.6, 0.8]\ninnocuous = 3"), "s.toml")
