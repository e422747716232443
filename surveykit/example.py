"""The example survey and its answers, copied into a folder to try surveykit by hand.

``surveykit init --example`` writes them next to the new database, so the
README's commands work from an empty folder with an installed copy:
``academic_integrity.toml`` (the survey: four questions, three designs,
aliases) and the answers field teams brought back, in both layouts,
``responses_long.csv`` and ``responses_wide.csv``.
"""

from __future__ import annotations

from pathlib import Path

from surveykit.errors import OutputError
from surveykit.files import output_folder, write_atomically
from surveykit.resources import locate_resource

__all__ = ["EXAMPLE_FILES", "check_example", "write_example"]

#: The example's files, in the order a newcomer uses them.
EXAMPLE_FILES: tuple[str, ...] = ("academic_integrity.toml", "responses_long.csv",
                                  "responses_wide.csv")


def check_example(folder: str | Path = ".") -> list[str]:
    """The example files ``folder`` still lacks; an OutputError if one exists with other
    content (it is never overwritten), so nothing is written unless all can be.

    >>> import tempfile
    >>> check_example(tempfile.mkdtemp())
    ['academic_integrity.toml', 'responses_long.csv', 'responses_wide.csv']
    """
    folder = output_folder(folder, "the folder")
    source = locate_resource("sample_data")
    missing = []
    for name in EXAMPLE_FILES:
        target = folder / name
        if not target.exists():
            missing.append(name)
        elif not target.is_file() or target.read_bytes() != (source / name).read_bytes():
            raise OutputError(
                f"{target} already exists and is not surveykit's example; nothing was "
                "written: move it away or run 'surveykit init --example' in another folder")
    return missing


def write_example(folder: str | Path = ".") -> list[Path]:
    """Copy the example survey and its answers into ``folder``; returns the files written
    (files already there with the example's content are left as they are)."""
    folder = Path(folder)
    source = locate_resource("sample_data")
    written = []
    for name in check_example(folder):
        with write_atomically(folder / name, "wb") as stream:
            stream.write((source / name).read_bytes())
        written.append(folder / name)
    return written
