"""Database failures a user can cause, as one-line StoreErrors that say what to do.

The driver's own messages ("attempt to write a readonly database", "file is
not a database", "database is locked") name neither the file nor a fix.
:func:`install` hooks SQLAlchemy's ``handle_error`` event on an engine so that
every such error, wherever it happens (connecting, a migration, an import),
becomes a :class:`StoreError` naming the database, the cause and the fix.
Errors that are not about the environment (constraint violations the importer
handles, programming errors) pass through unchanged.
"""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy import Engine, event

from surveykit.errors import StoreError

__all__ = ["explain", "install", "sqlite_file"]

# Every message says that the command changed nothing: SQLite and PostgreSQL roll the
# transaction back, and the commands write their files only after the database.
_UNCHANGED = "nothing was changed"


def sqlite_file(engine: Engine) -> Path | None:
    """The SQLite file behind ``engine``, or None (another database, or in memory)."""
    if engine.dialect.name != "sqlite":
        return None
    database = engine.url.database
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    return Path(database)


def explain(engine: Engine, error: BaseException, *, waited: float | None = None
            ) -> StoreError | None:
    """The StoreError for a driver ``error`` on ``engine``, or None when it is not one a
    user causes (then the original error stands).

    >>> import sqlite3
    >>> from sqlalchemy import create_engine
    >>> engine = create_engine("sqlite:////data/x.db")
    >>> print(explain(engine, sqlite3.DatabaseError("file is not a database")))
    ... # doctest: +ELLIPSIS
    /data/x.db is not an SQLite database (file is not a database): give the surveykit ...
    """
    message = str(error).strip()
    lowered = message.casefold()
    path = sqlite_file(engine)
    if path is not None:
        return _explain_sqlite(path, lowered, message, waited)
    if engine.dialect.name == "postgresql" and _is_connection_error(error):
        shown = engine.url.render_as_string(hide_password=True)
        first = message.splitlines()[0] if message else type(error).__name__
        return StoreError(
            f"cannot connect to {shown} ({first}): check that the server runs and accepts "
            "connections, and the user, password and database name in --db or $SURVEYKIT_DB")
    return None


def _explain_sqlite(path: Path, lowered: str, message: str, waited: float | None
                    ) -> StoreError | None:
    shown = str(path)
    folder = path.parent if str(path.parent) else Path(".")
    if "malformed" in lowered:
        return StoreError(
            f"the database {shown} is damaged ({message}); {_UNCHANGED}: restore it from a "
            "backup, or try 'sqlite3 FILE .recover' on a copy")
    if "file is not a database" in lowered:
        return StoreError(
            f"{shown} is not an SQLite database ({message}): give the surveykit database "
            "with --db, or a new file name and run 'surveykit init' to create one")
    if "readonly" in lowered or "read-only" in lowered:
        if path.exists() and not os.access(path, os.W_OK):
            why = "the file is read-only"
            fix = f"make it writable (chmod u+w {shown}) or work on a copy"
        elif not os.access(folder, os.W_OK):
            why = (f"its folder {folder} is not writable (SQLite writes a journal next to "
                   "the database)")
            fix = "copy the database to a folder you can write to and use --db there"
        else:
            why = "the database refuses writes"
            fix = "check the file's and its folder's permissions"
        return StoreError(f"cannot write to the database {shown}: {why}; {_UNCHANGED}: {fix}")
    if "locked" in lowered or "busy" in lowered:
        after = f" (waited {waited:g} s)" if waited is not None else ""
        return StoreError(
            f"the database {shown} is locked by another program{after}; {_UNCHANGED}: let "
            "the other import or generate finish, or close the program holding the file "
            "(e.g. a database browser), then run the command again")
    if "unable to open" in lowered or "cannot open" in lowered:
        if not folder.is_dir():
            return StoreError(
                f"cannot open the database {shown}: the folder {folder} does not exist; "
                f"create it (mkdir -p {folder}) or give another --db path")
        if path.is_dir():
            return StoreError(f"cannot open the database {shown}: it is a folder; give a "
                              f"file name, e.g. --db {shown}/surveykit.db")
        if not os.access(folder, os.W_OK | os.X_OK):
            return StoreError(
                f"cannot open the database {shown}: its folder {folder} is not writable "
                "(SQLite needs to create a journal there); copy the database to a folder "
                "you can write to and use --db there")
        return StoreError(f"cannot open the database {shown} ({message}): check that the "
                          "path and its permissions are right")
    if "disk is full" in lowered or "disk i/o" in lowered or "no space" in lowered:
        return StoreError(f"cannot write to the database {shown} ({message}); {_UNCHANGED}: "
                          "free some disk space and run the command again")
    return None


def _is_connection_error(error: BaseException) -> bool:
    name = type(error).__name__
    return name in ("OperationalError", "InterfaceError") and (
        "connect" in str(error).casefold() or "server" in str(error).casefold()
        or "password" in str(error).casefold() or "does not exist" in str(error).casefold())


def install(engine: Engine, *, busy_timeout: float | None = None) -> None:
    """Turn the environment's database errors on ``engine`` into StoreErrors (see module)."""

    @event.listens_for(engine, "handle_error")
    def _handle_error(context) -> None:
        replacement = explain(engine, context.original_exception, waited=busy_timeout)
        if replacement is not None:
            raise replacement from None
