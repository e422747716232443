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
