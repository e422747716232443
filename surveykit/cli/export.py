"""Exporting a survey for field tools: ``surveykit export xlsform``."""

from __future__ import annotations

import click

from surveykit.cli.app import (
    db_option,
    format_option,
    main,
    open_store,
    print_json,
    survey_option,
)
from surveykit.errors import printable


@main.group("export", cls=click.Group)
def export_group() -> None:
    """Export a stored survey for other tools (ODK, KoboToolbox, Enketo)."""


@export_group.command("xlsform")
@survey_option
@click.option("--out", required=True, type=click.Path(dir_okay=False), metavar="FILE",
              help="The XLSForm workbook to write (.xlsx); an earlier one is replaced.")
@click.option("--randomize", type=click.Choice(["self", "device"]), default="self",
              show_default=True,
              help="self: respondents roll dice and the form shows the die table (private "
                   "on every client); device: the form draws each rule (not private on "
                   "ODK Collect, needs --acknowledge-risk).")
@click.option("--acknowledge-risk", is_flag=True,
              help="Write the --randomize device form despite its two limits "
                   "('surveykit docs field-collection').")
@click.option("--templates", "templates_dir", type=click.Path(exists=True, file_okay=False),
              default=None,
              metavar="DIR", help="Folder with your own wording.json (e.g. a translation).")
@db_option
@format_option
def export_xlsform_command(survey_name, out, randomize, acknowledge_risk, templates_dir, db_url,
                           fmt):
    """Write the survey as an XLSForm for ODK Collect, KoboToolbox, Enketo and Web Forms.

    The form asks the respondent id (checked), the group for multi-group
    surveys, and each question as a choice of the design's answers. By
    default respondents roll dice in private and the form shows which faces
    mean which rule, so the device never knows the rule. 'surveykit docs field-collection'
    explains deploying the form and what is private on which client.

    Example: surveykit export xlsform --survey academic_integrity --out form.xlsx
    """
    from surveykit.workflows.export import export_xlsform

    result = export_xlsform(open_store(db_url), survey_name, out=out, randomize=randomize,
                            acknowledge_risk=acknowledge_risk, templates_dir=templates_dir)
    if fmt == "json":
        print_json(result.to_dict())
        return
    how = ("respondents roll dice (self-randomized)" if randomize == "self"
           else "the device draws each rule")
    click.echo(f"wrote {printable(str(result.path))}: XLSForm {result.form_id!r} version "
               f"{result.version}, {len(result.answer_fields)} question(s), {how}")
    for number, risk in enumerate(result.risks, start=1):
        click.echo(f"Limit {number}: {risk}")
    click.echo("Upload it to ODK Central or KoboToolbox ('surveykit docs field-collection').")
