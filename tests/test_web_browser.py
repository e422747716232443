"""``surveykit serve`` in a real browser: Debian's headless Chromium driven by Playwright.

Respondents answer whole surveys through the page; every request the page
sends is captured; the rules the page shows are checked against the design's
probabilities (a chi-square test on 2,000 draws made by the page's own
crypto.getRandomValues) and, with a scripted random source, exactly at the
thresholds; the database must hold exactly the answers given.
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from migrated import migrated_sqlite
from scipy import stats
from sqlalchemy import Engine

from surveykit import store
from surveykit.collection.randomizer import seeded_source
from surveykit.collection.render import load_wording_defaults, make_environment
from surveykit.collection.respondent_ids import new_respondent_ids
from surveykit.collection.webform import build_web_form
from surveykit.definition.survey import parse_survey
from surveykit.store import database
from surveykit.web.app import create_app
from surveykit.web.assets import SCRIPT, load_asset
from tests.web_support import MIXED, launch_chromium, running_cli, serving

DOCS_SCREENSHOT = Path(__file__).resolve().parent.parent / "docs" / "images" / "web-collection.png"
WORDING = load_wording_defaults(make_environment())
SAMPLE = Path(__file__).resolve().parent.parent / "sample_data" / "academic_integrity.toml"
SURVEYS = Path(__file__).resolve().parent / "surveys"

# 400 questions, each forced response with "don't know": four rules with probabilities
# 0.63, 0.09, 0.18, 0.10 (truthful, say no, say yes, don't know).
MANY = 'name = "many"\ntitle = "Many questions"\n[design]\nmodel = "fr"\np = [0.1, 0.2]\n' \
       'dont_know = 0.1\n' + "".join(f'[[questions]]\nid = "q{i:03d}"\ntext = "Question {i}?"\n'
                                     for i in range(400))
TWO_GROUPS = """
name = "groups"
title = "Two groups"
[design]
model = "sld"
p = [0.2, 0.8]
groups = ["short", "long"]
[[questions]]
id = "q1"
text = "Have you ever cheated?"
"""
HOSTILE_TEXT = """
name = "hostile"
title = "<script>window.pwned = 1</script> Survey"
[wording]
web_intro = "<img src=x onerror=\\"window.pwned = 2\\"> intro"
[[questions]]
id = "q1"
text = "<b>Bold?</b> <script>window.pwned = 3</script>"
[questions.design]
model = "crosswise"
p = 0.25
innocuous = "<iframe src=\\"javascript:window.pwned = 4\\"></iframe>"
"""


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """conftest's SQLite database file, migrated to head: a copy of the migrated template
    (every test here ran init only as set-up)."""
    return migrated_sqlite(tmp_path / "surveykit.db")


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with launch_chromium() as launched:
        yield launched


@pytest.fixture(scope="module")
def many_database(tmp_path_factory) -> tuple[Path, object, object]:
    """A database at head holding MANY, its survey and its web form, built once (400
    questions): each test works on a copy (many_engine)."""
    path = tmp_path_factory.mktemp("many") / "many.db"
    engine = store.open_engine(migrated_sqlite(path))
    try:
        survey, form = add(engine, MANY)
    finally:
        engine.dispose()
    return path, survey, form


@pytest.fixture
def many_engine(many_database, tmp_path: Path) -> Iterator[tuple[Engine, object, object]]:
    """A copy of many_database: its engine, the survey and its web form."""
    path, survey, form = many_database
    shutil.copyfile(path, tmp_path / "many.db")
    engine = store.open_engine(f"sqlite:///{tmp_path / 'many.db'}")
    try:
        yield engine, survey, form
    finally:
        engine.dispose()


def add(engine: Engine, text: str, ids: list[str] | None = None,
        groups: list[int] | None = None):
    survey = parse_survey(text)
    store.add_survey(engine, survey)
    if ids:
        database.record_generation(engine, survey.name, ids, {}, groups=groups)
    return survey, build_web_form(survey, wording_defaults=WORDING)


@contextmanager
def served(engine: Engine, survey_name: str, port: int = 0, **options) -> Iterator[str]:
    """The application on loopback in this process (faster to start than the CLI)."""
    with serving(create_app(engine, survey_name, **options), port=port) as url:
        yield url


class Watched:
    """A page with its requests, console errors and script errors recorded."""

    def __init__(self, browser, **options) -> None:
        self.context = browser.new_context(**options)
        self.context.set_default_timeout(60_000)  # generous: CI machines can be slow
        self.page = self.context.new_page()
        self.requests: list[tuple[str, str, str | None]] = []
        self.errors: list[str] = []
        self.page.on("request", lambda r: self.requests.append((r.method, r.url, r.post_data)))
        self.page.on("console",
                     lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def start(self, url: str, respondent_id: str) -> None:
        self.page.goto(url)
        self.page.get_by_label("Respondent ID").fill(respondent_id)
        self.page.get_by_role("button", name=WORDING["web_start"]).click()

    def rule(self) -> str:
        """The rule on the page now: its lines (paragraphs), one per line."""
        return "\n".join(self.page.locator("#rule-lines p").all_text_contents())

    def close(self) -> None:
        self.context.close()


def scripted_uniforms(values: list[int]) -> str:
    """An init script making crypto.getRandomValues return words that give these U values.

    U = (w0 >>> 11) * 2^32 + w1, so w0 = (U div 2^32) << 11 and w1 = U mod 2^32.
    """
    words = []
    for value in values:
        words += [(value >> 32) << 11, value & 0xFFFFFFFF]
    fill = "(array) => { array.set(words.splice(0, array.length)); return array; }"
    return (f"(() => {{ const words = {json.dumps(words)}; "
            f"Object.defineProperty(crypto, 'getRandomValues', {{ value: {fill} }}); }})();")


def test_respondents_answer_whole_surveys_and_only_ids_and_answers_leave_the_browser(
        browser, engine: Engine, database_url: str, tmp_path: Path):
    ids = new_respondent_ids(3, rng=seeded_source(14))
    survey, form = add(engine, MIXED, ids)
    given: dict[str, dict[str, str]] = {}
    shown_rules: set[str] = set()
    with running_cli(database_url, "mixed", "--access-log") as server:
        for number, respondent in enumerate(ids):
            watched = Watched(browser)
            watched.start(server.url, respondent.lower())  # typed in lower case
            page = watched.page
            given[respondent] = {}
            for index, question in enumerate(form.questions):
                page.get_by_text(question.progress, exact=True).wait_for()
                rule = watched.rule()
                allowed = {"\n".join(r.lines) for r in question.rules[0]}
                assert rule in allowed, (question.id, rule)
                shown_rules.update(r.lines[0] for r in question.rules[0])
                label, text = question.answers[(number + index) % len(question.answers)]
                given[respondent][question.id] = label
                if index == len(form.questions) - 1:
                    # half-way answers stay in the browser until Submit
                    assert not any(url.endswith("/submit") for _, url, _ in watched.requests)
                page.get_by_role("button", name=text, exact=True).click()
            page.get_by_role("button", name=WORDING["web_submit"]).click()
            page.get_by_text(WORDING["web_thanks"]).wait_for()
            assert watched.rule() == ""  # the last rule left the page with the answer
            assert page.evaluate("localStorage.length + sessionStorage.length") == 0
            assert [c["name"] for c in watched.context.cookies()] == ["surveykit_csrf"]
            bodies = [(url.rsplit("/", 1)[1], json.loads(data))
                      for method, url, data in watched.requests if method == "POST"]
            assert bodies == [("start", {"respondent_id": respondent.lower()}),
                              ("submit", {"respondent_id": respondent,
                                          "answers": given[respondent]})]
            for method, url, data in watched.requests:
                assert "?" not in url and (method == "POST" or data is None)
            assert watched.errors == []
            if number < len(ids) - 1:
                watched.close()
        # a respondent who comes back is told the answers are in (in the last respondent's
        # browser: a new one would cost a renderer process, and the server decides)
        watched.start(server.url, ids[0])
        watched.page.get_by_text(WORDING["web_used_id"]).wait_for()
        watched.close()
        log = server.output_once("3 submissions recorded")
    counts = store.count_responses(engine, "mixed")
    for question in counts:
        expected = Counter(answers[question.question_id] for answers in given.values())
        assert question.answers() == dict(expected), question.question_id
    # the terminal shows the live count; its log holds no id, answer or rule
    assert "3 submissions recorded" in log
    assert '"POST /submit" 201' in log
    for respondent in ids:
        assert respondent not in log and respondent.lower() not in log
    assert '"answers"' not in log
    assert not any(rule in log for rule in shown_rules)


def test_the_rules_the_page_shows_follow_the_design_probabilities(browser, many_engine):
    engine, survey, form = many_engine
    rules = form.questions[0].rules[0]
    texts = ["\n".join(rule.lines) for rule in rules]
    shown: list[str] = []
    sessions = 5  # x 400 questions = 2,000 rules drawn and shown by the page
    with served(engine, "many", rate_limit=0) as url:
        watched = Watched(browser)
        for session in range(sessions):
            watched.start(url, f"chi-{session}")
            watched.page.get_by_text(form.questions[0].progress, exact=True).wait_for()
            # A loop run in the page: read the rule shown, press the first answer button,
            # for all 400 questions (the same click handlers a person's clicks run).
            shown += watched.page.evaluate("""() => {
                const seen = [];
                for (let i = 0; i < 400; i++) {
                    seen.push(document.getElementById("rule-lines").innerText);
                    document.querySelector("#answers button").click();
                }
                return seen;
            }""")
            watched.page.get_by_role("button", name=WORDING["web_submit"]).click()
            watched.page.get_by_text(WORDING["web_thanks"]).wait_for()
        assert watched.errors == []
        watched.close()
    assert len(shown) == 2000
    observed = Counter(shown)
    assert set(observed) <= set(texts)
    probabilities = [float(i.probability) for i in survey.questions[0].design.protocol.for_group(0)]
    expected = [p * len(shown) for p in probabilities]
    chi2 = sum((observed[t] - e) ** 2 / e for t, e in zip(texts, expected, strict=True))
    # Chromium's generator cannot be seeded: the test fails by chance once in 10^6 runs.
    critical = stats.chi2.isf(1e-6, df=len(texts) - 1)
    assert chi2 < critical, (chi2, observed, expected)
    # and the database holds the 5 x 400 answers given (the first button: yes)
    counts = store.count_responses(engine, "many")
    assert all(question.answers() == {"yes": sessions} for question in counts)


def test_a_page_open_across_a_server_restart_still_submits_its_answers(browser,
                                                                         sqlite_url: str):
    # CSRF tokens are signed with a secret that lives in the server's memory only, so a
    # restarted server refuses the token of a page loaded before; the page then takes a fresh
    # one (GET /token) and sends again, and the respondent's answers are not lost
    engine = store.open_engine(sqlite_url)
    survey, form = add(engine, SAMPLE.read_text(encoding="utf-8"), ["RESTART-1"])
    port = free_port()
    watched = Watched(browser)
    with served(engine, "academic_integrity", port=port) as url:
        watched.start(url, "RESTART-1")
        for question in form.questions:
            watched.page.get_by_text(question.progress, exact=True).wait_for()
            watched.page.locator("#answers button").first.click()
        submit = watched.page.get_by_role("button", name=WORDING["web_submit"])
        submit.wait_for()
    with served(engine, "academic_integrity", port=port) as again:
        assert again == url
        submit.click()
        watched.page.get_by_text(WORDING["web_thanks"]).wait_for()
    sent = [(method, address.rsplit("/", 1)[1]) for method, address, _ in watched.requests
            if not address.endswith((".js", ".css", ".json", "/"))]
    assert sent == [("POST", "start"), ("POST", "submit"), ("GET", "token"), ("POST", "submit")]
    assert [error for error in watched.errors if "403" not in error] == []
    watched.close()
    assert {q.question_id: q.answers() for q in store.count_responses(engine, survey.name)} == {
        question.id: {question.answers[0][0]: 1} for question in form.questions}
    engine.dispose()


def free_port() -> int:
    """A port nobody listens on now (the restart test serves on it twice)."""
    from surveykit.web.server import bind_socket

    with bind_socket("127.0.0.1", 0) as sock:
        return sock.getsockname()[1]


def test_rules_change_exactly_at_the_thresholds(browser, many_engine):
    engine, survey, form = many_engine
    rules = form.questions[0].rules[0]
    below = [rule.below for rule in rules]
    # both sides of every boundary, and both ends of [0, 2^53)
    values = [below[0] - 1, below[0], below[1] - 1, below[1], below[2] - 1, below[2], 0,
              2 ** 53 - 1]
    expected = [0, 1, 1, 2, 2, 3, 0, 3]
    with served(engine, "many") as url:
        watched = Watched(browser)
        watched.page.add_init_script(scripted_uniforms(values))
        watched.start(url, "edge")
        for question, rule in zip(form.questions, expected, strict=False):
            watched.page.get_by_text(question.progress, exact=True).wait_for()
            assert watched.rule() == "\n".join(rules[rule].lines), question.progress
            watched.page.locator("#answers button").first.click()
        watched.close()


def test_the_group_of_the_issued_id_decides_which_rules_are_drawn(browser, sqlite_url: str):
    engine = store.open_engine(sqlite_url)
    survey, form = add(engine, TWO_GROUPS, ["SHORT-1", "LONG-1"], groups=[1, 2])
    first, second = form.questions[0].rules
    middle = 2 ** 52  # U = 2^53 / 2: "say yes" in group 1 (truthful 1/5), truthful in group 2
    with served(engine, "groups") as url:
        # one page, loaded afresh for each respondent (the script runs again on each load);
        # a new page would cost a renderer process (about 0.7 s of CPU)
        watched = Watched(browser)
        watched.page.add_init_script(scripted_uniforms([middle]))
        for respondent, rules in (("SHORT-1", first), ("LONG-1", second)):
            watched.start(url, respondent)
            watched.page.get_by_text(form.questions[0].progress, exact=True).wait_for()
            drawn = next(rule for rule in rules if middle < rule.below)
            assert watched.rule() == "\n".join(drawn.lines)
            watched.page.get_by_role("button", name="Yes", exact=True).click()
            watched.page.get_by_role("button", name=WORDING["web_submit"]).click()
            watched.page.get_by_text(WORDING["web_thanks"]).wait_for()
        watched.close()
    assert store.count_responses(engine, "groups")[0].counts.to_dict() == {
        "1": {"yes": 1}, "2": {"yes": 1}}
    engine.dispose()


@pytest.mark.parametrize("name", ["groups", "categories"])
def test_every_design_family_on_the_page_for_each_group(browser, sqlite_url: str, name: str):
    """tests/surveys/groups.toml (SLD and the unrelated question in two groups, crosswise,
    Kuk's cards drawn twice) and categories.toml (forced response over named categories
    with "don't know", k-RR over four): every respondent sees a rule of their own group's
    protocol, the crosswise question with both questions, its prompt and combined answers,
    and the buttons of the paper sheet; the database holds each answer in its group."""
    engine = store.open_engine(sqlite_url)
    text = (SURVEYS / f"{name}.toml").read_text(encoding="utf-8")
    multi_group = len(parse_survey(text).groups) > 1
    ids = new_respondent_ids(4, rng=seeded_source(20))
    groups = [1, 2, 1, 2] if multi_group else [1, 1, 1, 1]
    survey, form = add(engine, text, ids, groups=groups if multi_group else None)
    expected: dict[str, Counter] = {}
    with served(engine, survey.name) as url:
        # one page, loaded afresh for each respondent (a new page would cost a renderer
        # process, about 0.7 s of CPU; separate browsers per respondent are the point of
        # test_respondents_answer_whole_surveys_and_only_ids_and_answers_leave_the_browser)
        watched = Watched(browser)
        for number, (respondent, group) in enumerate(zip(ids, groups, strict=True)):
            watched.start(url, respondent)
            page = watched.page
            for index, question in enumerate(form.questions):
                page.get_by_text(question.progress, exact=True).wait_for()
                rules = question.rules[0 if len(question.rules) == 1 else group - 1]
                assert watched.rule() in {"\n".join(rule.lines) for rule in rules}, question.id
                buttons = page.locator("#answers button").all_text_contents()
                assert buttons == [text for _, text in question.answers], question.id
                innocuous = page.locator("#innocuous")
                if question.innocuous:
                    assert page.locator("#innocuous-text").inner_text() == question.innocuous
                    assert page.locator("#combined-prompt").inner_text() == question.prompt
                    assert buttons[:2] == [WORDING["crosswise_yes"], WORDING["crosswise_no"]]
                else:
                    assert innocuous.is_hidden()
                label, text = question.answers[(number + index) % len(question.answers)]
                expected.setdefault(question.id, Counter())[(str(group), label)] += 1
                page.get_by_role("button", name=text, exact=True).click()
            page.get_by_role("button", name=WORDING["web_submit"]).click()
            page.get_by_text(WORDING["web_thanks"]).wait_for()
            assert watched.errors == []
        watched.close()
    for question in store.count_responses(engine, survey.name):
        stored = Counter({(group, label): n for group, label, n in question.counts})
        assert stored == expected[question.question_id], question.question_id
    engine.dispose()


def test_a_keyboard_user_can_answer_from_a_link_carrying_the_id(browser, sqlite_url: str):
    engine = store.open_engine(sqlite_url)
    survey, form = add(engine, MIXED, ["KEY-1"])
    with served(engine, "mixed") as url:
        watched = Watched(browser)
        page = watched.page
        page.goto(url + "/#id=KEY-1")
        field = page.get_by_label("Respondent ID")
        field.wait_for()
        assert field.input_value() == "KEY-1"
        assert "#" not in page.url  # the id leaves the address bar
        field.focus()
        page.keyboard.press("Enter")
        for question in form.questions:
            heading = page.get_by_text(question.progress, exact=True)
            heading.wait_for()
            # focus moves to the question, so a screen reader reads it next
            assert page.evaluate("document.activeElement.id") == "progress"
            page.keyboard.press("Tab")  # the first answer button
            page.keyboard.press("Enter")
        page.get_by_role("button", name=WORDING["web_submit"]).wait_for()
        page.keyboard.press("Tab")
        page.keyboard.press("Enter")
        page.get_by_text(WORDING["web_thanks"]).wait_for()
        assert watched.errors == []
        watched.close()
    first_labels = {q.id: q.answers[0][0] for q in form.questions}
    assert {q.question_id: q.answers() for q in store.count_responses(engine, "mixed")} == {
        name: {label: 1} for name, label in first_labels.items()}
    engine.dispose()


def test_markup_in_the_survey_file_is_shown_as_text_and_never_runs(browser, sqlite_url: str):
    engine = store.open_engine(sqlite_url)
    survey, form = add(engine, HOSTILE_TEXT)
    with served(engine, "hostile") as url:
        watched = Watched(browser)
        watched.start(url, "x-1")
        page = watched.page
        page.get_by_text(form.questions[0].progress, exact=True).wait_for()
        assert page.locator("h1").inner_text() == survey.title
        assert page.locator("#question-text").inner_text() == survey.questions[0].text
        assert page.locator("#innocuous-text").inner_text() == survey.questions[0].innocuous
        assert page.title() == survey.title
        assert page.evaluate("window.pwned") is None
        assert page.locator("main img, main iframe, main b, main script").count() == 0
        watched.close()
    engine.dispose()


def test_the_page_on_a_phone_with_its_script_hash(browser, sqlite_url: str, tmp_path: Path):
    engine = store.open_engine(sqlite_url)
    survey, form = add(engine, SAMPLE.read_text(encoding="utf-8"))
    with served(engine, "academic_integrity") as url:
        watched = Watched(browser, viewport={"width": 390, "height": 760},
                          device_scale_factor=1, is_mobile=True, has_touch=True)
        watched.start(url, "phone-1")
        page = watched.page
        page.get_by_text(form.questions[0].progress, exact=True).wait_for()
        assert page.locator("#script-hash").inner_text() == load_asset(SCRIPT).sha256
        # nothing wider than the phone's screen
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        shot = tmp_path / "web-collection.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000
        if os.environ.get("SURVEYKIT_UPDATE_DOCS") == "1":
            shutil.copyfile(shot, DOCS_SCREENSHOT)
        watched.close()
    engine.dispose()


def test_a_script_that_differs_from_the_published_hash_does_not_run(browser, sqlite_url: str):
    engine = store.open_engine(sqlite_url)
    add(engine, SAMPLE.read_text(encoding="utf-8"))
    original = load_asset(SCRIPT).content
    # what a tampered server or cache would serve: the same script drawing with Math.random
    tampered = original.replace(b"crypto.getRandomValues(words);",
                                b"words[0] = Math.random() * 2 ** 32;")
    assert tampered != original
    with served(engine, "academic_integrity") as url:
        watched = Watched(browser)
        watched.page.route(f"**/static/{SCRIPT}", lambda route: route.fulfill(
            status=200, body=tampered, content_type="text/javascript"))
        # the browser reports the refusal on the console: wait for that message (the
        # context's 60 s default timeout), not in fixed steps
        with watched.page.expect_console_message(
                lambda message: message.type == "error" and "integrity" in message.text):
            watched.page.goto(url)
        assert any("integrity" in error for error in watched.errors), watched.errors
        assert watched.page.locator("#start").is_hidden()  # the page never starts
        watched.close()
    engine.dispose()


THREE = ('name = "three"\ntitle = "Three questions"\n[design]\nmodel = "fr"\n'
         'p = [0.1, 0.2]\ndont_know = 0.1\n' + "".join(
             f'[[questions]]\nid = "q{i}"\ntext = "Question {i}?"\n' for i in range(1, 4)))


def counted_uniforms(values: list[int]) -> str:
    """As :func:`scripted_uniforms`, and ``window.draws`` counts the calls (one per rule
    drawn); once the values run out, every draw gives U = 0 (the first rule)."""
    words = []
    for value in values:
        words += [(value >> 32) << 11, value & 0xFFFFFFFF]
    fill = ("(array) => { window.draws += 1; array.fill(0); "
            "array.set(words.splice(0, array.length)); return array; }")
    return (f"(() => {{ const words = {json.dumps(words)}; window.draws = 0; "
            f"Object.defineProperty(crypto, 'getRandomValues', {{ value: {fill} }}); }})();")


def test_back_shows_the_rule_drawn_before_and_a_review_lists_the_answers_before_sending(
        browser, sqlite_url: str):
    """Issue 22: the form had no Back button and no review before sending. Back returns to
    the question before with the same rule (drawn once, kept in the page, never redrawn:
    a new draw would let a respondent fish for the rule they like); the review lists the
    answers and no rule; changing an answer there sends the changed answer, and only the
    answers leave the browser."""
    engine = store.open_engine(sqlite_url)
    survey, form = add(engine, THREE, ["BACK-1"])
    rules = form.questions[0].rules[0]
    below = [rule.below for rule in rules]
    # rules 2, 3, 1 (say yes, don't know, say no): a redraw would give U = 0, rule 0
    values = [below[1], below[2], below[0]]
    shown = ["\n".join(rules[k].lines) for k in (2, 3, 1)]
    assert len(set(shown) | {"\n".join(rules[0].lines)}) == 4
    text = {label: text for label, text in form.questions[0].answers}
    back = WORDING["web_back"]
    with served(engine, "three") as url:
        watched = Watched(browser)
        watched.page.add_init_script(counted_uniforms(values))
        watched.start(url, "BACK-1")
        page = watched.page
        first = ("yes", "no", "yes")
        for question, rule, label in zip(form.questions, shown, first, strict=True):
            page.get_by_text(question.progress, exact=True).wait_for()
            assert watched.rule() == rule
            # no Back on the first question: there is nothing before it
            assert page.get_by_role("button", name=back).is_visible() is (question.number > 1)
            page.get_by_role("button", name=text[label], exact=True).click()
        # the review: every question with its answer, no rule, nothing sent yet
        page.get_by_text(WORDING["web_done"]).wait_for()
        items = page.locator("#review-list li")
        assert [items.nth(i).locator("p").all_text_contents() for i in range(3)] == [
            [q.text, text[label]] for q, label in zip(form.questions, first, strict=True)]
        review = page.locator("#review").inner_text()
        assert not any(line in review for rule in rules for line in rule.lines)
        assert not any(address.endswith("/submit") for _, address, _ in watched.requests)
        # Back, back, back: each question with the rule drawn for it and the answer given
        page.locator("#review-back").click()
        for index in (2, 1, 0):
            question = form.questions[index]
            page.get_by_text(question.progress, exact=True).wait_for()
            assert watched.rule() == shown[index], question.id
            pressed = page.locator('#answers button[aria-pressed="true"]').all_text_contents()
            assert pressed == [text[first[index]]]
            if index:
                page.locator("#back-button").click()
        assert page.evaluate("window.draws") == 3  # no rule was drawn again
        # change the first answer, keep the others, and send
        page.get_by_role("button", name=text["dont_know"], exact=True).click()
        for question, label in zip(form.questions[1:], first[1:], strict=True):
            page.get_by_text(question.progress, exact=True).wait_for()
            page.get_by_role("button", name=text[label], exact=True).click()
        page.get_by_text(WORDING["web_done"]).wait_for()
        assert items.nth(0).locator("p").all_text_contents() == [form.questions[0].text,
                                                                  text["dont_know"]]
        page.get_by_role("button", name=WORDING["web_submit"]).click()
        page.get_by_text(WORDING["web_thanks"]).wait_for()
        assert page.evaluate("window.draws") == 3
        assert page.locator("#review-list li").count() == 0  # the list leaves the page too
        bodies = [(address.rsplit("/", 1)[1], json.loads(data))
                  for method, address, data in watched.requests if method == "POST"]
        assert bodies == [("start", {"respondent_id": "BACK-1"}),
                          ("submit", {"respondent_id": "BACK-1",
                                      "answers": {"q1": "dont_know", "q2": "no", "q3": "yes"}})]
        assert watched.errors == []
        watched.close()
    assert {q.question_id: q.answers() for q in store.count_responses(engine, "three")} == {
        "q1": {"dont_know": 1}, "q2": {"no": 1}, "q3": {"yes": 1}}
    engine.dispose()
