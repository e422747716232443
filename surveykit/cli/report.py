"""The report command."""

from __future__ import annotations

import click

from surveykit.cli.app import data_paths, db_option, echo_user_text, main, open_store
from surveykit.counting import ENGINES
from surveykit.estimation import CI_METHODS, DEFAULT_CI_METHOD
from surveykit.reporting.report import REPORT_FORMATS
from surveykit.sampling.design import VARIANCE_METHODS


@main.command("report")
@click.option("--survey", "survey_name", default=None,
              help="Name of the stored survey (with --counts-file: taken from the file).")
@click.option("--format", "fmt", type=click.Choice(REPORT_FORMATS), default="text",
              show_default=True, help="html is one self-contained file with inline plots.")
@click.option("--out", "out_file", type=click.Path(),
              default=None, help="Write the report to FILE instead of the terminal.")
@click.option("--level", type=float, default=0.95, show_default=True,
              help="Confidence level of the intervals.")
@click.option("--method", type=click.Choice(CI_METHODS), default=None,
              help="Confidence interval method for the questions whose design has it; the "
                   "others keep their design's default, and the report says which  [default: "
                   f"each design's own: {DEFAULT_CI_METHOD} for one-group yes/no designs, "
                   "likelihood-ratio otherwise] ('surveykit docs estimation').")
@db_option
@click.option("--data", "data", multiple=True, metavar="PATH",
              help="Report on these CSV, XLSX or Parquet files, globs or directories (several "
                   "may follow one --data), counted where they lie, instead of the stored "
                   "answers (see 'counts --data').")
@click.option("--engine", "engine_name", type=click.Choice(ENGINES), default="duckdb",
              show_default=True, help="What counts --data (see 'counts --help').")
@click.option("--scheduler", metavar="ADDRESS", default=None,
              help="The dask.distributed scheduler for --engine dask.")
@click.option("--replace", is_flag=True,
              help="With --data: later files' answers replace earlier ones.")
@click.option("--decimal-comma", is_flag=True,
              help="With --data: the CSV files write numeric answers with a decimal comma "
                   "(1234,5), as 'import --decimal-comma'.")
@click.option("--counts-file", "counts_file", type=click.Path(dir_okay=False), default=None,
              help="Report on a counts table (CSV: survey, question, group, response, count; "
                   "or counts JSON) made anywhere; 'surveykit docs scale'. A survey with "
                   "[sampling] reads weighted counts too: 'surveykit docs complex-samples' "
                   "(stratum, psu, fpc, group, response, weight, n, weight2).")
@click.option("--variance", type=click.Choice(VARIANCE_METHODS), default=None,
              help="A survey with [sampling]: the design-based variance (default "
                   "linearization; 'surveykit docs complex-samples').")
@click.option("--by", "by", metavar="COLUMN", default=None,
              help="Estimates per value of this covariate (or design column) too: domains, "
                   "as survey::svyby; without [sampling], for numeric questions only.")
@click.argument("more_data", nargs=-1, type=click.Path(), metavar="[PATH]...")
def report_command(survey_name, fmt, out_file, level, method, db_url, data, engine_name,
                   scheduler, replace, decimal_comma, counts_file, more_data, variance, by):
    """Print the estimation report of a survey: estimates, privacy, checks.

    For every question: the counts, pi_hat and pi_mle with their standard
    error and confidence interval, the privacy loss in both semantics, the
    don't-know compliance test and (when questionnaires were issued) the
    randomizer audit, with a plain-language warning for every failed check.

    Example: surveykit report --survey academic_integrity --format html --out report.html

    Example: surveykit report --survey academic_integrity --data exports/*.parquet

    A survey whose file has [sampling] gets design-based estimates too (weights,
    strata, clusters): surveykit report --survey api_strat --by stype --format json
    """
    from surveykit.files import output_file, write_atomically
    from surveykit.reporting.report import render_report
    from surveykit.workflows.report import report_for_survey

    if out_file is not None:
        output_file(out_file, "--out")
    data = data_paths(data, more_data)
    if decimal_comma and not data:
        raise click.UsageError("--decimal-comma reads the numbers of --data files: add --data")
    if data and counts_file:
        raise click.UsageError("give --data or --counts-file, not both")
    if survey_name is None and not counts_file:
        raise click.UsageError("Missing option '--survey'.")
    if by and (data or counts_file):
        raise click.UsageError("--by reports on the stored answers of a survey with "
                               "[sampling], not on --data or --counts-file")
    if variance not in (None, "linearization", "replicates") and (data or counts_file):
        raise click.UsageError(f"--variance {variance} reads every respondent's row: report on "
                               "the stored answers; --data and --counts-file take "
                               "linearization, or replicates (the producer's replicate weights)")
    if counts_file:
        from surveykit.counting.weighted_table import is_weighted_table
        from surveykit.workflows.counting import report_for_counts_file

        if is_weighted_table(counts_file):  # sums of weights per stratum, PSU, ...
            from surveykit.workflows.complex_samples import (
                complex_report_for_counts_file,
                render_complex_report,
            )

            report = complex_report_for_counts_file(open_store(db_url), counts_file,
                                                    survey_name, level=level, method=method,
                                                    variance=variance or "linearization")
            render_report = render_complex_report  # noqa: F811 -- same formats, one more part
        else:
            if variance:
                raise click.UsageError("--variance: a counts file of plain counts has no "
                                       "sampling design (a weighted counts file has weight "
                                       "and n columns)")
            report = report_for_counts_file(open_store(db_url), counts_file, survey_name,
                                            level=level, method=method)
        survey_name = report.survey
    elif data:
        from surveykit.workflows.counting import report_for_files
        from surveykit.workflows.report import sampling_declared

        engine = open_store(db_url)
        if sampling_declared(engine, survey_name):  # weighted cells of the files
            if decimal_comma:
                raise click.UsageError("--decimal-comma: the files of a survey with [sampling] "
                                       "are read by the importer; import them with 'surveykit "
                                       "import --decimal-comma' and report on the store")
            from surveykit.workflows.complex_samples import (
                complex_report_for_files,
                render_complex_report,
            )

            report = complex_report_for_files(engine, survey_name, data, replace=replace,
                                              level=level, method=method,
                                              engine_name=engine_name, scheduler=scheduler,
                                              variance=variance or "linearization")
            render_report = render_complex_report  # noqa: F811 -- same formats, one more part
        else:
            if variance:
                raise click.UsageError(f"--variance: survey {survey_name!r} has no [sampling] "
                                       "section, so its report assumes simple random sampling")
            report = report_for_files(engine, survey_name, data,
                                      engine_name=engine_name, scheduler=scheduler,
                                      replace=replace, level=level, method=method,
                                      decimal_comma=decimal_comma)
    else:
        engine = open_store(db_url)
        from surveykit.workflows.report import sampling_declared

        if variance or sampling_declared(engine, survey_name):
            from surveykit.workflows.complex_samples import (
                complex_report_for_survey,
                render_complex_report,
            )

            report = complex_report_for_survey(engine, survey_name,
                                               variance=variance or "linearization", by=by,
                                               level=level, method=method)
            render_report = render_complex_report  # noqa: F811 -- same formats, one more part
        else:
            report = report_for_survey(engine, survey_name, level=level, method=method,
                                       by=by)
    text = render_report(report, fmt)
    if out_file is None:
        echo_user_text(text) if fmt == "text" else click.echo(text, nl=False)
        return
    with write_atomically(out_file) as stream:
        stream.write(text)
    click.echo(f"Wrote the {fmt} report of {survey_name!r} to {out_file} "
               f"({report.warning_count} warning(s)).", err=True)
