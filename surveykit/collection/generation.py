"""Generate a survey's questionnaires: ids, groups, instructions, files, handed over for the record.

The work streams in batches of ``per_file`` respondents (500 by default): for
each batch new respondent ids and instructions are drawn, one file per part is
rendered straight to disk, and only the ids, their groups and the run's
per-question instruction counts are kept. 100,000 questionnaires are 200
files per part, none held in memory.

Multi-group surveys (``Survey.groups``, e.g. the stochastic lie detector's two
groups): every respondent gets one group, drawn once for the whole run with
the secure randomizer and balanced across groups
(:func:`surveykit.collection.randomizer.balanced_groups`); within a file the
pages are ordered by group, so each file holds a pile per form version.

Files in ``out_dir`` (``NNNNN`` is the batch number, from 00001):

* slips mode: ``sheets-NNNNN.{html,md}`` (answer sheets, with ids: these are
  handed in) and ``slips-NNNNN.{html,md}`` (private instruction slips, no ids:
  respondents keep them);
* die mode: ``forms-NNNNN.{html,md}`` (one self-randomized form per id).

Privacy (docs/questionnaires.md, "Threat model"): instructions go only to the
slips and, if asked for explicitly, to a key file; the database receives the
issued ids with their groups (a form version, not a secret) and, only for a
run with at least :data:`~surveykit.definition.limits.AUDIT_MINIMUM_PER_GROUP`
respondents in every group, the run's instruction counts per question and
group (for the randomizer audit), never an instruction next to an id. A
smaller run changes the database by its ids alone, and nothing ``generate``
prints or returns depends on the instructions drawn: a run of one respondent
would otherwise tell anyone who compares the database before and after (or
reads the terminal) that respondent's instructions.

The files are written into a hidden staging folder beside ``out_dir`` and
moved into ``out_dir`` only after the store recorded the generation (one
transaction, :mod:`surveykit.workflows.generate`); if anything fails before
that, the files this run created are removed and the database and
``out_dir`` are left as they were.
"""

from __future__ import annotations

import csv
import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from surveykit.collection.questionnaire import MODES, QuestionnaireLayout, build_layout
from surveykit.collection.randomizer import (
    RandomSource,
    balanced_groups,
    draw_instruction_matrix,
    draw_numbers,
    question_protocols,
)
from surveykit.collection.render import (
    FORMATS,
    get_template,
    load_wording_defaults,
    make_environment,
    render_to,
)
from surveykit.definition.limits import AUDIT_MINIMUM_PER_GROUP
from surveykit.definition.survey import Survey
from surveykit.errors import OutputError, ParameterError
from surveykit.files import output_file, output_folder, remove_created
from surveykit.respondent_ids import new_respondent_ids

__all__ = [
    "DEFAULT_PER_FILE",
    "KEY_FILE_COLUMNS",
    "KEY_FILE_WARNING",
    "GenerationResult",
    "audit_keeps_totals",
    "issue_questionnaires",
    "write_questionnaires",
]

DEFAULT_PER_FILE = 500
KEY_FILE_COLUMNS = ("respondent_id", "group", "question_id", "code")
KEY_FILE_WARNING = (
    "Warning: the key file {path} links every respondent id to their codes and undoes "
    "the protection of randomized response. Keep it apart from the answers (another "
    "machine or an encrypted volume, never in the folder that goes to the field or to "
    "the analyst) and delete it when the audit is done."
)
# File name stem of each template part; die-mode forms are named for what they are.
_STEMS = {"slips": "slips", "sheets": "sheets", "die": "forms"}
_PARTS = {"slips": ("sheets", "slips"), "die": ("die",)}
# question id -> group number -> instruction code -> count, of one run
_Tallies = Mapping[str, Mapping[int, Mapping[str, int]]]


@dataclass(frozen=True)
class GenerationResult:
    """What a generation wrote.

    ``group_counts[group_number]`` is the number of ids issued in each group.
    ``respondent_groups`` holds each issued id's group number. ``tallied`` says
    whether the run's instruction totals were recorded for the randomizer
    audit (:func:`generate_questionnaires`, slips mode, at least
    :data:`~surveykit.definition.limits.AUDIT_MINIMUM_PER_GROUP` ids in every
    group; never for :func:`write_questionnaires`, which records nothing).
    Nothing here depends on the instructions drawn: they are on the slips
    (and in the key file, if asked for) only.
    """

    survey: str
    mode: str
    format: str
    respondents: int
    out_dir: Path
    files: tuple[Path, ...]
    key_file: Path | None
    seeded: bool
    group_names: tuple[str, ...]
    group_counts: Mapping[int, int]
    respondent_ids: tuple[str, ...] = field(repr=False)
    respondent_groups: tuple[int, ...] = field(repr=False)
    tallied: bool = False

    def to_dict(self) -> dict:
        """Plain JSON-ready data (ids and instructions of respondents are not included)."""
        name = dict(enumerate(self.group_names, start=1))
        return {
            "survey": self.survey,
            "mode": self.mode,
            "format": self.format,
            "respondents": self.respondents,
            "out_dir": str(self.out_dir),
            "files": [str(path) for path in self.files],
            "key_file": None if self.key_file is None else str(self.key_file),
            "seeded": self.seeded,
            "groups": {name[g]: n for g, n in self.group_counts.items()},
            "audit": {"tallied": self.tallied,
                      "minimum_per_group": AUDIT_MINIMUM_PER_GROUP},
        }


def audit_keeps_totals(mode: str, group_counts: Mapping[int, int]) -> bool:
    """Whether a run's instruction totals may be kept for the randomizer audit.

    Only slips mode draws instructions, and only a run with at least
    :data:`~surveykit.definition.limits.AUDIT_MINIMUM_PER_GROUP` respondents
    in every group (form version) keeps their totals: comparing the database
    before and after a smaller run would read its respondents' instructions.

    >>> audit_keeps_totals("slips", {1: 50}), audit_keeps_totals("slips", {1: 60, 2: 49})
    (True, False)
    """
    return (mode == "slips" and bool(group_counts)
            and min(group_counts.values()) >= AUDIT_MINIMUM_PER_GROUP)


def _check_count(name: str, value: object, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ParameterError(f"{name} ({value!r}) must be a whole number >= {minimum}")
    return int(value)


def _check_out_dir(out_dir: Path) -> None:
    """The --out folder: creatable or empty of earlier questionnaires (checked up front)."""
    output_folder(out_dir, "--out")
    earlier = sorted(path.name for stem in _STEMS.values() for path in out_dir.glob(f"{stem}-*"))
    if earlier:
        raise ParameterError(
            f"--out {str(out_dir)!r} already holds {earlier[0]} from an earlier run; "
            "choose a new folder so that questionnaires of two runs do not mix"
        )


def _publish(staging: Path, out_dir: Path, files: tuple[Path, ...]) -> tuple[Path, ...]:
    """Move the finished files from the staging folder into ``out_dir`` (created if missing)."""
    if not out_dir.exists():
        staging.rename(out_dir)
        return tuple(out_dir / path.name for path in files)
    moved = []
    for path in files:
        target = out_dir / path.name
        path.rename(target)
        moved.append(target)
    staging.rmdir()
    return tuple(moved)


def check_key_file(key_file: Path, out_dir: Path) -> None:
    if key_file.resolve().is_relative_to(out_dir.resolve()):
        raise ParameterError(
            f"--key-file {str(key_file)!r} is inside the --out folder {str(out_dir)!r}, "
            "which goes to the field; write the key file somewhere else"
        )
    output_file(key_file, "--key-file")


def _open_key_file(key_file: Path):
    resolved = key_file.resolve()
    try:
        # O_EXCL: never overwrite an earlier key; 0o600: readable by its owner only.
        descriptor = os.open(resolved, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise ParameterError(
            f"--key-file {str(key_file)!r} already exists; choose a new file name"
        ) from None
    except OSError as exc:
        raise ParameterError(f"--key-file {str(key_file)!r}: {exc.strerror}") from None
    return open(descriptor, "w", newline="", encoding="utf-8")


def write_questionnaires(
    survey,
    *,
    respondents: int,
    out_dir: str | Path,
    mode: str = "slips",
    fmt: str = "html",
    key_file: str | Path | None = None,
    rng: RandomSource | None = None,
    templates_dir: str | Path | None = None,
    per_file: int = DEFAULT_PER_FILE,
    progress: Callable[[int], None] | None = None,
) -> GenerationResult:
    """Render ``respondents`` questionnaires of ``survey`` into ``out_dir``; no database.

    ``rng=None`` draws ids, groups and instructions from operating-system
    entropy. ``progress`` is called with the number of respondents finished
    after every file batch. The files are written to a hidden staging folder
    beside ``out_dir`` and moved there only when all are written; on any error
    the files created so far are removed and ``out_dir`` stays as it was.
    """
    result, staging, _ = _write_staged(survey, respondents=respondents, out_dir=out_dir,
                                       mode=mode, fmt=fmt, key_file=key_file, rng=rng,
                                       templates_dir=templates_dir, per_file=per_file,
                                       progress=progress)
    return _finish(result, staging)


def _finish(result: GenerationResult, staging: Path) -> GenerationResult:
    """Publish the staged files; on failure remove them (and the key file)."""
    try:
        files = _publish(staging, result.out_dir, result.files)
    except BaseException:
        _discard(result, staging)
        raise
    return replace(result, files=files)


def _discard(result: GenerationResult, staging: Path) -> None:
    extra = [result.key_file] if result.key_file is not None else []
    remove_created([*result.files, *staging.glob("*"), *extra], [staging])


def _write_staged(survey, *, respondents, out_dir, mode, fmt, key_file, rng, templates_dir,
                  per_file, progress) -> tuple[GenerationResult, Path, _Tallies]:
    """Write the files into a staging folder; the result, the folder and the run's
    instruction totals (kept apart from the result: only the store may receive them)."""
    respondents = _check_count("respondents", respondents)
    per_file = _check_count("per_file", per_file)
    if mode not in MODES:
        raise ParameterError(f"mode ({mode!r}) must be one of {', '.join(MODES)}")
    if fmt not in FORMATS:
        raise ParameterError(f"format ({fmt!r}) must be one of {', '.join(FORMATS)}")
    if key_file is not None and mode != "slips":
        raise ParameterError(
            "--key-file needs --mode slips: in die mode respondents roll their own dice, "
            "so no codes exist to write down"
        )
    environment = make_environment(templates_dir)
    layout = build_layout(survey, mode=mode, wording_defaults=load_wording_defaults(environment))
    templates = {part: get_template(environment, part, fmt) for part in _PARTS[mode]}
    out_dir = Path(out_dir)
    _check_out_dir(out_dir)
    key_path = None if key_file is None else Path(key_file)
    if key_path is not None:
        check_key_file(key_path, out_dir)
    parent = out_dir.parent if str(out_dir.parent) else Path(".")
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.partial-", dir=parent))

    created: list[Path] = []
    key_stream = None
    try:
        if key_path is not None:
            key_stream = _open_key_file(key_path)
            created.append(key_path)
        groups = balanced_groups(respondents, len(layout.groups), rng=rng)
        writer = _BatchWriter(layout, [q.design for q in survey.questions], templates,
                              staging, fmt, rng, key_stream, created)
        done = 0
        while done < respondents:
            size = min(per_file, respondents - done)
            writer.write(groups[done:done + size])
            done += size
            if progress is not None:
                progress(size)
    except BaseException:
        if key_stream is not None:
            key_stream.close()
        remove_created(created, [staging])
        raise
    if key_stream is not None:
        key_stream.close()
    return GenerationResult(
        survey=survey.name, mode=mode, format=fmt, respondents=respondents, out_dir=out_dir,
        files=tuple(p for p in created if p != key_path), key_file=key_path,
        seeded=isinstance(rng, np.random.Generator),
        group_names=tuple(g.name for g in layout.groups),
        group_counts={g.number: int(n) for g, n in zip(
            layout.groups, np.bincount(groups, minlength=len(layout.groups)), strict=True)},
        respondent_ids=tuple(writer.issued), respondent_groups=tuple(writer.issued_groups),
    ), staging, writer.tallies()


class _BatchWriter:
    """Draws, renders and writes one batch of respondents at a time; keeps only ids, groups
    and instruction counts."""

    def __init__(self, layout: QuestionnaireLayout, designs, templates, out_dir: Path,
                 fmt: str, rng, key_stream, created: list[Path]) -> None:
        self.layout = layout
        self.templates = templates
        self.out_dir = out_dir
        self.extension = FORMATS[fmt]
        self.rng = rng
        self.created = created
        self.batch = 0
        self.issued: dict[str, None] = {}
        self.issued_groups: list[int] = []
        self.group_count = len(layout.groups)
        # slips mode draws one instruction per respondent and question; die mode none
        self.designs = designs if layout.mode == "slips" else None
        self.protocols = ([question_protocols(d, self.group_count) for d in designs]
                          if self.designs is not None else [])
        width = max([len(p) for protocols in self.protocols for p in protocols] or [1])
        self.width = width
        # counts[j, g, i]: instruction i of question j issued in group g
        self.counts = np.zeros((len(self.protocols), self.group_count, width), dtype=np.int64)
        self.key_writer = None
        if key_stream is not None:
            self.key_writer = csv.writer(key_stream)
            self.key_writer.writerow(KEY_FILE_COLUMNS)

    def write(self, groups: np.ndarray) -> None:
        self.batch += 1
        size = len(groups)
        # pages of one form version together: a pile per group in every file
        groups = np.sort(groups)
        ids = new_respondent_ids(size, rng=self.rng, exclude=self.issued.keys())
        self.issued.update(dict.fromkeys(ids))
        self.issued_groups += (groups + 1).tolist()
        group_list = groups.tolist()
        context = {"layout": self.layout, "respondent_ids": ids,
                   "pages": self.layout.pages(ids, group_list)}
        if self.designs is not None:
            drawn = draw_instruction_matrix(self.designs, groups, rng=self.rng)
            self._count(drawn, groups)
            rows = drawn.tolist()
            numbers = self._draw_numbers(size)
            context["slips"] = [
                self.layout.slip(g, row, [None if column is None else
                                          {name: values[r] for name, values in column.items()}
                                          for column in numbers])
                for r, (g, row) in enumerate(zip(group_list, rows, strict=True))]
            if self.key_writer is not None:
                self.key_writer.writerows(
                    (rid, g + 1, line.question.id, line.code)
                    for rid, g, slip in zip(ids, group_list, context["slips"], strict=True)
                    for line in slip.lines)
        for part, template in self.templates.items():
            path = self.out_dir / f"{_STEMS[part]}-{self.batch:05d}.{self.extension}"
            self.created.append(path)
            with open(path, "x", encoding="utf-8") as stream:
                render_to(stream, template, context)

    def _draw_numbers(self, size: int) -> list[dict | None]:
        """Per question, each numeric question's scrambling numbers for ``size`` respondents
        (every scrambler for everybody; a slip prints those its rule uses), as printed."""
        out: list[dict | None] = []
        for j, decimals in enumerate(self.layout.number_draws or [None] * len(self.designs)):
            if decimals is None:
                out.append(None)
                continue
            scramblers = self.designs[j].scramblers
            out.append({name: draw_numbers(scramblers[name], size, decimals=places,
                                           rng=self.rng)
                        for name, places in decimals.items()})
        return out

    def _count(self, drawn: np.ndarray, groups: np.ndarray) -> None:
        cells = self.group_count * self.width
        for j in range(drawn.shape[1]):
            flat = groups * self.width + drawn[:, j]
            self.counts[j] += np.bincount(flat, minlength=cells).reshape(
                self.group_count, self.width)

    def tallies(self) -> dict[str, dict[int, dict[str, int]]]:
        """question -> group number -> instruction code -> count (protocol order)."""
        result: dict[str, dict[int, dict[str, int]]] = {}
        for j, protocols in enumerate(self.protocols):
            question = self.layout.questions[j].id
            per_group: dict[int, dict[str, int]] = {}
            for g, instructions in enumerate(protocols):
                counts: dict[str, int] = {}
                for i, instruction in enumerate(instructions):
                    counts[instruction.code] = counts.get(instruction.code, 0) + int(
                        self.counts[j, g, i])
                per_group[g + 1] = counts
            result[question] = per_group
        return result


def issue_questionnaires(survey: Survey, record: Callable[..., None], *,
                         rng: RandomSource | None = None, **options) -> GenerationResult:
    """Write ``survey``'s questionnaires, have ``record`` put them on record, then publish them.

    ``options`` are those of :func:`write_questionnaires` (respondents, out_dir,
    mode, fmt, key_file, templates_dir, per_file, progress). The files are
    written to a staging folder; ``record(respondent_ids, tallies, groups=...)``
    then receives the issued ids, their groups (None for a one-group survey)
    and, when :func:`audit_keeps_totals` allows it, the run's instruction
    counts per question and group (else ``{}``); if it raises, the files are
    removed again. Only after it returned are the files moved into ``out_dir``.
    :func:`surveykit.workflows.generate.generate_questionnaires` records into
    the store.
    """
    options = {"mode": "slips", "fmt": "html", "key_file": None, "templates_dir": None,
               "per_file": DEFAULT_PER_FILE, "progress": None, **options}
    result, staging, drawn = _write_staged(survey, rng=rng, **options)
    try:
        tallied = audit_keeps_totals(result.mode, result.group_counts)
        tallies = {question: {g: {code: n for code, n in counts.items() if n}
                              for g, counts in groups.items()}
                   for question, groups in drawn.items()} if tallied else {}
        groups = list(result.respondent_groups) if len(result.group_names) > 1 else None
        record(result.respondent_ids, tallies, groups=groups)
        result = replace(result, tallied=tallied)
    except BaseException:
        _discard(result, staging)
        raise
    # the ids are issued: from here on a failure leaves the files in the staging folder,
    # which the error names, rather than deleting questionnaires that are on record
    try:
        files = _publish(staging, result.out_dir, result.files)
    except OSError as exc:
        raise OutputError(
            f"the {result.respondents} respondent ids are issued, but moving their "
            f"questionnaires from {staging} to {result.out_dir} failed ({exc.strerror}); "
            f"move the files by hand") from None
    return replace(result, files=files)
