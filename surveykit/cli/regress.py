"""``surveykit regress``: regression with a randomized-response variable, from a CSV file
or a stored survey.

From a file, the command reads it, builds the design from ``--design`` and
``--param`` and makes one library call
(:func:`surveykit.estimation.regression.regress`); from a stored survey
(``--survey NAME``) the design, the groups and the covariates come from the
store (:func:`surveykit.workflows.regress.regress_survey`). Either way it prints
the result's ``summary()`` or its JSON.
"""

from __future__ import annotations

import math

import click

from surveykit.cli.app import (
    db_option,
    format_option,
    main,
    open_store,
    print_json,
    progress_bar,
)
from surveykit.errors import EstimationError, ParameterError


def _pairs(texts: tuple[str, ...], option: str) -> dict[str, str]:
    """``KEY=VALUE`` texts as a dict, with one-line errors naming the option."""
    out: dict[str, str] = {}
    for text in texts:
        key, sep, value = text.partition("=")
        if not sep or not key.strip():
            raise ParameterError(f"{option} ({text!r}) must read KEY=VALUE, e.g. p=0.1667,0.8333")
        out[key.strip()] = value.strip()
    return out


def _at_rows(texts: tuple[str, ...]):
    """--at COLUMN=VALUE[,COLUMN=VALUE...]: one row of covariate values per option."""
    import pandas as pd

    rows = []
    for text in texts:
        row: dict[str, object] = {}
        for item in text.split(","):
            column, sep, value = item.partition("=")
            if not sep or not column.strip():
                raise ParameterError(f"--at ({text!r}) must read COLUMN=VALUE[,COLUMN=VALUE...], "
                                     "e.g. --at age=30,faculty=law")
            try:
                row[column.strip()] = float(value)
            except ValueError:
                row[column.strip()] = value.strip()
        rows.append(row)
    return pd.DataFrame(rows)


@main.command("regress")
@click.argument("data", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option("--survey", "survey_name", metavar="NAME",
              help="Fit on a stored survey instead of DATA: the formula names one of its "
                   "questions and declared covariates; design and groups come from the survey.")
@click.option("--formula", required=True,
              help='Model formula as in R, e.g. "rrt ~ age * left_right + C(faculty)".')
@click.option("--sensitive", metavar="COLUMN",
              help="Column with the randomized answers (the response, or a term); with "
                   "--survey, the question the formula names.")
@click.option("--design", "design_name", metavar="NAME",
              help="Randomized-response design, as RRreg names them (warner, fr, sld, ...).")
@click.option("--param", "params", multiple=True, metavar="KEY=VALUE[,...]",
              help="A design parameter; repeat for each (e.g. --param p=0.1667,0.8333).")
@click.option("--group", metavar="COLUMN",
              help="Column with each respondent's group (1, 2; 0 = asked directly).")
@click.option("--family", type=click.Choice(["binomial", "gaussian"]), default=None,
              help="Outcome model when the sensitive column is a predictor [default: gaussian].")
@click.option("--sensitive-formula", default="~ 1", show_default=True,
              help='Model of the true answer when it is a predictor, e.g. "~ age".')
@click.option("--fix", "fixed", multiple=True, metavar="NAME=VALUE",
              help="Hold a nuisance parameter at a value instead of estimating it (e.g. t=1).")
@click.option("--at", "at", multiple=True, metavar="COLUMN=VALUE[,...]",
              help="Also predict the prevalence at these covariate values (repeatable).")
@click.option("--level", type=float, default=0.95, show_default=True,
              help="Confidence level of the intervals.")
@click.option("--lr", "lr", type=click.Choice(["auto", "all", "none"]), default="auto",
              show_default=True,
              help="Likelihood-ratio tests (one refit per parameter): auto = where the Wald "
                   "and score tests disagree at the 5% level; all; none.")
@click.option("--max-iterations", type=click.IntRange(1, 10000), default=200, show_default=True,
              help="Newton iterations before the fit counts as not converged.")
@click.option("--allow-unconverged", is_flag=True,
              help="Print the estimates even if the fit did not converge.")
@format_option
@db_option
def regress_command(data, survey_name, formula, sensitive, design_name, params, group, family,
                    sensitive_formula, fixed, at, level, lr, max_iterations, allow_unconverged,
                    fmt, db_url):
    """Regression with a randomized-response variable as the outcome or a predictor.

    If --sensitive is the response of --formula the model is a logistic
    regression of the true answer (multinomial for k categories); if it is
    among the terms, --family is the outcome's model. Coefficients come with
    standard errors, Wald and score tests, and likelihood-ratio tests where
    those two disagree (--lr all: everywhere); nuisance parameters (e.g. the
    SLD's t) are estimated jointly ('surveykit docs regression').

    Example: surveykit regress minarets.csv --formula "rrt ~ age.c * leftRight.c"
    --sensitive rrt --design sld --param p=0.1667,0.8333 --group condition

    Example: surveykit regress --survey academic_integrity
    --formula "exam_cheating ~ age + C(faculty)"
    """
    held = {}
    for name, value in _pairs(fixed, "--fix").items():
        try:
            held[name] = float(value)
        except ValueError:
            raise ParameterError(f"--fix {name} ({value!r}) must be a number") from None
    if survey_name is not None and data is None and _complex_survey(
            survey_name, formula, sensitive, design_name, params, group, family,
            sensitive_formula, held, at, lr, fmt, db_url):
        return
    if survey_name is not None:
        result = _regress_survey(data, survey_name, formula, sensitive, design_name, params,
                                 group, family, sensitive_formula, held, max_iterations, db_url)
    else:
        result = _regress_file(data, formula, sensitive, design_name, params, group, family,
                               sensitive_formula, held, max_iterations)
    if not hasattr(result, "converged"):
        # a numeric question's least squares (no iterations, no likelihood-ratio tests)
        if at or lr == "all":
            raise click.UsageError("--at and --lr all are for the likelihood of yes/no and "
                                   "category answers; a numeric question's model is least "
                                   "squares")
        if fmt == "json":
            print_json(result.to_dict(level=level))
        else:
            click.echo(result.summary(level=level), nl=False)
        return
    if not result.converged and not allow_unconverged:
        raise EstimationError(
            f"the fit did not converge in {result.iterations} iterations; the estimates may be "
            "off (rerun with --allow-unconverged to print them anyway)")
    # one likelihood-ratio refit per term asked for: seconds each on a million rows
    wanted = result.lr_parameters(lr)
    if wanted:
        with progress_bar(len(wanted), "Likelihood-ratio tests") as advance:
            result.run_lr_tests(advance, which=lr)
    predictions = None
    if at:
        newdata = _at_rows(at)
        predictions = [result.predict(newdata, level=level, category=category)
                       for category in _categories(result)]
    if fmt == "json":
        out = result.to_dict(level=level, lr=lr)
        if predictions is not None:
            out["predictions"] = [
                {"at": row, "category": category,
                 **{k: float(v) if math.isfinite(v) else None for k, v in p.iloc[i].items()}}
                for category, p in zip(_categories(result), predictions, strict=True)
                for i, row in enumerate(_at_rows(at).to_dict("records"))]
        print_json(out)
        return
    click.echo(result.summary(level=level, lr=lr), nl=False)
    if predictions is not None:
        click.echo("")
        click.echo(f"Predicted prevalence ({level:.0%} CI):")
        for category, p in zip(_categories(result), predictions, strict=True):
            for text, (_, row) in zip(at, p.iterrows(), strict=True):
                click.echo(f"  {category} at {text}: {row.prevalence:.4f} "
                           f"(SE {row.se:.4f}; {row.ci_low:.4f}, {row.ci_high:.4f})")


def _regress_file(data, formula, sensitive, design_name, params, group, family,
                  sensitive_formula, held, max_iterations):
    import pandas as pd

    from surveykit.designs.registry import make_design, parse_parameters
    from surveykit.estimation.regression import regress

    if data is None:
        raise click.UsageError("Missing argument 'DATA' (a CSV file), or give --survey NAME.")
    for value, option in ((sensitive, "--sensitive"), (design_name, "--design")):
        if value is None:
            raise click.UsageError(f"Missing option '{option}'.")
    design = make_design(design_name, **parse_parameters(design_name, _pairs(params, "--param")))
    try:
        frame = pd.read_csv(data)
    except (ValueError, UnicodeDecodeError) as error:
        raise ParameterError(f"{data} is not a readable CSV file: {error}") from None
    return regress(frame, formula, sensitive=sensitive, design=design, group=group,
                   family=family, sensitive_formula=sensitive_formula, fixed=held,
                   max_iterations=max_iterations)


def _regress_survey(data, survey_name, formula, sensitive, design_name, params, group, family,
                    sensitive_formula, held, max_iterations, db_url):
    from surveykit.workflows.regress import regress_survey

    if data is not None:
        raise click.UsageError(f"give DATA ({data}) or --survey {survey_name}, not both")
    given = [option for option, value in (("--design", design_name), ("--param", params),
                                          ("--group", group)) if value]
    if given:
        raise click.UsageError(f"{', '.join(given)}: with --survey the design and the groups "
                               "come from the stored survey; leave them out")
    return regress_survey(open_store(db_url), survey_name, formula, sensitive=sensitive,
                          family=family, sensitive_formula=sensitive_formula, fixed=held,
                          max_iterations=max_iterations)


def _complex_survey(survey_name, formula, sensitive, design_name, params, group, family,
                    sensitive_formula, held, at, lr, fmt, db_url) -> bool:
    """A survey with [sampling]: the design-based fit printed (True), or False."""
    from surveykit.workflows.complex_samples import (
        complex_regress_for_survey,
        complex_regress_text,
        sampling_declared,
    )

    engine = open_store(db_url)
    if not sampling_declared(engine, survey_name):
        return False
    given = [option for option, value in (("--design", design_name), ("--param", params),
                                          ("--group", group), ("--at", at),
                                          ("--sensitive", sensitive)) if value]
    if lr == "all":
        given.append("--lr all (a pseudo-likelihood has no likelihood-ratio test)")
    if given:
        raise click.UsageError(f"{', '.join(given)}: not with a survey with [sampling]; the "
                               "design, groups and sensitive question come from the survey")
    result = complex_regress_for_survey(engine, survey_name, formula, family=family,
                                        sensitive_formula=sensitive_formula, fixed=held or None)
    if fmt == "json":
        print_json(result.to_dict())
    else:
        click.echo(complex_regress_text(result), nl=False)
    return True


def _categories(result) -> list[str]:
    labels = result.design.category_labels
    return ["yes"] if result.design.is_binary else list(labels)
