"""Running the web application on uvicorn: the loopback guard, the socket, the live count.

The server listens on loopback unless told ``public``: a survey server on a
network must sit behind a reverse proxy that adds TLS (docs/web-collection.md
has an example). uvicorn trusts ``X-Forwarded-For`` and ``X-Forwarded-Proto``
from a proxy on the same machine (127.0.0.1) only, so rate limits see the
real client and cookies are marked Secure behind TLS.

uvicorn runs with its h11 protocol, extended (:func:`server_config`) so that
the requests it refuses before the application sees them (a malformed
request line, header or framing: NUL or spaces in a path, a bad
Content-Length, headers over 16 KiB) get the application's one-line JSON
refusal instead of uvicorn's plain text and count as refused, and so that a
client that has not finished its request headers within
:data:`HEADER_TIMEOUT` seconds is answered 408 and disconnected (a
connection that sent nothing is closed silently, like an idle keep-alive).
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import sys
import threading
from datetime import datetime
from typing import TextIO

from surveykit.errors import ParameterError, printable
from surveykit.web.security import error_body

__all__ = ["HEADER_TIMEOUT", "bind_socket", "is_loopback", "parse_close_at", "run_server",
           "server_config"]

#: Seconds a client may take to send its request line and headers (408 after).
HEADER_TIMEOUT = 10.0

# uvicorn: idle keep-alive connections close after this many seconds (slow clients
# cannot hold connections open for long), and at most this many connections at once.
_KEEP_ALIVE_SECONDS = 5
_MAX_CONNECTIONS = 2048


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach (127.0.0.0/8, ::1, localhost).

    >>> is_loopback("127.0.0.1"), is_loopback("localhost"), is_loopback("0.0.0.0")
    (True, True, False)
    """
    if host.casefold() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def parse_close_at(text: str, *, now: datetime) -> datetime:
    """``--close-at`` as an aware datetime: ISO 8601, local time when no offset is given.

    >>> from datetime import UTC
    >>> parse_close_at("2030-06-01T18:00+02:00", now=datetime(2030, 1, 1, tzinfo=UTC)).hour
    18
    """
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ParameterError(
            f"--close-at ({text!r}) is not a date and time: use ISO 8601, e.g. "
            "2030-06-01T18:00 (local time) or 2030-06-01T18:00+02:00") from None
    if moment.tzinfo is None:
        moment = moment.astimezone()  # the machine's local time zone
    if moment <= now:
        raise ParameterError(
            f"--close-at ({moment.isoformat()}) is not in the future: the survey would be "
            "closed before it opens; give a later time")
    return moment


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host``:``port`` (port 0: any free port)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host.strip("[]"), port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as exc:
        raise ParameterError(f"cannot listen on {host} port {port} ({exc.strerror or exc}); "
                             "choose another --port or --host") from None
    sock.listen(_MAX_CONNECTIONS)
    sock.set_inheritable(True)
    return sock


def _protocol(tally, header_timeout: float) -> type:
    """uvicorn's h11 protocol, refusing what is not HTTP like the application refuses."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    access_log = logging.getLogger("surveykit.web.access")

    class Protocol(H11Protocol):
        _header_timer = None

        def _refuse(self, status: int, phrase: str, message: str, reason: str) -> None:
            cycle = self.cycle
            if cycle is not None and not cycle.response_complete:
                # the application is answering this request (bad framing in its body): it
                # will count and log its own refusal, which can no longer reach the client
                cycle.disconnected = True
                cycle.message_event.set()
            else:
                tally.refused += 1
                client = self.client[0] if self.client else "-"
                access_log.info('%s "(%s)" %d', printable(str(client)), reason, status)
            body = error_body(message, reason)
            self.transport.write(b"".join((
                f"HTTP/1.1 {status} {phrase}\r\n".encode("ascii"),
                b"content-type: application/json\r\n",
                f"content-length: {len(body)}\r\n".encode("ascii"),
                b"connection: close\r\n\r\n", body)))
            self.transport.close()

        def send_400_response(self, msg: str) -> None:
            # uvicorn calls this when h11 refuses the bytes received (RemoteProtocolError)
            self._cancel_header_timer()
            self._refuse(400, "Bad Request", "the request is not valid HTTP/1.1 (its request "
                         "line, a header or the body's framing)", "http")

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._arm_header_timer()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.transport.is_closing():
                self._cancel_header_timer()
            elif self.conn.their_state is h11.IDLE:
                self._arm_header_timer()  # headers incomplete: the clock runs (never reset)
            else:
                self._cancel_header_timer()

        def connection_lost(self, exc) -> None:
            self._cancel_header_timer()
            super().connection_lost(exc)

        def _arm_header_timer(self) -> None:
            if self._header_timer is None:
                self._header_timer = self.loop.call_later(header_timeout, self._headers_late)

        def _cancel_header_timer(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_late(self) -> None:
            self._header_timer = None
            if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
                return
            if self.conn.trailing_data[0]:  # part of a request: a slow or stalled client
                self._refuse(408, "Request Timeout", f"the request headers did not arrive "
                             f"within {header_timeout:g} seconds", "timeout")
            else:  # nothing sent (a browser's spare connection): close, as when idle
                self.transport.close()

    return Protocol


def server_config(app, *, header_timeout: float = HEADER_TIMEOUT, **options):
    """The uvicorn configuration ``surveykit serve`` runs ``app`` with (``options``
    override uvicorn's settings, e.g. ``log_level``)."""
    import uvicorn

    settings = {"log_level": "warning", "access_log": False, "server_header": False,
                "date_header": True, "proxy_headers": True,
                "timeout_keep_alive": _KEEP_ALIVE_SECONDS,
                "limit_concurrency": _MAX_CONNECTIONS, "lifespan": "off", "ws": "none",
                "http": _protocol(app.state.tally, header_timeout), **options}
    return uvicorn.Config(app, **settings)


def _count_printer(tally, stream: TextIO, stop: threading.Event, interval: float) -> None:
    shown = ""
    live = stream.isatty()
    while not stop.wait(interval):
        line = tally.line()
        if line != shown:
            stream.write(("\r" + line) if live else (line + "\n"))
            stream.flush()
            shown = line
    if live and shown:
        stream.write("\n")
        stream.flush()


def run_server(app, sock: socket.socket, *, status: TextIO | None = None,
               interval: float = 1.0) -> None:
    """Serve ``app`` on ``sock`` until Ctrl+C or SIGTERM, printing the live count to ``status``.

    The count (:class:`surveykit.web.app.SubmissionTally`) is rewritten in
    place on a terminal and printed as a new line when it changes elsewhere.

    >>> # run_server(create_app(engine, "academic_integrity"), bind_socket("127.0.0.1", 8000))
    """
    import uvicorn

    server = uvicorn.Server(server_config(app))
    stop = threading.Event()
    printer = threading.Thread(target=_count_printer, daemon=True,
                               args=(app.state.tally, status or sys.stderr, stop, interval))
    printer.start()
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        # Ctrl+C (or SIGTERM, which the CLI turns into the same) is how a server stops:
        # uvicorn has finished the requests in flight, each submission answered after its
        # group commit's transaction, and re-raised the signal; nothing was interrupted
        # half-way
        pass
    finally:
        stop.set()
        printer.join(timeout=5)
