"""Engines and transactions: a URL opened as an engine (SQLite tuned, PostgreSQL pooled), one
snapshot per read, one immediate transaction per write, and bulk statements.

Any SQLAlchemy URL works where SQLite and PostgreSQL do; the default is the
SQLite file ``surveykit.db`` in the working directory.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import (
    Connection,
    Engine,
    create_engine,
    event,
)
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import make_url

from surveykit.errors import ParameterError, StoreError
from surveykit.store import problems

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["BulkStatement", "DEFAULT_URL", "dialect_insert", "display_url", "engine_for",
           "open_engine", "read_snapshot", "resolve_url", "rows_frame",
           "SQLITE_BUSY_TIMEOUT_SECONDS", "write_transaction"]

DEFAULT_URL = "sqlite:///surveykit.db"
# A second writer waits this long for the first (e.g. a long import) before giving up.
SQLITE_BUSY_TIMEOUT_SECONDS = 600


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


def rows_frame(rows: Sequence, columns: Sequence[str]) -> pd.DataFrame:
    """A DataFrame of result ``rows`` (SQLAlchemy rows or tuples) under ``columns``, with the
    dtypes ``pd.DataFrame(rows, columns=columns)`` infers.

    The rows are made plain tuples first: SQLAlchemy 2's ``Row`` is not a tuple, and pandas
    probes each row of a list it does not recognise for a ``dtype`` attribute, which a
    ``Row`` answers through its slow missing-key path (about 8x the whole conversion).

    >>> rows_frame([("a", 1), ("b", 2)], ["id", "n"]).to_dict("list")
    {'id': ['a', 'b'], 'n': [1, 2]}
    """
    import pandas as pd

    return pd.DataFrame([tuple(row) for row in rows], columns=list(columns))


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

