"""Shared fixtures: real databases built by the migrations, on SQLite and PostgreSQL.

``database_url`` runs a test once on a fresh SQLite file and once on a fresh
PostgreSQL schema; the PostgreSQL run is skipped only when
SURVEYKIT_TEST_POSTGRES_URL is unset (CI always sets it: see .ci/run).
"""

from __future__ import annotations

# ruff: noqa: E402 (the bytecode setting below comes before the imports it is for)
import os
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

# Compiled bytecode is kept between runs, for this process, the xdist workers it starts and
# every `surveykit` subprocess a test runs. This machine's environment (and CI's) sets
# PYTHONDONTWRITEBYTECODE=1, so each process compiled surveykit and re-wrote every test
# module's asserts from source: 10 s of CPU per collecting process and 0.4 s per CLI
# subprocess, measured.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

import migrated
import pytest
from sqlalchemy import Engine
from sqlalchemy.engine import make_url

from surveykit import store
from surveykit.definition.survey import Survey, load_survey_file
from surveykit.resources import locate_resource

POSTGRES_URL = os.environ.get("SURVEYKIT_TEST_POSTGRES_URL")
SAMPLE_DATA = locate_resource("sample_data")

# What tests skip without on a laptop, but CI (CI=true, where .ci/run installs everything)
# must have: a missing one there is a failure of the whole run, never a quiet skip. Java,
# Node and Chromium are checked where they are used (tests/field_clients.py,
# tests/web_support.py).
CI_MODULES = ("pyarrow", "distributed", "duckdb", "mpmath", "hypothesis", "playwright")
CI_PROGRAMS = ("setpriv",)

# Hypothesis: a property test that does not set max_examples itself runs a short search in
# the default suite; its long search runs under -m slow with its own settings. The bugs a
# search ever found stay as @example cases, which run whatever the profile.
# HYPOTHESIS_PROFILE=thorough gives those properties hypothesis's long search here too.
try:
    from hypothesis import settings as hypothesis_settings
except ImportError:  # a laptop without it: the property tests skip (CI refuses, above)
    pass
else:
    hypothesis_settings.register_profile("suite", max_examples=8)
    hypothesis_settings.register_profile("thorough", max_examples=400)
    hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))

#: The files whose tests take longest in all, longest first: seconds per file in the full
#: suite of 2026-11-28 (2 processes, quiet machine; readme 69, web_browser 66,
#: xlsform_security 54, weighted_files 52, import 43, counting 42, web_numeric 36,
#: concurrent_imports 35, formula_security 30, exit_codes 29, numeric_store 29,
#: tampered_store 27; store_replicate_sums, added later, 46 in one process).
LONG_FILES = (
    "test_readme.py",
    "test_web_browser.py",
    "test_xlsform_security.py",
    "test_weighted_files.py",
    "test_store_replicate_sums.py",
    "test_import.py",
    "test_counting.py",
    "test_web_numeric.py",
    "test_concurrent_imports.py",
    "test_formula_security.py",
    "test_exit_codes.py",
    "test_numeric_store.py",
    "test_tampered_store.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Hand out the longest files first. ``--dist loadfile`` runs a whole file in one process
    and hands files out one by one as processes finish; the file handed out last runs alone
    at the end. xdist's own order (most tests first, switched off in addopts by
    --no-loadscope-reorder) put the few long tests of the README walk-through and the
    property searches last. Here LONG_FILES go first, then the rest by number of tests as
    xdist did; a file's tests keep their order (some build on one another)."""
    def file_of(item: pytest.Item) -> str:
        return item.nodeid.split("::", 1)[0]

    tests_in = Counter(file_of(item) for item in items)
    rank = {name: number for number, name in enumerate(LONG_FILES)}
    items.sort(key=lambda item: (rank.get(Path(file_of(item)).name, len(rank)),
                                 -tests_in[file_of(item)], file_of(item)))


def pytest_sessionstart(session: pytest.Session) -> None:
    """Under CI=true, refuse to run without PostgreSQL or a tool some tests would skip."""
    if os.environ.get("CI") != "true":
        return
    import importlib.util
    import shutil

    missing = [f"the Python module {name}" for name in CI_MODULES
               if importlib.util.find_spec(name) is None]
    missing += [f"the program {name}" for name in CI_PROGRAMS if shutil.which(name) is None]
    if POSTGRES_URL is None:
        missing.append("SURVEYKIT_TEST_POSTGRES_URL (a PostgreSQL server)")
    if missing:
        raise pytest.UsageError(
            f"CI=true but {', '.join(missing)} is missing: tests would skip instead of "
            "failing; .ci/run installs these")


@pytest.fixture(params=[
    "sqlite",
    pytest.param("postgresql", marks=[
        pytest.mark.postgres,
        pytest.mark.skipif(POSTGRES_URL is None, reason="SURVEYKIT_TEST_POSTGRES_URL is not set"),
    ]),
])
def database_url(request, tmp_path: Path) -> Iterator[str]:
    """The URL of an empty database: an SQLite file in tmp_path, or a fresh PostgreSQL
    database whose search_path is an empty schema of its own (see tests/migrated.py)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'surveykit.db'}"
        return
    database, url = migrated.new_postgres_database()
    try:
        yield url
    finally:
        migrated.drop_postgres_database(database)


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    """An engine on a database migrated to head (never create_all): a copy of one the
    migrations built in this process (tests/migrated.py)."""
    if database_url.startswith("sqlite"):
        migrated.migrated_sqlite(Path(make_url(database_url).database))
    else:
        migrated.migrate_postgres(database_url)
    engine = store.open_engine(database_url)
    yield engine
    engine.dispose()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """An SQLite database file (not yet created) in tmp_path."""
    return f"sqlite:///{tmp_path / 'surveykit.db'}"


@pytest.fixture
def sample_survey_path() -> Path:
    """sample_data/academic_integrity.toml: four questions, three mechanisms, aliases."""
    return SAMPLE_DATA / "academic_integrity.toml"


@pytest.fixture
def sample_survey(sample_survey_path: Path) -> Survey:
    return load_survey_file(sample_survey_path)


@pytest.fixture
def survey_engine(engine: Engine, sample_survey: Survey) -> Engine:
    """A migrated database holding the sample survey (academic_integrity)."""
    store.add_survey(engine, sample_survey)
    return engine
