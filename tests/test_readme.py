"""The README's Quick start: exactly two one-line commands that really work."""

import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def quick_start_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = re.search(r"^## Quick start\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert section, "README.md has no '## Quick start' section"
    blocks = re.findall(r"^```[a-z]*\n(.*?)^```", section.group(1), re.S | re.M)
    return [block.strip() for block in blocks]


def test_quick_start_has_exactly_two_one_line_commands():
    commands = quick_start_commands()
    assert len(commands) == 2
    assert all("\n" not in command for command in commands)
    assert "surveykit demo" in commands[0] or "surveykit estimate" in commands[0]
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_command_verbatim():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert quick_start_commands()[1] in ci


def test_first_command_works_from_a_clean_copy(tmp_path):
    """Run the first command verbatim in a new virtual environment and a copy of the tree.

    The environment sees the already installed dependencies (system site
    packages) so the test needs no download beyond the build backend, but
    surveykit itself is built and installed from the copy, non-editable.
    """
    copy = tmp_path / "checkout"
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                             check=True).stdout.decode().split("\0")
    for name in filter(None, tracked):
        source = ROOT / name
        if source.is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / name)
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=True).create(env_dir)
    env = dict(os.environ)
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env['PATH']}"
    env["VIRTUAL_ENV"] = str(env_dir)
    env.pop("PYTHONPATH", None)
    env.pop("SURVEYKIT_DB", None)
    result = subprocess.run(["bash", "-c", quick_start_commands()[0]], cwd=copy, env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    installed = subprocess.run(
        [str(env_dir / "bin" / "python"), "-c", "import surveykit; print(surveykit.__file__)"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=True,
    ).stdout
    assert str(env_dir) in installed, "the command did not install surveykit into the venv"
    assert "pi_mle" in result.stdout or "Estimate" in result.stdout or "pi" in result.stdout
    assert sys.version_info >= (3, 11)
