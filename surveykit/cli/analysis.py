"""Commands that compute from numbers you type: estimate and design."""

from __future__ import annotations

import click

from surveykit.cli.app import (
    FORMAT_TEXT_JSON,
    db_option,
    echo_table,
    format_number,
    main,
    print_json,
)
from surveykit.designs.warner import GeneralizedWarner
from surveykit.estimation import CI_METHODS, DEFAULT_CI_METHOD, estimate
from surveykit.planning import design_survey


@main.command("estimate")
@click.option("--yes", "yes", type=int, default=None, help="Number of 'yes' answers.")
@click.option("--no", "no", type=int, default=None, help="Number of 'no' answers.")
@click.option("--dont-know", type=int, default=None, help="Number of \"don't know\" answers.")
@click.option("--p", "p", type=float, default=None, help="Probability of answering truthfully.")
@click.option("--q", "q", type=float, default=None,
              help="Probability of giving the opposite answer (don't know = 1 - p - q).")
@click.option("--level", type=float, default=0.95, show_default=True,
              help="Confidence level of the interval.")
@click.option("--method", type=click.Choice(CI_METHODS), default=DEFAULT_CI_METHOD,
              show_default=True, help="Confidence interval method.")
@click.option("--format", "fmt", type=FORMAT_TEXT_JSON, default="text", show_default=True)
@click.option("--counts-file", "counts_file", type=click.Path(dir_okay=False), default=None,
              help="Estimate every question of a counts table (survey, question, group, "
                   "response, count) made anywhere, with the stored survey's designs.")
@db_option
def estimate_command(yes, no, dont_know, p, q, level, method, fmt, counts_file, db_url):
    """Estimate the prevalence pi from yes / no / don't-know counts.

    Example: surveykit estimate --yes 30 --no 50 --dont-know 20 --p 0.6 --q 0.2

    Example: surveykit estimate --counts-file counts.csv
    """
    typed = {"--yes": yes, "--no": no, "--dont-know": dont_know, "--p": p, "--q": q}
    if counts_file is not None:
        if any(value is not None for value in typed.values()):
            raise click.UsageError("give --counts-file or the counts and mechanism, not both")
        _estimate_counts_file(counts_file, db_url, level, method, fmt)
        return
    lacking = [name for name, value in typed.items() if value is None]
    if lacking:
        raise click.UsageError(f"Missing option '{lacking[0]}' (or give --counts-file).")
    result = estimate(yes=yes, no=no, dont_know=dont_know,
                      mechanism=GeneralizedWarner(p=p, q=q))
    data = result.to_dict(level=level, method=method)
    if fmt == "json":
        print_json(data)
        return
    rows = [
        ("answers", f"yes {yes}, no {no}, don't know {dont_know} (n = {data['n']})"),
        ("mechanism", f"p = {p:g} truthful, q = {q:g} opposite, "
                      f"{result.mechanism.dont_know:.4g} don't know"),
        ("pi_hat (Eq. 2)", format_number(data["pi_hat"])),
        ("pi_mle on [0, 1]", format_number(data["pi_mle"])),
        ("standard error", format_number(data["se"])),
        (f"{level:.0%} CI ({method})",
         f"[{format_number(data['ci_low'])}, {format_number(data['ci_high'])}]"),
        ("privacy loss", f"Shafer {format_number(data['epsilon_shafer'])}, "
                         f"Walley {format_number(data['epsilon_walley'])}"),
    ]
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        click.echo(f"{label:<{width}}  {value}")


def _estimate_counts_file(counts_file, db_url, level, method, fmt) -> None:
    """One line per question of a counts table: n, pi_hat, its standard error and interval."""
    from surveykit.counting.workflows import report_for_counts_file
    from surveykit.store import open_engine

    report = report_for_counts_file(open_engine(db_url), counts_file, level=level,
                                    method=method)
    if fmt == "json":
        print_json({"survey": report.survey,
                    "questions": [question.to_dict() for question in report.questions]})
        return
    def shown(value: float | None) -> str:
        return "-" if value is None else format_number(value)

    rows = [("question", "n", "pi_hat", "se", f"{level:.0%} CI")]
    for question in report.questions:
        data = question.to_dict()
        rows.append((question.id, str(data["n"]), shown(data["pi_hat"]), shown(data["se"]),
                     f"[{shown(data['ci_low'])}, {shown(data['ci_high'])}]"))
    echo_table(rows[0], rows[1:])


@main.command("design")
@click.option("--epsilon", type=float, required=True,
              help="Privacy budget per question (natural log), in the chosen semantics.")
@click.option("--dont-know", type=float, default=0.0, show_default=True,
              help="Probability of answering \"don't know\" (1 - p - q).")
@click.option("--n", "n", type=int, default=None, help="Sample size: report the standard error.")
@click.option("--target-se", type=float, default=None,
              help="Target standard error: find the smallest sample size that reaches it.")
@click.option("--pi", type=float, default=0.5, show_default=True,
              help="Prevalence to evaluate the precision at (0.5 is the worst case).")
@click.option("--semantics", type=click.Choice(["shafer", "walley"]), default="shafer",
              show_default=True, help="Which privacy loss the budget limits.")
@click.option("--plot", "plot_file", type=click.Path(dir_okay=False), default=None,
              help="Also draw the privacy-accuracy trade-off to FILE (.png, .svg or .pdf).")
@click.option("--format", "fmt", type=FORMAT_TEXT_JSON, default="text", show_default=True)
def design_command(epsilon, dont_know, n, target_se, pi, semantics, plot_file, fmt):
    """Choose p and q for a privacy budget, and the sample size for a precision.

    The mechanism is the best one for the budget at the given don't-know rate
    (Corollary 3.12); Warner's mechanism at the same budget is shown beside it.

    Example: surveykit design --epsilon 1.1 --dont-know 0.2 --target-se 0.03
    """
    ours, warner = design_survey(epsilon=epsilon, dont_know=dont_know, semantics=semantics,
                                 n=n, target_se=target_se, pi=pi)
    if plot_file is not None:
        from surveykit.reporting.plots import save_design_plot

        click.echo(f"Wrote the trade-off picture to {save_design_plot(plot_file, ours, warner)}",
                   err=True)
    if fmt == "json":
        print_json({**ours.to_dict(), "warner": warner.to_dict()})
        return
    click.echo(f"Design for a {semantics.capitalize()} budget of {epsilon:g} with "
               f"{dont_know:.0%} \"don't know\", precision at pi = {pi:g}")
    click.echo("")
    rows = [
        ("", "with don't know", "Warner"),
        ("p (answer truthfully)", format_number(ours.mechanism.p),
         format_number(warner.mechanism.p)),
        ("q (give the opposite)", format_number(ours.mechanism.q),
         format_number(warner.mechanism.q)),
        ("don't know", format_number(ours.mechanism.dont_know),
         format_number(warner.mechanism.dont_know)),
        ("epsilon, Shafer", format_number(ours.epsilon_shafer),
         format_number(warner.epsilon_shafer)),
        ("epsilon, Walley", format_number(ours.epsilon_walley),
         format_number(warner.epsilon_walley)),
    ]
    if ours.n is not None:
        rows.append(("respondents n", f"{ours.n:,}", f"{warner.n:,}"))
        rows.append(("standard error", format_number(ours.se), format_number(warner.se)))
    for label, left, right in rows:
        click.echo(f"{label:<24}{left:>18}{right:>12}")
    if ours.n is None:
        click.echo("\nGive --n or --target-se to see the precision and sample size.")
