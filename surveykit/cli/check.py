"""``surveykit check``: the kept counts of a survey against its stored answers."""

from __future__ import annotations

import click

from surveykit.cli.app import (
    db_option,
    echo_table,
    format_option,
    main,
    open_store,
    print_json,
    survey_option,
)
from surveykit.errors import clip, printable


@main.command("check")
@survey_option
@click.option("--repair", is_flag=True,
              help="Rebuild the kept counts from the answers (after a difference).")
@db_option
@format_option
def check_command(survey_name, repair, db_url, fmt):
    """Recount a survey's answers and compare them with the counts kept for it.

    'counts' and 'report' read counts that every import, replacement and web
    submission keeps in its own transaction. This recomputes them from the
    stored answers (one pass over them) and lists every cell that differs,
    every kept row the survey cannot have (changed outside surveykit) and
    every stored answer it cannot count; it exits with status 1 if any. --repair
    then rewrites the kept counts from the answers; what the answers cannot
    rebuild (answers or a definition changed by hand) is reported, status 1.
    On a survey with [sampling] --repair also rewrites its kept weighted cells
    from the answers and design values (a design value changed by hand).

    Example: surveykit check --survey academic_integrity
    """
    from surveykit.store.answer_counts import CountsMismatch, check_counts, rebuild_counts

    engine = open_store(db_url)
    result = rebuild_counts(engine, survey_name) if repair else check_counts(engine, survey_name)
    repaired = repair and result.repairable
    if fmt == "json":
        print_json({**result.to_dict(), "repaired": repaired})
    elif _rows(result):
        echo_table(("question", "group", "answer", "kept", "counted", ""), _rows(result))
    if result.ok:
        if fmt == "text":
            click.echo(result.summary()[0].upper() + result.summary()[1:] + ".")
        return
    if repaired and fmt == "text":
        after = check_counts(engine, survey_name)
        click.echo(f"Rebuilt the kept counts of survey {survey_name!r} from its answers: "
                   f"{after.cells:,} cells, {after.answers:,} answers, "
                   f"{after.respondents:,} respondents.")
    if repair and not (result.uncountable or result.definition):
        return
    raise CountsMismatch("; ".join(result.unrepairable()) if repair else result.summary())


def _rows(result) -> list[tuple[str, ...]]:
    """The table of differences; every value read from the database is shown escaped
    (an answer label changed by hand may hold a terminal's escape sequence)."""
    def cell(value: object, limit: int = 60) -> str:
        return printable(clip(str(value), limit))

    rows = [(cell(d.question), cell(d.group), cell(d.answer),
             "?" if d.kept is None else str(d.kept), str(d.counted), cell(d.problem, 120))
            for d in result.differences]
    rows += [(cell(u.question), cell(u.group), cell(u.answer), "-", str(u.answers),
              cell(f"not counted: {u.problem}", 120)) for u in result.uncountable]
    if result.kept_respondents != result.respondents:
        kept = "?" if result.kept_respondents is None else str(result.kept_respondents)
        rows.append(("respondents", "", "", kept, str(result.respondents), ""))
    if result.listed_respondents != result.respondents:
        rows.append(("respondent ids", "", "", str(result.listed_respondents),
                     str(result.respondents), ""))
    return rows
