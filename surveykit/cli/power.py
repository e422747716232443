"""``surveykit power``: the power of a test of a prevalence, the sample size it needs, or
the share it detects, for any design (one library call:
:func:`surveykit.power_analysis.analytic.power`)."""

from __future__ import annotations

import click

from surveykit.cli.analysis import (
    Prevalence,
    _fielder,
    _nuisance,
    _parameter_texts,
    _shares,
)
from surveykit.cli.app import FORMAT_TEXT_JSON, format_number, main, print_json

POWER_HELP = """The power of a test of a prevalence, or the respondents it needs.

\b
One sample (pi against the null, default 0), as R's rr::power.rr.test:
  surveykit power --design mirrored --param p=0.7 --pi 0.2 --null 0 --n 500
  surveykit power --design fr --param p=0.1667,0.1667 --pi 0.2 --null 0 \\
      --alpha 0.01 --alternative greater --power 0.9
\b
Two samples (two faculties, or two domains of one sample: --split is the
first one's share of n, which counts both):
  surveykit power --design sld --param p=0.1667,0.8333 --nuisance t=0.9 \\
      --pi 0.3 --pi2 0.2 --n 800
\b
The share the test detects with --power at --n (no --pi):
  surveykit power --design warner --param p=0.75 --n 800 --power 0.8

Give two of --pi, --n and --power; the third is computed. The power comes
from the design's Fisher information at the null and at the alternative
(every design, its groups, the don't-know branch, nuisance parameters at
--nuisance values; 'surveykit docs power'). Beside it: a direct question's
power and the n it would need, which is what the privacy costs. --deff
divides n by a design effect. rr's design names work: mirrored (warner),
forced-known (fr; rr's p, p0, p1), disguised (kuk with p, 1 - p) and
unrelated-known (uqtknown; rr's p and q).
"""


@main.command("power", help=POWER_HELP)
@click.option("--design", "design_name", required=True, metavar="NAME",
              help="The design (see 'surveykit estimate --help'; rr's names work too).")
@click.option("--param", "params", multiple=True, metavar="KEY=VALUE[,VALUE...]",
              help="A design parameter (repeat for each), e.g. --param p=0.1667,0.8333.")
@click.option("--dont-know", "dont_know", type=float, default=None,
              help="The design's probability of \"don't know\" (same as --param dont_know=D).")
@click.option("--pi", type=Prevalence(), default=None,
              help="The share under the alternative (one share per category for k-category "
                   "designs); with --pi2, the first sample's.")
@click.option("--null", type=Prevalence(), default=None,
              help="The share under the null.  [default: 0 for one sample; two samples: the "
                   "pooled share]")
@click.option("--pi2", type=Prevalence(), default=None,
              help="A second sample's share: a two-sample test of pi - pi2.")
@click.option("--null2", type=Prevalence(), default=None,
              help="The second sample's share under the null (the null difference is "
                   "null - null2).  [default: --null]")
@click.option("--design2", "design2_name", default=None, metavar="NAME",
              help="The second sample's design, when it differs (e.g. direct).")
@click.option("--param2", "params2", multiple=True, metavar="KEY=VALUE[,VALUE...]",
              help="A parameter of --design2.")
@click.option("--split", type=float, default=0.5, show_default=True,
              help="Two samples: the first sample's share of the n respondents.")
@click.option("--n", "n", type=click.IntRange(min=1), default=None,
              help="Respondents (both samples together): compute the power.")
@click.option("--power", "target_power", type=float, default=None,
              help="Target power: find the smallest n (with --n and no --pi: the share the "
                   "test detects).")
@click.option("--alpha", type=float, default=0.05, show_default=True,
              help="Significance level.")
@click.option("--alternative", type=click.Choice(["two-sided", "greater", "less"]),
              default="two-sided", show_default=True,
              help="greater: pi above the null (rr's one.sided).")
@click.option("--nuisance", "nuisance_texts", multiple=True, metavar="NAME=VALUE",
              help="A nuisance parameter's value (t=0.9 for the SLD, pi_innocuous=0.3, "
                   "gamma=0.05 for the CDM's cheaters).")
@click.option("--allocation", default=None, metavar="SHARE,SHARE",
              help="Shares of the respondents per group of the design.  [default: equal]")
@click.option("--deff", type=float, default=1.0, show_default=True,
              help="Design effect of a complex sample: the power of n / deff respondents.")
@click.option("--category", default=None,
              help="k-category designs: the category whose share is tested.")
@click.option("--plot", "plot_file", type=click.Path(dir_okay=False), default=None,
              help="Also draw the power against n to FILE (.png, .svg or .pdf).")
@click.option("--format", "fmt", type=FORMAT_TEXT_JSON, default="text", show_default=True)
@click.pass_context
def power_command(ctx, design_name, params, dont_know, pi, null, pi2, null2, design2_name,
                  params2, split, n, target_power, alpha, alternative, nuisance_texts,
                  allocation, deff, category, plot_file, fmt):
    from surveykit.designs.registry import make_design, parse_parameters
    from surveykit.power_analysis.analytic import power

    given = sum(value is not None for value in (pi, n, target_power))
    if given != 2:
        raise click.UsageError(
            "give two of --pi, --n and --power: --pi and --n compute the power, --pi and "
            "--power the n, --n and --power the share the test detects", ctx=ctx)
    if params2 and design2_name is None:
        raise click.UsageError("--param2 goes with --design2", ctx=ctx)
    texts = _parameter_texts(ctx, params)
    if dont_know is not None:
        if "dont_know" in texts:
            raise click.UsageError("--dont-know and --param dont_know=... both give the "
                                   "don't-know probability; give one", ctx=ctx)
        texts["dont_know"] = str(dont_know)
    design = make_design(design_name, **parse_parameters(design_name, texts))
    design2 = None
    if design2_name is not None:
        texts2 = _parameter_texts(ctx, params2)
        design2 = make_design(design2_name, **parse_parameters(design2_name, texts2))
    nuisance = _nuisance(ctx, nuisance_texts)
    result = power(design, pi=pi, null=null, n=n, power=target_power, alpha=alpha,
                   alternative=alternative, pi2=pi2, null2=null2, design2=design2,
                   split=split, nuisance=nuisance, allocation=_shares(ctx, allocation),
                   deff=deff, category=category)
    if plot_file is not None:
        from surveykit.reporting.power_plots import save_power_plot

        click.echo(f"Wrote the power curve to {save_power_plot(plot_file, result)}", err=True)
    if fmt == "json":
        print_json(result.to_dict())
        return
    for line in _power_lines(result):
        click.echo(line)


def _respondents(n: int) -> str:
    return f"{n:,} respondent{'' if n == 1 else 's'}"


def _share(value) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(f"{v:g}" for v in value) + "]"
    return f"{value:g}"


def _power_lines(result) -> list[str]:
    """The result as text within 80 columns."""
    lines: list[str] = []
    field = _fielder(lines, 16)
    what = {"power": "Power", "n": "Sample size", "pi": "Detectable share"}[result.solved]
    lines.append(f"{what} of a {result.test} test ({result.alternative}, alpha = "
                 f"{result.alpha:g})")
    lines.append("")
    field("design", result.design.describe())
    if result.design2 is not None and result.design2 is not result.design:
        field("design 2", result.design2.describe())
    if result.nuisance:
        field("evaluated at", ", ".join(f"{k} = {v:g}" for k, v in result.nuisance.items()))
    labels = result.design.category_labels

    def tested(value) -> str:
        return _share(value[labels.index(result.category)] if isinstance(value, tuple)
                      else value)

    name = "pi" if result.category == "yes" else f"share of {result.category!r}"
    if result.test == "one-sample":
        field("hypotheses", f"{name} = {tested(result.pi)} against the null "
                            f"{tested(result.null)}")
    else:
        field("hypotheses", f"{name}: {tested(result.pi)} - {tested(result.pi2)} against "
                            f"{tested(result.null)} - {tested(result.null2)} (sample 1 - "
                            "sample 2)")
    if not result.design.is_binary:
        shares = [("alternative", result.pi), ("null", result.null)]
        if result.test == "two-sample":
            shares += [("alternative 2", result.pi2), ("null 2", result.null2)]
        field("", "shares of " + ", ".join(labels) + ": " + "; ".join(
            f"{label} {_share(value)}" for label, value in shares))
    if result.solved == "pi":
        field("", "(the share nearest the null that the test detects with the target power)")
    if result.pi_below is not None:
        field("", f"below the null: {name} = {result.pi_below:.4f}")
    respondents = f"{result.n:,}"
    if result.test == "two-sample":
        respondents += " (" + " + ".join(f"{size:,}" for size in result.sample_sizes) + ")"
    if result.deff != 1:
        respondents += f", the power of {result.n / result.deff:,.1f} (deff {result.deff:g})"
    field("respondents", respondents)
    target = "" if result.target_power is None else f" (target {result.target_power:g})"
    field("power", f"{format_number(result.power)}{target}")
    field("std. error", f"{format_number(result.se)} at the alternative, "
                        f"{format_number(result.se_null)} at the null")
    direct = f"power {format_number(result.power_direct)} with {_respondents(result.n)}"
    if result.n_direct:
        direct += (f"; {_respondents(result.n_direct)} for the same power (the design "
                   f"needs {result.privacy_cost:.2f} times as many)")
    field("asked directly", direct)
    return lines

