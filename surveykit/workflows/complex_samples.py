"""Reports and regressions on a complex sample: a survey whose file has ``[sampling]``.

Joins the store and the sampling math (:func:`surveykit.sampling.rows.cell_counts`,
:func:`surveykit.sampling.survey_estimate`, :func:`surveykit.sampling.survey_regress`).
Estimation reads weighted cells, not respondents: the store's kept cells
(:mod:`surveykit.store.kept_cells`, kept by every write) for the linearization variance
without domains or with domains by a design key column, and for every numeric question's
weighted estimate; the store's one GROUP BY over the respondents
(:func:`surveykit.store.design_values.weighted_cells`) for domains by another covariate
(not a key of the kept cells); every respondent's row
(:func:`surveykit.store.design_values.sampling_frame`) for the replicate variances, for
regression, and to name a respondent whose stored values are wrong.

* :func:`complex_report_for_survey` is ``surveykit report --survey NAME`` on such a
  survey: today's report (counts, privacy losses, checks) and, per question, the
  weighted pseudo-maximum-likelihood estimate with its design-based standard
  error, interval, design effect, effective sample size and total
  (linearization by default, or replicates), per domain with ``by``, as
  ``survey::svymean``/``svytotal``/``svyby`` give them, and the survey's
  ``[[models]]`` fitted as ``regress`` fits them;
* :func:`complex_report_for_counts_file` and :func:`complex_report_for_files` are
  ``report --counts-file`` (a weighted counts table,
  :mod:`surveykit.counting.weighted_table`) and ``report --data`` on such a survey;
* :func:`complex_regress_for_survey` is ``surveykit regress --survey NAME``:
  the weighted pseudo-likelihood with sandwich standard errors and Wald
  tests, as ``survey::svyglm`` (no likelihood-ratio tests: a pseudo-likelihood
  has none).

Privacy is untouched by sampling: each respondent randomizes their own
answer, so the losses are per respondent whatever the weights, strata or
clusters; the report says so. docs/complex-samples.md has a worked example.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from html import escape
from os import PathLike

import numpy as np
from sqlalchemy import Engine

from surveykit.counting.table import survey_of_counts_file
from surveykit.counting.weighted_table import read_weighted_file
from surveykit.counts import Counts, QuestionCounts
from surveykit.definition.covariates import numeric_predictor_message
from surveykit.errors import EstimationError, ParameterError, SurveykitError, printable
from surveykit.estimation.answers import value_text
from surveykit.estimation.formulas import parse_formula
from surveykit.numeric_counts import NumericQuestionCounts
from surveykit.reporting.models import ModelFit
from surveykit.reporting.numeric_section import NumericSection, numeric_section
from surveykit.reporting.report import REPORT_FORMATS, Report, build_report, render_report
from surveykit.sampling import (
    VARIANCE_METHODS,
    SamplingDesign,
    survey_estimate,
    survey_linear_regress,
    survey_regress,
    weighted_counts,
)
from surveykit.sampling.counts import NUMBER, WeightedCounts, design_keys
from surveykit.sampling.numeric import survey_numeric_estimate
from surveykit.sampling.numeric_cells import estimate_from_numeric_cells, numeric_counts_of_cells
from surveykit.sampling.rows import cell_counts, design_rows, weights_from_design
from surveykit.store import Database
from surveykit.store import database as store
from surveykit.store.design_values import GROUP_SUFFIX, sampling_frame, weighted_cells
from surveykit.store.kept_cells import KeptSample, key_columns, read_sample
from surveykit.vocabulary import domain_order, p_value_text
from surveykit.vocabulary import number_text as _num
from surveykit.workflows.counting import weighted_cells_of_files
from surveykit.workflows.regress import numeric_model_frame
from surveykit.workflows.report import by_covariate, sampling_declared

__all__ = ["CI_METHOD", "PRIVACY_NOTE", "ComplexSampleReport", "complex_regress_for_survey",
           "complex_regress_text", "complex_report_for_counts_file", "complex_report_for_files",
           "complex_report_for_survey",
           "render_complex_report", "sampling_declared"]

#: The interval of a design-based estimate: Wald on the logit scale with t quantiles on
#: the design's degrees of freedom (survey's svyciprop default).
CI_METHOD = "logit"
#: What the report says about privacy under a complex sample.
PRIVACY_NOTE = ("Sampling does not change privacy: each respondent randomizes their own "
                "answer, so the privacy losses above hold for every respondent whatever the "
                "weights, strata or clusters, and a weight never changes what a respondent "
                "is told.")


@dataclass(frozen=True, kw_only=True)
class ComplexSampleReport:
    """The report of a survey with ``[sampling]``: ``report`` is today's (counts, privacy,
    checks; its estimates assume simple random sampling), ``estimates`` the design-based
    estimate of each question (a :class:`~surveykit.sampling.estimate.SurveyEstimate`),
    ``skipped`` why a question has none, ``models`` the survey's ``[[models]]`` fitted as
    ``surveykit regress`` fits them on this survey (design-based:
    :class:`~surveykit.sampling.regression.SurveyRegressionResult`, or the reason there is
    no fit). ``respondents``, ``strata``, ``psus``,
    ``sum_weights`` and ``df`` describe the sample."""

    report: Report
    sampling: SamplingDesign
    variance: str
    by: str | None
    level: float
    estimates: Mapping[str, object]
    skipped: Mapping[str, str] = field(default_factory=dict)
    respondents: int
    strata: int
    psus: int
    sum_weights: float
    df: int
    models: tuple[ModelFit, ...] = ()

    @property
    def survey(self) -> str:
        return self.report.survey

    @property
    def warning_count(self) -> int:
        return self.report.warning_count + len(self.skipped) + sum(
            len(e.warnings) for e in self.estimates.values()) + sum(
            len(m.result.warnings) if m.result is not None else 1 for m in self.models)

    @property
    def variance_method(self) -> str:
        """The variance method as the estimates name it (e.g. "JKn", "replicates (JK1)")."""
        for estimate in self.estimates.values():
            return estimate.variance_method
        return self.variance

    def design_dict(self) -> dict[str, object]:
        """The ``sampling`` object of the JSON report."""
        return {"design": self.sampling.to_dict(), "description": self.sampling.describe(),
                "respondents": self.respondents, "strata": self.strata, "psus": self.psus,
                "sum_weights": self.sum_weights, "variance_method": self.variance_method,
                "df": self.df, "by": self.by, "ci_method": CI_METHOD,
                "privacy": PRIVACY_NOTE}

    def to_dict(self) -> dict:
        """Today's JSON report with ``sampling`` (the design) and, in every question, the
        design-based keys of :meth:`SurveyEstimate.to_dict` (``estimate``, ``se``,
        ``ci_low``, ``ci_high``, ``deff``, ``n_effective``, ``total``, ``total_se``,
        ``variance_method``, ``df``, ``domains`` under ``by``); ``pi_mle`` is ``estimate``,
        and the simple-random-sample figures stay under ``srs``. ``models`` holds the
        design-based fits, each ``fit`` the object ``surveykit regress --format json``
        prints."""
        data = self.report.to_dict()
        data["sampling"] = self.design_dict()
        for question in data["questions"]:
            if question.get("type") == "number":
                continue  # weighted already: its section holds the design-based estimate
            estimate = self.estimates.get(question["id"])
            question["srs"] = {key: question.get(key) for key in
                               ("pi_hat", "pi_mle", "se", "ci_low", "ci_high", "ci_method")}
            if estimate is None:
                question["sampling_skipped"] = self.skipped.get(question["id"])
                for key in ("pi_hat", "pi_mle", "se", "ci_low", "ci_high"):
                    question[key] = None
                continue
            survey = estimate.to_dict(self.level, CI_METHOD)
            for key in ("sampling", "strata", "psus", "design", "n", "warnings"):
                survey.pop(key, None)
            survey.setdefault("domains", [])
            question.update(survey)
            question["warnings"] = [*question["warnings"], *estimate.warnings]
        data["models"] = [{"formula": m.spec.formula, "question": m.spec.question,
                           "fit": m.result.to_dict() if m.result is not None else None,
                           "error": m.error} for m in self.models]
        return data


def complex_report_for_survey(database: Engine | str | PathLike, survey_name: str, *,
                              variance: str = "linearization", by: str | None = None,
                              level: float = 0.95, method: str | None = None,
                              replicates: int = 500,
                              rng: np.random.Generator | int | None = None
                              ) -> ComplexSampleReport:
    """The report of survey ``survey_name`` (with ``[sampling]``) from the stored answers and
    design values; ``variance`` one of :data:`~surveykit.sampling.VARIANCE_METHODS`, ``by``
    a design column or covariate whose values are the domains; ``method`` the interval of
    the simple-random-sample figures (today's report); ``replicates`` and ``rng`` the
    bootstrap's.

    >>> # complex_report_for_survey("surveykit.db", "api_strat", by="stype").to_dict()
    """
    if variance not in VARIANCE_METHODS:
        raise ParameterError(f"--variance ({variance!r}) must be one of "
                             f"{', '.join(VARIANCE_METHODS)}")
    with store.engine_for(database) as engine:
        survey = store.load_survey(engine, survey_name)
        if survey.sampling is None:
            raise ParameterError(f"survey {survey.name!r} has no [sampling] section: its "
                                 "report assumes simple random sampling (see 'surveykit docs "
                                 "complex-samples' to declare weights, strata and clusters)")
        by_name = by_covariate(survey, by, described="a design column or covariate")
        keys = key_columns(survey)
        kept = read_sample(engine, survey, by_name if by_name in keys else None)
        sample = _sample_from_cells(engine, survey, variance, by_name, kept)
        if sample is None:
            sample = _sample_from_rows(engine, survey, variance, by_name)
        counts = store.count_responses(engine, survey.name, survey=survey)
        if kept.table is not None:
            numeric = kept.numeric_counts(survey)
        else:
            with Database(engine) as database:
                numeric = database.survey(survey.name).numeric_counts()
        issued = store.issued_respondent_count(engine, survey.name)
        tallies = store.code_tallies(engine, survey.name) if issued else None
        models = tuple(_declared_models(engine, survey))
        asked = [q for q in survey.questions if q.numeric]
        # a numeric question's weighted estimate: from its kept cells where they serve
        # (linearization, no domains, a per-answer transform affine in the answer), else
        # from its answers with their weights and design values (domains, replicates,
        # mix_unknown, or values that are no clean design, which the rows name)
        from_cells = (kept.table is not None and variance == "linearization"
                      and by_name is None)
        from_rows = [q for q in asked if not (from_cells and q.design.has_transform)]
        frame = sampling_frame(engine, survey.name, covariates=[by_name] if by_name else []
                               )[1] if from_rows else None
    sections = [_numeric_section_from_cells(question, kept.table, survey.sampling, found, level)
                if question not in from_rows else
                _numeric_section(question, frame, survey.sampling, found, level,
                                 variance=variance, by=by_name, replicates=replicates, rng=rng)
                for question, found in zip(asked, numeric, strict=True)]
    report = build_report(survey, counts, code_tallies=tallies, issued=issued, level=level,
                          method=method, numeric=sections)
    if sample.respondents == 0:
        raise ParameterError(f"survey {survey.name!r} has no answers yet: import some first")
    estimates, skipped = _design_estimates(survey, sample, variance=variance,
                                           replicates=replicates, rng=rng)
    return ComplexSampleReport(
        report=report, sampling=survey.sampling, variance=variance, by=by_name, level=level,
        estimates=estimates, skipped=skipped, respondents=sample.respondents,
        strata=sample.strata, psus=sample.psus, sum_weights=sample.sum_weights,
        df=_design_df(sample.df, estimates, variance),
        models=models)


def _design_df(linearization: int, estimates: Mapping[str, object], variance: str) -> int:
    """The design's degrees of freedom as the report states them: PSUs - strata, or with the
    producer's replicate weights survey's ``degf`` for svrepdesign, the rank of the
    replicate weights - 1 (the estimates' df, on which their intervals are)."""
    if variance == "replicates":
        for estimate in estimates.values():
            return estimate.df
    return linearization


def _design_estimates(survey, sample: _Sample, *, variance: str, replicates: int = 500,
                      rng=None) -> tuple[dict[str, object], dict[str, str]]:
    """Each yes/no or category question's design-based estimate (numeric questions have
    theirs in their sections), its domains in their values' order as svyby gives them;
    and, for those that cannot be estimated, why."""
    estimates: dict[str, object] = {}
    skipped: dict[str, str] = {}
    for question in survey.questions:
        if question.numeric:
            continue
        try:
            estimate = survey_estimate(question.design, sample.counts(question),
                                       variance=variance, replicates=replicates, rng=rng)
            estimates[question.id] = replace(estimate, domains=tuple(
                sorted(estimate.domains, key=lambda d: domain_order(d.domain))))
        except EstimationError as exc:
            skipped[question.id] = str(exc)
    return estimates, skipped


def _declared_models(engine: Engine, survey) -> list[ModelFit]:
    """Every ``[[models]]`` entry fitted as ``surveykit regress`` fits it on a survey with
    ``[sampling]`` (:func:`complex_regress_for_survey`: weighted pseudo-likelihood, sandwich
    standard errors over the PSUs, Wald t tests); one that cannot be fitted carries why."""
    fits = []
    for spec in survey.models:
        try:
            result = complex_regress_for_survey(engine, survey.name, spec.formula,
                                                family=spec.family,
                                                sensitive_formula=spec.sensitive_formula)
        except SurveykitError as exc:
            fits.append(ModelFit(spec=spec, result=None, error=str(exc)))
        else:
            fits.append(ModelFit(spec=spec, result=result))
    return fits


@dataclass(frozen=True, kw_only=True)
class _Sample:
    """The respondents of a complex sample as estimation reads them: ``counts(question)``
    gives a question's weighted counts; the rest describes the sample."""

    counts: Callable[[object], object]
    respondents: int
    strata: int
    psus: int
    sum_weights: float
    df: int


def _sample_from_cells(engine: Engine, survey, variance: str, by: str | None,
                       kept: KeptSample) -> _Sample | None:
    """The sample from weighted cells (O(cells) rows whatever the number of respondents),
    for the linearization variance: the store's kept cells (:mod:`surveykit.store.kept_cells`)
    without domains or with domains by a design key column (strata, clusters, fpc: a key of
    every cell); domains by any other covariate are not a key of the kept cells, so they
    come from the store's GROUP BY over the respondents
    (:func:`surveykit.store.design_values.weighted_cells`). None where only the
    respondents' rows will do: the replicate variances (a jackknife without clusters,
    bootstrap and BRR draw or pair respondents and PSUs in their stored order, the
    producer's replicate weights need their rank), or stored values that are not a clean
    design (the rows then say which respondent is wrong)."""
    if variance != "linearization":
        return None
    if by is None or by in key_columns(survey):
        table = kept.table
    else:
        read = weighted_cells(engine, survey.name, by, replicates=False)
        table = None if read is None else read[1]
    if table is None:
        return None
    try:
        return _sample_of_cells(survey, {
            question.id: table[table["question"] == question.id].drop(columns="question")
            for question in survey.questions}, numeric_only=True)
    except ParameterError:
        return None


def _sample_of_cells(survey, cells: Mapping[str, object], *, numeric_only: bool = False
                     ) -> _Sample:
    """The sample from every question's cells (a table in the warehouse format each);
    ``numeric_only``: a survey of numeric questions only is described by their cells (the
    store's kept cells hold every respondent of the sample for every question)."""
    if all(table.empty for table in cells.values()):
        return _Sample(counts=lambda question: None, respondents=0, strata=0, psus=0,
                       sum_weights=0.0, df=0)
    def read(question):
        table = cells[question.id]
        counts = cell_counts(table.drop(columns="replicate_df", errors="ignore"),
                             survey.sampling, design=question.design,
                             grouped=len(question.design.group_names) > 1,
                             name=f"question {question.id!r}")
        if "replicate_df" in table.columns and len(table):
            # the rank of the respondents' replicate weights, which the cells' sums can lower
            counts = replace(counts, replicate_rank=int(table["replicate_df"].iloc[0]) + 1)
        return counts

    counts = {question.id: read(question) for question in survey.questions
              if not question.numeric}
    if counts:
        # every respondent of the sample is a cell of every question: the largest tells it all
        shape = max(counts.values(), key=lambda c: int(c.count.sum()))
    elif numeric_only:  # the design's structure from a question's cells (every respondent)
        shape = _structure_of(cells[survey.questions[0].id], survey.sampling)
    else:
        raise ParameterError(f"survey {survey.name!r} has no yes/no or category question")
    return _Sample(counts=lambda question: counts[question.id],
                   respondents=int(shape.count.sum()), strata=shape.stratum_count,
                   psus=shape.psu_count, sum_weights=float(math.fsum(shape.weight)),
                   df=shape.degrees_of_freedom)


def _structure_of(table, sampling: SamplingDesign):
    """The design's structure (no answers) from one question's cells."""
    keys = [c for c in table.columns if c in (*design_keys(sampling), "weight", "n",
                                              "weight2")]
    cells = table[keys].assign(response=None)
    if sampling.weight is None:
        cells = weights_from_design(cells.assign(weight=cells["n"]), sampling)
    return WeightedCounts.from_table(cells, sampling, responses=())


def complex_report_for_counts_file(database: Engine | str | PathLike, path: str | PathLike,
                                   survey_name: str | None = None, *, level: float = 0.95,
                                   method: str | None = None,
                                   variance: str = "linearization") -> ComplexSampleReport:
    """The report of a survey with ``[sampling]`` from a weighted counts table
    (:mod:`surveykit.counting.weighted_table`: sums of weights per question, stratum, PSU,
    fpc, group and response, made anywhere): the design-based estimates with the
    linearization variance, or ``variance="replicates"`` from the sums of the producer's
    replicate weights the table carries (``rep1`` ...), as from the stored answers, and
    today's report from the cells' respondents. A counts table has no respondents, so
    ``[[models]]`` are not fitted.

    >>> # complex_report_for_counts_file("surveykit.db", "weighted.csv").to_dict()
    """
    with store.engine_for(database) as engine:
        survey = store.load_survey(engine, survey_name or survey_of_counts_file(path))
        cells = read_weighted_file(path, survey)
        issued = store.issued_respondent_count(engine, survey.name)
        tallies = store.code_tallies(engine, survey.name) if issued else None
    return _report_from_cells(survey, cells, issued, tallies, level, method, str(path),
                              variance)


def complex_report_for_files(database: Engine | str | PathLike, survey_name: str,
                             data, *, replace: bool = False, level: float = 0.95,
                             method: str | None = None, engine_name: str = "duckdb",
                             scheduler: str | None = None,
                             variance: str = "linearization") -> ComplexSampleReport:
    """``report --data`` on a survey with ``[sampling]``: the answers and design columns of
    the files ``data`` summed into weighted cells without importing them, by DuckDB or Dask
    (``engine_name``, ``scheduler``;
    :func:`surveykit.workflows.counting.weighted_cells_of_files`), then reported as a
    weighted counts table is (:func:`complex_report_for_counts_file`)."""
    with store.engine_for(database) as engine:
        survey, table = weighted_cells_of_files(engine, survey_name, data, replace=replace,
                                                engine_name=engine_name, scheduler=scheduler)
        issued = store.issued_respondent_count(engine, survey.name)
        tallies = store.code_tallies(engine, survey.name) if issued else None
    cells = {question.id: table[table["question"] == question.id].drop(columns="question")
             for question in survey.questions}
    return _report_from_cells(survey, cells, issued, tallies, level, method, "--data",
                              variance)


def _report_from_cells(survey, cells, issued, tallies, level, method, where: str,
                       variance: str = "linearization") -> ComplexSampleReport:
    """The report from every question's weighted cells (no respondents, so no models):
    linearization estimates (or ``variance="replicates"``: the producer's replicate weights'
    sums), and today's report from the cells' respondents."""
    if variance not in ("linearization", "replicates"):
        raise ParameterError(f"{where}: --variance {variance} needs every respondent's row; "
                             "a counts table holds cells: use linearization, or replicates "
                             "with the sums of the producer's replicate weights (rep1 ...)")
    if variance == "replicates" and not all(
            "rep1" in table.columns for table in cells.values()):
        raise ParameterError(f"{where}: --variance replicates needs the sums of the "
                             "producer's replicate weights (columns rep1 ... repR); "
                             "'surveykit counts --data FILES --format csv' writes them when "
                             "[sampling] has replicate_weights")
    try:
        sample = _sample_of_cells(survey, cells, numeric_only=True)
    except ParameterError as exc:
        raise ParameterError(f"{where}: {exc}") from None
    if sample.respondents == 0:
        raise ParameterError(f"{where} counts no respondents of survey {survey.name!r}")
    plain = []
    numeric = []
    for question in survey.questions:
        table = cells[question.id]
        if question.numeric:
            sums = _numeric_sums_of_cells(table)
            numeric.append(_numeric_section_from_cells(
                question, sums.assign(question=question.id), survey.sampling,
                _numeric_counts_of_cells(question, sums), level))
            continue
        answered = table[table["response"].notna()]
        counted: dict[str, dict[str, int]] = {}
        for (group, response), n in answered.groupby(["group", "response"])["n"].sum().items():
            counted.setdefault(str(int(group)), {})[response] = int(n)
        plain.append(QuestionCounts(question_id=question.id,
                                    counts=Counts.from_mapping(counted),
                                    missing=int(table.loc[table["response"].isna(), "n"].sum())))
    report = build_report(survey, plain, code_tallies=tallies, issued=issued, level=level,
                          method=method, numeric=numeric)
    by = "domain" if any("domain" in table.columns for table in cells.values()) else None
    estimates, skipped = _design_estimates(survey, sample, variance=variance)
    return ComplexSampleReport(
        report=report, sampling=survey.sampling, variance=variance, by=by,
        level=level, estimates=estimates, skipped=skipped, respondents=sample.respondents,
        strata=sample.strata, psus=sample.psus, sum_weights=sample.sum_weights,
        df=_design_df(sample.df, estimates, variance))


def _numeric_sums_of_cells(table):
    """A counts table's cells of a numeric question (one cell per reported number, its
    ``response`` the number's text) as the kept cells hold them
    (:mod:`surveykit.sampling.numeric_cells`): the numbers' cells marked :data:`NUMBER`
    with their sums ``y``, ``y2``, ``wy``, ``wy2`` (and, with ``weight2``, ``w2y``,
    ``w2y2``); "don't know" and unanswered cells as they are. Within a cell the number is
    one value y, so each sum is the cell's n, weight or weight2 times y or y^2."""
    import pandas as pd

    response = table["response"]
    is_number = response.notna() & (response != "dont_know")
    try:
        y = pd.to_numeric(response.where(is_number), errors="raise").fillna(0.0)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"a numeric question's response in a counts table must be a "
                             f"number, 'dont_know' or empty ({exc})") from None
    sums = {"y": table["n"] * y, "y2": table["n"] * y * y,
            "wy": table["weight"] * y, "wy2": table["weight"] * y * y}
    if "weight2" in table.columns:
        sums.update(w2y=table["weight2"] * y, w2y2=table["weight2"] * y * y)
    return table.assign(response=response.where(~is_number, NUMBER), **sums)


def _numeric_counts_of_cells(question, sums) -> NumericQuestionCounts:
    """The unweighted counts of a numeric question from its cells' sums (per group the
    numbers, their sum and sum of squares, the "don't know" answers; ``missing`` the cells'
    respondents without an answer), as the store's numeric counts give them."""
    return NumericQuestionCounts(question_id=question.id,
                                 counts=numeric_counts_of_cells(sums[sums["response"].notna()]),
                                 missing=int(sums.loc[sums["response"].isna(), "n"].sum()))


def _sample_from_rows(engine: Engine, survey, variance: str, by: str | None) -> _Sample:
    """The sample from every respondent's row (design values and answers), each value
    checked and named where wrong."""
    survey, frame = sampling_frame(engine, survey.name, covariates=[by] if by else [])
    if frame.empty:
        return _Sample(counts=lambda question: None, respondents=0, strata=0, psus=0,
                       sum_weights=0.0, df=0)
    sampling = survey.sampling
    keep = variance in ("jackknife", "bootstrap", "brr")
    rows = design_rows(frame, sampling, keep_respondents=keep)
    shape = rows.counts

    def counts(question):
        group = question.id + GROUP_SUFFIX if len(question.design.group_names) > 1 else None
        return weighted_counts(frame, sampling, design=question.design, answer=question.id,
                               group=group, domain=by, keep_respondents=keep)

    return _Sample(counts=counts, respondents=len(frame), strata=shape.stratum_count,
                   psus=shape.psu_count, sum_weights=float(math.fsum(rows.weight)),
                   df=shape.degrees_of_freedom)


def _numeric_section(question, frame, sampling: SamplingDesign,
                     counts: NumericQuestionCounts, level: float, *,
                     variance: str = "linearization", by: str | None = None,
                     replicates: int = 500, rng=None) -> NumericSection:
    """A numeric question's section with its design-based estimate, overall and per value
    of ``by``: the Horvitz-Thompson total sum w r' of the design's unbiased transform r' of
    each answer, the Hajek mean (``mix_unknown``: its two groups' weighted means solved), and
    their variance by linearization (with an fpc, plus the randomization term) or
    ``variance``'s replicates (:func:`surveykit.sampling.numeric.survey_numeric_estimate`).
    A failure falls back to the simple-random-sample estimate with the reason as a warning."""
    answered = frame[frame[question.id].notna()].reset_index(drop=True)
    found = None
    note = None
    if not answered.empty:
        text = answered[question.id].astype(str)
        dont_know = (text == "dont_know").to_numpy()
        groups = (answered[question.id + GROUP_SUFFIX].tolist()
                  if len(question.design.group_names) > 1 else None)
        domains = None if by is None else [
            None if value is None or (isinstance(value, float) and math.isnan(value))
            else value_text(value).strip() for value in answered[by]]
        try:
            found = survey_numeric_estimate(
                question.design, np.where(dont_know, np.nan, _numbers_of(text, dont_know)),
                rows=design_rows(answered, sampling, keep_respondents=True), groups=groups,
                dont_know=dont_know, domains=domains, variance=variance,
                replicates=replicates, rng=rng)
        except (EstimationError, ParameterError) as exc:
            note = f"no weighted estimate ({exc}); the mean assumes simple random sampling"
    section = numeric_section(
        question, counts.counts, missing=counts.missing, level=level,
        estimate=None if found is None else found.estimate, by=by,
        domains=None if found is None else {
            label: found.domains[label] for label in sorted(found.domains, key=domain_order)})
    if note is not None:
        section = replace(section, warnings=(*section.warnings, note))
    return section


def _numeric_section_from_cells(question, cells, sampling: SamplingDesign,
                                counts: NumericQuestionCounts, level: float) -> NumericSection:
    """:func:`_numeric_section` from the question's kept cells (per-PSU sums of w, w y, w y^2
    and, without clusters, of w^2, w^2 y, w^2 y^2: :mod:`surveykit.sampling.numeric_cells`),
    not from the respondents: the same estimate, as the design's per-answer unbiased
    transform is affine in the answer (``has_transform``)."""
    mine = cells[(cells["question"] == question.id) & cells["response"].notna()]
    return _weighted_section(
        question, counts, level, not mine.empty,
        lambda: estimate_from_numeric_cells(mine, sampling, question.design))


def _weighted_section(question, counts: NumericQuestionCounts, level: float, answered: bool,
                      estimate_of: Callable[[], object]) -> NumericSection:
    """The section with the weighted estimate ``estimate_of()`` where the question has
    answers; a design without a per-answer transform (``mix_unknown``), or a failure (a
    lonely unit among the answering respondents, too few answers), falls back to the
    simple-random-sample estimate with the reason as a warning."""
    estimate = None
    note = None
    if not answered:
        pass
    elif not question.design.has_transform:
        note = (f"the {question.design.model} design has no per-answer unbiased transform, so "
                "the weighted estimate is not computed; the mean assumes simple random "
                "sampling")
    else:
        try:
            estimate = estimate_of()
        except (EstimationError, ParameterError) as exc:
            note = f"no weighted estimate ({exc}); the mean assumes simple random sampling"
    section = numeric_section(question, counts.counts, missing=counts.missing, level=level,
                              estimate=estimate)
    if note is not None:
        section = replace(section, warnings=(*section.warnings, note))
    return section


def _numbers_of(text, dont_know: np.ndarray) -> np.ndarray:
    """Stored numeric answers (text) as floats, "dont_know" as NaN."""
    return np.array([math.nan if dk else float(value) for value, dk
                     in zip(text, dont_know, strict=True)], dtype=float)


# -- rendering ------------------------------------------------------------------------------

def _rows(report: ComplexSampleReport) -> list[tuple[str, dict]]:
    """(question id, design-based numbers) for every question and domain, in order."""
    data = report.to_dict()
    out = []
    for question in data["questions"]:
        if question.get("variance_method") is None:
            continue
        out.append((question["id"], question))
        for domain in question.get("domains", []):
            out.append((f"{question['id']} [{report.by} = {domain['domain']}]", domain))
    return out


def _summary_lines(report: ComplexSampleReport) -> list[str]:
    return [f"Design: {report.sampling.describe()}.",
            f"Respondents {report.respondents:,}, strata {report.strata:,}, PSUs "
            f"{report.psus:,}, sum of weights {report.sum_weights:,.2f}; variance "
            f"{report.variance_method}, {report.df:,} degrees of freedom; "
            f"{report.level:.0%} intervals: {CI_METHOD} (t on the design's df).",
            PRIVACY_NOTE]


_HEADERS = ("question", "estimate", "se", "ci_low", "ci_high", "deff", "n_eff", "total",
            "total_se")


def _cells(entry: dict) -> list[str]:
    digits = {"deff": 3, "n_effective": 1, "total": 1, "total_se": 1}
    return [_num(entry.get(key), digits.get(key, 4))
            for key in ("estimate", "se", "ci_low", "ci_high", "deff", "n_effective", "total",
                        "total_se")]


def _text_section(report: ComplexSampleReport) -> str:
    lines = ["", "Complex sample (design-based estimates; they replace the simple-random-"
             "sample estimates above for inference)"]
    lines += _summary_lines(report)
    table = [list(_HEADERS)] + [[printable(name), *_cells(entry)]
                                for name, entry in _rows(report)]
    widths = [max(len(row[i]) for row in table) for i in range(len(_HEADERS))]
    for row in table:
        lines.append("  ".join(cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i])
                               for i, cell in enumerate(row)))
    for question, reason in report.skipped.items():
        lines.append(f"{printable(question)}: no design-based estimate ({printable(reason)})")
    for model in report.models:
        lines += ["", f"Model: {printable(model.spec.formula)}"]
        if model.result is None:
            lines.append(f"! No fit: {printable(model.error)}")
        else:
            lines += complex_regress_text(model.result).rstrip("\n").splitlines()
    return "\n".join(lines) + "\n"


_MODEL_HEADERS = ("part", "term", "estimate", "se", "t", "p")


def _model_rows(model: ModelFit) -> list[list[str]]:
    """A design-based fit's parameters as table cells (text, not yet escaped)."""
    rows = []
    for record in model.result.to_dict()["coefficients"]:
        term = record["term"] if record.get("category") is None \
            else f"{record['category']}: {record['term']}"
        p = record["p_value"]
        rows.append([record["part"], term, _num(record["estimate"], 4), _num(record["se"], 4),
                     _num(record["t"], 2),
                     p_value_text(p)])
    return rows


def _model_lines(model: ModelFit) -> list[str]:
    """The line under a fit's title: the design-based facts."""
    result = model.result
    return [f"Design-based regression (survey::svyglm) of {result.sensitive} "
            f"({result.design.describe()}): n {result.n:,}, sum of weights "
            f"{result.sum_weights:,.2f}, variance {result.variance_method}, residual df "
            f"{result.df_residual:,}; Wald t tests with sandwich standard errors (a "
            "pseudo-likelihood has no likelihood-ratio test).", *result.notes,
            *result.warnings]


def _markdown_section(report: ComplexSampleReport) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    lines = ["", "## Complex sample", ""]
    lines += [line + "\n" for line in _summary_lines(report)]
    lines += ["| " + " | ".join(_HEADERS) + " |", "|" + "---|" * len(_HEADERS)]
    lines += ["| " + " | ".join([cell(name), *_cells(entry)]) + " |"
              for name, entry in _rows(report)]
    for model in report.models:
        lines += ["", f"### Model: {cell(model.spec.formula)}", ""]
        if model.result is None:
            lines.append(f"No fit: {cell(model.error)}")
            continue
        lines += [line + "\n" for line in _model_lines(model)]
        lines += ["| " + " | ".join(_MODEL_HEADERS) + " |", "|" + "---|" * len(_MODEL_HEADERS)]
        lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in _model_rows(model)]
    return "\n".join(lines) + "\n"


def _html_section(report: ComplexSampleReport) -> str:
    summary = "".join(f"<p>{escape(line)}</p>" for line in _summary_lines(report))
    head = "".join(f"<th>{h}</th>" for h in _HEADERS)
    body = "".join("<tr><td>" + escape(name) + "</td>" + "".join(
        f"<td>{c}</td>" for c in _cells(entry)) + "</tr>" for name, entry in _rows(report))
    models = ""
    for model in report.models:
        models += f"<h3>Model: {escape(model.spec.formula)}</h3>"
        if model.result is None:
            models += f"<p>No fit: {escape(model.error)}</p>"
            continue
        models += "".join(f"<p>{escape(line)}</p>" for line in _model_lines(model))
        models += ("<table><thead><tr>" + "".join(f"<th>{h}</th>" for h in _MODEL_HEADERS)
                   + "</tr></thead><tbody>" + "".join(
                       "<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>"
                       for row in _model_rows(model)) + "</tbody></table>")
    return (f'<section id="complex-sample"><h2>Complex sample</h2>{summary}<table><thead>'
            f"<tr>{head}</tr></thead><tbody>{body}</tbody></table>{models}</section>")


def render_complex_report(report: ComplexSampleReport, fmt: str = "text") -> str:
    """The report in ``fmt`` (one of REPORT_FORMATS): today's report with the sampling design
    and the design-based estimates."""
    if fmt not in REPORT_FORMATS:
        raise ParameterError(f"format ({fmt!r}) must be one of {', '.join(REPORT_FORMATS)}")
    if fmt == "json":
        return json.dumps(report.to_dict(), indent=2, allow_nan=False) + "\n"
    base = render_report(report.report, fmt)
    if fmt == "text":
        return base + _text_section(report)
    if fmt == "markdown":
        return base + _markdown_section(report)
    at = base.find("</h1>")
    at = at + len("</h1>") if at >= 0 else base.rfind("</body>")
    return base[:at] + _html_section(report) + base[at:]


def complex_regress_for_survey(database: Engine | str | PathLike, survey_name: str,
                               formula: str, *, family: str | None = None,
                               sensitive_formula: str = "~ 1",
                               fixed: Mapping[str, float] | None = None,
                               variance: str = "linearization"):
    """``regress`` on a survey with ``[sampling]``: the weighted pseudo-likelihood fit of
    ``formula`` (its sensitive question is the one of the survey's questions it names) with
    design-based (sandwich) standard errors, as ``survey::svyglm``
    (:func:`surveykit.sampling.survey_regress`). With a numeric question as the outcome,
    weighted least squares of its design's unbiased transform with the same sandwich, as
    ``svyglm(family = gaussian())`` (:func:`surveykit.sampling.survey_linear_regress`;
    "don't know" answers left out and counted).

    >>> # complex_regress_for_survey("surveykit.db", "api_strat", "warner ~ api00")
    """
    with store.engine_for(database) as engine:
        survey = store.load_survey(engine, survey_name)
        if survey.sampling is None:
            raise ParameterError(f"survey {survey.name!r} has no [sampling] section")
        ids = [q.id for q in survey.questions]
        columns = [*ids, *(c.name for c in survey.covariates)]
        parsed = parse_formula(formula, columns)
        used = [parsed.response, *parsed.columns]
        if sensitive_formula.strip() not in ("~ 1", "~1"):
            used += parse_formula(sensitive_formula, columns, option="sensitive formula",
                                  response=False).columns
        asked = [c for c in dict.fromkeys(used) if c in ids]
        if len(asked) == 2 and parsed.response == asked[0] \
                and survey.question(asked[1]).numeric:
            raise ParameterError(
                f"formula: {printable(numeric_predictor_message(formula, *asked))}")
        if len(asked) != 1:
            raise ParameterError(f"formula ({printable(formula)}) must use exactly one of the "
                                 f"survey's questions ({', '.join(ids)}); it uses "
                                 f"{', '.join(asked) or 'none'}")
        covariates = [c for c in dict.fromkeys(used) if c not in ids]
        survey, frame = sampling_frame(engine, survey.name, [asked[0]], covariates)
    question = survey.question(asked[0])
    if question.numeric:
        # least squares of the design's unbiased transform, svyglm(family = gaussian())
        if fixed:
            raise ParameterError(f"--fix: question {question.id!r} is numeric; its least "
                                 "squares has no parameters to hold")
        frame = numeric_model_frame(frame, question.id, family=family,
                                    sensitive_formula=sensitive_formula)
        return survey_linear_regress(frame, formula, scrambled=question.id,
                                     design=question.design, sampling=survey.sampling,
                                     variance=variance, group=question.id + GROUP_SUFFIX)
    group = question.id + GROUP_SUFFIX if len(question.design.group_names) > 1 else None
    return survey_regress(frame, formula, sensitive=question.id, design=question.design,
                          sampling=survey.sampling, group=group, family=family,
                          sensitive_formula=sensitive_formula, fixed=fixed,
                          variance=variance)


def complex_regress_text(result) -> str:
    """A design-based fit for the terminal: the design, then every parameter with its
    sandwich SE and Wald t test on the design's residual degrees of freedom."""
    frame = result.to_frame()
    lines = [f"Design-based regression (survey::svyglm): {result.formula}",
             f"Sensitive question {result.sensitive} ({result.design.describe()}); "
             f"design: {result.sampling.describe()}.",
             f"n {result.n:,}, sum of weights {result.sum_weights:,.2f}, variance "
             f"{result.variance_method}, residual df {result.df_residual:,}.",
             "Wald t tests with sandwich (design-based) standard errors; a pseudo-likelihood "
             "has no likelihood-ratio test.",
             "", frame.to_string(index=False, float_format=lambda v: f"{v:.6g}")]
    lines += [f"Note: {printable(n)}" for n in result.notes]
    lines += [f"Warning: {printable(w)}" for w in result.warnings]
    return "\n".join(lines) + "\n"
