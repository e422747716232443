"""``surveykit serve``: the published hash, the loopback guard, --close-at, one-line errors."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import signal
from datetime import datetime, timedelta
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from migrated import migrated_sqlite
from sqlalchemy import func, select

from surveykit.cli import main
from surveykit.resources import locate_resource
from surveykit.web.security import CSRF_COOKIE
from tests.web_support import ANSWERS, running_cli

SCRIPT_FILE = locate_resource("templates") / "web" / "survey.js"


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """conftest's SQLite database file, migrated to head: a copy of the migrated template
    (every test here ran init only as set-up)."""
    return migrated_sqlite(tmp_path / "surveykit.db")


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_print_hash_gives_the_script_sha256_an_auditor_can_recompute():
    content = SCRIPT_FILE.read_bytes()
    digest = hashlib.sha256(content)
    result = run("serve", "--print-hash")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        f"sha256-{base64.b64encode(digest.digest()).decode()}  survey.js  "
        "(Subresource Integrity)",
        f"{digest.hexdigest()}  survey.js  (sha256sum)",
    ]


def test_the_script_uses_the_secure_generator_only():
    source = SCRIPT_FILE.read_text(encoding="utf-8")
    assert "crypto.getRandomValues" in source
    assert "Math.random" not in source.replace("never Math.random", "")
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(",
                 "localStorage.set", "sessionStorage.set", "document.cookie"):
        assert sink not in source, sink


def test_a_non_loopback_address_needs_public():
    result = run("serve", "--survey", "academic_integrity", "--host", "0.0.0.0")
    assert result.exit_code == 2
    assert result.stderr == (
        "Error: --host 0.0.0.0 is not a loopback address: add --public to serve other "
        "machines, behind a reverse proxy with TLS ('surveykit docs web-collection')\n")


def test_allowed_host_is_for_public_servers_only():
    result = run("serve", "--survey", "s", "--allowed-host", "survey.example.org")
    assert result.exit_code == 2
    assert "--allowed-host is for --public servers" in result.stderr


def test_close_at_must_be_a_future_time():
    past = (datetime.now() - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M")
    result = run("serve", "--survey", "s", "--close-at", past)
    assert result.exit_code == 2
    assert "is not in the future: the survey would be closed before it opens" in result.stderr
    result = run("serve", "--survey", "s", "--close-at", "next friday")
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: --close-at ('next friday') is not a date and time")


def test_serve_needs_a_survey_and_names_the_known_ones(sqlite_url, sample_survey_path):
    assert run("serve").exit_code == 2
    assert run("survey", "add", str(sample_survey_path), "--db", sqlite_url).exit_code == 0
    result = run("serve", "--survey", "nope", "--db", sqlite_url)
    assert result.exit_code == 1
    assert result.stderr == ("Error: no survey named 'nope' in the database; known surveys: "
                             "academic_integrity\n")


def test_a_public_server_warns_about_tls_and_prints_when_it_closes(sqlite_url,
                                                                  sample_survey_path):
    run("survey", "add", str(sample_survey_path), "--db", sqlite_url)
    later = (datetime.now() + timedelta(days=2)).strftime("%Y-%m-%dT%H:%M")
    with running_cli(sqlite_url, "academic_integrity", "--public", "--allowed-host",
                     "127.0.0.1", "--close-at", later) as server:
        health = httpx.get(server.url + "/healthz", timeout=10).json()
        assert health == {"status": "ok", "survey": "academic_integrity", "open": True,
                          "submissions": 0, "refused": 0}
        # behind a proxy only the names given are answered
        other = httpx.get(server.url + "/", headers={"host": "other.example"}, timeout=10)
        assert other.status_code == 400
    output = server.output()
    assert "Warning: --public serves plain HTTP. Put a reverse proxy with TLS" in output
    assert f"Answers are accepted until {later}" in output



@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "kill"])
def test_stopping_the_server_is_a_normal_end_not_an_interrupted_command(stop, sqlite_url,
                                                                        sample_survey_path):
    # Ctrl+C is how serve is meant to end (its banner says so); it used to print "Error:
    # interrupted before the command finished; database changes were rolled back" and exit
    # 1, though every submission had been committed in its own transaction
    run("survey", "add", str(sample_survey_path), "--db", sqlite_url)
    with running_cli(sqlite_url, "academic_integrity") as server, \
            httpx.Client(base_url=server.url, timeout=10) as client:
        client.get("/")  # as a browser: the page sets the CSRF cookie
        sent = client.post("/submit", content=json.dumps(
            {"respondent_id": "WEB-1", "answers": ANSWERS}).encode(), headers={
            "content-type": "application/json", "x-csrf-token": client.cookies[CSRF_COOKIE],
            "origin": server.url})
        assert sent.status_code == 201, sent.text
        server.process.send_signal(stop)
        assert server.process.wait(timeout=20) == 0, server.output()
    output = server.output()
    assert "Error" not in output, output
    assert server.stdout[-1].strip() == (
        "1 submission recorded, 0 repeated (no change), 0 conflicts, 0 refused.")
    counts = run("counts", "--survey", "academic_integrity", "--db", sqlite_url,
                 "--format", "json")
    assert '"yes": 1' in counts.output, counts.output


async def _submit_until_killed(server, token: str, respondents: int, kill_after: int
                               ) -> set[str]:
    """Submit ``respondents`` new ids at once; SIGKILL the server once ``kill_after`` are
    answered 201. The ids answered 201 (acknowledged) before it died."""
    headers = {"content-type": "application/json", "origin": server.url,
               "x-csrf-token": token, "cookie": f"{CSRF_COOKIE}={token}"}
    acknowledged: set[str] = set()
    limits = httpx.Limits(max_connections=100)
    async with httpx.AsyncClient(base_url=server.url, timeout=60, limits=limits) as client:
        async def send(respondent: str) -> None:
            try:
                response = await client.post("/submit", headers=headers, content=json.dumps(
                    {"respondent_id": respondent, "answers": ANSWERS}).encode())
            except httpx.HTTPError:
                return  # the server died first
            if response.status_code == 201:
                acknowledged.add(respondent)
                if len(acknowledged) == kill_after:
                    server.process.kill()
        await asyncio.gather(*(send(f"K-{n}") for n in range(respondents)))
    return acknowledged


def test_a_server_killed_during_group_commits_keeps_every_acknowledged_answer_whole(
        engine, database_url, sample_survey_path):
    """SIGKILL while batches of submissions are being written (issue 25's group commit):
    every submission answered 201 is stored, and no respondent is stored in part; the kept
    counts and the day's record agree with the answers."""
    from surveykit.store import database
    from tests.store_support import checked_counts

    run("survey", "add", str(sample_survey_path), "--db", database_url)
    with running_cli(database_url, "academic_integrity", "--rate-limit", "0") as server, \
            httpx.Client(base_url=server.url, timeout=10) as client:
        client.get("/")
        token = client.cookies[CSRF_COOKIE]
        acknowledged = asyncio.run(_submit_until_killed(server, token, 400, 60))
        assert server.process.wait(timeout=20) == -signal.SIGKILL
    assert len(acknowledged) >= 60
    responses, imports = database.responses, database.imports
    with engine.connect() as conn:
        stored = conn.execute(select(responses.c.respondent_id, func.count())
                              .group_by(responses.c.respondent_id)).all()
        day = conn.execute(select(imports.c.rows_read, imports.c.imported)).all()
    counted = checked_counts(engine, "academic_integrity")  # kept == a recount
    per_respondent = dict(stored)
    assert acknowledged <= set(per_respondent)
    assert set(per_respondent.values()) == {len(ANSWERS)}  # nothing half-written
    assert counted[0].answered == len(per_respondent)
    assert day == [(len(per_respondent), len(ANSWERS) * len(per_respondent))]
