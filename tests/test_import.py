"""Importing response CSVs: every bad input, atomicity, idempotence, --replace, --skip-invalid,
counts against pandas, a killed import, two imports at once. Real databases, real CLI."""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import migrated
import pandas as pd
import pytest
from click.testing import CliRunner
from sqlalchemy import func, select

from surveykit.cli import main
from surveykit.collection.randomizer import seeded_source
from surveykit.collection.respondent_ids import new_respondent_ids
from surveykit.errors import CsvImportError, CsvProblem, ParameterError
from surveykit.reading.responses import CHUNK_ROWS
from surveykit.resources import locate_resource
from surveykit.store import database as store
from surveykit.store.importer import import_responses
from tests.store_support import add_sample_survey, checked_counts, run_cli

SURVEY = "academic_integrity"
QUESTIONS = ("exam_cheating", "plagiarism", "contract_cheating", "fabricated_data")
SAMPLE = locate_resource("sample_data")
LONG_HEADER = "respondent_id,question_id,answer\n"


def write(path: Path, content: str | bytes) -> Path:
    if isinstance(content, str):
        content = content.encode("utf-8")
    path.write_bytes(content)
    return path


def counts_of(engine) -> dict[str, tuple[int, int, int, int]]:
    """Counts per question, read after checking the kept counts against the answers."""
    return {c.question_id: (c.yes, c.no, c.dont_know, c.missing)
            for c in checked_counts(engine, SURVEY)}


def stored_rows(engine) -> tuple[int, int]:
    """(answers, imports) in the database."""
    with engine.connect() as conn:
        answers = conn.execute(select(func.count()).select_from(store.responses)).scalar_one()
        imports = conn.execute(select(func.count()).select_from(store.imports)).scalar_one()
    return answers, imports


def refused(engine, path: Path, **options) -> CsvImportError:
    before = stored_rows(engine)
    with pytest.raises(CsvImportError) as caught:
        import_responses(engine, path, SURVEY, **options)
    assert stored_rows(engine) == before, "a refused file must leave the database unchanged"
    return caught.value


def long_csv(rows: int, *, start: int = 0, answer: str = "yes") -> str:
    lines = [LONG_HEADER]
    for i in range(start, start + rows):
        lines.append(f"R{i // 4:07d},{QUESTIONS[i % 4]},{answer}\n")
    return "".join(lines)


# -- counts agree with pandas ------------------------------------------------------------


def test_long_import_counts_equal_pandas_value_counts(survey_engine):
    path = SAMPLE / "responses_long.csv"
    result = import_responses(survey_engine, path, SURVEY)
    assert (result.file_format, result.rows_read, result.imported) == ("long", 1172, 1172)
    frame = pd.read_csv(path)
    respondents = frame["respondent_id"].nunique()
    for question, (yes, no, dont_know, missing) in counts_of(survey_engine).items():
        expected = frame.loc[frame["question_id"] == question, "answer"].value_counts()
        assert (yes, no, dont_know) == (expected.get("yes", 0), expected.get("no", 0),
                                        expected.get("dont_know", 0))
        assert missing == respondents - expected.sum()


def test_wide_semicolon_import_normalizes_answers_like_pandas(survey_engine):
    path = SAMPLE / "responses_wide.csv"
    result = import_responses(survey_engine, path, SURVEY)
    assert (result.file_format, result.rows_read) == ("wide", 200)
    frame = pd.read_csv(path, sep=";", dtype=str, keep_default_na=False)
    spelling = {"yes": "yes", "y": "yes", "no": "no", "n": "no", "dont_know": "dont_know",
                "don't know": "dont_know", "dk": "dont_know"}
    for question, (yes, no, dont_know, missing) in counts_of(survey_engine).items():
        expected = frame[question].str.lower().map(spelling).value_counts()
        assert (yes, no, dont_know) == (expected["yes"], expected["no"], expected["dont_know"])
        assert missing == (frame[question] == "").sum()
    assert result.missing == (frame[list(QUESTIONS)] == "").sum().sum()


def test_aliases_spelling_case_and_spaces_are_normalized(survey_engine, tmp_path):
    path = write(tmp_path / "a.csv", LONG_HEADER +
                 "r1,exam_cheating,  YES \n"
                 "r1,plagiarism,Don’t Know\n"
                 "r1,contract_cheating,i DON'T know\n"
                 "r1,fabricated_data,Made Up\n"
                 "r2,exam_cheating,FALSE\n"
                 "r2,plagiarism,0\n"
                 "r2,contract_cheating,\"No, never\"\n"
                 "r2,fabricated_data,T\n".replace(",T\n", ",true\n"))
    import_responses(survey_engine, path, SURVEY)
    assert counts_of(survey_engine) == {
        "exam_cheating": (1, 1, 0, 0), "plagiarism": (0, 1, 1, 0),
        "contract_cheating": (0, 1, 1, 0), "fabricated_data": (2, 0, 0, 0)}


def test_an_alias_of_one_question_is_not_an_answer_to_another(survey_engine, tmp_path):
    path = write(tmp_path / "a.csv", LONG_HEADER + "r1,exam_cheating,made up\n")
    error = refused(survey_engine, path)
    assert error.problems[0].column == "answer"
    assert "not an answer" in error.problems[0].reason


def test_empty_cells_are_missing_never_dont_know(survey_engine, tmp_path):
    path = write(tmp_path / "a.csv", LONG_HEADER + "r1,exam_cheating,yes\nr1,plagiarism,\n"
                 "r1,contract_cheating,   \n")
    result = import_responses(survey_engine, path, SURVEY)
    assert (result.rows_read, result.imported, result.missing) == (3, 1, 2)
    assert counts_of(survey_engine)["plagiarism"] == (0, 0, 0, 1)


def test_question_ids_and_header_names_ignore_case(survey_engine, tmp_path):
    path = write(tmp_path / "a.csv", "Respondent_ID,Question_Id,ANSWER\nr1,Exam_Cheating,yes\n")
    assert import_responses(survey_engine, path, SURVEY).imported == 1


def test_blank_lines_are_not_rows(survey_engine, tmp_path):
    path = write(tmp_path / "a.csv", LONG_HEADER + "\nr1,exam_cheating,yes\n\n,,\n")
    assert import_responses(survey_engine, path, SURVEY).rows_read == 1


# -- encodings and separators ------------------------------------------------------------


def test_utf8_with_byte_order_mark_and_crlf(survey_engine, tmp_path):
    path = write(tmp_path / "bom.csv",
                 b"\xef\xbb\xbfrespondent_id,question_id,answer\r\nr\xc3\xa9,exam_cheating,yes\r\n")
    result = import_responses(survey_engine, path, SURVEY)
    assert result.imported == 1
    with survey_engine.connect() as conn:
        assert conn.execute(select(store.responses.c.respondent_id)).scalar_one() == "ré"


def test_semicolon_separated_long_file(survey_engine, tmp_path):
    path = write(tmp_path / "semi.csv",
                 "respondent_id;question_id;answer\nr1;exam_cheating;yes\nr1;plagiarism;no\n")
    assert import_responses(survey_engine, path, SURVEY).imported == 2


def test_non_utf8_bytes_are_refused_with_line_column_and_value(survey_engine, tmp_path):
    path = write(tmp_path / "latin.csv", LONG_HEADER.encode() + b"r1,exam_cheating,yes\n"
                 b"r2,exam_cheating,s\xed\n" b"r3,plagiarism,no\n" b"Jos\xe9,plagiarism,no\n")
    error = refused(survey_engine, path)
    assert str(error).splitlines()[0].startswith(f"{path} is not UTF-8 (2 lines with other bytes)")
    assert error.problems == [
        CsvProblem(3, "answer", "sí", "byte 0xed is not UTF-8 (the file looks like "
                                      "Windows-1252 or Latin-1)"),
        CsvProblem(5, "respondent_id", "José", "byte 0xe9 is not UTF-8 (the file looks like "
                                               "Windows-1252 or Latin-1)"),
    ]


# -- bad input: each refused whole, with line, column, value and reason -------------------


@pytest.mark.parametrize("content, expected", [
    ("id,question,answer\nr1,exam_cheating,yes\n",
     CsvProblem(1, None, None, "no respondent_id column (found: id, question, answer); name "
                               "the column respondent_id, or set [import] respondent_id = "
                               "\"COLUMN\"")),
    ("respondent_id,question_id,answer,comment\nr1,exam_cheating,yes,x\n",
     CsvProblem(1, "comment", None, "unexpected column in the long layout (respondent_id, "
                                    "question_id, answer, group for multi-group designs, and "
                                    "declared covariates); remove it, rename it to start with "
                                    "'_', declare it in [covariates], or set [import] "
                                    "ignore = [\"comment\"]")),
    ("respondent_id,question_id\nr1,exam_cheating\n",
     CsvProblem(1, None, None, "the long layout needs the column answer")),
    ("respondent_id,exam_cheating,cheating\nr1,yes,no\n",
     CsvProblem(1, "cheating", None, "unknown question id: survey 'academic_integrity' has "
                                     "exam_cheating, plagiarism, contract_cheating, "
                                     "fabricated_data; map the column with [import.columns] "
                                     "\"cheating\" = \"QUESTION_ID\", or set [import] ignore "
                                     "= [\"cheating\"]")),
    ("respondent_id,plagiarism,Plagiarism\nr1,yes,no\n",
     CsvProblem(1, "plagiarism", None, "this column appears more than once")),
    ("respondent_id\nr1\n", CsvProblem(1, None, None, "no question columns")),
])
def test_wrong_headers_are_refused(survey_engine, tmp_path, content, expected):
    error = refused(survey_engine, write(tmp_path / "h.csv", content))
    assert expected in error.problems
    assert "nothing was imported" in str(error).splitlines()[0]


def test_forced_format_must_match_the_header(survey_engine, tmp_path):
    path = write(tmp_path / "w.csv", "respondent_id,exam_cheating\nr1,yes\n")
    error = refused(survey_engine, path, fmt="long")
    assert "--layout long was given but the header (respondent_id, exam_cheating) is the wide" \
        in str(error)
    assert import_responses(survey_engine, path, SURVEY, fmt="wide").imported == 1


def test_every_bad_row_is_listed_with_line_column_value_reason(survey_engine, tmp_path):
    path = write(tmp_path / "bad.csv", LONG_HEADER +
                 "r1,exam_cheating,yes\n"        # 2 fine
                 "r2,exam_cheating,maybe\n"      # 3 bad answer
                 "r3,honesty,yes\n"              # 4 unknown question
                 ",plagiarism,no\n"              # 5 empty respondent
                 "r4,plagiarism\n"               # 6 too few fields
                 "r5,,yes\n")                    # 7 empty question id
    error = refused(survey_engine, path)
    assert [(p.line, p.column, p.value) for p in error.problems] == [
        (3, "answer", "maybe"), (4, "question_id", "honesty"), (5, "respondent_id", ""),
        (6, None, None), (7, "question_id", "")]
    assert error.problems[0].reason.startswith("not an answer: use yes/y/1/true, no/n/0/false")
    assert error.problems[1].reason.startswith("unknown question id: survey 'academic_integrity'")
    assert error.problems[3].reason.startswith("the row has 2 fields but the header has 3")
    assert error.problems[4].reason == "the question id is empty"
    assert str(error).splitlines()[0].startswith(
        f"5 bad rows in {path} (1 empty question id, 1 empty respondent id, 1 not an answer, "
        "1 unknown question, 1 wrong number of fields; labels no rule maps: 'maybe' 1 (map "
        "each with [import.labels] \"LABEL\" = an answer or \"missing\")); nothing was "
        "imported")


def test_wide_row_lists_each_bad_cell(survey_engine, tmp_path):
    path = write(tmp_path / "w.csv", "respondent_id,exam_cheating,plagiarism\n"
                 "r1,yes,no\nr2,si,nein\n")
    error = refused(survey_engine, path)
    assert [(p.line, p.column, p.value) for p in error.problems] == [
        (3, "exam_cheating", "si"), (3, "plagiarism", "nein")]
    assert str(error).splitlines()[0].startswith("1 bad row in")


def test_line_numbers_count_physical_lines_of_quoted_multiline_fields(survey_engine, tmp_path):
    path = write(tmp_path / "q.csv", LONG_HEADER + '"r\n1",exam_cheating,yes\n'
                 "r2,exam_cheating,maybe\n")
    error = refused(survey_engine, path)
    assert error.problems[0].line == 4


def test_duplicate_rows_inside_a_file_are_refused_with_both_lines(survey_engine, tmp_path):
    path = write(tmp_path / "dup.csv", LONG_HEADER + "r1,exam_cheating,yes\n"
                 "r2,exam_cheating,no\nr1,exam_cheating,no\n")
    error = refused(survey_engine, path)
    reason = ("this respondent answers question 'exam_cheating' 2 times in this file "
              "(lines 2, 4); keep one row")
    assert error.problems == [CsvProblem(2, "respondent_id", "r1", reason),
                              CsvProblem(4, "respondent_id", "r1", reason)]


def test_a_changed_answer_across_files_is_a_conflict_and_the_same_answer_is_not(
        survey_engine, tmp_path):
    first = write(tmp_path / "wave1.csv", LONG_HEADER + "r1,exam_cheating,yes\nr2,plagiarism,no\n")
    import_responses(survey_engine, first, SURVEY)
    second = write(tmp_path / "wave2.csv", LONG_HEADER + "r3,exam_cheating,yes\n"
                   "r1,exam_cheating,no\nr2,plagiarism,no\n")
    error = refused(survey_engine, second)
    assert error.problems == [
        CsvProblem(3, "respondent_id", "r1", "this respondent already answered question "
                   "'exam_cheating' with 'yes' (this file says 'no') in import #1 (wave1.csv)"),
    ]
    assert str(error).splitlines()[0].startswith(
        f"1 bad row in {second} (1 changes an earlier answer); nothing was imported")
    assert "use --replace" in str(error).splitlines()[0]


@pytest.mark.parametrize("content, message", [
    (b"", "is empty: a response file needs a header line"),
    (b"  \r\n\n", "is empty: a response file needs a header line"),
    (b"\xef\xbb\xbf", "is empty: a response file needs a header line"),
    (LONG_HEADER.encode(), "has a header but no data rows"),
])
def test_empty_files_are_refused(survey_engine, tmp_path, content, message):
    error = refused(survey_engine, write(tmp_path / "empty.csv", content))
    assert message in str(error)


def test_a_missing_file_is_an_error_not_a_traceback(survey_engine, tmp_path):
    error = refused(survey_engine, tmp_path / "nope.csv")
    assert str(error).startswith(f"cannot read {tmp_path / 'nope.csv'}")


# -- atomic, idempotent ------------------------------------------------------------------


def test_import_with_bad_last_row_leaves_database_unchanged(survey_engine, tmp_path):
    rows = CHUNK_ROWS + 1_000  # two chunks: the first was already sent to the database
    path = write(tmp_path / "big.csv", long_csv(rows) + "Z,exam_cheating,perhaps\n")
    error = refused(survey_engine, path)
    assert [(p.line, p.value) for p in error.problems] == [(rows + 2, "perhaps")]
    assert stored_rows(survey_engine) == (0, 0)
    assert counts_of(survey_engine)["exam_cheating"] == (0, 0, 0, 0)


def test_importing_the_same_file_again_changes_nothing_and_says_so(survey_engine, tmp_path):
    path = write(tmp_path / "a.csv", long_csv(40))
    first = import_responses(survey_engine, path, SURVEY)
    before = counts_of(survey_engine)
    copy = write(tmp_path / "renamed.csv", path.read_bytes())
    for again in (path, copy):
        result = import_responses(survey_engine, again, SURVEY)
        assert result.already_imported is True
        assert (result.import_id, result.imported, result.sha256) == (
            first.import_id, 0, first.sha256)
    assert counts_of(survey_engine) == before
    assert stored_rows(survey_engine) == (40, 1)


def test_replace_overwrites_answers_of_earlier_imports(survey_engine, tmp_path):
    import_responses(survey_engine, write(tmp_path / "a.csv", long_csv(8)), SURVEY)
    changed = write(tmp_path / "b.csv", LONG_HEADER + "R0000000,exam_cheating,no\n"
                    "R0000001,plagiarism,yes\nR0000009,plagiarism,dk\n")
    refused(survey_engine, changed)
    result = import_responses(survey_engine, changed, SURVEY, replace=True)
    # R0000001's plagiarism was "yes" already: unchanged, not replaced
    assert (result.imported, result.unchanged, result.replaced) == (1, 1, 1)
    # R0000009 is new and answered only plagiarism: exam_cheating is missing for them.
    assert counts_of(survey_engine)["exam_cheating"] == (1, 1, 0, 1)
    assert counts_of(survey_engine)["plagiarism"][:3] == (2, 0, 1)
    with survey_engine.connect() as conn:
        latest = conn.execute(select(store.responses.c.import_id).where(
            store.responses.c.respondent_id == "R0000000",
            store.responses.c.answer == "no")).scalar_one()
    assert latest == result.import_id


def test_replace_still_refuses_duplicates_inside_the_file(survey_engine, tmp_path):
    import_responses(survey_engine, write(tmp_path / "a.csv", long_csv(4)), SURVEY)
    path = write(tmp_path / "b.csv", LONG_HEADER + "R0000000,exam_cheating,no\n"
                 "R0000000,exam_cheating,yes\n")
    error = refused(survey_engine, path, replace=True)
    assert [p.line for p in error.problems] == [2, 3]


def test_skip_invalid_imports_good_rows_and_writes_rejects(survey_engine, tmp_path):
    import_responses(survey_engine, write(tmp_path / "a.csv", LONG_HEADER + "r0,plagiarism,no\n"),
                     SURVEY)
    path = write(tmp_path / "mixed.csv", LONG_HEADER +
                 "r1,exam_cheating,yes\n"      # 2 good
                 "r2,exam_cheating,maybe\n"    # 3 bad answer
                 "r0,plagiarism,yes\n"         # 4 conflict with a.csv
                 "r3,exam_cheating,no\n"       # 5 duplicate
                 "r3,exam_cheating,no\n"       # 6 duplicate
                 "r4,fabricated_data,dk\n")    # 7 good
    rejects = tmp_path / "rejects.csv"
    result = import_responses(survey_engine, path, SURVEY, skip_invalid=True,
                              rejects_path=rejects)
    assert (result.rows_read, result.imported, result.rejected) == (6, 2, 4)
    assert result.rejects_path == str(rejects)
    with rejects.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["respondent_id", "question_id", "answer", "_line", "_reason"]
    assert [row[:4] for row in rows[1:]] == [
        ["r2", "exam_cheating", "maybe", "3"], ["r0", "plagiarism", "yes", "4"],
        ["r3", "exam_cheating", "no", "5"], ["r3", "exam_cheating", "no", "6"]]
    assert rows[1][4].startswith("answer: not an answer")
    assert rows[2][4].startswith("this respondent already answered question 'plagiarism'")
    assert not rejects.with_name("rejects.csv.part").exists()
    # Fix the rejects (their _line and _reason columns are ignored) and import them.
    rows[1][2] = "yes"
    fixed = tmp_path / "fixed.csv"
    with fixed.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([rows[0], rows[1], rows[4]])
    assert import_responses(survey_engine, fixed, SURVEY).imported == 2


def test_skip_invalid_needs_a_rejects_file_and_never_overwrites_the_input(survey_engine,
                                                                          tmp_path):
    path = write(tmp_path / "a.csv", long_csv(4))
    with pytest.raises(ParameterError, match="skip_invalid needs rejects_path"):
        import_responses(survey_engine, path, SURVEY, skip_invalid=True)
    with pytest.raises(ParameterError, match="would overwrite the file imported"):
        import_responses(survey_engine, path, SURVEY, skip_invalid=True, rejects_path=path)
    with pytest.raises(ParameterError, match="format 'tsv' must be one of auto, long, wide"):
        import_responses(survey_engine, path, SURVEY, fmt="tsv")


def test_only_issued_respondent_ids_are_accepted_once_ids_were_issued(survey_engine, tmp_path):
    path = write(tmp_path / "a.csv", LONG_HEADER + "AI-1,exam_cheating,yes\n"
                 "AI-9,exam_cheating,no\nAI-2,plagiarism,no\n")
    store.record_generation(survey_engine, SURVEY, ["AI-1", "AI-2", "AI-3"], {})
    error = refused(survey_engine, path)
    assert error.problems == [CsvProblem(
        3, "respondent_id", "AI-9", "this respondent id was not issued for survey "
        "'academic_integrity' (only issued questionnaire ids are accepted)")]
    rejects = tmp_path / "rejects.csv"
    result = import_responses(survey_engine, path, SURVEY, skip_invalid=True,
                              rejects_path=rejects)
    assert (result.imported, result.rejected) == (2, 1)


def test_a_mistyped_id_is_told_apart_from_an_unknown_one_and_the_near_issued_id_named(
        survey_engine, tmp_path):
    # issue 11: a one-character typo and a truncated id both said only "not issued"
    issued = new_respondent_ids(3, rng=seeded_source(4))
    store.record_generation(survey_engine, SURVEY, issued, {})
    first = issued[0]
    typo = first[:2] + ("Z" if first[2] != "Z" else "Y") + first[3:]
    unknown = next(i for i in new_respondent_ids(9, rng=seeded_source(5)) if i not in issued)
    path = write(tmp_path / "a.csv", LONG_HEADER + f"{issued[1].lower()},exam_cheating,yes\n"
                 f"{typo},exam_cheating,no\n{first[:-1]},plagiarism,no\n"
                 f"{unknown},plagiarism,yes\n")
    error = refused(survey_engine, path)
    reasons = {problem.line: (problem.kind, problem.reason) for problem in error.problems}
    assert reasons[3] == ("respondent id mistyped", (
        "this respondent id has a typo: its check symbol (the last) does not match the "
        f"others; did you mean {first}, the only issued id one symbol away?"))
    assert reasons[4] == ("respondent id not issued", (
        "this respondent id was not issued for survey 'academic_integrity' (only issued "
        f"questionnaire ids are accepted); did you mean {first}, the only issued id one "
        "symbol away?"))
    assert reasons[5] == ("respondent id not issued", (
        "this respondent id was not issued for survey 'academic_integrity' (only issued "
        "questionnaire ids are accepted)"))
    assert error.kinds == {"respondent id mistyped": 1, "respondent id not issued": 2}
    assert 2 not in reasons  # the issued id typed in lower case is read as issued


def test_progress_reports_bytes_up_to_the_file_size(survey_engine, tmp_path):
    path = write(tmp_path / "a.csv", long_csv(CHUNK_ROWS + 1_000))  # two chunks
    seen: list[tuple[int, int]] = []
    import_responses(survey_engine, path, SURVEY, progress=lambda d, t: seen.append((d, t)))
    assert len(seen) >= 2
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert seen[-1] == (path.stat().st_size, path.stat().st_size)


def test_import_result_to_dict_is_json(survey_engine, tmp_path):
    result = import_responses(survey_engine, write(tmp_path / "a.csv", long_csv(4)), SURVEY)
    data = json.loads(json.dumps(result.to_dict()))
    assert data["imported"] == 4 and data["file_name"] == "a.csv"
    assert data["imported_at"].endswith("+00:00")


# -- the command line ----------------------------------------------------------------------


def cli(*args: str, env: dict | None = None):
    return CliRunner().invoke(main, list(args), catch_exceptions=False, env=env)


@pytest.fixture
def cli_db(tmp_path, sample_survey_path) -> str:
    return migrated.copy_filled(f"sqlite:///{tmp_path / 'cli.db'}", add_sample_survey)


def test_cli_import_then_counts_as_json(cli_db, tmp_path):
    path = SAMPLE / "responses_long.csv"
    result = cli("import", str(path), "--survey", SURVEY, "--db", cli_db)
    assert result.exit_code == 0
    assert result.stdout == (
        f"Imported {path} (long layout) into 'academic_integrity' as import #1: 1172 rows "
        "read, 1172 answers added, 0 unchanged, 0 replaced, 0 rows refused (changed answers), 0 "
        "missing (empty cells), 0 rows rejected.\n")
    again = cli("import", str(path), "--survey", SURVEY, "--db", cli_db)
    assert again.exit_code == 0
    assert "was already imported into 'academic_integrity' (import #1" in again.stdout
    assert "nothing changed" in again.stdout
    counts = cli("counts", "--survey", SURVEY, "--db", cli_db, "--format", "json")
    data = json.loads(counts.stdout)
    assert data["survey"] == SURVEY
    assert [q["id"] for q in data["questions"]] == list(QUESTIONS)
    assert set(data["questions"][0]) == {"id", "yes", "no", "dont_know", "missing", "answers",
                                         "groups"}
    engine = store.open_engine(cli_db)
    assert [tuple(q[k] for k in ("yes", "no", "dont_know", "missing"))
            for q in data["questions"]] == list(counts_of(engine).values())
    engine.dispose()


def test_cli_counts_text_table(cli_db):
    cli("import", str(SAMPLE / "responses_wide.csv"), "--survey", SURVEY, "--db", cli_db)
    lines = cli("counts", "--survey", SURVEY, "--db", cli_db).stdout.splitlines()
    assert lines[0].split() == ["question", "yes", "no", "dont_know", "missing"]
    assert [line.split()[0] for line in lines[1:]] == list(QUESTIONS)


def test_cli_import_error_lists_every_bad_row_and_exits_1(cli_db, tmp_path):
    path = write(tmp_path / "bad.csv", LONG_HEADER + "r1,exam_cheating,maybe\nr2,nope,yes\n")
    result = cli("import", str(path), "--survey", SURVEY, "--db", cli_db)
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert lines[0].startswith(f"Error: 2 bad rows in {path} (1 not an answer, 1 unknown "
                               "question; labels no rule maps: 'maybe' 1")
    assert "nothing was imported" in lines[0]
    assert lines[1].startswith("  line 2, column answer, value 'maybe': not an answer")
    assert lines[2].startswith("  line 3, column question_id, value 'nope': unknown question id")
    assert result.stdout == ""


def test_cli_skip_invalid_needs_rejects_and_exits_2(cli_db, tmp_path):
    path = write(tmp_path / "a.csv", long_csv(4))
    result = cli("import", str(path), "--survey", SURVEY, "--db", cli_db, "--skip-invalid")
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: --skip-invalid needs --rejects FILE")


def test_cli_skip_invalid_reports_the_rejects_file(cli_db, tmp_path):
    path = write(tmp_path / "a.csv", LONG_HEADER + "r1,exam_cheating,yes\nr2,nope,yes\n")
    rejects = tmp_path / "rejects.csv"
    result = cli("import", str(path), "--survey", SURVEY, "--db", cli_db, "--skip-invalid",
                 "--rejects", str(rejects), "--output", "json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert (data["imported"], data["rejected"], data["rejects_path"]) == (1, 1, str(rejects))


def test_cli_reads_the_database_from_surveykit_db(tmp_path, sample_survey_path):
    env = {"SURVEYKIT_DB": f"sqlite:///{tmp_path / 'env.db'}"}
    assert cli("init", env=env).exit_code == 0
    assert cli("survey", "add", str(sample_survey_path), env=env).exit_code == 0
    listing = cli("survey", "list", "--format", "json", env=env)
    assert [s["name"] for s in json.loads(listing.stdout)["surveys"]] == [SURVEY]
    assert (tmp_path / "env.db").exists()


def test_cli_survey_add_reports_definition_errors_with_exit_1(tmp_path, cli_db):
    path = write(tmp_path / "bad.toml", 'name = "x"\ntitle = "X"\n[mechanism]\np = 0.2\nq = 0.6\n'
                 '[[questions]]\nid = "q1"\ntext = "?"\n')
    result = cli("survey", "add", str(path), "--db", cli_db)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {path}: mechanism: p (0.2) must be greater than q")


def test_cli_survey_add_twice_and_list(cli_db, sample_survey_path):
    again = cli("survey", "add", str(sample_survey_path), "--db", cli_db)
    assert "is already in" in again.stdout and "nothing changed" in again.stdout
    lines = cli("survey", "list", "--db", cli_db).stdout.splitlines()
    assert lines[0].split()[:6] == ["name", "questions", "issued", "respondents", "answers",
                                    "imports"]
    assert lines[1].split()[:6] == [SURVEY, "4", "0", "0", "0", "0"]


def test_cli_counts_on_a_missing_database_says_to_run_init(tmp_path):
    result = cli("counts", "--survey", SURVEY, "--db", str(tmp_path / "none.db"))
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: no surveykit database at")
    assert "run 'surveykit init' there first" in result.stderr


@pytest.mark.parametrize("command", [["init"], ["survey"], ["survey", "add"], ["survey", "list"],
                                     ["survey", "update"], ["import"], ["counts"]])
def test_store_commands_have_help_that_documents_the_database(command):
    result = cli(*command, "--help")
    assert result.exit_code == 0
    assert len(result.stdout.splitlines()) > 5
    if command != ["survey"]:
        assert "--db URL" in result.stdout and "SURVEYKIT_DB" in result.stdout


# -- real processes: killed in the middle, two at once ----------------------------------
# Only the import that is killed, and the two that run at once, need processes of their own;
# the steps around them run in this process (run_cli), which saves a start-up each.


def surveykit_command() -> list[str]:
    found = shutil.which("surveykit")
    return [found] if found else [sys.executable, "-m", "surveykit"]


def test_a_killed_import_leaves_the_database_as_before(tmp_path, sample_survey_path):
    db = tmp_path / "kill.db"
    url = f"sqlite:///{db}"
    run = [*surveykit_command()]
    small = write(tmp_path / "small.csv", long_csv(40, start=10_000_000))
    migrated.copy_filled(url, add_sample_survey)
    done = run_cli("import", str(small), "--survey", SURVEY, "--db", url)
    assert done.exit_code == 0, done.output
    big = write(tmp_path / "big.csv", long_csv(1_000_000))
    wal = db.with_name("kill.db-wal")
    start_size = wal.stat().st_size if wal.exists() else 0
    process = subprocess.Popen([*run, "import", str(big), "--survey", SURVEY, "--db", url],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    # Wait until the import is writing rows (its uncommitted pages reach the WAL).
    while time.monotonic() < deadline and process.poll() is None:
        if wal.exists() and wal.stat().st_size > start_size + 2_000_000:
            break
        time.sleep(0.005)
    assert process.poll() is None, "the import finished before it could be killed"
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    connection = sqlite3.connect(db)
    assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert connection.execute("SELECT count(*) FROM responses").fetchone() == (40,)
    assert connection.execute("SELECT file_name FROM imports").fetchall() == [("small.csv",)]
    connection.close()
    check = run_cli("check", "--survey", SURVEY, "--db", url)
    assert check.exit_code == 0, check.stderr
    assert check.stdout == (f"The kept counts of survey '{SURVEY}' agree with its answers: "
                            "4 cells, 40 answers, 10 respondents.\n")


def test_two_imports_into_one_sqlite_database_at_once_both_succeed(tmp_path, sample_survey_path):
    db = tmp_path / "two.db"
    url = f"sqlite:///{db}"
    run = surveykit_command()
    migrated.copy_filled(url, add_sample_survey)
    files = [write(tmp_path / "one.csv", long_csv(100_000)),
             write(tmp_path / "two.csv", long_csv(100_000, start=100_000))]
    processes = [subprocess.Popen([*run, "import", str(path), "--survey", SURVEY, "--db", url],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for path in files]
    outputs = [process.communicate(timeout=300) for process in processes]
    assert [process.returncode for process in processes] == [0, 0], outputs
    assert all("100000 answers added" in out for out, _ in outputs)
    connection = sqlite3.connect(db)
    assert connection.execute("SELECT count(*) FROM responses").fetchone() == (200_000,)
    assert connection.execute("SELECT count(*) FROM imports").fetchone() == (2,)
    connection.close()
    check = run_cli("check", "--survey", SURVEY, "--db", url)
    assert check.exit_code == 0, check.stderr
    assert "200,000 answers, 50,000 respondents" in check.stdout


def test_layout_option_and_its_deprecated_format_alias_import_the_same(tmp_path,
                                                                      sample_survey_path):
    """`import --layout wide` is the file layout; `--format wide` (its old name) still works,
    with a note on stderr; the two disagreeing is a usage error."""
    wide = write(tmp_path / "w.csv", "respondent_id,exam_cheating\nr1,yes\nr2,no\n")
    for option, db_name in (("--layout", "a.db"), ("--format", "b.db")):
        db = migrated.copy_filled(f"sqlite:///{tmp_path / db_name}", add_sample_survey)
        result = CliRunner().invoke(main, ["import", str(wide), "--survey", SURVEY, option,
                                           "wide", "--db", db])
        assert result.exit_code == 0, result.output
        assert "(wide layout)" in result.stdout and "2 answers added" in result.stdout
        note = "Note: --format wide is deprecated for the file layout; use --layout wide\n"
        assert result.stderr == (note if option == "--format" else "")
    both = CliRunner().invoke(main, ["import", str(wide), "--survey", SURVEY, "--layout",
                                     "long", "--format", "wide", "--db", db])
    assert both.exit_code == 2
    assert "--layout long and --format wide both give the file layout" in both.stderr
