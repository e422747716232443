"""Every import failure a user can cause is one clear line, never a traceback or a hang
(issue 11): spreadsheets with their row numbers, binary files, huge fields and unclosed
quotes, a 1 MB single line, all rows rejected, --replace counts, rejects files that are safe
to open in a spreadsheet and import as they are, escape sequences from cells."""

from __future__ import annotations

import csv
import threading
import zipfile
from pathlib import Path

import migrated
import openpyxl
import pytest
from click.testing import CliRunner
from sqlalchemy import func, select

from surveykit.cli import main
from surveykit.errors import CsvImportError
from surveykit.resources import locate_resource
from surveykit.store import database as store
from surveykit.store.importer import import_responses
from tests.store_support import add_sample_survey

SURVEY = "academic_integrity"
SAMPLE = locate_resource("sample_data")
LONG_HEADER = "respondent_id,question_id,answer\n"


def write(path: Path, content: str | bytes) -> Path:
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def stored_rows(engine) -> tuple[int, int]:
    with engine.connect() as conn:
        return (conn.execute(select(func.count()).select_from(store.responses)).scalar_one(),
                conn.execute(select(func.count()).select_from(store.imports)).scalar_one())


def cli(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def cli_db(tmp_path) -> str:
    return migrated.copy_filled(f"sqlite:///{tmp_path / 'cli.db'}", add_sample_survey)


# -- spreadsheets -----------------------------------------------------------------------------


def test_an_xlsx_imports_like_a_csv_and_errors_give_the_sheets_row_numbers(survey_engine,
                                                                          tmp_path):
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Answers"
    sheet.append(["respondent_id", "exam_cheating", "plagiarism"])
    sheet.append(["r1", "Yes", True])        # a TRUE cell reads as true: yes
    sheet.append([])                         # an empty row 3 is skipped, not renumbered
    sheet.append(["r4", "maybe", 0])         # 0 typed as a number reads as "0": no
    book.save(tmp_path / "a.xlsx")
    with pytest.raises(CsvImportError) as caught:
        import_responses(survey_engine, tmp_path / "a.xlsx", SURVEY)
    problem = caught.value.problems[0]
    assert (problem.line, problem.unit, problem.column, problem.value) == (
        4, "row", "exam_cheating", "maybe")
    assert str(problem).startswith("row 4, column exam_cheating, value 'maybe': not an answer")
    sheet["B4"] = "no"
    book.save(tmp_path / "b.xlsx")
    result = import_responses(survey_engine, tmp_path / "b.xlsx", SURVEY)
    assert (result.rows_read, result.imported) == (2, 4)
    counts = {c.question_id: (c.yes, c.no) for c in store.count_responses(survey_engine, SURVEY)}
    assert counts["exam_cheating"] == (1, 1) and counts["plagiarism"] == (1, 1)


def _ods(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
        archive.writestr("content.xml", "<office:document-content/>")
    return path


@pytest.mark.parametrize("name, content, what", [
    ("report.pdf", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n" + bytes(range(256)) * 90,
     "a PDF document"),
    ("photo.csv", b"\x89PNG\r\n\x1a\n" + bytes(24_000), "a PNG image"),
    ("data.bin", b"respondent_id\x00\x01\x02" + bytes(range(256)) * 90,
     "a binary file (it contains NUL bytes)"),
    ("utf16.csv", "respondent_id,exam_cheating\nr1,yes\n".encode("utf-16"),
     "UTF-16 text (save it as UTF-8"),
    ("broken.xlsx", b"PK\x03\x04" + bytes(200), "a damaged zip archive"),
    ("sheet.ods", None, "an OpenDocument file (save the sheet as .xlsx or .csv)"),
    ("answers.db", b"SQLite format 3\x00" + bytes(5000), "an SQLite database"),
])
def test_binary_files_are_refused_in_one_line(cli_db, tmp_path, name, content, what):
    path = _ods(tmp_path / name) if content is None else write(tmp_path / name, content)
    result = cli("import", str(path), "--survey", SURVEY, "--db", cli_db)
    assert result.exit_code == 1
    assert len(result.stderr.splitlines()) == 1, result.stderr[:500]
    assert result.stderr.startswith(f"Error: {path} is {what}")
    assert len(result.stderr) < 400


def test_a_damaged_xlsx_is_one_line(cli_db, tmp_path):
    path = tmp_path / "damaged.xlsx"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("xl/workbook.xml", "<not a workbook")
    result = cli("import", str(path), "--survey", SURVEY, "--db", cli_db)
    assert result.exit_code == 1
    assert len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith(f"Error: {path} looks like an Excel workbook (.xlsx) but "
                                    "cannot be read")


# -- huge fields, unclosed quotes, one enormous line -----------------------------------------


def test_a_field_over_128_kib_in_an_ignored_column_imports(survey_engine, tmp_path):
    notes = "x" * 300_000
    path = write(tmp_path / "kobo.csv", f'respondent_id,exam_cheating,_notes\nr1,yes,"{notes}"\n')
    assert import_responses(survey_engine, path, SURVEY).imported == 1


def test_an_unclosed_quote_in_a_large_file_is_one_line_naming_where_it_opens(survey_engine,
                                                                            tmp_path):
    rows = "".join(f"r{i},exam_cheating,yes\n" for i in range(1_000_000))  # about 22 MB
    path = write(tmp_path / "big.csv", LONG_HEADER + 'r0,"exam_cheating,yes\n' + rows)
    with pytest.raises(CsvImportError) as caught:
        import_responses(survey_engine, path, SURVEY)
    assert str(caught.value).splitlines()[0] == (
        f"{path}, line 2: a field longer than 16 MiB starts on this line: a quote (\") "
        "opened here is probably never closed; close it or remove it; nothing was imported:")
    assert stored_rows(survey_engine) == (0, 0)


def test_an_unclosed_quote_in_a_small_file_names_its_line(survey_engine, tmp_path):
    path = write(tmp_path / "q.csv", LONG_HEADER + 'r1,exam_cheating,yes\nr2,"plagiarism,no\n'
                                                   "r3,plagiarism,no\n")
    with pytest.raises(CsvImportError) as caught:
        import_responses(survey_engine, path, SURVEY)
    assert caught.value.problems[0].line == 3
    assert "an unclosed quote" in caught.value.problems[0].reason


@pytest.mark.parametrize("content, message", [
    ("a," * 500_000, "the header has 500,001 columns, more than the 16,384"),
    ("respondent_id," + ",".join(f"c{i}" for i in range(150_000)),
     "the header has 150,001 columns"),
    ("respondent_id," + "x," * 16_000, "column 'x' (and 15999 more) maps to no question"),
    ("respondent_id," + ",".join(f"c{i}" for i in range(16_000)),
     "column 'c0' (and 15999 more) maps to no question"),
    ("a" * 1_000_000, "no respondent_id column (found: " + "a" * 40),
], ids=["500k-columns", "150k-columns", "16k-same-column", "16k-columns", "one-1-MB-column"])
def test_a_1_mb_single_line_csv_fails_fast_in_a_short_message(survey_engine, tmp_path, content,
                                                              message):
    path = write(tmp_path / "line.csv", content)
    # A quadratic header check used to take hours here. The import runs in a worker thread
    # so that a hang fails the test (after minutes) instead of stalling the suite; this is a
    # hang guard, not a speed assertion (it takes well under a second).
    outcome: dict = {}

    def run() -> None:
        try:
            import_responses(survey_engine, path, SURVEY)
        except CsvImportError as exc:
            outcome["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=600)
    assert not worker.is_alive(), "the import of one long line hangs"
    error = outcome["error"]
    assert message in str(error)
    assert len(str(error)) < 20_000


# -- --skip-invalid, --replace, summaries -------------------------------------------------------


def test_skip_invalid_with_every_row_rejected_exits_1_and_leaves_the_file_unrecorded(cli_db,
                                                                                    tmp_path):
    path = write(tmp_path / "bad.csv", LONG_HEADER + "r1,exam_cheating,maybe\n"
                                                     "r2,exam_cheating,perhaps\n")
    rejects = tmp_path / "rejects.csv"
    result = cli("import", str(path), "--survey", SURVEY, "--db", cli_db, "--skip-invalid",
                 "--rejects", str(rejects))
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: 2 bad rows in {path} (2 not an answer; labels no "
                                    "rule maps: 'maybe' 1, 'perhaps' 1")
    assert "every row was rejected, so the file is not recorded as imported" in result.stderr
    assert not rejects.exists()
    engine = store.open_engine(cli_db)
    assert stored_rows(engine) == (0, 0)
    # the fix is an alias in the survey: the same file now imports (not "already imported")
    toml = tmp_path / "s.toml"
    toml.write_text((SAMPLE / "academic_integrity.toml").read_text("utf-8")
                    + '\n[import.labels]\n"maybe" = "dont_know"\n"perhaps" = "dont_know"\n',
                    encoding="utf-8")
    assert cli("survey", "update", str(toml), "--db", cli_db).exit_code == 0
    again = cli("import", str(path), "--survey", SURVEY, "--db", cli_db)
    assert again.exit_code == 0 and "2 answers added" in again.stdout
    engine.dispose()


def test_replace_reports_how_many_answers_actually_changed(survey_engine, tmp_path):
    first = write(tmp_path / "a.csv", LONG_HEADER + "".join(
        f"r{i},exam_cheating,yes\n" for i in range(5)))
    import_responses(survey_engine, first, SURVEY)
    again = write(tmp_path / "b.csv", LONG_HEADER + "".join(
        f"r{i},exam_cheating,{'no' if i == 2 else 'yes'}\n" for i in range(5)) +
        "r9,exam_cheating,yes\n")
    result = import_responses(survey_engine, again, SURVEY, replace=True)
    assert (result.imported, result.unchanged, result.replaced) == (1, 4, 1)
    # r2: yes -> no, r9: a new yes; the net change is one more "no"
    assert result.answer_changes == {"exam_cheating": {"1": {"no": 1}}}
    counts = store.count_responses(survey_engine, SURVEY)[0]
    assert (counts.yes, counts.no) == (5, 1)


def test_cli_replace_says_replaced_and_unchanged(cli_db, tmp_path):
    first = write(tmp_path / "a.csv", LONG_HEADER + "r1,exam_cheating,yes\nr2,plagiarism,no\n")
    cli("import", str(first), "--survey", SURVEY, "--db", cli_db)
    second = write(tmp_path / "b.csv", LONG_HEADER + "r1,exam_cheating,no\nr2,plagiarism,no\n")
    result = cli("import", str(second), "--survey", SURVEY, "--db", cli_db, "--replace")
    assert "0 answers added, 1 unchanged, 1 replaced, 0 rows refused" in result.stdout


def test_skip_invalid_ends_with_a_one_line_summary_by_reason(cli_db, tmp_path):
    store_engine = store.open_engine(cli_db)
    store.record_generation(store_engine, SURVEY, ["AI-1", "AI-2", "AI-3"], {})
    store_engine.dispose()
    path = write(tmp_path / "m.csv", LONG_HEADER + "AI-1,exam_cheating,yes\n"
                 "AI-8,exam_cheating,no\nAI-9,plagiarism,no\nAI-2,plagiarism,maybe\n")
    rejects = tmp_path / "rejects.csv"
    result = cli("import", str(path), "--survey", SURVEY, "--db", cli_db, "--skip-invalid",
                 "--rejects", str(rejects))
    assert result.exit_code == 0
    assert ("Rejected rows by reason: 2 respondent id not issued, 1 not an answer."
            in result.stdout.splitlines())


def test_a_refused_file_leads_with_the_reasons_not_fifty_identical_lines(cli_db, tmp_path):
    engine = store.open_engine(cli_db)
    store.record_generation(engine, SURVEY, ["AI-9999"], {})
    engine.dispose()
    result = cli("import", str(SAMPLE / "responses_long.csv"), "--survey", SURVEY, "--db",
                 cli_db)
    assert result.exit_code == 1
    assert result.stderr.startswith(
        f"Error: 1172 bad rows in {SAMPLE / 'responses_long.csv'} (1172 respondent id not "
        "issued); nothing was imported")
    # ... and ends with it: on a terminal the first line has scrolled away by then
    lines = result.stderr.strip().splitlines()
    assert lines[-2] == "  ... and 1122 more"
    assert lines[-1].startswith(
        f"In all: 1172 bad rows in {SAMPLE / 'responses_long.csv'} (1172 respondent id not "
        "issued); nothing was imported")


# -- the rejects file: safe in a spreadsheet, importable as it is --------------------------------


def test_rejects_file_neutralizes_formulas_and_imports_as_it_is(survey_engine, tmp_path):
    path = write(tmp_path / "evil.csv", LONG_HEADER +
                 "r1,exam_cheating,yes\n"
                 '@evil,plagiarism,"=HYPERLINK(""http://x"",""y"")"\n'
                 "-r2,fabricated_data,+1\n")
    rejects = tmp_path / "rejects.csv"
    result = import_responses(survey_engine, path, SURVEY, skip_invalid=True,
                              rejects_path=rejects)
    assert (result.imported, result.rejected) == (1, 2)
    with rejects.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert [row[:3] for row in rows[1:]] == [
        ["'@evil", "plagiarism", "'=HYPERLINK(\"http://x\",\"y\")"],
        ["'-r2", "fabricated_data", "'+1"]]
    assert not any(cell.startswith(("=", "+", "-", "@")) for row in rows for cell in row)
    # fixed in a spreadsheet (the answers), then imported as it is: ids come back unquoted
    rows[1][2], rows[2][2] = "yes", "no"
    fixed = tmp_path / "fixed.csv"
    with fixed.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    assert import_responses(survey_engine, fixed, SURVEY).imported == 2
    with survey_engine.connect() as conn:
        ids = set(conn.execute(select(store.responses.c.respondent_id)).scalars())
    assert ids == {"r1", "@evil", "-r2"}


# -- escape sequences from cells never reach the terminal raw ---------------------------------


def test_escape_sequences_in_cells_and_headers_are_escaped_in_errors(cli_db, tmp_path):
    path = write(tmp_path / "esc.csv", "respondent_id,exam_cheating,\x1b]0;owned\x07\n"
                                       "r1,\x1b[2Jyes,\x1b[31mred\n")
    result = cli("import", str(path), "--survey", SURVEY, "--db", cli_db)
    assert result.exit_code == 1
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert "\\x1b]0;owned\\x07" in result.stderr
    ignored = write(tmp_path / "esc2.csv", "respondent_id,exam_cheating,_x\n"
                                           "r1,\x1b[2Jyes,\x1b[31mred\n")
    result = cli("import", str(ignored), "--survey", SURVEY, "--db", cli_db)
    assert "\x1b" not in result.stderr
    assert "value '\\x1b[2Jyes'" in result.stderr


def test_aliases_in_an_error_are_quoted_one_by_one(cli_db, tmp_path):
    # issue 11: "an alias of this question (no, never, prefer not to say, yes, i have)" read
    # as separate words; each alias is quoted
    path = write(tmp_path / "a.csv", LONG_HEADER + "r1,exam_cheating,maybe\n"
                                                   "r2,fabricated_data,perhaps\n")
    result = CliRunner().invoke(main, ["import", str(path), "--survey", SURVEY, "--db", cli_db])
    assert result.exit_code == 1
    assert ("an alias of this question ('no, never', 'yes, i have')"
            in result.stderr)
    assert ("an alias of this question ('made up', 'no, never', 'yes, i have')"
            in result.stderr)
