"""The survey database: engine setup and the few reads and writes the commands need.

Any SQLAlchemy URL works where SQLite and PostgreSQL do; the default is the
SQLite file ``surveykit.db`` in the working directory. The schema comes only
from Alembic migrations (:func:`init_database`). Counting for estimates happens
here, in SQL: one GROUP BY along the responses' primary key, never by loading
rows into Python, so SQLite and PostgreSQL run the same code.

Privacy by construction: :func:`record_generation` stores issued respondent
ids and, separately, per-question *totals* of issued codes, and those only
for runs with at least AUDIT_MINIMUM_PER_GROUP ids in every group (so that
comparing two copies of the database never reads a small run's codes).
Nothing links a respondent to a code.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from os import PathLike
from pathlib import Path

from sqlalchemy import (
    Connection,
    Engine,
    create_engine,
    distinct,
    event,
    func,
    inspect,
    select,
)
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import make_url

from surveykit.counts import Counts, QuestionCounts
from surveykit.definition.limits import AUDIT_MINIMUM_PER_GROUP
from surveykit.definition.survey import Survey, canonical_spelling, parse_survey
from surveykit.errors import ParameterError, StoreError, SurveyDefinitionError
from surveykit.store import migrate, problems
from surveykit.store.models import (
    CODE_LENGTH,
    RESPONDENT_ID_LENGTH,
    AnswerCountRecord,
    Base,
    CodeTallyRecord,
    CovariateRecord,
    ImportRecord,
    KnownRespondentRecord,
    QuestionRecord,
    RespondentRecord,
    ResponseRecord,
    SurveyRecord,
    SurveyVersionRecord,
)

__all__ = [
    "DEFAULT_URL",
    "QuestionCounts",
    "SurveySummary",
    "SurveyUpdate",
    "BulkStatement",
    "add_survey",
    "code_tallies",
    "count_responses",
    "display_url",
    "init_database",
    "issued_respondent_count",
    "list_surveys",
    "load_survey",
    "engine_for",
    "open_engine",
    "record_generation",
    "resolve_url",
    "update_survey",
]

DEFAULT_URL = "sqlite:///surveykit.db"
# A second writer waits this long for the first (e.g. a long import) before giving up.
SQLITE_BUSY_TIMEOUT_SECONDS = 600
# Keeps IN (...) lists below every database's limit on bound parameters.
_IN_BATCH = 500

surveys = SurveyRecord.__table__
survey_versions = SurveyVersionRecord.__table__
questions = QuestionRecord.__table__
respondents = RespondentRecord.__table__
tallies = CodeTallyRecord.__table__
imports = ImportRecord.__table__
responses = ResponseRecord.__table__
covariates = CovariateRecord.__table__
answer_counts = AnswerCountRecord.__table__
known_respondents = KnownRespondentRecord.__table__


def resolve_url(url: str | None = None) -> str:
    """The database URL to use: ``url``, else $SURVEYKIT_DB, else ``sqlite:///surveykit.db``.

    A plain path means an SQLite file, and ``postgresql://`` means the psycopg driver:

    >>> resolve_url("survey.db")
    'sqlite:///survey.db'
    >>> resolve_url("postgresql://u@localhost/db")
    'postgresql+psycopg://u@localhost/db'
    """
    url = url or os.environ.get("SURVEYKIT_DB") or DEFAULT_URL
    if "://" not in url:
        return f"sqlite:///{url}"
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    return url


def display_url(engine: Engine) -> str:
    """The engine's URL with any password hidden, for messages."""
    return engine.url.render_as_string(hide_password=True)


def open_engine(url: str | None = None) -> Engine:
    """An engine for ``url`` (see :func:`resolve_url`); SQLite gets foreign keys, WAL, busy timeout.

    Transactions on SQLite begin with a plain ``BEGIN``; :func:`write_transaction`
    begins with ``BEGIN IMMEDIATE`` so two writers queue instead of failing.

    >>> engine = open_engine("sqlite://")
    >>> engine.dialect.name
    'sqlite'
    """
    url = resolve_url(url)
    try:
        parsed = make_url(url)
    except (sa_exc.ArgumentError, ValueError):
        raise ParameterError(
            f"database URL {url!r} is not a SQLAlchemy URL; use e.g. sqlite:///surveykit.db "
            "or postgresql://user:password@host/dbname"
        ) from None
    busy_timeout: float | None = None
    try:
        if parsed.get_backend_name() == "sqlite":
            busy_timeout = _busy_timeout(parsed)
            # ?mode=ro (SQLite's URI parameter) opens the file read-only, as a file the user
            # may not write: pysqlite would ignore it (and SQLAlchemy warn) without uri=true
            read_only = parsed.query.get("mode") == "ro"
            ignored = ["timeout", "mode"] if read_only else ["timeout"]
            engine = create_engine(parsed.difference_update_query(ignored),
                                   connect_args={"timeout": busy_timeout})
            _configure_sqlite(engine, busy_timeout, read_only=read_only)
        else:
            engine = create_engine(parsed, pool_pre_ping=True)
    except (sa_exc.NoSuchModuleError, ModuleNotFoundError) as exc:
        raise StoreError(
            f"no database driver for {parsed.drivername!r} ({exc}); for PostgreSQL install "
            "surveykit[postgres]"
        ) from None
    problems.install(engine, busy_timeout=busy_timeout)
    return engine



@contextmanager
def engine_for(database: Engine | str | PathLike) -> Iterator[Engine]:
    """``database`` itself when it is an engine; else an engine opened on it (an SQLite path or
    any SQLAlchemy URL) whose connections close when the block ends.

    A library function that takes a URL and opens its own engine must close it: an engine left
    to the garbage collector leaves PostgreSQL connections open until then.

    >>> with engine_for("sqlite://") as engine:
    ...     engine.dialect.name
    'sqlite'
    """
    if isinstance(database, Engine):
        yield database
        return
    engine = open_engine(str(database))
    try:
        yield engine
    finally:
        engine.dispose()

def _busy_timeout(url) -> float:
    """Seconds a writer waits for another: ``?timeout=S`` in an SQLite URL, else 600."""
    text = url.query.get("timeout")
    if text is None:
        return SQLITE_BUSY_TIMEOUT_SECONDS
    try:
        seconds = float(text if isinstance(text, str) else text[-1])
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= 86400:
        raise ParameterError(f"timeout ({text!r}) in the database URL must be a number of "
                             "seconds from 0 to 86400, e.g. sqlite:///surveykit.db?timeout=30")
    return seconds


def _configure_sqlite(engine: Engine, busy_timeout: float, *, read_only: bool = False) -> None:
    @event.listens_for(engine, "do_connect")
    def _read_only_when_it_cannot_write(dialect, record, cargs, cparams):
        # A database the user may only read (a read-only file, or a folder where SQLite
        # cannot create its -wal and -shm files) is opened read-only, so that counts and
        # reports work; a write then fails with "readonly", which problems.py explains.
        path = problems.sqlite_file(engine)
        if path is None or not path.is_file():
            return None
        folder = path.parent if str(path.parent) else Path(".")
        folder_writable = os.access(folder, os.W_OK | os.X_OK)
        if os.access(path, os.W_OK) and folder_writable and not read_only:
            return None
        record.info["read_only"] = True
        wal = path.with_name(path.name + "-wal")
        # without write access to the folder and no -wal file, SQLite can only read the
        # file as immutable (no shared-memory index to create)
        immutable = "&immutable=1" if not folder_writable and not wal.exists() else ""
        uri = f"{path.resolve().as_uri()}?mode=ro{immutable}"
        return dialect.dbapi.connect(uri, uri=True, **{k: v for k, v in cparams.items()
                                                        if k != "uri"})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, record) -> None:
        # Let SQLAlchemy's "begin" event below emit BEGIN itself, so write
        # transactions can take the write lock up front.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys = ON")
        if not record.info.get("read_only"):
            cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        # A deferred transaction that reads and then writes can fail at once
        # with "database is locked" when another writer committed meanwhile;
        # BEGIN IMMEDIATE waits (busy timeout) for the lock instead.
        if connection.get_execution_options().get("surveykit_write"):
            connection.exec_driver_sql("BEGIN IMMEDIATE")
        else:
            connection.exec_driver_sql("BEGIN")


@contextmanager
def read_snapshot(engine: Engine) -> Iterator[Connection]:
    """A read-only transaction whose statements all see one snapshot of the database.

    SQLite in WAL mode gives a read transaction one snapshot; PostgreSQL
    needs REPEATABLE READ (its default, READ COMMITTED, takes a new snapshot
    per statement, so a write committed between two reads would show in one).
    """
    with engine.connect() as connection:
        if engine.dialect.name == "postgresql":
            connection.execution_options(isolation_level="REPEATABLE READ")
        with connection.begin():
            yield connection


@contextmanager
def write_transaction(engine: Engine) -> Iterator[Connection]:
    """One transaction that will write: committed at the end, rolled back on any error."""
    with engine.connect() as connection:
        connection.execution_options(surveykit_write=True)
        with connection.begin():
            yield connection


def require_schema(engine: Engine) -> None:
    """Raise a StoreError with the fix unless the database is at the newest migration."""
    path = problems.sqlite_file(engine)
    if path is not None and not path.exists():
        raise StoreError(
            f"no surveykit database at {path.resolve()}: run 'surveykit init' there first, "
            "or choose another database with --db URL or SURVEYKIT_DB"
        )
    if path is not None and path.is_dir():
        raise StoreError(f"--db {path} is a folder, not a database file; give the database "
                         "file, e.g. --db surveykit.db")
    current = migrate.current_revision(engine)
    head = migrate.head_revision()
    if current is None:
        foreign = sorted(set(inspect(engine).get_table_names()) - {"alembic_version"})
        if path is not None and foreign:
            raise StoreError(
                f"{path} is not a surveykit database (it holds other tables: "
                f"{', '.join(foreign[:5])}): give the surveykit database with --db, or a new "
                "file name and run 'surveykit init --db FILE' to create one")
        raise StoreError(
            f"{display_url(engine)} has no surveykit tables: run 'surveykit init' first"
        )
    if current not in migrate.known_revisions():
        raise StoreError(
            f"{display_url(engine)} is at schema revision {current!r}, which this surveykit "
            f"does not know: it belongs to another application or a newer surveykit "
            f"(this one knows up to {head}); use the surveykit that made it, or another --db")
    if current != head:
        raise StoreError(
            f"{display_url(engine)} is at schema revision {current}, this surveykit needs "
            f"{head}: run 'surveykit init' to upgrade it"
        )


def init_database(engine: Engine) -> str:
    """Create or upgrade the schema by running the Alembic migrations; returns the revision.

    Running it again on an up-to-date database changes nothing. A database that
    holds another application's tables is refused, never mixed with ours.
    """
    path = problems.sqlite_file(engine)
    if path is not None:
        folder = path.parent if str(path.parent) else Path(".")
        if path.is_dir():
            raise StoreError(f"--db {path} is a folder, not a database file; give a file "
                             f"name, e.g. --db {path / 'surveykit.db'}")
        if not folder.is_dir():
            raise StoreError(f"cannot create the database {path}: the folder {folder} does not "
                             f"exist; create it first (mkdir -p {folder}) or give another --db")
    _refuse_foreign_database(engine)
    migrate.upgrade(engine)
    return migrate.head_revision()


def _refuse_foreign_database(engine: Engine) -> None:
    """Refuse to add surveykit's tables to another application's database.

    On SQLite (a file is one application's) any table of a database without
    surveykit's schema revision is foreign; on other databases, where several
    applications share a schema, tables named like ours are. A revision that
    is not ours means another Alembic-managed application.
    """
    current = migrate.current_revision(engine)
    if current is not None:
        if current not in migrate.known_revisions():
            raise StoreError(
                f"{display_url(engine)} belongs to another application or a newer surveykit "
                f"(schema revision {current!r}); surveykit keeps its data in a database of "
                "its own: give a new file or database with --db")
        return
    # an empty alembic_version is what downgrading surveykit to "base" leaves
    existing = set(inspect(engine).get_table_names()) - {"alembic_version"}
    foreign = sorted(existing if problems.sqlite_file(engine) is not None
                     else existing & set(Base.metadata.tables))
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5
                                          else "")
        raise StoreError(
            f"{display_url(engine)} already holds tables that are not surveykit's ({shown}); "
            "surveykit keeps its data in a database of its own and changed nothing: give a "
            "new file name with --db (e.g. --db surveykit.db)")


def _now() -> datetime:
    return datetime.now(UTC)


def as_utc(moment: datetime) -> datetime:
    """A stored time as an aware UTC datetime (SQLite gives back naive ones; we store UTC)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


# -- surveys ----------------------------------------------------------------------


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
                    "and this file changes only its [import] profile, aliases, covariates "
                    "or models: run "
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
             "text": question.text, "design": json.dumps(question.design.spec())}
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
    ``[[models]]`` may change freely: they are analyses, not data.
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
            if k not in ("import", "aliases", "covariates", "models")}
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
                "may change only the [import] profile and [[models]], and add aliases and "
                "covariates (the answers were randomized with the stored questions and "
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
    """Every stored survey with its numbers of questions, issued ids, respondents and answers."""
    require_schema(engine)
    q_count = (select(func.count()).select_from(questions)
               .where(questions.c.survey_id == surveys.c.id).scalar_subquery())
    issued = (select(func.count()).select_from(respondents)
              .where(respondents.c.survey_id == surveys.c.id).scalar_subquery())
    # kept counts: a few rows per survey, whatever the number of answers
    known = surveys.c.known_respondents
    answers = (select(func.coalesce(func.sum(answer_counts.c.count), 0))
               .where(answer_counts.c.survey_id == surveys.c.id).scalar_subquery())
    n_imports = (select(func.count()).select_from(imports)
                 .where(imports.c.survey_id == surveys.c.id).scalar_subquery())
    stmt = select(surveys.c.name, surveys.c.title, surveys.c.language, q_count, issued, known,
                  answers, n_imports, surveys.c.created_at).order_by(surveys.c.name)
    with engine.connect() as conn:
        return [SurveySummary(*row[:-1], created_at=as_utc(row[-1]))
                for row in conn.execute(stmt)]


# -- counts -------------------------------------------------------------------------


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
    # answer_counts imports this module: imported here, when both are loaded
    from surveykit.store.answer_counts import read_kept

    require_schema(engine)
    with read_snapshot(engine) as conn:
        key = survey_id(conn, survey_name)
        kept = read_kept(conn, key, stored_definition(conn, key, survey_name, survey))
    return [QuestionCounts(question_id=name, counts=Counts.from_mapping(table),
                           missing=kept.respondents - sum(sum(g.values())
                                                          for g in table.values()))
            for name, table in kept.tables.items()]


def counts_statement(key: int):
    """The counts recomputed from the answers: one GROUP BY along the primary key of
    ``responses`` (``surveykit check`` and migration 0005; exposed for EXPLAIN in tests)."""
    return (
        select(responses.c.question_id, responses.c.group_number, responses.c.answer,
               func.count())
        .where(responses.c.survey_id == key)
        .group_by(responses.c.question_id, responses.c.group_number, responses.c.answer)
    )


def known_respondents_statement(key: int):
    """Respondents who answered at least one question of the survey."""
    return (select(func.count(distinct(responses.c.respondent_id)))
            .where(responses.c.survey_id == key))


# -- issued questionnaires ------------------------------------------------------------


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
                      groups: Sequence[int] | None = None) -> None:
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
    ``{}`` for such a run. Nothing ties an id to a code.

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
        key = survey_id(conn, survey_name)
        stmt = (select(questions.c.name, tallies.c.group_number, tallies.c.code,
                       tallies.c.count)
                .select_from(questions.outerjoin(tallies,
                                                 tallies.c.question_id == questions.c.id))
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


class BulkStatement:
    """A Core statement compiled once and run for many rows given as plain tuples.

    Connection.execute(statement, [dict, ...]) spends more time building
    parameters than SQLite spends inserting; this hands the driver the
    compiled SQL and the tuples directly (Connection.exec_driver_sql).
    """

    def __init__(self, conn: Connection, statement, columns: Sequence[str]) -> None:
        compiled = statement.compile(dialect=conn.dialect)
        self.sql = str(compiled)
        self.columns = tuple(columns)
        self._convert: Callable[[tuple], tuple | dict] | None
        if compiled.positional:
            order = tuple(compiled.positiontup)
            picks = [self.columns.index(name) for name in order]
            self._convert = (None if order == self.columns
                             else lambda row: tuple(row[i] for i in picks))
        else:
            names = self.columns
            self._convert = lambda row: dict(zip(names, row, strict=True))

    def execute(self, conn: Connection, rows: list[tuple]) -> int:
        """Run for every row; returns the number of rows the database changed."""
        if self._convert is not None:
            rows = [self._convert(row) for row in rows]
        return conn.exec_driver_sql(self.sql, rows).rowcount


def dialect_insert(conn: Connection, table):
    """INSERT with ON CONFLICT support for the connection's database."""
    name = conn.dialect.name
    if name == "sqlite":
        from sqlalchemy.dialects.sqlite import insert
    elif name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        raise StoreError(f"surveykit supports SQLite and PostgreSQL, not {name}")
    return insert(table)
