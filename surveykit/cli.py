"""The ``surveykit`` command line: parse options, make one library call, print.

Every command that prints results takes ``--format json``. Usage errors and
bad parameters exit with status 2, data errors with status 1; both print one
line, ``Error: ...``, and never a traceback.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import click

from surveykit import __version__
from surveykit.designs.warner import GeneralizedWarner
from surveykit.errors import ParameterError, SurveykitError
from surveykit.estimation import CI_METHODS, DEFAULT_CI_METHOD, estimate
from surveykit.planning import design_survey
from surveykit.reporting.report import REPORT_FORMATS

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


def count(number: int, noun: str) -> str:
    """``count(1, "row")`` -> ``'1 row'``, ``count(2, "row")`` -> ``'2 rows'``."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def format_number(value: float | None, digits: int = 4) -> str:
    """A number for text tables: fixed digits, 'inf' for no protection."""
    if value is None or (isinstance(value, float) and math.isinf(value)):
        return "inf"
    return f"{value:.{digits}f}"


class SurveykitGroup(click.Group):
    """A group whose errors are one line: ``Error: ...`` (status 2 or 1)."""

    # --help lists the commands in the order of the work, not alphabetically
    WORKFLOW = ("demo", "design", "init", "survey", "generate", "import", "counts", "report",
                "estimate", "reproduce")

    def list_commands(self, ctx: click.Context) -> list[str]:  # noqa: D102 - Click hook
        names = super().list_commands(ctx)
        return sorted(names, key=lambda name: (self.WORKFLOW.index(name)
                                               if name in self.WORKFLOW else len(self.WORKFLOW),
                                               name))

    def main(self, *args, **kwargs):  # noqa: D102 - Click's entry point
        kwargs["standalone_mode"] = False
        try:
            return super().main(*args, **kwargs)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            click.echo("Aborted.", err=True)
            sys.exit(1)
        except click.UsageError as exc:
            hint = ""
            if exc.ctx is not None:
                hint = f" (see '{exc.ctx.command_path} --help')"
            click.echo(f"Error: {exc.format_message()}{hint}", err=True)
            sys.exit(2)
        except ParameterError as exc:
            click.echo(f"Error: {exc}", err=True)
            sys.exit(2)
        except SurveykitError as exc:
            click.echo(f"Error: {exc}", err=True)
            sys.exit(1)


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


@main.command("estimate")
@click.option("--yes", "yes", type=int, required=True, help="Number of 'yes' answers.")
@click.option("--no", "no", type=int, required=True, help="Number of 'no' answers.")
@click.option("--dont-know", type=int, required=True, help="Number of \"don't know\" answers.")
@click.option("--p", "p", type=float, required=True, help="Probability of answering truthfully.")
@click.option("--q", "q", type=float, required=True,
              help="Probability of giving the opposite answer (don't know = 1 - p - q).")
@click.option("--level", type=float, default=0.95, show_default=True,
              help="Confidence level of the interval.")
@click.option("--method", type=click.Choice(CI_METHODS), default=DEFAULT_CI_METHOD,
              show_default=True, help="Confidence interval method.")
@click.option("--format", "fmt", type=FORMAT_TEXT_JSON, default="text", show_default=True)
def estimate_command(yes, no, dont_know, p, q, level, method, fmt):
    """Estimate the prevalence pi from yes / no / don't-know counts.

    Example: surveykit estimate --yes 30 --no 50 --dont-know 20 --p 0.6 --q 0.2
    """
    result = estimate(yes=yes, no=no, dont_know=dont_know,
                      mechanism=GeneralizedWarner(p=p, q=q))
    data = result.to_dict(level=level, method=method)
    if fmt == "json":
        print_json(data)
        return
    rows = [
        ("answers", f"yes {yes}, no {no}, don't know {dont_know} (n = {data['n']})"),
        ("mechanism", f"p = {p:g} truthful, q = {q:g} opposite, "
                      f"{result.mechanism.dont_know:.4g} don't know"),
        ("pi_hat (Eq. 2)", format_number(data["pi_hat"])),
        ("pi_mle on [0, 1]", format_number(data["pi_mle"])),
        ("standard error", format_number(data["se"])),
        (f"{level:.0%} CI ({method})",
         f"[{format_number(data['ci_low'])}, {format_number(data['ci_high'])}]"),
        ("privacy loss", f"Shafer {format_number(data['epsilon_shafer'])}, "
                         f"Walley {format_number(data['epsilon_walley'])}"),
    ]
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        click.echo(f"{label:<{width}}  {value}")


@main.command("design")
@click.option("--epsilon", type=float, required=True,
              help="Privacy budget per question (natural log), in the chosen semantics.")
@click.option("--dont-know", type=float, default=0.0, show_default=True,
              help="Probability of answering \"don't know\" (1 - p - q).")
@click.option("--n", "n", type=int, default=None, help="Sample size: report the standard error.")
@click.option("--target-se", type=float, default=None,
              help="Target standard error: find the smallest sample size that reaches it.")
@click.option("--pi", type=float, default=0.5, show_default=True,
              help="Prevalence to evaluate the precision at (0.5 is the worst case).")
@click.option("--semantics", type=click.Choice(["shafer", "walley"]), default="shafer",
              show_default=True, help="Which privacy loss the budget limits.")
@click.option("--plot", "plot_file", type=click.Path(dir_okay=False), default=None,
              help="Also draw the privacy-accuracy trade-off to FILE (.png, .svg or .pdf).")
@click.option("--format", "fmt", type=FORMAT_TEXT_JSON, default="text", show_default=True)
def design_command(epsilon, dont_know, n, target_se, pi, semantics, plot_file, fmt):
    """Choose p and q for a privacy budget, and the sample size for a precision.

    The mechanism is the best one for the budget at the given don't-know rate
    (Corollary 3.12); Warner's mechanism at the same budget is shown beside it.

    Example: surveykit design --epsilon 1.1 --dont-know 0.2 --target-se 0.03
    """
    ours, warner = design_survey(epsilon=epsilon, dont_know=dont_know, semantics=semantics,
                                 n=n, target_se=target_se, pi=pi)
    if plot_file is not None:
        from surveykit.reporting.plots import save_design_plot

        click.echo(f"Wrote the trade-off picture to {save_design_plot(plot_file, ours, warner)}",
                   err=True)
    if fmt == "json":
        print_json({**ours.to_dict(), "warner": warner.to_dict()})
        return
    click.echo(f"Design for a {semantics.capitalize()} budget of {epsilon:g} with "
               f"{dont_know:.0%} \"don't know\", precision at pi = {pi:g}")
    click.echo("")
    rows = [
        ("", "with don't know", "Warner"),
        ("p (answer truthfully)", format_number(ours.mechanism.p),
         format_number(warner.mechanism.p)),
        ("q (give the opposite)", format_number(ours.mechanism.q),
         format_number(warner.mechanism.q)),
        ("don't know", format_number(ours.mechanism.dont_know),
         format_number(warner.mechanism.dont_know)),
        ("epsilon, Shafer", format_number(ours.epsilon_shafer),
         format_number(warner.epsilon_shafer)),
        ("epsilon, Walley", format_number(ours.epsilon_walley),
         format_number(warner.epsilon_walley)),
    ]
    if ours.n is not None:
        rows.append(("respondents n", f"{ours.n:,}", f"{warner.n:,}"))
        rows.append(("standard error", format_number(ours.se), format_number(warner.se)))
    for label, left, right in rows:
        click.echo(f"{label:<24}{left:>18}{right:>12}")
    if ours.n is None:
        click.echo("\nGive --n or --target-se to see the precision and sample size.")


@main.command("report")
@click.option("--survey", "survey_name", required=True, help="Name of the stored survey.")
@click.option("--format", "fmt", type=click.Choice(REPORT_FORMATS), default="text",
              show_default=True, help="html is one self-contained file with inline plots.")
@click.option("--out", "out_file", type=click.Path(dir_okay=False, writable=True),
              default=None, help="Write the report to FILE instead of the terminal.")
@click.option("--level", type=float, default=0.95, show_default=True,
              help="Confidence level of the intervals.")
@click.option("--method", type=click.Choice(CI_METHODS), default=DEFAULT_CI_METHOD,
              show_default=True, help="Confidence interval method (docs/estimation.md).")
@db_option
def report_command(survey_name, fmt, out_file, level, method, db_url):
    """Print the estimation report of a survey: estimates, privacy, checks.

    For every question: the counts, pi_hat and pi_mle with their standard
    error and confidence interval, the privacy loss in both semantics, the
    don't-know compliance test and (when questionnaires were issued) the
    randomizer audit, with a plain-language warning for every failed check.

    Example: surveykit report --survey academic_integrity --format html --out report.html
    """
    from surveykit.reporting.report import render_report, report_for_survey
    from surveykit.store import open_engine

    report = report_for_survey(open_engine(db_url), survey_name, level=level, method=method)
    text = render_report(report, fmt)
    if out_file is None:
        click.echo(text, nl=False)
        return
    with open(out_file, "w", encoding="utf-8") as stream:
        stream.write(text)
    click.echo(f"Wrote the {fmt} report of {survey_name!r} to {out_file} "
               f"({report.warning_count} warning(s)).", err=True)


@main.command("demo")
@click.option("--dir", "directory", type=click.Path(file_okay=False), default=None,
              help="Folder to run in (must be new or empty)  [default: ./surveykit-demo, "
                   "or -2, -3, ... if that exists]")
@click.option("--respondents", type=int, default=2000, show_default=True,
              help="How many questionnaires to issue and simulate.")
@click.option("--seed", type=int, default=None,
              help="Reproducible ids, codes and answers (demo and tests only).")
@click.option("--format", "fmt", type=FORMAT_TEXT_JSON, default="text", show_default=True)
def demo_command(directory, respondents, seed, fmt):
    """Run the whole workflow on the sample survey in a fresh folder.

    Creates a database, adds the sample academic-integrity survey, generates
    questionnaires, simulates respondents who follow their codes (with stated
    true prevalences), imports their answers and prints the report, with the
    truth beside each estimate.
    """
    from pathlib import Path

    from surveykit.demo import fresh_directory, run_demo

    target = Path(directory) if directory else fresh_directory(Path("surveykit-demo"))
    with progress_bar(respondents, "Generating questionnaires") as advance:
        result = run_demo(target, respondents=respondents, seed=seed, progress=advance)
    comparison = result.comparison()
    if fmt == "json":
        print_json({
            "directory": str(result.directory),
            "database": str(result.database),
            "questionnaires": str(result.questionnaires),
            "responses": str(result.responses),
            "report_html": str(result.report_html),
            "truth": comparison,
            "report": result.report.to_dict(),
        })
        return
    from surveykit.reporting.report import render_report

    click.echo(render_report(result.report, "text"), nl=False)
    click.echo("")
    click.echo("The truth the respondents were simulated with, beside the estimates:")
    click.echo(f"  {'question':<22}{'truth':>7}{'pi_mle':>9}{'interval':>20}  covered")
    for row in comparison:
        interval = (f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}]"
                    if row["ci_low"] is not None else "-")
        estimate_text = f"{row['pi_mle']:.3f}" if row["pi_mle"] is not None else "-"
        click.echo(f"  {row['id']:<22}{row['truth']:>7.2f}{estimate_text:>9}{interval:>20}  "
                   f"{'yes' if row['covered'] else 'NO'}")
    click.echo("")
    click.echo(f"Everything is in {result.directory}/:")
    click.echo(f"  {result.database.name:<18} the database")
    click.echo(f"  {result.questionnaires.name + '/':<18} printable slips and answer sheets")
    click.echo(f"  {result.responses.name:<18} the simulated answers that were imported")
    click.echo(f"  {result.report_html.name:<18} the report as a web page, with plots")
    click.echo("Print the report again with:")
    database = os.path.relpath(result.database) if not os.path.isabs(str(target)) \
        else result.database
    click.echo(f"  surveykit report --db {database} --survey {result.report.survey}")


@main.command("reproduce")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Directory for the figures and tables (created if missing).")
@click.option("--reps", type=click.IntRange(min=2), default=1000, show_default=True,
              help="Simulated surveys per point in Figures 2, 3 and 5.")
@click.option("--table-reps", type=click.IntRange(min=2), default=None,
              help="Simulated surveys per row of the verification table  [default: 100 x reps]")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Seed for a repeatable run  [default: a fresh seed, printed at the end]")
@click.option("--format", "fmt", type=FORMAT_TEXT_JSON, default="text", show_default=True)
def reproduce_command(out, reps, table_reps, seed, fmt):
    """Reproduce the paper's Figures 1-5 and a verification table of its theorems.

    Writes five PNG figures, verification.csv, tradeoff_bounds.csv and
    verification.md into OUT (docs/reproduction.md explains them).

    Example: surveykit reproduce --out reproduction --reps 1000 --seed 2026
    """
    # imported here: pandas and matplotlib are not needed by the other commands
    from surveykit.paper.reproduction import REPRODUCTION_STEPS, reproduce

    options = {"out": out, "reps": reps, "seed": seed, "table_reps": table_reps}
    with progress_bar(len(REPRODUCTION_STEPS), "Reproducing") as advance:
        result = reproduce(**options, progress=lambda _step: advance(1))
    summary = result.summary
    if fmt == "json":
        print_json({"files": [str(path) for path in result.files], "seed": result.seed,
                    "seconds": round(result.seconds, 2), "verification": summary})
        return
    for path in result.files:
        click.echo(f"wrote {path}")
    click.echo(f"exact conditional variance within 3 Monte Carlo SE of the simulation: "
               f"{summary['exact_within_3se']} of {summary['table_rows']} rows "
               f"(max |z| = {summary['max_abs_exact_z']:.2f})")
    click.echo(f"Theorem 3.10 as printed: more than 3 SE off on "
               f"{summary['printed_3_10_beyond_3se']} rows, relative error up to "
               f"{summary['max_abs_printed_rel_err']:.1%}")
    for check in summary["monotonicity"]:
        click.echo(f"{check['claim']}: {check['passed']} of {check['steps']} grid steps pass")
    broken = [c for c in summary["tradeoff_bounds"] if c["as_printed"] and not c["holds"]]
    click.echo(f"trade-off bounds as printed that enumerated rules break: "
               f"{', '.join(c['claim'] for c in broken) or 'none'}")
    click.echo(f"seed {result.seed}, {result.seconds:.1f} s")


@main.command("generate")
@click.option("--survey", "survey_name", required=True, metavar="NAME",
              help="A survey added with 'surveykit survey add'.")
@click.option("--respondents", type=click.IntRange(min=1), required=True, metavar="N",
              help="How many questionnaires (respondent ids) to issue.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), required=True, metavar="DIR",
              help="New folder for the questionnaire files (created if missing).")
@click.option("--mode", type=click.Choice(["slips", "die"]), default="slips", show_default=True,
              help="slips: a private instruction slip per respondent plus an answer sheet; "
                   "die: one form for all, respondents roll dice.")
@click.option("--format", "fmt", type=click.Choice(["html", "markdown"]), default="html",
              show_default=True, help="Print-ready HTML or Markdown.")
@click.option("--key-file", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Also write respondent_id,question_id,code to this CSV, for audits only: "
                   "it undoes the protection; keep it away from the answers.")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Reproducible ids and codes, for tests only: anyone with the seed can "
                   "recompute every code.  [default: operating-system entropy]")
@click.option("--templates", "templates_dir", type=click.Path(file_okay=False), default=None,
              metavar="DIR", help="Folder with your own templates (and wording.json); files "
                                  "missing there come from surveykit's templates.")
@click.option("--per-file", type=click.IntRange(min=1), default=500, show_default=True,
              help="Questionnaires per output file (one per printed page).")
@db_option
@click.option("--output", "output", type=FORMAT_TEXT_JSON, default="text", show_default=True,
              help="How to print the summary of what was written (--format is the "
                   "questionnaires' file format).")
def generate_command(survey_name, respondents, out_dir, mode, fmt, key_file, seed,
                     templates_dir, per_file, db_url, output):
    """Issue respondent ids and write randomized questionnaires.

    Each respondent's codes (answer truthfully / give the opposite answer /
    say "don't know") come from operating-system entropy. The database gets
    the issued ids and per-question code totals only, never a code next to an
    id. docs/questionnaires.md explains how to print and hand out the files.

    Example: surveykit generate --survey academic_integrity --respondents 300 --out forms
    """
    from surveykit.collection.generation import KEY_FILE_WARNING, generate_questionnaires
    from surveykit.collection.randomizer import SEED_WARNING
    from surveykit.store import display_url, open_engine

    if seed is not None:
        click.echo(SEED_WARNING, err=True)
    if key_file is not None:
        click.echo(KEY_FILE_WARNING.format(path=key_file), err=True)
    engine = open_engine(db_url)
    options = {"respondents": respondents, "out_dir": out_dir, "mode": mode, "fmt": fmt,
               "key_file": key_file, "templates_dir": templates_dir, "per_file": per_file,
               "seed": seed}
    with progress_bar(respondents, "Generating") as advance:
        result = generate_questionnaires(engine, survey_name, progress=advance, **options)
    if output == "json":
        print_json({**result.to_dict(), "database": display_url(engine)})
        return
    parts = ("sheets", "slips") if mode == "slips" else ("forms",)
    for part in parts:
        names = [p.name for p in result.files if p.name.startswith(part + "-")]
        click.echo(f"wrote {len(names)} {part} file(s) to {result.out_dir}: {names[0]}"
                   + (f" ... {names[-1]}" if len(names) > 1 else ""))
    click.echo(f"issued {result.respondents} respondent ids for survey {survey_name!r} "
               f"in {display_url(engine)}")
    for question, tally in result.code_tallies.items():
        click.echo(f"codes for {question}: T {tally['T']}, L {tally['L']}, D {tally['D']}")
    if result.key_file is not None:
        click.echo(f"wrote the key file {result.key_file} (keep it away from the answers)")
    if mode == "slips":
        click.echo("Print sheets-* and slips-* separately; each respondent keeps a slip and "
                   "hands in only the sheet (docs/questionnaires.md).")


# -- the survey store: init, survey add/list, import, counts ---------------------------

@main.command("init")
@db_option
@click.option("--format", "fmt", type=FORMAT_TEXT_JSON, default="text", show_default=True)
def init_command(db_url, fmt):
    """Create the database, or upgrade it to this surveykit's schema.

    Runs the Alembic migrations shipped with surveykit; running it again is
    harmless. Example: surveykit init --db sqlite:///fieldwork.db
    """
    from surveykit.store import display_url, init_database, open_engine

    engine = open_engine(db_url)
    revision = init_database(engine)
    if fmt == "json":
        print_json({"database": display_url(engine), "revision": revision})
        return
    click.echo(f"Database {display_url(engine)} is ready (schema revision {revision}).")


@main.group("survey", cls=click.Group)
def survey_group() -> None:
    """Add survey definitions (TOML) to the database and list them."""


@survey_group.command("add")
@click.argument("file", type=click.Path(dir_okay=False))
@db_option
@click.option("--format", "fmt", type=FORMAT_TEXT_JSON, default="text", show_default=True)
def survey_add_command(file, db_url, fmt):
    """Check a survey definition FILE (TOML) and store it.

    The file names the survey, its default mechanism (p truthful, q opposite)
    and its questions, each with an optional mechanism and answer aliases; see
    sample_data/academic_integrity.toml. Adding the same file again changes
    nothing. Example: surveykit survey add academic_integrity.toml
    """
    from surveykit.definition.survey import load_survey_file
    from surveykit.store import add_survey, display_url, open_engine

    survey = load_survey_file(file)
    engine = open_engine(db_url)
    added = add_survey(engine, survey)
    if fmt == "json":
        print_json({"survey": survey.name, "questions": [q.id for q in survey.questions],
                    "added": added, "database": display_url(engine)})
        return
    if added:
        click.echo(f"Added survey {survey.name!r} ({len(survey.questions)} questions) to "
                   f"{display_url(engine)}.")
    else:
        click.echo(f"Survey {survey.name!r} is already in {display_url(engine)} with this "
                   "definition; nothing changed.")


@survey_group.command("list")
@db_option
@click.option("--format", "fmt", type=FORMAT_TEXT_JSON, default="text", show_default=True)
def survey_list_command(db_url, fmt):
    """List the stored surveys with their questions, issued ids and answers."""
    from surveykit.store import list_surveys, open_engine

    summaries = list_surveys(open_engine(db_url))
    if fmt == "json":
        print_json({"surveys": [summary.to_dict() for summary in summaries]})
        return
    if not summaries:
        click.echo("No surveys yet: add one with 'surveykit survey add FILE'.")
        return
    header = ("name", "questions", "issued", "respondents", "answers", "imports", "title")
    rows = [(s.name, str(s.questions), str(s.issued), str(s.respondents), str(s.answers),
             str(s.imports), s.title) for s in summaries]
    _echo_table(header, rows)


def _echo_table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    """Left-aligned first column, right-aligned numbers, last column free text."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        cells = [row[0].ljust(widths[0])]
        cells += [cell.rjust(width) for cell, width in zip(row[1:-1], widths[1:-1], strict=True)]
        cells.append(row[-1])
        click.echo("  ".join(cells).rstrip())


@main.command("import")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--survey", "survey_name", required=True, metavar="NAME",
              help="A survey added with 'surveykit survey add'.")
@click.option("--format", "file_format", type=click.Choice(["auto", "long", "wide"]),
              default="auto", show_default=True,
              help="long: respondent_id,question_id,answer; wide: respondent_id and one column "
                   "per question; auto: decided by the header.")
@click.option("--skip-invalid", is_flag=True,
              help="Import the good rows and write the bad ones to --rejects.")
@click.option("--rejects", "rejects", type=click.Path(dir_okay=False), default=None,
              metavar="FILE", help="CSV for the rows --skip-invalid leaves out (the file's "
                                   "columns plus _line and _reason).")
@click.option("--replace", is_flag=True,
              help="Overwrite answers that earlier imports gave for the same respondent and "
                   "question (otherwise they are conflicts).")
@db_option
@click.option("--output", "fmt", type=FORMAT_TEXT_JSON, default="text", show_default=True,
              help="How to print the summary (--format is the file layout).")
def import_command(file, survey_name, file_format, skip_invalid, rejects, replace, db_url, fmt):
    """Import a response CSV (long or wide) into a survey, all or nothing.

    Answers are yes/y/1/true, no/n/0/false, dont_know/don't know/dk (any case)
    or the survey's aliases; an empty cell is a missing answer. UTF-8 (with or
    without BOM), comma or semicolon separated. A file with any bad row imports
    nothing and lists every bad row (line, column, value, reason); importing
    the same file twice changes nothing.

    Example: surveykit import answers.csv --survey academic_integrity
    """
    from surveykit.store import open_engine
    from surveykit.store.importer import import_responses

    if skip_invalid and rejects is None:
        raise click.UsageError("--skip-invalid needs --rejects FILE for the rows it leaves out")
    if rejects is not None and not skip_invalid:
        raise click.UsageError("--rejects is only used with --skip-invalid")
    engine = open_engine(db_url)
    size = Path(file).stat().st_size if Path(file).is_file() else 0
    with progress_bar(size, "Importing") as advance:
        done = 0

        def progress(position: int, _total: int) -> None:
            nonlocal done
            if position > done:
                advance(position - done)
                done = position

        result = import_responses(engine, file, survey_name, fmt=file_format,
                                  skip_invalid=skip_invalid, rejects_path=rejects,
                                  replace=replace, progress=progress)
    if fmt == "json":
        print_json(result.to_dict())
        return
    if result.already_imported:
        click.echo(f"{file} was already imported into {survey_name!r} (import "
                   f"#{result.import_id}, {result.imported_at:%Y-%m-%d %H:%M} UTC, same "
                   "sha256); nothing changed.")
        return
    click.echo(f"Imported {file} ({result.file_format} layout) into {survey_name!r} as import "
               f"#{result.import_id}: {count(result.rows_read, 'row')} read, "
               f"{count(result.imported, 'answer')} added, {result.replaced} replaced, "
               f"{result.missing} missing (empty cells), "
               f"{count(result.rejected, 'row')} rejected.")
    if result.rejects_path is not None:
        click.echo(f"Rejected rows, with their reasons: {result.rejects_path}")


@main.command("counts")
@click.option("--survey", "survey_name", required=True, metavar="NAME",
              help="A survey added with 'surveykit survey add'.")
@db_option
@click.option("--format", "fmt", type=FORMAT_TEXT_JSON, default="text", show_default=True)
def counts_command(survey_name, db_url, fmt):
    """Count yes, no, don't know and missing answers per question (in SQL).

    missing: respondents who answered some question of the survey but left
    this one empty. Issued questionnaires that never came back are not missing.

    Example: surveykit counts --survey academic_integrity --format json
    """
    from surveykit.store import count_responses, open_engine

    counts = count_responses(open_engine(db_url), survey_name)
    if fmt == "json":
        print_json({"survey": survey_name, "questions": [c.to_dict() for c in counts]})
        return
    header = ("question", "yes", "no", "dont_know", "missing", "")
    _echo_table(header, [(c.question_id, str(c.yes), str(c.no), str(c.dont_know),
                          str(c.missing), "") for c in counts])
