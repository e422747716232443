"""``surveykit docs``: the guides, readable in an installed copy."""

from __future__ import annotations

import click

from surveykit.cli.app import main


@main.command("docs")
@click.argument("topic", required=False, metavar="[TOPIC]")
@click.option("--path", "show_path", is_flag=True, help="Print where the guide's file is.")
def docs_command(topic, show_path):
    """Print one of surveykit's guides (Markdown), or list them.

    Example: surveykit docs questionnaires | less
    """
    from surveykit.guides import TOPICS, guide_path, guide_text

    if topic is None:
        click.echo("Guides (surveykit docs TOPIC):")
        width = max(len(name) for name in TOPICS)
        for name, about in TOPICS.items():
            click.echo(f"  {name:<{width}}  {about}")
        return
    if show_path:
        click.echo(str(guide_path(topic)))
        return
    click.echo(guide_text(topic), nl=False)


@main.command("schema")
@click.option("--out", "out_file", type=click.Path(dir_okay=False), metavar="FILE",
              help="Write the schema to FILE instead of printing it.")
def schema_command(out_file):
    """Print the JSON Schema of survey files, for editors that complete and check TOML.

    With taplo or VS Code's Even Better TOML, put '#:schema ./survey.schema.json' on the
    first line of a survey file ('surveykit docs survey-file').

    Example: surveykit schema --out survey.schema.json
    """
    from surveykit.definition.survey_schema import SCHEMA_PATH
    from surveykit.files import output_file, write_atomically

    text = SCHEMA_PATH.read_text(encoding="utf-8")
    if out_file is None:
        click.echo(text, nl=False)
        return
    output_file(out_file, "--out")
    with write_atomically(out_file) as stream:
        stream.write(text)
    click.echo(f"Wrote the survey file's JSON Schema to {out_file}", err=True)
