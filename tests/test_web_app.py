"""The web application's HTTP behaviour: hostile requests are refused and change nothing.

Requests go over real HTTP (httpx) to the application on uvicorn on loopback,
on real migrated databases (SQLite and PostgreSQL); the browser tests
(test_web_browser.py) drive ``surveykit serve`` through Chromium.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from migrated import migrated_sqlite
from sqlalchemy import Engine

from surveykit import store
from surveykit.definition.survey import load_survey_file
from surveykit.resources import locate_resource
from surveykit.store import database
from surveykit.web.app import create_app
from surveykit.web.assets import SCRIPT, load_asset
from surveykit.web.security import CSRF_COOKIE
from tests.store_support import checked_counts
from tests.web_support import ANSWERS, serving, snapshot

ISSUED = "7KQ2-M9XD-4FRT-8B"
SAMPLE_DATA = locate_resource("sample_data")


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """conftest's SQLite database file, migrated to head: a copy of the migrated template
    (every test here ran init only as set-up)."""
    return migrated_sqlite(tmp_path / "surveykit.db")


@contextmanager
def client_for(engine: Engine, **options) -> Iterator[httpx.Client]:
    """An HTTP client of the application serving academic_integrity on loopback."""
    with serving(create_app(engine, "academic_integrity", **options)) as url, \
            httpx.Client(base_url=url, timeout=30) as client:
        yield client


def page_token(client: httpx.Client) -> str:
    """Open the page as a browser does: the CSRF cookie is set, the token is in the page."""
    html = client.get("/").text
    token = client.cookies[CSRF_COOKIE]
    assert f'<meta name="csrf-token" content="{token}">' in html
    return token


def origin_of(client: httpx.Client) -> str:
    """The server's own origin, as a browser sends it in ``Origin``."""
    return str(client.base_url).rstrip("/")


def post(client: httpx.Client, path: str, body, token: str | None, **headers):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    sent = {"content-type": "application/json", "origin": origin_of(client), **headers}
    if token is not None:
        sent["x-csrf-token"] = token
    return client.post(path, content=data, headers=sent)


@pytest.fixture
def issued_engine(survey_engine: Engine) -> Engine:
    """The sample survey with one issued id, on SQLite and on PostgreSQL."""
    database.record_generation(survey_engine, "academic_integrity", [ISSUED], {})
    return survey_engine


@pytest.fixture
def sqlite_engine(sqlite_url: str, sample_survey) -> Iterator[Engine]:
    """The same on SQLite only, for behaviour that does not touch the database."""
    engine = store.open_engine(sqlite_url)
    store.add_survey(engine, sample_survey)
    database.record_generation(engine, "academic_integrity", [ISSUED], {})
    yield engine
    engine.dispose()


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory) -> Iterator[tuple[Engine, str]]:
    """The sample survey with one issued id on SQLite, served once with the default options
    for the tests whose requests are refused or only read (each checks that the database
    is as it was before its own requests): its engine and the server's URL."""
    engine = store.open_engine(migrated_sqlite(tmp_path_factory.mktemp("shared")
                                               / "surveykit.db"))
    store.add_survey(engine, load_survey_file(SAMPLE_DATA / "academic_integrity.toml"))
    database.record_generation(engine, "academic_integrity", [ISSUED], {})
    with serving(create_app(engine, "academic_integrity")) as url:
        yield engine, url
    engine.dispose()


@pytest.fixture
def shared(shared_server) -> Iterator[tuple[Engine, httpx.Client]]:
    """The shared server's engine and a client of its own (cookies start empty)."""
    engine, url = shared_server
    with httpx.Client(base_url=url, timeout=30) as client:
        yield engine, client


def test_a_submission_is_recorded_once_then_repeats_are_no_ops(issued_engine: Engine):
    with client_for(issued_engine) as client:
        token = page_token(client)
        start = post(client, "/start", {"respondent_id": ISSUED.lower()}, token)
        assert start.status_code == 200
        assert start.json() == {"respondent_id": ISSUED, "group": 1}
        body = {"respondent_id": ISSUED, "answers": ANSWERS}
        first = post(client, "/submit", body, token)
        assert (first.status_code, first.json()) == (201, {"status": "recorded"})
        before = snapshot(issued_engine)
        again = post(client, "/submit", body, token)
        assert (again.status_code, again.json()) == (200, {"status": "already_recorded"})
        for answer in (first, again):  # made once, sent with every request's headers
            assert answer.headers["content-type"] == "application/json"
            assert answer.headers["x-frame-options"] == "DENY"
            assert answer.headers.get_list("cache-control") == ["no-store"]
        conflict = post(client, "/submit", {**body, "answers": {**ANSWERS, "plagiarism": "yes"}},
                        token)
        assert conflict.status_code == 409 and conflict.json()["reason"] == "conflict"
        used = post(client, "/start", {"respondent_id": ISSUED}, token)
        assert used.status_code == 409
        assert snapshot(issued_engine) == before


HOSTILE = [
    # (name, path, body, headers, expected status, reason)
    ("extra field", "/submit", {"respondent_id": ISSUED, "answers": ANSWERS, "code": "T"},
     {}, 422, "invalid"),
    ("draw sent along", "/submit",
     {"respondent_id": ISSUED, "answers": ANSWERS, "instructions": {"exam_cheating": "T"}},
     {}, 422, "invalid"),
    ("unknown id", "/submit", {"respondent_id": "7KQ2-M9XD-4FRT-8C", "answers": ANSWERS},
     {}, 403, "not_issued"),
    ("unknown id at start", "/start", {"respondent_id": "NOT-ISSUED"}, {}, 403, "not_issued"),
    ("wrong label", "/submit", {"respondent_id": ISSUED, "answers": {"exam_cheating": "maybe"}},
     {}, 422, "invalid"),
    ("script in answers", "/submit",
     {"respondent_id": ISSUED, "answers": {"exam_cheating": "<script>alert(1)</script>"}},
     {}, 422, "invalid"),
    ("script as question id", "/submit",
     {"respondent_id": ISSUED, "answers": {"<script>alert(1)</script>": "yes"}},
     {}, 422, "invalid"),
    ("script as id", "/submit",
     {"respondent_id": "<script>alert(1)</script>", "answers": ANSWERS}, {}, 422, "invalid"),
    ("answers not an object", "/submit", {"respondent_id": ISSUED, "answers": "yes"},
     {}, 422, "invalid"),
    ("not an object", "/submit", ["respondent_id", ISSUED], {}, 422, "invalid"),
    ("missing answers", "/submit", {"respondent_id": ISSUED}, {}, 422, "invalid"),
    ("field twice", "/submit",
     b'{"respondent_id": "7KQ2-M9XD-4FRT-8B", "answers": {"exam_cheating": "yes"},'
     b' "answers": {"exam_cheating": "no"}}', {}, 422, "invalid"),
    ("NaN", "/submit", b'{"respondent_id": NaN, "answers": {}}', {}, 422, "invalid"),
    ("deep nesting", "/submit", b"[" * 30_000 + b"]" * 30_000, {}, 422, "invalid"),
    ("not UTF-8", "/submit", b'{"respondent_id": "\xff"}', {}, 422, "invalid"),
    ("not JSON", "/submit", b"respondent_id=x&answers=y", {}, 422, "invalid"),
    ("form post", "/submit", b"respondent_id=x",
     {"content-type": "application/x-www-form-urlencoded"}, 415, "content_type"),
    ("oversized body", "/submit",
     {"respondent_id": ISSUED, "answers": ANSWERS, "padding": "x" * 70_000}, {}, 413, "size"),
    ("other site", "/submit", {"respondent_id": ISSUED, "answers": ANSWERS},
     {"origin": "https://evil.example", "sec-fetch-site": "cross-site"}, 403, "origin"),
]


def test_hostile_requests_get_a_4xx_and_change_nothing(issued_engine: Engine):
    # one server for every case: each must leave the database as it was
    with client_for(issued_engine) as client:
        token = page_token(client)
        before = snapshot(issued_engine)
        for name, path, body, headers, status, reason in HOSTILE:
            response = post(client, path, body, token, **headers)
            assert (response.status_code, response.json()["reason"]) == (status, reason), name
            assert "<script>" not in response.text, name  # nothing sent is echoed back
            assert snapshot(issued_engine) == before, name
        # and the server still works
        assert client.get("/healthz").json()["status"] == "ok"


def test_a_body_larger_than_it_claims_is_cut_off_at_the_limit(sqlite_engine: Engine):
    with client_for(sqlite_engine, max_body=1000) as client:
        token = page_token(client)
        before = snapshot(sqlite_engine)

        def chunks():  # no Content-Length: the server counts what arrives
            yield b'{"respondent_id": "' + b"A" * 600
            yield b"A" * 600 + b'", "answers": {}}'

        response = client.post("/submit", content=chunks(), headers={
            "content-type": "application/json", "x-csrf-token": token,
            "origin": origin_of(client)})
        assert response.status_code == 413
        assert snapshot(sqlite_engine) == before


@pytest.mark.parametrize("token", [None, "", "x" * 43], ids=["missing", "empty", "wrong"])
def test_posts_without_the_page_csrf_token_are_refused(shared, token):
    engine, client = shared
    page_token(client)
    before = snapshot(engine)
    response = post(client, "/submit", {"respondent_id": ISSUED, "answers": ANSWERS}, token)
    assert response.status_code == 403 and response.json()["reason"] == "csrf"
    assert snapshot(engine) == before


def test_a_token_without_its_cookie_is_refused(shared):
    engine, client = shared
    token = page_token(client)
    client.cookies.clear()
    before = snapshot(engine)
    response = post(client, "/submit", {"respondent_id": ISSUED, "answers": ANSWERS}, token)
    assert response.status_code == 403
    assert snapshot(engine) == before


def test_each_client_address_is_rate_limited(sqlite_engine: Engine):
    with client_for(sqlite_engine, rate_limit=5) as client:
        token = page_token(client)
        statuses = [post(client, "/start", {"respondent_id": "NOT-ISSUED"}, token).status_code
                    for _ in range(7)]
        assert statuses == [403] * 5 + [429, 429]
        refused = post(client, "/start", {"respondent_id": ISSUED}, token)
        assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1


def test_after_close_at_answers_are_refused_and_the_page_says_closed(issued_engine: Engine):
    close_at = datetime(2026, 11, 23, 18, 0, tzinfo=UTC)
    clock = [close_at - timedelta(minutes=1)]
    with client_for(issued_engine, close_at=close_at, clock=lambda: clock[0]) as client:
        token = page_token(client)
        assert client.get("/survey.json").json()["open"] is True
        clock[0] = close_at
        assert client.get("/survey.json").json()["open"] is False
        before = snapshot(issued_engine)
        response = post(client, "/submit", {"respondent_id": ISSUED, "answers": ANSWERS}, token)
        assert response.status_code == 410 and response.json()["reason"] == "closed"
        assert client.get("/healthz").json()["open"] is False
        assert snapshot(issued_engine) == before


def test_every_response_carries_the_security_headers(shared):
    _, client = shared
    script = load_asset(SCRIPT)
    for path in ("/", "/survey.json", f"/static/{SCRIPT}", "/healthz", "/nowhere"):
        headers = client.get(path).headers
        policy = headers["content-security-policy"]
        assert "default-src 'none'" in policy
        assert f"script-src 'self' '{script.integrity}'" in policy
        assert "'unsafe-inline'" not in policy and "frame-ancestors 'none'" in policy
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["x-frame-options"] == "DENY"
        assert headers["referrer-policy"] == "no-referrer"
    cookie = client.get("/").headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie


def test_a_route_s_own_cache_control_wins_and_no_header_comes_twice(shared):
    """The security headers are added to what a route sends, except one the route set."""
    _, client = shared
    token = page_token(client)
    for response, caching in (
            (client.get("/"), "no-store"), (client.get(f"/static/{SCRIPT}"), "no-cache"),
            (client.get("/healthz"), "no-store"),
            (post(client, "/submit", {"respondent_id": "NOT-ISSUED", "answers": ANSWERS}, token),
             "no-store")):
        assert response.headers.get_list("cache-control") == [caching]
        names = [name.lower() for name, _ in response.headers.raw]
        assert len(names) == len(set(names)) and b"x-frame-options" in names


def test_the_page_loads_the_script_by_its_published_hash(shared):
    _, client = shared
    script = load_asset(SCRIPT)
    html = client.get("/").text
    assert f'src="/static/{SCRIPT}" integrity="{script.integrity}"' in html
    assert script.sha256 in html  # the footer
    assert client.get(f"/static/{SCRIPT}").content == script.content
    assert "<script>" not in html  # no inline script at all


def test_other_host_names_are_refused_on_loopback(shared):
    # DNS rebinding: a page on another name that resolves to 127.0.0.1
    _, client = shared
    response = client.get("/", headers={"host": "rebind.example:8000"})
    assert response.status_code == 400
    assert CSRF_COOKIE not in response.headers.get("set-cookie", "")


def test_wrong_methods_and_paths_get_short_json_errors(shared):
    _, client = shared
    assert client.get("/submit").status_code == 405
    missing = client.get("/admin")
    assert missing.status_code == 404 and missing.json()["reason"] == "http"


def test_healthz_reports_an_unreachable_database_as_503(tmp_path, sqlite_engine: Engine):
    with client_for(sqlite_engine) as client:
        assert client.get("/healthz").status_code == 200
        sqlite_engine.dispose()
        for path in tmp_path.glob("surveykit.db*"):
            path.unlink()
        (tmp_path / "surveykit.db").mkdir()  # a folder cannot be opened as a database
        response = client.get("/healthz")
        assert response.status_code == 503
        assert response.json() == {"status": "database unavailable"}


def test_a_body_with_covariates_is_refused_and_nothing_is_stored(engine: Engine):
    """Web submissions carry the id and the randomized answers only, even when the survey
    declares covariates: those come from an import (docs/store.md, "Covariates")."""
    from surveykit.definition.survey import parse_survey
    from tests.test_covariates import COVARIATES, survey_text

    store.add_survey(engine, parse_survey(survey_text(COVARIATES)))
    database.record_generation(engine, "academic_integrity", [ISSUED], {})
    before = snapshot(engine)
    with client_for(engine) as client:
        token = page_token(client)
        body = {"respondent_id": ISSUED, "answers": ANSWERS, "covariates": {"age": 21}}
        refused = post(client, "/submit", body, token)
    assert refused.status_code == 422
    assert "exactly the fields respondent_id, answers" in refused.json()["error"]
    assert snapshot(engine) == before


async def _submit_all(url: str, token: str, bodies: list[dict]) -> list[int]:
    """POST every body to /submit at once (each on its own connection); their statuses."""
    headers = {"content-type": "application/json", "origin": url, "x-csrf-token": token,
               "cookie": f"{CSRF_COOKIE}={token}"}
    limits = httpx.Limits(max_connections=len(bodies))
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
        responses = await asyncio.gather(*(client.post("/submit", headers=headers,
                                                       content=json.dumps(body).encode())
                                           for body in bodies))
    return [response.status_code for response in responses]


def test_concurrent_submissions_are_committed_together_and_answered_each_as_alone(
        issued_engine: Engine):
    """Submissions arriving together share group commits (issue 25); a copy, a change, an
    id not issued and a wrong label among them fare as if each came alone."""
    ids = [f"ID-{number}" for number in range(30)]
    database.record_generation(issued_engine, "academic_integrity", ids, {})
    new = [{"respondent_id": i, "answers": {**ANSWERS, "plagiarism": ("yes", "no")[n % 2]}}
           for n, i in enumerate(ids[1:])]
    copies = [{"respondent_id": "ID-0", "answers": ANSWERS}] * 5
    change = {"respondent_id": "ID-0", "answers": {**ANSWERS, "plagiarism": "yes"}}
    refused = [{"respondent_id": "NOT-ISSUED", "answers": ANSWERS},
               {"respondent_id": "ID-1", "answers": {**ANSWERS, "plagiarism": "perhaps"}}]
    bodies = [*copies[:2], *new[:10], change, *refused, *new[10:], *copies[2:]]
    with serving(create_app(issued_engine, "academic_integrity")) as url, \
            httpx.Client(base_url=url, timeout=30) as client:
        token = page_token(client)
        statuses = asyncio.run(_submit_all(url, token, bodies))
    by_body = list(zip(bodies, statuses, strict=True))
    assert [s for b, s in by_body if b in new] == [201] * len(new)
    assert [s for b, s in by_body if b in refused] == [403, 422]
    zero = sorted(s for b, s in by_body if b["respondent_id"] == "ID-0")
    # one of ID-0's six submissions is stored; copies of it are repeats, the others conflicts
    assert zero in ([200] * 4 + [201] + [409], [201] + [409] * 5), zero
    stored = change["answers"] if zero.count(409) == 5 else ANSWERS
    counted = checked_counts(issued_engine, "academic_integrity")  # kept == a recount
    assert counted[0].answered == 30
    plagiarism = {q.question_id: q.answers() for q in counted}["plagiarism"]
    answers = [b["answers"]["plagiarism"] for b in new] + [stored["plagiarism"]]
    assert plagiarism == {label: answers.count(label) for label in set(answers)}
