"""The daily re-download (issue 22, item 2): KoboToolbox and ODK Central downloads hold every
submission so far, so each day's export repeats the days before. Re-importing such a file
is idempotent: answers stored before exactly as the file gives them are *unchanged*, new ones
*added*, a changed answer *refused* with its line unless ``--replace``. Real CLI runs on a real
SQLite file and the real PostgreSQL; the kept counts are checked against the counts
recomputed from the stored answers (``surveykit check``) after every import.

The exports are written here the way the fixtures in tests/exports/ are (tests/exports/
README.md names the tools' documented formats): the same columns, metadata, group prefixes
and answer labels, for as many respondents as a day's download holds.
"""

from __future__ import annotations

import json
import re
import shlex
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import migrated
import pytest

from surveykit.errors import CsvImportError
from surveykit.resources import locate_resource
from surveykit.store import database as store
from surveykit.store.importer import import_responses
from tests.store_support import add_sample_survey, run_cli

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_TOML = locate_resource("sample_data") / "academic_integrity.toml"
SURVEY = "academic_integrity"
QUESTIONS = ("exam_cheating", "plagiarism", "contract_cheating", "fabricated_data")
# respondent 7's answer to plagiarism, changed in the tool between day 2 and day 3
CHANGED = (7, "plagiarism")


def answer(respondent: int, question: int, day: int) -> str | None:
    """Respondent ``respondent``'s answer (yes, no, dont_know, None for an empty cell) to
    question ``question`` in the export of ``day``: the same every day but for CHANGED."""
    if (respondent + 5 * question) % 13 == 0:
        return None
    value = ("yes", "no", "no", "dont_know", "no")[(respondent + 2 * question) % 5]
    if day >= 3 and (respondent, QUESTIONS[question]) == CHANGED:
        value = "yes" if value != "yes" else "no"
    return value


KOBO_HEADER = ("start;end;today;deviceid;integrity/respondent_id;integrity/exam_cheating;"
               "integrity/plagiarism;integrity/contract_cheating;integrity/fabricated_data;_id;"
               "_uuid;_submission_time;_validation_status;_notes;_status;_submitted_by;"
               "__version__;_tags;_index")
KOBO_LABELS = {"yes": "Yes", "no": "No", "dont_know": "I don't know", None: ""}

ODK_HEADER = ("SubmissionDate,start,end,integrity-respondent_id,integrity-exam_cheating,"
              "integrity-plagiarism,integrity-contract_cheating,integrity-fabricated_data,"
              "meta-instanceID,KEY,SubmitterID,SubmitterName,AttachmentsPresent,"
              "AttachmentsExpected,Status,ReviewState,DeviceID,Edits,FormVersion")


def kobo_export(path: Path, respondents: int, day: int) -> Path:
    """A KoboToolbox CSV download ("Labels", groups included, as tests/exports/
    kobotoolbox_labels.csv): byte-order mark, ``;``, metadata; one row per submission, in
    submission order, each with the same metadata every day."""
    rows = []
    for i in range(1, respondents + 1):
        hour, minute = divmod(i, 60)
        answers = ";".join(KOBO_LABELS[answer(i, j, day)] for j in range(len(QUESTIONS)))
        rows.append(f"2026-11-2{1 + i // 20}T{10 + hour:02d}:{minute:02d}:05.123+01:00;"
                    f"2026-11-2{1 + i // 20}T{10 + hour:02d}:{minute:02d}:41.456+01:00;"
                    f"2026-11-2{1 + i // 20};collect:Xb{i:02d}kQ2mP;KB-{i:03d};{answers};"
                    f"{48213000 + i};3f2b8c1e-9d4a-4c7e-8b1a-{i:012d};"
                    f"2026-11-2{1 + i // 20}T09:{minute:02d}:12;;;submitted_via_web;;"
                    f"vGx9WqR3tLmZ;;{i}")
    path.write_text("\ufeff" + KOBO_HEADER + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def odk_export(path: Path, respondents: int, day: int) -> Path:
    """An ODK Central CSV download (as tests/exports/odk_central.csv): CRLF, SubmissionDate
    first, ``-`` group prefixes, the answers' XML values; an edited submission says so
    (ReviewState edited, Edits 1, a new instanceID)."""
    rows = []
    for i in range(1, respondents + 1):
        edited = day >= 3 and i == CHANGED[0]
        answers = ",".join(answer(i, j, day) or "" for j in range(len(QUESTIONS)))
        instance = f"uuid:5c8e2f1a-7b3d-4e9f-a2c1-{i + (500 if edited else 0):012d}"
        rows.append(f"2026-11-2{1 + i // 20}T08:{i % 60:02d}:17.312Z,"
                    f"2026-11-2{1 + i // 20}T10:{i % 60:02d}:03.000+02:00,"
                    f"2026-11-2{1 + i // 20}T10:{i % 60:02d}:55.000+02:00,OD-{i:03d},{answers},"
                    f"{instance},uuid:5c8e2f1a-7b3d-4e9f-a2c1-{i:012d},17,tablet-03,0,0,,"
                    f"{'edited' if edited else 'approved'},collect:A1b2C3d4E5f6G7h{i},"
                    f"{1 if edited else 0},2026112001")
    path.write_bytes((ODK_HEADER + "\r\n" + "\r\n".join(rows) + "\r\n").encode("utf-8"))
    return path


EXPORTS = {"kobo": (kobo_export, "KB"), "odk": (odk_export, "OD")}


def expected_counts(respondents: int, day: int) -> dict[str, Counter]:
    """Per question, the answers of the first ``respondents`` as the day's export gives them
    (the oracle: counted from the rows, not from the database); an empty cell is missing
    for a respondent who answered another question."""
    counts = {question: Counter() for question in QUESTIONS}
    for i in range(1, respondents + 1):
        if all(answer(i, j, day) is None for j in range(len(QUESTIONS))):
            continue
        for j, question in enumerate(QUESTIONS):
            counts[question][answer(i, j, day) or "missing"] += 1
    return counts


def answers_in(respondents: int) -> int:
    return sum(answer(i, j, 1) is not None for i in range(1, respondents + 1)
               for j in range(len(QUESTIONS)))


def stored_counts(engine) -> dict[str, Counter]:
    """The counts surveykit reads (the kept ones), after ``surveykit check`` found them equal
    to the counts recomputed from the stored answers."""
    return {c.question_id: Counter({label: n for label, n in (
        ("yes", c.yes), ("no", c.no), ("dont_know", c.dont_know), ("missing", c.missing)) if n})
        for c in store.count_responses(engine, SURVEY)}


def check_ok(url: str) -> None:
    result = run_cli("check", "--survey", SURVEY, "--db", url, "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["ok"] is True


@pytest.fixture(params=migrated.DATABASES)
def survey_url(request, tmp_path) -> Iterator[str]:
    """A database holding the sample survey, on SQLite and PostgreSQL: a copy of one made
    once per test process (tests/migrated.py)."""
    with migrated.filled_database(request.param, add_sample_survey, tmp_path) as url:
        yield url


def summary(result) -> dict:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("tool", sorted(EXPORTS))
def test_a_growing_export_imported_three_times_adds_only_what_is_new(survey_url, tool,
                                                                     tmp_path):
    write, prefix = EXPORTS[tool]
    url = survey_url
    engine = store.open_engine(url)

    def imported(path: Path, *options: str) -> dict:
        return summary(run_cli("import", str(path), "--survey", SURVEY, "--db", url,
                               "--output", "json", *options))

    try:
        # day 1: the first 20 submissions
        day1 = imported(write(tmp_path / "day1.csv", 20, day=1))
        assert (day1["rows_read"], day1["added"], day1["unchanged"], day1["replaced"],
                day1["refused"]) == (20, answers_in(20), 0, 0, 0)
        check_ok(url)
        assert stored_counts(engine) == expected_counts(20, day=1)
        # day 2: 40 submissions, the first 20 of them as yesterday
        day2 = imported(write(tmp_path / "day2.csv", 40, day=2))
        assert (day2["rows_read"], day2["added"], day2["unchanged"], day2["replaced"],
                day2["refused"]) == (40, answers_in(40) - answers_in(20), answers_in(20), 0, 0)
        assert day2["missing"] == 40 * len(QUESTIONS) - answers_in(40)
        check_ok(url)
        assert stored_counts(engine) == expected_counts(40, day=2)
        # day 3: 60 submissions; respondent 7's plagiarism answer was changed in the tool
        day3 = write(tmp_path / "day3.csv", 60, day=3)
        refused = run_cli("import", str(day3), "--survey", SURVEY, "--db", url)
        assert refused.exit_code == 1
        old, new = answer(7, 1, 2), answer(7, 1, 3)
        assert refused.stderr.splitlines()[:2] == [
            f"Error: 1 bad row in {day3} (1 changes an earlier answer); nothing was imported "
            "(fix them and import again, or import the other rows with --skip-invalid "
            "--rejects FILE; to overwrite the answers (or covariates) that earlier imports "
            "gave differently, use --replace):",
            f"  line 8, column respondent_id, value '{prefix}-007': this respondent already "
            f"answered question 'plagiarism' with {old!r} (this file says {new!r}) in import "
            f"#1 ({'day1.csv'})"]
        check_ok(url)
        assert stored_counts(engine) == expected_counts(40, day=2)  # nothing changed
        # the dry run says what --replace will do, and changes nothing
        dry = imported(day3, "--replace", "--dry-run")
        replaced = imported(day3, "--replace")
        expected = (60, answers_in(60) - answers_in(40), answers_in(40) - 1, 1, 0)
        for result in (dry, replaced):
            assert (result["rows_read"], result["added"], result["unchanged"],
                    result["replaced"], result["refused"]) == expected
        assert replaced["answer_changes"]["plagiarism"] == dry["answer_changes"]["plagiarism"]
        check_ok(url)
        assert stored_counts(engine) == expected_counts(60, day=3)
        # and day 3 again (a copy: another name, the same bytes) is the same file
        again = tmp_path / "day3-copy.csv"
        again.write_bytes(day3.read_bytes())
        assert imported(again)["already_imported"] is True
    finally:
        engine.dispose()


def test_the_summary_line_says_added_unchanged_replaced_and_refused(survey_url, tmp_path):
    url = survey_url
    run_cli("import", str(kobo_export(tmp_path / "day1.csv", 20, day=1)), "--survey", SURVEY,
            "--db", url)
    day2 = kobo_export(tmp_path / "day2.csv", 40, day=2)
    result = run_cli("import", str(day2), "--survey", SURVEY, "--db", url)
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"Imported {day2} (wide layout) into 'academic_integrity' as import #2: 40 rows read, "
        f"{answers_in(40) - answers_in(20)} answers added, {answers_in(20)} unchanged, "
        f"0 replaced, 0 rows refused (changed answers), {160 - answers_in(40)} missing "
        "(empty cells), 0 rows rejected.\n")
    # --skip-invalid sets the changed row aside: refused, and written to the rejects file
    day3 = kobo_export(tmp_path / "day3.csv", 60, day=3)
    rejects = tmp_path / "rejects.csv"
    result = run_cli("import", str(day3), "--survey", SURVEY, "--db", url, "--skip-invalid",
                     "--rejects", str(rejects))
    assert result.exit_code == 0, result.output
    of_respondent_7 = sum(answer(7, j, 1) is not None for j in range(len(QUESTIONS)))
    assert (f"{answers_in(60) - answers_in(40)} answers added, "
            f"{answers_in(40) - of_respondent_7} unchanged, "
            "0 replaced, 1 row refused (changed answers)") in result.stdout
    assert "1 row rejected." in result.stdout
    assert "Rejected rows by reason: 1 changes an earlier answer." in result.stdout
    assert rejects.read_text("utf-8").count("KB-007") == 1
    check_ok(url)


DAILY = """\
name = "daily"
title = "A survey downloaded every evening"
[mechanism]
p = 0.6
q = 0.2
[[questions]]
id = "q_alpha"
text = "Have you ever done alpha?"
[[questions]]
id = "q_beta"
text = "Have you ever done beta?"
"""


def test_yesterdays_submissions_in_todays_export_are_not_bad_rows(engine, tmp_path):
    """Issue 22: after yesterday's 20 rows, today's 40-row export was refused: "20 bad rows
    ... already answered question 'q_alpha' with the same answer"."""
    store.add_survey(engine, store_survey(tmp_path))
    header = "start;end;_uuid;_submission_time;_index;main/respondent_id;main/q_alpha;main/q_beta"

    def export(path: Path, rows: int) -> Path:
        path.write_text(header + "\n" + "".join(
            f"2026-11-25;2026-11-25;uuid-{i};2026-11-25T10:00:{i % 60:02d};{i};R-{i:03d};"
            f"{('yes', 'no', 'dont_know')[i % 3]};{('no', 'yes')[i % 2]}\n"
            for i in range(1, rows + 1)), encoding="utf-8")
        return path

    import_responses(engine, export(tmp_path / "yesterday.csv", 20), "daily")
    try:
        today = import_responses(engine, export(tmp_path / "today.csv", 40), "daily")
    except CsvImportError as error:  # what the issue saw: the whole file refused
        pytest.fail(str(error).splitlines()[0])
    assert (today.rows_read, today.imported, today.unchanged, today.replaced) == (40, 40, 40, 0)
    counts = {c.question_id: (c.yes, c.no, c.dont_know) for c in
              store.count_responses(engine, "daily")}
    assert counts == {"q_alpha": (13, 14, 13), "q_beta": (20, 20, 0)}


def store_survey(tmp_path: Path):
    from surveykit.definition.survey import parse_survey

    return parse_survey(DAILY, "daily.toml")


# -- the worked example of docs/field-imports.md ---------------------------------------------


def doc_steps() -> list[tuple[str, list[str]]]:
    """The commands of the daily re-download example and the output the guide shows."""
    text = (ROOT / "docs" / "field-imports.md").read_text(encoding="utf-8")
    section = re.search(r"^## The daily re-download\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert section, "docs/field-imports.md has no '## The daily re-download' section"
    blocks = re.findall(r"^```console\n(.*?)^```", section.group(1), re.S | re.M)
    assert blocks, "the daily re-download section has no console block"
    steps: list[tuple[str, list[str]]] = []
    for block in blocks:
        for line in block.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            else:
                steps[-1][1].append(line)
    return steps


def test_the_guide_shows_the_daily_re_download_as_it_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SURVEYKIT_DB", raising=False)
    for name, respondents, day in (("kobo-day1.csv", 20, 1), ("kobo-day2.csv", 40, 2),
                                   ("kobo-day3.csv", 60, 3)):
        kobo_export(tmp_path / name, respondents, day)
    steps = doc_steps()
    assert [command.split()[:2] for command, _ in steps][:2] == [
        ["surveykit", "init"], ["surveykit", "survey"]]
    for command, expected in steps:
        args = shlex.split(command)
        assert args[0] == "surveykit", command
        result = run_cli(*args[1:])
        shown = result.output.rstrip("\n").splitlines()
        assert [line.rstrip() for line in shown] == [line.rstrip() for line in expected], (
            command)
        if not (expected and expected[0].startswith("Error: ")):
            assert result.exit_code == 0, (command, result.output)
    check_ok("sqlite:///surveykit.db")
