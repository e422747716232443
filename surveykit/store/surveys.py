"""Stored survey definitions: add, update (a new version of the import profile), load, list.

A stored survey never changes its questions or designs; its TOML source is
kept per version and is what a load parses: the one record of its designs
(the questions table holds positions, ids and wording, no copy of a design).
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime

from sqlalchemy import (
    BigInteger,
    Connection,
    Engine,
    cast,
    exists,
    func,
    select,
)

from surveykit.definition.survey import Survey, canonical_spelling, parse_survey
from surveykit.errors import StoreError, SurveyDefinitionError
from surveykit.store.engines import (
    write_transaction,
)
from surveykit.store.schema import require_schema
from surveykit.store.tables import (
    answer_counts,
    imports,
    questions,
    respondents,
    responses,
    survey_versions,
    surveys,
)

__all__ = ["add_survey", "as_utc", "current_survey_version", "definition_changes",
           "kept_respondents_statement", "list_surveys", "load_survey", "question_ids",
           "stored_definition", "survey_id", "SurveySummary", "SurveyUpdate", "update_survey"]


def _now() -> datetime:
    return datetime.now(UTC)


def as_utc(moment: datetime) -> datetime:
    """A stored time as an aware UTC datetime (SQLite gives back naive ones; we store UTC)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


@dataclass(frozen=True)
class SurveySummary:
    """One line of ``surveykit survey list``."""

    name: str
    title: str
    language: str
    questions: int
    issued: int
    respondents: int
    answers: int
    imports: int
    created_at: datetime

    def to_dict(self) -> dict:
        data = asdict(self)
        data["created_at"] = self.created_at.isoformat()
        return data


def add_survey(engine: Engine, survey: Survey) -> bool:
    """Store ``survey`` with its questions, their designs and its TOML source (version 1).

    Returns True if it was stored, False if the same definition was already
    there. A different definition under an existing name is refused: answers
    already collected were randomized with the stored designs. When only the
    ``[import]`` profile or aliases differ, the message says to use
    :func:`update_survey` instead.
    """
    require_schema(engine)
    with write_transaction(engine) as conn:
        key = conn.execute(select(surveys.c.id).where(surveys.c.name == survey.name)).scalar()
        if key is not None:
            version, source = _current_version(conn, key)
            if source == survey.source:
                return False
            stored = parse_survey(source, f"survey {survey.name!r} version {version}")
            if not definition_changes(stored, survey):
                raise StoreError(
                    f"survey {survey.name!r} is already in the database (version {version}) "
                    "and this file changes only its [import] profile, aliases, covariates, "
                    "models or joint analyses: run "
                    "'surveykit survey update FILE' to store it as a new version")
            raise StoreError(
                f"a different survey named {survey.name!r} is already in the database; "
                "a stored survey never changes (its answers were randomized with its "
                "mechanisms): give the new definition another name"
            )
        now = _now()
        survey_id = conn.execute(surveys.insert().values(
            name=survey.name, title=survey.title, language=survey.language,
            created_at=now,
        )).inserted_primary_key[0]
        conn.execute(survey_versions.insert().values(
            survey_id=survey_id, version=1, source=survey.source, created_at=now))
        conn.execute(questions.insert(), [
            {"survey_id": survey_id, "position": position, "name": question.id,
             "text": question.text}
            for position, question in enumerate(survey.questions)
        ])
    return True


@dataclass(frozen=True)
class SurveyUpdate:
    """What :func:`update_survey` did: the version now current and the one before it
    (equal when nothing changed), and what changed ("[import]", "aliases")."""

    survey: str
    version: int
    previous: int
    changed: tuple[str, ...]

    def to_dict(self) -> dict:
        return asdict(self)


def definition_changes(stored: Survey, new: Survey) -> list[str]:
    """Why ``new`` cannot update ``stored``: the key paths of changes other than the
    ``[import]`` profile, added aliases, added covariates and the models (empty when
    the update is allowed).

    Questions, texts, designs, groups and wording never change once stored:
    answers were randomized with them. Aliases may be added, never changed
    or removed, so that a label keeps its meaning across versions; so may
    covariates, whose stored values were read with their declaration.
    ``[[models]]`` and ``[[joint]]`` may change freely: they are analyses, not data.
    """
    old_data, new_data = tomllib.loads(stored.source), tomllib.loads(new.source)
    problems = [f"{path} differs from the stored definition"
                for path in _differences(_without_mapping(old_data), _without_mapping(new_data))]
    old_covariates = old_data.get("covariates", {})
    new_covariates = new_data.get("covariates", {})
    for name, declared in old_covariates.items():
        if name not in new_covariates:
            problems.append(f"covariates.{name} was removed (covariates can only be added: "
                            "stored values were read with it)")
        elif new_covariates[name] != declared:
            problems.append(f"covariates.{name} changes from {declared!r} to "
                            f"{new_covariates[name]!r} (stored values were read with it; "
                            "declare a new covariate instead)")
    old_aliases = _raw_aliases(old_data)
    new_aliases = _raw_aliases(new_data)
    for path, target in old_aliases.items():
        if path not in new_aliases:
            problems.append(f"{path} = {target!r} was removed (aliases can only be added)")
        elif new_aliases[path] != target:
            problems.append(f"{path} changes from {target!r} to {new_aliases[path]!r} "
                            "(an alias keeps its meaning; add a new one instead)")
    return problems


def _without_mapping(data: dict) -> dict:
    data = {k: v for k, v in data.items()
            if k not in ("import", "aliases", "covariates", "models", "joint")}
    if isinstance(data.get("questions"), list):
        data["questions"] = [{k: v for k, v in q.items() if k != "aliases"}
                             if isinstance(q, dict) else q for q in data["questions"]]
    return data


def _raw_aliases(data: dict) -> dict[str, str]:
    """Alias key path -> target, for the survey's and each question's [aliases]."""
    found = {f'aliases."{canonical_spelling(raw)}"': target
             for raw, target in data.get("aliases", {}).items()}
    for question in data.get("questions", []):
        for raw, target in question.get("aliases", {}).items():
            found[f'questions[id = "{question.get("id")}"].aliases."'
                  f'{canonical_spelling(raw)}"'] = target
    return found


def _differences(old: object, new: object, path: str = "") -> Iterator[str]:
    """Key paths where two parsed TOML documents differ (lists compared item by item)."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in old or key not in new:
                yield where
            else:
                yield from _differences(old[key], new[key], where)
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for index, (a, b) in enumerate(zip(old, new, strict=True)):
            yield from _differences(a, b, f"{path}[{index}]")
    elif old != new:
        yield path or "the file"


def update_survey(engine: Engine, survey: Survey) -> SurveyUpdate:
    """Store ``survey`` as the next version of the stored survey of the same name.

    Only the ``[import]`` profile and added aliases may differ (see
    :func:`definition_changes`); anything else is refused with its key path.
    Earlier imports keep the version they were read with; the same file
    again changes nothing.

    >>> # update_survey(engine, load_survey_file("academic_integrity.toml"))
    """
    require_schema(engine)
    with write_transaction(engine) as conn:
        key = survey_id(conn, survey.name)
        version, source = _current_version(conn, key)
        if source == survey.source:
            return SurveyUpdate(survey=survey.name, version=version, previous=version,
                                changed=())
        stored = parse_survey(source, f"survey {survey.name!r} version {version}")
        problems = definition_changes(stored, survey)
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise StoreError(
                f"survey {survey.name!r} cannot be updated: {problems[0]}{more}; an update "
                "may change only the [import] profile, [[models]] and [[joint]], and add "
                "aliases and covariates (the answers were randomized with the stored questions and "
                "designs): for other changes, add the survey under a new name")
        changed = []
        if stored.profile != survey.profile:
            changed.append("[import]")
        if _raw_aliases(tomllib.loads(source)) != _raw_aliases(tomllib.loads(survey.source)):
            changed.append("aliases")
        if stored.covariates != survey.covariates:
            changed.append("[covariates]")
        if stored.models != survey.models:
            changed.append("[[models]]")
        if stored.joint != survey.joint:
            changed.append("[[joint]]")
        conn.execute(survey_versions.insert().values(
            survey_id=key, version=version + 1, source=survey.source, created_at=_now()))
    return SurveyUpdate(survey=survey.name, version=version + 1, previous=version,
                        changed=tuple(changed) or ("formatting",))


def _current_version(conn: Connection, key: int) -> tuple[int, str]:
    """(number, TOML source) of the newest version of survey ``key``."""
    row = conn.execute(select(survey_versions.c.version, survey_versions.c.source)
                       .where(survey_versions.c.survey_id == key)
                       .order_by(survey_versions.c.version.desc()).limit(1)).one()
    return row.version, row.source


def current_survey_version(conn: Connection, key: int, survey: Survey) -> tuple[int, Survey]:
    """The current version number of survey ``key`` and its definition (``survey`` itself
    when that is the current one, as it almost always is)."""
    version, source = _current_version(conn, key)
    if source == survey.source:
        return version, survey
    return version, parse_survey(source, f"survey {survey.name!r} version {version}")


def survey_id(conn: Connection, name: str) -> int:
    """The database id of survey ``name``, or a StoreError listing the known surveys."""
    found = conn.execute(select(surveys.c.id).where(surveys.c.name == name)).scalar()
    if found is None:
        known = conn.execute(select(surveys.c.name).order_by(surveys.c.name)).scalars().all()
        hint = (f"known surveys: {', '.join(known)}" if known
                else "add one with 'surveykit survey add FILE'")
        raise StoreError(f"no survey named {name!r} in the database; {hint}")
    return found


def question_ids(conn: Connection, survey_key: int) -> dict[str, int]:
    """Question id (as in the TOML) -> database id, for one survey."""
    rows = conn.execute(select(questions.c.name, questions.c.id)
                        .where(questions.c.survey_id == survey_key))
    return {name: key for name, key in rows}


def load_survey(engine: Engine, name: str) -> Survey:
    """Rebuild the full Survey (aliases, wording and all) from its stored TOML source."""
    require_schema(engine)
    with engine.connect() as conn:
        key = survey_id(conn, name)
        return stored_definition(conn, key, name)


def stored_definition(conn: Connection, key: int, name: str, known: Survey | None = None
                      ) -> Survey:
    """The current definition of survey ``key`` (named ``name``), parsed (``known`` itself
    when it was parsed from the same source); a one-line StoreError when it is missing or
    no longer parses (only a change made outside surveykit does that: every stored source
    passed ``survey add``)."""
    where = f"survey {name!r} stored in {conn.engine.url.render_as_string(hide_password=True)}"
    row = conn.execute(select(survey_versions.c.version, survey_versions.c.source)
                       .where(survey_versions.c.survey_id == key)
                       .order_by(survey_versions.c.version.desc()).limit(1)).first()
    if row is None or not isinstance(row.source, str):
        raise StoreError(f"{where} has no stored definition (its rows of survey_versions "
                         "were deleted or emptied outside surveykit): restore the database "
                         "from a backup")
    if known is not None and known.source == row.source:
        return known
    try:
        return parse_survey(row.source, where)
    except SurveyDefinitionError as exc:
        first = str(exc).split("\n", 1)[0]
        raise StoreError(f"{first}; the stored definition was changed outside surveykit: "
                         "restore the database from a backup") from None


def list_surveys(engine: Engine) -> list[SurveySummary]:
    """Every stored survey with its numbers of questions, issued ids, respondents and answers.

    ``answers`` counts every stored answer, of choice and numeric questions alike: the
    choice answers from the kept counts (a few rows per survey, whatever the number of
    answers), the numeric ones from ``responses`` (:func:`unkept_answers`).
    """
    require_schema(engine)
    q_count = (select(func.count()).select_from(questions)
               .where(questions.c.survey_id == surveys.c.id).scalar_subquery())
    issued = (select(func.count()).select_from(respondents)
              .where(respondents.c.survey_id == surveys.c.id).scalar_subquery())
    # kept counts: a few rows per survey, whatever the number of answers
    known = surveys.c.known_respondents
    kept = (select(func.coalesce(func.sum(answer_counts.c.count), 0))
            .where(answer_counts.c.survey_id == surveys.c.id).scalar_subquery())
    # cast: PostgreSQL's sum of a bigint is a numeric (a Decimal in Python)
    answers = cast(kept + unkept_answers(), BigInteger)
    n_imports = (select(func.count()).select_from(imports)
                 .where(imports.c.survey_id == surveys.c.id).scalar_subquery())
    stmt = select(surveys.c.name, surveys.c.title, surveys.c.language, q_count, issued, known,
                  answers, n_imports, surveys.c.created_at).order_by(surveys.c.name)
    with engine.connect() as conn:
        return [SurveySummary(*row[:-1], created_at=as_utc(row[-1]))
                for row in conn.execute(stmt)]


def unkept_answers():
    """The stored answers of the survey of the enclosing query (``surveys.id``) that the kept
    counts do not hold: those of its questions without a row in ``answer_counts``, a scalar
    subquery.

    The kept counts hold every answer to a choice question and none to a numeric one
    (numbers are not counted per value; :mod:`surveykit.store.numeric_answers`), so the
    questions without kept rows are the numeric ones and the choice questions nobody has
    answered (which add 0). Counting by that rule needs no parsing of the stored
    definitions; it reads the questions table and, along the primary key of ``responses``
    (survey, question, ...), only the answers of those questions.
    """
    # per question, a count along the primary key (survey_id, question_id, ...): a plan
    # the database cannot turn into a scan of the survey's choice answers
    answered = (select(func.count()).select_from(responses)
                .where(responses.c.survey_id == questions.c.survey_id,
                       responses.c.question_id == questions.c.id)
                .correlate(questions).scalar_subquery())
    return (select(func.coalesce(func.sum(answered), 0))
            .where(questions.c.survey_id == surveys.c.id,
                   ~exists().where(answer_counts.c.survey_id == questions.c.survey_id,
                                   answer_counts.c.question_id == questions.c.id))
            .correlate(surveys).scalar_subquery())


def kept_respondents_statement(key: int):
    """The kept number of respondents with at least one answer in survey ``key``."""
    return select(surveys.c.known_respondents).where(surveys.c.id == key)
