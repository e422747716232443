"""Numeric questions (issue 23) through the data path: survey add, import (long and wide,
CSV and xlsx), the kept counts and check, the store's sums and answers, counts from the
store, DuckDB and Dask, and the report's estimate, on real SQLite files and PostgreSQL.

The oracle of every number is the file itself: the answers are parsed here with Python's
float and summed with math.fsum, and the estimate is estimate_mean on those sums, so a
store that summed, cast or dropped a value differently would show.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import migrated
import numpy as np
import pytest
from sqlalchemy import MetaData, create_engine, select

from surveykit.definition.survey import load_survey_file
from surveykit.estimation.quantitative import estimate_mean
from surveykit.numeric_counts import NumericCounts
from surveykit.store import Database
from surveykit.store.submissions import record_submission
from tests.numeric_support import choice_question, income_question, numeric_survey
from tests.store_support import add_survey_text, run_cli

SURVEY = numeric_survey(choice_question(), income_question(decimals=2))


def _answers(n: int = 120, seed: int = 5) -> list[str]:
    """Reported incomes as a respondent would write them: simulated Eriksson answers with
    cents, some "don't know", some blank (missing), some 0."""
    design = load_survey_file_text(SURVEY).question("income").design
    rng = np.random.default_rng(seed)
    true = np.round(rng.uniform(0, 30000, size=n), 2)
    sim = design.simulate(true, rng=rng)
    cells = []
    for i, (value, dk) in enumerate(zip(sim.answers, sim.dont_know, strict=True)):
        if dk:
            cells.append("don't know" if i % 2 else "dk")
        elif i % 17 == 3:
            cells.append("")            # missing, not 0
        elif i % 19 == 4:
            cells.append("0")
        else:
            cells.append(f"{value:.2f}")  # trailing zeros: "1000.00"
    return cells


def load_survey_file_text(text: str):
    from surveykit.definition.survey import parse_survey

    return parse_survey(text, "tax.toml")


def _oracle(cells: list[str]) -> tuple[NumericCounts, int]:
    """The file's own numbers: sums by math.fsum, "don't know", and blanks (missing)."""
    numbers = [float(c) for c in cells if c and c not in ("dk", "don't know")]
    dont_know = sum(c in ("dk", "don't know") for c in cells)
    counts = NumericCounts.from_mapping({"1": {
        "n": len(numbers), "sum": math.fsum(numbers),
        "sum_squares": math.fsum(x * x for x in numbers), "dont_know": dont_know}})
    return counts, sum(not c for c in cells)


def _write(path: Path, cells: list[str], layout: str) -> Path:
    if layout == "long":
        lines = ["respondent_id,question_id,answer"]
        for i, cell in enumerate(cells):
            lines.append(f"r{i},cheat,{'yes' if i % 3 else 'no'}")
            lines.append(f'r{i},income,"{cell}"')
    else:
        lines = ["respondent_id,cheat,income"]
        lines += [f'r{i},{"yes" if i % 3 else "no"},"{cell}"' for i, cell in enumerate(cells)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def add_tax(url: str) -> None:
    """Add the tax survey to the migrated database at ``url`` through the CLI."""
    add_survey_text(url, SURVEY, "tax.toml")


@pytest.fixture(params=migrated.DATABASES)
def stored(request, tmp_path):
    """A database with the tax survey added through the CLI: a copy of one made once per
    test process (tests/migrated.py), on SQLite and PostgreSQL."""
    with migrated.filled_database(request.param, add_tax, tmp_path) as url:
        yield url


def dump(url: str) -> dict[str, list]:
    """Every row of every table, sorted: the database's whole state."""
    engine = create_engine(url)
    try:
        metadata = MetaData()
        metadata.reflect(engine)
        with engine.connect() as conn:
            return {name: sorted((tuple(map(str, row)) for row in conn.execute(
                select(table))), key=repr) for name, table in metadata.tables.items()}
    finally:
        engine.dispose()


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-9)


@pytest.mark.parametrize("layout", ["long", "wide"])
def test_import_counts_and_report_give_estimate_mean_of_the_files_numbers(stored, tmp_path,
                                                                        layout):
    cells = _answers()
    path = _write(tmp_path / f"{layout}.csv", cells, layout)
    result = run_cli("import", str(path), "--survey", "tax", "--db", stored)
    assert result.exit_code == 0, result.output
    oracle, blanks = _oracle(cells)

    result = run_cli("counts", "--survey", "tax", "--db", stored, "--format", "json")
    assert result.exit_code == 0, result.output
    income = json.loads(result.output)["questions"][1]
    assert income["id"] == "income" and income["type"] == "number"
    expected = oracle.get("1")
    assert (income["n"], income["dont_know"], income["missing"]) == (
        expected.n, expected.dont_know, blanks)
    assert _close(income["sum"], expected.total)
    assert _close(income["sum_squares"], expected.sum_squares)

    result = run_cli("report", "--survey", "tax", "--db", stored, "--format", "json")
    assert result.exit_code == 0, result.output
    section = next(q for q in json.loads(result.output)["questions"] if q["id"] == "income")
    design = load_survey_file_text(SURVEY).question("income").design
    truth = estimate_mean(design, oracle)
    interval = truth.confidence_interval(0.95)
    assert math.isclose(section["mean"], truth.mean, rel_tol=1e-9)
    assert math.isclose(section["se"], truth.se, rel_tol=1e-9)
    assert math.isclose(section["ci_low"], interval.low, rel_tol=1e-9)
    assert math.isclose(section["ci_high"], interval.high, rel_tol=1e-9)
    assert section["total"] is None and section["total_se"] is None  # no population size
    assert (section["n"], section["dont_know"]) == (expected.n, expected.dont_know)
    # a truthful branch: the number reveals itself, said in words
    assert section["epsilon_shafer_finite"] is False and "infinite" in section["privacy_text"]

    result = run_cli("check", "--survey", "tax", "--db", stored)
    assert result.exit_code == 0, result.output


def test_numbers_are_stored_in_canonical_text_and_read_back_by_the_handle(stored, tmp_path):
    path = tmp_path / "w.csv"
    path.write_text('respondent_id,cheat,income\na,yes,1234.50\nb,no,0\nc,yes,\n'
                    'd,no,dont_know\ne,yes,+7\nf,no,1.5e3\n', encoding="utf-8")
    result = run_cli("import", str(path), "--survey", "tax", "--db", stored)
    assert result.exit_code == 0, result.output
    with Database(stored) as database:
        handle = database.survey("tax")
        rows = handle.numeric_answers("income")
        counts = handle.numeric_counts()
        reading = handle.read()
    assert rows.respondent_ids == ("a", "b", "d", "e", "f")
    assert np.array_equal(rows.dont_know, [False, False, True, False, False])
    assert np.allclose(rows.values[~rows.dont_know], [1234.5, 0.0, 7.0, 1500.0])
    assert rows.counts() == counts[0].counts == reading.numeric[0].counts
    assert counts[0].missing == 1       # c: blank, not 0
    engine = create_engine(stored)
    try:
        from surveykit.store.tables import answer_counts, questions, responses
        with engine.connect() as conn:
            keys = dict(conn.execute(select(questions.c.name, questions.c.id)).all())
            stored_text = sorted(conn.execute(select(responses.c.answer).where(
                responses.c.question_id == keys["income"])).scalars())
            kept = conn.execute(select(answer_counts.c.question_id)).scalars().all()
    finally:
        engine.dispose()
    assert stored_text == ["0", "1234.5", "1500", "7", "dont_know"]
    assert set(kept) == {keys["cheat"]}  # numeric answers are not kept per value


BAD = {
    "decimal comma with thousands": ("1.234,5", "decimal comma", "looks like 1234.5"),
    "below the range": ("-5", "out of range", "is below -0.005, the smallest answer"),
    "text": ("abc", "not a number", "is not a number"),
    "too many decimals": ("12.345", "too many decimals", "has 3 decimals"),
    "a unit": ("12 EUR", "not a number", "text beside the number"),
    "a thousands comma": ("1,234", "thousands separator", "ambiguous"),
    "above the range": ("100000.01", "out of range", "above 100000"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_a_bad_numeric_cell_is_one_line_naming_file_line_column_value_and_nothing_changes(
        stored, tmp_path, name):
    value, kind, words = BAD[name]
    good = _write(tmp_path / "good.csv", ["10.00", "20"], "wide")
    assert run_cli("import", str(good), "--survey", "tax", "--db", stored).exit_code == 0
    before = dump(stored)
    path = tmp_path / "bad.csv"
    path.write_text(f'respondent_id,cheat,income\nx1,yes,5\nx2,no,"{value}"\n',
                    encoding="utf-8")
    result = run_cli("import", str(path), "--survey", "tax", "--db", stored)
    assert result.exit_code == 1
    assert f"1 bad row in {path} (1 {kind})" in result.output
    line = next(line for line in result.output.splitlines() if "line 3" in line)
    assert f"line 3, column income, value '{value}': question 'income' takes a number" in line
    assert words in line
    assert "Traceback" not in result.output
    assert dump(stored) == before


def test_decimal_comma_files_import_with_the_option_and_refuse_a_dot(stored, tmp_path):
    path = tmp_path / "comma.csv"
    path.write_text('respondent_id;cheat;income\nx1;yes;1234,50\nx2;no;0,5\n', encoding="utf-8")
    before = dump(stored)
    refused = run_cli("import", str(path), "--survey", "tax", "--db", stored)
    assert refused.exit_code == 1 and "--decimal-comma" in refused.output
    assert dump(stored) == before
    result = run_cli("import", str(path), "--survey", "tax", "--db", stored, "--decimal-comma")
    assert result.exit_code == 0, result.output
    with Database(stored) as database:
        rows = database.survey("tax").numeric_answers("income")
    assert rows.values.tolist() == [1234.5, 0.5]
    dotted = tmp_path / "dotted.csv"
    dotted.write_text('respondent_id;cheat;income\nx3;yes;12.5\n', encoding="utf-8")
    result = run_cli("import", str(dotted), "--survey", "tax", "--db", stored, "--decimal-comma")
    assert result.exit_code == 1 and "has a dot, but the file is read with --decimal-comma" \
        in result.output


def test_cumulative_reimports_compare_numbers_not_their_spelling(stored, tmp_path):
    first = tmp_path / "day1.csv"
    first.write_text('respondent_id,cheat,income\na,yes,1234.5\nb,no,0\n', encoding="utf-8")
    assert run_cli("import", str(first), "--survey", "tax", "--db", stored).exit_code == 0
    second = tmp_path / "day2.csv"     # the same answers spelt otherwise, and one new
    second.write_text('respondent_id,cheat,income\na,yes,1234.50\nb,no,0.00\nc,yes,99\n',
                      encoding="utf-8")
    result = run_cli("import", str(second), "--survey", "tax", "--db", stored,
                     "--output", "json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert (summary["added"], summary["unchanged"], summary["replaced"]) == (2, 4, 0)
    third = tmp_path / "day3.csv"      # a changed number: refused, then replaced
    third.write_text('respondent_id,cheat,income\na,yes,1234.6\n', encoding="utf-8")
    before = dump(stored)
    refused = run_cli("import", str(third), "--survey", "tax", "--db", stored)
    assert refused.exit_code == 1 and "already answered question 'income' with '1234.5' " \
        "(this file says '1234.6')" in refused.output
    assert dump(stored) == before
    result = run_cli("import", str(third), "--survey", "tax", "--db", stored, "--replace",
                     "--output", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["replaced"] == 1
    with Database(stored) as database:
        counts = database.survey("tax").numeric_counts()[0].counts.get("1")
    assert (counts.n, counts.total) == (3, 1234.6 + 0 + 99)


def test_a_dry_run_says_how_many_numbers_and_dont_knows_an_import_would_add(stored, tmp_path):
    """A numeric question's changes in a dry run are its numbers (n) and "don't know" answers
    per group, from the file's own cells; a cumulative export adds only its new ones, and a
    changed number replaced leaves n as it was."""
    cells = _answers()
    path = _write(tmp_path / "w.csv", cells, "wide")
    oracle = _oracle(cells)[0].get("1")
    before = dump(stored)
    dry = run_cli("import", str(path), "--survey", "tax", "--db", stored, "--dry-run",
                  "--output", "json")
    assert dry.exit_code == 0, dry.output
    assert json.loads(dry.output)["answer_changes"]["income"] == {
        "1": {"n": oracle.n, "dont_know": oracle.dont_know}}
    text = run_cli("import", str(path), "--survey", "tax", "--db", stored, "--dry-run")
    assert text.exit_code == 0, text.output
    assert f"  income: n +{oracle.n}, dont_know +{oracle.dont_know}\n" in text.output
    assert dump(stored) == before
    assert run_cli("import", str(path), "--survey", "tax", "--db", stored).exit_code == 0
    grown = _write(tmp_path / "w2.csv", [*cells, "12.5", "dk", "7"], "wide")
    again = run_cli("import", str(grown), "--survey", "tax", "--db", stored, "--dry-run",
                    "--output", "json")
    assert json.loads(again.output)["answer_changes"]["income"] == {
        "1": {"n": 2, "dont_know": 1}}
    changed = [*cells]
    first = next(i for i, c in enumerate(cells) if c not in ("", "dk", "don't know"))
    changed[first] = "1.25" if cells[first] != "1.25" else "2.5"
    replaced = run_cli("import", str(_write(tmp_path / "w3.csv", changed, "wide")), "--survey",
                       "tax", "--db", stored, "--dry-run", "--replace", "--output", "json")
    summary = json.loads(replaced.output)
    assert summary["replaced"] == 1 and "income" not in summary["answer_changes"]


def test_check_repair_leaves_numeric_answers_out_of_the_kept_counts(stored, tmp_path):
    path = _write(tmp_path / "w.csv", ["10", "20", "dk"], "wide")
    assert run_cli("import", str(path), "--survey", "tax", "--db", stored).exit_code == 0
    assert run_cli("check", "--survey", "tax", "--db", stored).exit_code == 0
    engine = create_engine(stored)
    try:
        from surveykit.store.tables import answer_counts, questions
        with engine.begin() as conn:   # a kept row for the numeric question, made by hand
            survey_id, key = conn.execute(select(questions.c.survey_id, questions.c.id).where(
                questions.c.name == "income")).one()
            conn.execute(answer_counts.insert().values(survey_id=survey_id, question_id=key,
                                                       group_number=1, answer="10", count=1))
    finally:
        engine.dispose()
    result = run_cli("check", "--survey", "tax", "--db", stored)
    assert result.exit_code == 1 and "differ" in result.output
    assert run_cli("check", "--survey", "tax", "--db", stored, "--repair").exit_code == 0
    result = run_cli("check", "--survey", "tax", "--db", stored)
    assert result.exit_code == 0, result.output
    assert "2 cells" in result.output  # cheat's yes and no, and no numeric cell


def test_web_submissions_store_numbers_canonically_and_count_them_once(stored):
    engine = create_engine(stored)
    try:
        record_submission(engine, "tax", "web-1", {"cheat": "yes", "income": "1000.50"})
        with pytest.raises(Exception, match="at most 2 decimals"):
            record_submission(engine, "tax", "web-2", {"income": "1.234"})
    finally:
        engine.dispose()
    with Database(stored) as database:
        rows = database.survey("tax").numeric_answers("income")
    assert rows.values.tolist() == [1000.5]
    assert run_cli("check", "--survey", "tax", "--db", stored).exit_code == 0


def test_counts_from_the_store_duckdb_and_dask_agree(tmp_path):
    url = migrated.copy_filled(f"sqlite:///{tmp_path / 'a.db'}", add_tax)
    cells = _answers(300, seed=11)
    path = _write(tmp_path / "long.csv", cells, "long")
    assert run_cli("import", str(path), "--survey", "tax", "--db", url).exit_code == 0
    results = {}
    for source in ("store", "duckdb", "dask"):
        extra = () if source == "store" else ("--data", str(path), "--engine", source)
        result = run_cli("counts", "--survey", "tax", "--db", url, "--format", "json", *extra)
        assert result.exit_code == 0, result.output
        results[source] = json.loads(result.output)["questions"][1]
    oracle, blanks = _oracle(cells)
    for source, income in results.items():
        assert (income["n"], income["dont_know"], income["missing"]) == (
            oracle.answered, oracle.dont_know, blanks), source
        assert _close(income["sum"], oracle.total.total), source
        assert _close(income["sum_squares"], oracle.total.sum_squares), source
    # a counts table round-trips into the same report
    table = run_cli("counts", "--survey", "tax", "--db", url, "--format", "csv")
    counts_file = tmp_path / "counts.csv"
    counts_file.write_text(table.output, encoding="utf-8")
    means = []
    for extra in ((), ("--counts-file", str(counts_file)), ("--data", str(path))):
        result = run_cli("report", "--survey", "tax", "--db", url, "--format", "json", *extra)
        assert result.exit_code == 0, result.output
        means.append(next(q for q in json.loads(result.output)["questions"]
                          if q["id"] == "income")["mean"])
    truth = estimate_mean(load_survey_file_text(SURVEY).question("income").design, oracle)
    assert all(math.isclose(m, truth.mean, rel_tol=1e-9) for m in means), means


def test_a_bad_cell_counted_in_files_names_its_line(tmp_path):
    url = migrated.copy_filled(f"sqlite:///{tmp_path / 'a.db'}", add_tax)
    path = tmp_path / "bad.csv"
    path.write_text('respondent_id,cheat,income\nx1,yes,5\nx2,no,"1.234,5"\n',
                    encoding="utf-8")
    for engine in ("duckdb", "dask"):
        result = run_cli("counts", "--survey", "tax", "--db", url, "--data", str(path),
                         "--engine", engine)
        assert result.exit_code == 1
        assert "line 3, column income, value '1.234,5'" in result.output, result.output


def test_an_xlsx_holds_numbers_as_numbers(stored, tmp_path):
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["respondent_id", "cheat", "income"])
    sheet.append(["x1", "yes", 1234.5])
    sheet.append(["x2", "no", 0])
    sheet.append(["x3", "yes", "dk"])
    path = tmp_path / "answers.xlsx"
    book.save(path)
    result = run_cli("import", str(path), "--survey", "tax", "--db", stored)
    assert result.exit_code == 0, result.output
    with Database(stored) as database:
        rows = database.survey("tax").numeric_answers("income")
    assert rows.values[~rows.dont_know].tolist() == [1234.5, 0.0]
    refused = run_cli("import", str(path), "--survey", "tax", "--db", stored,
                      "--decimal-comma")
    assert refused.exit_code == 2 and "reads the numbers of CSV files" in refused.output


def test_survey_add_of_a_numeric_survey_stores_it_and_the_sample_still_loads(tmp_path):
    url = f"sqlite:///{tmp_path / 'a.db'}"
    survey = tmp_path / "tax.toml"
    survey.write_text(SURVEY, encoding="utf-8")
    migrated.migrated_sqlite(tmp_path / "a.db")
    result = run_cli("survey", "add", str(survey), "--db", url)
    assert result.exit_code == 0 and "Added survey 'tax' (2 questions)" in result.output
    with Database(url) as database:
        assert database.survey("tax").definition() == load_survey_file(survey)
    # again: the same definition is no change
    assert run_cli("survey", "add", str(survey), "--db", url).exit_code == 0


def test_with_sampling_the_total_is_horvitz_thompson_of_the_unbiased_transform(tmp_path):
    """[sampling] with weights and strata (no fpc: with replacement): total = sum of
    weight x r' (r' = (z - a) / b / (1 - d) for a number, 0 for "don't know"), its variance
    the stratified with-replacement formula sum_h n_h / (n_h - 1) sum_i (t_i - tbar_h)^2
    (Lumley 2010, Sec. 2.2), both computed here from the file alone."""
    text = SURVEY + '\n[sampling]\nweight = "w"\nstrata = "s"\n'
    survey_file = tmp_path / "tax.toml"
    survey_file.write_text(text, encoding="utf-8")
    design = load_survey_file_text(text).question("income").design
    rng = np.random.default_rng(3)
    sim = design.simulate(rng.uniform(0, 30000, size=80).round(2), rng=rng)
    lines = ["respondent_id,cheat,income,w,s"]
    for i in range(80):
        answer = "dk" if sim.dont_know[i] else f"{sim.answers[i]:.2f}"
        lines.append(f"r{i},{'yes' if i % 3 else 'no'},{answer},{1 + i % 4},"
                     f"{'A' if i < 40 else 'B'}")
    path = tmp_path / "answers.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    url = migrated.migrated_sqlite(tmp_path / "a.db")
    for args in (("survey", "add", str(survey_file)),
                 ("import", str(path), "--survey", "tax")):
        result = run_cli(*args, "--db", url)
        assert result.exit_code == 0, result.output
    result = run_cli("report", "--survey", "tax", "--db", url, "--format", "json")
    assert result.exit_code == 0, result.output
    income = next(q for q in json.loads(result.output)["questions"] if q["id"] == "income")
    m, d = design.moments(), float(design.designed_dont_know)
    t = np.array([0.0 if line.split(",")[2] == "dk" else
                  float(line.split(",")[3]) * (float(line.split(",")[2]) - m.a) / m.b / (1 - d)
                  for line in lines[1:]])
    strata = np.array([line.split(",")[4] for line in lines[1:]])
    variance = sum(len(t[strata == h]) / (len(t[strata == h]) - 1)
                   * np.sum((t[strata == h] - t[strata == h].mean()) ** 2) for h in "AB")
    assert income["weighted"] is True
    assert math.isclose(income["total"], t.sum(), rel_tol=1e-9)
    assert math.isclose(income["total_se"], math.sqrt(variance), rel_tol=1e-9)
    for fmt in ("text", "markdown", "html"):
        assert run_cli("report", "--survey", "tax", "--db", url, "--format", fmt
                       ).exit_code == 0


def test_regress_with_a_numeric_outcome_is_least_squares_on_the_stored_answers(tmp_path):
    """additive with mu = 0 reports y + noise, whose unbiased transform is the answer itself:
    the coefficients are numpy's least squares of the file's answers on (1, age)."""
    text = ('name = "reg"\ntitle = "Reg"\n[[questions]]\nid = "income"\ntext = "Income?"\n'
            'type = "number"\n[questions.design]\nmodel = "additive"\nmu = 0\nsigma = 20\n'
            'scrambler = "normal"\n[covariates]\nage = "number"\n'
            '[[models]]\nformula = "income ~ age"\n')
    survey_file = tmp_path / "reg.toml"
    survey_file.write_text(text, encoding="utf-8")
    design = load_survey_file_text(text).question("income").design
    rng = np.random.default_rng(2)
    age = rng.integers(20, 60, size=300).astype(float)
    answers = np.round(design.simulate(10 + 0.5 * age + rng.normal(0, 2, 300),
                                       rng=rng).answers, 2)
    path = tmp_path / "answers.csv"
    path.write_text("respondent_id,income,age\n" + "".join(
        f"r{i:03d},{z:.2f},{int(a)}\n" for i, (z, a) in enumerate(zip(answers, age,
                                                                      strict=True))),
        encoding="utf-8")
    url = migrated.migrated_sqlite(tmp_path / "a.db")
    for args in (("survey", "add", str(survey_file)),
                 ("import", str(path), "--survey", "reg")):
        assert run_cli(*args, "--db", url).exit_code == 0
    result = run_cli("regress", "--survey", "reg", "--formula", "income ~ age", "--db", url,
                     "--format", "json")
    assert result.exit_code == 0, result.output
    fit = json.loads(result.output)
    beta, *_ = np.linalg.lstsq(np.column_stack([np.ones_like(age), age]), answers, rcond=None)
    params = {row["term"]: row["estimate"] for row in fit["coefficients"]}
    assert math.isclose(params["(Intercept)"], beta[0], rel_tol=1e-9)
    assert math.isclose(params["age"], beta[1], rel_tol=1e-9)
    text_run = run_cli("regress", "--survey", "reg", "--formula", "income ~ age", "--db", url)
    assert text_run.exit_code == 0 and "scrambled outcome" in text_run.output
    # the survey's [[models]] in the report: the same fit in every format
    report = run_cli("report", "--survey", "reg", "--db", url, "--format", "json")
    assert report.exit_code == 0, report.output
    declared = json.loads(report.output)["models"][0]["fit"]["coefficients"]
    assert math.isclose(declared[1]["estimate"], beta[1], rel_tol=1e-9)
    for fmt in ("markdown", "html", "text"):
        rendered = run_cli("report", "--survey", "reg", "--db", url, "--format", fmt)
        assert rendered.exit_code == 0 and "scrambled outcome" in rendered.output, fmt


def test_counting_decimal_comma_files_needs_the_option_as_import_does(tmp_path):
    url = migrated.copy_filled(f"sqlite:///{tmp_path / 'a.db'}", add_tax)
    path = tmp_path / "comma.csv"
    path.write_text("respondent_id;cheat;income\nx1;yes;1234,50\nx2;no;0,5\nx3;no;dk\n",
                    encoding="utf-8")
    for engine in ("duckdb", "dask"):
        refused = run_cli("counts", "--survey", "tax", "--db", url, "--data", str(path),
                          "--engine", engine)
        assert refused.exit_code == 1 and "line 2, column income, value '1234,50'" \
            in refused.output, refused.output
        result = run_cli("counts", "--survey", "tax", "--db", url, "--data", str(path),
                         "--engine", engine, "--decimal-comma", "--format", "json")
        assert result.exit_code == 0, result.output
        income = json.loads(result.output)["questions"][1]
        assert (income["n"], income["sum"], income["dont_know"]) == (2, 1235.0, 1), engine
