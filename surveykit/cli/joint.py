"""``surveykit joint``: what several sensitive questions of a stored survey say together (one
library call: :func:`surveykit.workflows.joint.joint_for_survey`), and ``surveykit correlate``:
correlations of a randomized answer with other variables of a file (RRreg's ``RRcor``; one
library call: :func:`surveykit.estimation.correlation.correlate`)."""

from __future__ import annotations

import textwrap

import click

from surveykit.cli.analysis import _parameter_texts
from surveykit.cli.app import (
    db_option,
    echo_table,
    format_option,
    main,
    open_store,
    print_json,
    progress_bar,
)
from surveykit.errors import ParameterError, printable
from surveykit.reporting.joint_section import PAIR_LINES
from surveykit.vocabulary import level_text, number_text, p_value_text


@main.command("correlate")
@click.argument("data", type=click.Path(exists=True, dir_okay=False))
@click.option("--sensitive", required=True, metavar="COLUMN",
              help="Column with the randomized yes/no answers.")
@click.option("--design", "design_name", required=True, metavar="NAME",
              help="Its design, as RRreg names them (warner, fr, sld, ...; rr's names too).")
@click.option("--param", "params", multiple=True, metavar="KEY=VALUE[,...]",
              help="A design parameter; repeat for each (e.g. --param p=0.1667,0.8333).")
@click.option("--group", metavar="COLUMN",
              help="Column with each respondent's group (two-group designs such as sld).")
@click.option("--with", "with_columns", required=True, metavar="COLUMN[,COLUMN...]",
              help="The other variables: numbers, or yes/no answers (read as 1/0).")
@click.option("--bootstrap", type=click.IntRange(min=0), default=0, show_default=True,
              help="Bootstrap replicates for the standard errors (rows drawn with "
                   "replacement; RRcor's non-parametric bootstrap).")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Seed of the bootstrap's draws, to repeat a run.  [default: a fresh one, "
                   "printed]")
@format_option
@click.pass_context
def correlate_command(ctx, data, sensitive, design_name, params, group, with_columns,
                      bootstrap, seed, fmt):
    """Correlations of a randomized answer with other variables (RRreg's RRcor).

    The randomization is read as measurement error independent of everything
    else (Fox and Tracy 1984) and the observed correlation is corrected for
    it; the estimate of the design's prevalence (and nuisance parameters)
    comes from the same answers. --bootstrap B gives standard errors; --format
    json prints a list of pairs with x, y, r and se ('surveykit docs joint').

    Example: surveykit correlate minarets.csv --sensitive rrt --design sld
    --param p=0.1667,0.8333 --group condition --with age,leftRight
    --bootstrap 1000 --seed 1
    """
    import numpy as np
    import pandas as pd

    from surveykit.designs.registry import make_design, parse_parameters
    from surveykit.estimation.correlation import correlate

    design = make_design(design_name, **parse_parameters(design_name,
                                                         _parameter_texts(ctx, params)))
    others = [column.strip() for column in with_columns.split(",") if column.strip()]
    if not others:
        raise click.BadParameter("name at least one column, e.g. --with age,leftRight",
                                 ctx=ctx, param_hint="--with")
    if bootstrap and seed is None:
        import secrets

        seed = secrets.randbits(32)
        click.echo(f"bootstrap seed {seed} (give --seed {seed} to repeat this run)", err=True)
    try:
        frame = pd.read_csv(data)
    except (ValueError, UnicodeDecodeError) as error:
        raise ParameterError(f"{data} is not a readable CSV file: {error}") from None
    rng = np.random.default_rng(seed) if bootstrap else None
    with progress_bar(bootstrap, "Bootstrap") as advance:
        result = correlate(frame, {sensitive: design}, others,
                           groups={sensitive: group} if group else None,
                           bootstrap=bootstrap, rng=rng, progress=advance)
    if fmt == "json":
        print_json([{**pair.to_dict(), "n": result.n} for pair in result.pairs])
        return
    # column names are user text: escaped, so that a header cannot rewrite the terminal
    rows = [(printable(pair.x), printable(pair.y), f"{pair.r:.4f}",
             "-" if pair.se is None else f"{pair.se:.4f}", "") for pair in result.pairs]
    echo_table(("x", "y", "r", "se", ""), rows)
    estimates = ", ".join(f"{k} = {v:.4f}" for k, v in result.estimates[sensitive].items())
    notes = [f"{result.n:,} respondents; design {design.describe()},",
             f"estimated at {estimates} (the correction uses these)."]
    if bootstrap:
        failed = (f" ({result.failed_replicates} could not be estimated)"
                  if result.failed_replicates else "")
        notes.append(f"Standard errors from {bootstrap:,} bootstrap replicates{failed}, seed "
                     f"{seed}.")
    notes += [f"Left out: {count:,} rows ({reason})." for reason, count in
              result.left_out.items()]
    click.echo("")
    for note in notes:
        click.echo(textwrap.fill(note, 80, break_on_hyphens=False))


@main.command("joint")
@click.option("--survey", "survey_name", required=True, metavar="NAME",
              help="The stored survey.")
@click.option("--questions", required=True, metavar="A,B[,C[,D]]",
              help="2 to 4 of its questions, asked of the same respondents.")
@click.option("--level", type=click.FloatRange(0.5, 0.999), default=0.95, show_default=True,
              help="Confidence level of the intervals.")
@db_option
@format_option
def joint_command(survey_name, questions, level, db_url, fmt):
    """What several sensitive questions say together: the joint distribution of their true
    answers (each question with its own design and groups; RRreg's Kronecker product), the
    shares "a and b", "b among a", odds ratios and correlations with standard errors, a
    test of independence, and the privacy loss of answering them all.

    Respondents who left one of the questions unanswered are left out and
    counted. 'surveykit docs joint' explains the estimator.

    Example: surveykit joint --survey academic_integrity --questions exam_cheating,plagiarism
    """
    from surveykit.workflows.joint import joint_for_survey

    names = [name.strip() for name in questions.split(",") if name.strip()]
    result = joint_for_survey(open_store(db_url), survey_name, names)
    if fmt == "json":
        print_json(result.to_dict(level=level))
        return
    _echo_joint(result, level)


def _echo_joint(result, level: float) -> None:
    estimate = result.estimate
    shown = [printable(q) for q in estimate.questions]
    click.echo(textwrap.fill(
        f"Joint analysis of {', '.join(shown)} (survey {printable(result.survey)}): "
        f"{estimate.n:,} respondent{'s' if estimate.n != 1 else ''} answered "
        f"{'both' if len(shown) == 2 else 'all of them'}.", 80, break_on_hyphens=False))
    for reason, count in estimate.left_out.items():
        click.echo(f"Left out: {count:,} respondent{'s' if count != 1 else ''} ({reason}).")
    click.echo("")
    table = estimate.table()
    rows = []
    for _, row in table.iterrows():
        states = " ".join(printable(str(row[q])) for q in estimate.questions)
        rows.append((states, number_text(row["share"], 4),
                     number_text(row["se"], 4), ""))
    echo_table(("true answers (" + ", ".join(shown) + ")", "share", "se", ""), rows)
    for pair in estimate.pairs(level=level):
        a, b = printable(pair.a), printable(pair.b)
        click.echo("")
        click.echo(f"{a} and {b}:")
        if pair.quantities:
            lines = []
            for key, label in PAIR_LINES:
                q = pair[key]
                interval = ("" if q.low is None or q.high is None
                            else f"[{number_text(q.low, 4)}, {number_text(q.high, 4)}]")
                lines.append(("  " + label.format(a=a, b=b),
                              number_text(q.estimate, 4),
                              number_text(q.se, 4), interval))
            echo_table(("", "estimate", "se", f"{level_text(level)} interval"), lines)
        test = pair.independence
        click.echo(f"  independence: LR = {test.lr:.2f}, df = {test.df}, "
                   f"p = {p_value_text(test.p_value)}")
    if len(estimate.questions) > 2:
        test = estimate.independence
        click.echo("")
        click.echo(f"Independence of all {len(estimate.questions)}: LR = {test.lr:.2f}, "
                   f"df = {test.df}, p = {p_value_text(test.p_value)}")
    if estimate.nuisance:
        click.echo("")
        click.echo("Estimated with them: " + ", ".join(
            f"{printable(k)} = {v:.4f}" for k, v in estimate.nuisance.items()))
    for warning in estimate.warnings:
        click.echo(textwrap.fill(f"Warning: {printable(warning)}", 80))
    together = result.composed
    click.echo("")
    click.echo(textwrap.fill(
        "Privacy: answering all of them costs each respondent at most "
        + ", ".join(f"{semantics} epsilon {number_text(value, 3)}"
                    for semantics, value in together.items())
        + " (the sum of the questions' losses: losses compose); the joint analysis "
        "does not change it.", 80))
