"""What keeps the web server's requests honest: headers, CSRF, rate limits, strict JSON bodies.

Each piece is small and independent; :mod:`surveykit.web.app` puts them
together. A refused request gets a 4xx with a one-line JSON message
(``{"error": "..."}``) that never repeats what the client sent, and the
refusal happens before anything touches the database.

* :func:`security_headers`: a strict Content-Security-Policy (no inline
  script or style, scripts only from this server and matching the published
  hash, no third-party anything, Trusted Types so no script can write HTML),
  no framing, no referrer, no MIME sniffing, HSTS behind TLS;
* CSRF: OWASP's *signed* double-submit cookie (:class:`CsrfTokens`). The
  server issues a token, a random value with its HMAC-SHA256 under a secret
  drawn when the server starts and kept in its memory only; the page carries
  it (a ``<meta>`` tag) and so does an HttpOnly, SameSite=Strict cookie.
  Every POST must echo the cookie's token in the ``X-CSRF-Token`` header,
  and the token must bear this server's signature, so a pair a client made
  up is refused; it must also come from this origin (:func:`same_origin`:
  ``Origin``, or ``Sec-Fetch-Site`` when a browser hides the origin) and be
  ``application/json``, which another site's form cannot send;
* :class:`RateLimiter`: a token bucket per client address for POSTs;
* :func:`read_json_object`: at most ``limit`` bytes (counted while reading,
  whatever Content-Length claims) within ``timeout`` seconds, UTF-8 without
  a byte order mark, strict JSON (:func:`parse_json_object`: sizes of
  numbers, strings and nesting bounded before they are converted, no
  duplicate keys, no NaN or infinities), exactly the allowed fields.
"""

from __future__ import annotations

import asyncio
import base64
import hmac
import json
import math
import re
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache

__all__ = [
    "CSRF_COOKIE",
    "CSRF_HEADER",
    "JSON_LIMITS",
    "CsrfTokens",
    "JsonLimits",
    "RateLimiter",
    "RequestRefused",
    "content_security_policy",
    "error_body",
    "host_allowed",
    "parse_json_object",
    "read_json_object",
    "same_origin",
    "security_headers",
]

CSRF_COOKIE = "surveykit_csrf"
CSRF_HEADER = "x-csrf-token"
_TOKEN_BYTES = 32
# A token: 43 characters of URL-safe base64 (the random value), a dot, 43 more (its MAC).
_TOKEN = re.compile(r"[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{43}\Z")
# Idle buckets are dropped once this many clients are tracked (memory stays bounded).
_MAX_TRACKED = 10_000


class RequestRefused(Exception):
    """A request the server will not act on: an HTTP status and a short public message."""

    def __init__(self, status: int, message: str, *, reason: str = "invalid",
                 headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.reason = reason
        self.headers = headers or {}


def error_body(message: str, reason: str) -> bytes:
    """The body of every refusal: one line of JSON, a sentence for people, a word for the page.

    >>> error_body("the survey is closed", "closed")
    b'{"error":"the survey is closed","reason":"closed"}'
    """
    return json.dumps({"error": message, "reason": reason}, ensure_ascii=True,
                      separators=(",", ":")).encode("ascii")


def content_security_policy(script_integrity: str) -> str:
    """The page's policy: only this server's files, the script also by its SHA-256.

    >>> "default-src 'none'" in content_security_policy("sha256-abc")
    True
    """
    return "; ".join((
        "default-src 'none'",
        f"script-src 'self' '{script_integrity}'",
        "style-src 'self'",
        "img-src 'self'",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
        "require-trusted-types-for 'script'",
        "trusted-types 'none'",
    ))


def security_headers(script_integrity: str, *, https: bool) -> list[tuple[str, str]]:
    """Headers every response carries (HSTS only when the request came over TLS).

    >>> dict(security_headers("sha256-abc", https=False))["x-frame-options"]
    'DENY'
    """
    headers = [
        ("content-security-policy", content_security_policy(script_integrity)),
        ("x-content-type-options", "nosniff"),
        ("x-frame-options", "DENY"),
        ("referrer-policy", "no-referrer"),
        ("cross-origin-opener-policy", "same-origin"),
        ("cross-origin-resource-policy", "same-origin"),
        ("permissions-policy", "accelerometer=(), camera=(), geolocation=(), gyroscope=(), "
                               "microphone=(), payment=(), usb=()"),
    ]
    if https:
        headers.append(("strict-transport-security", "max-age=31536000"))
    return headers


def _base64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


@dataclass(frozen=True, kw_only=True)
class CsrfTokens:
    """OWASP's signed double-submit cookie: tokens only this server can have issued.

    A token is ``VALUE.MAC``: 256 random bits and their HMAC-SHA256 under
    ``secret``, with ``context`` (the survey's name) in the signed message,
    both in URL-safe base64 (OWASP Cheat Sheet "Cross-Site Request Forgery
    Prevention", *Signed Double-Submit Cookie*; the server has no session to
    bind the token to, so the cookie itself is what the header must match).
    :meth:`new` draws the secret from :mod:`secrets` and it stays in this
    object: it is never written, logged or sent, so tokens die with the
    process (the page fetches a fresh one when a restarted server refuses its
    token). Checks compare in constant time (:func:`hmac.compare_digest`).

    >>> tokens = CsrfTokens(secret=bytes(32), context="demo")
    >>> token = tokens.issue(value=bytes(32))
    >>> token.split(".")[0] == "A" * 43, tokens.valid(token)
    (True, True)
    >>> tokens.valid("A" * 43 + "." + "A" * 43)  # made up: not signed by this server
    False
    >>> CsrfTokens(secret=bytes([1] * 32), context="demo").valid(token)  # another server
    False
    """

    secret: bytes = field(repr=False)
    context: str

    def __post_init__(self) -> None:
        if not isinstance(self.secret, bytes) or len(self.secret) < _TOKEN_BYTES:
            raise ValueError(f"secret must be at least {_TOKEN_BYTES} random bytes")

    @classmethod
    def new(cls, context: str) -> CsrfTokens:
        """Tokens under a fresh secret from the operating system's secure generator."""
        return cls(secret=secrets.token_bytes(_TOKEN_BYTES), context=context)

    def _mac(self, value: str) -> str:
        # length-prefixed fields, so that no (context, value) pair signs like another
        message = f"surveykit-csrf-v1!{len(self.context)}!{self.context}!{value}".encode()
        return _base64(hmac.digest(self.secret, message, "sha256"))  # one-shot, in C

    def issue(self, *, value: bytes | None = None) -> str:
        """A fresh token (``value``: the random bytes, for tests; default 32 from secrets)."""
        random_part = _base64(value if value is not None else secrets.token_bytes(_TOKEN_BYTES))
        return f"{random_part}.{self._mac(random_part)}"

    def valid(self, token: object) -> bool:
        """True when ``token`` is well formed and carries this server's signature."""
        if not isinstance(token, str) or not _TOKEN.match(token):
            return False
        random_part, mac = token.split(".")
        return hmac.compare_digest(self._mac(random_part).encode(), mac.encode())

    def check(self, cookie: str | None, header: str | None) -> bool:
        """The double submit: the header echoes the cookie, and the cookie is signed by us.

        >>> tokens = CsrfTokens(secret=bytes(32), context="demo")
        >>> token = tokens.issue()
        >>> tokens.check(token, token), tokens.check(token, None), tokens.check("x", "x")
        (True, False, False)
        """
        if not cookie or not header or not self.valid(cookie):
            return False
        return hmac.compare_digest(cookie.encode("utf-8", "replace"),
                                   header.encode("utf-8", "replace"))


def same_origin(origin: str | None, fetch_site: str | None, own_origin: str) -> bool:
    """True when the browser says the request comes from the survey's own page.

    Browsers send ``Origin`` with every POST (``null`` where a referrer policy
    hides it) and ``Sec-Fetch-Site`` with every request; page scripts can set
    neither. A POST must name this origin in ``Origin``, or, when its origin
    is absent or ``null``, say ``Sec-Fetch-Site: same-origin``. A client that
    sends neither is refused: there is no client but the page.

    >>> same_origin("http://127.0.0.1:8000", "same-origin", "http://127.0.0.1:8000")
    True
    >>> same_origin("https://evil.example", "cross-site", "http://127.0.0.1:8000")
    False
    >>> same_origin(None, None, "http://127.0.0.1:8000")
    False
    """
    if fetch_site is not None and fetch_site != "same-origin":
        return False
    if origin is None or origin == "null":
        return fetch_site == "same-origin"
    return origin == own_origin


def host_allowed(host: str | None, allowed: Iterable[str]) -> bool:
    """True when the ``Host`` header names one of ``allowed`` (``*.example.org``: any
    subdomain), with or without a port; IPv6 addresses in brackets.

    >>> host_allowed("127.0.0.1:8000", ["127.0.0.1"]), host_allowed("[::1]:80", ["::1"])
    (True, True)
    >>> host_allowed("a.example.org", ["*.example.org"]), host_allowed("evil", ["localhost"])
    (True, False)
    """
    if not host:
        return False
    host = host.strip().lower()
    if host.startswith("["):
        name = host[1:].split("]", 1)[0]
    else:
        name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    for pattern in allowed:
        pattern = pattern.lower().strip("[]")
        if name == pattern or (pattern.startswith("*.") and name.endswith(pattern[1:])):
            return True
    return False


class RateLimiter:
    """A token bucket per client: ``per_minute`` requests a minute, bursts of ``burst``.

    ``per_minute = 0`` turns the limit off. Time comes from ``clock``
    (injected for tests).

    >>> limiter = RateLimiter(per_minute=60, burst=2, clock=lambda: 0.0)
    >>> [limiter.allow("10.0.0.1") for _ in range(3)]
    [True, True, False]
    """

    def __init__(self, *, per_minute: int, burst: int | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if isinstance(per_minute, bool) or not isinstance(per_minute, int) or per_minute < 0:
            raise ValueError(f"per_minute ({per_minute!r}) must be a whole number >= 0")
        self.per_minute = per_minute
        self.burst = burst if burst is not None else max(1, per_minute)
        self._rate = per_minute / 60.0
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}

    def allow(self, client: str) -> bool:
        """Take one token from ``client``'s bucket; False when it is empty."""
        if self.per_minute == 0:
            return True
        now = self._clock()
        tokens, then = self._buckets.get(client, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - then) * self._rate)
        if tokens < 1:
            self._buckets[client] = (tokens, now)
            return False
        if len(self._buckets) >= _MAX_TRACKED and client not in self._buckets:
            self._forget_idle(now)
        self._buckets[client] = (tokens - 1, now)
        return True

    def retry_after(self) -> int:
        """Seconds until a drained bucket has a token again."""
        return max(1, round(60 / self.per_minute)) if self.per_minute else 0

    def _forget_idle(self, now: float) -> None:
        full = [client for client, (tokens, then) in self._buckets.items()
                if tokens + (now - then) * self._rate >= self.burst]
        for client in full:
            del self._buckets[client]
        if len(self._buckets) >= _MAX_TRACKED:  # all busy: forget the oldest half
            oldest = sorted(self._buckets, key=lambda c: self._buckets[c][1])
            for client in oldest[:len(oldest) // 2]:
                del self._buckets[client]


@dataclass(frozen=True, kw_only=True)
class JsonLimits:
    """How large the parts of a JSON body may be, checked before anything is converted.

    ``depth``: arrays and objects inside each other (a submission needs 2);
    ``string``: characters of one string as sent, escapes included (a
    respondent id has at most 200 characters, and one character is at most
    12 escaped); ``number``: characters of one number (Python's int() of a
    long digit string takes time quadratic in its length and refuses more
    than 4,300 digits).
    """

    depth: int = 8
    string: int = 4096
    number: int = 32


#: The limits of ``surveykit serve``'s bodies.
JSON_LIMITS = JsonLimits()

# The tokens that matter for the limits: strings (escapes included) and brackets. Anything
# else is left to the parser, which refuses what is not JSON.
_JSON_TOKEN = re.compile(rb'"(?:[^"\\]++|\\.)*+"|[\[\]{}]')
_BOM = b"\xef\xbb\xbf"


def _refuse(message: str) -> RequestRefused:
    return RequestRefused(422, message)


def _check_sizes(body: bytes, limits: JsonLimits) -> None:
    if (len(body) <= limits.string + 2
            and body.count(b"[") + body.count(b"{") <= limits.depth):
        return  # no string can be longer than the body, no nesting deeper than its brackets
    depth = 0
    for token in _JSON_TOKEN.finditer(body):
        text = token.group()
        if text[0] == 0x22:  # a string
            if len(text) - 2 > limits.string:
                raise _refuse(f"the JSON body holds a string longer than {limits.string} "
                              "characters: no field takes one")
        elif text in (b"[", b"{"):
            depth += 1
            if depth > limits.depth:
                raise _refuse(f"the JSON body nests arrays or objects more than "
                              f"{limits.depth} deep: send one flat object")
        else:
            depth -= 1


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise _refuse("the JSON body names a field twice")
    return dict(pairs)


def _no_constant(name: str) -> object:
    raise _refuse("the JSON body holds NaN or Infinity, which are not JSON")


@lru_cache(maxsize=8)
def _decoder(limits: JsonLimits) -> json.JSONDecoder:
    """The strict parser under ``limits`` (made once: ``json.loads`` with hooks makes one
    per call)."""
    parse_int, parse_float = _number_parsers(limits)
    return json.JSONDecoder(object_pairs_hook=_no_duplicates, parse_constant=_no_constant,
                            parse_int=parse_int, parse_float=parse_float)


def _number_parsers(limits: JsonLimits) -> tuple[Callable, Callable]:
    def too_long(text: str) -> RequestRefused:
        return _refuse(f"the JSON body holds a number longer than {limits.number} characters: "
                       "no field takes one")

    def parse_int(text: str) -> int:
        if len(text) > limits.number:
            raise too_long(text)
        return int(text)

    def parse_float(text: str) -> float:
        if len(text) > limits.number:
            raise too_long(text)
        value = float(text)
        if not math.isfinite(value):
            raise _refuse("the JSON body holds a number too large for a double (such as "
                          "1e400)")
        return value

    return parse_int, parse_float


def _check_text(value: object, body: bytes) -> None:
    """Refuse strings that are no Unicode text (lone surrogates from \\ud800 escapes).

    ``body`` is the UTF-8 that ``value`` was parsed from: UTF-8 cannot encode a surrogate,
    so without a ``\\u`` escape in it there is nothing to look for."""
    if b"\\u" not in body:
        return
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise _refuse("the JSON body holds a \\u escape of half a character (a lone "
                              "surrogate)") from None
        elif isinstance(item, dict):
            pending.extend(item)
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)


def parse_json_object(body: bytes, fields: Iterable[str], *,
                      limits: JsonLimits = JSON_LIMITS) -> dict[str, object]:
    """The JSON object in ``body`` with exactly ``fields``, or RequestRefused (422).

    UTF-8 without a byte order mark (RFC 8259, section 8.1); sizes within
    ``limits`` before any number is converted; no duplicate keys, NaN or
    infinities. Messages say what is wrong and where, never what was sent.

    >>> parse_json_object(b'{"respondent_id": "A1"}', ["respondent_id"])
    {'respondent_id': 'A1'}
    >>> try:
    ...     parse_json_object(b'{"respondent_id": ' + b"1" * 5000 + b"}", ["respondent_id"])
    ... except RequestRefused as refused:
    ...     print(refused.status, refused.message)
    422 the JSON body holds a number longer than 32 characters: no field takes one
    """
    wanted = tuple(fields)
    if not body.strip():
        raise _refuse("the body is empty: send one JSON object")
    if body.startswith(_BOM):
        raise _refuse("the body starts with a byte order mark: send UTF-8 without one")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _refuse(f"the body is not UTF-8 (byte {exc.start + 1}): send JSON in "
                      "UTF-8") from None
    _check_sizes(body, limits)
    try:
        data = _decoder(limits).decode(text)
    except json.JSONDecodeError as exc:
        # exc.msg is one of the parser's fixed sentences; it never quotes the body
        raise _refuse(f"the body is not JSON (line {exc.lineno}, column {exc.colno}: "
                      f"{exc.msg})") from None
    if not isinstance(data, dict):
        raise _refuse("the body must be one JSON object")
    _check_text(data, body)
    if set(data) != set(wanted):
        raise _refuse(f"the body must hold exactly the fields {', '.join(wanted)}: the server "
                      "accepts nothing else")
    return data


def _content_type_ok(value: str) -> bool:
    """``application/json``, with at most a ``charset=utf-8`` parameter."""
    if value == "application/json":
        return True
    media_type, *parameters = (part.strip().lower() for part in value.split(";"))
    if media_type != "application/json":
        return False
    return all(parameter.replace(" ", "") in ("charset=utf-8", 'charset="utf-8"', "")
               for parameter in parameters)


async def read_json_object(request, fields: Iterable[str], *, limit: int,
                           timeout: float) -> dict[str, object]:
    """Read at most ``limit`` bytes of ``request``'s JSON body (413 beyond) within
    ``timeout`` seconds (408 after), then parse it (:func:`parse_json_object`).

    The limit is counted while reading, so a client cannot send more than it
    declares in Content-Length, and the time limit ends a body sent a byte at
    a time.

    >>> # data = await read_json_object(request, ["respondent_id"], limit=65536, timeout=10)
    """
    if not _content_type_ok(request.headers.get("content-type", "")):
        raise RequestRefused(415, "the body must be application/json (UTF-8)",
                             reason="content_type")
    declared = request.headers.get("content-length")
    if declared is not None and (len(declared) > 20 or not declared.isdigit()
                                 or int(declared) > limit):
        raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    receive = request.receive  # the ASGI messages themselves: no generator around them
    try:
        async with asyncio.timeout(timeout):  # (a timer, where anyio's takes a cancel scope)
            while True:
                message = await receive()
                if message["type"] != "http.request":  # http.disconnect
                    raise RequestRefused(400, "the connection closed before the body ended",
                                         reason="incomplete")
                chunk = message.get("body", b"")
                chunks.append(chunk)
                size += len(chunk)
                if size > limit:
                    raise _too_large(limit)
                if not message.get("more_body", False):
                    break
    except TimeoutError:
        raise RequestRefused(408, f"the body did not arrive within {timeout:g} seconds",
                             reason="timeout", headers={"connection": "close"}) from None
    # joined once (a body sent a byte at a time would cost a copy of all before it per byte
    # if each chunk were added to the last; one chunk is the common case: no copy at all)
    return parse_json_object(chunks[0] if len(chunks) == 1 else b"".join(chunks), fields)


def _too_large(limit: int) -> RequestRefused:
    return RequestRefused(413, f"the body must be at most {limit} bytes", reason="size")
