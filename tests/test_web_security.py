"""Hostile HTTP against a real ``surveykit serve``: raw bytes over a socket, never a 500.

Each request of the corpus goes as raw bytes over its own TCP connection to a
``surveykit serve`` process the test starts (a real uvicorn, a real SQLite
file). Every one must get a 4xx (never 500) whose body is one line of JSON
(``{"error", "reason"}``), leave no traceback on the server's stderr, add one
to the refused count of the live tally (read from ``/healthz``, which shows
the same tally the terminal prints), and leave the database as it was. The
corpus holds what issue 19 found (a JSON integer beyond Python's 4,300-digit
int-string limit, a self-made CSRF pair) and what an attacker tries next:
long numbers, NaN and 1e400, deep nesting, byte order marks and other
encodings, 10 MB and chunked bodies, malformed framing, NUL and control
characters in paths, header injection, missing or foreign ``Origin``.
"""

from __future__ import annotations

import json
import logging
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from migrated import migrated_sqlite
from sqlalchemy import Engine

from surveykit import store
from surveykit.definition.survey import load_survey_file
from surveykit.store import database
from surveykit.web.app import DEFAULT_BODY_TIMEOUT, create_app
from surveykit.web.security import (
    CSRF_COOKIE,
    CsrfTokens,
    JsonLimits,
    RequestRefused,
    parse_json_object,
)
from surveykit.web.server import HEADER_TIMEOUT
from tests.web_support import ANSWERS, CliServer, running_cli, serving, snapshot

ISSUED = "7KQ2-M9XD-4FRT-8B"
GOOD = json.dumps({"respondent_id": ISSUED, "answers": ANSWERS}).encode()
MB = 1024 * 1024
SAMPLE = Path(__file__).resolve().parent.parent / "sample_data" / "academic_integrity.toml"


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """conftest's SQLite database file, migrated to head: a copy of the migrated template
    (every test here ran init only as set-up)."""
    return migrated_sqlite(tmp_path / "surveykit.db")


@dataclass(frozen=True)
class Reply:
    """One HTTP response as read from the socket."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        return next((value for key, value in self.headers if key == name), None)


def _read_reply(sock: socket.socket) -> Reply:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise AssertionError(f"the server closed the connection without a response: {data!r}")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = [(key.strip().lower(), value.strip())
               for key, _, value in (line.partition(":") for line in lines)]
    length = int(next(value for key, value in headers if key == "content-length"))
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    return Reply(status=int(status_line.split()[1]), headers=headers, body=rest[:length])


def exchange(url: str, head: bytes, body: bytes = b"", *, timeout: float = 30) -> Reply:
    """Send ``head`` and ``body`` as they are over one connection; read one response.

    They go from a second thread, so that a server that answers before reading
    everything (413, a 1 MB header) is heard while the rest is on its way.
    """
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:

        def send_body() -> None:
            try:
                sock.sendall(head + body)
            except OSError:  # the server answered and closed: the rest is not needed
                pass

        sender = threading.Thread(target=send_body, daemon=True)
        sender.start()
        try:
            return _read_reply(sock)
        finally:
            sender.join(timeout=timeout)


@dataclass(frozen=True)
class Context:
    """What a hostile client knows: the address, and a token the page gave it."""

    url: str
    token: str

    @property
    def host(self) -> str:
        return self.url.removeprefix("http://")


def request(method: str = "POST", path: str = "/submit", body: bytes = GOOD, *,
            content_type: str | None = "application/json", origin: str | None = "own",
            token: str | None = "own", cookie: str | None = "own",
            extra: tuple[str, ...] = (), length: bool = True,
            host: str | None = None) -> Callable[[Context], tuple[bytes, bytes]]:
    """A request builder: ``"own"`` stands for the server's origin and the page's token."""

    def build(context: Context) -> tuple[bytes, bytes]:
        lines = [f"{method} {path} HTTP/1.1", f"Host: {host or context.host}"]
        if origin is not None:
            lines.append(f"Origin: {context.url if origin == 'own' else origin}")
        if content_type is not None:
            lines.append(f"Content-Type: {content_type}")
        if token is not None:
            lines.append(f"X-CSRF-Token: {context.token if token == 'own' else token}")
        if cookie is not None:
            lines.append(f"Cookie: {CSRF_COOKIE}={context.token if cookie == 'own' else cookie}")
        if length:
            lines.append(f"Content-Length: {len(body)}")
        lines += extra
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"), body

    return build


def raw(head: bytes, body: bytes = b"") -> Callable[[Context], tuple[bytes, bytes]]:
    """A request as bytes (``{host}`` is replaced by the server's address)."""
    return lambda context: (head.replace(b"{host}", context.host.encode()), body)


def submission(respondent_id: bytes = b'"' + ISSUED.encode() + b'"',
               answers: bytes = json.dumps(ANSWERS).encode()) -> bytes:
    return b'{"respondent_id": ' + respondent_id + b', "answers": ' + answers + b"}"


def chunked(body: bytes, size: int = 65536) -> bytes:
    parts = [b"%x\r\n%b\r\n" % (len(body[i:i + size]), body[i:i + size])
             for i in range(0, len(body), size)]
    return b"".join(parts) + b"0\r\n\r\n"


# Requests that are two to the server (the others are one each)
TWO_REQUESTS = {"HTTP/2's preface"}
MADE_UP = "A" * 43 + "." + "A" * 43
OTHER_SERVER = CsrfTokens.new("academic_integrity").issue()
LONG_DIGITS = b"1" * 5000

# (name, request, status)
CORPUS: list[tuple[str, Callable[[Context], tuple[bytes, bytes]], int]] = [
    # numbers: issue 19 found the first two answered 500 with a traceback
    ("integer of 5,000 digits as respondent_id", request(body=submission(LONG_DIGITS)), 422),
    ("integer of 5,000 digits as an answer",
     request(body=submission(answers=b'{"exam_cheating": ' + LONG_DIGITS + b"}")), 422),
    ("integer of 5,000 digits at /start",
     request(path="/start", body=b'{"respondent_id": ' + LONG_DIGITS + b"}"), 422),
    ("negative integer of 5,000 digits", request(body=submission(b"-" + LONG_DIGITS)), 422),
    ("fraction of 5,000 digits", request(body=submission(b"0." + LONG_DIGITS)), 422),
    ("exponent of 5,000 digits", request(body=submission(b"1e" + LONG_DIGITS)), 422),
    ("1e400", request(body=submission(b"1e400")), 422),
    ("-1e400 as an answer", request(body=submission(answers=b'{"plagiarism": -1e400}')), 422),
    ("-0", request(body=submission(b"-0")), 422),
    ("NaN", request(body=submission(b"NaN")), 422),
    ("Infinity", request(body=submission(b"Infinity")), 422),
    ("-Infinity", request(body=submission(answers=b'{"plagiarism": -Infinity}')), 422),
    # nesting
    ("arrays 10,000 deep", request(body=b"[" * 10_000 + b"]" * 10_000), 422),
    ("objects 10,000 deep", request(body=b'{"a":' * 10_000 + b"1" + b"}" * 10_000), 422),
    ("arrays 10,000 deep as an answer",
     request(body=submission(answers=b'{"plagiarism": ' + b"[" * 10_000 + b"]" * 10_000
                             + b"}")), 422),
    ("arrays 9 deep", request(body=submission(answers=b"[" * 9 + b"]" * 9)), 422),
    # encodings
    ("a UTF-8 byte order mark", request(body=b"\xef\xbb\xbf" + GOOD), 422),
    ("UTF-16 with its byte order mark", request(body=GOOD.decode().encode("utf-16")), 422),
    ("UTF-16 without one", request(body=GOOD.decode().encode("utf-16-le")), 422),
    ("a Latin-1 byte", request(body=submission(b'"caf\xe9"')), 422),
    ("a lone surrogate", request(body=submission(b'"\\ud800"')), 422),
    ("an escaped NUL in the id", request(body=submission(b'"A\\u0000B"')), 422),
    ("a raw control character in a string", request(body=submission(b'"A\x1bB"')), 422),
    ("a string of 10,000 characters", request(body=submission(b'"' + b"A" * 10_000 + b'"')),
     422),
    # not one JSON object
    ("an empty body", request(body=b""), 422),
    ("an empty body without Content-Length", request(body=b"", length=False), 422),
    ("white space only", request(body=b" \r\n\t "), 422),
    ("not JSON", request(body=b"respondent_id=x&answers=y"), 422),
    ("a JSON array", request(body=b'["respondent_id", "answers"]'), 422),
    ("a JSON string", request(body=b'"respondent_id"'), 422),
    ("null", request(body=b"null"), 422),
    ("two objects", request(body=GOOD + GOOD), 422),
    ("a cut-off object", request(body=GOOD[:-5]), 422),
    # wrong types and fields
    ("respondent_id a number", request(body=submission(b"17")), 422),
    ("respondent_id a list", request(body=submission(b'["' + ISSUED.encode() + b'"]')), 422),
    ("respondent_id an object", request(body=submission(b'{"id": 1}')), 422),
    ("respondent_id true", request(body=submission(b"true")), 422),
    ("respondent_id null", request(body=submission(b"null")), 422),
    ("answers a list", request(body=submission(answers=b'["yes"]')), 422),
    ("answers empty", request(body=submission(answers=b"{}")), 422),
    ("an answer a number", request(body=submission(answers=b'{"plagiarism": 1}')), 422),
    ("an answer null", request(body=submission(answers=b'{"plagiarism": null}')), 422),
    ("an answer a list", request(body=submission(answers=b'{"plagiarism": ["yes"]}')), 422),
    ("an unknown question", request(body=submission(answers=b'{"age": "yes"}')), 422),
    ("an unknown field", request(body=GOOD[:-1] + b', "comment": "hi"}'), 422),
    ("the draw sent along", request(body=GOOD[:-1] + b', "instructions": {}}'), 422),
    ("a field twice", request(body=GOOD[:-1] + b', "respondent_id": "X"}'), 422),
    ("a missing field", request(body=b'{"respondent_id": "' + ISSUED.encode() + b'"}'), 422),
    # content types
    ("text/plain", request(content_type="text/plain"), 415),
    ("no Content-Type", request(content_type=None), 415),
    ("a form", request(content_type="application/x-www-form-urlencoded"), 415),
    ("multipart", request(content_type="multipart/form-data; boundary=x"), 415),
    ("JSON in UTF-16 declared", request(content_type="application/json; charset=utf-16"), 415),
    ("application/json-seq", request(content_type="application/json-seq"), 415),
    # sizes and framing
    ("a 10 MB body", request(body=b'{"respondent_id": "' + b"A" * (10 * MB) + b'"}'), 413),
    ("a 10 MB chunked body",
     request(body=chunked(b'{"respondent_id": "' + b"A" * (10 * MB) + b'"}'), length=False,
             extra=("Transfer-Encoding: chunked",)), 413),
    ("a chunked body of a bad submission",
     request(body=chunked(submission(LONG_DIGITS), size=100), length=False,
             extra=("Transfer-Encoding: chunked",)), 422),
    ("a broken chunk size",
     request(body=b"zz\r\n{}\r\n0\r\n\r\n", length=False, extra=("Transfer-Encoding: chunked",)),
     400),
    ("Content-Length not a number", request(length=False, extra=("Content-Length: 12abc",)), 400),
    ("Content-Length of 5,000 digits",
     request(length=False, extra=("Content-Length: " + "9" * 5000,)), 400),
    ("two different Content-Lengths",
     request(length=False, extra=(f"Content-Length: {len(GOOD)}", "Content-Length: 3")), 400),
    ("an unknown transfer coding",
     request(length=False, extra=("Transfer-Encoding: gzip",)), 400),
    # the request line and headers
    ("NUL in the path", raw(b"GET /\x00 HTTP/1.1\r\nHost: {host}\r\n\r\n"), 400),
    ("a space in the path", raw(b"GET /a b HTTP/1.1\r\nHost: {host}\r\n\r\n"), 400),
    ("bytes beyond ASCII in the path", raw(b"GET /\xff\xfe HTTP/1.1\r\nHost: {host}\r\n\r\n"),
     400),
    ("not HTTP at all", raw(b"HELLO\r\n\r\n"), 400),
    # h11 reads "PRI * HTTP/2.0" as a request (refused: no Host), then "SM" (not HTTP)
    ("HTTP/2's preface", raw(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 400),
    ("a header without a colon", raw(b"GET / HTTP/1.1\r\nHost: {host}\r\nNoColon\r\n\r\n"), 400),
    ("a CR inside a header", raw(b"GET / HTTP/1.1\r\nHost: {host}\r\nX-A: b\rSet-Cookie: c=1"
                                 b"\r\n\r\n"), 400),
    ("a NUL inside a header", raw(b"GET / HTTP/1.1\r\nHost: {host}\r\nX-A: b\x00c\r\n\r\n"), 400),
    ("a header of 1 MB", raw(b"GET / HTTP/1.1\r\nHost: {host}\r\nX-A: " + b"a" * MB
                              + b"\r\n\r\n"), 400),
    ("another site's Host", request(host="rebind.example"), 400),
    ("a Host with a path", request(host="127.0.0.1/evil"), 400),
    ("no Host", raw(b"GET / HTTP/1.0\r\n\r\n"), 400),
    # paths
    ("%00 in the path", raw(b"GET /%00 HTTP/1.1\r\nHost: {host}\r\n\r\n"), 404),
    ("percent-encoded control characters",
     raw(b"GET /%1b]0;PWNED%07%1b[2J HTTP/1.1\r\nHost: {host}\r\n\r\n"), 404),
    ("a percent-encoded C1 control and a bidi override",
     raw(b"GET /%C2%9B2J%E2%80%AEtxt.exe HTTP/1.1\r\nHost: {host}\r\n\r\n"), 404),
    ("an injected Set-Cookie in the path",
     raw(b"GET /%0d%0aSet-Cookie:%20injected=1 HTTP/1.1\r\nHost: {host}\r\n\r\n"), 404),
    ("GET /submit", raw(b"GET /submit HTTP/1.1\r\nHost: {host}\r\n\r\n"), 405),
    ("PUT /", request(method="PUT", path="/"), 405),
    ("DELETE /submit", request(method="DELETE"), 405),
    ("POST elsewhere", request(path="/admin"), 404),
    # CSRF: each body is a valid submission, so a check that let it through would store it
    ("no CSRF token", request(token=None), 403),
    ("no CSRF cookie", request(cookie=None), 403),
    ("a wrong CSRF token", request(token="x" * 43), 403),
    ("a self-made pair, well formed", request(token=MADE_UP, cookie=MADE_UP), 403),
    ("a self-made pair, any text", request(token="letmein", cookie="letmein"), 403),
    ("a pair signed by another server", request(token=OTHER_SERVER, cookie=OTHER_SERVER), 403),
    ("the token with Latin-1 bytes", request(token="\xff" * 87), 403),
    ("a Set-Cookie folded into the token header",
     request(extra=("X-CSRF-Token: abc", " Set-Cookie: surveykit_csrf=abc"), token=None), 403),
    # origins
    ("no Origin", request(origin=None), 403),
    ("a cross-site Origin", request(origin="https://evil.example"), 403),
    ("another port's Origin", request(origin="http://127.0.0.1:1"), 403),
    ("Origin null", request(origin="null"), 403),
    ("the own Origin but Sec-Fetch-Site cross-site",
     request(extra=("Sec-Fetch-Site: cross-site",)), 403),
    ("no Origin and Sec-Fetch-Site same-site",
     request(origin=None, extra=("Sec-Fetch-Site: same-site",)), 403),
]


@dataclass(frozen=True)
class Served:
    """A running ``surveykit serve``, its database, what a hostile client knows, and a
    client that reads the live tally."""

    server: CliServer
    engine: Engine
    context: Context
    health: httpx.Client

    def refused(self) -> int:
        """The refused count of the live tally (``/healthz``)."""
        return self.health.get("/healthz").json()["refused"]


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[Served]:
    """``surveykit serve`` on the sample survey with one issued id, no rate limit: one
    process for the module (starting one costs seconds). Each test counts refusals from
    where the tally stands when it begins and compares the database with itself before;
    the server's output and stderr are checked whole, every test's requests included."""
    url = migrated_sqlite(tmp_path_factory.mktemp("served") / "surveykit.db")
    engine = store.open_engine(url)
    store.add_survey(engine, load_survey_file(SAMPLE))
    database.record_generation(engine, "academic_integrity", [ISSUED], {})
    with running_cli(url, "academic_integrity", "--rate-limit", "0",
                     "--access-log") as server, httpx.Client(base_url=server.url,
                                                             timeout=30) as client:
        client.get("/")  # as a browser: the page sets the signed CSRF cookie
        served = Served(server=server, engine=engine, health=client,
                        context=Context(url=server.url, token=client.cookies[CSRF_COOKIE]))
        assert served.refused() == 0  # a fresh server has refused nothing
        yield served
    engine.dispose()


def assert_clean(server: CliServer) -> None:
    stderr = "".join(server.stderr)
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr[-3000:]
    assert "\x1b" not in stderr and "\x07" not in stderr


def assert_one_line_json(reply: Reply, name: str) -> dict:
    assert reply.header("content-type") == "application/json", name
    assert b"\n" not in reply.body and b"\r" not in reply.body, name
    message = json.loads(reply.body)
    assert set(message) == {"error", "reason"}, name
    assert message["error"] and "\n" not in message["error"], name
    return message


@pytest.mark.parametrize("corpus", [CORPUS], ids=[f"{len(CORPUS)} hostile requests"])
def test_every_hostile_request_is_a_4xx_in_one_json_line_counted_and_changes_nothing(
        served, corpus):
    server, engine, context = served.server, served.engine, served.context
    before = snapshot(engine)
    count = served.refused()
    for name, build, status in corpus:
        head, body = build(context)
        reply = exchange(context.url, head, body)
        assert reply.status == status, (name, reply.status, reply.body[:300])
        message = assert_one_line_json(reply, name)
        assert "injected" not in str(reply.headers), name  # no header from the path
        assert "set-cookie" not in {key for key, _ in reply.headers}, name
        assert message["error"].isascii(), name  # nothing of the body comes back
        count += 2 if name in TWO_REQUESTS else 1
        assert served.refused() == count, name
        assert snapshot(engine) == before, name
        assert_clean(server)
    # the terminal's live count says the same (printed when it changes)
    assert f"conflicts, {count} refused" in server.output_once(f"conflicts, {count} refused")
    # and the server still works: a real submission goes through
    with httpx.Client(base_url=context.url, timeout=30) as client:
        client.get("/")
        sent = client.post("/submit", content=GOOD, headers={
            "content-type": "application/json", "origin": context.url,
            "x-csrf-token": client.cookies[CSRF_COOKIE]})
    assert sent.status_code == 201, sent.text
    assert_clean(server)


def test_a_json_integer_beyond_pythons_digit_limit_is_refused_not_a_server_error(served):
    # issue 19: 4,301 digits and more made int() raise inside json.loads: HTTP 500, a
    # traceback on the server's stderr, and nothing counted as refused
    server, engine, context = served.server, served.engine, served.context
    before = snapshot(engine)
    count = served.refused()
    for body in (submission(b"9" * 4301), submission(answers=b'{"plagiarism": ' + b"9" * 4301
                                                     + b"}")):
        reply = exchange(context.url, *request(body=body)(context))
        assert reply.status == 422
        assert "number longer than 32 characters" in assert_one_line_json(reply, "")["error"]
    assert served.refused() == count + 2
    assert snapshot(engine) == before
    assert_clean(server)


def test_the_access_log_escapes_what_clients_send_before_it_reaches_the_terminal(served):
    # issue 19: GET /%1b]0;PWNED%07%1b[2J retitled the operator's terminal and cleared it
    server, context = served.server, served.context
    hostile = [(b"/%1b]0;PWNED%07%1b[2J", r"/\x1b]0;PWNED\x07\x1b[2J"),
               (b"/%C2%9B31m", r"/\x9b31m"),  # CSI as one C1 character
               (b"/%E2%80%AEfdp.exe", r"/\u202efdp.exe")]  # right-to-left override
    for path, _ in hostile:
        assert exchange(context.url, raw(b"GET " + path + b" HTTP/1.1\r\nHost: {host}\r\n\r\n")(
            context)[0]).status == 404
    # the client's address comes from X-Forwarded-For when a local proxy sends it
    forwarded = raw(b"GET / HTTP/1.1\r\nHost: {host}\r\nX-Forwarded-For: \x1b[2J\x9b1m\r\n\r\n")
    assert exchange(context.url, forwarded(context)[0]).status == 200
    log = server.output_once(r"\x1b[2J\x9b1m")
    for _, escaped in hostile:
        assert f'"GET {escaped}" 404' in log, log
    assert r'\x1b[2J\x9b1m "GET /" 200' in log, log
    assert_clean(server)
    for character in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert character not in log


def test_a_csrf_pair_the_client_made_up_is_refused_and_a_signed_one_is_not(sqlite_url: str,
                                                                          sample_survey):
    # issue 19: cookie and header were both client-set, so any equal pair passed
    engine = store.open_engine(sqlite_url)
    store.add_survey(engine, sample_survey)
    body = {"respondent_id": "WEB-1", "answers": ANSWERS}  # no ids issued: any id is taken
    with serving(create_app(engine, "academic_integrity")) as url, \
            httpx.Client(base_url=url, timeout=30) as client:
        before = snapshot(engine)
        for made_up in (MADE_UP, "a" * 43, OTHER_SERVER):
            client.cookies.set(CSRF_COOKIE, made_up)
            reply = client.post("/submit", json=body, headers={"origin": url,
                                                               "x-csrf-token": made_up})
            assert (reply.status_code, reply.json()["reason"]) == (403, "csrf")
            assert snapshot(engine) == before
        client.cookies.clear()
        page = client.get("/")  # a made-up cookie is replaced by a signed token
        token = client.cookies[CSRF_COOKIE]
        assert token != made_up and f'content="{token}"' in page.text
        assert re.fullmatch(r"[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{43}", token)
        assert client.get("/token").json() == {"token": token}  # the same while it is valid
        reply = client.post("/submit", json=body, headers={"origin": url, "x-csrf-token": token})
        assert reply.status_code == 201, reply.text
    engine.dispose()


def test_each_server_signs_with_its_own_secret(sqlite_url: str, sample_survey):
    # the secret lives in the process: a token of one server (or of the same server before a
    # restart) is refused by another, which hands out a fresh one at /token
    engine = store.open_engine(sqlite_url)
    store.add_survey(engine, sample_survey)
    with serving(create_app(engine, "academic_integrity")) as first, \
            serving(create_app(engine, "academic_integrity")) as second:
        old = httpx.get(first + "/token").json()["token"]
        headers = {"origin": second, "x-csrf-token": old, "cookie": f"{CSRF_COOKIE}={old}"}
        reply = httpx.post(second + "/start", json={"respondent_id": "WEB-1"}, headers=headers)
        assert (reply.status_code, reply.json()["reason"]) == (403, "csrf")
        fresh = httpx.get(second + "/token", headers={"cookie": f"{CSRF_COOKIE}={old}"})
        new = fresh.json()["token"]
        assert new != old and f"{CSRF_COOKIE}={new}" in fresh.headers["set-cookie"]
        headers = {"origin": second, "x-csrf-token": new, "cookie": f"{CSRF_COOKIE}={new}"}
        reply = httpx.post(second + "/start", json={"respondent_id": "WEB-1"}, headers=headers)
        assert reply.status_code == 200, reply.text
    engine.dispose()


def test_slow_and_stalled_clients_get_408_within_a_bounded_wait(sqlite_url: str,
                                                                  sample_survey, caplog,
                                                                  capfd):
    # the server's own settings (surveykit serve runs with DEFAULT_BODY_TIMEOUT and
    # HEADER_TIMEOUT, 10 s each), shorter and different here so that the test waits two
    # seconds, not ten, and each half-sent request is timed by its own setting
    timeouts = {"half a body": 1.0, "half the headers": 2.0}
    assert (DEFAULT_BODY_TIMEOUT, HEADER_TIMEOUT) == (10.0, 10.0)  # what docs/ promise
    engine = store.open_engine(sqlite_url)
    store.add_survey(engine, sample_survey)
    database.record_generation(engine, "academic_integrity", [ISSUED], {})
    app = create_app(engine, "academic_integrity", rate_limit=0,
                     body_timeout=timeouts["half a body"])
    with serving(app, header_timeout=timeouts["half the headers"]) as url, \
            httpx.Client(base_url=url, timeout=30) as client:
        client.get("/")
        context = Context(url=url, token=client.cookies[CSRF_COOKIE])
        before = snapshot(engine)
        host, port = context.host.split(":")
        head, body = request(body=GOOD)(context)
        partial = [
            ("half a body", head + body[:10]),
            ("half the headers", head[:40]),
        ]
        replies: dict[str, tuple[float, Reply]] = {}

        def slow(name: str, data: bytes) -> None:
            with socket.create_connection((host, int(port)), timeout=60) as sock:
                began = time.monotonic()
                sock.sendall(data)
                reply = _read_reply(sock)
                replies[name] = (time.monotonic() - began, reply)

        idle = socket.create_connection((host, int(port)), timeout=60)  # sends nothing
        threads = [threading.Thread(target=slow, args=case) for case in partial]
        began = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert idle.recv(100) == b""  # closed without a word: not a refusal
        idle.close()
        waited = max(timeouts.values())
        assert time.monotonic() - began < waited + 10
        for name, _ in partial:
            seconds, reply = replies[name]
            assert reply.status == 408, (name, reply)
            message = assert_one_line_json(reply, name)
            assert message["reason"] == "timeout"
            assert f"within {timeouts[name]:g} seconds" in message["error"], name
            assert seconds >= 0.9 * timeouts[name], name
        assert client.get("/healthz").json()["refused"] == 2
        assert app.state.tally.refused == 2
    assert snapshot(engine) == before
    # in this process the server's errors would be log records (surveykit.web) or lines
    # on stderr (uvicorn's own logger): none, and no traceback
    logged = [record for record in caplog.records if record.levelno >= logging.WARNING]
    assert logged == [], [record.getMessage() for record in logged]
    stderr = capfd.readouterr().err
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr[-3000:]
    engine.dispose()


def test_an_unforeseen_error_is_a_one_line_500_and_one_line_on_the_log(sqlite_url: str,
                                                                       sample_survey, caplog,
                                                                  capfd):
    # nothing in the corpus reaches it; a clock that fails (the test's injected time) stands
    # for any error nobody foresaw: its message, which could hold what a client sent, stays
    # out of both the response and the log
    engine = store.open_engine(sqlite_url)
    store.add_survey(engine, sample_survey)

    def broken_clock():
        raise RuntimeError("7KQ2-M9XD-4FRT-8B answered yes")

    app = create_app(engine, "academic_integrity", clock=broken_clock,
                     close_at=datetime(2099, 1, 1, tzinfo=UTC))
    before = snapshot(engine)
    with serving(app) as url, httpx.Client(base_url=url, timeout=30) as client:
        client.get("/")
        reply = client.post("/submit", content=GOOD, headers={
            "content-type": "application/json", "origin": url,
            "x-csrf-token": client.cookies[CSRF_COOKIE]})
        assert reply.status_code == 500
        assert reply.content == b'{"error":"internal error; try again in a minute",' \
                                b'"reason":"internal"}'
        assert client.get("/survey.json").status_code == 500
        assert app.state.tally.refused == 2
    assert snapshot(engine) == before
    logged = [record for record in caplog.records if record.name == "surveykit.web"]
    assert [record.exc_info for record in logged] == [None, None]
    lines = [record.getMessage() for record in logged]
    assert lines[0].startswith("internal error answering POST /submit: RuntimeError at ")
    assert all("\n" not in line and "answered yes" not in line for line in lines), lines
    engine.dispose()


# (body, what is refused or None) under JsonLimits(depth=3, string=12): each limit just met
# and just passed, where the body is short enough that a shortcut could skip the check and
# where it is not; \u escapes that make lone surrogates, and text that only looks like one
SMALL = JsonLimits(depth=3, string=12, number=32)
AT_THE_LIMITS = [
    (b'{"a": "012345678901"}', None),
    (b'{"a": "012345678901x"}', "string longer than 12"),
    (b'{"a":"0123456789012"}', "string longer than 12"),
    (b'{"0123456789abc": 1}', "string longer than 12"),
    (b'{"a": [[1]]}', None),
    (b'{"a": [[[]]]}', "more than 3 deep"),
    (b'{"a":[{"b":[]}]}', "more than 3 deep"),
    (b'{"a": ["[[[[", "{{"]}', None),
    (b'{"a": "\\ud800"}', "lone surrogate"),
    (b'{"\\udfff": 1}', "lone surrogate"),
    (b'{"a": ["x", {"b": "\\ud83d"}]}', "lone surrogate"),
    (b'{"a": "\\ud83d\\ude00"}', None),
    (b'{"a": "\\\\ud800"}', None),
    (b'{"a": "\\u00e9"}', None),
]


@pytest.mark.parametrize(("body", "refused"), AT_THE_LIMITS,
                         ids=[body.decode() for body, _ in AT_THE_LIMITS])
def test_the_json_limits_hold_at_their_edges(body: bytes, refused: str | None):
    """parse_json_object skips its size walk when no string or nesting can pass a limit and
    its surrogate walk when the body has no \\u escape: neither shortcut lets one through."""
    if refused is None:
        assert parse_json_object(body, ["a"] if b'"a"' in body else [], limits=SMALL)
        return
    with pytest.raises(RequestRefused) as caught:
        parse_json_object(body, ["a"], limits=SMALL)
    assert caught.value.status == 422 and refused in caught.value.message
