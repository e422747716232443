"""Generate a survey's questionnaires: ids, codes, files, and the database record.

The work streams in batches of ``per_file`` respondents (500 by default): for
each batch new respondent ids and codes are drawn, one file per part is
rendered straight to disk, and only the ids and the per-question code counts
are kept. 100,000 questionnaires are 200 files per part, none held in memory.

Files in ``out_dir`` (``NNNNN`` is the batch number, from 00001):

* slips mode: ``sheets-NNNNN.{html,md}`` (answer sheets, with ids: these are
  handed in) and ``slips-NNNNN.{html,md}`` (private instruction slips, no ids:
  respondents keep them);
* die mode: ``forms-NNNNN.{html,md}`` (one self-randomized form per id).

Privacy (docs/questionnaires.md): codes go only to the slips and, if asked for
explicitly, to a key file; the database receives the issued ids and aggregate
code counts per question, never a code next to an id.

If anything fails, the files this run created are removed and the database is
left as it was (the store records a generation in one transaction, last).
"""

from __future__ import annotations

import csv
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from surveykit.collection.questionnaire import MODES, QuestionnaireLayout, build_layout, build_slip
from surveykit.collection.randomizer import CODES, RandomSource, draw_code_matrix, seeded_source
from surveykit.collection.render import (
    FORMATS,
    get_template,
    load_wording_defaults,
    make_environment,
    render_to,
)
from surveykit.collection.respondent_ids import new_respondent_ids
from surveykit.errors import ParameterError

__all__ = [
    "DEFAULT_PER_FILE",
    "KEY_FILE_WARNING",
    "GenerationResult",
    "generate_questionnaires",
    "write_questionnaires",
]

DEFAULT_PER_FILE = 500
KEY_FILE_COLUMNS = ("respondent_id", "question_id", "code")
KEY_FILE_WARNING = (
    "Warning: the key file {path} links every respondent id to their codes and undoes "
    "the protection of randomized response. Keep it apart from the answers (another "
    "machine or an encrypted volume, never in the folder that goes to the field or to "
    "the analyst) and delete it when the audit is done."
)
# File name stem of each template part; die-mode forms are named for what they are.
_STEMS = {"slips": "slips", "sheets": "sheets", "die": "forms"}
_PARTS = {"slips": ("sheets", "slips"), "die": ("die",)}


@dataclass(frozen=True)
class GenerationResult:
    """What a generation wrote. ``code_tallies[question_id][code]`` are aggregate counts
    (empty in die mode, where respondents roll their own dice)."""

    survey: str
    mode: str
    format: str
    respondents: int
    out_dir: Path
    files: tuple[Path, ...]
    key_file: Path | None
    seeded: bool
    code_tallies: Mapping[str, Mapping[str, int]]
    respondent_ids: tuple[str, ...] = field(repr=False)

    def to_dict(self) -> dict:
        """Plain JSON-ready data (ids and codes are not included)."""
        return {
            "survey": self.survey,
            "mode": self.mode,
            "format": self.format,
            "respondents": self.respondents,
            "out_dir": str(self.out_dir),
            "files": [str(path) for path in self.files],
            "key_file": None if self.key_file is None else str(self.key_file),
            "seeded": self.seeded,
            "code_tallies": {q: dict(t) for q, t in self.code_tallies.items()},
        }


def _check_count(name: str, value: object, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ParameterError(f"{name} ({value!r}) must be a whole number >= {minimum}")
    return int(value)


def _prepare_out_dir(out_dir: Path) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise ParameterError(f"--out {str(out_dir)!r} is a file; give a folder")
    out_dir.mkdir(parents=True, exist_ok=True)
    earlier = sorted(path.name for stem in _STEMS.values() for path in out_dir.glob(f"{stem}-*"))
    if earlier:
        raise ParameterError(
            f"--out {str(out_dir)!r} already holds {earlier[0]} from an earlier run; "
            "choose a new folder so that questionnaires of two runs do not mix"
        )


def _open_key_file(key_file: Path, out_dir: Path):
    resolved = key_file.resolve()
    if resolved.is_relative_to(out_dir.resolve()):
        raise ParameterError(
            f"--key-file {str(key_file)!r} is inside the --out folder {str(out_dir)!r}, "
            "which goes to the field; write the key file somewhere else"
        )
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

    ``rng=None`` draws ids and codes from operating-system entropy. ``progress``
    is called with the number of respondents finished after every file batch.
    On any error the files created so far are removed.
    """
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
    _prepare_out_dir(out_dir)

    created: list[Path] = []
    key_path = None if key_file is None else Path(key_file)
    key_stream = None
    try:
        if key_path is not None:
            key_stream = _open_key_file(key_path, out_dir)
            created.append(key_path)
        mechanisms = [question.mechanism for question in survey.questions]
        tallies, issued = _write_batches(layout, mechanisms, templates, out_dir, fmt,
                                         respondents, per_file, rng, key_stream, created,
                                         progress)
    except BaseException:
        if key_stream is not None:
            key_stream.close()
        for path in created:
            path.unlink(missing_ok=True)
        raise
    if key_stream is not None:
        key_stream.close()
    return GenerationResult(
        survey=survey.name, mode=mode, format=fmt, respondents=respondents, out_dir=out_dir,
        files=tuple(p for p in created if p != key_path), key_file=key_path,
        seeded=isinstance(rng, np.random.Generator), code_tallies=tallies,
        respondent_ids=tuple(issued),
    )


def _write_batches(layout: QuestionnaireLayout, mechanisms, templates, out_dir: Path,
                   fmt: str, respondents: int, per_file: int, rng, key_stream,
                   created: list[Path], progress) -> tuple[dict, dict]:
    question_ids = [q.id for q in layout.questions]
    tallies: dict[str, dict[str, int]] = {}
    if layout.mode == "slips":
        tallies = {q: dict.fromkeys(CODES, 0) for q in question_ids}
    else:
        mechanisms = None  # respondents roll their own dice: nothing to draw
    key_writer = None
    if key_stream is not None:
        key_writer = csv.writer(key_stream)
        key_writer.writerow(KEY_FILE_COLUMNS)
    issued: dict[str, None] = {}
    done = 0
    batch = 0
    extension = FORMATS[fmt]
    while done < respondents:
        batch += 1
        size = min(per_file, respondents - done)
        ids = new_respondent_ids(size, rng=rng, exclude=issued.keys())
        issued.update(dict.fromkeys(ids))
        context = {"layout": layout, "respondent_ids": ids}
        if mechanisms is not None:
            codes = draw_code_matrix(mechanisms, size, rng=rng)
            for j, question_id in enumerate(question_ids):
                column = codes[:, j]
                for code in CODES:
                    tallies[question_id][code] += int(np.count_nonzero(column == code))
            context["slips"] = [build_slip(layout, row) for row in codes.tolist()]
            if key_writer is not None:
                key_writer.writerows(
                    (rid, qid, code)
                    for rid, row in zip(ids, codes.tolist(), strict=True)
                    for qid, code in zip(question_ids, row, strict=True)
                )
        for part, template in templates.items():
            path = out_dir / f"{_STEMS[part]}-{batch:05d}.{extension}"
            created.append(path)
            with open(path, "x", encoding="utf-8") as stream:
                render_to(stream, template, context)
        done += size
        if progress is not None:
            progress(size)
    return tallies, issued


def generate_questionnaires(engine, survey_name: str, *, seed: int | None = None,
                            **options) -> GenerationResult:
    """Load the survey from the store, write its questionnaires, record the generation.

    ``options`` are those of :func:`write_questionnaires` (respondents, out_dir,
    mode, fmt, key_file, templates_dir, per_file, progress). With ``seed`` the
    ids and codes are reproducible (tests only: see
    :data:`surveykit.collection.randomizer.SEED_WARNING`); otherwise they come from
    operating-system entropy. The store then registers the issued ids and adds
    the aggregate code counts in one transaction; if that fails, the files are
    removed again.
    """
    from surveykit import store

    survey = store.load_survey(engine, survey_name)
    rng = None if seed is None else seeded_source(seed)
    result = write_questionnaires(survey, rng=rng, **options)
    try:
        # the store counts instructions by name, per group (one group here)
        names = {"T": "truthful", "L": "opposite", "D": "dont_know"}
        tallies = {question: {1: {names[code]: n for code, n in counts.items() if n}}
                   for question, counts in result.code_tallies.items()}
        store.record_generation(engine, survey_name, result.respondent_ids, tallies)
    except BaseException:
        for path in (*result.files, result.key_file):
            if path is not None:
                path.unlink(missing_ok=True)
        raise
    return result
