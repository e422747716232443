"""Kept counts: answers per (survey, question, group, response), changed by every write.

Estimation needs only counts, so reading them should not cost a pass over
every stored answer. Every write path of ``responses`` knows, inside its
transaction, how it changes the counts (an import's ``outcome.delta``, a web
submission's answers) and calls :func:`apply_changes` before it commits:

* ``answer_counts`` gets the change per cell (an upsert, ``count = count +
  change``; a cell that falls to 0 is deleted);
* ``known_respondents`` gets the writer's respondent ids (INSERT ... ON
  CONFLICT DO NOTHING): the rows it adds are the respondents new to the
  survey, and ``surveys.known_respondents`` grows by that number, which is
  what ``missing`` needs.

A killed or refused write rolls back with its answers, so the counts never
drift from them. On PostgreSQL two writers of the same cell serialize on its
row (cells are upserted in key order, ids inserted in order, so two writers
take the locks in the same order and cannot deadlock); two writers of the
same new id serialize on its primary key, and only the first counts it.

:func:`check_counts` recomputes everything from ``responses`` (one GROUP BY
along its key, and one count of distinct ids) in one snapshot and lists the
differences; :func:`rebuild_counts` rewrites the kept counts from the answers
(``surveykit check --repair``), and migration 0005 built them that way for
existing databases.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass

from sqlalchemy import (
    Connection,
    Engine,
    bindparam,
    delete,
    func,
    insert,
    select,
    text,
    update,
)

from surveykit.errors import StoreError
from surveykit.store import database as store

__all__ = ["CountDifference", "CountsCheck", "CountsMismatch", "add_known_respondents",
           "add_known_respondents_from", "apply_changes", "check_counts",
           "kept_counts_statement", "kept_respondents_statement", "rebuild",
           "rebuild_counts"]

answer_counts = store.answer_counts
known_respondents = store.known_respondents

# (question key, group number, answer label) -> change in the number of stored answers
Changes = Mapping[tuple[int, int, str], int]


class CountsMismatch(StoreError):
    """The kept counts differ from the stored answers (``surveykit check`` exits 1)."""


def add_known_respondents(conn: Connection, key: int, respondent_ids: Iterable[str]) -> int:
    """Record that these ids answered survey ``key``; returns how many are new to it.

    >>> # new = add_known_respondents(conn, key, {"R1", "R2"})
    """
    ids = sorted(set(respondent_ids))
    if not ids:
        return 0
    if conn.dialect.name == "sqlite":
        # one statement over a JSON array: an executemany pays Python's cost per id
        return conn.exec_driver_sql(
            "INSERT INTO known_respondents (survey_id, respondent_id) SELECT ?, value "
            "FROM json_each(?) WHERE true ON CONFLICT (survey_id, respondent_id) DO NOTHING",
            (key, json.dumps(ids))).rowcount
    statement = store.dialect_insert(conn, known_respondents).on_conflict_do_nothing(
        index_elements=[known_respondents.c.survey_id, known_respondents.c.respondent_id])
    return store.BulkStatement(conn, statement, ("survey_id", "respondent_id")).execute(
        conn, [(key, respondent) for respondent in ids])


def add_known_respondents_from(conn: Connection, key: int, table: str) -> int:
    """The same for every distinct ``respondent_id`` of the temporary ``table``, in SQL."""
    return conn.execute(text(
        "INSERT INTO known_respondents (survey_id, respondent_id) "
        f"SELECT :key, respondent_id FROM (SELECT DISTINCT respondent_id FROM {table}) d "
        "WHERE true ORDER BY respondent_id "
        "ON CONFLICT (survey_id, respondent_id) DO NOTHING"), {"key": key}).rowcount


def apply_changes(conn: Connection, key: int, changes: Changes, new_respondents: int) -> None:
    """Add a write's ``changes`` to the kept counts of survey ``key``, and its new respondents.

    Called by every writer inside its transaction, after its answers are
    written and checked (:mod:`surveykit.store.importer`,
    :mod:`surveykit.store.submissions`).
    """
    rows = [{"survey_id": key, "question_id": question, "group_number": group,
             "answer": answer, "count": change}
            for (question, group, answer), change in sorted(changes.items()) if change]
    added = [row for row in rows if row["count"] > 0]
    if added:
        statement = store.dialect_insert(conn, answer_counts)
        statement = statement.on_conflict_do_update(
            index_elements=[answer_counts.c.survey_id, answer_counts.c.question_id,
                            answer_counts.c.group_number, answer_counts.c.answer],
            set_={"count": answer_counts.c.count + statement.excluded.count})
        conn.execute(statement, added)
    removed = [row for row in rows if row["count"] < 0]
    if removed:
        # the answers a replacement overwrites were counted, so their cells exist (an
        # upsert would check the negative count against the CHECK before the conflict)
        c = answer_counts.c
        conn.execute(update(answer_counts).where(
            c.survey_id == key, c.question_id == bindparam("b_question"),
            c.group_number == bindparam("b_group"), c.answer == bindparam("b_answer"),
        ).values(count=c.count + bindparam("b_change")),
            [{"b_question": row["question_id"], "b_group": row["group_number"],
              "b_answer": row["answer"], "b_change": row["count"]} for row in removed])
        conn.execute(delete(answer_counts).where(c.survey_id == key, c.count == 0))
    if new_respondents:
        surveys = store.surveys
        conn.execute(update(surveys).where(surveys.c.id == key).values(
            known_respondents=surveys.c.known_respondents + new_respondents))


def kept_counts_statement(key: int):
    """The kept cells of survey ``key``: (question key, group, answer, count), along the key."""
    return (select(answer_counts.c.question_id, answer_counts.c.group_number,
                   answer_counts.c.answer, answer_counts.c.count)
            .where(answer_counts.c.survey_id == key))


def kept_respondents_statement(key: int):
    """The kept number of respondents with at least one answer in survey ``key``."""
    return select(store.surveys.c.known_respondents).where(store.surveys.c.id == key)


@dataclass(frozen=True)
class CountDifference:
    """One cell whose kept count differs from the count of stored answers."""

    question: str
    group: int
    answer: str
    kept: int
    counted: int


@dataclass(frozen=True)
class CountsCheck:
    """What :func:`check_counts` compared: cells, answers, respondents and every difference.

    ``respondents`` is the number of distinct ids with answers,
    ``kept_respondents`` the survey's counter and ``listed_respondents`` the
    rows of ``known_respondents``; all three agree when ``ok``.
    """

    survey: str
    cells: int
    answers: int
    respondents: int
    kept_respondents: int
    listed_respondents: int
    differences: tuple[CountDifference, ...]

    @property
    def ok(self) -> bool:
        """True when the kept counts equal the recomputed ones everywhere."""
        return not self.differences and (
            self.respondents == self.kept_respondents == self.listed_respondents)

    def to_dict(self) -> dict:
        return {**asdict(self), "ok": self.ok,
                "differences": [asdict(d) for d in self.differences]}

    def summary(self) -> str:
        """One line: what agrees, or how many cells and counters differ."""
        if self.ok:
            return (f"the kept counts of survey {self.survey!r} agree with its answers: "
                    f"{self.cells:,} cells, {self.answers:,} answers, {self.respondents:,} "
                    "respondents")
        parts = []
        if self.differences:
            parts.append(f"{len(self.differences)} cell"
                         f"{'s' if len(self.differences) != 1 else ''}")
        if not self.respondents == self.kept_respondents == self.listed_respondents:
            parts.append(f"the respondents ({self.respondents:,} with answers, kept "
                         f"{self.kept_respondents:,}, listed {self.listed_respondents:,})")
        return (f"the kept counts of survey {self.survey!r} differ from its answers in "
                f"{' and '.join(parts)}; rebuild them from the answers with 'surveykit check "
                f"--survey {self.survey} --repair'")


def check_counts(engine: Engine, survey_name: str) -> CountsCheck:
    """Recompute a survey's counts from ``responses`` and compare them with the kept ones.

    One snapshot: the GROUP BY of the answers (the query counts used before
    they were kept), the distinct respondents, the kept cells, the survey's
    counter and the rows of ``known_respondents``. Costs a pass over the
    survey's answers, like a report did before 0005.

    >>> # check_counts(open_engine(), "academic_integrity").ok
    """
    store.require_schema(engine)
    with store.read_snapshot(engine) as conn:
        key = store.survey_id(conn, survey_name)
        names = {question: name for name, question in store.question_ids(conn, key).items()}
        counted = {(q, int(g), a): int(n) for q, g, a, n in
                   conn.execute(store.counts_statement(key))}
        kept = {(q, int(g), a): int(n) for q, g, a, n in conn.execute(kept_counts_statement(key))
                if n}
        respondents = conn.execute(store.known_respondents_statement(key)).scalar_one()
        kept_respondents = conn.execute(kept_respondents_statement(key)).scalar_one()
        listed = conn.execute(select(func.count()).select_from(known_respondents).where(
            known_respondents.c.survey_id == key)).scalar_one()
    order = {question: position for position, question in enumerate(names)}
    differences = tuple(
        CountDifference(question=names[q], group=g, answer=a, kept=kept.get((q, g, a), 0),
                        counted=counted.get((q, g, a), 0))
        for q, g, a in sorted(set(counted) | set(kept), key=lambda c: (order[c[0]], *c[1:]))
        if kept.get((q, g, a), 0) != counted.get((q, g, a), 0))
    return CountsCheck(survey=survey_name, cells=len(set(counted) | set(kept)),
                       answers=sum(counted.values()), respondents=int(respondents),
                       kept_respondents=int(kept_respondents), listed_respondents=int(listed),
                       differences=differences)


def rebuild_counts(engine: Engine, survey_name: str) -> CountsCheck:
    """Rewrite a survey's kept counts from its answers, in one write transaction.

    Returns the check as it stood before the rebuild. Every writer keeps the
    counts, so this is for databases changed outside surveykit (a row
    deleted by hand) and is what migration 0005 did for every survey.
    """
    before = check_counts(engine, survey_name)
    with store.write_transaction(engine) as conn:
        key = store.survey_id(conn, survey_name)
        rebuild(conn, key)
    return before


def rebuild(conn: Connection, key: int) -> None:
    """The kept counts of survey ``key`` recomputed from its answers (inside a transaction)."""
    responses = store.responses
    conn.execute(delete(answer_counts).where(answer_counts.c.survey_id == key))
    conn.execute(insert(answer_counts).from_select(
        ["survey_id", "question_id", "group_number", "answer", "count"],
        select(responses.c.survey_id, responses.c.question_id, responses.c.group_number,
               responses.c.answer, func.count())
        .where(responses.c.survey_id == key)
        .group_by(responses.c.survey_id, responses.c.question_id, responses.c.group_number,
                  responses.c.answer)))
    conn.execute(delete(known_respondents).where(known_respondents.c.survey_id == key))
    conn.execute(insert(known_respondents).from_select(
        ["survey_id", "respondent_id"],
        select(responses.c.survey_id, responses.c.respondent_id).distinct()
        .where(responses.c.survey_id == key)))
    surveys = store.surveys
    conn.execute(update(surveys).where(surveys.c.id == key).values(
        known_respondents=select(func.count()).select_from(known_respondents).where(
            known_respondents.c.survey_id == key).scalar_subquery()))
