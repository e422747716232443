"""Sample frames: ``generate --frame frame.csv`` issues one respondent id per sampled unit and
stores its design values, so that the answers need not carry them.

A frame is a CSV (UTF-8; comma, semicolon or tab) or an Excel workbook with
a header and one row per sampled unit (household, school, ...), holding the
survey's ``[sampling]`` columns (weight, strata, clusters, fpc, replicate
weights, listed or matched by the ``replicate_weights`` pattern); other
columns (the unit's own id, an address) are not stored, only copied to the
list of issued ids. :func:`read_frame` reads it cell by cell with the
checks of an import (a number column holds numbers) and checks the design it
makes on its own (a missing or non-positive weight, a PSU in two strata, a
stratum with one PSU, ...): every error is one line naming the file, line
(row, in a workbook), column and value, and nothing is issued.
:func:`generate_from_frame` then writes the questionnaires and, in the
transaction that registers the ids, stores each unit's values for its id
(:func:`surveykit.store.design_values.store_frame_values`), and writes
``frame-ids.csv`` beside the questionnaires: the frame's rows with the id
issued for each, which tells the field team which sheet goes to which unit.

Idempotent: a survey takes one frame, recorded by its sha256. Running
``generate --frame`` again (with the same frame, or an edited one) is refused
before anything is written, since it would give every unit a second id; a
wrong design value is corrected with ``surveykit import FILE --replace``.

Privacy: the questionnaires are those of a plain ``generate`` run: the
design values are printed on no sheet, slip or form, and ``frame-ids.csv``
holds ids and the frame's columns, never an instruction.

>>> # generate_from_frame(engine, "household_survey", "frame.csv", out_dir="forms")
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, replace
from pathlib import Path

from surveykit import store
from surveykit.collection.generation import GenerationResult
from surveykit.definition.survey import Survey
from surveykit.errors import CsvImportError, ParameterError, printable
from surveykit.files import remove_created
from surveykit.reading.responses import _split_header, inspect_file, neutralize_formula
from surveykit.reading.spreadsheets import open_sheet
from surveykit.sampling.rows import design_rows
from surveykit.store.database import survey_id
from surveykit.store.design_values import FrameValues, lonely_psu_row, refuse_second_frame
from surveykit.workflows.generate import generate_questionnaires

__all__ = ["FRAME_IDS_FILE", "SampleFrame", "generate_from_frame", "load_frame", "read_frame"]

#: The list of issued ids that ``generate --frame`` writes into ``--out``.
FRAME_IDS_FILE = "frame-ids.csv"


@dataclass(frozen=True, kw_only=True)
class SampleFrame:
    """A frame read and checked: ``values`` (what the store keeps), and the file's
    ``header`` and ``rows`` as written (for the list of issued ids)."""

    values: FrameValues
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]

    @property
    def units(self) -> int:
        return len(self.rows)


def read_frame(path: str | Path, survey: Survey) -> SampleFrame:
    """The frame at ``path`` for ``survey`` (which has ``[sampling]``), read and checked (see
    the module docstring); a one-line ParameterError or CsvImportError otherwise.

    >>> # read_frame("frame.csv", survey).values.columns
    >>> # ('pw', 'stype', 'dnum', 'fpc')
    """
    path = Path(path)
    name = path.name
    sampling = survey.sampling
    if sampling is None:
        raise ParameterError(f"{name}: survey {survey.name!r} has no [sampling] section, so a "
                             "sample frame has no design values to give; declare the design "
                             "(docs/complex-samples.md) or generate without --frame")
    facts = inspect_file(path)
    unit = "line" if facts.kind == "csv" else "row"
    header, lines, rows = _table(path, facts.kind)
    if not rows:
        raise ParameterError(f"{name} has a header but no units: a sample frame has one row "
                             "per sampled unit; nothing was issued")
    columns = _design_columns(name, header, survey)
    at = {column: next(i for i, h in enumerate(header) if h.casefold() == column.casefold())
          for column in columns}
    values = []
    for line, row in zip(lines, rows, strict=True):
        kept = []
        for column in columns:
            raw = row[at[column]] if at[column] < len(row) else ""
            if not raw.strip():
                kept.append(None)  # the design check names an empty design value
                continue
            value, problem = survey.covariate(column).read(raw)
            if problem is not None:
                raise ParameterError(
                    f"{name}, {unit} {line}, column {printable(repr(header[at[column]]))}: "
                    f"{printable(repr(raw))} is {problem[0]} ({problem[1]}); nothing was issued")
            kept.append(value)
        values.append(tuple(kept))
    frame = FrameValues(file_name=name, sha256=facts.sha256, columns=columns,
                        lines=tuple(lines), values=tuple(values), unit=unit)
    _check_design(frame, survey)
    return SampleFrame(values=frame, header=tuple(header), rows=tuple(rows))


def _table(path: Path, kind: str) -> tuple[list[str], list[int], list[tuple[str, ...]]]:
    """Header, line numbers and rows of a CSV or the first sheet of a workbook; blank rows
    left out."""
    if kind in ("xlsx", "xls"):
        sheet = open_sheet(path, kind)
        try:
            numbered = list(sheet.rows)
        finally:
            sheet.close()
    elif kind == "csv":
        text = path.read_text(encoding="utf-8-sig")
        delimiter, _ = _split_header(text.split("\n", 1)[0])
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
        numbered = [(reader.line_num, row) for row in reader]
    else:
        raise CsvImportError(str(path), [], summary=(
            f"{path.name} is a {kind} file; a sample frame is a CSV (UTF-8) or an Excel "
            "workbook with one row per sampled unit; nothing was issued"))
    numbered = [(line, row) for line, row in numbered if any(cell.strip() for cell in row)]
    if not numbered:
        raise ParameterError(f"{path.name} is empty: a sample frame has a header and one row "
                             "per sampled unit; nothing was issued")
    (_, header), *body = numbered
    return ([cell.strip() for cell in header], [line for line, _ in body],
            [tuple(row) for _, row in body])


def _design_columns(name: str, header: list[str], survey: Survey) -> tuple[str, ...]:
    """The design columns the frame gives: every column ``[sampling]`` names and the
    replicate columns (listed, or those its pattern matches, in natural order)."""
    sampling = survey.sampling
    folded = {h.casefold() for h in header}
    named = [survey.covariate(c).name for c in sampling.columns]
    missing = [c for c in named if c.casefold() not in folded]
    if missing:
        shown = ", ".join(printable(repr(h)) for h in header[:30])
        raise ParameterError(f"{name}: the design column {missing[0]!r} of [sampling] is not in "
                             f"the frame (its columns: {shown}); a sample frame gives every "
                             "design column; nothing was issued")
    replicates = sampling.replicate_weights
    matched: tuple[str, ...] = ()
    if replicates is not None and replicates.pattern is not None:
        try:
            matched = replicates.resolve(header)
        except ParameterError as exc:
            raise ParameterError(f"{name}: {exc}; nothing was issued") from None
    return tuple(dict.fromkeys([*named, *matched]))


def _check_design(frame: FrameValues, survey: Survey) -> None:
    """The design the frame's units make, checked on their own with the rules of an import
    (:func:`surveykit.sampling.rows.design_rows`)."""
    import pandas as pd

    data = pd.DataFrame(list(frame.values), columns=list(frame.columns), dtype=object)
    try:
        rows = design_rows(data, survey.sampling,
                           row_names=lambda i: f"{frame.unit} {frame.lines[i]}")
        rows.counts  # noqa: B018 -- builds the design's PSUs: strata, lonely PSUs, fpc
    except ParameterError as exc:
        message = str(exc)
        lonely = lonely_psu_row(data, survey.sampling) if "has only one" in message else None
        if lonely is not None:
            message += f" (it is at {frame.unit} {frame.lines[lonely]})"
        raise ParameterError(f"{frame.file_name}: {message}; nothing was issued") from None


def load_frame(engine, survey_name: str, path: str | Path) -> SampleFrame:
    """The frame at ``path`` read and checked (:func:`read_frame`) for the stored survey."""
    return read_frame(path, store.load_survey(engine, survey_name))


def generate_from_frame(engine, survey_name: str, frame: SampleFrame | str | Path, *,
                        out_dir: str | Path, seed: int | None = None,
                        **options) -> GenerationResult:
    """Issue one respondent id per unit of ``frame`` (a path, or :func:`load_frame`'s
    result for this survey), write the
    questionnaires and ``frame-ids.csv`` into ``out_dir``, and store each unit's design values
    for its id, in the transaction that registers the ids (module docstring).

    ``options`` are those of :func:`surveykit.workflows.generate.generate_questionnaires`
    except ``respondents`` (one per unit). The result's ``files`` include ``frame-ids.csv``.
    """
    if "respondents" in options:
        raise ParameterError("generate --frame issues one id per unit of the frame: leave "
                             "out --respondents")
    survey = store.load_survey(engine, survey_name)
    if not isinstance(frame, SampleFrame):
        frame = read_frame(frame, survey)
    with engine.connect() as conn:  # refused before anything is written (and again when
        # the ids are recorded, should another run have come in between)
        refuse_second_frame(conn, survey_id(conn, survey.name), survey.name,
                            frame.values)
    listing = Path(out_dir) / FRAME_IDS_FILE
    if listing.exists():
        raise ParameterError(f"{listing} exists already: it lists the ids of an earlier run; "
                             "choose another --out folder; nothing was issued")
    written: list[Path] = []
    created: list[Path] = []

    def before_record(respondent_ids, groups) -> None:
        # the list goes in first: ids on record without it would leave the team unable to
        # tell which sheet is whose
        if not Path(out_dir).exists():
            Path(out_dir).mkdir()
            created.append(Path(out_dir))
        _write_listing(listing, frame, respondent_ids, groups, survey)
        written.append(listing)

    try:
        result = generate_questionnaires(engine, survey_name, seed=seed, out_dir=out_dir,
                                         respondents=frame.units, frame=frame.values,
                                         before_record=before_record, **options)
    except BaseException:
        remove_created(written, created)
        raise
    return replace(result, files=(*result.files, listing))


def _write_listing(path: Path, frame: SampleFrame, respondent_ids, groups, survey: Survey
                   ) -> None:
    """frame-ids.csv: respondent_id (and the form version in a multi-group survey) before
    each row of the frame, cells as written (formulas neutralized)."""
    with path.open("x", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        leading = ["respondent_id"] + (["group"] if groups is not None else [])
        writer.writerow(leading + [neutralize_formula(h) for h in frame.header])
        for i, row in enumerate(frame.rows):
            ids = [respondent_ids[i]] + ([survey.groups[groups[i] - 1]]
                                         if groups is not None else [])
            writer.writerow(ids + [neutralize_formula(cell) for cell in row])
