"""The demo and the paper's reproduction."""

from __future__ import annotations

import os
from pathlib import Path

import click

from surveykit.cli.app import format_option, main, print_json, progress_bar


@main.command("demo")
@click.option("--dir", "directory", type=click.Path(file_okay=False), default=None,
              help="Folder to run in (must be new or empty)  [default: ./surveykit-demo, "
                   "or -2, -3, ... if that exists]")
@click.option("--respondents", type=int, default=2000, show_default=True,
              help="How many questionnaires to issue and simulate.")
@click.option("--seed", type=int, default=None,
              help="Reproducible ids, codes and answers (demo and tests only)  [default: the "
                   "demo's own, so every run prints the same]")
@format_option
def demo_command(directory, respondents, seed, fmt):
    """Run the whole workflow on the sample survey in a fresh folder.

    Creates a database, adds the sample academic-integrity survey, generates
    questionnaires, simulates respondents who follow their codes (with stated
    true prevalences), imports their answers and prints the report, with the
    truth beside each estimate.
    """
    from pathlib import Path

    from surveykit.workflows.demo import DEMO_SEED, fresh_directory, run_demo

    seed = DEMO_SEED if seed is None else seed
    target = Path(directory) if directory else fresh_directory(Path("surveykit-demo"))
    with progress_bar(respondents, "Generating questionnaires") as advance:
        result = run_demo(target, respondents=respondents, seed=seed, progress=advance)
    comparison = result.comparison()
    if fmt == "json":
        print_json({
            "directory": str(result.directory),
            "database": str(result.database),
            "questionnaires": str(result.questionnaires),
            "responses": str(result.responses),
            "report_html": str(result.report_html),
            "truth": comparison,
            "report": result.report.to_dict(),
        })
        return
    from surveykit.reporting.report import render_report

    click.echo(render_report(result.report, "text"), nl=False)
    click.echo("")
    click.echo("The truth the respondents were simulated with, beside the estimates:")
    click.echo(f"  {'question':<22}{'truth':>7}{'pi_mle':>9}{'interval':>20}  covered")
    for row in comparison:
        interval = (f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}]"
                    if row["ci_low"] is not None else "-")
        estimate_text = f"{row['pi_mle']:.3f}" if row["pi_mle"] is not None else "-"
        click.echo(f"  {row['id']:<22}{row['truth']:>7.2f}{estimate_text:>9}{interval:>20}  "
                   f"{'yes' if row['covered'] else 'NO'}")
    click.echo("")
    click.echo(f"Everything is in {result.directory}/:")
    click.echo(f"  {result.database.name:<18} the database")
    click.echo(f"  {result.questionnaires.name + '/':<18} printable slips and answer sheets")
    click.echo(f"  {result.responses.name:<18} the simulated answers that were imported")
    click.echo(f"  {result.report_html.name:<18} the report as a web page, with plots")
    click.echo("Print the report again with:")
    database = os.path.relpath(result.database) if not os.path.isabs(str(target)) \
        else result.database
    click.echo(f"  surveykit report --db {database} --survey {result.report.survey}")


@main.command("reproduce")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Directory for the figures and tables (created if missing).")
@click.option("--reps", type=click.IntRange(min=2), default=1000, show_default=True,
              help="Simulated surveys per point in Figures 2, 3 and 5.")
@click.option("--table-reps", type=click.IntRange(min=2), default=None,
              help="Simulated surveys per row of the verification table  [default: 100 x reps]")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Seed for a repeatable run  [default: a fresh seed, printed at the end]")
@format_option
def reproduce_command(out, reps, table_reps, seed, fmt):
    """Reproduce the paper's Figures 1-5 and a verification table of its theorems.

    Writes five PNG figures, verification.csv, tradeoff_bounds.csv and
    verification.md into OUT ('surveykit docs reproduction' explains them).

    Example: surveykit reproduce --out reproduction --reps 1000 --seed 2026
    """
    # imported here: pandas and matplotlib are not needed by the other commands
    from surveykit.paper.reproduction import REPRODUCTION_STEPS, reproduce

    options = {"out": out, "reps": reps, "seed": seed, "table_reps": table_reps}
    with progress_bar(len(REPRODUCTION_STEPS), "Reproducing") as advance:
        result = reproduce(**options, progress=lambda _step: advance(1))
    summary = result.summary
    if fmt == "json":
        print_json({"files": [str(path) for path in result.files], "seed": result.seed,
                    "seconds": round(result.seconds, 2), "verification": summary})
        return
    for path in result.files:
        click.echo(f"wrote {path}")
    click.echo(f"exact conditional variance within 3 Monte Carlo SE of the simulation: "
               f"{summary['exact_within_3se']} of {summary['table_rows']} rows "
               f"(max |z| = {summary['max_abs_exact_z']:.2f})")
    click.echo(f"Theorem 3.10 as printed: more than 3 SE off on "
               f"{summary['printed_3_10_beyond_3se']} rows, relative error up to "
               f"{summary['max_abs_printed_rel_err']:.1%}")
    for check in summary["monotonicity"]:
        click.echo(f"{check['claim']}: {check['passed']} of {check['steps']} grid steps pass")
    broken = [c for c in summary["tradeoff_bounds"] if c["as_printed"] and not c["holds"]]
    click.echo(f"trade-off bounds as printed that enumerated rules break: "
               f"{', '.join(c['claim'] for c in broken) or 'none'}")
    click.echo(f"seed {result.seed}, {result.seconds:.1f} s")
