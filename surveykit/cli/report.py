"""The report command."""

from __future__ import annotations

import click

from surveykit.cli.app import db_option, echo_user_text, main
from surveykit.estimation import CI_METHODS, DEFAULT_CI_METHOD
from surveykit.reporting.report import REPORT_FORMATS


@main.command("report")
@click.option("--survey", "survey_name", required=True, help="Name of the stored survey.")
@click.option("--format", "fmt", type=click.Choice(REPORT_FORMATS), default="text",
              show_default=True, help="html is one self-contained file with inline plots.")
@click.option("--out", "out_file", type=click.Path(),
              default=None, help="Write the report to FILE instead of the terminal.")
@click.option("--level", type=float, default=0.95, show_default=True,
              help="Confidence level of the intervals.")
@click.option("--method", type=click.Choice(CI_METHODS), default=DEFAULT_CI_METHOD,
              show_default=True, help="Confidence interval method ('surveykit docs estimation').")
@db_option
def report_command(survey_name, fmt, out_file, level, method, db_url):
    """Print the estimation report of a survey: estimates, privacy, checks.

    For every question: the counts, pi_hat and pi_mle with their standard
    error and confidence interval, the privacy loss in both semantics, the
    don't-know compliance test and (when questionnaires were issued) the
    randomizer audit, with a plain-language warning for every failed check.

    Example: surveykit report --survey academic_integrity --format html --out report.html
    """
    from surveykit.files import output_file, write_atomically
    from surveykit.reporting.report import render_report, report_for_survey
    from surveykit.store import open_engine

    if out_file is not None:
        output_file(out_file, "--out")
    report = report_for_survey(open_engine(db_url), survey_name, level=level, method=method)
    text = render_report(report, fmt)
    if out_file is None:
        echo_user_text(text) if fmt == "text" else click.echo(text, nl=False)
        return
    with write_atomically(out_file) as stream:
        stream.write(text)
    click.echo(f"Wrote the {fmt} report of {survey_name!r} to {out_file} "
               f"({report.warning_count} warning(s)).", err=True)
