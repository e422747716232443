"""Issued questionnaires: the ids that ``generate`` printed, their groups and the runs'
instruction totals (for the randomizer audit).

Privacy by construction: :func:`record_generation` stores issued respondent
ids and, separately, per-question *totals* of issued codes, and those only
for runs with at least AUDIT_MINIMUM_PER_GROUP ids in every group (so that
comparing two copies of the database never reads a small run's codes).
Nothing links a respondent to a code.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from sqlalchemy import (
    Connection,
    Engine,
    func,
    select,
)

from surveykit.definition.limits import AUDIT_MINIMUM_PER_GROUP
from surveykit.errors import ParameterError, StoreError
from surveykit.store.design_values import FrameValues, store_frame_values
from surveykit.store.engines import (
    dialect_insert,
    write_transaction,
)
from surveykit.store.models import (
    CODE_LENGTH,
    RESPONDENT_ID_LENGTH,
)
from surveykit.store.schema import require_schema
from surveykit.store.surveys import _now, load_survey, question_ids, survey_id
from surveykit.store.tables import (
    questions,
    respondents,
    tallies,
)

__all__ = ["check_respondent_id", "code_tallies", "code_tallies_in", "issued_count",
           "issued_groups", "issued_respondent_count", "record_generation"]

# Keeps IN (...) lists below every database's limit on bound parameters.
_IN_BATCH = 500


def check_respondent_id(value: object) -> str | None:
    """Why ``value`` cannot be a respondent id, or None if it can."""
    if not isinstance(value, str) or not value.strip():
        return "a respondent id must be a non-empty text"
    if value != value.strip():
        return "a respondent id must not start or end with spaces"
    if len(value) > RESPONDENT_ID_LENGTH:
        return f"a respondent id must be at most {RESPONDENT_ID_LENGTH} characters"
    return None


def record_generation(engine: Engine, survey_name: str, respondent_ids: Sequence[str],
                      code_tallies: Mapping[str, Mapping[int, Mapping[str, int]]], *,
                      groups: Sequence[int] | None = None, frame: FrameValues | None = None
                      ) -> None:
    """Register issued questionnaires and add their instruction totals, in one transaction.

    ``respondent_ids`` are the ids printed on the questionnaires (unique per
    survey; a duplicate, inside the list or with earlier generations, is an
    error and nothing is stored). ``groups`` gives each id's group number
    (1, 2, ...; a form version, not a secret), or None for a one-group
    survey. ``code_tallies`` maps question id -> group number -> instruction
    code (``truthful``, ``opposite``, ``dont_know``, ``say:yes``, ...) ->
    count; the counts are added to those already stored. Every question's
    counts in a group must add up to that group's number of ids (one
    instruction per respondent and question), and counts are refused unless
    every group of the survey has at least
    :data:`~surveykit.definition.limits.AUDIT_MINIMUM_PER_GROUP` of the ids:
    whoever compares the database before and after would otherwise read a
    small run's instructions (docs/questionnaires.md, "Threat model"); give
    ``{}`` for such a run. Nothing ties an id to a code. With ``frame`` (a
    sample frame, one unit per id in order) the units' design values are stored
    for the ids in the same transaction
    (:func:`surveykit.store.design_values.store_frame_values`).

    >>> # record_generation(engine, "academic_integrity", ["AI-0001", "AI-0002"],
    >>> #                   {"exam_cheating": {1: {"truthful": 1, "dont_know": 1}}})
    """
    ids = list(respondent_ids)
    for value in ids:
        problem = check_respondent_id(value)
        if problem:
            raise ParameterError(f"respondent id {value!r}: {problem}")
    repeated = sorted(value for value, n in Counter(ids).items() if n > 1)
    if repeated:
        raise ParameterError(
            f"{len(repeated)} respondent id(s) appear more than once: {_sample(repeated)}"
        )
    if groups is not None:
        groups = list(groups)
        if len(groups) != len(ids):
            raise ParameterError(f"groups has {len(groups)} entries for {len(ids)} ids")
    require_schema(engine)
    survey = load_survey(engine, survey_name)
    if groups is not None:
        for group in set(groups):
            if isinstance(group, bool) or not isinstance(group, int) \
                    or not 1 <= group <= len(survey.groups):
                raise ParameterError(
                    f"group {group!r} is not a group number of survey {survey_name!r} "
                    f"(1 to {len(survey.groups)})")
    per_group = Counter(groups) if groups is not None else Counter({1: len(ids)})
    if any(counts for groups_of in code_tallies.values() for counts in groups_of.values()):
        _check_tallied_run(survey_name, per_group, len(survey.groups))
    with write_transaction(engine) as conn:
        key = survey_id(conn, survey_name)
        known_questions = question_ids(conn, key)
        rows = _tally_rows(survey_name, code_tallies, known_questions, per_group)
        already = _existing_respondents(conn, key, ids)
        if already:
            raise StoreError(
                f"{len(already)} respondent id(s) were already issued for survey "
                f"{survey_name!r}: {_sample(already)}; nothing was recorded"
            )
        now = _now()
        if ids:
            conn.execute(respondents.insert(), [
                {"survey_id": key, "respondent_id": value, "issued_at": now,
                 "group_number": None if groups is None else groups[i]}
                for i, value in enumerate(ids)
            ])
        if frame is not None:
            store_frame_values(conn, key, survey, frame, ids)
        if rows:
            stmt = dialect_insert(conn, tallies)
            stmt = stmt.on_conflict_do_update(
                index_elements=[tallies.c.question_id, tallies.c.group_number, tallies.c.code],
                set_={"count": tallies.c.count + stmt.excluded.count},
            )
            conn.execute(stmt, rows)


def _check_tallied_run(survey_name: str, per_group: Mapping[int, int], group_count: int
                       ) -> None:
    """Refuse instruction totals of a run with fewer than AUDIT_MINIMUM_PER_GROUP ids in a group."""
    for group in range(1, group_count + 1):
        issued = per_group.get(group, 0)
        if issued < AUDIT_MINIMUM_PER_GROUP:
            where = f" in group {group}" if group_count > 1 else ""
            raise ParameterError(
                f"instruction totals of a run of {issued} respondent id(s){where} of survey "
                f"{survey_name!r} would let anyone who compares the database before and after "
                f"it read the run's instructions; keep totals only for runs with at least "
                f"{AUDIT_MINIMUM_PER_GROUP} ids in every group, and record smaller runs' ids "
                "without them")


def _tally_rows(survey_name: str, code_tallies: Mapping[str, Mapping[int, Mapping[str, int]]],
                known_questions: Mapping[str, int], per_group: Mapping[int, int]
                ) -> list[dict]:
    by_folded = {name.casefold(): key for name, key in known_questions.items()}
    rows = []
    for question, groups in code_tallies.items():
        key = by_folded.get(str(question).casefold())
        if key is None:
            raise ParameterError(
                f"code_tallies names question {question!r}, which survey {survey_name!r} "
                f"does not have; its questions are {', '.join(known_questions)}"
            )
        for group, counts in groups.items():
            if isinstance(group, bool) or not isinstance(group, int) or group < 1:
                raise ParameterError(f"group {group!r} of question {question!r} must be a "
                                     "group number 1, 2, ...")
            total = 0
            for code, count in counts.items():
                if not isinstance(code, str) or not code or len(code) > CODE_LENGTH:
                    raise ParameterError(f"instruction code {code!r} for question {question!r} "
                                         "must be a non-empty text")
                if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                    raise ParameterError(
                        f"count {count!r} of instruction {code} for question {question!r} must "
                        "be an integer >= 0"
                    )
                total += count
                rows.append({"question_id": key, "group_number": group, "code": code,
                             "count": count})
            if total != per_group.get(group, 0):
                raise ParameterError(
                    f"the instructions for question {question!r} in group {group} add up to "
                    f"{total}, but {per_group.get(group, 0)} respondent ids were issued in it: "
                    "each respondent gets one instruction per question"
                )
    return rows


def _existing_respondents(conn: Connection, key: int, ids: Sequence[str]) -> list[str]:
    found: list[str] = []
    for start in range(0, len(ids), _IN_BATCH):
        batch = ids[start:start + _IN_BATCH]
        found += conn.execute(
            select(respondents.c.respondent_id)
            .where(respondents.c.survey_id == key, respondents.c.respondent_id.in_(batch))
        ).scalars().all()
    return sorted(found)


def _sample(values: Sequence[str], shown: int = 10) -> str:
    text = ", ".join(repr(v) for v in values[:shown])
    return text + (f" and {len(values) - shown} more" if len(values) > shown else "")


def code_tallies(engine: Engine, survey_name: str) -> dict[str, dict[int, dict[str, int]]]:
    """Question id -> group number -> instruction code -> instructions issued so far.

    Every question appears, with an empty mapping when none were issued.
    """
    require_schema(engine)
    with engine.connect() as conn:
        return code_tallies_in(conn, survey_id(conn, survey_name))


def code_tallies_in(conn: Connection, key: int) -> dict[str, dict[int, dict[str, int]]]:
    """:func:`code_tallies` of the survey with database id ``key``, read on ``conn``."""
    stmt = (select(questions.c.name, tallies.c.group_number, tallies.c.code, tallies.c.count)
            .select_from(questions.outerjoin(tallies, tallies.c.question_id == questions.c.id))
            .where(questions.c.survey_id == key)
            .order_by(questions.c.position, tallies.c.group_number, tallies.c.code))
    result: dict[str, dict[int, dict[str, int]]] = {}
    for name, group, code, count in conn.execute(stmt):
        groups = result.setdefault(name, {})
        if code is not None:
            groups.setdefault(int(group), {})[code] = int(count)
    return result


def issued_groups(conn: Connection, key: int, ids: Sequence[str]) -> dict[str, int | None]:
    """Issued id -> its group number (None when issued without a group), for ``ids``."""
    found: dict[str, int | None] = {}
    ordered = sorted(set(ids))
    for start in range(0, len(ordered), _IN_BATCH):
        batch = ordered[start:start + _IN_BATCH]
        for respondent, group in conn.execute(
                select(respondents.c.respondent_id, respondents.c.group_number)
                .where(respondents.c.survey_id == key,
                       respondents.c.respondent_id.in_(batch))):
            found[respondent] = group
    return found


def issued_respondent_count(engine: Engine, survey_name: str) -> int:
    """How many respondent ids were issued for the survey."""
    require_schema(engine)
    with engine.connect() as conn:
        key = survey_id(conn, survey_name)
        return issued_count(conn, key)


def issued_count(conn: Connection, key: int) -> int:
    """Issued respondent ids of the survey with database id ``key``."""
    return conn.execute(select(func.count()).select_from(respondents)
                        .where(respondents.c.survey_id == key)).scalar_one()

