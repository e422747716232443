"""Run the installed ``surveykit`` with its stderr on a pseudo-terminal, as a person sees it
(progress bars draw only on a terminal), and read what that terminal was shown."""

from __future__ import annotations

import os
import pty
import shutil
import subprocess


def run_on_a_terminal(*args: str, timeout: float = 120) -> tuple[subprocess.CompletedProcess,
                                                                   bytes]:
    """The finished command (stdout captured as text) and the bytes its terminal showed."""
    executable = shutil.which("surveykit")
    assert executable, "surveykit is not installed (pip install -e '.[test]')"
    controller, terminal = pty.openpty()
    try:
        completed = subprocess.run([executable, *args], stdout=subprocess.PIPE, stderr=terminal,
                                   text=True, timeout=timeout, check=False)
        os.close(terminal)
        shown = b""
        while True:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # the terminal side is closed: everything was read
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(controller)
    return completed, shown
