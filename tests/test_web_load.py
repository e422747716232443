"""Many respondents at once against ``surveykit serve`` on loopback, on SQLite and PostgreSQL.

Every respondent asks for their group (POST /start) and submits (POST
/submit), all at the same time; some submissions are sent twice (the same
answers: one is recorded, the other changes nothing) and some twice with
different answers (one is recorded, the other is a conflict). Afterwards the
database must hold every respondent's answers exactly once. The number of
requests is fixed and the whole run has a time limit; the test prints
submissions per second. The default suite runs 60 respondents; ``-m slow``
runs 500.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from sqlalchemy import Engine, func, select

from surveykit import store
from surveykit.store import database
from surveykit.web.security import CSRF_COOKIE
from tests.web_support import running_cli, snapshot

# The whole run (all requests) must finish within this many seconds.
TIME_LIMIT = 240
QUESTIONS = ("exam_cheating", "plagiarism", "contract_cheating", "fabricated_data")
LABELS = ("yes", "no", "dont_know")


@dataclass(frozen=True)
class LoadRun:
    """What one run sent and got back."""

    respondents: int
    seconds: float
    start_statuses: list[int]
    submit: dict[str, list[tuple[dict[str, str], int]]]  # id -> [(answers, status)]

    @property
    def per_second(self) -> float:
        return self.respondents / self.seconds


async def _load(url: str, ids: list[str], answers: dict[str, dict[str, str]],
                repeats: list[str], conflicts: list[str], seed: int) -> LoadRun:
    limits = httpx.Limits(max_connections=len(ids) + len(repeats) + len(conflicts),
                          max_keepalive_connections=100)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=120) as client:
        await client.get("/")
        headers = {"content-type": "application/json", "origin": url,
                   "x-csrf-token": client.cookies[CSRF_COOKIE]}
        start_statuses: list[int] = []
        submitted: dict[str, list[tuple[dict[str, str], int]]] = {i: [] for i in ids}

        async def submit(respondent: str, sent: dict[str, str]) -> None:
            reply = await client.post("/submit", headers=headers,
                                      json={"respondent_id": respondent, "answers": sent})
            submitted[respondent].append((sent, reply.status_code))

        async def respondent(respondent: str) -> None:
            reply = await client.post("/start", headers=headers,
                                      json={"respondent_id": respondent})
            start_statuses.append(reply.status_code)
            await submit(respondent, answers[respondent])

        tasks = [respondent(i) for i in ids]
        tasks += [submit(i, answers[i]) for i in repeats]
        tasks += [submit(i, {**answers[i], QUESTIONS[0]: _other(answers[i][QUESTIONS[0]])})
                  for i in conflicts]
        random.Random(seed).shuffle(tasks)
        began = time.perf_counter()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=TIME_LIMIT)
        seconds = time.perf_counter() - began
    return LoadRun(respondents=len(ids), seconds=seconds, start_statuses=start_statuses,
                   submit=submitted)


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _other(label: str) -> str:
    return LABELS[(LABELS.index(label) + 1) % len(LABELS)]


def _stored(engine: Engine) -> dict[str, dict[str, str]]:
    responses, questions = database.responses, database.questions
    stored: dict[str, dict[str, str]] = {}
    with engine.connect() as conn:
        rows = conn.execute(select(responses.c.respondent_id, questions.c.name,
                                   responses.c.answer)
                            .join(questions, questions.c.id == responses.c.question_id))
        for respondent, question, answer in rows:
            stored.setdefault(respondent, {})[question] = answer
    return stored


def run_and_check(engine: Engine, database_url: str, respondents: int, capsys) -> LoadRun:
    ids = [f"LOAD-{n:04d}" for n in range(respondents)]
    database.record_generation(engine, "academic_integrity", ids, {})
    rng = random.Random(respondents)
    answers = {i: {q: rng.choice(LABELS) for q in QUESTIONS} for i in ids}
    repeats, conflicts = ids[: respondents // 5], ids[respondents // 5: respondents * 3 // 10]
    with running_cli(database_url, "academic_integrity", "--rate-limit", "0") as server:
        cpu_before, client_before = _cpu_seconds(server.process.pid), time.process_time()
        run = asyncio.run(_load(server.url, ids, answers, repeats, conflicts, seed=respondents))
        cpu = _cpu_seconds(server.process.pid) - cpu_before
        client_cpu = time.process_time() - client_before
        before_exit = snapshot(engine)
    with capsys.disabled():
        # CPU time is what the server itself spent: it does not depend on other processes
        # sharing the machine, as the wall-clock rate does.
        print(f"\n  web load, {engine.dialect.name}: {respondents} respondents "
              f"(+{len(repeats)} repeats, +{len(conflicts)} conflicting) in {run.seconds:.2f} s: "
              f"{run.per_second:.0f} submissions/s; server CPU {1000 * cpu / respondents:.1f} ms "
              f"per respondent, client CPU {client_cpu:.1f} s "
              f"(load average {os.getloadavg()[0]:.1f})")
    # nothing lost, nothing counted twice, duplicates refused
    stored = _stored(engine)
    assert sorted(stored) == ids
    for respondent in ids:
        statuses = sorted(status for _, status in run.submit[respondent])
        recorded = [sent for sent, status in run.submit[respondent] if status == 201]
        if respondent in repeats:
            assert statuses == [200, 201], respondent
        elif respondent in conflicts:
            assert statuses == [201, 409], respondent
        else:
            assert statuses == [201], respondent
        assert stored[respondent] == recorded[0], respondent
    assert set(run.start_statuses) <= {200, 409}
    imports = database.imports
    with engine.connect() as conn:
        rows_read, imported = conn.execute(select(func.sum(imports.c.rows_read),
                                                  func.sum(imports.c.imported))).one()
    assert (rows_read, imported) == (respondents, respondents * len(QUESTIONS))
    assert sum(q.answered for q in store.count_responses(engine, "academic_integrity")) \
        == respondents * len(QUESTIONS)
    assert snapshot(engine) == before_exit  # stopping the server changes nothing
    return run


def test_concurrent_respondents_are_all_stored_once(survey_engine: Engine, database_url: str,
                                                    capsys):
    run_and_check(survey_engine, database_url, 60, capsys)


@pytest.mark.slow
def test_500_concurrent_respondents_are_all_stored_once(survey_engine: Engine,
                                                        database_url: str, capsys):
    run_and_check(survey_engine, database_url, 500, capsys)
