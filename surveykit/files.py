"""Files and folders a command will write, checked before any work is done.

A report that takes a minute to build should not fail at the very end
because ``--out nodir/report.html`` names a folder that does not exist; and
a command that fails must not leave a half-written file behind. So every
output path goes through :func:`output_file` or :func:`output_folder` first,
and files are written whole through :func:`write_atomically` (a temporary file
in the same folder, renamed over the target at the end).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from surveykit.errors import OutputError, ParameterError

__all__ = ["output_file", "output_folder", "remove_created", "write_atomically"]


def _folder_of(path: Path) -> Path:
    return path.parent if str(path.parent) else Path(".")


def output_file(path: str | os.PathLike, option: str, *, suffixes: tuple[str, ...] = ()
                ) -> Path:
    """``path`` as a Path, or an OutputError naming ``option`` when it cannot be written.

    Its folder must exist and be writable and it must not be a folder itself;
    ``suffixes`` (e.g. ``(".png", ".svg")``) are the endings allowed (another
    ending is a ParameterError: a usage mistake, not the file system's).

    >>> output_file("report.html", "--out")
    PosixPath('report.html')
    >>> output_file("no/such/folder/report.html", "--out")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    surveykit.errors.OutputError: --out no/such/folder/report.html: the folder ... does not exist...
    """
    path = Path(path)
    if suffixes and path.suffix.lower() not in suffixes:
        raise ParameterError(f"{option} {path} must end in {_either(suffixes)}")
    if path.is_dir():
        raise OutputError(f"{option} {path} is a folder; give a file name inside it, e.g. "
                          f"{path / ('out' + (suffixes[0] if suffixes else ''))}")
    _check_folder(_folder_of(path), path, option)
    if path.exists() and not os.access(path, os.W_OK):
        raise OutputError(f"{option} {path}: the file exists and is read-only; make it "
                          f"writable (chmod u+w {path}) or choose another path")
    return path


def output_folder(path: str | os.PathLike, option: str) -> Path:
    """``path`` as a Path after checking that it is, or can become, a writable folder.

    The folder itself may be missing (the command creates it); its parent
    must exist, so that a typo does not silently create a tree of folders.
    """
    path = Path(path)
    if path.exists():
        if not path.is_dir():
            raise OutputError(f"{option} {path} is a file; give a folder")
        if not os.access(path, os.W_OK | os.X_OK):
            raise OutputError(f"{option} {path}: the folder is not writable; choose a folder "
                              "you can write to")
        return path
    _check_folder(_folder_of(path), path, option)
    return path


def _check_folder(folder: Path, path: Path, option: str) -> None:
    if not folder.exists():
        raise OutputError(f"{option} {path}: the folder {folder} does not exist; create it "
                          f"(mkdir -p {folder}) or choose another path")
    if not folder.is_dir():
        raise OutputError(f"{option} {path}: {folder} is a file, not a folder; choose "
                          "another path")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"{option} {path}: the folder {folder} is not writable; choose a "
                          "folder you can write to")


def _either(suffixes: tuple[str, ...]) -> str:
    return ", ".join(suffixes[:-1]) + f" or {suffixes[-1]}" if len(suffixes) > 1 \
        else suffixes[0]


@contextlib.contextmanager
def write_atomically(path: str | os.PathLike, mode: str = "w", *,
                     encoding: str | None = "utf-8", newline: str | None = None
                     ) -> Iterator[IO]:
    """Open a temporary file beside ``path``; on success it replaces ``path``, on any error it
    is removed and ``path`` stays as it was."""
    path = Path(path)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part",
                                             dir=_folder_of(path))
    binary = "b" in mode
    try:
        with open(descriptor, mode, encoding=None if binary else encoding,
                  newline=None if binary else newline) as stream:
            yield stream
        # mkstemp creates 0600; the result gets the usual permissions (umask)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def remove_created(files: list[Path], folders: list[Path]) -> None:
    """Remove ``files`` and then ``folders`` (innermost first) if they are empty: what a
    failed command created, so that it leaves nothing behind."""
    for path in files:
        with contextlib.suppress(OSError):
            path.unlink()
    for folder in sorted(folders, key=lambda f: len(f.parts), reverse=True):
        with contextlib.suppress(OSError):
            folder.rmdir()
