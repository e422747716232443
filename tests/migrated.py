"""Databases migrated to head, made once per test process and copied for each test.

Running the migrations costs about 0.4 s of CPU per database (SQLite's batch migrations
copy tables, and Alembic reflects each one). Hundreds of tests need only a database at head,
not the act of migrating it, so each process migrates one template with the real
``init_database`` and each test gets a copy: a file copy on SQLite; on PostgreSQL a database
created from a template database (``CREATE DATABASE ... TEMPLATE``) whose migrated schema is
renamed to the test's own. Tests of ``init`` and of the migrations themselves still migrate
empty databases (tests/test_migrations.py, the CLI's ``init`` tests).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import URL, make_url

from surveykit import store

POSTGRES_URL = os.environ.get("SURVEYKIT_TEST_POSTGRES_URL")

#: The schema the PostgreSQL template's tables live in; each copy renames it.
TEMPLATE_SCHEMA = "surveykit_template"


@functools.cache
def _sqlite_template() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="surveykit-migrated-"))
    atexit.register(shutil.rmtree, folder, True)
    path = folder / "migrated.db"
    engine = store.open_engine(f"sqlite:///{path}")
    try:
        store.init_database(engine)
    finally:
        engine.dispose()
    # the last connection closed checkpointed the write-ahead log into the file
    assert not path.with_name(path.name + "-wal").exists()
    return path


def migrated_sqlite(path: Path) -> str:
    """Put a database migrated to head at ``path`` (which must not exist); returns its URL."""
    if path.exists():
        raise FileExistsError(path)
    shutil.copyfile(_sqlite_template(), path)
    return f"sqlite:///{path}"


def _admin():
    return create_engine(store.resolve_url(POSTGRES_URL), isolation_level="AUTOCOMMIT")


@functools.cache
def _postgres_template() -> str:
    """The name of a PostgreSQL database whose schema TEMPLATE_SCHEMA is migrated to head."""
    name = f"surveykit_template_{uuid.uuid4().hex[:12]}"
    _on_server(f'CREATE DATABASE "{name}"')
    atexit.register(drop_postgres_database, name)
    _execute(name, f'CREATE SCHEMA "{TEMPLATE_SCHEMA}"')
    engine = store.open_engine(_postgres_url(name, TEMPLATE_SCHEMA))
    try:
        store.init_database(engine)
    finally:
        engine.dispose()
    return name


def _on_server(statement: str) -> None:
    """Run one statement outside a transaction (CREATE or DROP DATABASE) on the test server."""
    admin = _admin()
    try:
        with admin.connect() as connection:
            connection.execute(text(statement))
    finally:
        admin.dispose()


def _create_database(database: str, template: str) -> None:
    _on_server(f'CREATE DATABASE "{database}" TEMPLATE "{template}"')


def sqlite_with_survey(path: Path, source: str, file_name: str) -> Path:
    """An SQLite database at ``path``, migrated to head, holding the survey file text
    ``source`` (stored by the library: no readiness check); returns ``path``."""
    from surveykit.definition.survey import parse_survey

    engine = store.open_engine(migrated_sqlite(path))
    try:
        store.add_survey(engine, parse_survey(source, file_name))
    finally:
        engine.dispose()
    return path


def _execute(database: str, *statements: str) -> None:
    """Run ``statements`` in one transaction in ``database`` of the test server."""
    engine = create_engine(make_url(store.resolve_url(POSTGRES_URL)).set(database=database))
    try:
        with engine.begin() as connection:
            for statement in statements:
                connection.execute(text(statement))
    finally:
        engine.dispose()


def _postgres_url(database: str, schema: str) -> str:
    url: URL = make_url(store.resolve_url(POSTGRES_URL)).set(database=database)
    return url.update_query_dict({"options": f"-csearch_path={schema}"}).render_as_string(
        hide_password=False)


def new_postgres_database() -> tuple[str, str]:
    """A new PostgreSQL database, with an empty schema of its own; returns (database name,
    URL whose search_path is that schema). The database also holds the template's migrated
    schema, off the search path, for :func:`migrate_postgres` to move in."""
    database = f"test_{uuid.uuid4().hex[:12]}"
    schema = f"s_{uuid.uuid4().hex[:12]}"
    _create_database(database, _postgres_template())
    _execute(database, f'CREATE SCHEMA "{schema}"')
    return database, _postgres_url(database, schema)


def migrate_postgres(url: str) -> None:
    """Migrate the still empty schema of a database from :func:`new_postgres_database` to
    head: it is replaced by the template's migrated schema, renamed to it."""
    parsed = make_url(url)
    schema = parsed.query["options"].removeprefix("-csearch_path=")
    _execute(parsed.database, f'DROP SCHEMA "{schema}"',  # not CASCADE: it must be empty
             f'ALTER SCHEMA "{TEMPLATE_SCHEMA}" RENAME TO "{schema}"')


def drop_postgres_database(name: str) -> None:
    _on_server(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# -- databases filled once per test process ---------------------------------------------------

#: The filled templates of this process, by (dialect, fill): an SQLite file or a PostgreSQL
#: database name with the name of its schema.
_filled: dict[tuple[str, Callable[[str], None]], tuple[str, str]] = {}


def copy_filled(url: str, fill: Callable[[str], None]) -> str:
    """Make the empty database at ``url`` (from the ``database_url`` fixture) a copy of one
    that was migrated to head and then filled by ``fill(url)``, once per test process for
    each ``fill`` (a module-level function: set-up shared by many tests, such as ``survey
    add`` and an import, that none of them is about). Returns ``url``.

    On SQLite the template file is copied to ``url``'s path (which must not exist). On
    PostgreSQL ``url``'s database is dropped and created again from the template database,
    whose schema is renamed to the one on ``url``'s search path. ``fill`` must close every
    connection it opened (``store_support.run_cli`` does): a database with sessions cannot
    be a template, and SQLite's write-ahead log must be checkpointed into the file.
    """
    dialect = "sqlite" if url.startswith("sqlite") else "postgresql"
    key = (dialect, fill)
    if key not in _filled:
        _filled[key] = _fill_template(dialect, fill)
    source, source_schema = _filled[key]
    if dialect == "sqlite":
        path = Path(make_url(url).database)
        if path.exists():
            raise FileExistsError(path)
        shutil.copyfile(source, path)
        return url
    parsed = make_url(url)
    schema = parsed.query["options"].removeprefix("-csearch_path=")
    drop_postgres_database(parsed.database)
    _create_database(parsed.database, source)
    _execute(parsed.database, f'ALTER SCHEMA "{source_schema}" RENAME TO "{schema}"')
    return url


def _fill_template(dialect: str, fill: Callable[[str], None]) -> tuple[str, str]:
    if dialect == "sqlite":
        folder = Path(tempfile.mkdtemp(prefix="surveykit-filled-"))
        atexit.register(shutil.rmtree, folder, True)
        path = folder / "filled.db"
        fill(migrated_sqlite(path))
        assert not path.with_name(path.name + "-wal").exists(), "fill left a connection open"
        return str(path), ""
    database, url = new_postgres_database()
    atexit.register(drop_postgres_database, database)
    migrate_postgres(url)
    fill(url)
    return database, make_url(url).query["options"].removeprefix("-csearch_path=")


@contextlib.contextmanager
def filled_database(kind: str, fill: Callable[[str], None], folder: Path) -> Iterator[str]:
    """The URL of a copy of the database migrated to head and filled by ``fill(url)`` once per
    test process, as :func:`copy_filled` makes it (``kind`` "sqlite": a file in ``folder``;
    "postgresql": a new database, dropped when the context ends), for a fixture
    parametrized with :data:`DATABASES` in place of ``database_url``.

    On PostgreSQL the copy is one ``CREATE DATABASE ... TEMPLATE`` of the filled database,
    keeping its schema's name: ``copy_filled`` on a ``database_url`` database creates a
    database (from the migrated template) only to drop it and create it again (from the
    filled one), twice the server's work for every test.
    """
    if kind == "sqlite":
        yield copy_filled(f"sqlite:///{folder / 'surveykit.db'}", fill)
        return
    key = ("postgresql", fill)
    if key not in _filled:
        _filled[key] = _fill_template("postgresql", fill)
    source, schema = _filled[key]
    database = f"test_{uuid.uuid4().hex[:12]}"
    _create_database(database, source)
    try:
        yield _postgres_url(database, schema)
    finally:
        drop_postgres_database(database)


#: The two databases, as the ``database_url`` fixture of tests/conftest.py parametrizes them,
#: for fixtures of a wider scope.
DATABASES = [
    "sqlite",
    pytest.param("postgresql", marks=[
        pytest.mark.postgres,
        pytest.mark.skipif(POSTGRES_URL is None, reason="SURVEYKIT_TEST_POSTGRES_URL is not set"),
    ]),
]


@contextlib.contextmanager
def migrated_database(kind: str, folder: Path) -> Iterator[str]:
    """The URL of a database migrated to head (``kind`` "sqlite": a file in ``folder``;
    "postgresql": a new database, dropped when the context ends), for a module-scoped
    fixture that loads data once for tests that only read it."""
    if kind == "sqlite":
        yield migrated_sqlite(folder / "surveykit.db")
        return
    database, url = new_postgres_database()
    try:
        migrate_postgres(url)
        yield url
    finally:
        drop_postgres_database(database)
