"""Issuing respondent ids and writing questionnaires."""

from __future__ import annotations

from pathlib import Path

import click

from surveykit.cli.app import (
    FORMAT_TEXT_JSON,
    db_option,
    main,
    open_store,
    print_json,
    progress_bar,
    survey_option,
)


@main.command("generate")
@survey_option
@click.option("--respondents", type=click.IntRange(min=1), default=None, metavar="N",
              help="How many questionnaires (respondent ids) to issue (or give --frame).")
@click.option("--frame", "frame_file", type=click.Path(exists=True, dir_okay=False),
              default=None, metavar="FILE",
              help="A sample frame (CSV or .xlsx, one row per sampled unit with the "
                   "survey's [sampling] columns): one id per unit, its design values "
                   "stored for the id, the list of ids written to OUT/frame-ids.csv. "
                   "Once per survey.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), required=True, metavar="DIR",
              help="New folder for the questionnaire files (created if missing).")
@click.option("--mode", type=click.Choice(["slips", "die"]), default="slips", show_default=True,
              help="slips: a private instruction slip per respondent plus an answer sheet; "
                   "die: one form for all, respondents roll dice.")
@click.option("--format", "fmt", type=click.Choice(["html", "markdown"]), default="html",
              show_default=True, help="Print-ready HTML or Markdown.")
@click.option("--key-file", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Also write respondent_id,group,question_id,code to this CSV, for audits "
                   "only: it undoes the protection; keep it away from the answers.")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Reproducible ids, groups and instructions, for tests only: anyone with "
                   "the seed can recompute every instruction.  "
                   "[default: operating-system entropy]")
@click.option("--templates", "templates_dir", type=click.Path(exists=True, file_okay=False),
              default=None,
              metavar="DIR", help="Folder with your own templates (and wording.json); files "
                                  "missing there come from surveykit's templates.")
@click.option("--per-file", type=click.IntRange(min=1), default=500, show_default=True,
              help="Questionnaires per output file (one per printed page).")
@db_option
@click.option("--output", "output", type=FORMAT_TEXT_JSON, default="text", show_default=True,
              help="How to print the summary of what was written (--format is the "
                   "questionnaires' file format).")
def generate_command(survey_name, respondents, frame_file, out_dir, mode, fmt, key_file, seed,
                     templates_dir, per_file, db_url, output):
    """Issue respondent ids and write randomized questionnaires.

    Each respondent's instruction per question (answer truthfully, answer
    "yes" whatever the truth is, answer another question, ... as the
    question's design says) and, in multi-group surveys, their group (form
    version, balanced across groups) come from operating-system entropy. The
    instructions go to the slips only: the database gets the issued ids with
    their groups and, for the randomizer audit, the run's per-question
    instruction totals if it has at least 50 respondents per form version
    (a smaller run's totals would reveal its instructions); nothing printed
    depends on the instructions drawn.
    'surveykit docs questionnaires' explains how to print and hand out the files.

    With --frame (a survey with [sampling]) each unit of the sample frame
    gets one id and its design values (weight, strata, clusters, fpc,
    replicate weights) are stored for the id, so the answer files need not
    carry them; they are printed on no questionnaire. frame-ids.csv in the
    --out folder lists the ids beside the frame's rows. A survey takes one
    frame: running it again is refused ('surveykit docs complex-samples').

    Example: surveykit generate --survey academic_integrity --respondents 300 --out forms

    Example: surveykit generate --survey households --frame frame.csv --out forms
    """
    from surveykit.collection.generation import KEY_FILE_WARNING, check_key_file
    from surveykit.collection.randomizer import SEED_WARNING
    from surveykit.definition.limits import AUDIT_MINIMUM_PER_GROUP
    from surveykit.files import output_folder
    from surveykit.store import display_url
    from surveykit.workflows.generate import generate_questionnaires

    if (respondents is None) == (frame_file is None):
        raise click.UsageError("give --respondents N or --frame FILE (one id per unit of the "
                               "sample frame), not both and not neither")
    # paths first: a mistyped folder fails before any warning or work
    output_folder(out_dir, "--out")
    if key_file is not None and mode == "slips":
        check_key_file(Path(key_file), Path(out_dir))
    if seed is not None:
        click.echo(SEED_WARNING, err=True)
    if key_file is not None:
        click.echo(KEY_FILE_WARNING.format(path=key_file), err=True)
    engine = open_store(db_url)
    options = {"out_dir": out_dir, "mode": mode, "fmt": fmt,
               "key_file": key_file, "templates_dir": templates_dir, "per_file": per_file,
               "seed": seed}
    if frame_file is not None:
        from surveykit.workflows.frames import generate_from_frame, load_frame

        frame = load_frame(engine, survey_name, frame_file)  # read and checked first
        with progress_bar(frame.units, "Generating") as advance:
            result = generate_from_frame(engine, survey_name, frame, progress=advance,
                                         **options)
    else:
        with progress_bar(respondents, "Generating") as advance:
            result = generate_questionnaires(engine, survey_name, progress=advance,
                                             respondents=respondents, **options)
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
    if frame_file is not None:
        from surveykit.errors import printable
        from surveykit.workflows.frames import FRAME_IDS_FILE

        click.echo(f"stored the design values of the {result.respondents} units of "
                   f"{printable(Path(frame_file).name)} for their ids; {FRAME_IDS_FILE} "
                   f"in {result.out_dir} lists which id goes to which unit")
    names = dict(enumerate(result.group_names, start=1))
    if len(names) > 1:
        click.echo("groups (form versions): " + ", ".join(
            f"{names[g]} {n}" for g, n in result.group_counts.items()))
    per_group = " per form version" if len(names) > 1 else ""
    if result.tallied:
        click.echo(f"instruction totals kept for the randomizer audit (runs of at least "
                   f"{AUDIT_MINIMUM_PER_GROUP} respondents{per_group})")
    elif mode == "slips":
        click.echo(f"instruction totals not kept: with fewer than {AUDIT_MINIMUM_PER_GROUP} "
                   f"respondents{per_group} they would reveal this run's instructions; the "
                   "randomizer audit leaves the run out")
    if result.key_file is not None:
        click.echo(f"wrote the key file {result.key_file} (keep it away from the answers)")
    if mode == "slips" and result.key_file is not None:
        click.echo("Print sheets-* and slips-* separately and hand out slip k with sheet k, "
                   "as the key file pairs them; each respondent keeps the slip and hands in "
                   "only the sheet ('surveykit docs questionnaires').")
    elif mode == "slips":
        within = " within each form version" if len(names) > 1 else ""
        click.echo(f"Print sheets-* and slips-* separately and shuffle the printed slips{within}"
                   "; each respondent keeps a slip and hands in only the sheet ('surveykit docs "
                   "questionnaires').")
        if len(names) > 1:
            click.echo("Give each respondent a sheet and a slip of the same form version.")
