"""Shared helpers of the web tests: a real server on loopback, Chromium for Playwright.

* :func:`serving`: the application on uvicorn in a thread of the test process
  (a real HTTP server on 127.0.0.1, any free port), for tests that build the
  app with test-only options (a clock, a small body limit);
* :func:`running_cli`: ``surveykit serve`` as a subprocess, as users run it;
* :func:`launch_chromium`: Debian's chromium driven by Playwright. Under CI
  (CI=true) a missing browser fails the test; elsewhere it skips;
* :func:`snapshot`, ``ANSWERS``, ``MIXED``: shared by the web tests.
"""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ANSWERS = {"exam_cheating": "yes", "plagiarism": "no", "contract_cheating": "dont_know",
           "fabricated_data": "no"}

# One question per protocol kind and instruction kind (parameters as in RRreg's examples).
MIXED = """
name = "mixed"
title = "Mixed designs"
[[questions]]
id = "warner"
text = "Ever?"
[questions.mechanism]
p = 0.6
q = 0.2
[[questions]]
id = "forced"
text = "Forced?"
[questions.design]
model = "fr"
p = [0.1, 0.2]
dont_know = 0.1
[[questions]]
id = "cards"
text = "Cards?"
[questions.design]
model = "kuk"
p = [0.7, 0.3]
[[questions]]
id = "cross"
text = "Crosswise?"
[questions.design]
model = "crosswise"
p = 0.25
dont_know = 0.1
innocuous = "Is your mother's birthday in January, February or March?"
[[questions]]
id = "unrelated"
text = "Unrelated?"
[questions.design]
model = "uqtknown"
p = [0.7, 0.25]
innocuous = "Were you born in spring?"
[[questions]]
id = "colour"
text = "Which colour?"
[questions.design]
model = "grr"
p = 0.7
categories = ["red", "green", "blue"]
"""


def snapshot(engine) -> dict[str, list[tuple]]:
    """Every row of the tables a submission may touch, in a stable order."""
    from sqlalchemy import select

    from surveykit.store import database

    tables = {"responses": database.responses, "imports": database.imports,
              "respondents": database.respondents, "answer_counts": database.answer_counts,
              "known_respondents": database.known_respondents,
              "covariates": database.covariates, "surveys": database.surveys}
    with engine.connect() as conn:
        return {name: sorted(tuple(str(v) for v in row)
                             for row in conn.execute(select(table)))
                for name, table in tables.items()}


CHROMIUM = Path("/usr/bin/chromium")
# The flags this machine needs (no sandbox as root, no network beyond loopback).
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
_STARTED = re.compile(r"at (http://127\.0\.0\.1:\d+)/")


@contextmanager
def serving(app, port: int = 0, **settings) -> Iterator[str]:
    """Serve ``app`` as ``surveykit serve`` does (:func:`surveykit.web.server.server_config`,
    given ``settings`` such as a shorter ``header_timeout``) on 127.0.0.1, ``port`` (0: a
    free one), in a thread; yields the base URL."""
    import uvicorn

    from surveykit.web.server import bind_socket, server_config

    sock = bind_socket("127.0.0.1", port)
    server = uvicorn.Server(server_config(app, **settings))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start within 20 s")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)
        sock.close()


@dataclass
class CliServer:
    """A running ``surveykit serve``: its URL, and what it printed so far."""

    url: str
    process: subprocess.Popen
    stdout: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)

    def output(self) -> str:
        return "".join(self.stdout) + "".join(self.stderr)

    def output_once(self, text: str, timeout: float = 60) -> str:
        """The output once it holds ``text`` (the server prints as it goes; a loaded
        machine may lag), or as it stands after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while text not in self.output() and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.output()


def _pump(stream, sink: list[str], lines: queue.Queue | None) -> None:
    for line in stream:
        sink.append(line)
        if lines is not None:
            lines.put(line)


@contextmanager
def running_cli(db_url: str, survey: str, *options: str,
                timeout: float = 60) -> Iterator[CliServer]:
    """``surveykit serve --survey SURVEY --db DB_URL --port 0 OPTIONS`` until the block ends."""
    command = [sys.executable, "-m", "surveykit", "serve", "--survey", survey, "--db", db_url,
               "--port", "0", *options]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    lines: queue.Queue = queue.Queue()
    server = CliServer(url="", process=process)
    pumps = [threading.Thread(target=_pump, args=(process.stdout, server.stdout, lines),
                              daemon=True),
             threading.Thread(target=_pump, args=(process.stderr, server.stderr, None),
                              daemon=True)]
    for pump in pumps:
        pump.start()
    try:
        deadline = time.monotonic() + timeout
        while not server.url:
            try:
                line = lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise RuntimeError("surveykit serve did not start: "
                                   + server.output()) from None
            found = _STARTED.search(line)
            if found:
                server.url = found.group(1)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=20)
        for pump in pumps:
            pump.join(timeout=5)
        process.stdout.close()
        process.stderr.close()


@contextmanager
def launch_chromium() -> Iterator[object]:
    """A headless Chromium (Debian's) under Playwright; fails under CI if it is missing."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the playwright package is not installed (pip install -e '.[test]')")
    if not CHROMIUM.exists():
        _missing(f"{CHROMIUM} is missing (apt-get install chromium; .ci/run does)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def _missing(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"browser tests cannot run: {reason}", pytrace=False)
    pytest.skip(f"browser tests skipped: {reason}")
