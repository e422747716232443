"""One exception hierarchy for surveykit.

Every error a user can cause derives from :class:`SurveykitError`, so the CLI
can turn all of them into one-line messages. Errors about bad parameters are
also :class:`ValueError`, so plain Python code can catch them the usual way.
"""

from dataclasses import dataclass


class SurveykitError(Exception):
    """Base class of every error surveykit raises on purpose."""


class ParameterError(SurveykitError, ValueError):
    """A parameter is outside its allowed range (the CLI exits with status 2)."""


class EstimationError(SurveykitError, ValueError):
    """The data do not allow an estimate (e.g. no yes/no answers at all)."""


class SurveyDefinitionError(SurveykitError):
    """A survey definition (TOML) is malformed: the message names file, field and fix."""


class StoreError(SurveykitError):
    """The database refuses an operation (unknown survey, schema not initialized, ...)."""


@dataclass(frozen=True)
class CsvProblem:
    """One problem in a response CSV, where an editor shows it (the header is line 1)."""

    line: int
    column: str | None
    value: str | None
    reason: str

    def __str__(self) -> str:
        where = f"line {self.line}"
        if self.column is not None:
            where += f", column {self.column}"
        if self.value is not None:
            where += f", value {self.value!r}"
        return f"{where}: {self.reason}"


class CsvImportError(SurveykitError):
    """A response file was refused; nothing was imported.

    ``problems`` lists the first problems found (at most a few hundred, to keep
    memory bounded), ``problem_count`` counts them all.
    """

    # str() lists at most this many problems; the rest are summarized.
    SHOWN = 50

    def __init__(self, path: str, problems: list[CsvProblem], *,
                 problem_count: int | None = None, summary: str | None = None) -> None:
        self.path = path
        self.problems = list(problems)
        self.problem_count = len(self.problems) if problem_count is None else problem_count
        self.summary = summary or (
            f"{self.problem_count} bad row{'s' if self.problem_count != 1 else ''} in {path}; "
            "nothing was imported"
        )
        super().__init__(self.summary)

    def __str__(self) -> str:
        lines = [self.summary + ":"] if self.problems else [self.summary]
        lines += [f"  {problem}" for problem in self.problems[: self.SHOWN]]
        hidden = self.problem_count - min(len(self.problems), self.SHOWN)
        if hidden > 0:
            lines.append(f"  ... and {hidden} more")
        return "\n".join(lines)
