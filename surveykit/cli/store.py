"""The survey store: init, survey add/list, import, counts."""

from __future__ import annotations

from pathlib import Path

import click

from surveykit.cli.app import (
    FORMAT_TEXT_JSON,
    count,
    data_paths,
    db_option,
    echo_table,
    format_option,
    main,
    open_store,
    print_json,
    progress_bar,
    survey_option,
)
from surveykit.counting import ENGINES
from surveykit.errors import printable, summarize_kinds

# -- the survey store: init, survey add/list, import, counts ---------------------------

@main.command("init")
@db_option
@click.option("--example", is_flag=True,
              help="Also write the example survey (academic_integrity.toml) and its answers "
                   "(responses_long.csv, responses_wide.csv) into the current folder.")
@format_option
def init_command(db_url, example, fmt):
    """Create the database, or upgrade it to this surveykit's schema.

    Runs the Alembic migrations shipped with surveykit; running it again is
    harmless. A database of another application is refused, never changed.

    \b
    Examples:
      surveykit init --db sqlite:///fieldwork.db
      surveykit init --example     # and the example files, to follow the README
    """
    from surveykit.example import check_example, write_example
    from surveykit.store import display_url, init_database

    if example:
        check_example(".")  # before the database: a conflict leaves everything as it was
    engine = open_store(db_url)
    revision = init_database(engine)
    written = [str(path) for path in write_example(".")] if example else []
    if fmt == "json":
        print_json({"database": display_url(engine), "revision": revision,
                    **({"example_files": written} if example else {})})
        return
    click.echo(f"Database {display_url(engine)} is ready (schema revision {revision}).")
    if example:
        click.echo("Example files in this folder: academic_integrity.toml (the survey), "
                   "responses_long.csv and responses_wide.csv (its answers).")
        click.echo("Next: surveykit survey add academic_integrity.toml")


@main.group("survey", cls=click.Group)
def survey_group() -> None:
    """Add survey definitions (TOML) to the database, update their import mapping, list them."""


@survey_group.command("add")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@db_option
@format_option
def survey_add_command(file, db_url, fmt):
    """Check a survey definition FILE (TOML) and store it.

    The file names the survey, its default design and its questions, each
    with an optional design and answer aliases ('surveykit init --example'
    writes an example, academic_integrity.toml). Everything generate, report,
    export and serve need is checked here, so a survey that is added works
    with all of them. Adding the same file again changes nothing.
    Example: surveykit survey add academic_integrity.toml
    """
    from surveykit.store import add_survey, display_url

    survey = _checked_survey(file)
    engine = open_store(db_url)
    added = add_survey(engine, survey)
    if fmt == "json":
        print_json({"survey": survey.name, "questions": [q.id for q in survey.questions],
                    "added": added, "database": display_url(engine)})
        return
    if added:
        click.echo(f"Added survey {survey.name!r} ({count(len(survey.questions), 'question')}) to "
                   f"{display_url(engine)}.")
    else:
        click.echo(f"Survey {survey.name!r} is already in {display_url(engine)} with this "
                   "definition; nothing changed.")


@survey_group.command("update")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@db_option
@format_option
def survey_update_command(file, db_url, fmt):
    """Store an edited survey FILE as the next version of the stored survey of its name.

    Only the [import] profile (columns, labels, respondent id and group
    columns, columns to ignore) may change, and aliases may be added:
    questions and designs never change once answers were randomized with
    them. Earlier imports keep the version they were read with.
    Example: surveykit survey update academic_integrity.toml
    """
    from surveykit.store import display_url, update_survey

    survey = _checked_survey(file)
    engine = open_store(db_url)
    update = update_survey(engine, survey)
    if fmt == "json":
        print_json({**update.to_dict(), "database": display_url(engine)})
        return
    if update.version == update.previous:
        click.echo(f"Survey {survey.name!r} in {display_url(engine)} already has this "
                   f"definition (version {update.version}); nothing changed.")
        return
    click.echo(f"Updated survey {survey.name!r} to version {update.version} "
               f"({', '.join(update.changed)} changed); earlier imports keep version "
               f"{update.previous} or before.")


def _checked_survey(file):
    """The survey FILE defines, checked for all that generate, report, export and serve need."""
    from surveykit.definition.survey import load_survey_file
    from surveykit.workflows.readiness import check_survey

    survey = load_survey_file(file)
    check_survey(survey, str(file))
    return survey


@survey_group.command("list")
@db_option
@format_option
def survey_list_command(db_url, fmt):
    """List the stored surveys with their questions, issued ids and answers."""
    from surveykit.store import list_surveys

    summaries = list_surveys(open_store(db_url))
    if fmt == "json":
        print_json({"surveys": [summary.to_dict() for summary in summaries]})
        return
    if not summaries:
        click.echo("No surveys yet: add one with 'surveykit survey add FILE'.")
        return
    header = ("name", "questions", "issued", "respondents", "answers", "imports", "title")
    rows = [(s.name, str(s.questions), str(s.issued), str(s.respondents), str(s.answers),
             str(s.imports), printable(s.title)) for s in summaries]
    echo_table(header, rows)


@main.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@survey_option
@click.option("--layout", "file_format", type=click.Choice(["auto", "long", "wide"]),
              default=None, help="long: respondent_id,question_id,answer; wide: "
                                 "respondent_id and one column per question; auto: decided "
                                 "by the header.  [default: auto]")
@click.option("--format", "old_layout", type=click.Choice(["auto", "long", "wide"]),
              default=None, hidden=True,
              help="Deprecated: the file layout, now --layout.")
@click.option("--skip-invalid", is_flag=True,
              help="Import the good rows and write the bad ones to --rejects.")
@click.option("--rejects", "rejects", type=click.Path(dir_okay=False), default=None,
              metavar="FILE", help="CSV for the rows --skip-invalid leaves out (the file's "
                                   "columns plus _line and _reason).")
@click.option("--replace", is_flag=True,
              help="Overwrite answers that earlier imports gave differently for the same "
                   "respondent and question (otherwise they are refused); the same answer "
                   "again is unchanged either way.")
@click.option("--dry-run", is_flag=True,
              help="Show how the columns map and what the import would add, and change "
                   "nothing (no rejects file either).")
@click.option("--decimal-comma", is_flag=True,
              help="The numeric answers of this CSV file are written with a decimal comma "
                   "(1234,5), as spreadsheets in many languages save them; without it a dot "
                   "is the decimal sign. Thousands separators are refused either way.")
@db_option
@click.option("--output", "fmt", type=FORMAT_TEXT_JSON, default="text", show_default=True,
              help="How to print the summary.")
def import_command(file, survey_name, file_format, old_layout, skip_invalid, rejects, replace,
                   dry_run, decimal_comma, db_url, fmt):
    """Import a response file into a survey, all or nothing.

    CSV (UTF-8 with or without BOM; comma, semicolon or tab), Excel (.xlsx,
    .xls: the first sheet) or an ODK Central .zip; long or wide layout.
    Exports of KoboToolbox, ODK Central, Google Forms and LimeSurvey are read
    as exported: their metadata columns are ignored, group prefixes
    (group/question, group-question) stripped, question texts matched; the
    survey's [import] profile maps the rest. Answers are yes/y/1/true,
    no/n/0/false, dont_know/don't know/dk (any case), the design's other
    answers, or the survey's aliases; a numeric question's answers are numbers
    (1234.5, or 1234,5 with --decimal-comma; no thousands separators; within
    its decimals and the answers its design gives for its range) or, when its
    design has the "don't know" branch, "don't know"; an empty cell is a
    missing answer, never 0. A
    file with any bad row imports nothing and lists every bad row (line,
    column, value, reason) after a one-line summary by reason; importing the
    same file twice changes nothing. A cumulative export (every submission so
    far, as KoboToolbox and ODK Central give) imports again each day: answers
    stored before are unchanged, new ones added, changed ones refused unless
    --replace ('surveykit docs field-imports').

    Example: surveykit import answers.csv --survey academic_integrity --dry-run
    """
    from surveykit.store.importer import describe_columns, import_responses

    if old_layout is not None:
        if file_format is not None and file_format != old_layout:
            raise click.UsageError(f"--layout {file_format} and --format {old_layout} both give "
                                   "the file layout; give --layout only")
        click.echo(f"Note: --format {old_layout} is deprecated for the file layout; use "
                   f"--layout {old_layout}", err=True)
        file_format = old_layout
    file_format = "auto" if file_format is None else file_format
    if skip_invalid and rejects is None and not dry_run:
        raise click.UsageError("--skip-invalid needs --rejects FILE for the rows it leaves out")
    if rejects is not None and not skip_invalid:
        raise click.UsageError("--rejects is only used with --skip-invalid")
    engine = open_store(db_url)
    if dry_run and fmt == "text":
        # the mapping first: it is what a dry run is for, even when rows are bad
        click.echo(f"Dry run: {printable(file)} into {survey_name!r}; nothing will be changed.")
        click.echo("Columns:")
        for line in describe_columns(engine, file, survey_name, fmt=file_format):
            click.echo(f"  {printable(line)}")
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
                                  replace=replace, dry_run=dry_run, progress=progress,
                                  decimal_comma=decimal_comma)
    if fmt == "json":
        print_json(result.to_dict())
        return
    if result.already_imported:
        click.echo(f"{printable(file)} was already imported into {survey_name!r} (import "
                   f"#{result.import_id}, {result.imported_at:%Y-%m-%d %H:%M} UTC, same "
                   "sha256); nothing changed.")
        return
    numbers = (f"{count(result.rows_read, 'row')} read, {count(result.imported, 'answer')} "
               f"added, {result.unchanged} unchanged, {result.replaced} replaced, "
               f"{count(result.refused, 'row')} refused (changed answers), {result.missing} "
               f"missing (empty cells), {count(result.rejected, 'row')} rejected.")
    if result.covariates is not None:
        added = result.covariates - result.covariates_replaced
        numbers = numbers[:-1] + (f", {count(added, 'covariate value')} added, "
                                  f"{result.covariates_unchanged} unchanged, "
                                  f"{result.covariates_replaced} replaced.")
    if dry_run:
        click.echo(f"Would import ({result.file_format} layout, survey version "
                   f"{result.survey_version}): {numbers}")
        for question, groups in result.answer_changes.items():
            for group, answers in groups.items():
                where = f" (group {group})" if len(groups) > 1 or group != "1" else ""
                click.echo(f"  {question}{where}: " + ", ".join(
                    f"{label} {n:+d}" for label, n in answers.items()))
    else:
        click.echo(f"Imported {printable(file)} ({result.file_format} layout) into "
                   f"{survey_name!r} as import #{result.import_id}: {numbers}")
    if result.rejected_by_reason:
        click.echo(f"Rejected rows by reason: {summarize_kinds(result.rejected_by_reason)}.")
    if result.rejects_path is not None:
        click.echo(f"Rejected rows, with their reasons: {printable(result.rejects_path)}")
    for note in result.notes:
        click.echo(f"Note: {printable(note)}")
    if dry_run:
        click.echo("Dry run: nothing was changed.")


def _echo_numeric(numeric, more: bool) -> None:
    """The numeric questions' sums: one line per question and group."""
    rows = []
    for c in numeric:
        groups = list(c.counts) or [("-", None)]
        for i, (group, sums) in enumerate(groups):
            rows.append((c.question_id if i == 0 else "", group,
                         f"{sums.n:,}" if sums else "0", f"{sums.total:.15g}" if sums else "0",
                         f"{sums.sum_squares:.15g}" if sums else "0",
                         f"{sums.dont_know:,}" if sums else "0",
                         str(c.missing) if i == 0 else ""))
    echo_table(("numeric question", "group", "n", "sum", "sum_squares", "dont_know",
                "missing"), rows)
    if more:
        click.echo("")


@main.command("counts")
@survey_option
@click.option("--data", "data", multiple=True, metavar="PATH",
              help="Count these CSV, XLSX or Parquet files, globs or directories (several may "
                   "follow one --data: --data exports/*.csv) instead of the stored answers; "
                   "nothing is imported.")
@click.option("--engine", "engine_name", type=click.Choice(ENGINES), default="duckdb",
              show_default=True, help="What counts --data: DuckDB here, or Dask (a cluster "
                                      "with --scheduler, else local threads).")
@click.option("--scheduler", metavar="ADDRESS", default=None,
              help="The dask.distributed scheduler for --engine dask (tcp://host:8786).")
@click.option("--replace", is_flag=True,
              help="With --data: a later file's answer replaces an earlier file's for the "
                   "same respondent and question (as 'import --replace' would).")
@db_option
@click.option("--decimal-comma", is_flag=True,
              help="With --data: the CSV files write numeric answers with a decimal comma "
                   "(1234,5), as 'import --decimal-comma'.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "csv"]), default="text",
              show_default=True, help="csv: a counts table (survey, question, group, response, "
                                      "count) that 'report --counts-file' reads; for a survey "
                                      "with [sampling], sums of weights per stratum, PSU, "
                                      "fpc, group and response, and of the producer's "
                                      "replicate weights (rep1 ...) when it declares them "
                                      "('surveykit docs complex-samples').")
@click.argument("more_data", nargs=-1, type=click.Path(), metavar="[PATH]...")
def counts_command(survey_name, data, engine_name, scheduler, replace, db_url, decimal_comma,
                   fmt, more_data):
    """Count yes, no, don't know and missing answers per question (in SQL).

    A numeric question gets, per group, its number of numeric answers n, their
    sum and sum of squares, and its "don't know" answers: all the estimates of
    its mean need. missing: respondents who answered some question of the survey
    but left this one empty. Issued questionnaires that never came back are not missing.
    With --data the files are counted where they lie, with the checks and
    messages of 'import' ('surveykit docs scale').

    Example: surveykit counts --survey academic_integrity --format json

    Example: surveykit counts --survey academic_integrity --data exports/*.csv --format csv
    """

    data = data_paths(data, more_data)
    if not data and (engine_name != "duckdb" or scheduler or replace or decimal_comma):
        raise click.UsageError("--engine, --scheduler, --replace and --decimal-comma count "
                               "files: add --data")
    engine = open_store(db_url)
    if fmt == "csv":
        from surveykit.workflows.report import sampling_declared

        if sampling_declared(engine, survey_name):
            if decimal_comma:
                raise click.UsageError("--decimal-comma: the files of a survey with [sampling] "
                                       "are read as 'surveykit import' reads them without it; "
                                       "import them with 'surveykit import --decimal-comma'")
            _weighted_counts_csv(engine, survey_name, data, replace, engine_name, scheduler)
            return
    if data:
        from surveykit.workflows.counting import count_survey_files

        survey, counts = count_survey_files(engine, survey_name, data,
                                            engine_name=engine_name, scheduler=scheduler,
                                            replace=replace, decimal_comma=decimal_comma)
    else:

        from surveykit.store import Database

        with Database(engine) as database:
            reading = database.survey(survey_name).read()
        survey, counts = reading.definition, reading.all_counts()
    # the store and the files list responses as they find them: print both in design order
    numeric = [c for c in counts if getattr(c, "numeric", False)]
    counts = [c.in_order(survey.question(c.question_id).design.response_labels)
              for c in counts if not getattr(c, "numeric", False)]
    if fmt == "csv":
        import io

        from surveykit.counting.table import write_counts_table

        # through click.echo: Click 8.5 deprecates its stream getter
        table = io.StringIO()
        by_id = {c.question_id: c for c in (*counts, *numeric)}
        write_counts_table(table, survey_name, [by_id[q.id] for q in survey.questions
                                                if q.id in by_id])
        click.echo(table.getvalue(), nl=False)
        return
    if fmt == "json":
        by_id = {c.question_id: c.to_dict() for c in (*counts, *numeric)}
        print_json({"survey": survey_name, "questions": [
            by_id[q.id] for q in survey.questions if q.id in by_id]})
        return
    if numeric:
        _echo_numeric(numeric, bool(counts))
        if not counts:
            return
    simple = all(set(c.answers()) <= {"yes", "no", "dont_know"} and len(c.counts.groups) <= 1
                 for c in counts)
    if simple:
        header = ("question", "yes", "no", "dont_know", "missing", "")
        echo_table(header, [(c.question_id, str(c.yes), str(c.no), str(c.dont_know),
                              str(c.missing), "") for c in counts])
        return
    # other answers or several groups: one line per question and group
    rows = []
    for c in counts:
        groups = c.counts.to_dict() or {"-": {}}
        for i, (group, answers) in enumerate(groups.items()):
            shown = ", ".join(f"{label} {n}" for label, n in answers.items()) or "none"
            rows.append((c.question_id if i == 0 else "", group,
                         str(c.missing) if i == 0 else "", shown))
    echo_table(("question", "group", "missing", "answers"), rows)


def _weighted_counts_csv(engine, survey_name, data, replace, engine_name, scheduler) -> None:
    """A survey with [sampling]: its weighted counts table (from the store's one GROUP BY, or
    from --data: one GROUP BY of DuckDB or Dask over the files, or when something is off,
    the files imported into a scratch database with every import check)."""
    import io

    from surveykit.counting.weighted_table import write_weighted_table
    from surveykit.workflows.counting import weighted_cells_of_files, weighted_cells_of_store

    if data:
        survey, cells = weighted_cells_of_files(engine, survey_name, data, replace=replace,
                                                engine_name=engine_name, scheduler=scheduler)
    else:
        survey, cells = weighted_cells_of_store(engine, survey_name)
    table = io.StringIO()
    write_weighted_table(table, survey, cells)
    click.echo(table.getvalue(), nl=False)
