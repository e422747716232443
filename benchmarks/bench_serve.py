"""Benchmark: ``surveykit serve`` against a plain Starlette + uvicorn app, driven by wrk.

Both servers serve the example survey's page and take submissions
(``POST /submit``, JSON ``{"respondent_id", "answers"}``) on the same database
kind:

* **plain**: a Starlette app on uvicorn (h11, like surveykit) with the page's
  bytes and a token precomputed; per submission it parses the JSON and runs
  one prepared INSERT (the respondent's answers as one row) and one UPDATE of
  a kept count, in one transaction, on one connection (stdlib ``sqlite3`` in
  WAL mode, or psycopg with prepared statements), with no checks at all;
* **surveykit**: ``python -m surveykit serve --rate-limit 0`` on a database
  made by ``surveykit init`` and ``survey add`` (every check on: Host,
  Origin, signed CSRF, bounded strict JSON, issued-id and label checks, one
  transaction with the answers, the kept counts and the day's import record).

The load comes from ``wrk`` (Debian: ``apt-get install -y wrk``) with a Lua
script: each wrk thread GETs ``/token`` until it has one (cookie and header),
then POSTs submissions with unique respondent ids. Server CPU is read from
``/proc/<pid>/stat`` (user + system, all threads) before and after each
load; CPU per submission = that difference / the 201 answers wrk counted.
Runs are interleaved (plain, surveykit, then the other order) and the
medians printed, with the spread, and the ratio surveykit / plain.

Usage::

    python benchmarks/bench_serve.py                            # SQLite and PostgreSQL
    python benchmarks/bench_serve.py --db sqlite --connections 100 --runs 5 --seconds 10

PostgreSQL comes from ``SURVEYKIT_TEST_POSTGRES_URL`` (a schema of its own,
dropped at the end). This is a script, not a test: figures depend on the
machine and on what else runs on it (wrk shares the cores with the server).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SURVEY_FILE = REPO / "sample_data" / "academic_integrity.toml"
TICKS = os.sysconf("SC_CLK_TCK")

LUA = r"""
local token = nil
local prefix, origin, answers
local counter = 0
created, repeated, other = 0, 0, 0
local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end

function init(args)
  prefix, origin, answers = args[1], args[2], args[3]
end

function request()
  if token == nil then
    return wrk.format("GET", "/token")
  end
  counter = counter + 1
  local body = '{"respondent_id":"' .. prefix .. "-" .. tid .. "-" .. counter
               .. '","answers":' .. answers .. '}'
  return wrk.format("POST", "/submit", {
    ["Content-Type"] = "application/json", ["Origin"] = origin,
    ["Cookie"] = "surveykit_csrf=" .. token, ["X-CSRF-Token"] = token}, body)
end

function response(status, headers, body)
  local issued = status == 200 and string.match(body, '"token"%s*:%s*"([^"]+)"')
  if issued then  -- a /token answer (several connections ask before the first arrives)
    token = token or issued
    return
  end
  if status == 201 then created = created + 1
  elseif status == 200 then repeated = repeated + 1
  else other = other + 1 end
end

function done(summary, latency, requests)
  local c, r, o = 0, 0, 0
  for _, thread in ipairs(threads) do
    c = c + thread:get("created")
    r = r + thread:get("repeated")
    o = o + thread:get("other")
  end
  io.write(string.format("RESULT created=%d repeated=%d other=%d\n", c, r, o))
end
"""

# The plain app: run as ``python bench_serve.py --plain-server URL PORT PAGE``.
PLAIN = r'''
import json, secrets, sys
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route
import uvicorn

url, port, page_file = sys.argv[1], int(sys.argv[2]), sys.argv[3]
PAGE = open(page_file, "rb").read()
TOKEN = secrets.token_urlsafe(32)
TOKEN_BODY = json.dumps({"token": TOKEN}).encode()

if url.startswith("sqlite"):
    import sqlite3
    db = sqlite3.connect(url.split("///", 1)[1], isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("CREATE TABLE IF NOT EXISTS submissions (respondent_id TEXT PRIMARY KEY, "
               "answers TEXT NOT NULL)")
    db.execute("CREATE TABLE IF NOT EXISTS kept (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)")
    db.execute("INSERT OR IGNORE INTO kept VALUES (1, 0)")
    INSERT = "INSERT INTO submissions VALUES (?, ?)"
    UPDATE = "UPDATE kept SET n = n + 1 WHERE id = 1"

    def store(respondent, answers):
        db.execute("BEGIN IMMEDIATE")
        db.execute(INSERT, (respondent, answers))
        db.execute(UPDATE)
        db.execute("COMMIT")
else:
    import psycopg
    db = psycopg.connect(url)
    schema = sys.argv[4]
    db.execute(f'SET search_path TO "{schema}"')
    db.execute("CREATE TABLE IF NOT EXISTS submissions (respondent_id TEXT PRIMARY KEY, "
               "answers TEXT NOT NULL)")
    db.execute("CREATE TABLE IF NOT EXISTS kept (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)")
    db.execute("INSERT INTO kept VALUES (1, 0) ON CONFLICT DO NOTHING")
    db.commit()
    INSERT = "INSERT INTO submissions VALUES (%s, %s)"
    UPDATE = "UPDATE kept SET n = n + 1 WHERE id = 1"

    def store(respondent, answers):
        with db.transaction():
            db.execute(INSERT, (respondent, answers), prepare=True)
            db.execute(UPDATE, prepare=True)

async def home(request):
    return Response(PAGE, media_type="text/html")

async def token(request):
    response = Response(TOKEN_BODY, media_type="application/json")
    response.set_cookie("surveykit_csrf", TOKEN, httponly=True, samesite="strict")
    return response

async def submit(request):
    data = json.loads(await request.body())
    store(data["respondent_id"], json.dumps(data["answers"]))
    return Response(b'{"status":"recorded"}', status_code=201, media_type="application/json")

app = Starlette(routes=[Route("/", home), Route("/token", token),
                        Route("/submit", submit, methods=["POST"])])
uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False,
            http="h11", lifespan="off", ws="none")
'''


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """User + system CPU of process ``pid`` (all its threads), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def process_cpu() -> float:
    return time.process_time()


def wait_for(port: int, process: subprocess.Popen, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"a server exited at start (code {process.returncode}): "
                             f"{process.stderr.read().decode(errors='replace')[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"no server answered on port {port} within {seconds:g} s")


def answers_body() -> str:
    """One answer per question of the example survey, as the page sends them."""
    from surveykit.definition.survey import load_survey_file

    survey = load_survey_file(SURVEY_FILE)
    return json.dumps({q.id: q.design.response_labels[i % len(q.design.response_labels)]
                       for i, q in enumerate(survey.questions)}, separators=(",", ":"))


def surveykit_database(url: str) -> None:
    """``surveykit init`` and ``survey add`` of the example on ``url``."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for args in (["init", "--db", url], ["survey", "add", str(SURVEY_FILE), "--db", url]):
        subprocess.run([sys.executable, "-m", "surveykit", *args], check=True, env=env,
                       stdout=subprocess.DEVNULL)


class Servers:
    """Both servers of one database kind, started once and kept for every run."""

    def __init__(self, kind: str, workdir: Path, postgres: str | None) -> None:
        self.kind = kind
        self.processes: dict[str, subprocess.Popen] = {}
        self.ports: dict[str, int] = {}
        self.schema = None
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        if kind == "sqlite":
            sk_url = f"sqlite:///{workdir / 'surveykit.db'}"
            plain_url = f"sqlite:///{workdir / 'plain.db'}"
            plain_extra: list[str] = []
        else:
            from sqlalchemy import create_engine, text
            self.schema = f"bench_{uuid.uuid4().hex[:10]}"
            self.admin = create_engine(postgres)
            with self.admin.begin() as conn:
                conn.execute(text(f'CREATE SCHEMA "{self.schema}"'))
            sk_url = f"{postgres}?options=-csearch_path%3D{self.schema}"
            plain_url = postgres.replace("postgresql+psycopg://", "postgresql://")
            plain_extra = [self.schema]
        surveykit_database(sk_url)
        page = workdir / "page.html"
        port = free_port()
        self.processes["surveykit"] = subprocess.Popen(
            [sys.executable, "-m", "surveykit", "serve", "--survey", "academic_integrity",
             "--db", sk_url, "--port", str(port), "--rate-limit", "0"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.ports["surveykit"] = port
        wait_for(port, self.processes["surveykit"])
        # the plain app serves the very page surveykit serves, as precomputed bytes
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                         "Connection: close\r\n\r\n".encode())
            raw = b"".join(iter(lambda: sock.recv(65536), b""))
        page.write_bytes(raw.split(b"\r\n\r\n", 1)[1])
        port = free_port()
        self.processes["plain"] = subprocess.Popen(
            [sys.executable, "-c", PLAIN, plain_url, str(port), str(page), *plain_extra],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.ports["plain"] = port
        wait_for(port, self.processes["plain"])

    def close(self) -> None:
        for process in self.processes.values():
            process.terminate()
        for process in self.processes.values():
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        if self.schema is not None:
            from sqlalchemy import text
            with self.admin.begin() as conn:
                conn.execute(text(f'DROP SCHEMA "{self.schema}" CASCADE'))
            self.admin.dispose()


def load(servers: Servers, app: str, connections: int, seconds: float, threads: int,
         script: Path, body: str) -> dict[str, float]:
    """One wrk run against ``app``: submissions a second and server CPU per submission."""
    port, pid = servers.ports[app], servers.processes[app].pid
    prefix = f"b{uuid.uuid4().hex[:10]}"
    command = ["wrk", "-t", str(min(threads, connections)), "-c", str(connections),
               "-d", f"{seconds:g}s", "--timeout", "30s", "-s", str(script),
               f"http://127.0.0.1:{port}", "--", prefix, f"http://127.0.0.1:{port}", body]
    before, began = cpu_seconds(pid), time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - began
    cpu = cpu_seconds(pid) - before
    found = re.search(r"RESULT created=(\d+) repeated=(\d+) other=(\d+)", result.stdout)
    if found is None:
        raise SystemExit(f"wrk printed no result: {result.stdout}\n{result.stderr}")
    created, repeated, other = map(int, found.groups())
    if created == 0:  # nothing completed within the run (e.g. 500 connections, short run)
        return {"per_second": 0.0, "cpu_ms": float("nan"), "created": 0, "cpu_share": 0.0}
    if other or repeated:
        raise SystemExit(f"{app}: {other} refused and {repeated} repeated submissions: "
                         f"{result.stdout}")
    return {"per_second": created / wall, "cpu_ms": 1000 * cpu / max(created, 1),
            "created": created, "cpu_share": cpu / wall}


def report(kind: str, conns: int, results: dict[str, list[dict]]) -> None:
    """One line per app: medians, the spread of CPU, and surveykit's ratios to plain
    (ratio of the medians; in brackets the median of the ratios of interleaved pairs)."""
    results = {app: [r for r in runs if r["created"]] for app, runs in results.items()}
    if not all(results.values()):
        print(f"{kind:<9} {conns:>5} no submission completed in some app's runs: run longer "
              "(--seconds)", flush=True)
        return
    medians = {app: {key: statistics.median(r[key] for r in runs)
                     for key in ("per_second", "cpu_ms")} for app, runs in results.items()}
    for app in ("plain", "surveykit"):
        cpu = [r["cpu_ms"] for r in results[app]]
        ratios = ""
        if app == "surveykit":
            pairs = [s["cpu_ms"] / p["cpu_ms"]
                     for s, p in zip(results["surveykit"], results["plain"], strict=False)]
            cpu_ratio = medians[app]["cpu_ms"] / medians["plain"]["cpu_ms"]
            rate_ratio = medians[app]["per_second"] / medians["plain"]["per_second"]
            ratios = (f"{cpu_ratio:>6.2f}x ({statistics.median(pairs):.2f}x) "
                      f"{rate_ratio:>8.2f}x")
        spread = f"({min(cpu):.2f}-{max(cpu):.2f})"
        print(f"{kind:<9} {conns:>5} {app:<9} {medians[app]['per_second']:>8.0f} "
              f"{medians[app]['cpu_ms']:>12.2f} {spread:>13} {ratios}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--connections", default="10,100,500",
                        help="comma-separated wrk connection counts")
    parser.add_argument("--seconds", type=float, default=8.0, help="length of one wrk run")
    parser.add_argument("--runs", type=int, default=5, help="interleaved runs per setting")
    parser.add_argument("--threads", type=int, default=2, help="wrk threads")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed: apt-get install -y wrk")
    kinds = ["sqlite", "postgres"] if args.db == "both" else [args.db]
    postgres = os.environ.get("SURVEYKIT_TEST_POSTGRES_URL")
    if "postgres" in kinds and not postgres:
        raise SystemExit("set SURVEYKIT_TEST_POSTGRES_URL for the PostgreSQL runs")
    connections = [int(c) for c in args.connections.split(",")]
    body = answers_body()
    print(f"wrk {args.seconds:g} s x {args.runs} interleaved runs per setting, "
          f"{args.threads} wrk threads; load average {os.getloadavg()[0]:.1f} at start")
    print(f"{'database':<9} {'conns':>5} {'app':<9} {'subm/s':>8} {'CPU ms/subm':>12} "
          f"{'(min-max)':>13} {'CPU ratio (pairs)':>17} {'subm/s ratio':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        script = workdir / "submit.lua"
        script.write_text(LUA)
        for kind in kinds:
            servers = Servers(kind, workdir, postgres)
            try:
                for conns in connections:
                    # warm both servers up (imports, caches, the day's import record)
                    for app in ("plain", "surveykit"):
                        load(servers, app, conns, 2, args.threads, script, body)
                    results: dict[str, list[dict]] = {"plain": [], "surveykit": []}
                    for run in range(args.runs):
                        order = ("plain", "surveykit") if run % 2 == 0 else ("surveykit",
                                                                             "plain")
                        for app in order:
                            results[app].append(load(servers, app, conns, args.seconds,
                                                     args.threads, script, body))
                    report(kind, conns, results)
            finally:
                servers.close()
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
