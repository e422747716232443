"""Regression with a randomized-response variable, as the outcome or as a predictor.

:func:`regress` fits, for any design (one or two groups, respondents asked
directly as group 0, the don't-know branch, nuisance parameters such as the
SLD's honesty t estimated jointly):

* **the sensitive answer as the outcome** (RRreg's ``RRlog``, rr's ``rrreg``;
  van den Hout, van der Heijden and Gilchrist 2007): the log-odds of a true
  "yes" are linear in the covariates, ``rrt ~ age * left_right``; for a
  k-category design a multinomial logit with the first category as reference.
  Behavioural states (the CDM's cheaters) have a constant share gamma and the
  logistic model describes the categories of the others.
* **the sensitive answer as a predictor** (RRreg's ``RRlin``, rr's
  ``rrreg.predictor``; van den Hout and Kooiman 2006, Blair, Imai and Zhou
  2015, Sec. 4): a Gaussian or logistic model of a directly asked outcome with
  the latent true answer among the terms, ``left_right ~ rrt + age``
  (interactions with it allowed); the true answer has its own model,
  ``sensitive_formula``: ``~ 1`` (one prevalence, as ``RRlin``) or a logistic
  model on covariates (as ``rrreg.predictor``).

Both are maximum likelihood over the latent true answer
(:mod:`surveykit.estimation.latent`): EM's posterior weights give the score
and, with Louis' identity, the observed information; Newton's method climbs
it from deterministic starting values taken from the data (the prevalence
model without covariates, fitted by :func:`surveykit.estimation.likelihood.maximize`),
so no seed can make a fit fail. A yes/no answer as the outcome takes the
closed form P(answer | x, group) = c + d expit(x'beta)
(:class:`~surveykit.estimation.latent.TwoStateModel`); other models the general
mixture over states. Standard errors are the inverse observed information;
Wald, score and likelihood-ratio tests of each parameter
(:mod:`surveykit.estimation.term_tests`) are on the result
(:class:`~surveykit.estimation.regression_results.RegressionResult`).

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from surveykit.designs.base import NO, YES, Design, identifiable
from surveykit.errors import EstimationError, ParameterError
from surveykit.estimation import likelihood
from surveykit.estimation.answers import RowAnswers, code_answers, value_text
from surveykit.estimation.formula_syntax import r_number
from surveykit.estimation.formulas import (
    MAX_MAGNITUDE,
    ModelMatrix,
    build_matrix,
    check_columns,
    drop_missing,
    parse_formula,
)
from surveykit.estimation.latent import (
    LatentModel,
    Maximum,
    Outcome,
    TwoStateModel,
    maximize,
)
from surveykit.estimation.regression_results import Parameter, RegressionResult
from surveykit.vocabulary import BUILTIN_SPELLINGS, canonical_spelling

__all__ = ["FAMILIES", "regress"]

#: Outcome models when the sensitive answer is a predictor.
FAMILIES = ("gaussian", "binomial")
# Starting log-odds are clipped here: a prevalence of 0 or 1 without covariates is no reason
# to start at infinity.
_START_LOGIT = 8.0


def regress(data: pd.DataFrame, formula: str, *, sensitive: str, design: Design,
            group: str | None = None, family: str | None = None,
            sensitive_formula: str = "~ 1", fixed: Mapping[str, float] | None = None,
            max_iterations: int = 200) -> RegressionResult:
    """Fit a regression in which ``sensitive`` holds randomized answers under ``design``.

    If ``sensitive`` is the response of ``formula`` the model is the logistic
    (multinomial for k categories) regression of the true answer; if it is
    among the terms, ``family`` ("gaussian", the default, or "binomial") is the
    outcome's model and ``sensitive_formula`` the true answer's. ``group``
    names the column with each respondent's group (1, 2 or the design's group
    names; 0 for respondents asked directly). ``fixed`` holds nuisance
    parameters at given values instead of estimating them (e.g. ``{"t": 1}``).

    >>> from surveykit.designs import Warner
    >>> rng = np.random.default_rng(7)
    >>> frame = pd.DataFrame({"x": rng.normal(size=4000)})
    >>> truth = rng.random(4000) < 1 / (1 + np.exp(-(-1 + frame.x)))
    >>> frame["rrt"] = np.where(rng.random(4000) < 0.8, truth, ~truth)
    >>> fit = regress(frame, "rrt ~ x", sensitive="rrt", design=Warner(p=0.8))
    >>> fit.params.round(1).tolist(), fit.converged
    ([-1.0, 1.0], True)
    """
    if not isinstance(data, pd.DataFrame):
        raise ParameterError(f"data must be a pandas DataFrame, not {type(data).__name__}")
    if not isinstance(design, Design):
        raise ParameterError(f"design ({design!r}) must be a design, e.g. make_design(\"sld\", "
                             "p=[0.1667, 0.8333])")
    columns = [str(c) for c in data.columns]
    for option, column in (("sensitive", sensitive), ("group", group)):
        if column is not None and column not in columns:
            raise ParameterError(f"{option} column {column!r} is not in the data; the columns "
                                 f"are {', '.join(columns[:30])}")
    parsed = parse_formula(formula, columns)
    if parsed.response == sensitive:
        if family not in (None, "binomial"):
            raise ParameterError(
                f"family ({family!r}): the sensitive answer {sensitive!r} is the response, so "
                "the model is logistic (binomial); give no family or binomial")
        mode, outcome_column = "outcome", None
    elif sensitive in parsed.columns:
        family = "gaussian" if family is None else family
        if family not in FAMILIES:
            raise ParameterError(f"family ({family!r}) must be one of {', '.join(FAMILIES)}")
        mode, outcome_column = "predictor", parsed.response
    else:
        raise ParameterError(
            f"formula {formula!r} uses the sensitive column {sensitive!r} neither as the "
            f"response ({sensitive} ~ ...) nor among the terms (... ~ {sensitive} + ...)")
    state_formula = None
    if mode == "predictor":
        state_formula = parse_formula(sensitive_formula, columns, option="sensitive formula",
                                      response=False)
        if sensitive in state_formula.columns:
            raise ParameterError(
                f"sensitive formula {sensitive_formula!r} uses the sensitive column "
                f"{sensitive!r}; it models that answer from other columns")
    elif sensitive_formula.strip() not in ("~ 1", "~1"):
        raise ParameterError(
            "sensitive formula: the sensitive answer is the response, so its model is the "
            "formula itself; give --sensitive-formula only when it is a predictor")
    used = [*parsed.columns, parsed.response, sensitive, group]
    if state_formula is not None:
        used += state_formula.columns
    frame, dropped = drop_missing(data, [c for c in used if c is not None])
    if frame.empty:
        raise EstimationError(f"no rows left: every row misses a value in one of "
                              f"{', '.join(dict.fromkeys(c for c in used if c))}")
    rows = code_answers(design, frame[sensitive], None if group is None else frame[group],
                        column=sensitive, group_column=group or "group")
    frame = frame.loc[rows.kept] if rows.dont_know_left_out else frame
    _check_groups(design, rows)
    fixed_values = _fixed(design, fixed)
    if mode == "outcome":
        X = build_matrix(parsed, frame)
        X.check_rank()
        states, outcome, outcome_matrix = X, None, None
    else:
        states = build_matrix(state_formula, frame)
        states.check_rank("sensitive formula")
        outcome_matrix, outcome = _outcome(parsed, frame, sensitive, design, family,
                                           outcome_column)
    model = _model(design, rows, states.values, outcome)
    start = _start(model, rows, states, outcome, fixed_values, design)
    held = np.zeros(model.size, dtype=bool)
    for j in fixed_values:
        held[model.size - model.J + j] = True
    best = maximize(model, start, fixed=held, max_iterations=max_iterations)
    if not math.isfinite(best.loglik):
        raise EstimationError("the likelihood is zero at the starting values: some answers "
                              "are impossible under the design")
    if best.diverging:
        raise EstimationError(_separation(model, best, states))
    parameters = _parameters(model, design, states, outcome_matrix, family)
    covariance = _covariance(best, held, parameters, model, states)
    _check_separation(model, best, states, covariance)
    return RegressionResult(
        formula=parsed.text, sensitive=sensitive, design=design, group=group,
        mode=mode, family="binomial" if mode == "outcome" else family,
        sensitive_formula=None if state_formula is None else state_formula.text,
        model=model, maximum=best, held=held, covariance=covariance, parameters=parameters,
        rows=rows, state_matrix=states, outcome_matrix=outcome_matrix, start=start,
        n_dropped=dropped, max_iterations=max_iterations)


def _fixed(design: Design, fixed: Mapping[str, float] | None) -> dict[int, float]:
    """Nuisance parameters held at given values: {position among the design's nuisance
    parameters: value}."""
    if not fixed:
        return {}
    names = [p.name for p in design.nuisance]
    out = {}
    for name, value in fixed.items():
        if name not in names:
            raise ParameterError(
                f"fixed parameter {name!r} is not a nuisance parameter of design "
                f"{design.model!r}" + (f"; it has {', '.join(names)}" if names else
                                       "; it has none"))
        spec = design.nuisance[names.index(name)]
        value = float(value)
        if not spec.low <= value <= spec.high:
            raise ParameterError(f"fixed {name} ({value:g}) must be between {spec.low:g} and "
                                 f"{spec.high:g}")
        out[names.index(name)] = value
    return out


def _check_groups(design: Design, rows: RowAnswers) -> None:
    """Refuse answers whose groups cannot identify the design (e.g. one group of an SLD)."""
    present = np.bincount(rows.groups, minlength=len(rows.group_labels)) > 0
    s = design.structure
    sub = dataclasses.replace(s, base=rows.base[present], slopes=rows.slopes[:, present],
                              groups=tuple(g for g, k in zip(rows.group_labels, present,
                                                             strict=True) if k))
    if not identifiable(sub):
        missing = [g for g, k in zip(rows.group_labels, present, strict=True) if not k]
        raise EstimationError(
            f"design {design.model!r} needs answers from every group to separate the "
            f"prevalence from {', '.join(p.name for p in s.nuisance) or 'the other states'}; "
            f"group {', '.join(missing)} has none (check the group column)")


def _outcome(parsed, frame: pd.DataFrame, sensitive: str, design: Design, family: str,
             outcome_column: str) -> tuple[ModelMatrix, Outcome]:
    """The outcome's values and one model matrix per category of the sensitive answer."""
    s = design.structure
    if len(s.states) != len(s.categories):
        behavioural = [x for x in s.states if x not in s.categories]
        raise ParameterError(
            f"design {design.model!r} has respondents in state {behavioural[0]!r}, whose true "
            "answer is unknown: it cannot serve as a predictor; use it as the response")
    y = frame[outcome_column]
    if family == "binomial":
        y = _binary_outcome(y, outcome_column)
    else:
        try:
            y = y.to_numpy(dtype=float)
        except (TypeError, ValueError):
            raise ParameterError(f"outcome column {outcome_column!r} must hold numbers for "
                                 "family gaussian") from None
        big = np.flatnonzero(~(np.abs(y) <= MAX_MAGNITUDE))
        if big.size:
            raise ParameterError(
                f"outcome column {outcome_column!r} holds {r_number(float(y[big[0]]))} in row "
                f"{big[0] + 1} of the rows used; values beyond {r_number(MAX_MAGNITUDE)} in "
                "size cannot be fitted in floating point: rescale the column")
    matrices = []
    template = None
    for category in design.category_labels:
        data = frame.copy()
        if design.is_binary:
            data[sensitive] = 1.0 if category == YES else 0.0
        else:
            data[sensitive] = pd.Categorical([category] * len(frame),
                                             categories=list(design.category_labels))
        if template is None:
            template = build_matrix(parsed, data)
            matrices.append(template.values)
        else:
            matrices.append(template.for_data(data, what="data"))
    X = np.stack(matrices)
    check_columns(X.reshape(-1, X.shape[2]), template.terms, f"formula {parsed.text!r}")
    return template, Outcome(family=family, y=np.asarray(y, dtype=float), X=X)


def _binary_outcome(values: pd.Series, column: str) -> np.ndarray:
    out = np.empty(len(values))
    inverse, uniques = pd.factorize(values, sort=False)
    for k, value in enumerate(uniques):
        label = BUILTIN_SPELLINGS.get(canonical_spelling(value_text(value)))
        if label not in (YES, NO):
            raise ParameterError(f"outcome column {column!r} holds {value!r}; family binomial "
                                 "needs 1/0, yes/no or true/false")
        out[inverse == k] = 1.0 if label == YES else 0.0
    return out


def _model(design: Design, rows: RowAnswers, Z: np.ndarray, outcome: Outcome | None, *,
           general: bool = False) -> LatentModel:
    """The likelihood of the rows: in closed form for a two-state design whose answer is the
    outcome (:class:`~surveykit.estimation.latent.TwoStateModel`), else the general mixture
    over states (``general=True`` forces it: the fast path's test oracle)."""
    s = design.structure
    reference = NO if design.is_binary else s.categories[0]
    low = np.array([p.low for p in s.nuisance])
    high = np.array([p.high for p in s.nuisance])
    if not general and outcome is None and len(s.states) == len(s.categories) == 2:
        groups, responses = rows.base.shape[:2]
        return TwoStateModel(
            Z=Z, states=s.states, categories=s.categories, reference=reference,
            cells=rows.groups * responses + rows.responses,
            base=rows.base.reshape(groups * responses, len(s.states)),
            slopes=rows.slopes.reshape(len(s.nuisance), groups * responses, len(s.states)),
            low=low, high=high)
    return LatentModel(
        Z=Z, states=s.states, categories=s.categories, reference=reference,
        M=rows.row_matrix(np.zeros(len(s.nuisance))), A=rows.row_slopes(), low=low, high=high,
        outcome=outcome)


def _start(model: LatentModel, rows: RowAnswers, states: ModelMatrix, outcome: Outcome | None,
           fixed: dict[int, float], design: Design) -> np.ndarray:
    """Deterministic starting values from the data: the model without covariates.

    The prevalences and nuisance values of the intercept-only model (the
    general estimator on the counts) give the intercepts, gamma and eta;
    other coefficients start at 0. A Gaussian outcome starts at the weighted
    least-squares fit given the posterior of the true answer there (one EM step).
    """
    s = design.structure
    cells = len(rows.group_labels), len(s.responses)
    counts = np.bincount(rows.groups * cells[1] + rows.responses,
                         minlength=cells[0] * cells[1]).reshape(cells).astype(float)
    problem = likelihood.LikelihoodProblem(rows.base, rows.slopes, counts,
                                           model.low[model.size - model.J:],
                                           model.high[model.size - model.J:])
    fit = likelihood.maximize(problem, fixed={len(s.states) + j: value
                                              for j, value in fixed.items()})
    x = np.zeros(model.size)
    pi = np.clip(fit.pi, 1e-4, 1.0)
    category_pi = pi[model.category_states]
    intercept = states.terms.index("(Intercept)") if states.has_intercept else None
    if intercept is not None:
        for k, c in enumerate(model.free_categories):
            logit = math.log(category_pi[c] / category_pi[model.reference])
            x[k * model.q + intercept] = float(np.clip(logit, -_START_LOGIT, _START_LOGIT))
    start = model.n_alpha + model.n_outcome
    x[start:start + model.B] = np.clip(fit.pi[model.behavioural_states], 0.0, 0.95)
    x[model.size - model.J:] = fit.eta
    if outcome is not None:
        x[model.n_alpha:start] = _outcome_start(model, outcome, fit, rows)
    for j, value in fixed.items():
        x[model.size - model.J + j] = value
    return x


def _outcome_start(model: LatentModel, outcome: Outcome, fit, rows: RowAnswers) -> np.ndarray:
    matrix = rows.row_matrix(fit.eta)[:, model.category_states] * fit.pi[model.category_states]
    w = matrix / matrix.sum(axis=1, keepdims=True)         # posterior without covariates
    X, y = outcome.X, outcome.y
    p = X.shape[2]
    if outcome.family == "gaussian":
        gram = np.einsum("mk,kmp,kmr->pr", w, X, X)
        beta = np.linalg.solve(gram, np.einsum("mk,kmp,m->p", w, X, y))
        residual = y[:, None] - np.einsum("kmp,p->mk", X, beta)
        sigma = math.sqrt(max(float(np.sum(w * residual**2)) / len(y), 1e-12))
        return np.concatenate([beta, [math.log(sigma)]])
    beta = np.zeros(p)
    constant = np.all(X == 1.0, axis=(0, 1))
    if constant.any():
        mean = float(np.clip(y.mean(), 1e-3, 1 - 1e-3))
        beta[int(np.argmax(constant))] = math.log(mean / (1 - mean))
    return beta


def _parameters(model: LatentModel, design: Design, states: ModelMatrix,
                outcome_matrix: ModelMatrix | None, family: str | None) -> list[Parameter]:
    """Every parameter's name, place in the vector and null hypothesis."""
    s = design.structure
    out: list[Parameter] = []
    part = "coefficients" if outcome_matrix is None else "sensitive"
    binary = design.is_binary
    for k, c in enumerate(model.free_categories):
        category = None if binary else s.categories[c]
        for j, term in enumerate(states.terms):
            out.append(Parameter(part=part, name=term, category=category,
                                 index=k * model.q + j, null=0.0))
    if outcome_matrix is not None:
        for j, term in enumerate(outcome_matrix.terms):
            out.append(Parameter(part="coefficients", name=term, category=None,
                                 index=model.n_alpha + j, null=0.0))
        if family == "gaussian":
            out.append(Parameter(part="nuisance", name="sigma", category=None,
                                 index=model.n_alpha + len(outcome_matrix.terms), null=None,
                                 log_scale=True))
    start = model.n_alpha + model.n_outcome
    for b, state in enumerate(model.behavioural_states):
        name = s.state_parameters.get(s.states[state], s.states[state])
        out.append(Parameter(part="nuisance", name=name, category=None, index=start + b,
                             null=0.0, boundary=True))
    for j, spec in enumerate(s.nuisance):
        null = _NULLS.get(spec.name)
        out.append(Parameter(part="nuisance", name=spec.name, category=None,
                             index=model.size - model.J + j, null=null,
                             boundary=null is not None and null in (spec.low, spec.high)))
    return out


#: Null hypotheses of nuisance parameters: the SLD's t = 1 (every carrier answers
#: honestly, Moshagen et al. 2012). The innocuous prevalence of the unrelated question has
#: no natural null value and is not tested.
_NULLS = {"t": 1.0}


def _covariance(best: Maximum, held: np.ndarray, parameters: list[Parameter],
                model: LatentModel, states: ModelMatrix) -> np.ndarray:
    """The inverse observed information of the parameters not held fixed."""
    size = held.size
    free = ~held
    information = -best.hessian[np.ix_(free, free)]
    # judged and inverted with unit diagonal (Jacobi scaling): a covariate measured in
    # dollars rather than thousands must not look like a term without information
    diagonal = np.diag(information)
    unit = np.sqrt(np.where(diagonal > 0, diagonal, 1.0))
    values, vectors = np.linalg.eigh(information / np.outer(unit, unit))
    top = float(np.max(np.abs(values))) if values.size else 1.0
    singular = bool(values.size) and values[0] <= 1e-9 * max(top, 1e-300)
    if singular and not best.converged:
        # away from the maximum the information need not be positive: no standard errors
        covariance = np.full((size, size), np.nan)
        covariance[held, :] = covariance[:, held] = 0.0
        return covariance
    if singular:
        if _largest_predictor(model, best) > _SEPARATED:
            raise EstimationError(_separation(model, best, states))
        loading = np.abs(vectors[:, 0])
        names = {p.index % size: p for p in parameters}
        index = np.flatnonzero(free)[int(np.argmax(loading))]
        culprit = names.get(index)
        what = culprit.label if culprit is not None else f"parameter {index}"
        raise EstimationError(
            f"the model is not identifiable: the data carry no information on {what} "
            "(its observed information is zero); drop the term, or check that every group "
            "has answers")
    covariance = np.zeros((size, size))
    covariance[np.ix_(free, free)] = ((vectors / values) @ vectors.T) / np.outer(unit, unit)
    return covariance


# Perfect separation shows as fitted log-odds beyond this with a standardized coefficient
# (its effect over one standard deviation of the term) beyond _HUGE_EFFECT that its standard
# error cannot tell from 0: the likelihood still rises towards infinity along it.
_SEPARATED = 25.0
_HUGE_EFFECT = 8.0


def _largest_predictor(model: LatentModel, best: Maximum) -> float:
    return float(np.abs(model.Z @ model.alpha(best.x)).max()) if model.n_alpha else 0.0


def _standardized(model: LatentModel, best: Maximum, states: ModelMatrix) -> np.ndarray:
    spread = states.values.std(axis=0)
    spread[spread == 0] = 1.0
    return np.abs(model.alpha(best.x)) * spread[:, None]


def _check_separation(model: LatentModel, best: Maximum, states: ModelMatrix,
                      covariance: np.ndarray) -> None:
    if _largest_predictor(model, best) <= _SEPARATED:
        return
    effect = _standardized(model, best, states)
    alpha = model.alpha(best.x)
    se = np.sqrt(np.maximum(np.diag(covariance)[:model.n_alpha], 0)).reshape(
        model.K - 1, model.q).T
    with np.errstate(divide="ignore", invalid="ignore"):
        weak = np.abs(alpha) < 2 * se
    if np.any((effect > _HUGE_EFFECT) & weak):
        raise EstimationError(_separation(model, best, states))


def _separation(model: LatentModel, best: Maximum, states: ModelMatrix) -> str:
    """Name the term whose coefficient runs off to infinity."""
    size = _standardized(model, best, states)
    order = np.argsort(-size.max(axis=1))
    names = [states.terms[j] for j in order]
    term = next((t for t in names if t != "(Intercept)"), names[0])
    return (f"perfect separation: the term {term!r} separates the true answers, so its "
            "coefficient runs off to infinity (fitted probabilities of 0 or 1); drop the "
            "term, merge its categories, or collect more answers")
