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
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

from sqlalchemy import (
    Connection,
    Engine,
    bindparam,
    delete,
    distinct,
    func,
    insert,
    select,
    text,
    update,
)

from surveykit.counts import Counts, QuestionCounts
from surveykit.definition.survey import Survey
from surveykit.errors import StoreError, clip
from surveykit.store.engines import BulkStatement, dialect_insert, read_snapshot, write_transaction
from surveykit.store.kept_cells import rebuild_cells
from surveykit.store.schema import require_schema
from surveykit.store.surveys import kept_respondents_statement, stored_definition, survey_id
from surveykit.store.tables import answer_counts, known_respondents, questions, responses, surveys

__all__ = ["CountDifference", "count_responses", "counts_statement",
           "known_respondents_statement", "CountsCheck", "CountsMismatch", "KeptCounts",
           "UncountableAnswers", "add_known_respondents", "add_known_respondents_from",
           "answer_problem",
           "apply_changes", "check_counts", "count_upsert_statement", "kept_counts_statement",
           "kept_respondents_statement", "known_respondent_insert_statement",
           "known_respondents_update_statement", "layout_of", "read_kept", "rebuild",
           "rebuild_counts"]

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
    statement = known_respondent_insert_statement(conn)
    return BulkStatement(conn, statement, ("survey_id", "respondent_id")).execute(
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
        conn.execute(count_upsert_statement(conn), added)
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
        conn.execute(known_respondents_update_statement(), {"b_survey": key,
                                                            "b_new": new_respondents})


def count_upsert_statement(conn: Connection):
    """Add ``count`` to a kept cell, creating it when absent (parameters: the cell's
    columns and ``count``); every writer adds answers to the kept counts with it."""
    statement = dialect_insert(conn, answer_counts)
    return statement.on_conflict_do_update(
        index_elements=[answer_counts.c.survey_id, answer_counts.c.question_id,
                        answer_counts.c.group_number, answer_counts.c.answer],
        set_={"count": answer_counts.c.count + statement.excluded.count})


def known_respondents_update_statement():
    """Add ``b_new`` new respondents to survey ``b_survey``'s kept number of respondents."""
    return update(surveys).where(surveys.c.id == bindparam("b_survey")).values(
        known_respondents=surveys.c.known_respondents + bindparam("b_new"))


def known_respondent_insert_statement(conn: Connection):
    """Record that ``respondent_id`` answered survey ``survey_id`` (nothing if known)."""
    return dialect_insert(conn, known_respondents).on_conflict_do_nothing(
        index_elements=[known_respondents.c.survey_id, known_respondents.c.respondent_id])


def kept_counts_statement(key: int):
    """The kept cells of survey ``key``: (question key, group, answer, count), along the key."""
    return (select(answer_counts.c.question_id, answer_counts.c.group_number,
                   answer_counts.c.answer, answer_counts.c.count)
            .where(answer_counts.c.survey_id == key))


# -- what a stored cell may hold -----------------------------------------------------------


@dataclass(frozen=True)
class _Layout:
    """What the kept counts and the answers of one survey may hold, from its question rows
    and its stored definition: the question keys (with the id to show and the response
    labels of their design) and the number of groups. ``labels`` is None for a question
    whose design is unknown (the definition cannot be read), then only the structure of a
    cell is checked. ``definition`` says (in a sentence that ends with the fix) why the
    definition cannot be read or trusted, or is None."""

    names: Mapping[int, str]
    labels: Mapping[int, tuple[str, ...] | None]
    groups: int | None
    definition: str | None
    # keys of numeric questions: their answers are numbers, never kept per value
    numeric: frozenset[int] = frozenset()

    def problem(self, question: object, group: object, answer: object) -> str | None:
        """Why a cell (question key, group, answer) cannot be one of the survey's, or None.

        >>> layout = _Layout(names={7: "q1"}, labels={7: ("yes", "no", "dont_know")},
        ...                  groups=1, definition=None)
        >>> layout.problem(7, 1, "yes") is None, layout.problem(8, 1, "yes")
        (True, 'question key 8 is not a question of the survey')
        >>> layout.problem(7, 2, "yes")
        'group 2 is not a group of the survey (it has 1)'
        >>> layout.problem(7, 1, "maybe")
        "'maybe' is not an answer of question q1 (yes, no, dont_know)"
        """
        if question not in self.names:
            return f"question key {_shown(question)} is not a question of the survey"
        if question in self.numeric:
            return (f"question {self.names[question]} is numeric: its answers are not kept "
                    "per value")
        return answer_problem(self.names[question], self.labels[question], self.groups,
                              group, answer)

    def order(self, question: object) -> tuple[int, int, str]:
        """A sort key: the survey's questions in order, then unknown keys."""
        position = list(self.names).index(question) if question in self.names else len(
            self.names)
        return position, 0, _shown(question)


def answer_problem(question: str, labels: Sequence[str] | None, groups: int | None,
                   group: object, answer: object) -> str | None:
    """Why a stored (group, answer) of ``question`` cannot be one of the survey's (its
    design's response ``labels`` and ``groups`` groups; None: not known), or None.

    >>> answer_problem("q1", ("yes", "no", "dont_know"), 2, "2", "yes")
    "group '2' is not a group of the survey (it has 2)"
    """
    if (isinstance(group, bool) or not isinstance(group, int) or group < 1
            or (groups is not None and group > groups)):
        has = f" (it has {groups})" if groups is not None else ""
        return f"group {_shown(group)} is not a group of the survey{has}"
    if not isinstance(answer, str) or not answer or (labels is not None
                                                      and answer not in labels):
        allowed = f" ({', '.join(labels)})" if labels is not None else ""
        return f"{_shown(answer)} is not an answer of question {question}{allowed}"
    return None


def _shown(value: object) -> str:
    """A stored value for a message: a number as it is, anything else as its repr, clipped
    (control characters are escaped where it is printed)."""
    if value is None:
        return "NULL"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return clip(repr(value), 60)


def _whole(value: object) -> int | None:
    """A stored count as an int, or None when it is none (text, NULL, a fraction, bytes)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _layout(conn: Connection, key: int, survey_name: str) -> _Layout:
    """The layout of survey ``key`` from its question rows and its stored definition, whether
    or not the definition can be read (``surveykit check`` reports it then)."""
    rows = conn.execute(select(questions.c.id, questions.c.name)
                        .where(questions.c.survey_id == key)
                        .order_by(questions.c.position)).all()
    try:
        survey = stored_definition(conn, key, survey_name)
    except StoreError as exc:
        return _Layout(names={k: str(name) for k, name in rows}, labels=dict.fromkeys(
            (k for k, _ in rows), None), groups=None, definition=str(exc))
    return layout_of(survey, rows)


def layout_of(survey: Survey, rows: Iterable[tuple[int, object]]) -> _Layout:
    """The layout of ``survey`` whose question rows are ``rows`` (key, stored name), in
    position order; ``definition`` tells where the rows and the definition disagree."""
    rows = list(rows)
    defined = [question.id for question in survey.questions]
    stored = [name for _, name in rows]
    problem = None
    if stored != defined:
        position = next((i for i, (a, b) in enumerate(zip(stored, defined, strict=False))
                         if a != b), min(len(stored), len(defined)))
        if position < min(len(stored), len(defined)):
            problem = (f"question {position + 1} is stored as {_shown(stored[position])} but "
                       f"defined as {defined[position]!r}")
        elif len(stored) < len(defined):
            problem = f"question {defined[position]!r} has no stored row"
        else:
            problem = f"the stored question {_shown(stored[position])} is not defined"
        problem = (f"the questions stored for survey {survey.name!r} differ from its "
                   f"definition ({problem}): the database was changed outside surveykit; "
                   "restore it from a backup")
    by_id = {question.id: question for question in survey.questions}
    names = {k: str(name) for k, name in rows}
    numeric = frozenset(k for k, name in rows if name in by_id and by_id[name].numeric)
    labels = {k: by_id[name].design.response_labels
              if name in by_id and k not in numeric else None for k, name in rows}
    return _Layout(names=names, labels=labels, groups=len(survey.groups), definition=problem,
                   numeric=numeric)


# -- reading the kept counts -----------------------------------------------------------------


@dataclass(frozen=True)
class KeptCounts:
    """The kept counts of one survey, checked: question id -> group -> answer -> count (every
    question present), and the number of respondents with at least one answer."""

    tables: Mapping[str, Mapping[str, Mapping[str, int]]]
    respondents: int


def read_kept(conn: Connection, key: int, survey: Survey) -> KeptCounts:
    """The kept counts of survey ``key`` (``survey``, its current definition), refused with
    a one-line :class:`CountsMismatch` when a row does not fit the survey: a question, group
    or answer it does not have, a count that is not a whole number >= 0, a cell kept twice,
    a number of respondents below a question's answers. Such rows come only from changes
    made outside surveykit; ``surveykit check --repair`` rebuilds them from the answers.
    """
    layout = layout_of(survey, conn.execute(
        select(questions.c.id, questions.c.name)
        .where(questions.c.survey_id == key).order_by(questions.c.position)))

    def refuse(problem: str) -> CountsMismatch:
        return CountsMismatch(
            f"the kept counts of survey {survey.name!r} do not fit its definition ({problem}): "
            "they were changed outside surveykit; rebuild them from the answers with "
            f"'surveykit check --survey {survey.name} --repair'")

    if layout.definition is not None:
        raise StoreError(layout.definition)
    tables: dict[str, dict[str, dict[str, int]]] = {
        name: {} for key, name in layout.names.items() if key not in layout.numeric}
    for question, group, answer, n in conn.execute(kept_counts_statement(key).order_by(
            answer_counts.c.question_id, answer_counts.c.group_number, answer_counts.c.answer)):
        problem = layout.problem(question, group, answer)
        if problem is not None:
            raise refuse(f"a kept row: {problem}")
        where = f"question {layout.names[question]}, group {group}, answer {answer!r}"
        count = _whole(n)
        if count is None or count < 0:
            raise refuse(f"the count of {where} is {_shown(n)}, not a whole number >= 0")
        cells = tables[layout.names[question]].setdefault(str(group), {})
        if answer in cells:
            raise refuse(f"{where} is kept in more than one row")
        if count:
            cells[answer] = count
    stored = conn.execute(kept_respondents_statement(key)).scalar_one()
    known = _whole(stored)
    most = max((sum(sum(row.values()) for row in groups.values())
                for groups in tables.values()), default=0)
    if known is None or known < most:
        raise refuse(f"the kept number of respondents, {_shown(stored)}, is not a whole "
                     f"number of at least {most:,}, the answers to a question")
    return KeptCounts(tables=tables, respondents=known)


# -- checking and rebuilding ------------------------------------------------------------------


@dataclass(frozen=True)
class CountDifference:
    """One cell whose kept count differs from the count of stored answers.

    ``group`` and ``answer`` are what the database holds (``group`` a number, or the repr of
    a value that is none); ``kept`` is None when the kept count is no whole number;
    ``problem`` says why a kept row cannot be one of the survey's ("" for a plain
    difference of counts).
    """

    question: str
    group: int | str
    answer: str
    kept: int | None
    counted: int
    problem: str = ""


@dataclass(frozen=True)
class UncountableAnswers:
    """Stored answers the survey cannot hold (changed outside surveykit): ``answers`` of
    them in this cell, and why. The kept counts leave them out; no rebuild can fix them."""

    question: str
    group: int | str
    answer: str
    answers: int
    problem: str


@dataclass(frozen=True)
class CountsCheck:
    """What :func:`check_counts` compared: cells, answers, respondents and every difference.

    ``respondents`` is the number of distinct ids with answers,
    ``kept_respondents`` the survey's counter (None when it is no whole number) and
    ``listed_respondents`` the rows of ``known_respondents``; all three agree when ``ok``.
    ``uncountable`` lists stored answers the survey cannot hold and ``definition`` why the
    stored definition cannot be read or differs from the stored questions: neither can be
    rebuilt from the answers.
    """

    survey: str
    cells: int
    answers: int
    respondents: int
    kept_respondents: int | None
    listed_respondents: int
    differences: tuple[CountDifference, ...]
    uncountable: tuple[UncountableAnswers, ...] = ()
    definition: str | None = None

    @property
    def respondents_agree(self) -> bool:
        """True when the counter and the list of known respondents match the answers."""
        return self.respondents == self.kept_respondents == self.listed_respondents

    @property
    def repairable(self) -> bool:
        """True when rebuilding the kept counts from the answers changes something."""
        return bool(self.differences) or not self.respondents_agree

    @property
    def ok(self) -> bool:
        """True when the kept counts equal the recomputed ones everywhere and every stored
        answer and the definition fit the survey."""
        return not self.repairable and not self.uncountable and self.definition is None

    def to_dict(self) -> dict:
        return {**asdict(self), "ok": self.ok,
                "differences": [asdict(d) for d in self.differences],
                "uncountable": [asdict(u) for u in self.uncountable]}

    def summary(self) -> str:
        """One line: what agrees, or what differs and what to do."""
        if self.ok:
            return (f"the kept counts of survey {self.survey!r} agree with its answers: "
                    f"{self.cells:,} cells, {self.answers:,} answers, {self.respondents:,} "
                    "respondents")
        sentences = []
        if self.repairable:
            parts = []
            if self.differences:
                parts.append(f"{len(self.differences)} cell"
                             f"{'s' if len(self.differences) != 1 else ''}")
            if not self.respondents_agree:
                kept = ("unreadable" if self.kept_respondents is None
                        else f"{self.kept_respondents:,}")
                parts.append(f"the respondents ({self.respondents:,} with answers, kept "
                             f"{kept}, listed {self.listed_respondents:,})")
            sentences.append(
                f"the kept counts of survey {self.survey!r} differ from its answers in "
                f"{' and '.join(parts)}; rebuild them from the answers with 'surveykit check "
                f"--survey {self.survey} --repair'")
        sentences += self.unrepairable()
        return "; ".join(sentences)

    def unrepairable(self) -> list[str]:
        """What no rebuild from the answers can fix, one clause each."""
        found = []
        if self.uncountable:
            n = sum(u.answers for u in self.uncountable)
            found.append(
                f"{n:,} stored answer{'s' if n != 1 else ''} of survey {self.survey!r} "
                f"cannot be counted ({self.uncountable[0].problem}"
                f"{', and more' if len(self.uncountable) > 1 else ''}): they were changed "
                "outside surveykit and the kept counts leave them out; restore the database "
                "from a backup, or import the right answers with --replace")
        if self.definition is not None:
            found.append(self.definition)
        return found


def check_counts(engine: Engine, survey_name: str) -> CountsCheck:
    """Recompute a survey's counts from ``responses`` and compare them with the kept ones.

    One snapshot: the GROUP BY of the answers (the query counts used before
    they were kept), the distinct respondents, the kept rows, the survey's
    counter and the rows of ``known_respondents``. Costs a pass over the
    survey's answers, like a report did before 0005. Whatever a database
    changed by hand holds (a row for a question the survey does not have, a
    count stored as text, a negative count, an answer its design does not
    have, two rows for one cell) is a difference, never an error.

    >>> # check_counts(open_engine(), "academic_integrity").ok
    """
    require_schema(engine)
    with read_snapshot(engine) as conn:
        key = survey_id(conn, survey_name)
        layout = _layout(conn, key, survey_name)
        recounted = list(conn.execute(counts_statement(key, skip=layout.numeric)))
        kept_rows = list(conn.execute(kept_counts_statement(key)))
        respondents = conn.execute(known_respondents_statement(key)).scalar_one()
        kept_respondents = conn.execute(kept_respondents_statement(key)).scalar_one()
        listed = conn.execute(select(func.count()).select_from(known_respondents).where(
            known_respondents.c.survey_id == key)).scalar_one()
    counted, uncountable = _sort_answers(layout, recounted)
    return CountsCheck(
        survey=survey_name, cells=len(counted), answers=sum(counted.values()),
        respondents=int(respondents), kept_respondents=_whole(kept_respondents),
        listed_respondents=int(listed), differences=_differences(layout, counted, kept_rows),
        uncountable=uncountable, definition=layout.definition)


def _sort_answers(layout: _Layout, recounted) -> tuple[dict[tuple, int],
                                                        tuple[UncountableAnswers, ...]]:
    """The GROUP BY of the answers split into the cells the survey has (cell -> count) and
    the answers it cannot hold."""
    counted: dict[tuple, int] = {}
    uncountable = []
    for question, group, answer, n in recounted:
        problem = layout.problem(question, group, answer)
        if problem is None:
            counted[question, group, answer] = int(n)
        else:
            uncountable.append((layout.order(question), _shown(group), _shown(answer),
                                UncountableAnswers(question=_name(layout, question),
                                                   group=_group(group), answer=_text(answer),
                                                   answers=int(n), problem=problem)))
    uncountable.sort(key=lambda item: item[:3])
    return counted, tuple(item[-1] for item in uncountable)


def _differences(layout: _Layout, counted: Mapping[tuple, int], kept_rows
                 ) -> tuple[CountDifference, ...]:
    """Every cell where the kept rows and the recount disagree, and every kept row that
    cannot be one of the survey's."""
    kept: dict[tuple, list[object]] = {}
    for question, group, answer, n in kept_rows:
        kept.setdefault((question, group, answer), []).append(n)
    found = []
    for cell in set(kept) | set(counted):
        question, group, answer = cell
        values = kept.get(cell, [])
        counts = [_whole(value) for value in values]
        problem = layout.problem(*cell) if cell not in counted else None
        if problem is not None:
            problem = f"kept row: {problem}"
        elif any(n is None or n < 0 for n in counts):
            bad = next(value for value, n in zip(values, counts, strict=True)
                       if n is None or n < 0)
            problem = f"kept count {_shown(bad)} is not a whole number >= 0"
        elif len(values) > 1:
            problem = f"kept in {len(values)} rows"
        total = None if any(n is None for n in counts) else sum(n for n in counts if n)
        if problem is None and (total or 0) == counted.get(cell, 0):
            continue
        found.append((layout.order(question), _shown(group), _shown(answer), CountDifference(
            question=_name(layout, question), group=_group(group), answer=_text(answer),
            kept=total, counted=counted.get(cell, 0), problem=problem or "")))
    found.sort(key=lambda item: item[:3])
    return tuple(item[-1] for item in found)


def _name(layout: _Layout, question: object) -> str:
    return layout.names.get(question, f"question key {_shown(question)}")


def _group(value: object) -> int | str:
    return value if isinstance(value, int) and not isinstance(value, bool) else _shown(value)


def _text(value: object) -> str:
    return value if isinstance(value, str) else _shown(value)


def rebuild_counts(engine: Engine, survey_name: str) -> CountsCheck:
    """Rewrite a survey's kept counts from its answers, in one write transaction.

    Returns the check as it stood before the rebuild. Every writer keeps the
    counts, so this is for databases changed outside surveykit (a row
    deleted by hand) and is what migration 0005 did for every survey. A survey
    with ``[sampling]`` gets its kept weighted cells rebuilt too
    (:func:`surveykit.store.kept_cells.rebuild_cells`, as migration 0007 made them). The
    answers the survey cannot hold (an answer its design does not have, a
    group it does not have) are left out of the rebuilt counts, and stay in
    the check's ``uncountable``.
    """
    before = check_counts(engine, survey_name)
    with write_transaction(engine) as conn:
        key = survey_id(conn, survey_name)
        layout = _layout(conn, key, survey_name)
        rebuild(conn, key, layout)
        if layout.definition is None:  # a sampled survey's kept weighted cells too
            rebuild_cells(conn, key, stored_definition(conn, key, survey_name))
    return before


def rebuild(conn: Connection, key: int, layout: _Layout) -> None:
    """The kept counts of survey ``key`` recomputed from its answers (inside a transaction):
    the cells of the answers that fit the survey's ``layout``, and every respondent."""
    conn.execute(delete(answer_counts).where(answer_counts.c.survey_id == key))
    counted, _ = _sort_answers(layout, conn.execute(counts_statement(key, skip=layout.numeric)))
    if counted:
        conn.execute(insert(answer_counts), [
            {"survey_id": key, "question_id": question, "group_number": group,
             "answer": answer, "count": n}
            for (question, group, answer), n in sorted(counted.items())])
    conn.execute(delete(known_respondents).where(known_respondents.c.survey_id == key))
    conn.execute(insert(known_respondents).from_select(
        ["survey_id", "respondent_id"],
        select(responses.c.survey_id, responses.c.respondent_id).distinct()
        .where(responses.c.survey_id == key)))
    conn.execute(update(surveys).where(surveys.c.id == key).values(
        known_respondents=select(func.count()).select_from(known_respondents).where(
            known_respondents.c.survey_id == key).scalar_subquery()))


# -- the counts a report reads, and the GROUP BY they are checked against --------------


def count_responses(engine: Engine, survey_name: str, *, survey: Survey | None = None
                    ) -> list[QuestionCounts]:
    """Per question (in survey order): answers per group and response, and missing.

    Reads the kept counts (``answer_counts`` and the survey's number of known
    respondents, :mod:`surveykit.store.answer_counts`), which every write
    keeps in its own transaction: a few rows, whatever the number of stored
    answers, read in one snapshot. Questions without answers appear with no
    counts. ``surveykit check`` compares them with :func:`counts_statement`,
    the GROUP BY of the answers. Kept rows that do not fit the survey's
    definition (changed outside surveykit) are refused in one line that says
    to run ``surveykit check --repair``
    (:func:`surveykit.store.answer_counts.read_kept`). ``survey``, the definition
    the caller has already read (:func:`load_survey`), spares parsing it again when it is
    still the current one.
    """
    require_schema(engine)
    with read_snapshot(engine) as conn:
        key = survey_id(conn, survey_name)
        kept = read_kept(conn, key, stored_definition(conn, key, survey_name, survey))
    return [QuestionCounts(question_id=name, counts=Counts.from_mapping(table),
                           missing=kept.respondents - sum(sum(g.values())
                                                          for g in table.values()))
            for name, table in kept.tables.items()]


def counts_statement(key: int, *, skip: Collection[int] = ()):
    """The counts recomputed from the answers: one GROUP BY along the primary key of
    ``responses`` (``surveykit check`` and migration 0005; exposed for EXPLAIN in tests).
    ``skip``: question keys left out (numeric questions, whose answers are not counted per
    value)."""
    statement = (
        select(responses.c.question_id, responses.c.group_number, responses.c.answer,
               func.count())
        .where(responses.c.survey_id == key)
        .group_by(responses.c.question_id, responses.c.group_number, responses.c.answer)
    )
    if skip:
        statement = statement.where(responses.c.question_id.not_in(sorted(skip)))
    return statement


def known_respondents_statement(key: int):
    """Respondents who answered at least one question of the survey."""
    return (select(func.count(distinct(responses.c.respondent_id)))
            .where(responses.c.survey_id == key))
