"""Programmatic Alembic: upgrade, downgrade, check, current and head revisions.

The configuration is built in code and points at the migrations folder found
by :func:`surveykit.resources.locate_resource`, so migrations run the same
from a source checkout, an editable install or an installed wheel, from any
working directory.

Alembic is imported by the functions that migrate (:func:`upgrade`, :func:`downgrade`,
:func:`check`) only. Every store command checks the schema first (current, head and known
revisions), and importing Alembic (its runtime loads the DDL of every dialect) cost a
command more CPU than the rest of the store did: the revisions are read without it, the
current one from ``alembic_version`` and the shipped ones from the ``revision`` and
``down_revision`` of each migration file (``tests/test_migrations.py`` checks both
against Alembic's own reading).
"""

from __future__ import annotations

import ast
import io
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, inspect, text

from surveykit.errors import StoreError
from surveykit.resources import locate_resource

if TYPE_CHECKING:
    from alembic.config import Config

__all__ = ["check", "current_revision", "downgrade", "head_revision", "known_revisions",
           "upgrade"]

#: Alembic's table of the revision a database is at (its default name, which env.py keeps).
VERSION_TABLE = "alembic_version"


def _config(connection: Connection | None = None) -> Config:
    from alembic.config import Config

    # Alembic's own messages ("No new upgrade operations detected.") would land
    # on our commands' stdout, which may be JSON; callers report results themselves.
    config = Config(stdout=io.StringIO())
    config.set_main_option("script_location", str(locate_resource("migrations")))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


@lru_cache(maxsize=1)
def _revisions() -> dict[str, str | None]:
    """Each shipped migration's revision -> its down_revision, as its file assigns them
    (module-level ``revision`` and ``down_revision``, as Alembic reads them)."""
    revisions: dict[str, str | None] = {}
    for path in sorted((locate_resource("migrations") / "versions").glob("*.py")):
        found: dict[str, object] = {}
        for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
            if isinstance(node, ast.AnnAssign) and node.value is not None:
                target, value = node.target, node.value
            elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
            else:
                continue
            if isinstance(target, ast.Name) and target.id in ("revision", "down_revision"):
                found[target.id] = ast.literal_eval(value)
        if "revision" in found:  # pragma: no branch - every migration file names itself
            revisions[str(found["revision"])] = found.get("down_revision")  # type: ignore
    return revisions


@lru_cache(maxsize=1)
def head_revision() -> str:
    """The newest migration shipped with this surveykit: the one no other revises.

    >>> head_revision() in known_revisions()
    True
    """
    revisions = _revisions()
    heads = set(revisions) - set(revisions.values())
    if len(heads) != 1:  # pragma: no cover - the package ships one line of migrations
        raise RuntimeError(f"surveykit ships {len(heads)} newest migrations "
                           f"({', '.join(sorted(heads))}): reinstall surveykit")
    return heads.pop()


@lru_cache(maxsize=1)
def known_revisions() -> frozenset[str]:
    """Every migration shipped with this surveykit."""
    return frozenset(_revisions())


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at, or None for a database surveykit never touched
    (no ``alembic_version`` table, or an empty one, as a downgrade to "base" leaves it)."""
    with engine.connect() as connection:
        if not inspect(connection).has_table(VERSION_TABLE):
            return None
        versions = connection.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")
                                      ).scalars().all()
    if len(versions) > 1:
        raise StoreError(
            f"{engine.url.render_as_string(hide_password=True)} is at {len(versions)} schema "
            f"revisions at once ({', '.join(sorted(map(str, versions)))} in {VERSION_TABLE}), "
            "which surveykit never writes: restore the database from a backup")
    return versions[0] if versions else None


@contextmanager
def _migration_transaction(engine: Engine) -> Iterator[Connection]:
    """One transaction for a migration; on SQLite with foreign keys off while it runs.

    SQLite cannot alter a column, so batch migrations copy a table and drop
    the old one; with foreign keys on, dropping ``surveys`` or ``questions``
    would cascade and delete every answer. The check is switched off before
    the transaction begins (SQLite ignores the pragma inside one) and the
    foreign keys are verified before the migration commits.
    """
    with engine.connect() as connection:
        sqlite = engine.dialect.name == "sqlite"
        if sqlite:
            connection.connection.dbapi_connection.execute("PRAGMA foreign_keys = OFF")
        try:
            with connection.begin():
                yield connection
                if sqlite:
                    broken = connection.exec_driver_sql("PRAGMA foreign_key_check").all()
                    if broken:  # pragma: no cover - the migrations keep every reference
                        raise RuntimeError(f"the migration broke foreign keys: {broken[:5]}")
        finally:
            if sqlite:
                connection.connection.dbapi_connection.execute("PRAGMA foreign_keys = ON")


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Migrate the database up to ``revision`` (default: the newest), in one transaction."""
    from alembic import command

    with _migration_transaction(engine) as connection:
        command.upgrade(_config(connection), revision)


def downgrade(engine: Engine, revision: str) -> None:
    """Migrate the database down to ``revision`` ("base" removes every surveykit table)."""
    from alembic import command

    with _migration_transaction(engine) as connection:
        command.downgrade(_config(connection), revision)


def check(engine: Engine) -> None:
    """Raise ``alembic.util.AutogenerateDiffsDetected`` if models and migrations differ.

    The database must be at head; this is ``alembic check``.
    """
    from alembic import command

    with engine.connect() as connection:
        command.check(_config(connection))
