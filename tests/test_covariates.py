"""Respondent covariates: declared in the survey, typed on import, used by regress --survey and
the report's regression section. Real databases (SQLite and PostgreSQL), real CLI runs."""

from __future__ import annotations

import csv
import json
import tempfile
from pathlib import Path

import migrated
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from sqlalchemy import select, text

from surveykit.cli import main
from surveykit.definition.survey import parse_survey
from surveykit.designs import make_design
from surveykit.errors import CsvImportError, CsvProblem, StoreError, SurveyDefinitionError
from surveykit.estimation.regression import regress
from surveykit.reporting.report import render_report
from surveykit.resources import locate_resource
from surveykit.store import database as store
from surveykit.store import migrate
from surveykit.store.frames import respondent_frame
from surveykit.store.importer import import_responses
from surveykit.workflows.regress import regress_survey
from surveykit.workflows.report import report_for_survey

SURVEY = "academic_integrity"
SAMPLE = locate_resource("sample_data") / "academic_integrity.toml"
COVARIATES = """
[covariates]
age = { type = "number", min = 16, max = 99 }
faculty = "category"
campus = { type = "category", levels = ["North", "South"] }
"""
MODEL = """
[[models]]
formula = "exam_cheating ~ age + C(faculty)"
"""


def survey_text(extra: str = COVARIATES) -> str:
    return SAMPLE.read_text("utf-8") + extra


@pytest.fixture
def covariate_engine(engine):
    """The sample survey with age, faculty and campus declared, on SQLite and PostgreSQL."""
    store.add_survey(engine, parse_survey(survey_text(COVARIATES + MODEL)))
    return engine


def write(path: Path, rows: list[list[object]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as stream:
        csv.writer(stream).writerows(rows)
    return path


def stored(engine) -> set[tuple[str, str, str]]:
    with engine.connect() as conn:
        return {tuple(row) for row in conn.execute(select(
            store.covariates.c.respondent_id, store.covariates.c.name,
            store.covariates.c.value))}


def refused(engine, path: Path, **options) -> CsvImportError:
    before = stored(engine)
    with pytest.raises(CsvImportError) as caught:
        import_responses(engine, path, SURVEY, **options)
    assert stored(engine) == before
    return caught.value


# -- the declaration ------------------------------------------------------------------------


def test_a_survey_declares_typed_covariates_and_models():
    survey = parse_survey(survey_text(COVARIATES + MODEL))
    assert [(c.name, c.kind) for c in survey.covariates] == [
        ("age", "number"), ("faculty", "category"), ("campus", "category")]
    assert survey.covariate("AGE").low == 16
    assert survey.covariate("campus").levels == ("North", "South")
    assert [(m.formula, m.question) for m in survey.models] == [
        ("exam_cheating ~ age + C(faculty)", "exam_cheating")]


@pytest.mark.parametrize("extra, message", [
    ('[covariates]\nage = "numeric"\n', 'covariates.age: \'numeric\' must be "number" or '
                                        '"category"'),
    ('[covariates]\nexam_cheating = "number"\n', "covariates.exam_cheating: 'exam_cheating' is "
                                                 "already a question id or a column name"),
    ('[covariates]\ngroup = "category"\n', "covariates.group: 'group' is already a question id"),
    ('[covariates]\n"2nd" = "number"\n', "covariates.2nd: '2nd' must start with a letter"),
    ('[covariates]\nage = { type = "number", min = 30, max = 20 }\n',
     "covariates.age.min: min (30) must not be greater than max (20)"),
    ('[covariates]\nage = { type = "number", levels = ["a"] }\n',
     "covariates.age.levels: unknown key for a number; allowed keys are max, min, type"),
    ('[covariates]\ncampus = { type = "category", levels = ["North", "north"] }\n',
     "covariates.campus.levels: two levels differ only in case or spaces"),
    (COVARIATES + '[[models]]\nformula = "exam_cheating ~ agee"\n',
     "models[0].formula: formula 'exam_cheating ~ agee' uses column 'agee', which is neither "
     "a question nor a declared covariate (questions: exam_cheating, plagiarism, "
     "contract_cheating, fabricated_data; covariates: age, faculty, campus); declare it in "
     "[covariates]"),
    (COVARIATES + '[[models]]\nformula = "exam_cheating ~ plagiarism + age"\n',
     "models[0].formula: 'exam_cheating ~ plagiarism + age' uses the randomized answers of 2 "
     "questions (exam_cheating, plagiarism): a model has one"),
    (COVARIATES + '[[models]]\nformula = "age ~ C(faculty)"\n',
     "models[0].formula: 'age ~ C(faculty)' uses no question"),
    (COVARIATES + '[[models]]\nformula = "exam_cheating ~ age"\nfamily = "gaussian"\n',
     "models[0].family: 'gaussian': question 'exam_cheating' is the response"),
    (COVARIATES + '[[models]]\nformula = "age ~ exam_cheating"\nsensitive_formula = '
                  '"~ plagiarism"\n',
     "models[0].sensitive_formula: sensitive formula '~ plagiarism' uses column 'plagiarism', "
     "which is "
     "not a declared covariate"),
])
def test_a_bad_declaration_names_its_key(extra, message):
    with pytest.raises(SurveyDefinitionError) as caught:
        parse_survey(survey_text(extra), "s.toml")
    assert str(caught.value).startswith(f"s.toml: {message}")


# -- imports -------------------------------------------------------------------------------


def test_declared_columns_are_kept_typed_and_missing_cells_are_not_stored(covariate_engine,
                                                                          tmp_path):
    path = write(tmp_path / "wide.csv", [
        ["respondent_id", "exam_cheating", "plagiarism", "Age", "faculty", "campus"],
        ["r1", "yes", "no", "21", " law ", "north"],
        ["r2", "no", "", "22.50", "medicine", ""],
        ["r3", "", "", "2.1e1", "", "SOUTH"],
    ])
    result = import_responses(covariate_engine, path, SURVEY)
    assert (result.imported, result.covariates) == (3, 7)
    assert stored(covariate_engine) == {
        ("r1", "age", "21"), ("r1", "faculty", "law"), ("r1", "campus", "North"),
        ("r2", "age", "22.5"), ("r2", "faculty", "medicine"),
        ("r3", "age", "21"), ("r3", "campus", "South")}
    assert "covariate age <- column 4 'Age' ([covariates])" in result.mapping


def test_bad_cells_are_refused_with_line_column_and_value(covariate_engine, tmp_path):
    path = write(tmp_path / "bad.csv", [
        ["respondent_id", "exam_cheating", "age", "campus"],
        ["r1", "yes", "21", "North"],
        ["r2", "no", "21,5", "North"],
        ["r3", "no", "12", "East"],
        ["r4", "no", "nan", "south"],
    ])
    error = refused(covariate_engine, path)
    assert [(p.line, p.column, p.value, p.kind) for p in error.problems] == [
        (3, "age", "21,5", "not a number"), (4, "age", "12", "out of range"),
        (4, "campus", "East", "not a level"), (5, "age", "nan", "not a number")]
    assert error.problems[0].reason == (
        "not a number: covariate 'age' is a number; write digits with a dot for decimals "
        "(21 or 21.5)")
    assert error.problems[2].reason == (
        "not a level: covariate 'campus' takes 'North', 'South'; fix the cell, or add the "
        "level to [covariates] campus")
    assert str(error).splitlines()[0].startswith(
        f"3 bad rows in {path} (2 not a number, 1 not a level, 1 out of range)")
    assert store.count_responses(covariate_engine, SURVEY)[0].answered == 0


def test_a_column_the_survey_does_not_declare_is_an_error_not_a_new_covariate(
        covariate_engine, tmp_path):
    path = write(tmp_path / "typo.csv", [["respondent_id", "exam_cheating", "agee"],
                                         ["r1", "yes", "21"]])
    error = refused(covariate_engine, path)
    assert "column 'agee' maps to no question of survey 'academic_integrity'" in str(error)
    assert "declare it in [covariates] if it describes the respondent" in str(error)


def test_long_files_repeat_covariates_and_must_agree_within_the_file(covariate_engine,
                                                                     tmp_path):
    good = write(tmp_path / "long.csv", [
        ["respondent_id", "question_id", "answer", "age"],
        ["r1", "exam_cheating", "yes", "30"], ["r1", "plagiarism", "no", "30.0"],
        ["r2", "exam_cheating", "", "40"]])
    assert import_responses(covariate_engine, good, SURVEY).covariates == 2
    assert stored(covariate_engine) == {("r1", "age", "30"), ("r2", "age", "40")}
    bad = write(tmp_path / "long2.csv", [
        ["respondent_id", "question_id", "answer", "age"],
        ["r5", "exam_cheating", "yes", "30"], ["r5", "plagiarism", "no", "31"]])
    error = refused(covariate_engine, bad)
    reason = ("this respondent's age differs between rows of this file: '30' (line 2), '31' "
              "(line 3); a respondent has one value")
    assert error.problems == [CsvProblem(2, "age", "30", reason),
                              CsvProblem(3, "age", "31", reason)]


def test_a_value_another_import_gave_conflicts_unless_replace(covariate_engine, tmp_path):
    import_responses(covariate_engine, write(tmp_path / "one.csv", [
        ["respondent_id", "exam_cheating", "age", "faculty"], ["r1", "yes", "21", "law"]]),
        SURVEY)
    # a later file with other questions and the same covariates: no conflict
    same = write(tmp_path / "two.csv", [["respondent_id", "plagiarism", "age", "faculty"],
                                        ["r1", "no", "21.0", "law"]])
    again = import_responses(covariate_engine, same, SURVEY)
    assert (again.covariates, again.covariates_unchanged) == (0, 2)
    other = write(tmp_path / "three.csv", [["respondent_id", "fabricated_data", "age"],
                                           ["r1", "no", "22"]])
    error = refused(covariate_engine, other)
    assert error.problems == [CsvProblem(
        2, "age", "22", "this respondent's age is '21' since import #1 (one.csv); this file "
                        "says '22'")]
    assert ("to overwrite the answers (or covariates) that earlier imports gave differently, "
            "use --replace") \
        in str(error).splitlines()[0]
    result = import_responses(covariate_engine, other, SURVEY, replace=True)
    assert (result.covariates, result.covariates_replaced) == (1, 1)
    assert ("r1", "age", "22") in stored(covariate_engine)


def test_a_file_of_covariates_alone_attaches_them_to_known_ids(covariate_engine, tmp_path):
    """How web respondents get covariates: the web page sends answers only."""
    import_responses(covariate_engine, write(tmp_path / "answers.csv", [
        ["respondent_id", "exam_cheating"], ["r1", "yes"], ["r2", "no"]]), SURVEY)
    register = write(tmp_path / "register.csv", [["respondent_id", "faculty"],
                                                 ["r1", "law"], ["r2", "arts"]])
    result = import_responses(covariate_engine, register, SURVEY)
    assert (result.rows_read, result.imported, result.covariates) == (2, 0, 2)
    assert store.count_responses(covariate_engine, SURVEY)[0].answered == 2


def test_the_profile_maps_a_header_to_a_covariate_and_skip_invalid_rejects_bad_cells(
        engine, tmp_path):
    survey = parse_survey(survey_text(COVARIATES + '[import.columns]\n"Âge (années)" = "age"\n'))
    store.add_survey(engine, survey)
    path = write(tmp_path / "fr.csv", [["respondent_id", "exam_cheating", "Âge (années)"],
                                       ["r1", "yes", "19"], ["r2", "no", "dix-neuf"]])
    rejects = tmp_path / "rejects.csv"
    result = import_responses(engine, path, SURVEY, skip_invalid=True, rejects_path=rejects)
    assert (result.imported, result.rejected, result.covariates) == (1, 1, 1)
    assert stored(engine) == {("r1", "age", "19")}
    with rejects.open(encoding="utf-8", newline="") as stream:
        rows = list(csv.reader(stream))
    assert rows[1][:4] == ["r2", "no", "dix-neuf", "3"]
    assert rows[1][4].startswith("Âge (années): not a number")


def test_covariates_of_issued_ids_are_stored_under_the_printed_id(covariate_engine, tmp_path):
    store.record_generation(covariate_engine, SURVEY, ["7KQ2-M9XD-4FRT-8B"], {})
    path = write(tmp_path / "typed.csv", [["respondent_id", "exam_cheating", "age"],
                                          ["7kq2 m9xd 4frt 8b", "yes", "20"],
                                          ["XXXX-0000", "no", "20"]])
    error = refused(covariate_engine, path)
    assert [(p.line, p.kind) for p in error.problems] == [(3, "respondent id not issued")]
    rejects = tmp_path / "r.csv"
    import_responses(covariate_engine, path, SURVEY, skip_invalid=True, rejects_path=rejects)
    assert stored(covariate_engine) == {("7KQ2-M9XD-4FRT-8B", "age", "20")}


def test_a_dry_run_stores_no_covariate(covariate_engine, tmp_path):
    path = write(tmp_path / "a.csv", [["respondent_id", "exam_cheating", "age"],
                                      ["r1", "yes", "20"]])
    assert import_responses(covariate_engine, path, SURVEY, dry_run=True).covariates == 1
    assert stored(covariate_engine) == set()


def test_survey_update_adds_covariates_and_changes_models_but_never_retypes(engine):
    store.add_survey(engine, parse_survey(survey_text(COVARIATES)))
    more = parse_survey(survey_text(COVARIATES + 'year = "number"\n' + MODEL))
    update = store.update_survey(engine, more)
    assert (update.version, update.changed) == (2, ("[covariates]", "[[models]]"))
    retyped = parse_survey(survey_text(COVARIATES.replace('faculty = "category"',
                                                          'faculty = "number"')
                                       + 'year = "number"\n'))
    with pytest.raises(StoreError, match=r"covariates\.faculty changes from 'category' to "
                                         r"'number' \(stored values were read with it"):
        store.update_survey(engine, retyped)


# -- regression on the store ------------------------------------------------------------------


def simulated(rows: int, seed: int = 5) -> pd.DataFrame:
    """Respondents with age and faculty; exam_cheating answered through the survey's
    generalized Warner (p = 0.6, q = 0.2, don't know 0.2) from a logistic truth."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 40, rows)
    faculty = rng.choice(["arts", "law", "medicine"], rows)
    truth = rng.random(rows) < 1 / (1 + np.exp(-(-3 + 0.09 * age + 0.6 * (faculty == "law"))))
    draw = rng.random(rows)
    answer = np.where(draw < 0.6, np.where(truth, "yes", "no"),
                      np.where(draw < 0.8, np.where(truth, "no", "yes"), "dont_know"))
    frame = pd.DataFrame({"respondent_id": [f"S{i:05d}" for i in range(rows)],
                          "exam_cheating": answer, "age": age.astype(float),
                          "faculty": faculty})
    frame.loc[rng.random(rows) < 0.05, "age"] = np.nan  # some never said
    return frame


def test_regress_survey_equals_regress_on_the_file_it_came_from(covariate_engine, tmp_path):
    frame = simulated(4000)
    path = tmp_path / "wave.csv"
    frame.to_csv(path, index=False)
    import_responses(covariate_engine, path, SURVEY)
    fit = regress_survey(covariate_engine, SURVEY, "exam_cheating ~ age + C(faculty)")
    # the oracle: the same library function on the file's own rows and the survey's design
    oracle = regress(frame, "exam_cheating ~ age + C(faculty)", sensitive="exam_cheating",
                     design=make_design("generalized_warner", p=0.6, q=0.2))
    assert (fit.n, fit.n_dropped) == (oracle.n, oracle.n_dropped) == (
        4000 - frame.age.isna().sum(), frame.age.isna().sum())
    np.testing.assert_allclose(fit.params, oracle.params, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(fit.bse, oracle.bse, rtol=1e-7)
    assert list(fit.params.index) == ["(Intercept)", "age", "C(faculty)law",
                                      "C(faculty)medicine"]


def test_the_true_answer_as_a_predictor_of_a_covariate(covariate_engine, tmp_path):
    frame = simulated(3000, seed=8)
    path = tmp_path / "wave.csv"
    frame.to_csv(path, index=False)
    import_responses(covariate_engine, path, SURVEY)
    fit = regress_survey(covariate_engine, SURVEY, "age ~ exam_cheating + C(faculty)",
                         sensitive_formula="~ C(faculty)")
    oracle = regress(frame, "age ~ exam_cheating + C(faculty)", sensitive="exam_cheating",
                     design=make_design("generalized_warner", p=0.6, q=0.2),
                     sensitive_formula="~ C(faculty)")
    assert (fit.mode, fit.family) == ("predictor", "gaussian")
    np.testing.assert_allclose(fit.params, oracle.params, rtol=1e-8)
    np.testing.assert_allclose(fit.sensitive_params, oracle.sensitive_params, rtol=1e-8)


def test_a_two_group_design_takes_the_groups_of_the_stored_answers(engine, tmp_path):
    survey = parse_survey("""
name = "sld_survey"
title = "SLD"
[design]
model = "sld"
p = [0.1667, 0.8333]
groups = ["short", "long"]
[[questions]]
id = "ban"
text = "Do you favour a ban?"
[covariates]
left_right = "number"
""")
    store.add_survey(engine, survey)
    rng = np.random.default_rng(11)
    rows = 3000
    left_right = rng.normal(size=rows)
    group = rng.integers(1, 3, rows)
    truth = rng.random(rows) < 1 / (1 + np.exp(-(0.5 + 0.8 * left_right)))
    design = survey.questions[0].design
    matrix = design.matrix([0.7])  # (groups, responses, states) at t = 0.7
    answers = []
    for g, state in zip(group, np.where(truth, 0, 1), strict=True):
        answers.append(design.response_labels[rng.choice(3, p=matrix[g - 1, :, state])])
    frame = pd.DataFrame({"respondent_id": [f"P{i}" for i in range(rows)], "ban": answers,
                          "group": np.where(group == 1, "short", "LONG"),
                          "left_right": left_right})
    path = tmp_path / "sld.csv"
    frame.to_csv(path, index=False)
    import_responses(engine, path, "sld_survey")
    fit = regress_survey(engine, "sld_survey", "ban ~ left_right")
    oracle = regress(frame.assign(group=group), "ban ~ left_right", sensitive="ban",
                     design=design, group="group")
    np.testing.assert_allclose(fit.params, oracle.params, rtol=1e-9)
    assert fit.nuisance["t"]["estimate"] == pytest.approx(oracle.nuisance["t"]["estimate"],
                                                          rel=1e-9)
    assert fit.rows.group_sizes() == {"short": int((group == 1).sum()),
                                      "long": int((group == 2).sum())}


def test_respondent_frame_has_one_row_per_answer_with_typed_covariates(covariate_engine,
                                                                       tmp_path):
    import_responses(covariate_engine, write(tmp_path / "a.csv", [
        ["respondent_id", "exam_cheating", "plagiarism", "age", "faculty"],
        ["r2", "no", "yes", "", "law"], ["r1", "yes", "", "20", ""], ["r3", "", "no", "30",
                                                                       "arts"]]), SURVEY)
    frame = respondent_frame(covariate_engine, SURVEY, "exam_cheating", ["age", "faculty"])
    assert frame["respondent_id"].tolist() == ["r1", "r2"]
    assert frame["exam_cheating"].tolist() == ["yes", "no"]
    assert frame["group"].tolist() == [1, 1]
    assert frame["age"].tolist()[0] == 20.0 and np.isnan(frame["age"].tolist()[1])
    assert frame["faculty"].isna().tolist() == [True, False]
    assert frame["faculty"].iloc[1] == "law"


def cli(*args: str):
    return CliRunner().invoke(main, list(args), prog_name="surveykit")


def add_and_import_a_wave(url: str) -> None:
    """survey add of the survey with covariates and a model, and an import of 1500
    simulated respondents, into the migrated database at ``url``."""
    with tempfile.TemporaryDirectory() as folder:
        survey = Path(folder) / "survey.toml"
        survey.write_text(survey_text(COVARIATES + MODEL), encoding="utf-8")
        assert cli("survey", "add", str(survey), "--db", url).exit_code == 0
        path = Path(folder) / "wave.csv"
        simulated(1500).to_csv(path, index=False)
        assert cli("import", str(path), "--survey", SURVEY, "--db", url).exit_code == 0


@pytest.fixture
def cli_db(tmp_path) -> str:
    """A copy of a database filled once per test process (tests/migrated.py)."""
    return migrated.copy_filled(f"sqlite:///{tmp_path / 'cli.db'}", add_and_import_a_wave)


def test_cli_regress_survey_prints_the_summary_and_json(cli_db):
    result = cli("regress", "--survey", SURVEY, "--formula", "exam_cheating ~ age",
                 "--db", cli_db)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Logistic regression of the true answer to "
                                    "'exam_cheating' (randomized response)")
    assert "Design:  generalized_warner (p = 0.6, q = 0.2)" in result.output.splitlines()
    data = json.loads(cli("regress", "--survey", SURVEY, "--formula", "exam_cheating ~ age",
                          "--sensitive", "exam_cheating", "--db", cli_db, "--format",
                          "json").output)
    fit = regress_survey(store.open_engine(cli_db), SURVEY, "exam_cheating ~ age")
    assert [c["estimate"] for c in data["coefficients"]] == pytest.approx(
        fit.params.tolist(), rel=1e-12)


@pytest.mark.parametrize("args, code, message", [
    (["--formula", "exam_cheating ~ agee"], 2,
     "Error: formula 'exam_cheating ~ agee' uses column 'agee', which is neither a question "
     "nor a declared covariate (questions: exam_cheating, plagiarism, contract_cheating, "
     "fabricated_data; covariates: age, faculty, campus); declare it in [covariates]"),
    (["--formula", "exam_cheating ~ age", "--design", "warner"], 2,
     "Error: --design: with --survey the design and the groups come from the stored survey; "
     "leave them out (see 'surveykit regress --help')"),
    (["--formula", "exam_cheating ~ age", "--sensitive", "plagiarism"], 2,
     "Error: sensitive ('plagiarism'): the formula's randomized answers are those of question "
     "'exam_cheating'; leave it out or name that question"),
    (["--formula", "plagiarism ~ age"], 1,
     "Error: question 'plagiarism' has no stored answers yet"),
])
def test_cli_regress_survey_errors_are_one_line(cli_db, args, code, message):
    result = cli("regress", "--survey", SURVEY, *args, "--db", cli_db)
    assert (result.exit_code, result.output) == (code, message + "\n")


def test_cli_regress_without_data_or_survey_says_so():
    result = cli("regress", "--formula", "y ~ x")
    assert result.exit_code == 2
    assert result.output.startswith("Error: Missing argument 'DATA' (a CSV file), or give "
                                    "--survey NAME.")


# -- the report ------------------------------------------------------------------------------


def test_the_report_fits_declared_models_in_every_format(cli_db):
    engine = store.open_engine(cli_db)
    report = report_for_survey(engine, SURVEY)
    fit = regress_survey(engine, SURVEY, "exam_cheating ~ age + C(faculty)")
    [model] = report.models
    assert model.error is None
    np.testing.assert_allclose(model.result.params, fit.params, rtol=1e-12)
    data = json.loads(render_report(report, "json"))
    assert data["models"][0]["formula"] == "exam_cheating ~ age + C(faculty)"
    assert data["models"][0]["fit"]["coefficients"][1]["term"] == "age"
    text_report = render_report(report, "text")
    assert "Model: exam_cheating ~ age + C(faculty)" in text_report
    assert max(len(line) for line in text_report.splitlines()) <= 80
    html = render_report(report, "html")
    assert "<h2>Regression models</h2>" in html
    age = f"{fit.params['age']:.4f}"
    assert f"<td>age</td><td>{age}</td>" in html
    markdown = render_report(report, "markdown")
    assert f"| age | {age} |" in markdown
    engine.dispose()


def test_a_model_that_cannot_be_fitted_is_a_warning_in_the_report(engine):
    store.add_survey(engine, parse_survey(survey_text(COVARIATES + MODEL)))
    report = report_for_survey(engine, SURVEY)
    assert report.models[0].error == "question 'exam_cheating' has no stored answers yet"
    assert ("No fit: question &#39;exam_cheating&#39; has no stored answers yet"
            in render_report(report, "html"))


def test_a_survey_without_models_reports_as_before(survey_engine):
    report = report_for_survey(survey_engine, SURVEY)
    assert report.models == ()
    assert "Regression models" not in render_report(report, "html")


# -- the migration ---------------------------------------------------------------------------


def test_a_0003_database_upgrades_in_place_and_takes_covariates(database_url, tmp_path):
    engine = store.open_engine(database_url)
    migrate.upgrade(engine, "0003")
    with engine.begin() as conn:  # what surveykit at 0003 wrote: a survey and an import
        conn.execute(text("INSERT INTO surveys (id, name, title, language, created_at) VALUES "
                          "(1, 'academic_integrity', 'T', 'en', CURRENT_TIMESTAMP)"))
        conn.execute(text("INSERT INTO survey_versions VALUES (1, 1, :source, "
                          "CURRENT_TIMESTAMP)"), {"source": SAMPLE.read_text("utf-8")})
        for position, name in enumerate(["exam_cheating", "plagiarism", "contract_cheating",
                                         "fabricated_data"]):
            conn.execute(text("INSERT INTO questions (id, survey_id, position, name, text, "
                              "design) VALUES (:id, 1, :position, :name, 'T', '{}')"),
                         {"id": position + 1, "position": position, "name": name})
        conn.execute(text(
            "INSERT INTO imports (id, survey_id, survey_version, file_name, sha256, "
            "file_format, rows_read, imported, replaced, rejected, missing, imported_at) "
            "VALUES (1, 1, 1, 'old.csv', 'x', 'long', 2, 2, 0, 0, 0, CURRENT_TIMESTAMP)"))
        conn.execute(text("INSERT INTO responses (survey_id, question_id, respondent_id, "
                          "answer, group_number, import_id) VALUES (1, 1, 'r1', 'yes', 1, 1), "
                          "(1, 2, 'r1', 'no', 1, 1)"))
    migrate.upgrade(engine, "0004")
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM responses")).scalar_one() == 2
        assert conn.execute(text("SELECT count(*) FROM covariates")).scalar_one() == 0
    store.init_database(engine)
    migrate.check(engine)
    # the upgraded survey takes covariates once its definition declares them
    store.update_survey(engine, parse_survey(survey_text(COVARIATES)))
    import_responses(engine, write(tmp_path / "c.csv", [["respondent_id", "age"],
                                                        ["r1", "44"]]), SURVEY)
    assert stored(engine) == {("r1", "age", "44")}
    migrate.downgrade(engine, "0003")
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM responses")).scalar_one() == 2
    engine.dispose()


def test_counting_files_with_covariates_checks_them_as_import_does(covariate_engine, tmp_path):
    """counts --data reads answers only, but a file import would refuse is refused alike."""
    pytest.importorskip("duckdb")
    from surveykit.counting import count_files

    survey = store.load_survey(covariate_engine, SURVEY)
    good = write(tmp_path / "good.csv", [["respondent_id", "exam_cheating", "age", "faculty"],
                                         ["r1", "yes", "21", "law"], ["r2", "no", "", "arts"]])
    counted = {c.question_id: c.answers() for c in count_files(survey, [good])}
    import_responses(covariate_engine, good, SURVEY)
    stored_counts = {c.question_id: c.answers()
                     for c in store.count_responses(covariate_engine, SURVEY)}
    assert counted == stored_counts
    assert counted["exam_cheating"] == {"yes": 1, "no": 1}
    bad = write(tmp_path / "bad.csv", [["respondent_id", "exam_cheating", "age"],
                                       ["r3", "yes", "twenty"]])
    with pytest.raises(CsvImportError) as caught:
        count_files(survey, [bad])
    assert [(p.line, p.column, p.kind) for p in caught.value.problems] == [
        (2, "age", "not a number")]
    assert [(p.line, p.column, p.kind) for p in refused(covariate_engine, bad).problems] == [
        (2, "age", "not a number")]


def test_cli_import_says_how_many_covariate_values_it_stored(tmp_path):
    url = f"sqlite:///{tmp_path / 'c.db'}"
    survey = tmp_path / "survey.toml"
    survey.write_text(survey_text(COVARIATES), encoding="utf-8")
    migrated.migrated_sqlite(tmp_path / "c.db")
    cli("survey", "add", str(survey), "--db", url)
    path = write(tmp_path / "w.csv", [["respondent_id", "exam_cheating", "age", "faculty"],
                                      ["r1", "yes", "21", "law"], ["r2", "no", "", "arts"]])
    dry = cli("import", str(path), "--survey", SURVEY, "--db", url, "--dry-run")
    assert "0 rows rejected, 3 covariate values added, 0 unchanged, 0 replaced." in dry.stdout
    assert "  covariate age <- column 3 'age' ([covariates])" in dry.stdout
    result = cli("import", str(path), "--survey", SURVEY, "--db", url)
    assert result.stdout == (
        f"Imported {path} (wide layout) into 'academic_integrity' as import #1: 2 rows read, "
        "2 answers added, 0 unchanged, 0 replaced, 0 rows refused (changed answers), 0 missing "
        "(empty cells), 0 rows rejected, 3 covariate values added, 0 unchanged, 0 replaced.\n")
