"""`surveykit report`: numbers equal the core's, warnings fire, output is safe and tidy."""

import csv
import json
import math
import re

import pytest
from click.testing import CliRunner

from surveykit import GeneralizedWarner, estimate, store
from surveykit.cli import main
from surveykit.definition.survey import parse_survey
from surveykit.reporting.report import build_report, render_report
from surveykit.store.importer import import_responses
from surveykit.workflows.report import report_for_survey

SURVEY = """
name = "crafted"
title = "Crafted survey"
[mechanism]
p = 0.6
q = 0.2
[[questions]]
id = "normal"
text = "An ordinary question?"
[[questions]]
id = "excess_dk"
text = "Many opt out here?"
[[questions]]
id = "negative"
text = "Too few yes?"
[questions.mechanism]
p = 0.7
q = 0.2
[[questions]]
id = "empty"
text = "Nobody answers this one?"
"""
# (yes, no, dont_know) per question; "empty" gets none
COUNTS = {"normal": (130, 170, 75), "excess_dk": (100, 120, 155), "negative": (60, 265, 50)}
JSON_KEYS = {"id", "yes", "no", "dont_know", "missing", "p", "q", "pi_hat", "pi_mle", "se",
             "ci_low", "ci_high", "epsilon_shafer", "epsilon_walley", "dont_know_pvalue",
             "warnings"}


def write_long_csv(path, counts):
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(["respondent_id", "question_id", "answer"])
        for question, (yes, no, dont_know) in counts.items():
            answers = ["yes"] * yes + ["no"] * no + ["dont_know"] * dont_know
            for i, answer in enumerate(answers):
                writer.writerow([f"r{i:04d}", question, answer])


@pytest.fixture
def database(tmp_path):
    url = f"sqlite:///{tmp_path / 'report.db'}"
    engine = store.open_engine(url)
    store.init_database(engine)
    store.add_survey(engine, parse_survey(SURVEY, "crafted.toml"))
    responses = tmp_path / "responses.csv"
    write_long_csv(responses, COUNTS)
    import_responses(engine, responses, "crafted")
    yield url, engine
    engine.dispose()


def test_report_numbers_equal_the_core_estimate(database):
    url, engine = database
    report = report_for_survey(engine, "crafted", level=0.9)
    survey = store.load_survey(engine, "crafted")
    for q in report.questions:
        if q.id == "empty":
            continue
        yes, no, dont_know = COUNTS[q.id]
        expected = estimate(yes=yes, no=no, dont_know=dont_know,
                            design=survey.question(q.id).design)
        assert (q.yes, q.no, q.dont_know) == (yes, no, dont_know)
        assert q.estimate == expected
        assert q.interval == expected.confidence_interval(0.9)
    # respondents r0000..r0374 answered something; each missing count is the rest
    assert [q.missing for q in report.questions] == [0, 0, 0, 375]


def test_total_privacy_loss_is_the_sum_over_questions(database):
    _, engine = database
    report = report_for_survey(engine, "crafted")
    assert report.epsilon_total_shafer == pytest.approx(
        3 * math.log(3) + math.log(0.7 / 0.2), rel=1e-12)
    assert report.epsilon_total_walley == pytest.approx(
        3 * math.log(0.8 / 0.2) + math.log(0.8 / 0.2), rel=1e-12)


def test_warnings_fire_on_crafted_data_and_only_there(database):
    _, engine = database
    warnings = {q.id: q.warnings for q in report_for_survey(engine, "crafted").questions}
    assert warnings["normal"] == ()
    assert len(warnings["excess_dk"]) == 1
    assert warnings["excess_dk"][0].startswith("More \"don't know\" than designed: 41.3%")
    assert "opted out" in warnings["excess_dk"][0]
    assert any(w.startswith("pi_hat = -0.0") and "is below 0" in w
               for w in warnings["negative"])
    assert warnings["empty"] == ("No answers to this question: there is nothing to estimate.",)


def test_few_answers_and_only_dont_know_are_flagged():
    survey = parse_survey(SURVEY, "crafted.toml")

    class Counts:
        def __init__(self, question_id, yes, no, dont_know):
            self.question_id, self.yes, self.no, self.dont_know = question_id, yes, no, dont_know
            self.missing = 0

    report = build_report(survey, [Counts("normal", 8, 9, 4), Counts("excess_dk", 0, 0, 5)])
    by_id = {q.id: q for q in report.questions}
    assert any("Only 17 yes/no answers" in w for w in by_id["normal"].warnings)
    assert by_id["excess_dk"].estimate is None
    assert any("Only \"don't know\" answers" in w for w in by_id["excess_dk"].warnings)


def test_randomizer_audit_flags_codes_that_do_not_follow_the_design():
    survey = parse_survey(SURVEY, "crafted.toml")
    fair = {1: {"truthful": 600, "opposite": 205, "dont_know": 195}}
    skewed = {1: {"truthful": 700, "opposite": 150, "dont_know": 150}}
    tallies = {"normal": fair, "excess_dk": skewed,
               "negative": {1: {"truthful": 700, "opposite": 200, "dont_know": 100}},
               "empty": fair}
    report = build_report(survey, [], code_tallies=tallies, issued=1000)
    by_id = {q.id: q for q in report.questions}
    assert not any("issued instructions" in w for w in by_id["normal"].warnings)
    assert by_id["normal"].codes_pvalue > 0.5
    assert any(w.startswith("The issued instructions (truthful 70.0%, opposite 15.0%, "
                            "dont_know 15.0%; design truthful 60.0%, opposite 20.0%, "
                            "dont_know 20.0%) differ")
               for w in by_id["excess_dk"].warnings)
    assert by_id["negative"].codes_pvalue > 0.01  # (0.7, 0.2, 0.1) is its design


def test_json_has_the_documented_keys(database, tmp_path):
    url, _ = database
    out = tmp_path / "report.json"
    result = CliRunner().invoke(main, ["report", "--survey", "crafted", "--db", url,
                                       "--format", "json", "--out", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text(encoding="utf-8"))
    assert {"survey", "level", "epsilon_total_shafer", "epsilon_total_walley",
            "questions"} <= set(data)
    assert data["survey"] == "crafted" and data["level"] == 0.95
    for question in data["questions"]:
        assert JSON_KEYS <= set(question)
    assert data["questions"][3]["pi_hat"] is None
    assert isinstance(data["questions"][1]["warnings"], list)


def test_text_report_fits_80_columns(database):
    url, _ = database
    result = CliRunner().invoke(main, ["report", "--survey", "crafted", "--db", url])
    assert result.exit_code == 0, result.output
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
    assert "excess_dk" in result.stdout and "! More \"don't know\"" in result.stdout


def test_markdown_report_is_tables(database):
    url, _ = database
    result = CliRunner().invoke(main, ["report", "--survey", "crafted", "--db", url,
                                       "--format", "markdown"])
    lines = result.stdout.splitlines()
    header = lines.index(next(line for line in lines if line.startswith("| question | pi_hat")))
    assert lines[header + 1].startswith("|---|")
    assert sum(line.startswith("| ") for line in lines[header + 2:header + 6]) == 4


HOSTILE = """
name = "hostile"
title = "Survey <script>alert('title')</script> & co"
[mechanism]
p = 0.6
q = 0.2
[[questions]]
id = "q1"
text = "Did you <img src=x onerror=alert(1)> **cheat** | [x](javascript:alert(2))?"
"""


def test_html_and_markdown_escape_hostile_text(tmp_path):
    engine = store.open_engine(f"sqlite:///{tmp_path / 'hostile.db'}")
    store.init_database(engine)
    store.add_survey(engine, parse_survey(HOSTILE, "hostile.toml"))
    responses = tmp_path / "r.csv"
    write_long_csv(responses, {"q1": (40, 50, 20)})
    import_responses(engine, responses, "hostile")
    report = report_for_survey(engine, "hostile")
    html = render_report(report, "html")
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(&#39;title&#39;)&lt;/script&gt; &amp; co" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert html.count("<svg") == 2  # forest plot and one curve, inline
    # self-contained: nothing is fetched (SVG namespace URIs are names, not fetches)
    for fetch in ("<link", 'src="http', "src='http", 'href="http', "url(http", "@import"):
        assert fetch not in html
    markdown = render_report(report, "markdown")
    assert not re.search(r"(?<!\\)<(img|script)", markdown)  # only escaped forms remain
    assert r"Did you \<img src=x onerror=alert(1)\>" in markdown
    assert r"\*\*cheat\*\* \| \[x\](javascript:alert(2))?" in markdown
    engine.dispose()


def test_report_for_an_unknown_survey_is_a_one_line_error(database):
    url, _ = database
    result = CliRunner().invoke(main, ["report", "--survey", "nope", "--db", url])
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: ")
    assert "nope" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_core_estimate_guard_the_report_uses_the_default_interval(database):
    _, engine = database
    q = report_for_survey(engine, "crafted").questions[0]
    assert q.interval == estimate(yes=130, no=170, dont_know=75,
                                  design=GeneralizedWarner(p=0.6, q=0.2)).confidence_interval()


def test_report_is_a_pandas_frame_for_notebooks(database):
    _, engine = database
    report = report_for_survey(engine, "crafted")
    frame = report.to_frame()
    assert list(frame.index) == ["normal", "excess_dk", "negative", "empty"]
    assert frame.loc["normal", "pi_hat"] == report.questions[0].estimate.pi_hat
    assert frame.loc["excess_dk", "warnings"] == 1
    assert JSON_KEYS - {"id"} <= set(frame.columns)


def test_report_method_option_changes_the_interval(database):
    url, engine = database
    result = CliRunner().invoke(main, ["report", "--survey", "crafted", "--db", url,
                                       "--method", "clopper-pearson", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    expected = report_for_survey(engine, "crafted", method="clopper-pearson").questions[0]
    assert data["ci_method"] == "clopper-pearson"
    assert (data["questions"][0]["ci_low"], data["questions"][0]["ci_high"]) == tuple(
        expected.interval)


def test_audit_of_a_one_group_question_pools_the_form_versions():
    """A one-group question of a multi-group survey is tallied per form version; the audit
    pools them (every version draws from the same protocol) instead of skipping group 2."""
    survey = parse_survey(SURVEY.replace('id = "normal"\ntext = "An ordinary question?"',
                                         'id = "normal"\ntext = "An ordinary question?"\n'
                                         '[questions.design]\nmodel = "sld"\n'
                                         'p = [0.2, 0.8]'), "crafted.toml")
    skewed_in_group_2 = {1: {"truthful": 600, "opposite": 205, "dont_know": 195},
                         2: {"truthful": 900, "opposite": 50, "dont_know": 50}}
    report = build_report(survey, [], code_tallies={"negative": skewed_in_group_2},
                          issued=2000)
    negative = next(q for q in report.questions if q.id == "negative")
    assert negative.codes_pvalue is not None and negative.codes_pvalue < 1e-6
    assert any("issued instructions" in w for w in negative.warnings)


EDGES = """
name = "edges"
title = "Estimates on the edge"
[mechanism]
p = 0.6
q = 0.2
[[questions]]
id = "all_yes"
text = "Everyone?"
[[questions]]
id = "none"
text = "Nobody?"
[questions.mechanism]
p = 0.52
q = 0.28
[[questions]]
id = "designed"
text = "A don't-know share of 0.15?"
[questions.mechanism]
p = 0.7
q = 0.15
"""


def test_estimates_exactly_on_the_edge_print_0_and_1_and_designed_shares_are_exact(tmp_path):
    # issue 11: in exact arithmetic pi_hat is 1 for 750 yes / 250 no under p = 0.6, q = 0.2
    # ((0.75 * 0.8 - 0.2) / 0.4) and 0 for 350 / 650 under p = 0.52, q = 0.28
    # ((0.35 * 0.8 - 0.28) / 0.24); floating point gave 1.0000000000000002 with the warning
    # "above 1" and -2.3e-16, printed -0.0000; 1 - 0.7 - 0.15 is 0.15 exactly, not
    # 0.15000000000000002
    url = f"sqlite:///{tmp_path / 'edges.db'}"
    engine = store.open_engine(url)
    store.init_database(engine)
    store.add_survey(engine, parse_survey(EDGES, "edges.toml"))
    responses = tmp_path / "responses.csv"
    write_long_csv(responses, {"all_yes": (750, 250, 250), "none": (350, 650, 250),
                               "designed": (400, 400, 140)})
    import_responses(engine, responses, "edges")
    engine.dispose()
    runner = CliRunner()
    out = tmp_path / "report.json"
    result = runner.invoke(main, ["report", "--survey", "edges", "--db", url, "--format", "json",
                                  "--out", str(out)])
    assert result.exit_code == 0, result.output
    questions = {q["id"]: q for q in json.loads(out.read_text(encoding="utf-8"))["questions"]}
    assert questions["all_yes"]["pi_hat"] == 1.0 and questions["all_yes"]["warnings"] == []
    assert questions["none"]["pi_hat"] == 0.0 and questions["none"]["warnings"] == []
    assert math.copysign(1.0, questions["none"]["pi_hat"]) == 1.0
    assert [questions[q]["dont_know_designed"] for q in ("all_yes", "none", "designed")] == [
        0.2, 0.2, 0.15]
    text = runner.invoke(main, ["report", "--survey", "edges", "--db", url]).stdout
    assert "above 1" not in text and "below 0" not in text and "-0.0" not in text
