"""What keeps the web server's requests honest: headers, CSRF, rate limits, strict JSON bodies.

Each piece is small and independent; :mod:`surveykit.web.app` puts them
together. A refused request gets a 4xx with a one-line JSON message
(``{"error": "..."}``) that never repeats what the client sent, and the
refusal happens before anything touches the database.

* :func:`security_headers`: a strict Content-Security-Policy (no inline
  script or style, scripts only from this server and matching the published
  hash, no third-party anything, Trusted Types so no script can write HTML),
  no framing, no referrer, no MIME sniffing, HSTS behind TLS;
* CSRF: double submit. The page carries a random token (a ``<meta>`` tag)
  that is also in an HttpOnly, SameSite=Strict cookie; every POST must echo
  it in the ``X-CSRF-Token`` header (:func:`csrf_ok`), come from this origin
  (``Origin`` and ``Sec-Fetch-Site`` when the browser sends them) and be
  ``application/json``, which another site's form cannot send;
* :class:`RateLimiter`: a token bucket per client address for POSTs;
* :func:`read_json_object`: at most ``limit`` bytes (counted while reading,
  whatever Content-Length claims), strict JSON (no duplicate keys, no NaN),
  exactly the allowed fields.
"""

from __future__ import annotations

import hmac
import json
import secrets
import time
from collections.abc import Callable, Iterable

__all__ = [
    "CSRF_COOKIE",
    "CSRF_HEADER",
    "RateLimiter",
    "RequestRefused",
    "content_security_policy",
    "csrf_ok",
    "new_csrf_token",
    "read_json_object",
    "same_origin",
    "security_headers",
]

CSRF_COOKIE = "surveykit_csrf"
CSRF_HEADER = "x-csrf-token"
_TOKEN_BYTES = 32
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


def new_csrf_token() -> str:
    """A fresh random token (256 bits, URL-safe base64).

    >>> len(new_csrf_token())
    43
    """
    return secrets.token_urlsafe(_TOKEN_BYTES)


def csrf_ok(cookie: str | None, header: str | None) -> bool:
    """True when the header echoes the cookie's token (compared in constant time).

    >>> csrf_ok("a" * 43, "a" * 43), csrf_ok("a" * 43, None), csrf_ok(None, None)
    (True, False, False)
    """
    if not cookie or not header or len(cookie) != len(new_csrf_token()):
        return False
    return hmac.compare_digest(cookie.encode(), header.encode())


def same_origin(origin: str | None, fetch_site: str | None, own_origin: str) -> bool:
    """False when the browser says the request comes from another site.

    Browsers send ``Origin`` with every POST and ``Sec-Fetch-Site`` with every
    request; non-browser clients may send neither (they still need the CSRF
    token).

    >>> same_origin("http://127.0.0.1:8000", "same-origin", "http://127.0.0.1:8000")
    True
    >>> same_origin("https://evil.example", "cross-site", "http://127.0.0.1:8000")
    False
    """
    if origin is not None and origin != own_origin:
        return False
    return fetch_site is None or fetch_site in ("same-origin", "none")


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


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise RequestRefused(422, "the JSON body names a field twice")
    return dict(pairs)


def _no_constant(name: str) -> object:
    raise RequestRefused(422, "the JSON body holds NaN or Infinity, which are not JSON")


def parse_json_object(body: bytes, fields: Iterable[str]) -> dict[str, object]:
    """The JSON object in ``body`` with exactly ``fields``, or RequestRefused (422).

    >>> parse_json_object(b'{"respondent_id": "A1"}', ["respondent_id"])
    {'respondent_id': 'A1'}
    """
    wanted = tuple(fields)
    try:
        data = json.loads(body.decode("utf-8"), object_pairs_hook=_no_duplicates,
                          parse_constant=_no_constant)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise RequestRefused(422, "the body is not a JSON object in UTF-8") from None
    if not isinstance(data, dict):
        raise RequestRefused(422, "the body must be one JSON object")
    if set(data) != set(wanted):
        raise RequestRefused(
            422, f"the body must hold exactly the fields {', '.join(wanted)}: the server "
                 "accepts nothing else")
    return data


async def read_json_object(request, fields: Iterable[str], *, limit: int) -> dict[str, object]:
    """Read at most ``limit`` bytes of ``request``'s JSON body (413 beyond), then parse it.

    The limit is counted while reading, so a client cannot send more than it
    declares in Content-Length.

    >>> # data = await read_json_object(request, ["respondent_id", "answers"], limit=65536)
    """
    content_type = request.headers.get("content-type", "")
    if content_type.split(";")[0].strip().lower() != "application/json":
        raise RequestRefused(415, "the body must be application/json", reason="content_type")
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        raise RequestRefused(413, f"the body must be at most {limit} bytes", reason="size")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise RequestRefused(413, f"the body must be at most {limit} bytes", reason="size")
    return parse_json_object(bytes(body), fields)
