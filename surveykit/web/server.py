"""Running the web application on uvicorn: the loopback guard, the socket, the live count.

The server listens on loopback unless told ``public``: a survey server on a
network must sit behind a reverse proxy that adds TLS (docs/web-collection.md
has an example). uvicorn trusts ``X-Forwarded-For`` and ``X-Forwarded-Proto``
from a proxy on the same machine (127.0.0.1) only, so rate limits see the
real client and cookies are marked Secure behind TLS.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
import threading
from datetime import datetime
from typing import TextIO

from surveykit.errors import ParameterError

__all__ = ["bind_socket", "is_loopback", "parse_close_at", "run_server"]

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

    config = uvicorn.Config(app, log_level="warning", access_log=False, server_header=False,
                            date_header=True, proxy_headers=True,
                            timeout_keep_alive=_KEEP_ALIVE_SECONDS,
                            limit_concurrency=_MAX_CONNECTIONS, lifespan="off", ws="none")
    server = uvicorn.Server(config)
    stop = threading.Event()
    printer = threading.Thread(target=_count_printer, daemon=True,
                               args=(app.state.tally, status or sys.stderr, stop, interval))
    printer.start()
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        # Ctrl+C (or SIGTERM, which the CLI turns into the same) is how a server stops:
        # uvicorn has finished the requests in flight, each submission committed in its own
        # transaction, and re-raised the signal; nothing was interrupted half-way
        pass
    finally:
        stop.set()
        printer.join(timeout=5)
