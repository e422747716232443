"""Counting files (``counts --data``, ``report --data``) reads them as ``import`` does: one reader
(surveykit/reading/), so a file counts as it imports, or both refuse it for the same reason.

Each test here is a regression test of a way they differed (issues 19, 20, 22): a row with a
trailing comma counted but not imported, a CSV named .xlsx imported but not counted, Parquet
binary cells counted as ``don\\x27t know``, a quote after a space read as quoting by DuckDB
only, a mistyped [import.columns] entry passing without a word. The real exports of
tests/exports/ are run through both in tests/test_field_imports.py, and generated files in
tests/test_reading_properties.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from surveykit.cli import main
from surveykit.definition.survey import Survey, parse_survey
from surveykit.resources import locate_resource
from tests.reading_support import counted, imported

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

SAMPLE_TOML = (locate_resource("sample_data") / "academic_integrity.toml").read_text("utf-8")
EXPORTS = Path(__file__).resolve().parent / "exports"


@pytest.fixture
def sample() -> Survey:
    return parse_survey(SAMPLE_TOML, "academic_integrity.toml")


def both(survey: Survey, path: Path, folder: Path, engines=("duckdb",)):
    """The import's outcome, after asserting that every engine's count of ``path`` is it."""
    reference = imported(survey, path, folder)
    for engine in engines:
        assert counted(survey, path, engine) == reference, engine
    return reference


def test_a_row_with_a_trailing_comma_is_refused_by_counting_as_by_import(sample, tmp_path):
    path = tmp_path / "trailing.csv"
    path.write_text("respondent_id,question_id,answer\nAI-1,exam_cheating,yes,\n"
                    "AI-2,exam_cheating,no\n", encoding="utf-8")
    reference = both(sample, path, tmp_path, engines=("duckdb", "dask"))
    assert reference.refused
    assert reference.problems == ((2, None, None, "the row has 4 fields but the header has 3; "
                                   "look for a stray or missing ',' or an unclosed quote",
                                   "wrong number of fields"),)


def test_rows_with_extra_empty_fields_are_refused_by_counting_as_by_import(sample, tmp_path):
    """DuckDB dropped a row's empty fields beyond the header when it read them as NULL."""
    path = tmp_path / "extra.csv"
    path.write_text("respondent_id,exam_cheating,plagiarism\nAI-1,yes,no,,\nAI-2,,,,\n"
                    "AI-3,no,no\n", encoding="utf-8")
    reference = both(sample, path, tmp_path, engines=("duckdb", "dask"))
    assert [problem[0] for problem in reference.problems] == [2, 3]


def test_a_csv_named_xlsx_counts_as_it_imports(sample, tmp_path):
    path = tmp_path / "export.xlsx"
    path.write_text("respondent_id,exam_cheating,plagiarism\nAI-1,yes,no\nAI-2,no,\n",
                    encoding="utf-8")
    reference = both(sample, path, tmp_path)
    assert not reference.refused
    assert [(q.yes, q.no, q.missing) for q in reference.counts[:2]] == [(1, 1, 0), (0, 1, 1)]


def test_a_ragged_csv_is_refused_by_dask_as_by_import_not_a_crash(sample, tmp_path):
    """Dask reads a CSV's first block when the count is planned: a ragged row there raised
    pandas' ParserError out of surveykit."""
    path = tmp_path / "ragged.csv"
    path.write_text("respondent_id,question_id,answer,_uuid\nAI-1,exam_cheating,yes\n"
                    "AI-2,exam_cheating,yes,,,\n", encoding="utf-8")
    reference = both(sample, path, tmp_path, engines=("duckdb", "dask"))
    assert [problem[0] for problem in reference.problems] == [2, 3]


def test_a_workbook_counts_and_imports_whatever_its_name(sample, tmp_path):
    """Its kind is told by its content: openpyxl refused to open a file not named .xlsx."""
    path = tmp_path / "export.dat"
    path.write_bytes((EXPORTS / "kobotoolbox_values.xlsx").read_bytes())
    reference = both(sample, path, tmp_path)
    assert [(q.yes, q.no, q.dont_know, q.missing) for q in reference.counts] == [
        (3, 4, 1, 0), (2, 5, 0, 1), (1, 5, 2, 0), (1, 5, 1, 1)]


def test_a_repeated_answer_in_a_workbook_is_refused_by_counting_as_by_import(sample, tmp_path):
    """The same problems, with the kind import gives them and the sheet's row numbers
    ("rows 2, 3", not "lines"), so that both refusals say the same."""
    from openpyxl import Workbook

    book = Workbook()
    for row in (["respondent_id", "exam_cheating"], ["AI-1", "yes"], ["AI-1", "no"]):
        book.active.append(row)
    path = tmp_path / "twice.xlsx"
    book.save(path)
    reference = both(sample, path, tmp_path)
    assert [problem[3:] for problem in reference.problems] == [(
        "this respondent answers question 'exam_cheating' 2 times in this file (rows 2, 3); "
        "keep one row", "duplicate in this file")] * 2


@pytest.mark.parametrize("binary", [pa.binary(), pa.large_binary()])
def test_parquet_binary_cells_are_utf8_text_when_counting_and_importing(sample, tmp_path,
                                                                        binary):
    path = tmp_path / "answers.parquet"
    pq.write_table(pa.table({
        "respondent_id": pa.array([b"AI-1", b"AI-2", b"AI-3"], binary),
        "question_id": pa.array([b"exam_cheating"] * 3, binary),
        "answer": pa.array([b"don't know", "Don\u2019t know".encode(), b"yes"], binary),
    }), path)
    reference = both(sample, path, tmp_path, engines=("duckdb", "dask"))
    assert not reference.refused
    assert (reference.counts[0].dont_know, reference.counts[0].yes) == (2, 1)


def test_parquet_binary_cells_that_are_not_utf8_are_refused_in_one_line(sample, tmp_path):
    path = tmp_path / "latin1.parquet"
    pq.write_table(pa.table({"respondent_id": ["AI-1", "AI-2"],
                             "exam_cheating": pa.array([b"yes", "sí".encode("latin-1")])}), path)
    reference = both(sample, path, tmp_path, engines=("duckdb", "dask"))
    assert reference.summary == (
        f"{path}, row 3, column 'exam_cheating': byte 0xed is not UTF-8; Parquet text must be "
        "UTF-8 (a string column, or binary holding UTF-8): write the file again with text as "
        "UTF-8; nothing was imported")
    assert "\n" not in reference.summary and not reference.problems


@pytest.mark.parametrize("row", [
    'AI-1, "yes, I have",no',  # DuckDB opened a quote after one space: text for import
    'AI-1,"yes" "",no',  # and again after a closing quote and a space: 'yes ' for DuckDB
])
def test_a_quote_after_a_space_counts_as_import_reads_it(sample, tmp_path, row):
    path = tmp_path / "spaced.csv"
    path.write_text(f"respondent_id,exam_cheating,plagiarism\n{row}\nAI-2,no,no\n",
                    encoding="utf-8")
    reference = both(sample, path, tmp_path, engines=("duckdb", "dask"))
    assert reference.refused


def test_a_float_parquet_column_reads_whole_numbers_as_integers(sample, tmp_path):
    """A pandas frame of 0/1 answers with gaps is written as float64 with nulls (or NaN)."""
    path = tmp_path / "floats.parquet"
    pq.write_table(pa.table({"respondent_id": ["AI-1", "AI-2", "AI-3", "AI-4"],
                             "exam_cheating": pa.array([1.0, 0.0, None, float("nan")]),
                             "plagiarism": pa.array([1, 1, 0, None], pa.int64()),
                             "contract_cheating": pa.array([True, None, False, False])}), path)
    reference = both(sample, path, tmp_path, engines=("duckdb", "dask"))
    assert [(q.yes, q.no, q.missing) for q in reference.counts[:3]] == [
        (1, 1, 2), (2, 1, 1), (1, 2, 1)]


def test_an_import_columns_entry_that_matches_no_column_names_the_closest_header(tmp_path):
    french = (EXPORTS / "french.toml").read_text("utf-8")
    typo = french.replace("pendant un examen ?", "pendant un examen?!")
    survey = parse_survey(SAMPLE_TOML + "\n" + typo, "s.toml")
    path = EXPORTS / "kobotoolbox_french.csv"
    reference = both(survey, path, tmp_path)
    assert reference.summary == (
        f"{path}: [import.columns] \"Avez-vous déjà copié les réponses d'un autre étudiant "
        "pendant un examen?!\" matches no column of this file (did you mean \"Intégrité/"
        "Avez-vous déjà copié les réponses d'un autre étudiant pendant un examen ?\"?), so no "
        "column gives question 'exam_cheating'; correct the entry in the survey file and run "
        "'surveykit survey update FILE'; nothing was imported")


def test_an_unmatched_entry_is_no_error_when_another_column_gives_its_question(tmp_path):
    """Entries for several exports of one form (labels, values) stay allowed; the one entry
    that could have read a question is named when no column gives it."""
    survey = parse_survey(SAMPLE_TOML + '\n[import.columns]\n"Q1 (labels)" = "exam_cheating"\n'
                          '"Q2 (labels)" = "plagiarism"\n', "s.toml")
    values = tmp_path / "values.csv"
    values.write_text("respondent_id,exam_cheating,Q2 (labels)\nAI-1,yes,no\n",
                      encoding="utf-8")
    assert both(survey, values, tmp_path).counts[0].yes == 1
    labels = tmp_path / "labels.csv"
    labels.write_text("respondent_id,Q1 (label),plagiarism\nAI-1,yes,no\n", encoding="utf-8")
    assert both(survey, labels, tmp_path).summary == (
        f'{labels}: [import.columns] "Q1 (labels)" matches no column of this file (did you '
        "mean 'Q1 (label)'?), so no column gives question 'exam_cheating'; correct the entry "
        "in the survey file and run 'surveykit survey update FILE'; nothing was imported")


def test_counts_data_and_report_data_read_a_parquet_file_as_import_reads_it(sqlite_url,
                                                                             tmp_path):
    """The commands, as run: a binary Parquet column counted and reported as imported."""
    survey_file = tmp_path / "survey.toml"
    survey_file.write_text(SAMPLE_TOML, encoding="utf-8")
    path = tmp_path / "wave.parquet"
    pq.write_table(pa.table({
        "respondent_id": [f"AI-{n}" for n in range(6)],
        "exam_cheating": pa.array([b"yes", b"no", b"don't know", b"no", b"yes", b"no"]),
        "plagiarism": pa.array([b"no"] * 5 + [None]),
    }), path)
    runner = CliRunner()
    for args in (["init"], ["survey", "add", str(survey_file)]):
        assert runner.invoke(main, [*args, "--db", sqlite_url]).exit_code == 0
    common = ["--survey", "academic_integrity", "--db", sqlite_url]
    counted_table = runner.invoke(main, ["counts", *common, "--format", "csv", "--data",
                                         str(path)])
    reported = runner.invoke(main, ["report", *common, "--format", "json", "--data", str(path)])
    assert counted_table.exit_code == 0, counted_table.output
    assert reported.exit_code == 0, reported.output
    result = runner.invoke(main, ["import", str(path), *common])
    assert result.exit_code == 0, result.output
    assert runner.invoke(main, ["counts", *common, "--format", "csv"]).output == \
        counted_table.output
    assert json.loads(runner.invoke(main, ["report", *common, "--format", "json"]).output) == \
        json.loads(reported.output)
