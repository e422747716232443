"""Commands that compute from numbers you type: estimate and design."""

from __future__ import annotations

import textwrap

import click

from surveykit.cli.app import (
    count,
    db_option,
    echo_table,
    format_option,
    main,
    open_store,
    print_json,
)
from surveykit.designs.quantitative import QuantitativeDesign
from surveykit.designs.registry import (
    ALIASES,
    EXAMPLES,
    PRESETS,
    QUANTITATIVE_PRESETS,
    is_quantitative,
    make_design,
    parameter_names,
    parse_parameters,
)
from surveykit.designs.warner import GeneralizedWarner
from surveykit.errors import ParameterError
from surveykit.estimation import CI_METHODS, estimate
from surveykit.estimation.quantitative import estimate_mean
from surveykit.numeric_counts import NumericCounts
from surveykit.planning import design_survey, parse_free_parameters, plan_design, plan_numeric
from surveykit.vocabulary import (
    amount_text,
    canonical_spelling,
    loss_fields,
    number_text,
    response_spellings,
)


def _designs_epilog() -> str:
    """Every preset with its one-line summary, an example and its other parameters."""
    # click indents the epilog by 2; names take 20 columns; the rest must fit in 80
    indent, width = " " * 20, 80 - 2 - 20
    lines = ["Designs (--design NAME; names and parameters as in R's RRreg):", "", "\b"]
    for name, cls in PRESETS.items():
        example = EXAMPLES.get(name, {})
        design = make_design(name, **parse_parameters(name, example))
        summary = textwrap.wrap(cls.summary, width) or [""]
        lines.append(f"{name:<20}{summary[0]}")
        lines += [indent + line for line in summary[1:]]
        given = " ".join(f"--param {_shell_word(f'{key}={value}')}"
                         for key, value in example.items())
        groups = len(design.group_names)
        usage = (f"e.g. {given}" if given else "no parameters needed") + (
            f" ({groups} groups)" if groups > 1 else "")
        others = [key for key in parameter_names(cls) if key not in example]
        if others:
            usage += f"; also {', '.join(others)}"
        lines += [indent + line for line in textwrap.wrap(usage, width,
                                                          break_on_hyphens=False)]
    lines += ["", "\b", "Designs for numeric answers (--counts n=N,sum=S,sum_squares=Q per "
              "group;", "names and parameters as in RRTCS and RRreg):"]
    for name, cls in QUANTITATIVE_PRESETS.items():
        summary = textwrap.wrap(f"{cls.summary}; parameters "
                                f"{', '.join(parameter_names(cls))}", width)
        if len(name) >= 20:   # chaudhuri_christofides: the summary starts on its own line
            lines.append(name)
            lines += [indent + line for line in summary]
            continue
        lines.append(f"{name:<20}{summary[0]}")
        lines += [indent + line for line in summary[1:]]
    by_design: dict[str, list[str]] = {}
    for alias, name in ALIASES.items():
        by_design.setdefault(name, []).append(alias)
    aliases = "; ".join(f"{name}: {', '.join(names)}" for name, names in by_design.items())
    lines += ["", "\b", "Long names:"]
    lines += textwrap.wrap(aliases, 78, break_on_hyphens=False)
    lines += ["", "Each design's matrix, parameters and privacy loss: 'surveykit docs designs'."]
    return "\n".join(lines)


def _shell_word(text: str) -> str:
    """Quote text for a POSIX shell when it holds ; or | (a custom matrix)."""
    return f"'{text}'" if any(c in text for c in ";|") else text


ESTIMATE_HELP = """Estimate the true share from randomized answers, for any design.

\b
Any design; groups are 1, 2, ... in the order of p, as in RRreg:
  surveykit estimate --design sld --param p=0.1667,0.8333 \\
      --counts 1:yes=60,no=40 --counts 2:yes=35,no=65
  surveykit estimate --design fr --param p=0.1,0.2 --dont-know 0.2 \\
      --counts yes=312,no=451,dont_know=237

\b
The generalized Warner design, surveykit 0.1's form:
  surveykit estimate --yes 30 --no 50 --dont-know-count 20 --p 0.6 --q 0.2

--dont-know is a probability, as in every command: the design's probability
of telling a respondent to answer "don't know" (the same as --param
dont_know=D). Counts of "don't know" answers go in --counts dont_know=N, or
--dont-know-count N in the 0.1 form (its old spelling --dont-know N still
works there, with a note).
"""


@main.command("estimate", help=ESTIMATE_HELP, epilog=_designs_epilog())
@click.option("--design", "design_name", default=None, metavar="NAME",
              help="The design (listed below); without it, the 0.1 form --yes/--no/--p/--q.")
@click.option("--param", "params", multiple=True, metavar="KEY=VALUE[,VALUE...]",
              help="A design parameter, as RRreg names it (repeat for each): "
                   "--param p=0.1667,0.8333 --param dont_know=0.2.")
@click.option("--counts", "count_texts", multiple=True, metavar="[GROUP:]LABEL=N,...",
              help="Answers of one group (repeat once per group, group 1 first, or name the "
                   "group: 2:yes=35,no=65). Yes/no designs take yes/no (or 1/0) and dont_know.")
@click.option("--dont-know", "dont_know", default=None, metavar="D",
              help="The designed probability of \"don't know\" (the same as --param "
                   "dont_know=D).")
@click.option("--yes", "yes", type=int, default=None,
              help="0.1 form: number of 'yes' answers.")
@click.option("--no", "no", type=int, default=None, help="0.1 form: number of 'no' answers.")
@click.option("--dont-know-count", "dont_know_count", type=int, default=None,
              help="0.1 form: number of \"don't know\" answers.")
@click.option("--p", "p", type=float, default=None,
              help="0.1 form: probability of answering truthfully.")
@click.option("--q", "q", type=float, default=None,
              help="0.1 form: probability of giving the opposite answer "
                   "(don't know = 1 - p - q).")
@click.option("--level", type=float, default=0.95, show_default=True,
              help="Confidence level of the interval.")
@click.option("--method", type=click.Choice(CI_METHODS), default=None,
              help="Confidence interval method  [default: wilson-cc for one-group yes/no "
                   "designs, likelihood-ratio otherwise]")
@format_option
@click.option("--population-size", "population_size", type=float, default=None,
              metavar="N", help="Numeric designs: the population size N, for the total "
                                "(RRTCS's N) and the without-replacement variances.")
@click.option("--counts-file", "counts_file", type=click.Path(dir_okay=False), default=None,
              metavar="FILE",
              help="Estimate every question of a counts table (survey, question, group, "
                   "response, count) made anywhere, with the stored survey's designs "
                   "('surveykit docs scale').")
@db_option
@click.pass_context
def estimate_command(ctx, design_name, params, count_texts, dont_know, yes, no,
                     dont_know_count, p, q, level, method, fmt, population_size, counts_file,
                     db_url):
    if counts_file is not None:
        given = [name for name, value in (("--design", design_name), ("--counts", count_texts),
                                          ("--yes", yes), ("--no", no), ("--p", p),
                                          ("--q", q), ("--dont-know", dont_know),
                                          ("--dont-know-count", dont_know_count)) if value]
        if given:
            raise click.UsageError(f"--counts-file takes the designs from the stored survey; "
                                   f"leave out {', '.join(given)}", ctx=ctx)
        _estimate_counts_file(counts_file, db_url, level, method, fmt)
        return
    if design_name is None:
        _estimate_generalized_warner(ctx, params, count_texts, dont_know, dont_know_count, yes,
                                     no, p, q, level, method, fmt)
        return
    old = [name for name, value in (("--yes", yes), ("--no", no),
                                    ("--dont-know-count", dont_know_count), ("--p", p),
                                    ("--q", q)) if value is not None]
    if old:
        raise click.UsageError(
            f"{', '.join(old)} belong{'s' if len(old) == 1 else ''} to the 0.1 form without "
            "--design; with --design give the answers as --counts yes=N,no=N,dont_know=N and "
            "the design's parameters as --param KEY=VALUE", ctx=ctx)
    texts = _parameter_texts(ctx, params)
    if dont_know is not None:
        if "dont_know" in texts:
            raise click.UsageError(
                f"--dont-know ({dont_know}) and --param dont_know={texts['dont_know']} both "
                "give the don't-know probability; give one", ctx=ctx)
        texts["dont_know"] = dont_know
    design = make_design(design_name, **parse_parameters(design_name, texts))
    if isinstance(design, QuantitativeDesign):
        _estimate_numeric(ctx, design, count_texts, population_size, level, method, fmt)
        return
    if population_size is not None:
        raise click.UsageError("--population-size is for designs for numeric answers "
                               "(eriksson, mix_norm, ...)", ctx=ctx)
    if not count_texts:
        example = " ".join(f"--counts {g}:yes=N,no=N" for g in design.group_names) \
            if len(design.group_names) > 1 else "--counts yes=N,no=N,dont_know=N"
        raise click.UsageError(f"give the answers with --counts, one per group: {example}",
                               ctx=ctx)
    result = estimate(design=design, counts=_design_counts(ctx, design, count_texts))
    data = result.to_dict(level=level, method=method)
    if fmt == "json":
        print_json(data)
        return
    for line in _estimate_lines(result, data):
        click.echo(line)


def _estimate_numeric(ctx, design: QuantitativeDesign, count_texts: tuple[str, ...],
                      population_size: float | None, level: float, method: str | None,
                      fmt: str) -> None:
    """The mean (and total) of a numeric sensitive variable from each group's n, sum and sum
    of squares of the answers (their sufficient statistics)."""
    groups = design.group_names
    example = " ".join(f"--counts {g}:n=N,sum=S,sum_squares=Q" for g in groups) \
        if len(groups) > 1 else "--counts n=N,sum=S,sum_squares=Q,dont_know=D"
    if method is not None:
        raise click.UsageError("--method is for yes/no and category designs; a numeric "
                               "design's interval is mean -/+ z se", ctx=ctx)
    if not count_texts:
        raise click.UsageError(f"give the answers' sums with --counts, one per group: "
                               f"{example}", ctx=ctx)
    param = _option(ctx, "count_texts")
    parsed = [_parse_sums(ctx, param, text) for text in count_texts]
    named = [group is not None for group, _ in parsed]
    if any(named) and not all(named):
        raise click.BadParameter("name the group in every --counts (1:n=50,sum=...) or in "
                                 "none", ctx=ctx, param=param)
    if len(parsed) != len(groups):
        raise ParameterError(f"design {design.model!r} has {count(len(groups), 'group')}, so "
                             f"it takes {len(groups)} --counts; got {len(parsed)}: {example}")
    table = {}
    for position, (group, row) in enumerate(parsed):
        name = groups[position] if group is None else group
        if name not in groups:
            raise ParameterError(f"--counts: group {name!r} is not a group of design "
                                 f"{design.model!r}; its groups are {', '.join(groups)}")
        if name in table:
            raise ParameterError(f"--counts: group {name} is given twice; give one --counts "
                                 "per group")
        table[name] = row
    result = estimate_mean(design, NumericCounts.from_mapping(table),
                           population_size=population_size,
                           sampling="srswr")
    data = result.to_dict(level)
    if fmt == "json":
        print_json(data)
        return
    lines: list[str] = []
    field = _fielder(lines, 16)
    field("design", design.describe())
    field("", design.summary)
    for name, sums in NumericCounts.from_mapping(table):
        text = (f"n = {sums.n:,}, mean of the answers {sums.mean:.6g}, "
                f"{sums.dont_know:,} don't know")
        field("answers" if name == groups[0] else "",
              f"group {name}: {text}" if len(groups) > 1 else text)
    lines.append("")
    header = f"{'':<14}  {'estimate':>12}  {'std. error':>12}  {level:.0%} CI (normal)"
    lines.append(header)
    rows = [("mean", data["mean"], data["se"], data["ci_low"], data["ci_high"])]
    if data["total"] is not None:
        rows.append(("total", data["total"], data["total_se"], data["total_ci_low"],
                     data["total_ci_high"]))
    if data.get("unrelated_mean") is not None:
        rows.append(("unrelated mean", data["unrelated_mean"], data["unrelated_se"], None, None))
    for label, value, se, low, high in rows:
        interval = "" if low is None else f"[{amount_text(low, 6)}, {amount_text(high, 6)}]"
        lines.append(f"{label:<14}  {amount_text(value, 6):>12}  {amount_text(se, 6):>12}  "
                     f"{interval}".rstrip())
    for name, alternative in data["alternatives"].items():
        if alternative["se"] is not None:
            field("also", f"std. error {amount_text(alternative['se'], 6)} under {name}")
    if data.get("dont_know_warning"):
        field("check", data["dont_know_warning"])
    for line in lines:
        click.echo(line)


def _parse_sums(ctx: click.Context, param: click.Parameter, text: str
                ) -> tuple[str | None, dict[str, float]]:
    """``"2:n=50,sum=210.5,sum_squares=1200"`` -> ``("2", {"n": 50, "sum": 210.5, ...})``."""
    group, body = _group_prefix(ctx, param, text, "GROUP:n=N,sum=S,sum_squares=Q (e.g. "
                                                  "2:n=50,sum=210.5,sum_squares=1200)")
    row: dict[str, float] = {}
    for item in body.split(","):
        key, sep, number = item.partition("=")
        key, number = key.strip(), number.strip()
        if not sep or key not in ("n", "sum", "sum_squares", "dont_know"):
            raise click.BadParameter(
                f"{text!r}: {item.strip()!r} must be n=N, sum=S, sum_squares=Q or dont_know=D "
                "(the numeric answers' count, sum and sum of squares)", ctx=ctx, param=param)
        try:
            value = float(number)
        except ValueError:
            raise click.BadParameter(f"{text!r}: {key} ({number!r}) must be a number", ctx=ctx,
                                     param=param) from None
        if key in ("n", "dont_know"):
            if not value.is_integer() or value < 0:
                raise click.BadParameter(f"{text!r}: {key} ({number!r}) must be a whole "
                                         "number, 0 or more", ctx=ctx, param=param)
            value = int(value)
        if key in row:
            raise click.BadParameter(f"{text!r}: {key} is given twice", ctx=ctx, param=param)
        row[key] = value
    missing = [key for key in ("n", "sum", "sum_squares") if key not in row]
    if missing:
        raise click.BadParameter(f"{text!r}: give {', '.join(missing)} too (n, sum and "
                                 "sum_squares of the numeric answers)", ctx=ctx, param=param)
    return group, row


def _estimate_generalized_warner(ctx, params, count_texts, dont_know, dont_know_count, yes, no,
                                 p, q, level, method, fmt):
    """surveykit 0.1's form: --yes --no --dont-know-count --p --q; output unchanged.

    ``--dont-know N`` was the count here in surveykit 0.1: it still is, with a note (the
    option is a probability everywhere else)."""
    if params or count_texts:
        raise click.UsageError("--param and --counts need --design NAME", ctx=ctx)
    if dont_know is not None:
        if dont_know_count is not None:
            raise click.UsageError(
                f"--dont-know ({dont_know}) is a probability; the 0.1 form takes the count "
                "of \"don't know\" answers as --dont-know-count only", ctx=ctx)
        try:
            dont_know_count = int(dont_know)
        except ValueError:
            raise click.BadParameter(f"{dont_know!r} is not a valid integer.", ctx=ctx,
                                     param=_option(ctx, "dont_know")) from None
        click.echo(f"Note: --dont-know {dont_know} as the count of \"don't know\" answers is "
                   f"deprecated (--dont-know is a probability); use --dont-know-count "
                   f"{dont_know}", err=True)
    for name, value in (("yes", yes), ("no", no), ("dont_know_count", dont_know_count),
                        ("p", p), ("q", q)):
        if value is None:
            raise click.MissingParameter(ctx=ctx, param=_option(ctx, name))
    dont_know = dont_know_count
    result = estimate(yes=yes, no=no, dont_know=dont_know,
                      design=GeneralizedWarner(p=p, q=q))
    method = result.default_method() if method is None else method
    data = result.to_dict(level=level, method=method)
    if fmt == "json":
        print_json(data)
        return
    rows = [
        ("answers", f"yes {yes}, no {no}, don't know {dont_know} (n = {data['n']})"),
        ("mechanism", f"p = {p:g} truthful, q = {q:g} opposite, "
                      f"{result.design.dont_know:.4g} don't know"),
        ("pi_hat (Eq. 2)", number_text(data["pi_hat"], 4)),
        ("pi_mle on [0, 1]", number_text(data["pi_mle"], 4)),
        ("standard error", number_text(data["se"], 4)),
        (f"{level:.0%} CI ({method})",
         f"[{number_text(data['ci_low'], 4)}, {number_text(data['ci_high'], 4)}]"),
        ("privacy loss", f"Shafer {number_text(data['epsilon_shafer'], 4)}, "
                         f"Walley {number_text(data['epsilon_walley'], 4)}"),
    ]
    if _dont_know_text(data):
        rows.append(("don't know", _dont_know_text(data)))
    rows += [("warning", warning) for warning in data["warnings"]]
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        wrapped = textwrap.wrap(value, 78 - width, break_on_hyphens=False) or [""]
        click.echo(f"{label:<{width}}  {wrapped[0]}")
        for line in wrapped[1:]:
            click.echo(f"{'':<{width}}  {line}")


def _option(ctx: click.Context, name: str) -> click.Parameter:
    return next(param for param in ctx.command.params if param.name == name)


def _parameter_texts(ctx: click.Context, params: tuple[str, ...]) -> dict[str, str]:
    """``("p=0.1,0.2", "dont_know=0.2")`` -> ``{"p": "0.1,0.2", "dont_know": "0.2"}``."""
    texts: dict[str, str] = {}
    for text in params:
        key, sep, value = text.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key or not value:
            raise click.BadParameter(f"{text!r} must be KEY=VALUE, e.g. p=0.1667,0.8333",
                                     ctx=ctx, param=_option(ctx, "params"))
        if key in texts:
            raise click.BadParameter(
                f"{key} is given twice ({key}={texts[key]} and {key}={value}); give it once",
                ctx=ctx, param=_option(ctx, "params"))
        texts[key] = value
    return texts


def _design_counts(ctx: click.Context, design, count_texts: tuple[str, ...]
                   ) -> dict[str, dict[str, int]]:
    """One ``--counts`` per group -> ``{group: {label: n}}``, groups as the design names them.

    Unnamed groups are numbered in order (the first --counts is group 1); named ones
    (``2:yes=35,no=65``) go by number or name. The labels themselves are checked by the
    estimator, which knows the design's answers.
    """
    param = _option(ctx, "count_texts")
    parsed = [_parse_counts(ctx, param, text) for text in count_texts]
    named = [group is not None for group, _ in parsed]
    if any(named) and not all(named):
        raise click.BadParameter(
            "name the group in every --counts (1:yes=60,no=40) or in none (then the first "
            "--counts is group 1)", ctx=ctx, param=param)
    names = design.group_names
    if len(parsed) != len(names):
        example = " ".join(f"--counts {g}:yes=N,no=N" for g in names)
        raise ParameterError(
            f"design {design.model!r} has {count(len(names), 'group')}, so it takes "
            f"{len(names)} --counts (one per group, group 1 first); got {len(parsed)}"
            + (f": {example}" if len(names) > 1 else ""))
    spellings = response_spellings(design.response_labels)
    table: dict[str, dict[str, int]] = {}
    for position, (group, row) in enumerate(parsed):
        name = names[design.group_index(group) if group is not None else position]
        if name in table:
            raise ParameterError(f"--counts: group {group} is given twice; give one --counts "
                                 "per group")
        answers: dict[str, str] = {}
        for label in row:
            answer = spellings.get(canonical_spelling(label))
            if answer in answers:
                raise ParameterError(
                    f"--counts {count_texts[position]!r}: {answers[answer]!r} and {label!r} "
                    f"are both the answer {answer!r}; give each answer once")
            answers[answer] = label
        table[name] = row
    return table


def _group_prefix(ctx: click.Context, param: click.Parameter, text: str, form: str
                  ) -> tuple[str | None, str]:
    """``"2:yes=35"`` -> ``("2", "yes=35")``; without a group before ':', ``(None, text)``."""
    colon, equals = text.find(":"), text.find("=")
    if colon == -1 or (equals != -1 and equals < colon):
        return None, text
    group = text[:colon].strip()
    if not group:
        raise click.BadParameter(f"{text!r}: the group before ':' is empty; write {form}",
                                 ctx=ctx, param=param)
    return group, text[colon + 1:]


def _parse_counts(ctx: click.Context, param: click.Parameter, text: str
                  ) -> tuple[str | None, dict[str, int]]:
    """``"2:yes=35,no=65"`` -> ``("2", {"yes": 35, "no": 65})``."""
    group, body = _group_prefix(ctx, param, text, "GROUP:LABEL=N,... (e.g. 2:yes=35,no=65)")
    row: dict[str, int] = {}
    for item in body.split(","):
        label, sep, number = item.partition("=")
        label, number = label.strip(), number.strip()
        if not sep or not label:
            raise click.BadParameter(
                f"{text!r}: {item.strip()!r} must be LABEL=N, e.g. yes=30,no=50,dont_know=20",
                ctx=ctx, param=param)
        if not number.isdigit():
            raise click.BadParameter(
                f"{text!r}: the count of {label!r} ({number!r}) must be a whole number, "
                "0 or more", ctx=ctx, param=param)
        if label in row:
            raise click.BadParameter(f"{text!r}: {label!r} is given twice; give each answer "
                                     "once", ctx=ctx, param=param)
        row[label] = int(number)
    return group, row


def _estimate_lines(result, data: dict) -> list[str]:
    """The estimate as text within 80 columns: design, answers, estimates, fit, privacy."""
    design = result.design
    lines: list[str] = []
    field = _fielder(lines, 16)

    field("design", design.describe())
    field("", design.summary)
    multi = len(design.group_names) > 1
    for g, group in enumerate(design.group_names):
        row = result.counts[g]
        parts = [f"{_answer(label)} {int(n)}" for label, n in
                 zip(design.response_labels, row, strict=True)
                 if n or label != "dont_know" or design.designed_dont_know > 0]
        text = ", ".join(parts) + f" (n = {int(row.sum()):,})"
        field("answers" if g == 0 else "", f"group {group}: {text}" if multi else text)
    if multi:
        field("", f"n = {result.n:,} in {len(design.group_names)} groups")
    lines.append("")
    interval = f"{data['ci_level']:.0%} CI ({data['ci_method']})"
    header = f"{'':<14}  {'estimate':>9}  {'std. error':>10}  {interval}"
    lines.append(header.rstrip())
    # a yes/no design's "no" share is 1 - pi, unless behavioural states (cheaters) share it
    plain = design.is_binary and design.state_labels == design.category_labels
    for entry in data["estimates"][:1] if plain else data["estimates"]:
        label = "pi (yes)" if entry["category"] == "yes" and design.is_binary \
            else entry["category"]
        lines.append(f"{label[:14]:<14}  {number_text(entry['estimate'], 4):>9}  "
                     f"{_se(entry['se']):>10}  [{number_text(entry['ci_low'], 4)}, "
                     f"{number_text(entry['ci_high'], 4)}]")
    for name, values in data["parameters"].items():
        estimate_text = number_text(values["estimate"], 4)
        note = textwrap.wrap(_parameter_note(design, name), 80 - 39) or [""]
        lines.append(f"{name[:14]:<14}  {estimate_text:>9}  {_se(values['se']):>10}  "
                     f"{note[0]}".rstrip())
        lines.extend(f"{'':<39}{line}" for line in note[1:])
    pi_hat = data["pi_hat"]
    if design.is_binary and pi_hat is not None and data["pi_mle"] is not None \
            and abs(pi_hat - data["pi_mle"]) > 1e-12:
        field("", f"unconstrained pi_hat = {pi_hat:.4f}: outside [0, 1], so the estimate "
                  "sits on the boundary")
    lines.append("")
    fit = data.get("fit")
    if fit is not None:
        field("fit", f"G2 = {fit['g2']:.3f} on {count(fit['df'], 'degree')} of freedom, "
                     f"p = {fit['p_value']:.3g}")
    else:
        field("fit", "no test (df = 0: as many parameters as free answer shares)")
    losses = (f"Shafer {number_text(data['epsilon_shafer'], 4)}, "
              f"Walley {number_text(data['epsilon_walley'], 4)}")
    if design.nuisance:
        ranges = ", ".join(f"{p.name} in [{p.low:g}, {p.high:g}]" for p in design.nuisance)
        values = ", ".join(f"{p.name} = {v:.4g}" for p, v in
                           zip(design.nuisance, result.nuisance, strict=True))
        field("privacy loss", f"worst case ({ranges}): {losses}")
        field("", f"at the estimate ({values}): "
                  f"Shafer {number_text(data['epsilon_shafer_at_estimate'], 4)}, Walley "
                  f"{number_text(data['epsilon_walley_at_estimate'], 4)}")
    else:
        field("privacy loss", losses)
    dont_know = _dont_know_text(data)
    if dont_know:
        field("don't know", dont_know)
    for warning in data["warnings"]:
        field("warning", warning)
    return lines


def _dont_know_text(data: dict) -> str:
    """The don't-know compliance test as the report words it (empty when the design has no
    don't-know branch and nobody answered "don't know")."""
    observed, designed = data["dont_know_observed"], data["dont_know_designed"]
    if observed is None or (not designed and not data["dont_know"]):
        return ""
    return (f"{observed:.1%} observed, {designed:.1%} designed (exact binomial test, "
            f"p = {data['dont_know_pvalue']:.3g})")


def _answer(label: str) -> str:
    return "don't know" if label == "dont_know" else label


def _se(value: float | None) -> str:
    return number_text(value, 4)


def _parameter_note(design, name: str) -> str:
    for parameter in design.nuisance:
        if parameter.name == name:
            return parameter.description
    if name == "gamma":
        return "share of cheaters (answer no whatever they are told)"
    return ""


class Prevalence(click.ParamType):
    """``0.3`` (the share of yes) or ``0.2,0.5,0.3`` (one share per category)."""

    name = "PI"

    def convert(self, value, param, ctx):
        if isinstance(value, float | tuple):
            return value
        try:
            numbers = tuple(float(item) for item in str(value).split(","))
        except ValueError:
            self.fail(f"{value!r} is not a prevalence (0.3) or a list of category shares "
                      "(0.2,0.5,0.3).", param, ctx)
        return numbers[0] if len(numbers) == 1 else numbers


def _estimate_counts_file(counts_file, db_url, level, method, fmt) -> None:
    """One line per question of a counts table: n, pi_hat, its standard error and interval."""
    from surveykit.workflows.counting import report_for_counts_file

    report = report_for_counts_file(open_store(db_url), counts_file, level=level,
                                    method=method)
    if fmt == "json":
        print_json({"survey": report.survey,
                    "questions": [question.to_dict() for question in report.questions]})
        return

    def shown(value: float | None) -> str:
        return number_text(value, 4)

    rows = [("question", "n", "pi_hat", "se", f"{level:.0%} CI")]
    for question in report.questions:
        data = question.to_dict()
        rows.append((question.id, str(data["n"]), shown(data["pi_hat"]), shown(data["se"]),
                     f"[{shown(data['ci_low'])}, {shown(data['ci_high'])}]"))
    echo_table(rows[0], rows[1:])


DESIGN_HELP = """Choose a design's parameters for a privacy budget, and the sample size.

\b
Any design (--design NAME, as in 'surveykit estimate --help'):
  surveykit design --design warner --epsilon 1 --target-se 0.03
  surveykit design --design uqtknown --param p=?,0.0833 --epsilon 2 --n 800
  surveykit design --design sld --param p=0.1667,? --epsilon 2 \\
      --nuisance t=0.9 --pi 0.3 --target-se 0.05

With --epsilon the budget chooses the design's free parameter: Warner's p,
the crosswise p, equal forced-answer probabilities for fr, the k-RR's p, the
generalized Warner's p and q at --dont-know; mark other entries to solve for
with ? (two-group designs: the second group's p given the first's).
Triangular, Mangat and CDM designs protect only one answer: their loss is
unbounded whatever p. The loss is the worst case over nuisance ranges unless
--nuisance gives every nuisance parameter a value. Precision: the exact
conditional standard error for one-group yes/no designs, the inverse Fisher
information otherwise (groups of equal size unless --allocation).

\b
A design for numeric answers (eriksson, mix_norm, ...): its privacy loss for
the true values' --range (and --decimals), and the standard error of the mean
at --n or the n for --target-se, for true values of assumed --mean and --sd:
  surveykit design --design eriksson --param p=0.6 \
      --param scrambler=0,1000,5000,20000 --range 0,100000 --decimals 0 \
      --mean 6000 --sd 5000 --target-se 300

\b
Without --design: the best generalized Warner design for the budget at the
given don't-know rate (Corollary 3.12), with Warner's design beside it:
  surveykit design --epsilon 1.1 --dont-know 0.2 --target-se 0.03
"""


@main.command("design", help=DESIGN_HELP)
@click.option("--design", "design_name", default=None, metavar="NAME",
              help="Any design (see 'surveykit estimate --help'); without it, the generalized "
                   "Warner design beside Warner's.")
@click.option("--param", "params", multiple=True, metavar="KEY=VALUE[,VALUE...]",
              help="A design parameter as RRreg names it; ? marks an entry to solve for.")
@click.option("--epsilon", type=float, default=None,
              help="Privacy budget per question (natural log), in the chosen semantics.")
@click.option("--dont-know", type=float, default=None,
              help="Probability of answering \"don't know\" (the design's dont_know; for the "
                   "generalized Warner 1 - p - q).  [default: 0]")
@click.option("--n", "n", type=int, default=None,
              help="Sample size (all groups): report the standard error.")
@click.option("--target-se", type=float, default=None,
              help="Target standard error: find the smallest sample size that reaches it.")
@click.option("--pi", type=Prevalence(), default=None,
              help="Prevalence to evaluate the precision at, or one share per category.  "
                   "[default: 0.5; equal shares for k categories]")
@click.option("--nuisance", "nuisance_texts", multiple=True, metavar="NAME=VALUE",
              help="A nuisance parameter's value to plan at (t=0.9 for the SLD, "
                   "pi_innocuous=0.3, gamma=0.05 for the CDM's cheaters).")
@click.option("--allocation", default=None, metavar="SHARE,SHARE",
              help="Shares of the respondents per group, e.g. 0.4,0.6.  [default: equal]")
@click.option("--semantics", type=click.Choice(["shafer", "walley"]), default="shafer",
              show_default=True, help="Which privacy loss the budget limits.")
@click.option("--plot", "plot_file", type=click.Path(dir_okay=False), default=None,
              help="Also draw the privacy-accuracy trade-off to FILE (.png, .svg or .pdf).")
@click.option("--range", "value_range", default=None, metavar="LOW,HIGH",
              help="Numeric designs: the true values' range, for the privacy loss.")
@click.option("--decimals", type=click.IntRange(0, 9), default=None,
              help="Numeric designs: the true values' decimals (0: whole numbers).")
@click.option("--mean", "value_mean", type=float, default=None,
              help="Numeric designs: the true values' assumed mean, for the precision.")
@click.option("--sd", "value_sd", type=float, default=None,
              help="Numeric designs: the true values' assumed standard deviation.")
@format_option
@click.pass_context
def design_command(ctx, design_name, params, epsilon, dont_know, n, target_se, pi,
                   nuisance_texts, allocation, semantics, plot_file, value_range, decimals,
                   value_mean, value_sd, fmt):
    numeric_options = [name for name, value in (
        ("--range", value_range), ("--decimals", decimals), ("--mean", value_mean),
        ("--sd", value_sd)) if value is not None]
    if design_name is not None and is_quantitative(design_name):
        _design_numeric(ctx, design_name, params, epsilon, dont_know, n, target_se, pi,
                        nuisance_texts, allocation, plot_file, value_range, decimals,
                        value_mean, value_sd, fmt)
        return
    if numeric_options:
        verb = "belongs" if len(numeric_options) == 1 else "belong"
        raise click.UsageError(f"{', '.join(numeric_options)} {verb} to designs for numeric "
                               "answers (eriksson, mix_norm, ...)", ctx=ctx)
    if design_name is None:
        _design_generalized_warner(ctx, params, epsilon, dont_know, n, target_se, pi,
                                   nuisance_texts, allocation, semantics, plot_file, fmt)
        return
    texts = _parameter_texts(ctx, params)
    plan = plan_design(design_name, parse_free_parameters(design_name, texts), epsilon=epsilon,
                       semantics=semantics, dont_know=dont_know, pi=pi,
                       nuisance=_nuisance(ctx, nuisance_texts),
                       allocation=_shares(ctx, allocation), n=n, target_se=target_se)
    if plot_file is not None:
        from surveykit.reporting.plots import save_plan_plot

        click.echo(f"Wrote the trade-off picture to {save_plan_plot(plot_file, plan)}",
                   err=True)
    if fmt == "json":
        print_json(plan.to_dict())
        return
    for line in _plan_lines(plan):
        click.echo(line)


def _design_numeric(ctx, design_name, params, epsilon, dont_know, n, target_se, pi,
                    nuisance_texts, allocation, plot_file, value_range, decimals, value_mean,
                    value_sd, fmt) -> None:
    """``surveykit design`` for a design for numeric answers (planning.plan_numeric)."""
    other = [name for name, value in (("--epsilon", epsilon), ("--pi", pi),
                                      ("--nuisance", nuisance_texts),
                                      ("--allocation", allocation), ("--plot", plot_file))
             if value]
    if other:
        raise click.UsageError(f"{', '.join(other)} belong to yes/no and category designs; a "
                               "numeric design takes --range, --decimals, --mean, --sd, --n "
                               "or --target-se", ctx=ctx)
    texts = _parameter_texts(ctx, params)
    if dont_know is not None:
        texts["dont_know"] = str(dont_know)
    design = make_design(design_name, **parse_parameters(design_name, texts))
    low = high = None
    if value_range is not None:
        parts = value_range.split(",")
        try:
            low, high = (float(part) for part in parts)
        except ValueError:
            raise click.BadParameter(f"{value_range!r} must be LOW,HIGH, e.g. 0,100000",
                                     ctx=ctx, param=_option(ctx, "value_range")) from None
    plan = plan_numeric(design, low=low, high=high, decimals=decimals, mean=value_mean,
                        sd=value_sd, n=n, target_se=target_se)
    if fmt == "json":
        print_json(plan.to_dict())
        return
    lines: list[str] = []
    field = _fielder(lines, 16)
    field("design", design.describe())
    field("", design.summary)
    if plan.privacy is None:
        field("privacy", "give --range LOW,HIGH (and --decimals) for the privacy loss")
    else:
        field("privacy", f"Shafer {number_text(plan.privacy.shafer, 4)}, Walley "
                         f"{number_text(plan.privacy.walley, 4)} for true values in "
                         f"[{plan.privacy.low:g}, {plan.privacy.high:g}]")
        field("", plan.privacy.explanation)
    if plan.se is not None:
        field("precision", f"n = {plan.n:,} respondents: standard error of the mean "
                           f"{amount_text(plan.se, 6)} (true values of mean {value_mean:g}, "
                           f"sd {value_sd:g})")
    for line in lines:
        click.echo(line)


def _nuisance(ctx: click.Context, texts: tuple[str, ...]) -> dict[str, float]:
    values: dict[str, float] = {}
    for text in texts:
        name, sep, number = (part.strip() for part in text.partition("="))
        try:
            value = float(number)
        except ValueError:
            value = None
        if not sep or not name or value is None:
            raise click.BadParameter(f"{text!r} must be NAME=VALUE, e.g. t=0.9", ctx=ctx,
                                     param=_option(ctx, "nuisance_texts"))
        values[name] = value
    return values


def _shares(ctx: click.Context, text: str | None) -> tuple[float, ...] | None:
    if text is None:
        return None
    try:
        return tuple(float(item) for item in text.split(","))
    except ValueError:
        raise click.BadParameter(f"{text!r} must be shares per group, e.g. 0.5,0.5", ctx=ctx,
                                 param=_option(ctx, "allocation")) from None


def _plan_lines(plan) -> list[str]:
    """A plan as text within 80 columns."""
    design = plan.design
    lines: list[str] = []
    field = _fielder(lines, 16)
    at = ", ".join(f"{p.name} = {plan.nuisance[p.name]:g}" for p in design.nuisance)
    if plan.free is not None:
        where = "" if plan.budget_at is None else " at " + ", ".join(
            f"{name} = {value:g}" for name, value in plan.budget_at.items())
        lines.append(f"Design {design.model} for a {plan.semantics.capitalize()} budget of "
                     f"{plan.budget:g}{where}")
    else:
        lines.append(f"Design {design.model} as given")
    field("", design.summary)
    lines.append("")
    field("design", design.describe())
    if plan.free is not None:
        field("solved", f"{plan.free.label} = {plan.value:.6g} (spends the budget)")
    losses = (f"Shafer {number_text(plan.losses['shafer'], 4)}, "
              f"Walley {number_text(plan.losses['walley'], 4)}")
    if design.nuisance:
        ranges = ", ".join(f"{p.name} in [{p.low:g}, {p.high:g}]" for p in design.nuisance)
        field("privacy loss", f"worst case ({ranges}): {losses}")
        field("", f"at {at}: Shafer {number_text(plan.losses['shafer_at'], 4)}, "
                  f"Walley {number_text(plan.losses['walley_at'], 4)}")
    else:
        field("privacy loss", losses)
    if plan.precision is None:
        lines.append("")
        lines.append("Give --n or --target-se to see the precision and sample size.")
        return lines
    result = plan.precision
    pi = (f"pi = {plan.pi:g}" if isinstance(plan.pi, float) else "shares " + ", ".join(
        f"{c} {v:g}" for c, v in zip(design.category_labels, plan.pi, strict=True)))
    behavioural = [f"{name} = {plan.nuisance[name]:g}"
                   for name in design.structure.state_parameters.values()]
    field("precision at", ", ".join([pi, *([at] if at else []), *behavioural]))
    if len(result.group_sizes) > 1:
        equal = len(set(plan.allocation)) == 1
        field("respondents", f"{result.n:,} in {len(result.group_sizes)} groups: "
              + ", ".join(f"{g} {size:,}" for g, size in
                          zip(design.group_names, result.group_sizes, strict=True))
              + (" (equal allocation)" if equal else ""))
    else:
        field("respondents", f"{result.n:,}")
    how = ("exact conditional variance" if result.method == "exact"
           else "inverse Fisher information")
    target = f"; target {plan.target_se:g}" if plan.target_se is not None else ""
    field("standard error", f"{number_text(result.se, 4)} ({how}{target})")
    if len(result.se_by_category) > 1:
        field("", "by category: " + ", ".join(
            f"{c} {number_text(v, 4)}" for c, v in result.se_by_category.items()))
    return lines


def _fielder(lines: list[str], width: int):
    """A function that appends ``label  text`` wrapped within 80 columns."""
    def field(label: str, text: str) -> None:
        wrapped = textwrap.wrap(text, 80 - width, break_on_hyphens=False) or [""]
        lines.append(f"{label:<{width - 2}}  {wrapped[0]}".rstrip())
        lines.extend(f"{'':<{width}}{line}" for line in wrapped[1:])

    return field


def _side_by_side(plan) -> dict:
    """A generalized Warner plan as surveykit 0.1's JSON had it (keys p, q, dont_know,
    epsilon_shafer, epsilon_walley, n, se, ...), each loss with its ``_finite`` flag."""
    design = plan.design
    return {"semantics": plan.semantics, "budget": plan.budget, "p": design.p, "q": design.q,
            "dont_know": design.dont_know, **loss_fields("epsilon_shafer", plan.epsilon_shafer),
            **loss_fields("epsilon_walley", plan.epsilon_walley), "pi": plan.pi, "n": plan.n,
            "se": plan.se, "target_se": plan.target_se}


def _design_generalized_warner(ctx, params, epsilon, dont_know, n, target_se, pi,
                               nuisance_texts, allocation, semantics, plot_file, fmt):
    """surveykit 0.1's form: the Corollary 3.12 design beside Warner's; output unchanged."""
    if params or nuisance_texts or allocation is not None:
        raise click.UsageError("--param, --nuisance and --allocation need --design NAME",
                               ctx=ctx)
    if epsilon is None:
        raise click.MissingParameter(ctx=ctx, param=_option(ctx, "epsilon"))
    if isinstance(pi, tuple):
        raise click.BadParameter("give one prevalence (the share of yes)", ctx=ctx,
                                 param=_option(ctx, "pi"))
    dont_know = 0.0 if dont_know is None else dont_know
    pi = 0.5 if pi is None else pi
    ours, warner = design_survey(epsilon=epsilon, dont_know=dont_know, semantics=semantics,
                                 n=n, target_se=target_se, pi=pi)
    if plot_file is not None:
        from surveykit.reporting.plots import save_design_plot

        click.echo(f"Wrote the trade-off picture to {save_design_plot(plot_file, ours, warner)}",
                   err=True)
    if fmt == "json":
        print_json({**_side_by_side(ours), "warner": _side_by_side(warner)})
        return
    click.echo(f"Design for a {semantics.capitalize()} budget of {epsilon:g} with "
               f"{dont_know:.0%} \"don't know\", precision at pi = {pi:g}")
    click.echo("")
    rows = [
        ("", "with don't know", "Warner"),
        ("p (answer truthfully)", number_text(ours.design.p, 4),
         number_text(warner.design.p, 4)),
        ("q (give the opposite)", number_text(ours.design.q, 4),
         number_text(warner.design.q, 4)),
        ("don't know", number_text(ours.design.dont_know, 4),
         number_text(warner.design.dont_know, 4)),
        ("epsilon, Shafer", number_text(ours.epsilon_shafer, 4),
         number_text(warner.epsilon_shafer, 4)),
        ("epsilon, Walley", number_text(ours.epsilon_walley, 4),
         number_text(warner.epsilon_walley, 4)),
    ]
    if ours.n is not None:
        rows.append(("respondents n", f"{ours.n:,}", f"{warner.n:,}"))
        rows.append(("standard error", number_text(ours.se, 4), number_text(warner.se, 4)))
    for label, left, right in rows:
        click.echo(f"{label:<24}{left:>18}{right:>12}")
    if ours.n is None:
        click.echo("\nGive --n or --target-se to see the precision and sample size.")
