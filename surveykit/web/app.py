"""The ASGI application behind ``surveykit serve`` (Starlette): one survey, seven routes.

=====================  ==============================================================
``GET /``              the page (HTML; sets the CSRF cookie, carries the token)
``GET /token``         ``{"token"}``: the CSRF token again (sets the cookie), for a page
                       whose token a restarted server no longer accepts
``GET /survey.json``   questions, button texts and each question's rules with their
                       integer thresholds (:mod:`surveykit.collection.webform`)
``GET /static/...``    ``survey.js`` (draws the rules) and ``survey.css``
``POST /start``        ``{"respondent_id"}`` -> the id's group (which rules to draw)
``POST /submit``       ``{"respondent_id", "answers": {question id: label}}`` (a
                       numeric question's label is the typed number, as text):
                       stored atomically with the submissions that arrived with it,
                       in one transaction (group commit: :class:`_GroupCommit`),
                       answered once that commits (:mod:`surveykit.store.submissions`)
``GET /healthz``       ``{"status": "ok", "open": ..., "submissions": ..., "refused": ...}``
=====================  ==============================================================

What the server learns is the respondent id and the answers, nothing else:
the page draws every rule (and every scrambling number of a numeric
question) in the browser and sends none; request bodies with
any other field are refused; no log line holds a body.

Status codes: 201 recorded, 200 the same answers again (nothing changed),
400 another host name or a connection closed mid-body, 403 id not issued,
CSRF or origin check failed, 408 body too slow, 409 different answers
already recorded, 410 the survey is closed (``close_at``), 413 body too
large, 415 not JSON, 422 malformed, 429 rate limit (with Retry-After), 503
database unavailable. Every refusal happens before the database changes,
is one line of JSON (``{"error": ..., "reason": ...}``) and counts as
refused in the tally; an error nobody foresaw is a 500 of the same form and
one line on the server's stderr, never a traceback.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import traceback
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sqlalchemy import Engine, text
from sqlalchemy.exc import SQLAlchemyError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from surveykit.collection.render import load_wording_defaults, make_environment
from surveykit.collection.webform import build_web_form
from surveykit.errors import StoreError, printable
from surveykit.store.submissions import (
    NotIssuedError,
    SubmissionConflict,
    SubmissionError,
    open_submissions,
)
from surveykit.web.assets import SCRIPT, STYLE, load_asset
from surveykit.web.security import (
    CSRF_COOKIE,
    CSRF_HEADER,
    CsrfTokens,
    RateLimiter,
    RequestRefused,
    error_body,
    host_allowed,
    read_json_object,
    same_origin,
    security_headers,
)

__all__ = ["DEFAULT_BODY_TIMEOUT", "DEFAULT_MAX_BODY", "DEFAULT_RATE_LIMIT", "LOOPBACK_HOSTS",
           "SubmissionTally", "create_app"]

#: Largest request body accepted, in bytes (a 100-question survey sends about 5 KB).
DEFAULT_MAX_BODY = 64 * 1024
#: Seconds a request body may take to arrive once its headers are in (408 after).
DEFAULT_BODY_TIMEOUT = 10.0
#: POST requests a minute per client address (bursts of the same size).
DEFAULT_RATE_LIMIT = 60
#: Host headers accepted when the server listens on loopback (guards against DNS rebinding).
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")

# Worker threads that may read the database at once (POST /start, /healthz; submissions
# have one writer of their own, _GroupCommit): below SQLAlchemy's default pool
# (5 connections + 10 overflow), so no request times out waiting for a connection.
_DATABASE_THREADS = 10
# Most submissions one group commit writes (the rest wait for the next one).
_MOST_IN_BATCH = 256

access_log = logging.getLogger("surveykit.web.access")
error_log = logging.getLogger("surveykit.web")


@dataclass
class SubmissionTally:
    """What the server did since it started, for the terminal and /healthz (no answers).

    ``refused`` counts every request answered with an error status but a
    conflict: 4xx and 5xx from any route, body check, the router (404, 405),
    the Host check, and requests that are not HTTP at all
    (:mod:`surveykit.web.server`). Conflicts (409) are ``conflicts``; a
    ``POST /start`` told that its id has answers is neither.
    """

    recorded: int = 0
    repeated: int = 0
    conflicts: int = 0
    refused: int = 0
    started: float = field(default_factory=time.monotonic)

    def line(self) -> str:
        """One line for the terminal.

        >>> SubmissionTally(recorded=3, repeated=1).line()
        '3 submissions recorded, 1 repeated (no change), 0 conflicts, 0 refused'
        """
        return (f"{self.recorded} submission{'s' if self.recorded != 1 else ''} recorded, "
                f"{self.repeated} repeated (no change), {self.conflicts} conflict"
                f"{'s' if self.conflicts != 1 else ''}, {self.refused} refused")


# What the page is rendered with in place of the CSRF token, once per server (a token is
# 87 characters of URL-safe base64 and a dot: nothing in it is escaped in HTML).
_TOKEN_SLOT = "surveykit-csrf-token-slot"


class _PageBytes:
    """The page rendered once, in UTF-8, with the slot of the CSRF token cut out: each
    ``GET /`` joins the parts around a token instead of rendering the template."""

    def __init__(self, rendered: str) -> None:
        self.parts = [part.encode() for part in rendered.split(_TOKEN_SLOT)]
        if len(self.parts) < 2:
            raise ValueError("the page template does not show csrf_token")

    def with_token(self, token: str) -> bytes:
        """The page carrying ``token`` (which :class:`CsrfTokens` made: base64 and a dot)."""
        return token.encode("ascii").join(self.parts)


# The answers to a submission, made once (a Response only sends what it holds).
_RECORDED = Response(b'{"status":"recorded"}', status_code=201, media_type="application/json")
_ALREADY_RECORDED = Response(b'{"status":"already_recorded"}', media_type="application/json")


def _error(status: int, message: str, reason: str,
           headers: dict[str, str] | None = None) -> Response:
    """A refusal (:func:`surveykit.web.security.error_body`) with ``status``."""
    return Response(error_body(message, reason), status_code=status, headers=headers,
                    media_type="application/json")


def _is_refusal(status: int) -> bool:
    """An error status that counts as refused (409 conflicts are counted on their own)."""
    return status >= 400 and status != 409


def _header(scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return None


class _GroupCommit:
    """One writer for the submissions: each batch is the submissions waiting when the last
    one ended, stored in one transaction (:meth:`Submissions.record_batch
    <surveykit.store.submissions.Submissions.record_batch>`: checked as a set), and every
    submission of it is answered only once that transaction has committed.

    One commit (an fsync on SQLite) and one hand-over to the writer thread serve the whole
    batch instead of each submission; a batch starts as soon as the one before ends, so a
    lone submission waits for nothing but its own transaction. The batches run in a
    thread of their own: the event loop never waits for the database.
    """

    def __init__(self, record_batch: Callable[[list[tuple[object, object]]], list]) -> None:
        self._record_batch = record_batch
        self._pending: list[tuple[tuple[object, object], asyncio.Future]] = []
        self._writing = False
        self._task: asyncio.Task | None = None  # held: the loop keeps only weak references
        self._thread = ThreadPoolExecutor(1, "surveykit-writer")

    async def record(self, respondent_id: object, answers: object):
        """What :meth:`Submissions.record` returns for this submission, once committed (or
        the exception it raises; database trouble as the driver's or the store's error)."""
        future = asyncio.get_running_loop().create_future()
        self._pending.append(((respondent_id, answers), future))
        if not self._writing:
            self._writing = True
            self._task = asyncio.get_running_loop().create_task(self._write())
        return await future

    async def _write(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self._pending:
                batch = self._pending[:_MOST_IN_BATCH]
                del self._pending[:_MOST_IN_BATCH]
                try:
                    outcomes = await loop.run_in_executor(
                        self._thread, self._record_batch, [item for item, _ in batch])
                    if len(outcomes) != len(batch):  # never: one outcome per submission
                        raise StoreError(f"a group commit gave {len(outcomes)} outcomes for "
                                         f"{len(batch)} submissions")
                except Exception as exc:  # the batch as a whole failed: nobody is answered yes
                    outcomes = [exc] * len(batch)
                for (_, future), outcome in zip(batch, outcomes, strict=True):
                    if future.done():  # the request was cancelled
                        continue
                    if isinstance(outcome, BaseException):
                        future.set_exception(outcome)
                    else:
                        future.set_result(outcome)
        finally:
            self._writing = False


class _Front:
    """Pure ASGI middleware, the one layer around the routes (one layer, not three: each
    costs a call and a wrapped ``send`` per request). In order:

    * **the access log**: one line per request (client, method, path, status, time), the
      path only: never the query string, never a body, never a header. The client
      address, method and path are printed with control characters escaped
      (:func:`surveykit.errors.printable`): a path is the client's text, URL-decoded,
      and ``/%1b]0;title%07`` must not retitle the operator's terminal;
    * **the Host check** (400 for a name not allowed: DNS rebinding);
    * **security headers** and no-store caching on every response;
    * **the refusal count**: every response with an error status (:func:`_is_refusal`)
      adds one to ``tally.refused``, whichever part of the application sent it;
    * **never a traceback**: an exception that escapes the application is one line on
      the error log (its class and where it was raised; never its message, which can
      hold what a client sent or a driver's parameters) and a 500 in JSON.
    """

    def __init__(self, app, *, tally: SubmissionTally, allowed_hosts: tuple[str, ...] | None,
                 script_integrity: str) -> None:
        self.app = app
        self.tally = tally
        self.allowed_hosts = allowed_hosts
        # encoded once: every response carries them
        self.plain = self._encoded(security_headers(script_integrity, https=False))
        self.tls = self._encoded(security_headers(script_integrity, https=True))
        self.names = frozenset(name for name, _ in self.tls)

    @staticmethod
    def _encoded(headers: list[tuple[str, str]]) -> tuple[tuple[bytes, bytes], ...]:
        return (*((name.encode(), value.encode()) for name, value in headers),
                (b"cache-control", b"no-store"))

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        logged = access_log.isEnabledFor(logging.INFO)
        began = time.perf_counter() if logged else 0.0
        extra = self.tls if scope.get("scheme") == "https" else self.plain
        status = [0]

        async def respond(message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
                if _is_refusal(status[0]):
                    self.tally.refused += 1
                headers = [*message.get("headers", ()), *extra]
                present = {name.lower() for name, _ in headers[:-len(extra)]}
                if not present.isdisjoint(self.names):  # the route set one of them itself
                    headers[-len(extra):] = [header for header in extra
                                             if header[0] not in present]
                message = {**message, "headers": headers}
            await send(message)

        try:
            if self.allowed_hosts is not None and not host_allowed(_header(scope, b"host"),
                                                                   self.allowed_hosts):
                # DNS rebinding: a page on another name that resolves to this server
                refusal = _error(400, "this server does not answer to that host name",
                                 "host")
                await refusal(scope, receive, respond)
                return
            try:
                await self.app(scope, receive, respond)
            except Exception as exc:
                frame = traceback.extract_tb(exc.__traceback__)[-1]
                error_log.error("internal error answering %s %s: %s at %s line %s; please "
                                "report it",
                                printable(scope["method"]), printable(scope["path"]),
                                type(exc).__name__, frame.filename, frame.lineno)
                if not status[0]:
                    refusal = _error(500, "internal error; try again in a minute",
                                     "internal", headers={"connection": "close"})
                    await refusal(scope, receive, respond)
        finally:
            if logged:
                client = (scope.get("client") or ("-",))[0]
                access_log.info('%s "%s %s" %d %.1f ms', printable(str(client)),
                                printable(scope["method"]), printable(scope["path"]),
                                status[0] or 500, 1000 * (time.perf_counter() - began))


def create_app(engine: Engine, survey_name: str, *, close_at: datetime | None = None,
               rate_limit: int = DEFAULT_RATE_LIMIT, max_body: int = DEFAULT_MAX_BODY,
               body_timeout: float = DEFAULT_BODY_TIMEOUT,
               allowed_hosts: tuple[str, ...] | None = LOOPBACK_HOSTS,
               tally: SubmissionTally | None = None,
               clock: Callable[[], datetime] | None = None) -> Starlette:
    """The application serving survey ``survey_name`` from ``engine``'s database.

    ``close_at`` (aware datetime): from then on submissions get 410 and the
    page says the survey is closed. ``rate_limit``: POSTs a minute per client
    address (0: no limit). ``max_body`` bytes within ``body_timeout``
    seconds. ``allowed_hosts``: Host headers accepted (None: any, for a
    server behind a reverse proxy that checks them). ``tally`` receives the
    counts; ``clock`` gives the time (tests). CSRF tokens are signed under a
    secret drawn here (:class:`surveykit.web.security.CsrfTokens`): each
    application, so each server process, has its own.

    >>> # uvicorn.run(create_app(open_engine(), "academic_integrity"), port=8000)
    """
    submissions = open_submissions(engine, survey_name)
    environment = make_environment()
    form = build_web_form(submissions.survey,
                          wording_defaults=load_wording_defaults(environment))
    script, style = load_asset(SCRIPT), load_asset(STYLE)
    page = _PageBytes(environment.get_template("web/page.html.j2").render(
        language=form.language, title=form.title, wording=form.wording,
        csrf_token=_TOKEN_SLOT, script=script, style=style))
    limiter = RateLimiter(per_minute=rate_limit)
    csrf = CsrfTokens.new(context=survey_name)
    tally = tally if tally is not None else SubmissionTally()
    now = clock or (lambda: datetime.now(UTC))
    form_data = form.to_dict()
    closes_at = close_at.isoformat() if close_at is not None else None
    # survey.json as it reads while the survey is open, and once it is closed
    survey_bytes = {is_open_now: json.dumps({**form_data, "open": is_open_now,
                                             "closes_at": closes_at},
                                            ensure_ascii=False).encode()
                    for is_open_now in (True, False)}
    # Store calls wait here rather than for a pooled connection (whose wait has a timeout).
    # (plain executors: a call costs about half of anyio's to_thread, and a submission
    # that waits in their queue holds no pooled connection)
    database_threads = ThreadPoolExecutor(_DATABASE_THREADS, "surveykit-database")
    writer = _GroupCommit(submissions.record_batch)

    def is_open() -> bool:
        return close_at is None or now() < close_at

    def with_token(request: Request, respond: Callable[[str], Response]) -> Response:
        token = request.cookies.get(CSRF_COOKIE)
        if not csrf.valid(token):  # absent, made up, or from before a restart: a fresh one
            token = csrf.issue()
        response = respond(token)
        response.set_cookie(CSRF_COOKIE, token, httponly=True, samesite="strict", path="/",
                            secure=request.scope["scheme"] == "https")
        return response

    async def home(request: Request) -> Response:
        return with_token(request, lambda token: HTMLResponse(page.with_token(token)))

    async def token(request: Request) -> Response:
        return with_token(request, lambda token: JSONResponse({"token": token}))

    async def survey_json(request: Request) -> Response:
        return Response(survey_bytes[is_open()], media_type="application/json")

    def static(asset) -> Callable:
        async def serve(request: Request) -> Response:
            return Response(asset.content, media_type=asset.media_type,
                            headers={"cache-control": "no-cache"})
        return serve

    def check_post(request: Request) -> None:
        client = request.client.host if request.client else "unknown"
        if not limiter.allow(client):
            raise RequestRefused(429, "too many requests from this address; wait a minute",
                                 reason="rate_limit",
                                 headers={"retry-after": str(limiter.retry_after())})
        # the Host header as sent (checked by _Front), not request.url, which parses it
        own = f"{request.scope['scheme']}://{request.headers.get('host', '')}"
        if not same_origin(request.headers.get("origin"),
                           request.headers.get("sec-fetch-site"), own):
            raise RequestRefused(403, "requests must come from the survey's own page "
                                      "(Origin or Sec-Fetch-Site)", reason="origin")
        if not csrf.check(request.cookies.get(CSRF_COOKIE), request.headers.get(CSRF_HEADER)):
            raise RequestRefused(403, "the CSRF token is missing, wrong or not signed by this "
                                      "server: reload the page", reason="csrf")
        if not is_open():
            raise RequestRefused(410, "the survey is closed", reason="closed")

    def in_thread(function, *args) -> Awaitable:
        """A blocking store call, run in a worker thread."""
        return asyncio.get_running_loop().run_in_executor(database_threads, function, *args)

    async def store_call(call: Awaitable):
        """Await a store call (:func:`in_thread`, or the writer's next group commit);
        database trouble becomes 503."""
        try:
            return await call
        except (SubmissionError, NotIssuedError, SubmissionConflict):
            raise
        except (StoreError, SQLAlchemyError) as exc:
            # the class only: a driver's message can hold the statement's parameters
            error_log.error("database error: %s", type(exc).__name__)
            raise RequestRefused(503, "the survey's database is not available; try again "
                                      "in a minute", reason="database") from None

    async def answer(request: Request, fields: tuple[str, ...], act) -> Response:
        try:
            check_post(request)
            data = await read_json_object(request, fields, limit=max_body,
                                          timeout=body_timeout)
            return await act(data)
        # refusals are counted by _Front, from the status
        except RequestRefused as exc:
            return _error(exc.status, exc.message, exc.reason, exc.headers)
        except SubmissionError as exc:
            return _error(422, str(exc), "invalid")
        except NotIssuedError as exc:
            return _error(403, str(exc), "not_issued")
        except SubmissionConflict as exc:
            tally.conflicts += 1
            return _error(409, str(exc), "conflict")

    async def start(request: Request) -> Response:
        async def act(data: dict) -> Response:
            status = await store_call(in_thread(submissions.check, data["respondent_id"]))
            if status.answered:  # told before answering, not counted as a conflict
                return _error(409, "answers for this respondent id are already recorded",
                              "answered")
            return JSONResponse({"respondent_id": status.respondent_id, "group": status.group})
        return await answer(request, ("respondent_id",), act)

    async def submit(request: Request) -> Response:
        async def act(data: dict) -> Response:
            result = await store_call(writer.record(data["respondent_id"],
                                                    data["answers"]))
            if result.already_recorded:
                tally.repeated += 1
                return _ALREADY_RECORDED
            tally.recorded += 1
            return _RECORDED
        return await answer(request, ("respondent_id", "answers"), act)

    async def healthz(request: Request) -> Response:
        def ping() -> None:
            with engine.connect() as conn:
                conn.execute(text("SELECT 1"))
        try:
            await store_call(in_thread(ping))
        except RequestRefused:
            return JSONResponse({"status": "database unavailable"}, status_code=503)
        return JSONResponse({"status": "ok", "survey": form.survey, "open": is_open(),
                             "submissions": tally.recorded, "refused": tally.refused})

    async def no_icon(request: Request) -> Response:
        return Response(status_code=204)

    async def http_error(request: Request, exc: HTTPException) -> Response:
        return _error(exc.status_code, exc.detail if isinstance(exc.detail, str) else "error",
                      "http")

    routes = [  # the router tries them in order: the busiest first
        Route("/submit", submit, methods=["POST"]),
        Route("/start", start, methods=["POST"]),
        Route("/", home, methods=["GET"]),
        Route("/token", token, methods=["GET"]),
        Route("/survey.json", survey_json, methods=["GET"]),
        Route(f"/static/{SCRIPT}", static(script), methods=["GET"]),
        Route(f"/static/{STYLE}", static(style), methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/favicon.ico", no_icon, methods=["GET"]),
    ]
    middleware = [Middleware(_Front, tally=tally, allowed_hosts=allowed_hosts,
                             script_integrity=script.integrity)]
    app = Starlette(routes=routes, middleware=middleware,
                    exception_handlers={HTTPException: http_error})
    app.state.tally = tally
    app.state.script = script
    app.state.survey = submissions.survey
    return app
