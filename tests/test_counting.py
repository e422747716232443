"""Counting files where they lie (DuckDB, Dask, the exact row-by-row path, counts tables) agrees
exactly with importing them into SQLite and PostgreSQL; bad rows are reported with file and line.

The data are made here with a fixed seed: a five-design, two-group survey (labels other than
yes/no, aliases, groups by number and by name in any case, missing cells, untidy spellings),
written as long CSV, wide CSV (semicolons), Parquet and XLSX. The reference counts are those
of the store after importing the same files (count_responses: one SQL GROUP BY).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from dask_support import local_cluster
from migrated import migrated_sqlite

from surveykit import store
from surveykit.cli import main
from surveykit.counting import count_files, duckdb_engine
from surveykit.counting.exact import count_exactly
from surveykit.counting.sources import expand_paths, open_sources
from surveykit.counting.table import read_counts_table, write_counts_table
from surveykit.counting.tally import counts_from_tally
from surveykit.definition.survey import Survey, parse_survey
from surveykit.errors import CsvImportError, MissingInputError, ParameterError
from surveykit.reading.responses import CHUNK_ROWS
from surveykit.store.importer import import_responses

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

MIXED = (Path(__file__).parent / "surveys" / "mixed.toml").read_text(encoding="utf-8")
GROUP_CELLS = ("1", "2", "short", "LONG", " Short ", "long")


@pytest.fixture(scope="module")
def dask_cluster():
    """One real LocalCluster for this module's Dask tests (started once: tests/dask_support.py)."""
    with local_cluster() as cluster:
        yield cluster


@pytest.fixture
def mixed() -> Survey:
    return parse_survey(MIXED, "mixed.toml")


def spelled(label: str, question: str, rng: np.random.Generator) -> str:
    """An answer as people type it: the label, another case, spaces, or a usual spelling."""
    choices = [label, label.upper(), f" {label} "]
    if label == "dont_know":
        choices += ["DK", "don't know"]
    if label in ("yes", "no"):
        choices += [label[0].upper()]
    if question == "tax" and label in ("yes", "no"):
        choices += ["same" if label == "yes" else "different"]
    return choices[rng.integers(len(choices))]


def answers(survey: Survey, respondents: range, seed: int, *, skip: float = 0.1):
    """(respondent id, group cell, {question id: cell}) for each respondent; '' is missing."""
    rng = np.random.default_rng(seed)
    rows = []
    for number in respondents:
        group = GROUP_CELLS[rng.integers(len(GROUP_CELLS))]
        cells = {}
        for question in survey.questions:
            labels = question.design.response_labels
            label = labels[rng.integers(len(labels))]
            if question.id == "tax" and label not in ("yes", "no", "dont_know"):
                label = "dont_know"
            cells[question.id] = "" if rng.random() < skip else spelled(label, question.id, rng)
        rows.append((f"M-{number:05d}", group, cells))
    return rows


def write_long(path: Path, survey: Survey, rows, *, group_column: str = "group") -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["respondent_id", "question_id", "answer", group_column, "_uuid"])
        for respondent, group, cells in rows:
            for question in survey.questions:
                writer.writerow([respondent, question.id if len(respondent) % 2 else
                                 question.id.upper(), cells[question.id], group, "x"])
    return path


def write_wide(path: Path, survey: Survey, rows) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter=";")
        writer.writerow(["respondent_id", "Group", *(q.id for q in survey.questions)])
        for respondent, group, cells in rows:
            writer.writerow([respondent, group, *(cells[q.id] for q in survey.questions)])
    return path


def write_parquet(path: Path, survey: Survey, rows) -> Path:
    columns = {"respondent_id": [], "question_id": [], "answer": [], "group": []}
    for respondent, group, cells in rows:
        for question in survey.questions:
            columns["respondent_id"].append(respondent)
            columns["question_id"].append(question.id)
            columns["answer"].append(cells[question.id] or None)
            columns["group"].append(group)
    pq.write_table(pa.table(columns), path)
    return path


def write_xlsx(path: Path, survey: Survey, rows) -> Path:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.append(["respondent_id", "group", *(q.id for q in survey.questions)])
    for respondent, group, cells in rows:
        sheet.append([respondent, group, *(cells[q.id] or None for q in survey.questions)])
    book.save(path)
    return path


def as_csv(path: Path, survey: Survey, rows, kind: str) -> Path:
    """The same rows as a long CSV, for importing what a Parquet or XLSX file holds."""
    if kind == "xlsx":
        return write_wide(path, survey, rows)
    return write_long(path, survey, rows)


def imported(engine, survey: Survey, files: list[Path], *, replace: bool = False):
    store.add_survey(engine, survey)
    for index, path in enumerate(files):
        import_responses(engine, path, survey.name, replace=replace and index > 0)
    return store.count_responses(engine, survey.name)


def fast_counts(survey: Survey, files: list[Path]):
    """DuckDB's one-scan counts, or None when it defers to the exact path."""
    with open_sources(expand_paths(files), survey) as sources, duckdb_engine.connect() as con:
        tally = duckdb_engine.fast_tally(con, sources, survey)
        return None if tally is None else counts_from_tally(survey, sources, tally)


def exact_counts(survey: Survey, files: list[Path], *, replace: bool = False):
    with open_sources(expand_paths(files), survey) as sources, duckdb_engine.connect() as con:
        return count_exactly(con, sources, survey, replace=replace)


@pytest.fixture
def mixed_files(tmp_path: Path, mixed: Survey) -> dict[str, Path]:
    """Four files, four kinds, disjoint respondents."""
    return {
        "long": write_long(tmp_path / "long.csv", mixed, answers(mixed, range(0, 120), 1)),
        "wide": write_wide(tmp_path / "wide.csv", mixed, answers(mixed, range(120, 230), 2)),
        "parquet": write_parquet(tmp_path / "part.parquet", mixed,
                                 answers(mixed, range(230, 330), 3)),
        "xlsx": write_xlsx(tmp_path / "sheet.xlsx", mixed, answers(mixed, range(330, 400), 4)),
    }


# -- agreement --------------------------------------------------------------------------------


def test_duckdb_fast_and_exact_counts_equal_the_store_after_importing_the_same_files(
        engine, mixed, tmp_path):
    rows = answers(mixed, range(300), 7)
    long = write_long(tmp_path / "a.csv", mixed, rows)
    reference = imported(engine, mixed, [long])
    assert sum(q.answered for q in reference) > 1000
    assert any(q.missing for q in reference)
    assert {g for q in reference for g in q.counts.groups} == {"1", "2"}
    assert fast_counts(mixed, [long]) == reference  # the fast path vouches for clean data
    assert exact_counts(mixed, [long]) == reference
    assert count_files(mixed, [long]) == reference


def test_every_kind_of_file_counts_as_its_import(engine, mixed, mixed_files, tmp_path):
    csv_twins = [mixed_files["long"], mixed_files["wide"],
                 as_csv(tmp_path / "parquet.csv", mixed, answers(mixed, range(230, 330), 3),
                        "parquet"),
                 as_csv(tmp_path / "xlsx.csv", mixed, answers(mixed, range(330, 400), 4),
                        "xlsx")]
    reference = imported(engine, mixed, csv_twins)
    files = list(mixed_files.values())
    assert count_files(mixed, files) == reference
    assert exact_counts(mixed, files) == reference


def test_globs_and_directories_name_the_same_files(mixed, mixed_files, tmp_path):
    everything = count_files(mixed, list(mixed_files.values()))
    assert count_files(mixed, [str(tmp_path / "*.csv"), str(tmp_path / "*.parquet"),
                               str(tmp_path / "*.xlsx")]) == everything
    assert count_files(mixed, [tmp_path]) == everything
    # a file named twice (a glob and its path) is counted once
    assert count_files(mixed, [tmp_path, mixed_files["long"]]) == everything


def test_replace_counts_the_later_files_answers_as_import_replace_does(engine, mixed, tmp_path):
    first = write_long(tmp_path / "first.csv", mixed, answers(mixed, range(0, 80), 11))
    later = write_long(tmp_path / "later.csv", mixed, answers(mixed, range(60, 100), 12))
    reference = imported(engine, mixed, [first, later], replace=True)
    assert count_files(mixed, [first, later], replace=True) == reference
    with pytest.raises(CsvImportError) as caught:
        count_files(mixed, [first, later])
    error = caught.value
    assert error.path == str(later)
    problem = error.problems[0]
    assert (problem.line, problem.column, problem.value) == (2, "respondent_id", "M-00060")
    assert f"in {first} (line " in problem.reason
    assert "use --replace" in str(error)


def test_dask_on_a_local_cluster_counts_what_duckdb_and_sqlite_count(engine, mixed, tmp_path,
                                                                     dask_cluster):
    long = write_long(tmp_path / "a.csv", mixed, answers(mixed, range(0, 200), 21))
    wide = write_wide(tmp_path / "b.csv", mixed, answers(mixed, range(200, 300), 22))
    part = write_parquet(tmp_path / "c.parquet", mixed, answers(mixed, range(300, 400), 23))
    reference = imported(engine, mixed, [long, wide, as_csv(
        tmp_path / "c.csv", mixed, answers(mixed, range(300, 400), 23), "parquet")])
    on_cluster = count_files(mixed, [long, wide, part], engine="dask",
                             scheduler=dask_cluster.scheduler_address)
    assert on_cluster == reference
    assert count_files(mixed, [long, wide, part]) == reference


def test_a_counts_table_reads_back_as_the_counts_it_was_written_from(engine, mixed, tmp_path):
    reference = imported(engine, mixed, [write_long(tmp_path / "a.csv", mixed,
                                                    answers(mixed, range(150), 31))])
    table = io.StringIO()
    write_counts_table(table, mixed.name, reference)
    table.seek(0)
    assert read_counts_table(table, mixed, "counts.csv") == reference


# -- what the fast path leaves to the exact one -------------------------------------------


def test_ids_with_spaces_and_questions_in_odd_case_are_counted_as_the_importer_reads_them(
        engine, mixed, tmp_path):
    rows = answers(mixed, range(40), 41)
    path = write_long(tmp_path / "odd.csv", mixed, rows)
    text = path.read_text(encoding="utf-8").replace("M-00003,", " M-00003\u00a0,")
    text = text.replace(",doping,", ",\u00a0Doping ,")
    path.write_text(text, encoding="utf-8")
    reference = imported(engine, mixed, [path])
    assert fast_counts(mixed, [path]) is None  # it cannot vouch for these: the exact path does
    assert count_files(mixed, [path]) == reference



@pytest.mark.parametrize("fanout", [True, False])
def test_ids_ending_in_any_kind_of_space_send_the_count_to_the_exact_path(
        engine, mixed, tmp_path, fanout):
    """The one scan looks closely only at ids whose first or last character is below '!' or
    beyond ASCII: trailing spaces of every kind (tab, no-break, ideographic, a control
    character, a line end inside quotes) must be among them, or the respondents would be
    counted twice."""
    rows = answers(mixed, range(40), 43)
    path = write_long(tmp_path / "trailing.csv", mixed, rows)
    text = path.read_text(encoding="utf-8")
    for number, end in zip((3, 5, 7, 9, 11), ("\t", "\u00a0", "\u3000", "\x1f", "\r\n"),
                           strict=True):
        text = text.replace(f"M-{number:05d},", f'"M-{number:05d}{end}",', 1)
    path.write_text(text, encoding="utf-8")
    with open_sources([path], mixed) as sources, duckdb_engine.connect() as con:
        tally = duckdb_engine.fast_tally(con, sources, mixed, fanout=fanout)
    assert tally.suspicious == 5
    assert count_files(mixed, [path]) == imported(engine, mixed, [path])

# -- bad rows, with file and line -----------------------------------------------------------


def test_a_bad_answer_is_reported_with_its_file_line_column_and_the_importers_reason(
        engine, mixed, tmp_path):
    good = write_long(tmp_path / "good.csv", mixed, answers(mixed, range(10), 51))
    bad = tmp_path / "bad.csv"
    bad.write_text("respondent_id,question_id,answer,group\nB-1,doping,yes,1\n"
                   "B-1,drinks,sometimes,1\nB-2,doping,no,3\n", encoding="utf-8")
    with pytest.raises(CsvImportError) as counted:
        count_files(mixed, [good, bad])
    store.add_survey(engine, mixed)
    with pytest.raises(CsvImportError) as importing:
        import_responses(engine, bad, mixed.name)
    assert counted.value.path == str(bad)
    assert counted.value.problems == importing.value.problems
    assert [(p.line, p.column, p.value) for p in counted.value.problems] == [
        (3, "answer", "sometimes"), (4, "group", "3")]
    assert str(counted.value).startswith(f"2 bad rows in {bad}; nothing was counted")


def test_a_row_with_too_many_fields_and_a_repeated_answer_are_found_like_import_finds_them(
        mixed, tmp_path):
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("respondent_id,question_id,answer,group\nR-1,doping,yes,1\n"
                      "R-2,doping,no,1,extra\n", encoding="utf-8")
    with pytest.raises(CsvImportError) as caught:
        count_files(mixed, [ragged])
    assert caught.value.problems[0].line == 3
    assert "the row has 5 fields but the header has 4" in caught.value.problems[0].reason
    twice = tmp_path / "twice.csv"
    twice.write_text("respondent_id,question_id,answer,group\nR-1,doping,yes,1\n"
                     "R-2,doping,no,1\nR-1,DOPING,no,1\n", encoding="utf-8")
    with pytest.raises(CsvImportError) as caught:
        count_files(mixed, [twice])
    assert [(p.line, p.column, p.value) for p in caught.value.problems] == [
        (2, "respondent_id", "R-1"), (4, "respondent_id", "R-1")]
    assert "answers question 'doping' 2 times in this file (lines 2, 4)" in (
        caught.value.problems[0].reason)


# -- the one-scan query vouches for valid files; anything off is found by the exact path ------

def test_both_forms_of_the_one_scan_query_give_the_same_tally(mixed, mixed_files):
    """Streamed to two GROUP BYs (DuckDB 2) or GROUPING SETS (older DuckDB): the same."""
    files = [mixed_files["long"], mixed_files["wide"], mixed_files["parquet"]]
    with open_sources(expand_paths(files), mixed) as sources, duckdb_engine.connect() as con:
        streamed = duckdb_engine.fast_tally(con, sources, mixed, fanout=True)
        grouped = duckdb_engine.fast_tally(con, sources, mixed, fanout=False)
    assert streamed.suspicious == grouped.suspicious == 0
    assert streamed.respondents == grouped.respondents == 330
    assert sorted(streamed.cells, key=repr) == sorted(grouped.cells, key=repr)


def big_long_file(path: Path, survey: Survey, respondents: int) -> Path:
    """A clean long file: every respondent answers every question (no group column needed
    for one-group surveys; ``survey`` here has one group)."""
    with path.open("w", encoding="utf-8", newline="") as handle:
        handle.write("respondent_id,question_id,answer\n")
        for number in range(respondents):
            for question in survey.questions:
                handle.write(f"P-{number:06d},{question.id},{'yes' if number % 3 else 'no'}\n")
    return path


ONE_GROUP = 'name = "plain"\ntitle = "Plain"\n[mechanism]\np = 0.7\nq = 0.2\n'


def many_questions(count: int) -> Survey:
    return parse_survey(ONE_GROUP + "".join(
        f'[[questions]]\nid = "q{i:02d}"\ntext = "Question {i}?"\n' for i in range(count)),
        "plain.toml")


#: Respondents of three answers each that fill more than one chunk of the reader, so that
#: the exact path meets the last line in a later chunk than the first ones; FAR_LINE is the
#: line after them (the header is line 1).
FAR = CHUNK_ROWS // 3 + 1_000
FAR_LINE = 3 * FAR + 2


@pytest.mark.parametrize("fanout", [True, False])
def test_a_repeated_answer_far_into_a_file_is_reported_at_its_line(tmp_path, fanout):
    survey = many_questions(3)
    path = big_long_file(tmp_path / "big.csv", survey, FAR)  # lines 2 to FAR_LINE - 1
    with open_sources([path], survey) as sources, duckdb_engine.connect() as con:
        assert duckdb_engine.fast_tally(con, sources, survey, fanout=fanout).suspicious == 0
    with path.open("a", encoding="utf-8") as handle:
        handle.write("P-000007,Q01,no\n")  # line FAR_LINE: P-000007 answered q01 on line 24
    with open_sources([path], survey) as sources, duckdb_engine.connect() as con:
        tally = duckdb_engine.fast_tally(con, sources, survey, fanout=fanout)
    assert tally.suspicious == 1  # the one scan finds something off; the exact path says what
    with pytest.raises(CsvImportError) as caught:
        count_files(survey, [path])
    assert [(p.line, p.value) for p in caught.value.problems] == [
        (24, "P-000007"), (FAR_LINE, "P-000007")]
    assert f"answers question 'q01' 2 times in this file (lines 24, {FAR_LINE})" in (
        caught.value.problems[0].reason)


def test_a_bad_answer_in_the_last_row_is_reported_at_its_line(tmp_path):
    survey = many_questions(3)
    path = big_long_file(tmp_path / "big.csv", survey, FAR)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(f"P-{FAR:06d},q00,perhaps")  # line FAR_LINE, no line end
    with pytest.raises(CsvImportError) as caught:
        count_files(survey, [path])
    assert [(p.line, p.column, p.value) for p in caught.value.problems] == [
        (FAR_LINE, "answer", "perhaps")]
    assert str(caught.value).startswith(f"1 bad row in {path}; nothing was counted")


@pytest.mark.parametrize("fanout", [True, False])
def test_questions_beyond_the_first_32_are_checked_for_repeats_too(tmp_path, fanout):
    survey = many_questions(40)  # two words of question bits
    path = big_long_file(tmp_path / "wide_survey.csv", survey, 50)
    with open_sources([path], survey) as sources, duckdb_engine.connect() as con:
        clean = duckdb_engine.fast_tally(con, sources, survey, fanout=fanout)
    assert (clean.suspicious, clean.respondents) == (0, 50)
    counts = count_files(survey, [path])
    assert [q.answered for q in counts] == [50] * 40
    assert [q.missing for q in counts] == [0] * 40
    with path.open("a", encoding="utf-8") as handle:
        handle.write("P-000049,q31,no\nP-000012,q39,yes\n")  # questions 31 and 39 again
    with open_sources([path], survey) as sources, duckdb_engine.connect() as con:
        assert duckdb_engine.fast_tally(con, sources, survey, fanout=fanout).suspicious == 2
    with pytest.raises(CsvImportError) as caught:
        count_files(survey, [path])
    assert [(p.line, p.value) for p in caught.value.problems] == [
        (2 + 12 * 40 + 39, "P-000012"), (2 + 49 * 40 + 31, "P-000049"),
        (2002, "P-000049"), (2003, "P-000012")]


def test_missing_answers_stay_on_the_one_scan_path_and_count_as_the_store_counts(
        engine, mixed, tmp_path):
    """Rows without an answer neither count as answers nor make a respondent suspicious."""
    rows = answers(mixed, range(60), 61, skip=0.4)
    path = write_long(tmp_path / "sparse.csv", mixed, rows)
    reference = imported(engine, mixed, [path])
    assert any(q.missing for q in reference)
    assert fast_counts(mixed, [path]) == reference


def test_bad_cells_of_xlsx_and_parquet_files_are_reported_at_their_row(mixed, tmp_path):
    rows = answers(mixed, range(5), 61, skip=0)
    rows[2] = (rows[2][0], rows[2][1], {**rows[2][2], "cards": "seven"})
    sheet = write_xlsx(tmp_path / "sheet.xlsx", mixed, rows)
    with pytest.raises(CsvImportError) as caught:
        count_files(mixed, [sheet])
    assert caught.value.path == str(sheet)
    assert [(p.line, p.column, p.value) for p in caught.value.problems] == [
        (4, "cards", "seven")]  # Excel's row 4: the header is row 1
    table = write_parquet(tmp_path / "t.parquet", mixed, rows)
    with pytest.raises(CsvImportError) as caught:
        count_files(mixed, [table])
    line = 1 + 2 * len(mixed.questions) + 4  # row 15 of the long table, after the header
    assert [(p.line, p.column, p.value) for p in caught.value.problems] == [
        (line, "answer", "seven")]


def test_a_file_with_a_wrong_header_names_the_file_and_counts_nothing(mixed, tmp_path):
    wrong = tmp_path / "wrong.csv"
    wrong.write_text("id,question,answer\nR-1,doping,yes\n", encoding="utf-8")
    with pytest.raises(CsvImportError, match=r"wrong.csv: wrong header: .*nothing was counted"):
        count_files(mixed, [wrong])


def test_data_that_names_nothing_is_a_parameter_error(mixed, tmp_path):
    with pytest.raises(ParameterError, match=r"matches no file"):
        count_files(mixed, [str(tmp_path / "*.csv")])
    # a file that is not there is a usage error too (status 2, issue 22)
    with pytest.raises(MissingInputError, match=r"no such file or directory"):
        count_files(mixed, [tmp_path / "absent.csv"])
    with pytest.raises(ParameterError, match=r"engine 'spark' must be one of duckdb, dask"):
        count_files(mixed, [tmp_path], engine="spark")


def test_a_counts_table_with_bad_rows_lists_them_with_lines(mixed):
    text = ("survey,question,group,response,count\nmixed,doping,short,yes,3\n"
            "mixed,doping,middle,yes,3\nmixed,drinks,1,sometimes,2\nmixed,tax,1,yes,-1\n"
            "other,tax,1,yes,1\n")
    with pytest.raises(CsvImportError) as caught:
        read_counts_table(io.StringIO(text), mixed, "c.csv")
    assert [(p.line, p.column, p.value) for p in caught.value.problems] == [
        (3, "group", "middle"), (4, "response", "sometimes"), (5, "count", "-1"),
        (6, "survey", "other")]


# -- the commands -------------------------------------------------------------------------------


def test_counts_data_writes_a_counts_table_that_report_and_estimate_read(sqlite_url, tmp_path,
                                                                         sample_survey_path):
    runner = CliRunner()
    migrated_sqlite(tmp_path / "surveykit.db")
    assert runner.invoke(main, ["survey", "add", str(sample_survey_path), "--db",
                                sqlite_url]).exit_code == 0
    data = sample_survey_path.parent
    for name in ("responses_long.csv", "responses_wide.csv"):
        assert runner.invoke(main, ["import", str(data / name), "--survey",
                                    "academic_integrity", "--db", sqlite_url]).exit_code == 0
    stored = runner.invoke(main, ["counts", "--survey", "academic_integrity", "--db",
                                  sqlite_url, "--format", "csv"])
    counted = runner.invoke(main, ["counts", "--survey", "academic_integrity", "--db",
                                   sqlite_url, "--format", "csv", "--data",
                                   str(data / "responses_long.csv"),
                                   str(data / "responses_wide.csv")])
    assert counted.exit_code == 0, counted.output
    # the same table, line for line: responses in the design's order (yes, no, dont_know)
    assert counted.output == stored.output
    lines = counted.output.splitlines()
    assert lines[0] == "survey,question,group,response,count"
    assert [line.split(",")[1:4] for line in lines[1:5]] == [
        ["exam_cheating", "1", "yes"], ["exam_cheating", "1", "no"],
        ["exam_cheating", "1", "dont_know"], ["exam_cheating", "", "_missing"]]
    as_json = [runner.invoke(main, ["counts", "--survey", "academic_integrity", "--db", sqlite_url,
                                    "--format", "json", *more]).output
               for more in ([], ["--data", str(data / "responses_long.csv"),
                                 str(data / "responses_wide.csv")])]
    assert as_json[0] == as_json[1]
    table = tmp_path / "counts.csv"
    table.write_text(counted.output, encoding="utf-8")
    from_store = runner.invoke(main, ["report", "--survey", "academic_integrity", "--db",
                                      sqlite_url, "--format", "json"])
    from_table = runner.invoke(main, ["report", "--counts-file", str(table), "--db", sqlite_url,
                                      "--format", "json"])
    assert from_table.exit_code == 0, from_table.output
    assert json.loads(from_table.output) == json.loads(from_store.output)
    as_json = tmp_path / "counts.json"
    as_json.write_text(runner.invoke(main, ["counts", "--survey", "academic_integrity", "--db",
                                            sqlite_url, "--format", "json"]).output, "utf-8")
    from_json = runner.invoke(main, ["report", "--counts-file", str(as_json), "--db",
                                     sqlite_url, "--format", "json"])
    assert json.loads(from_json.output) == json.loads(from_store.output)
    text = runner.invoke(main, ["estimate", "--counts-file", str(table), "--db", sqlite_url])
    assert text.output.splitlines()[0].split() == ["question", "n", "pi_hat", "se", "95%", "CI"]
    estimated = runner.invoke(main, ["estimate", "--counts-file", str(table), "--db",
                                     sqlite_url, "--format", "json"])
    assert estimated.exit_code == 0, estimated.output
    by_id = {q["id"]: q for q in json.loads(estimated.output)["questions"]}
    assert by_id["exam_cheating"]["pi_hat"] == pytest.approx(
        json.loads(from_store.output)["questions"][0]["pi_hat"], abs=0)


def test_counts_data_prints_the_importers_error_with_file_and_line(sqlite_url, tmp_path,
                                                                    sample_survey_path):
    runner = CliRunner()
    migrated_sqlite(tmp_path / "surveykit.db")
    runner.invoke(main, ["survey", "add", str(sample_survey_path), "--db", sqlite_url])
    bad = tmp_path / "bad.csv"
    bad.write_text("respondent_id,question_id,answer\nAI-1,plagiarism,maybe\n", encoding="utf-8")
    result = runner.invoke(main, ["counts", "--survey", "academic_integrity", "--db", sqlite_url,
                                  "--data", str(bad)])
    assert result.exit_code == 1
    imported = runner.invoke(main, ["import", str(bad), "--survey", "academic_integrity",
                                    "--db", sqlite_url])
    assert imported.exit_code == 1
    problem = "  line 2, column answer, value 'maybe': not an answer: use yes/y/1/true, no/"
    # the same problem line as `import` prints for the same file, word for word
    [counted] = [line for line in result.output.splitlines() if line.startswith(problem)]
    assert counted in imported.output.splitlines()
    assert result.output.splitlines()[0] == (
        f"Error: 1 bad row in {bad}; nothing was counted (fix them and count again, or import "
        "the other rows with 'surveykit import --skip-invalid --rejects FILE'):")
    stray = runner.invoke(main, ["counts", "--survey", "academic_integrity", "--db", sqlite_url,
                                 str(bad)])
    assert stray.exit_code == 2
    assert "files to count follow --data" in stray.output


# -- issued questionnaires ------------------------------------------------------------------


def issue(engine, survey: Survey, count: int) -> list[str]:
    """Issue ids in alternating groups 1, 2 (as 'surveykit generate' records them)."""
    from surveykit.collection.respondent_ids import new_respondent_ids

    store.add_survey(engine, survey)
    ids = new_respondent_ids(count, rng=np.random.default_rng(5))
    groups = [1 + number % 2 for number in range(count)]
    # no instruction totals: counting never reads them (and the store keeps totals only of
    # runs of at least AUDIT_MINIMUM_PER_GROUP per group)
    store.record_generation(engine, survey.name, ids, {}, groups=groups)
    return ids


def with_ids(rows, ids: list[str]):
    """The rows with the issued id of their number (M-00017 -> ids[17])."""
    return [(ids[int(respondent[2:])], group, cells) for respondent, group, cells in rows]


def write_without_groups(path: Path, survey: Survey, rows, *, typed=lambda r: r) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["respondent_id", "question_id", "answer"])
        for respondent, _, cells in rows:
            for question in survey.questions:
                writer.writerow([typed(respondent), question.id, cells[question.id]])
    return path


@pytest.mark.parametrize("fanout", [True, False])
def test_questions_beyond_the_first_32_of_a_parquet_file_coded_by_lookup_are_checked_too(
        tmp_path, fanout):
    """Each word's lookup knows every id (0 for the questions of other words), so a
    question of the second word sets its bit there and none in the first."""
    from pyarrow import csv as arrow_csv

    survey = many_questions(40)
    text = big_long_file(tmp_path / "plain.csv", survey, 50)
    path = tmp_path / "wide_survey.parquet"
    table = arrow_csv.read_csv(text)
    pq.write_table(table, path)
    with open_sources([path], survey) as sources, duckdb_engine.connect() as con:
        assert duckdb_engine.dictionary_questions(sources[0], {q.id for q in survey.questions})
        clean = duckdb_engine.fast_tally(con, sources, survey, fanout=fanout)
    assert (clean.suspicious, clean.respondents) == (0, 50)
    again = pa.table({"respondent_id": ["P-000049", "P-000012"], "question_id": ["q31", "q39"],
                      "answer": ["no", "yes"]})
    pq.write_table(pa.concat_tables([table, again]), path)  # questions 31 and 39 again
    with open_sources([path], survey) as sources, duckdb_engine.connect() as con:
        assert duckdb_engine.fast_tally(con, sources, survey, fanout=fanout).suspicious == 2
    with pytest.raises(CsvImportError) as caught:
        count_files(survey, [path])
    assert {p.value for p in caught.value.problems} == {"P-000049", "P-000012"}


def test_files_of_a_survey_with_issued_ids_take_the_ids_groups_as_their_import(
        engine, mixed, tmp_path):
    from surveykit.workflows.counting import count_survey_files

    ids = issue(engine, mixed, 120)
    plain = write_without_groups(tmp_path / "plain.csv", mixed, with_ids(
        answers(mixed, range(0, 60), 71), ids))
    # ids as people type them (lower case, spaces for dashes): read as the issued ids
    typed = write_without_groups(tmp_path / "typed.csv", mixed, with_ids(
        answers(mixed, range(60, 120), 72), ids),
        typed=lambda r: r.lower().replace("-", " ") if r[-1] in "0123" else r)
    _, counted = count_survey_files(engine, mixed.name, [plain, typed])
    for path in (plain, typed):
        import_responses(engine, path, mixed.name)
    reference = store.count_responses(engine, mixed.name)
    assert counted == reference
    assert {g for q in reference for g in q.counts.groups} == {"1", "2"}


@pytest.mark.parametrize("fanout", [True, False])
def test_with_issued_ids_a_repeated_answer_and_an_unknown_id_each_make_a_respondent_suspicious(
        mixed, tmp_path, fanout):
    """With issued ids the one scan keeps a count per respondent (a row of an id not issued
    counts without a bit): both forms of the query vouch for clean files and doubt these."""
    ids = [f"M-{number:05d}" for number in range(30)]
    path = write_without_groups(tmp_path / "issued.csv", mixed, answers(mixed, range(30), 81,
                                                                        skip=0))

    def tally():
        with open_sources([path], mixed) as sources, duckdb_engine.connect() as con:
            duckdb_engine.load_issued(con, [[(i, 1 + n % 2) for n, i in enumerate(ids)]])
            return duckdb_engine.fast_tally(con, sources, mixed, issued=True, fanout=fanout)

    clean = tally()
    assert (clean.suspicious, clean.respondents) == (0, 30)
    assert sum(n for *_, n, _ in clean.cells) == 30 * len(mixed.questions)
    with path.open("a", encoding="utf-8", newline="") as handle:  # the csv module's line ends
        handle.write("M-00003,doping,no\r\nX-1,doping,yes\r\n")
    assert tally().suspicious == 2


def write_long_parquet(path: Path, rows, **options) -> Path:
    """(respondent id, question cell, answer cell, group cell) rows as a long Parquet file (a
    None cell is null); ``options`` go to pyarrow's writer."""
    ids, questions, cells, groups = (list(column) for column in zip(*rows, strict=True))
    pq.write_table(pa.table({"respondent_id": ids, "question_id": questions, "answer": cells,
                             "group": groups}), path, **options)
    return path


def parquet_rows(survey: Survey, respondents: range, seed: int, *, typed=lambda r, q: q,
                 skip: float = 0.1):
    """The long rows of answers(...); ``typed(respondent, question id)`` is the question
    cell as written."""
    return [(respondent, typed(respondent, question.id), cells[question.id] or None, group)
            for respondent, group, cells in answers(survey, respondents, seed, skip=skip)
            for question in survey.questions]


def odd(question: str) -> str:
    """A question cell the importer reads as ``question`` but typed otherwise, which sorts
    between the least and the greatest id of the mixed survey (as Parquet statistics see)."""
    return question + " " if question != "tax" else "taX"


def test_only_long_parquet_files_with_a_dictionary_of_question_cells_are_coded_by_lookup(
        mixed, mixed_files, tmp_path):
    rows = parquet_rows(mixed, range(20), 91)
    plain = write_long_parquet(tmp_path / "plain.parquet", rows, use_dictionary=False)
    dictionary = write_long_parquet(tmp_path / "dictionary.parquet", rows)
    # statistics that show a cell other than an id: the CASE codes this file from the start
    upper = write_long_parquet(tmp_path / "upper.parquet", parquet_rows(
        mixed, range(20), 91, typed=lambda r, q: q.upper() if r == "M-00003" else q))
    files = [plain, dictionary, upper, mixed_files["long"], mixed_files["wide"],
             mixed_files["parquet"]]
    ids = {question.id for question in mixed.questions}
    with open_sources(files, mixed) as sources:
        assert [duckdb_engine.dictionary_questions(s, ids) for s in sources] == [
            False, True, False, False, False, True]
    # either way the counts are the rows': the plain and dictionary files hold the same
    assert fast_counts(mixed, [plain]) == fast_counts(mixed, [dictionary]) == fast_counts(
        mixed, [upper]) == exact_counts(mixed, [dictionary])


@pytest.mark.parametrize(("issued", "fanout"), [(False, True), (False, False), (True, True),
                                                (True, False)])
def test_parquet_question_cells_not_typed_as_their_id_are_coded_and_checked_for_repeats(
        engine, mixed, tmp_path, issued, fanout):
    """Long Parquet files code question cells by a lookup of the exact ids, which leaves a cell
    such as 'doping ' or 'taX' without a bit: the one scan counts again with the importer's
    spellings (then it vouches for these files), and a repeat hidden by a spelling is found,
    even for a respondent none of whose cells is typed as an id (no answer of theirs sets a
    bit: their words are NULL, not 0)."""
    def typed(respondent: str, question: str) -> str:
        if respondent in ("M-00004", "M-00007"):  # every cell of theirs, odd
            return odd(question)
        return odd(question) if respondent == "M-00001" and question == "tax" else question

    rows = parquet_rows(mixed, range(30), 92, typed=typed, skip=0)
    odd_seven = parquet_rows(mixed, range(30), 92, skip=0, typed=lambda r, q: (
        odd(q) if r == "M-00007" else q))
    rows.append((None, None, None, None))  # a blank row: skipped, as import skips it
    path = write_long_parquet(tmp_path / "typed.parquet", rows)

    def tally():
        with open_sources([path], mixed) as sources, duckdb_engine.connect() as con:
            ids = {question.id for question in mixed.questions}
            assert duckdb_engine.dictionary_questions(sources[0], ids)
            if issued:
                duckdb_engine.load_issued(con, [[(f"M-{n:05d}", None) for n in range(30)]])
            return duckdb_engine.fast_tally(con, sources, mixed, issued=issued, fanout=fanout)

    clean = tally()
    assert clean.suspicious == 0
    assert clean.respondents == len({r for r, _, a, _ in rows if a})
    with open_sources([path], mixed) as sources:
        assert counts_from_tally(mixed, sources, clean) == imported(engine, mixed, [path])
    # M-00007, the only respondent with odd cells, answers doping again, typed otherwise
    write_long_parquet(path, [*odd_seven, ("M-00007", "dOping", "yes", "1")])
    assert tally().suspicious >= 1
    with pytest.raises(CsvImportError) as caught:
        count_files(mixed, [path])
    assert {p.value for p in caught.value.problems} == {"M-00007"}


def test_an_id_that_was_not_issued_is_refused_with_its_line(engine, mixed, tmp_path):
    from surveykit.workflows.counting import count_survey_files

    ids = issue(engine, mixed, 10)
    path = tmp_path / "stranger.csv"
    path.write_text(f"respondent_id,question_id,answer\n{ids[1]},doping,yes\nX-1,doping,no\n",
                    encoding="utf-8")
    with pytest.raises(CsvImportError) as caught:
        count_survey_files(engine, mixed.name, [path])
    assert [(p.line, p.column, p.value) for p in caught.value.problems] == [
        (3, "respondent_id", "X-1")]
    assert "was not issued for survey 'mixed'" in caught.value.problems[0].reason


def test_the_warehouse_sql_of_docs_scale_md_makes_a_counts_table_equal_to_the_store(
        engine, sample_survey, sample_survey_path):
    import re

    import duckdb

    docs = (Path(__file__).resolve().parent.parent / "docs" / "scale.md").read_text("utf-8")
    bigquery = re.search(r"BigQuery.*?```sql\n(.*?)```", docs, re.S).group(1)
    # the PostgreSQL/DuckDB dialect, as the page says: double quotes, min for any_value
    sql = (bigquery.replace("`project.dataset.responses`", "responses")
           .replace("`", '"').replace("any_value(", "min(")
           .replace("'academic_integrity'", f"'{sample_survey.name}'"))
    long = sample_survey_path.parent / "responses_long.csv"
    reference = imported(engine, sample_survey, [long])
    with duckdb.connect() as con:
        con.execute(f"CREATE TABLE responses AS SELECT respondent_id, question_id, answer, "
                    f"NULL::VARCHAR AS grp FROM read_csv('{long}', all_varchar = true)")
        table = io.StringIO()
        writer = csv.writer(table)
        writer.writerow(["survey", "question", "group", "response", "count"])
        writer.writerows(con.execute(sql).fetchall())
    table.seek(0)
    assert read_counts_table(table, sample_survey, "warehouse.csv") == reference


def test_a_directory_of_many_files_of_one_shape_is_read_by_one_scan_and_counts_as_imported(
        engine, mixed, tmp_path):
    folder = tmp_path / "daily"
    folder.mkdir()
    files = [write_long(folder / f"day{day:02d}.csv", mixed,
                        answers(mixed, range(day * 12, day * 12 + 12), 100 + day))
             for day in range(30)]
    reference = imported(engine, mixed, files)
    assert fast_counts(mixed, [folder]) == reference
    assert count_files(mixed, [folder]) == reference


# -- untidy files: counting and importing agree, in counts or in errors -----------------------

def untidy(cell: str, kind: str, rng: np.random.Generator) -> str:
    """A cell as people also type it: spaces (no-break ones too), other cases, blanks."""
    if kind == "respondent":
        return [cell, f" {cell}", f"{cell}\u00a0", cell][rng.integers(4)]
    if kind == "question":
        return [cell, cell.upper(), f" {cell} ", cell.title()][rng.integers(4)]
    return [cell, f"  {cell}", cell.upper(), " ", ""][rng.integers(5)]


def untidy_file(path: Path, survey: Survey, seed: int) -> Path:
    """A long file with spaces, cases, blank lines, empty rows and missing cells; for seeds
    1, 5, 9 a bad answer, for seeds 3, 6, 9, 12 a repeated answer."""
    rng = np.random.default_rng(seed)
    lines = ["respondent_id,question_id,answer,group"]
    for respondent, group, cells in answers(survey, range(seed * 50, seed * 50 + 25), seed):
        for question in survey.questions:
            if rng.random() < 0.1:
                continue  # a question left out of the file
            answer = cells[question.id].strip() or "dk"
            row = [untidy(respondent, "respondent", rng) if rng.random() < 0.3 else respondent,
                   untidy(question.id, "question", rng) if rng.random() < 0.3 else question.id,
                   untidy(answer, "answer", rng) if rng.random() < 0.3 else answer, group]
            lines.append(",".join(row))
        if rng.random() < 0.1:
            lines.append(["", ",,,", " , , , "][rng.integers(3)])  # blank rows
    if seed % 4 == 1:
        lines.insert(7, "X-1,cards,seven,1")
    if seed % 3 == 0:
        lines.append(lines[1])  # one answer twice
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("seed", range(1, 13))
def test_untidy_files_count_as_they_import_or_fail_with_the_same_problems(
        mixed, tmp_path, seed):
    path = untidy_file(tmp_path / f"untidy{seed}.csv", mixed, seed)
    engine = store.open_engine(migrated_sqlite(tmp_path / "store.db"))
    store.add_survey(engine, mixed)
    try:
        import_responses(engine, path, mixed.name)
    except CsvImportError as refused:
        with pytest.raises(CsvImportError) as caught:
            count_files(mixed, [path])
        assert caught.value.problems == refused.problems
        assert caught.value.problem_count == refused.problem_count
    else:
        reference = store.count_responses(engine, mixed.name)
        assert count_files(mixed, [path]) == reference
        assert exact_counts(mixed, [path]) == reference
    finally:
        engine.dispose()


# -- the reader's rules where DuckDB's CSV reader is laxer ------------------------------------


@pytest.mark.parametrize("text, found", [
    ('R-2, "yes",x', True),  # a quote after a delimiter and a space
    ('R-2,"no"  "",x', True),  # a quote after a closing quote and spaces
    (' "R-2",yes,x', True),  # a quote after a line end and a space
    ('R-2,"say ""no"" ",x', True),  # inside quotes too: the exact path decides, slower
    ('R-2,"no ",x', False),  # a space before a closing quote, after text
    ('R-2,"a, b",5" tall', False),
])
@pytest.mark.parametrize("where", ["first", "last"])
def test_the_quote_scan_finds_a_quote_after_spaces_anywhere_in_a_big_file(
        tmp_path, text, found, where):
    """DuckDB opens a quoted field where the importer reads text; the scan must see it in
    every block of a file (4 MiB at a time), and nowhere else."""
    filler = "R-1,q00,yes\n" * 400_000  # 4.8 MB: the last line is in the second block
    path = tmp_path / "f.csv"
    path.write_text("respondent_id,question_id,answer\n" + (
        text + "\n" + filler if where == "first" else filler + text + "\n"), encoding="utf-8")
    assert duckdb_engine.space_before_quote(path, ",") is found


def test_the_one_scan_vouches_for_the_field_exports_it_can(tmp_path):
    """Field exports are counted in one scan (a workbook or zip written as CSV first), except
    LimeSurvey's, whose "No answer" label the engines would count as an answer."""
    exports = Path(__file__).resolve().parent / "exports"
    sample = (Path(__file__).resolve().parent.parent / "sample_data" /
              "academic_integrity.toml").read_text("utf-8")
    vouched = {}
    for name, profile in [("kobotoolbox_labels.csv", None), ("kobotoolbox_values.xlsx", None),
                          ("kobotoolbox_legacy.xls", None), ("odk_central.zip", None),
                          ("kobotoolbox_french.csv", "french.toml"),
                          ("google_forms.csv", "google_forms.toml"),
                          ("limesurvey.csv", "limesurvey.toml")]:
        survey = parse_survey(sample + ("\n" + (exports / profile).read_text("utf-8")
                                        if profile else ""))
        vouched[name] = fast_counts(survey, [exports / name]) is not None
    assert vouched == {name: name != "limesurvey.csv" for name in vouched}
