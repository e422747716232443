"""The README: a Quick start of exactly two one-line commands, and a walk-through that runs.

The Quick start's first command and the walk-through run against surveykit built and
installed (non-editable) from a copy of the tracked tree into a new virtual environment,
once per module (the ``installed`` fixture), with PYTHONPATH and SURVEYKIT_DB removed so
the checkout and the developer's database stay out of it.

How the walk-through test reads README.md. Every fenced block outside the Quick start
runs, in order, in one new empty folder:

* ```console: each line starting with "$ " is a command (a line ending in " \\" goes on
  with the next), run with bash in the folder. The lines after it, up to the next "$ "
  line, are its output (stdout, then stderr). The command must exit with status 0 and
  print exactly that output, compared after this normalization:
    - trailing spaces of each line are ignored, and so is a missing final newline;
    - a line that is only "..." stands for any number of lines, none included;
    - "..." inside a line stands for any text within that line.
  Only what legitimately differs between runs is written "...": random instruction
  counts, ids, times, paths. A command with no output lines must print nothing.
* ```python: the block runs as a script with the environment's python (exit status 0).
* ```pycon: the block runs as a doctest with the environment's python (ELLIPSIS, so
  "..." means the same, and NORMALIZE_WHITESPACE).
* A block right after the line "<!-- not run: REASON -->" is not run; NOT_RUN lists
  them by their first command, and the test fails if that list changes.
* Other languages (toml, text, ...) are text. A block without a language is refused
  outside the Quick start, so no shell block escapes this test.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import subprocess
import sys
import venv
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

#: The blocks the walk-through test does not run, by their first command (in README order),
#: and why (the README's "<!-- not run: ... -->" line says it in short).
NOT_RUN = {
    "pip install .": "installs packages (the fixture installs surveykit itself)",
    "surveykit serve --survey academic_integrity --close-at 2030-06-01T18:00":
        "starts a server that runs until Ctrl+C (tests/test_serve_cli.py runs it)",
}
RUN_LANGUAGES = {"console", "python", "pycon"}
TEXT_LANGUAGES = {"toml", "text", "markdown", "csv", "json"}


@dataclass(frozen=True)
class Block:
    language: str
    text: str
    line: int            # of the opening fence, 1-based
    not_run: str | None  # the reason of a "<!-- not run: ... -->" line right before it


def quick_start_commands() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = re.search(r"^## Quick start\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert section, "README.md has no '## Quick start' section"
    blocks = re.findall(r"^```[a-z]*\n(.*?)^```", section.group(1), re.S | re.M)
    return [block.strip() for block in blocks]


def readme_blocks() -> list[Block]:
    """The fenced blocks of README.md after the Quick start section, in order."""
    lines = README.read_text(encoding="utf-8").splitlines()
    blocks, section, number = [], None, 0
    while number < len(lines):
        line = lines[number]
        if line.startswith("## "):
            section = line[3:].strip()
        fence = re.match(r"^```(\S*)\s*$", line)
        if not fence:
            number += 1
            continue
        end = number + 1
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        assert end < len(lines), f"README.md line {number + 1}: the block is never closed"
        if section != "Quick start":
            previous = next((lines[i] for i in range(number - 1, -1, -1) if lines[i].strip()),
                            "")
            reason = re.fullmatch(r"<!-- not run: (.+?) -->", previous.strip())
            blocks.append(Block(fence.group(1), "\n".join(lines[number + 1:end]) + "\n",
                                number + 1, reason.group(1) if reason else None))
        number = end + 1
    return blocks


def console_steps(block: Block) -> list[tuple[str, list[str]]]:
    """(command, expected output lines) for each "$ " line of a console block."""
    steps: list[tuple[str, list[str]]] = []
    lines = block.text.splitlines()
    assert lines and lines[0].startswith("$ "), (
        f"README.md line {block.line}: a console block starts with a '$ ' command")
    number = 0
    while number < len(lines):
        command = lines[number][2:]
        while command.endswith(" \\"):
            number += 1
            command = command[:-1] + lines[number].lstrip("> ")
        number += 1
        output = []
        while number < len(lines) and not lines[number].startswith("$ "):
            output.append(lines[number])
            number += 1
        steps.append((command, output))
    return steps


def output_pattern(expected: list[str]) -> re.Pattern[str]:
    """The README convention as a regular expression (see the module docstring)."""
    parts = []
    for line in expected:
        line = line.rstrip()
        if line == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*".join(re.escape(piece) for piece in line.split("...")) + r"\n")
    return re.compile("".join(parts))


def normalized(output: str) -> str:
    text = "\n".join(line.rstrip() for line in output.splitlines())
    return text + "\n" if text else ""


def test_output_pattern_follows_the_convention():
    pattern = output_pattern(["issued 3 ids", "truthful ..., opposite ...", "...", "end"])
    assert pattern.fullmatch("issued 3 ids\ntruthful 17, opposite 5\nend\n")
    assert pattern.fullmatch("issued 3 ids\ntruthful 1, opposite 2\na\nb\nend\n")
    assert not pattern.fullmatch("issued 4 ids\ntruthful 1, opposite 2\nend\n")
    assert not pattern.fullmatch("issued 3 ids\ntruthful 1\nopposite 2\nend\n")
    assert output_pattern([]).fullmatch(normalized(""))
    assert not output_pattern([]).fullmatch(normalized("something\n"))


def test_quick_start_has_exactly_two_one_line_commands():
    commands = quick_start_commands()
    assert len(commands) == 2
    assert all("\n" not in command for command in commands)
    assert "surveykit demo" in commands[0] or "surveykit estimate" in commands[0]
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_command_verbatim():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert quick_start_commands()[1] in ci


def test_every_readme_block_outside_the_quick_start_has_a_language():
    for block in readme_blocks():
        assert block.language in RUN_LANGUAGES | TEXT_LANGUAGES, (
            f"README.md line {block.line}: block language {block.language!r}; use console, "
            f"python or pycon for what runs, or one of {sorted(TEXT_LANGUAGES)}")


def test_every_guide_ships_with_the_package_and_the_readme_links_it():
    """Each docs/*.md is a 'surveykit docs' topic, in the wheel, and linked from the README."""
    import tomllib

    from surveykit.guides import TOPICS

    guides = sorted(path.stem for path in (ROOT / "docs").glob("*.md"))
    assert sorted(TOPICS) == guides
    with open(ROOT / "pyproject.toml", "rb") as stream:
        shipped = tomllib.load(stream)["tool"]["hatch"]["build"]["targets"]["wheel"][
            "force-include"]
    readme = README.read_text(encoding="utf-8")
    for topic in guides:
        assert shipped.get(f"docs/{topic}.md") == f"surveykit/docs/{topic}.md", topic
        assert f"](docs/{topic}.md)" in readme, f"README.md does not link docs/{topic}.md"


def assert_guides_exist(text: str, where: str) -> None:
    """Pointers to guides are 'surveykit docs TOPIC' with a real topic, never a repository
    path (docs/x.md), which an installed copy does not have."""
    from surveykit.guides import TOPICS

    for topic in re.findall(r"surveykit\s+docs\s+([a-z][\w-]*)", text):
        assert topic in TOPICS, f"{where} points to 'surveykit docs {topic}', no such guide"
    assert not re.search(r"\bdocs/[\w-]+\.md", text), f"{where} names a repository path"


@dataclass(frozen=True)
class Installed:
    env_dir: Path
    env: dict[str, str]
    first_command: subprocess.CompletedProcess

    @property
    def python(self) -> str:
        return str(self.env_dir / "bin" / "python")


def installed_build_backend_satisfies_the_build_requirements() -> None:
    """The build backend installed here is one pyproject.toml's [build-system] allows: the
    ``installed`` fixture builds with it (no isolated build environment) instead of
    fetching one, so a requirement it does not meet must fail here, not pass unseen."""
    import tomllib
    from importlib.metadata import version

    from packaging.requirements import Requirement

    with open(ROOT / "pyproject.toml", "rb") as stream:
        requires = tomllib.load(stream)["build-system"]["requires"]
    for text in requires:
        requirement = Requirement(text)
        assert requirement.specifier.contains(version(requirement.name), prereleases=True), (
            f"installed {requirement.name} {version(requirement.name)} does not satisfy "
            f"the build requirement {text!r}")


def _pip_for(env_dir: Path) -> None:
    """``pip`` in the new environment: the console script ensurepip would write, running the
    pip installed here (which the environment sees) with the environment's python, so it
    installs into the environment. ensurepip copying its own pip in cost 11.7 s of CPU."""
    script = env_dir / "bin" / "pip"
    script.write_text(f"#!{env_dir / 'bin' / 'python'}\n"
                      "import sys\n"
                      "from pip._internal.cli.main import main\n"
                      "sys.exit(main())\n", encoding="utf-8")
    script.chmod(0o755)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    """A copy of the tracked tree, a new virtual environment, and the Quick start's first
    command run verbatim in the copy: it builds and installs surveykit (non-editable).

    The environment sees the already installed dependencies (system site packages), and
    pip builds with the installed build backend (PIP_NO_BUILD_ISOLATION; checked against
    [build-system] first) without any index, so nothing is downloaded: an isolated build
    environment fetched and installed hatchling on every run, 7.7 s of CPU, measured.
    """
    installed_build_backend_satisfies_the_build_requirements()
    base = tmp_path_factory.mktemp("readme")
    copy = base / "checkout"
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                             check=True).stdout.decode().split("\0")
    for name in filter(None, tracked):
        source = ROOT / name
        if source.is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / name)
    env_dir = base / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(env_dir)
    _pip_for(env_dir)
    env = dict(os.environ)
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env['PATH']}"
    env["VIRTUAL_ENV"] = str(env_dir)
    env.pop("PYTHONPATH", None)
    env.pop("SURVEYKIT_DB", None)
    # pip reads a false PIP_NO_BUILD_ISOLATION as --no-build-isolation (its option is a
    # store_false); PIP_NO_INDEX: every dependency must already be here, none is fetched
    install_env = {**env, "PIP_NO_BUILD_ISOLATION": "0", "PIP_NO_INDEX": "1"}
    result = subprocess.run(["bash", "-c", quick_start_commands()[0]], cwd=copy,
                            env=install_env, capture_output=True, text=True, timeout=600)
    return Installed(env_dir, env, result)


def test_first_command_works_from_a_clean_copy(installed, tmp_path):
    """The Quick start's first command, verbatim, installs surveykit and runs the demo."""
    result = installed.first_command
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    where = subprocess.run(
        [installed.python, "-c", "import surveykit; print(surveykit.__file__)"],
        cwd=tmp_path, env=installed.env, capture_output=True, text=True, check=True,
    ).stdout
    assert str(installed.env_dir) in where, "the command did not install surveykit into the venv"
    assert "pi_mle" in result.stdout
    assert_guides_exist(result.stdout + result.stderr, "surveykit demo")
    assert sys.version_info >= (3, 11)


def test_the_installed_copy_has_every_guide(installed, tmp_path):
    """'surveykit docs TOPIC' prints each guide from the installed package, as in docs/."""
    import json

    from surveykit.guides import TOPICS

    script = ("import json; from surveykit.guides import TOPICS, guide_path, guide_text; "
              "print(json.dumps({t: [str(guide_path(t)), guide_text(t)] for t in TOPICS}))")
    shown = json.loads(subprocess.run([installed.python, "-c", script], cwd=tmp_path,
                                      env=installed.env, capture_output=True, text=True,
                                      check=True).stdout)
    assert sorted(shown) == sorted(TOPICS)
    for topic, (path, text) in shown.items():
        assert path.startswith(str(installed.env_dir)), path
        assert text == (ROOT / "docs" / f"{topic}.md").read_text(encoding="utf-8"), topic
    command = subprocess.run(["surveykit", "docs", "designs"], cwd=tmp_path, env=installed.env,
                             capture_output=True, text=True, check=True)
    assert command.stdout == shown["designs"][1]


def test_the_installed_copy_ships_the_survey_file_schema(installed, tmp_path):
    """'surveykit schema' prints the JSON Schema from the installed package (issue 22)."""
    command = subprocess.run(["surveykit", "schema"], cwd=tmp_path, env=installed.env,
                             capture_output=True, text=True, check=True)
    shipped = ROOT / "surveykit" / "definition" / "survey.schema.json"
    assert command.stdout == shipped.read_text(encoding="utf-8")


def test_readme_walkthrough_runs_in_an_empty_folder_with_the_output_shown(installed,
                                                                       tmp_path):
    """Every block of the README after the Quick start, in order, in one new folder."""
    assert installed.first_command.returncode == 0, "surveykit did not install; see above"
    folder = tmp_path / "walkthrough"
    folder.mkdir()
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    where = subprocess.run([installed.python, "-c", "import surveykit; print(surveykit.__file__)"],
                           cwd=folder, env=installed.env, capture_output=True, text=True,
                           check=True).stdout
    assert str(installed.env_dir) in where, f"surveykit comes from {where}, not the venv"
    script = subprocess.run(["bash", "-c", "command -v surveykit"], cwd=folder,
                            env=installed.env, capture_output=True, text=True).stdout
    assert script.startswith(str(installed.env_dir)), f"'surveykit' is {script}, not the venv's"
    skipped, commands, printed = {}, 0, []
    for block in readme_blocks():
        where = f"README.md line {block.line}"
        if block.language not in RUN_LANGUAGES:
            continue
        if block.not_run is not None:
            first = block.text.splitlines()[0].removeprefix("$ ")
            skipped[re.sub(r"\s+#.*", "", first).strip()] = block.not_run
            continue
        if block.language == "console":
            for command, expected in console_steps(block):
                commands += 1
                result = subprocess.run(["bash", "-c", command], cwd=folder, env=installed.env,
                                        capture_output=True, text=True, timeout=300)
                output = normalized(result.stdout + result.stderr)
                printed.append(output)
                assert result.returncode == 0, (
                    f"{where}: '{command}' exited with status {result.returncode}:\n{output}")
                if not output_pattern(expected).fullmatch(output):
                    diff = "\n".join(difflib.unified_diff(
                        [line.rstrip() for line in expected], output.splitlines(),
                        "README.md", "printed", lineterm=""))
                    pytest.fail(f"{where}: '{command}' printed other output:\n{diff}")
        else:
            script = scripts / f"line{block.line}.{'txt' if block.language == 'pycon' else 'py'}"
            script.write_text(block.text, encoding="utf-8")
            argv = ([installed.python, "-m", "doctest", "-o", "ELLIPSIS", "-o",
                     "NORMALIZE_WHITESPACE", str(script)] if block.language == "pycon"
                    else [installed.python, str(script)])
            commands += 1
            result = subprocess.run(argv, cwd=folder, env=installed.env, capture_output=True,
                                    text=True, timeout=300)
            assert result.returncode == 0, (
                f"{where}: the {block.language} block failed:\n{result.stdout}{result.stderr}")
    assert_guides_exist("\n".join(printed), "the walk-through's output")
    assert list(skipped) == list(NOT_RUN), (
        f"the README's not-run blocks changed ({skipped}); keep them few and name them here")
    assert commands >= 15, f"only {commands} commands and blocks ran: is the walk-through there?"


# -- the second Quick start command: the test suite on a fresh clone (issue 22) ----------------


def _requirement_name(requirement: str) -> str:
    return re.split(r"[\[<>=!~; ]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def test_the_test_extra_holds_every_other_extra_and_click_has_an_upper_bound():
    """The README's test command installs only .[test]; the suite exercises every extra
    (counts --data needs duckdb, serve starlette, ...), so .[test] must hold them all. A new
    Click major version may remove what 8.x deprecates: the bound keeps a fresh install on 8."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    test = {_requirement_name(r) for r in extras["test"]}
    for extra, requirements in extras.items():
        missing = {_requirement_name(r) for r in requirements} - test
        assert not missing, f"the test extra lacks {sorted(missing)} of the {extra!r} extra"
    click = next(r for r in project["dependencies"] if _requirement_name(r) == "click")
    assert re.search(r"<\s*9\b", click), click


def test_the_package_uses_no_deprecated_click_stream_api():
    # click.get_text_stream and get_binary_stream are deprecated in Click 8.5; under the
    # suite's -W error any use failed three tests on a fresh clone
    used = [str(path.relative_to(ROOT)) for path in (ROOT / "surveykit").rglob("*.py")
            if re.search(r"get_(text|binary)_stream", path.read_text(encoding="utf-8"))]
    assert used == []


def test_the_readme_test_command_reports_durations():
    """The second command as written prints the slowest tests: pytest's addopts hold it."""
    import tomllib

    options = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    addopts = options["tool"]["pytest"]["ini_options"]["addopts"]
    assert quick_start_commands()[1].endswith("python -m pytest")
    assert "--durations=15" in addopts.split()


@pytest.fixture(scope="module")
def fresh_clone(tmp_path_factory) -> Installed:
    """``git clone`` of this repository's HEAD, a new virtual environment, and the second
    command's install step as written (``pip install -e ".[test]"``)."""
    base = tmp_path_factory.mktemp("clone")
    clone = base / "surveykit"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True,
                   capture_output=True, timeout=120)
    env_dir = base / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=True).create(env_dir)
    env = {**os.environ, "PATH": f"{env_dir / 'bin'}{os.pathsep}{os.environ['PATH']}",
           "VIRTUAL_ENV": str(env_dir)}
    for name in ("PYTHONPATH", "SURVEYKIT_DB"):
        env.pop(name, None)
    install = quick_start_commands()[1].split(" && ")[0]
    result = subprocess.run(["bash", "-c", install], cwd=clone, env=env, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return Installed(env_dir, env, result)


def _clone_of(installed: Installed) -> Path:
    return installed.env_dir.parent / "surveykit"


@pytest.mark.slow
def test_a_fresh_clone_installs_the_test_extra_and_collects_every_test(fresh_clone):
    """The second command on a fresh clone, up to running the tests: every test module
    imports (a test dependency missing from .[test] fails here). Slow: 2.5 minutes on two
    loaded cores, about half of it the install."""
    clone = _clone_of(fresh_clone)
    result = subprocess.run([fresh_clone.python, "-m", "pytest", "--collect-only", "-q",
                             "-p", "no:cacheprovider"], cwd=clone, env=fresh_clone.env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert re.search(r"\d+ tests? collected", result.stdout)
    where = subprocess.run([fresh_clone.python, "-c",
                            "import surveykit; print(surveykit.__file__)"],
                           cwd=clone.parent, env=fresh_clone.env, capture_output=True,
                           text=True, check=True).stdout
    assert where.startswith(str(clone)), where


@pytest.mark.slow
def test_the_second_quick_start_command_passes_on_a_fresh_clone(fresh_clone):
    """The second command verbatim on a fresh clone: the whole default suite (long)."""
    clone = _clone_of(fresh_clone)
    result = subprocess.run(["bash", "-c", quick_start_commands()[1]], cwd=clone,
                            env=fresh_clone.env, capture_output=True, text=True, timeout=4 * 3600)
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-3000:]
    assert "slowest 15 durations" in result.stdout
