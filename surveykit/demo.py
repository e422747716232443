"""The end-to-end demo: the whole surveykit workflow on the sample survey, in a fresh folder.

1. create an embedded SQLite database and run the migrations;
2. add the sample survey (``sample_data/academic_integrity.toml``);
3. generate questionnaires for the respondents (slips and answer sheets);
4. simulate the respondents: each has a true status drawn with a stated
   prevalence per question, and answers as their code says (T: truthfully,
   L: the opposite, D: "don't know"); a few leave a question blank;
5. import the answers (a wide CSV, as a spreadsheet or ODK export would give);
6. write the report (text and HTML), and compare the estimates with the truth.

Simulating needs each respondent's codes, which exist only on their slips. The
demo therefore asks ``generate`` for a key file, reads it to simulate, and
deletes it at once: a real survey never needs one.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from surveykit import store
from surveykit.collection.generation import generate_questionnaires
from surveykit.definition.survey import load_survey_file
from surveykit.errors import ParameterError
from surveykit.reporting.report import Report, render_report, report_for_survey
from surveykit.resources import locate_resource
from surveykit.store.importer import import_responses

__all__ = ["DEMO_PREVALENCE", "DemoResult", "fresh_directory", "run_demo"]

#: The true prevalences the simulated respondents are drawn with.
DEMO_PREVALENCE: Mapping[str, float] = {
    "exam_cheating": 0.30,
    "plagiarism": 0.20,
    "contract_cheating": 0.05,
    "fabricated_data": 0.12,
}
#: Share of answers left blank (a respondent skipping a question).
BLANK_SHARE = 0.02
SAMPLE_SURVEY = "academic_integrity.toml"


@dataclass(frozen=True)
class DemoResult:
    """Where the demo put things, its report, and the truth it simulated."""

    directory: Path
    database: Path
    questionnaires: Path
    responses: Path
    report_html: Path
    respondents: int
    truth: Mapping[str, float]
    report: Report

    def comparison(self) -> list[dict]:
        """Per question: the true prevalence, the estimate and whether the interval covers it."""
        rows = []
        for q in self.report.questions:
            truth = self.truth[q.id]
            rows.append({
                "id": q.id,
                "truth": truth,
                "pi_mle": q.estimate.pi_mle if q.estimate else None,
                "ci_low": q.interval.low if q.interval else None,
                "ci_high": q.interval.high if q.interval else None,
                "covered": bool(q.interval and q.interval.low <= truth <= q.interval.high),
            })
        return rows


def fresh_directory(base: Path) -> Path:
    """``base`` if it does not exist yet, else ``base-2``, ``base-3``, ... (never reused)."""
    candidate, number = base, 1
    while candidate.exists():
        number += 1
        candidate = base.with_name(f"{base.name}-{number}")
    return candidate


def _simulate_answers(key_file: Path, responses: Path, truth: Mapping[str, float],
                      question_ids: list[str], rng: np.random.Generator) -> None:
    """Answers that follow each respondent's codes, written as a wide CSV."""
    codes: dict[str, dict[str, str]] = {}
    with key_file.open(newline="", encoding="utf-8") as stream:
        for row in csv.DictReader(stream):
            codes.setdefault(row["respondent_id"], {})[row["question_id"]] = row["code"]
    with responses.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(["respondent_id", *question_ids])
        for respondent, theirs in codes.items():
            row = [respondent]
            for question_id in question_ids:
                if rng.random() < BLANK_SHARE:
                    row.append("")
                    continue
                has_trait = rng.random() < truth[question_id]
                code = theirs[question_id]
                if code == "D":
                    row.append("don't know")
                elif (code == "T") == has_trait:
                    row.append("yes")
                else:
                    row.append("no")
            writer.writerow(row)


def run_demo(directory: Path, *, respondents: int = 2000, seed: int | None = None,
             progress: Callable[[int], None] | None = None) -> DemoResult:
    """Run the whole workflow in ``directory`` (which must not exist or be empty).

    ``seed`` makes the questionnaires and the simulated answers reproducible
    (a demo and test convenience; real questionnaires use OS entropy).
    """
    directory = Path(directory)
    if directory.exists() and any(directory.iterdir()):
        raise ParameterError(
            f"--dir {str(directory)!r} is not empty: the demo needs a fresh folder; "
            "give another --dir or leave it out"
        )
    if isinstance(respondents, bool) or not isinstance(respondents, int) or respondents < 10:
        raise ParameterError(f"respondents ({respondents!r}) must be a whole number >= 10")
    directory.mkdir(parents=True, exist_ok=True)
    database = directory / "surveykit.db"
    engine = store.open_engine(f"sqlite:///{database}")
    try:
        store.init_database(engine)
        survey = load_survey_file(locate_resource("sample_data") / SAMPLE_SURVEY)
        store.add_survey(engine, survey)
        truth = {q.id: DEMO_PREVALENCE.get(q.id, 0.2) for q in survey.questions}

        questionnaires = directory / "questionnaires"
        key_file = directory / "demo-key.csv"
        generate_questionnaires(engine, survey.name, seed=seed, respondents=respondents,
                                out_dir=questionnaires, mode="slips", fmt="html",
                                key_file=key_file, progress=progress)
        responses = directory / "responses.csv"
        try:
            _simulate_answers(key_file, responses, truth, [q.id for q in survey.questions],
                              np.random.default_rng(seed))
        finally:
            key_file.unlink(missing_ok=True)  # the codes must not outlive the simulation

        import_responses(engine, responses, survey.name)
        report = report_for_survey(engine, survey.name)
        report_html = directory / "report.html"
        report_html.write_text(render_report(report, "html"), encoding="utf-8")
    finally:
        engine.dispose()
    return DemoResult(directory=directory, database=database, questionnaires=questionnaires,
                      responses=responses, report_html=report_html, respondents=respondents,
                      truth=truth, report=report)
