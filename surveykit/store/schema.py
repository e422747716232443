"""The schema check and upgrade: the schema comes only from Alembic migrations
(:func:`init_database`), and every read and write first checks it is the newest
(:func:`require_schema`).
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path

from sqlalchemy import (
    Engine,
    inspect,
)

from surveykit.errors import StoreError
from surveykit.store import migrate, problems
from surveykit.store.engines import (
    display_url,
    open_engine,
)
from surveykit.store.models import (
    Base,
)

__all__ = ["init_database", "require_schema", "scratch_sqlite"]


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



def scratch_sqlite(path: Path) -> str:
    """A new SQLite database at ``path`` (which must not exist) with the schema at head, for
    work that stores rows only to read them back (e.g. files counted through the importer);
    returns its URL.

    It is a copy of one that :func:`init_database` migrated once in this process: running
    the migrations costs about 0.4 s of CPU per database (SQLite's batch migrations copy
    tables), a file copy next to nothing.
    """
    if path.exists():
        raise FileExistsError(path)
    shutil.copyfile(_head_template(), path)
    return f"sqlite:///{path}"


@functools.cache
def _head_template() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="surveykit-head-"))
    atexit.register(shutil.rmtree, folder, True)
    path = folder / "head.db"
    engine = open_engine(f"sqlite:///{path}")
    try:
        init_database(engine)
    finally:
        engine.dispose()  # the last connection checkpoints the write-ahead log into the file
    if path.with_name(path.name + "-wal").exists():
        raise StoreError(f"the scratch database template {path} kept a write-ahead log")
    return path
