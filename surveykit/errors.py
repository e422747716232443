"""One exception hierarchy for surveykit.

Every error a user can cause derives from :class:`SurveykitError`, so the CLI
can turn all of them into one-line messages. Errors about bad parameters are
also :class:`ValueError`, so plain Python code can catch them the usual way.
"""

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

# C0 and C1 control characters, DEL, and the bidirectional marks, embeddings, overrides and
# isolates that can reorder what a terminal shows (CVE-2021-42574): printed as escapes.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    r"""``text`` with control characters escaped, safe to print on a terminal.

    User text (CSV cells and headers, survey titles) reaches error messages;
    an escape sequence in it would otherwise recolour or rewrite the terminal.

    >>> printable("ok\x1b[2Jcleared\tend")
    'ok\\x1b[2Jcleared\\tend'
    >>> printable("abc\u200fdef")
    'abc\\u200fdef'
    """
    return _CONTROL.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"),
                        text)


def did_you_mean(name: str, known: Iterable[object]) -> str:
    """", did you mean 'x'?" for the closest of ``known`` to a misspelt ``name``, or "".

    >>> did_you_mean("modle", ["model", "innocuous"])
    ", did you mean 'model'?"
    >>> did_you_mean("zzz", ["model"])
    ''
    """
    close = difflib.get_close_matches(str(name), [str(k) for k in known], n=1, cutoff=0.6)
    return f", did you mean {printable(repr(close[0]))}?" if close else ""


def allowed_keys(key: str, allowed: Iterable[str], listed: str | None = None) -> str:
    """What follows "unknown key 'x'": the closest allowed key, then the allowed keys
    (``listed`` instead of their names when given).

    >>> "unknown key 'famly'" + allowed_keys("famly", ["family", "formula"])
    "unknown key 'famly', did you mean 'family'? Allowed keys are family, formula"
    >>> "unknown key 'zzz'" + allowed_keys("zzz", ["family", "formula"])
    "unknown key 'zzz'; allowed keys are family, formula"
    """
    allowed = sorted(allowed)
    names = listed or ", ".join(allowed)
    hint = did_you_mean(key, allowed)
    return f"{hint} Allowed keys are {names}" if hint else f"; allowed keys are {names}"


class SurveykitError(Exception):
    """Base class of every error surveykit raises on purpose."""


class ParameterError(SurveykitError, ValueError):
    """A parameter is outside its allowed range (the CLI exits with status 2)."""


class EstimationError(SurveykitError, ValueError):
    """The data do not allow an estimate (e.g. no yes/no answers at all)."""


class SurveyDefinitionError(SurveykitError):
    """A survey definition (TOML) is malformed: the message names file, field and fix."""


class InputError(SurveykitError):
    """A file the command should read cannot be read (status 1: the file system's state, not
    the command line's form); a file that is not there is a :class:`MissingInputError`."""


class MissingInputError(ParameterError):
    """A file named on the command line is not there: a usage error (status 2), fixed by
    the path; a file that is there but cannot be read is an :class:`InputError`."""


class MissingExtraError(SurveykitError):
    """An optional dependency (an extra such as ``surveykit[duckdb]``) is not installed:
    the environment's state (status 1, in every command); the message says what to install."""


class OutputError(SurveykitError):
    """A file or folder the command should write cannot be written (missing folder, a
    folder where a file should be, no permission): the message names the option and path."""


class StoreError(SurveykitError):
    """The database refuses an operation (unknown survey, schema not initialized, ...)."""


@dataclass(frozen=True)
class CsvProblem:
    """One problem in a response file, where an editor shows it (the header is line 1).

    ``line`` is the line of a CSV file or the row of a spreadsheet (``unit``
    says which); ``kind`` is a short reason shared by every problem of the
    same sort ("not an answer", "respondent id not issued"), for summaries.
    """

    line: int
    column: str | None
    value: str | None
    reason: str
    kind: str | None = field(default=None, compare=False)
    unit: str = field(default="line", compare=False)

    def __str__(self) -> str:
        where = f"{self.unit} {self.line}"
        if self.column is not None:
            where += f", column {printable(clip(self.column))}"
        if self.value is not None:
            where += f", value {printable(repr(clip(self.value)))}"
        return f"{where}: {printable(self.reason)}"


def clip(text: str, limit: int = 120) -> str:
    """``text`` cut to about ``limit`` characters for a message, saying how long it was.

    >>> clip("x" * 1000, 30)
    'xxxxxxxxxx... (1,000 characters)'
    """
    if len(text) <= limit:
        return text
    return f"{text[:max(limit - 20, 1)]}... ({len(text):,} characters)"


def summarize_kinds(counts: dict[str, int]) -> str:
    """``{"not an answer": 3, "duplicate": 1}`` -> ``'3 not an answer, 1 duplicate'``.

    Most frequent first, so the one-line summary leads with the main problem.

    >>> summarize_kinds({"duplicate": 1, "not an answer": 3})
    '3 not an answer, 1 duplicate'
    """
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(f"{n} {kind}" for kind, n in ordered)


class CsvImportError(SurveykitError):
    """A response file was refused; nothing was imported.

    ``problems`` lists the first problems found (at most a few hundred, to keep
    memory bounded), ``problem_count`` counts them all.
    """

    # str() lists at most this many problems; the rest are summarized.
    SHOWN = 50
    # a listing longer than this ends with the summary again (issue 11: end with it)
    RECAP_AFTER = 10

    def __init__(self, path: str, problems: list[CsvProblem], *,
                 problem_count: int | None = None, summary: str | None = None,
                 kinds: dict[str, int] | None = None) -> None:
        self.path = path
        self.problems = list(problems)
        self.problem_count = len(self.problems) if problem_count is None else problem_count
        self.kinds = dict(kinds or {})
        self.summary = printable(summary or (
            f"{self.problem_count} bad row{'s' if self.problem_count != 1 else ''} in {path}; "
            "nothing was imported"
        ))
        super().__init__(self.summary)

    def __str__(self) -> str:
        lines = [self.summary + ":"] if self.problems else [self.summary]
        lines += [f"  {problem}" for problem in self.problems[: self.SHOWN]]
        hidden = self.problem_count - min(len(self.problems), self.SHOWN)
        if hidden > 0:
            lines.append(f"  ... and {hidden} more")
        if len(lines) > self.RECAP_AFTER:
            # the first line has scrolled away on a terminal: end with it again
            lines.append(f"In all: {self.summary}")
        return "\n".join(lines)
