"""What import and counting make of one response file, in a form two runs can be compared in.

``imported`` imports a file into a fresh SQLite database (built by the migrations once per
process, then copied: a real file each time) and reads the kept counts; ``counted`` counts it
where it lies. Each returns an :class:`Outcome`: the counts, or the refusal (its problems,
their number and its summary, with the verb and the hint that differ by command taken out).
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from surveykit import store
from surveykit.counting import count_files
from surveykit.definition.survey import Survey
from surveykit.errors import CsvImportError, CsvProblem
from surveykit.store.importer import import_responses
from tests.store_support import checked_counts

_TEMPLATE: list[Path] = []


@dataclass(frozen=True)
class Outcome:
    """Counts per question, or a refusal: (line, column, value, reason, kind) of each problem
    shown, their number, and the summary up to the command's own words."""

    counts: tuple | None = None
    problems: tuple[tuple, ...] = ()
    problem_count: int = 0
    summary: str = ""

    @property
    def refused(self) -> bool:
        return self.counts is None


def _problem(problem: CsvProblem) -> tuple:
    return (problem.line, problem.column, problem.value, problem.reason, problem.kind)


def _summary(error: CsvImportError) -> str:
    """The summary of a refusal without what differs by command: the verb, the hint, and
    the tally by reason that only import's "bad rows" summary gives (the problems carry it)."""
    text = error.summary.replace("nothing was counted", "nothing was imported")
    text = re.sub(r"^(\d+ bad rows? in .*?)(?: \(.*\))?; nothing was imported.*$", r"\1",
                  text)
    return text


def outcome(run: Callable[[], list[store.QuestionCounts]]) -> Outcome:
    try:
        counts = run()
    except CsvImportError as error:
        return Outcome(problems=tuple(_problem(p) for p in error.problems),
                       problem_count=error.problem_count, summary=_summary(error))
    return Outcome(counts=tuple(counts))


def fresh_engine(folder: Path):
    """An engine on a new SQLite file in ``folder``, migrated to head (a copy of a database
    the migrations built once)."""
    if not _TEMPLATE:
        made = Path(tempfile.mkdtemp(prefix="surveykit-template-")) / "template.db"
        template = store.open_engine(f"sqlite:///{made}")
        store.init_database(template)
        template.dispose()
        _TEMPLATE.append(made)
    target = folder / "surveykit.db"
    shutil.copyfile(_TEMPLATE[0], target)
    return store.open_engine(f"sqlite:///{target}")


def imported(survey: Survey, path: Path, folder: Path) -> Outcome:
    """``surveykit import`` of ``path`` into a fresh database, then its kept counts (checked
    against the stored answers)."""
    engine = fresh_engine(folder)
    try:
        store.add_survey(engine, survey)

        def run():
            import_responses(engine, path, survey.name)
            return checked_counts(engine, survey.name)

        return outcome(run)
    finally:
        engine.dispose()


def counted(survey: Survey, path: Path, engine: str = "duckdb") -> Outcome:
    """``surveykit counts --data`` of ``path``, with ``engine`` (duckdb, dask or exact: the
    row-by-row path alone)."""
    if engine == "exact":
        from surveykit.counting import duckdb_engine
        from surveykit.counting.exact import count_exactly
        from surveykit.counting.sources import expand_paths, open_sources

        def run():
            with open_sources(expand_paths([path]), survey) as sources, \
                    duckdb_engine.connect() as con:
                return count_exactly(con, sources, survey)

        return outcome(run)
    return outcome(lambda: count_files(survey, [path], engine=engine))
