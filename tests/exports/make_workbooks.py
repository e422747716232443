"""Writes the workbook and zip fixtures of this folder (run once; the outputs are checked in).

The CSV fixtures beside it were written by hand from each tool's documented
export format (see README.md). The workbooks carry the same answers, as
KoboToolbox writes them: the first sheet named after the form, XML values
(choice names), ``group/question`` headers, the submission metadata, and a
repeat group on a second sheet. Needs openpyxl and, for the legacy .xls,
xlwt (``pip install xlwt``; only this script uses it).

    python tests/exports/make_workbooks.py
"""

from __future__ import annotations

import datetime as dt
import zipfile
from pathlib import Path

import openpyxl

HERE = Path(__file__).resolve().parent
QUESTIONS = ["exam_cheating", "plagiarism", "contract_cheating", "fabricated_data"]
# The hand-checked table of README.md: Y yes, N no, D don't know, - missing.
TABLE = ["YNNN", "NNDY", "DYN-", "NNNN", "YYYN", "N-ND", "NNNN", "YNDN"]
VALUE = {"Y": "yes", "N": "no", "D": "dont_know", "-": None}
METADATA = ["_id", "_uuid", "_submission_time", "_validation_status", "_notes", "_status",
            "_submitted_by", "__version__", "_tags", "_index"]


def kobo_rows(prefix: str) -> list[list[object]]:
    header = ["start", "end", "today", "deviceid", "integrity/respondent_id",
              *(f"integrity/{q}" for q in QUESTIONS), *METADATA]
    rows: list[list[object]] = [header]
    for i, answers in enumerate(TABLE, start=1):
        start = dt.datetime(2024, 3, i, 10, 10 + i, 5)
        rows.append([start, start + dt.timedelta(minutes=9), start.date(), f"collect:Xb7{i}kQ2mP",
                     f"{prefix}-{i:03d}", *(VALUE[a] for a in answers), 48215000 + i,
                     f"0c4d9e2a-1b3f-4c5d-8e7f-{i:012d}", start + dt.timedelta(hours=2), None,
                     None, "submitted_via_web", None, "vGx9WqR3tLmZ", None, i])
    return rows


def repeat_rows() -> list[list[object]]:
    return [["household_members/name", "household_members/age", "_index", "_parent_index",
             "_parent_table_name"],
            ["Member 1", 21, 1, 1, "Academic integrity survey"],
            ["Member 2", 47, 2, 1, "Academic integrity survey"]]


def write_xlsx(path: Path, rows: list[list[object]]) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Academic integrity survey"
    for row in rows:
        sheet.append(row)
    members = book.create_sheet("household_members")
    for row in repeat_rows():
        members.append(row)
    book.save(path)


def write_xls(path: Path, rows: list[list[object]]) -> None:
    import xlwt

    book = xlwt.Workbook(encoding="utf-8")
    dates = xlwt.easyxf(num_format_str="yyyy-mm-dd hh:mm:ss")
    for name, table in (("Academic integrity survey", rows), ("household_members",
                                                              repeat_rows())):
        sheet = book.add_sheet(name)
        for r, row in enumerate(table):
            for c, value in enumerate(row):
                if value is None:
                    continue
                if isinstance(value, dt.date):
                    sheet.write(r, c, value, dates)
                else:
                    sheet.write(r, c, value)
    book.save(str(path))


def write_groups_xlsx(path: Path) -> None:
    """A two-group (SLD) survey: the group column as the form writes it, by name."""
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Two-group survey"
    sheet.append(["start", "end", "integrity/respondent_id", "integrity/group",
                  "integrity/exam_cheating", "_uuid", "_index"])
    answers = [("short", "yes"), ("short", "no"), ("short", "no"),
               ("long", "yes"), ("long", "yes"), ("long", "no")]
    for i, (group, answer) in enumerate(answers, start=1):
        start = dt.datetime(2024, 7, 1, 9, i)
        sheet.append([start, start + dt.timedelta(minutes=4), f"SG-{i:03d}", group, answer,
                      f"7e6d5c4b-3a29-4180-9f8e-{i:012d}", i])
    book.save(path)


def write_zip(path: Path) -> None:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in ("odk_central.csv", "odk_central-household-members.csv"):
            archive.write(HERE / name, arcname=name)


if __name__ == "__main__":
    write_xlsx(HERE / "kobotoolbox_values.xlsx", kobo_rows("KX"))
    write_xls(HERE / "kobotoolbox_legacy.xls", kobo_rows("KL"))
    write_groups_xlsx(HERE / "kobotoolbox_groups.xlsx")
    write_zip(HERE / "odk_central.zip")
