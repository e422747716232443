"""``surveykit check``: the kept counts of a survey against its stored answers."""

from __future__ import annotations

import click

from surveykit.cli.app import FORMAT_TEXT_JSON, db_option, echo_table, main, print_json


@main.command("check")
@click.option("--survey", "survey_name", required=True, metavar="NAME",
              help="A survey added with 'surveykit survey add'.")
@click.option("--repair", is_flag=True,
              help="Rebuild the kept counts from the answers (after a difference).")
@db_option
@click.option("--format", "fmt", type=FORMAT_TEXT_JSON, default="text", show_default=True)
def check_command(survey_name, repair, db_url, fmt):
    """Recount a survey's answers and compare them with the counts kept for it.

    'counts' and 'report' read counts that every import, replacement and web
    submission keeps in its own transaction. This recomputes them from the
    stored answers (one pass over them) and lists every cell that differs;
    it exits with status 1 if any does. --repair then rewrites the kept
    counts from the answers.

    Example: surveykit check --survey academic_integrity
    """
    from surveykit.store import open_engine
    from surveykit.store.answer_counts import CountsMismatch, check_counts, rebuild_counts

    engine = open_engine(db_url)
    result = rebuild_counts(engine, survey_name) if repair else check_counts(engine, survey_name)
    if fmt == "json":
        print_json({**result.to_dict(), "repaired": bool(repair and not result.ok)})
    elif not result.ok:
        rows = [(d.question, str(d.group), d.answer, str(d.kept), str(d.counted), "")
                for d in result.differences]
        if result.kept_respondents != result.respondents:
            rows.append(("respondents", "", "", str(result.kept_respondents),
                         str(result.respondents), ""))
        if result.listed_respondents != result.respondents:
            rows.append(("respondent ids", "", "", str(result.listed_respondents),
                         str(result.respondents), ""))
        echo_table(("question", "group", "answer", "kept", "counted", ""), rows)
    if result.ok:
        if fmt == "text":
            click.echo(result.summary()[0].upper() + result.summary()[1:] + ".")
        return
    if repair:
        if fmt == "text":
            after = check_counts(engine, survey_name)
            click.echo(f"Rebuilt the kept counts of survey {survey_name!r} from its answers: "
                       f"{after.cells:,} cells, {after.answers:,} answers, "
                       f"{after.respondents:,} respondents.")
        return
    raise CountsMismatch(result.summary())
