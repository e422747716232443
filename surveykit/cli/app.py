"""The ``surveykit`` command group, its one error translator, and helpers every command shares.

Every command that prints results takes ``--format json``. Usage errors and
bad parameters (a missing input file included) exit with status 2, data and
environment errors (a missing extra included) with status 1; both print one
line, ``Error: ...``, and never a traceback. An interrupted command exits with
128 + the signal's number, as shells do: 130 for Ctrl+C (SIGINT), 143 for kill
(SIGTERM).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from collections.abc import Callable, Iterator

import click

from surveykit import __version__
from surveykit.errors import ParameterError, SurveykitError, clip, printable

FORMAT_TEXT_JSON = click.Choice(["text", "json"])


def print_json(data: object) -> None:
    """Print strict JSON (no NaN or Infinity), indented for people."""
    click.echo(json.dumps(data, indent=2, allow_nan=False))


@contextlib.contextmanager
def progress_bar(length: int, label: str) -> Iterator[Callable[[int], None]]:
    """A progress bar on stderr when it is a terminal; otherwise a silent callback.

    Yields ``advance(steps)``. Pipes, files and CI logs get no bar characters.
    """
    if not sys.stderr.isatty():
        yield lambda _steps: None
        return
    with click.progressbar(length=length, label=label, file=sys.stderr) as bar:
        yield bar.update


DB_HELP = ("Database: a SQLAlchemy URL (sqlite:///file.db, postgresql://user@host/db) or an "
           "SQLite path  [default: $SURVEYKIT_DB, else surveykit.db in the working directory]")


def db_option(command: Callable) -> Callable:
    """The --db option every store command shares (it also reads $SURVEYKIT_DB)."""
    return click.option("--db", "db_url", default=None, metavar="URL", help=DB_HELP)(command)


def survey_option(command: Callable) -> Callable:
    """The required --survey option of the commands that work on one stored survey."""
    return click.option("--survey", "survey_name", required=True, metavar="NAME",
                        help="A survey added with 'surveykit survey add'.")(command)


def format_option(command: Callable) -> Callable:
    """The --format option (text or json) every command that prints a result shares."""
    return click.option("--format", "fmt", type=FORMAT_TEXT_JSON, default="text",
                        show_default=True)(command)



def open_store(db_url: str | None):
    """The engine of ``--db`` for this command; its connections close when the command ends,
    also when it fails (a CLI run inside a notebook or a test leaves no connection open)."""
    from surveykit.store import open_engine

    engine = open_engine(db_url)
    context = click.get_current_context(silent=True)
    if context is not None:
        context.find_root().call_on_close(engine.dispose)
    return engine


def data_paths(data: tuple[str, ...], more: tuple[str, ...]) -> tuple[str, ...]:
    """The files of ``--data PATH...``: the option's values and the paths that follow it
    (a shell expands ``--data exports/*.csv`` into one --data and more paths)."""
    if more and not data:
        raise click.UsageError(f"unexpected argument {more[0]!r}: files to count follow --data")
    return tuple(data) + tuple(more)


def count(number: int, noun: str) -> str:
    """``count(1, "row")`` -> ``'1 row'``, ``count(2, "row")`` -> ``'2 rows'``."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


# Click 8.2+ raises this for a group called without a command (no_args_is_help)
_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


class SurveykitGroup(click.Group):
    """A group whose errors are one line: ``Error: ...`` (status 2 or 1)."""

    # --help lists the commands in the order of the work, not alphabetically
    WORKFLOW = ("demo", "design", "init", "survey", "generate", "export", "serve", "import",
                "counts", "check", "report", "estimate", "regress", "reproduce", "docs")

    def list_commands(self, ctx: click.Context) -> list[str]:  # noqa: D102 - Click hook
        names = super().list_commands(ctx)
        return sorted(names, key=lambda name: (self.WORKFLOW.index(name)
                                               if name in self.WORKFLOW else len(self.WORKFLOW),
                                               name))

    def main(self, *args, **kwargs):  # noqa: D102 - Click's entry point
        kwargs["standalone_mode"] = False
        previous = _terminate_as_interrupt()
        try:
            return super().main(*args, **kwargs)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.exceptions.Abort as exc:
            # Ctrl+C or kill (SIGTERM): every command cleans up on the way out
            echo_error("interrupted before the command finished; database changes were "
                       "rolled back and partly written files removed")
            terminated = isinstance(exc.__cause__, _Terminated)
            sys.exit(128 + (signal.SIGTERM if terminated else signal.SIGINT))
        except _NO_ARGS_IS_HELP as exc:
            # `surveykit` or `surveykit survey` alone: the help is what was asked for
            click.echo(exc.ctx.get_help() if exc.ctx is not None else exc.format_message())
            sys.exit(0)
        except click.UsageError as exc:
            hint = ""
            if exc.ctx is not None:
                hint = f" (see '{exc.ctx.command_path} --help')"
            echo_error(f"{exc.format_message()}{hint}")
            sys.exit(2)
        except ParameterError as exc:
            echo_error(str(exc))
            sys.exit(2)
        except SurveykitError as exc:
            echo_error(str(exc))
            sys.exit(1)
        except RecursionError:
            echo_error("the input is nested too deeply to read; nothing was changed")
            sys.exit(1)
        except OSError as exc:
            # the file system refused (disk full, a permission the checks could not foresee)
            echo_error(describe_os_error(exc))
            sys.exit(1)
        except Exception as exc:
            if os.environ.get("SURVEYKIT_DEBUG"):
                raise
            echo_error(f"surveykit failed unexpectedly ({unexpected_error(exc)}). This is "
                       "a bug: please report it with the command you ran; set "
                       "SURVEYKIT_DEBUG=1 to see where it happened")
            sys.exit(1)
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)


def unexpected_error(exc: BaseException) -> str:
    r"""An unexpected error in one line: its type and the first line of its message, control
    characters escaped, clipped.

    SQLAlchemy's errors carry the SQL statement and its parameters (answers, respondent
    ids) in their message, and a driver's message goes on with DETAIL, HINT and the
    statement's text on further lines: only the driver error's first line is shown.

    >>> unexpected_error(KeyError(99))
    'KeyError: 99'
    >>> unexpected_error(ValueError("bad\x1b[2J value\nsecond line"))
    'ValueError: bad\\x1b[2J value'
    """
    detail: BaseException | None = exc
    if hasattr(exc, "statement") and hasattr(exc, "orig"):
        # sqlalchemy.exc.StatementError (DBAPIError and its kind): the driver's error
        # without the statement and parameters SQLAlchemy adds to it
        detail = exc.orig
    text = str(detail).strip() if detail is not None else ""
    first = text.split("\n", 1)[0].strip()
    name = type(exc).__name__
    return printable(f"{name}: {clip(first, 200)}" if first else name)


class _Terminated(KeyboardInterrupt):
    """SIGTERM, unwinding as Ctrl+C does; the exit status tells them apart (143, not 130)."""


def _terminate_as_interrupt():
    """Let SIGTERM (kill) unwind like Ctrl+C, so transactions roll back and partial files are
    removed; returns the previous handler (None outside the main thread)."""
    def interrupt(_signum, _frame):
        raise _Terminated

    try:
        return signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread (e.g. a test runner's worker)
        return None


def echo_user_text(text: str) -> None:
    """Print text that holds user text (survey titles, question texts, aliases) with control
    characters escaped line by line, so that an escape sequence cannot rewrite the terminal."""
    click.echo("\n".join(printable(line) for line in text.split("\n")), nl=False)


def echo_error(message: str) -> None:
    """``Error: message`` on stderr, each line with control characters escaped (user text,
    such as a survey title or a file name, may hold terminal escape sequences)."""
    # split on newlines only: str.splitlines() would also split on \x1c-\x1e, \x85 and
    # \u2028, which printable() shows as escapes instead
    lines = [printable(line) for line in message.rstrip("\n").split("\n")]
    click.echo("Error: " + "\n".join(lines), err=True)


def describe_os_error(exc: OSError) -> str:
    """One line for an OSError: the file, why, and that the command changed nothing."""
    name = exc.filename if exc.filename is not None else "a file"
    why = exc.strerror or str(exc)
    return f"cannot use {name}: {why}; check the path and its permissions"


@click.group(cls=SurveykitGroup, context_settings={"help_option_names": ["-h", "--help"]},
             epilog="""\b
A survey, start to end:
  surveykit design --epsilon 1.1 --dont-know 0.2 --target-se 0.03
  surveykit init
  surveykit survey add my_survey.toml
  surveykit generate --survey my_survey --respondents 500 --out forms
  surveykit import answers.csv --survey my_survey
  surveykit report --survey my_survey --format html --out report.html

Run 'surveykit demo' to see it all on sample data, and
'surveykit COMMAND --help' for each command.""")
@click.version_option(__version__, prog_name="surveykit")
def main() -> None:
    """Randomized-response surveys with a "don't know" option.

    Design a survey within a privacy budget, generate randomized
    questionnaires, import the answers and print estimates with their
    uncertainty and privacy loss.
    """


def echo_table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    """Left-aligned first column, right-aligned numbers, last column free text."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        cells = [row[0].ljust(widths[0])]
        cells += [cell.rjust(width) for cell, width in zip(row[1:-1], widths[1:-1], strict=True)]
        cells.append(row[-1])
        click.echo("  ".join(cells).rstrip())
