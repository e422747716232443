"""Web collection: ``surveykit serve`` (the respondent's browser draws the rules)."""

from __future__ import annotations

import sys
from datetime import UTC, datetime

import click

from surveykit.cli.app import count, db_option, main, open_store
from surveykit.errors import MissingExtraError, ParameterError

_TLS_WARNING = ("Warning: --public serves plain HTTP. Put a reverse proxy with TLS (HTTPS) in "
                "front of it ('surveykit docs web-collection'): without TLS anybody on the "
                "network path can read respondents' ids and answers.")


@main.command("serve")
@click.option("--survey", "survey_name", metavar="NAME",
              help="A survey added with 'surveykit survey add'.")
@db_option
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; other than loopback only with --public.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port to listen on (0: any free port, printed at start).")
@click.option("--public", is_flag=True,
              help="Allow a non-loopback --host (put a TLS reverse proxy in front).")
@click.option("--allowed-host", "allowed_hosts", multiple=True, metavar="NAME",
              help="With --public: a Host name the server answers to (repeatable); "
                   "default: any, leaving the check to the proxy.")
@click.option("--close-at", metavar="TIME",
              help="Stop accepting answers at this ISO 8601 time (local time unless it has "
                   "an offset), e.g. 2030-06-01T18:00.")
@click.option("--rate-limit", type=click.IntRange(min=0), default=60, show_default=True,
              metavar="N", help="POST requests a minute per client address (0: no limit). "
                                "Raise it when many respondents share one address (NAT).")
@click.option("--access-log", is_flag=True,
              help="Log one line per request (address, method, path, status; never bodies), "
                   "with control characters escaped.")
@click.option("--print-hash", is_flag=True,
              help="Print the SHA-256 of the script that draws respondents' rules and exit.")
def serve_command(survey_name, db_url, host, port, public, allowed_hosts, close_at, rate_limit,
                  access_log, print_hash):
    """Collect answers on the web; each respondent's browser draws their rules.

    Serves one page per survey: the respondent enters their respondent ID
    (or opens a link ending in #id=THE-ID), then answers one question at a
    time. For each question the browser draws the private rule with
    crypto.getRandomValues from the design's exact probabilities, shows it,
    takes the answer and removes the rule. Only the id and the answers are
    sent, in one request at the end, and stored like an import (one
    transaction, idempotent, issued ids only once ids were issued).

    \b
    Example:
      surveykit serve --survey academic_integrity --close-at 2030-06-01T18:00
    """
    from surveykit.web.assets import SCRIPT, load_asset

    if print_hash:
        script = load_asset(SCRIPT)
        click.echo(f"{script.integrity}  {script.name}  (Subresource Integrity)")
        click.echo(f"{script.sha256}  {script.name}  (sha256sum)")
        return
    if not survey_name:
        raise click.UsageError("Missing option '--survey'.")
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise MissingExtraError(
            f"surveykit serve needs the web extra ({exc.name} is missing): "
            "pip install 'surveykit[web]'") from None
    from surveykit.web.server import is_loopback, parse_close_at

    if not is_loopback(host) and not public:
        raise ParameterError(
            f"--host {host} is not a loopback address: add --public to serve other machines, "
            "behind a reverse proxy with TLS ('surveykit docs web-collection')")
    if allowed_hosts and not public:
        raise ParameterError("--allowed-host is for --public servers; on loopback the server "
                             "answers to 127.0.0.1, localhost and ::1 only")
    closes = parse_close_at(close_at, now=datetime.now(UTC)) if close_at else None

    import logging

    from surveykit.store import display_url
    from surveykit.web.app import LOOPBACK_HOSTS, create_app
    from surveykit.web.server import bind_socket, run_server

    if access_log:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
        logger = logging.getLogger("surveykit.web.access")
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    engine = open_store(db_url)
    if public:
        hosts = tuple(allowed_hosts) or None
    else:
        hosts = tuple(dict.fromkeys((*LOOPBACK_HOSTS, host.strip("[]"))))
    app = create_app(engine, survey_name, close_at=closes, rate_limit=rate_limit,
                     allowed_hosts=hosts)
    sock = bind_socket(host, port)
    bound_port = sock.getsockname()[1]
    shown_host = f"[{host.strip('[]')}]" if ":" in host else host
    if public:
        click.echo(_TLS_WARNING, err=True)
    survey = app.state.survey
    click.echo(f"Serving survey {survey.name!r} ({count(len(survey.questions), 'question')}) from "
               f"{display_url(engine)} at http://{shown_host}:{bound_port}/")
    if closes is not None:
        click.echo(f"Answers are accepted until {closes.isoformat(timespec='minutes')}.")
    click.echo(f"Script SHA-256: {app.state.script.sha256}. Press Ctrl+C to stop.")
    run_server(app, sock)
    click.echo(app.state.tally.line() + ".")
