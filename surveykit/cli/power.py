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
from surveykit.cli.app import (
    echo_user_text,
    format_option,
    main,
    print_json,
)
from surveykit.vocabulary import number_text

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
@click.option("--simulate", "reps", type=click.IntRange(min=2), default=None, metavar="REPS",
              help="Also simulate REPS surveys and report the share that rejects, with its "
                   "Monte Carlo standard error (needs --pi and --n).")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Seed of the simulation's draws.  [default: a fresh one, printed]")
@click.option("--model", type=click.Choice(["prevalence", "logistic", "linear", "correlation"]),
              default="prevalence", show_default=True,
              help="What --simulate tests: the prevalence (beside the analytic power), the "
                   "slope of a logistic regression on a covariate, the answer's coefficient "
                   "in a linear regression, or the corrected correlation (RRreg's RRlog, "
                   "RRlin, RRcor).")
@click.option("--effect", type=float, default=None,
              help="The simulated effect: the logistic slope per SD of the covariate, or the "
                   "covariate's correlation with the true answer (linear, correlation).")
@click.option("--compliance", default=None, metavar="CARRIERS,OTHERS",
              help="Simulated non-compliance: the shares of carriers and non-carriers who "
                   "follow the instructions (RRreg's complyRates).  [default: 1,1]")
@click.option("--noncompliant-yes", default=None, metavar="CARRIERS,OTHERS",
              help="How often those who do not comply say yes (RRreg's sysBias).  "
                   "[default: 0,0: they say no]")
@click.option("--plot", "plot_file", type=click.Path(dir_okay=False), default=None,
              help="Also draw the power against n to FILE (.png, .svg or .pdf).")
@format_option
@click.pass_context
def power_command(ctx, design_name, params, dont_know, pi, null, pi2, null2, design2_name,
                  params2, split, n, target_power, alpha, alternative, nuisance_texts,
                  allocation, deff, category, reps, seed, model, effect, compliance,
                  noncompliant_yes, plot_file, fmt):
    from surveykit.designs.registry import make_design, parse_parameters
    from surveykit.power_analysis.analytic import power

    if model != "prevalence" or reps is not None:
        _simulate(ctx, design_name, params, dont_know, pi, null, pi2, n, target_power, alpha,
                  alternative, nuisance_texts, allocation, reps, seed, model, effect,
                  compliance, noncompliant_yes, plot_file, fmt)
        return
    for option, value in (("--effect", effect), ("--compliance", compliance),
                          ("--noncompliant-yes", noncompliant_yes), ("--seed", seed)):
        if value is not None:
            raise click.UsageError(f"{option} belongs to a simulation: give --simulate REPS",
                                   ctx=ctx)
    given = sum(value is not None for value in (pi, n, target_power))
    if given != 2:
        raise click.UsageError(
            "give two of --pi, --n and --power: --pi and --n compute the power, --pi and "
            "--power the n, --n and --power the share the test detects", ctx=ctx)
    if params2 and design2_name is None:
        raise click.UsageError("--param2 goes with --design2", ctx=ctx)
    design = _design_from(ctx, design_name, params, dont_know)
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
    # category labels are user text: escaped line by line
    echo_user_text("\n".join(_power_lines(result)) + "\n")


def _design_from(ctx, design_name, params, dont_know):
    from surveykit.designs.registry import make_design, parse_parameters

    texts = _parameter_texts(ctx, params)
    if dont_know is not None:
        if "dont_know" in texts:
            raise click.UsageError("--dont-know and --param dont_know=... both give the "
                                   "don't-know probability; give one", ctx=ctx)
        texts["dont_know"] = str(dont_know)
    return make_design(design_name, **parse_parameters(design_name, texts))


def _two(ctx, text: str | None, option: str) -> tuple[float, float] | None:
    if text is None:
        return None
    try:
        values = tuple(float(item) for item in text.split(","))
    except ValueError:
        values = ()
    if len(values) != 2:
        raise click.BadParameter(f"{text!r} must be two probabilities, for carriers and for "
                                 "non-carriers, e.g. 0.9,1", ctx=ctx, param_hint=option)
    return values


def _simulate(ctx, design_name, params, dont_know, pi, null, pi2, n, target_power, alpha,
              alternative, nuisance_texts, allocation, reps, seed, model, effect, compliance,
              noncompliant_yes, plot_file, fmt):
    """--simulate: the share of simulated surveys that reject, with its Monte Carlo error."""
    import numpy as np

    from surveykit.cli.app import progress_bar
    from surveykit.power_analysis.simulated import simulate_power

    if reps is None:
        raise click.UsageError(f"--model {model} is simulated: give --simulate REPS", ctx=ctx)
    if pi is None or n is None or target_power is not None:
        raise click.UsageError("a simulation takes --pi and --n (not --power)", ctx=ctx)
    for option, value in (("--pi2", pi2), ("--plot", plot_file)):
        if value is not None:
            raise click.UsageError(f"{option} is not simulated; leave it out of --simulate",
                                   ctx=ctx)
    if isinstance(pi, tuple):
        raise click.BadParameter("a simulation takes one prevalence (yes/no designs)", ctx=ctx,
                                 param_hint="--pi")
    if seed is None:
        import secrets

        seed = secrets.randbits(32)
        click.echo(f"simulation seed {seed} (give --seed {seed} to repeat this run)", err=True)
    design = _design_from(ctx, design_name, params, dont_know)
    total = reps * (2 if model == "correlation" else 1)
    with progress_bar(total, "Simulating") as advance:
        result = simulate_power(
            design, n=n, reps=reps, rng=np.random.default_rng(seed), model=model, pi=pi,
            null=null if model == "prevalence" else None, effect=effect, alpha=alpha,
            alternative=alternative, nuisance=_nuisance(ctx, nuisance_texts),
            allocation=_shares(ctx, allocation),
            compliance=_two(ctx, compliance, "--compliance") or (1.0, 1.0),
            noncompliant_yes=_two(ctx, noncompliant_yes, "--noncompliant-yes") or (0.0, 0.0),
            progress=advance)
    if fmt == "json":
        print_json({**result.to_dict(), "seed": seed})
        return
    lines: list[str] = []
    field = _fielder(lines, 16)
    if model == "prevalence":
        what = f"the test of pi = {pi:g} against {result.null:g} ({alternative})"
    else:
        what = {"logistic": "the logistic slope", "linear": "the answer's coefficient at "
                "correlation", "correlation": "the corrected correlation"}[model]
        what += f" {effect:g} (pi = {pi:g})"
    lines.append(f"Simulated power of {what}")
    lines.append("")
    field("design", design.describe())
    field("surveys", f"{reps:,} of {_respondents(n)}, seed {seed}"
          + (f" ({result.failed} could not be estimated)" if result.failed else ""))
    if result.compliance != (1.0, 1.0):
        field("compliance", f"carriers {result.compliance[0]:g}, others "
                            f"{result.compliance[1]:g}; non-compliers say yes with "
                            f"{result.noncompliant_yes[0]:g}, {result.noncompliant_yes[1]:g}")
    field("power", f"{number_text(result.power, 4)} (Monte Carlo se "
                   f"{number_text(result.mc_se, 4)})")
    if result.analytic is not None:
        field("analytic", f"{number_text(result.analytic, 4)} (Fisher information, full "
                          "compliance)")
    if result.critical is not None:
        field("critical |r|", f"{number_text(result.critical, 4)} (from as many surveys "
                              "with r = 0)")
    for line in lines:
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
    if len(result.allocation) > 1:
        field("groups", ", ".join(f"{name} {share:.0%}" for name, share in
                                  zip(result.design.group_names, result.allocation,
                                      strict=True)) + " of the respondents")
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
    field("power", f"{number_text(result.power, 4)}{target}")
    field("std. error", f"{number_text(result.se, 4)} at the alternative, "
                        f"{number_text(result.se_null, 4)} at the null")
    direct = f"power {number_text(result.power_direct, 4)} with {_respondents(result.n)}"
    if result.n_direct:
        direct += (f"; {_respondents(result.n_direct)} for the same power (the design "
                   f"needs {result.privacy_cost:.2f} times as many)")
    field("asked directly", direct)
    return lines

