"""The field tools, run for real in the tests: pyxform + ODK Validate, JavaRosa, Web Forms.

* :func:`convert` turns an XLSForm into an XForm with pyxform and validates it
  with ODK Validate (JavaRosa), exactly as ODK Central and KoboToolbox do on
  upload (pyxform's ``xls2xform_convert(..., validate=True)``).
* :class:`JavaRosa` compiles ``tests/field/javarosa/FillForm.java`` once against
  the JavaRosa jar that pyxform ships and runs it: ODK Collect's engine.
* :class:`WebForms` runs ``tests/webforms/fill-form.mjs`` under Node with
  ``@getodk/xforms-engine`` (``npm ci`` in tests/webforms): ODK Web Forms' engine.
* ``show`` (``ShowText.java``, ``show-text.mjs``) reads every text of forms as each
  engine gives it for display (:class:`Text`), and :func:`convert_many` converts and
  validates many forms with one run of ODK Validate.
* ``fill_many`` fills many forms (:class:`FillJob`) in one run of a harness: a JVM or a
  Node start with the engine loaded costs a second or two, the fill itself a fraction.

Both harnesses fill a form the same way and write the same files
(:class:`Fill`). A missing Java or Node skips these tests on a laptop, with the
reason; under CI (``CI=true``) it fails them, because .ci/run installs both.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
JAVA_SOURCE = HERE / "field" / "javarosa" / "FillForm.java"
SHOW_SOURCE = HERE / "field" / "javarosa" / "ShowText.java"
WEBFORMS_DIR = HERE / "webforms"
# A harness run fills a handful of forms; anything near this means it hangs.
TIMEOUT = 120
# Every JVM the tests start runs for seconds: the client compiler alone (no C2) and the
# serial collector halve its CPU time (ODK Validate on 82 forms: 5.5 -> 3.1 s); what the
# programs compute is the same.
JVM_OPTIONS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
# Events that record a question (its label, choices, the answer given), not a note.
_QUESTION_EVENTS = ("ANSWER ", "QUESTION ", "CHOICES ")


def missing(what: str) -> None:
    """Skip (laptop) or fail (CI) because ``what`` is not installed."""
    message = f"{what} (.ci/run installs it; see docs/field-collection.md, 'Tests')"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI must have {message}")
    pytest.skip(f"needs {message}")


def pyxform_jar() -> Path:
    """ODK Validate as pyxform ships it: JavaRosa and its dependencies in one jar."""
    try:
        from pyxform.validators import odk_validate
    except ImportError:
        missing("pyxform (pip install -e '.[test]')")
    return Path(odk_validate.ODK_VALIDATE_PATH)


def convert(xlsform: Path, xform: Path) -> list[str]:
    """XLSForm -> XForm with pyxform, then ODK Validate; returns pyxform's warnings."""
    pyxform_jar()
    if shutil.which("java") is None:
        missing("Java (apt-get install openjdk-17-jre-headless)")
    from pyxform.xls2xform import xls2xform_convert

    return xls2xform_convert(str(xlsform), str(xform), validate=True)


def convert_many(forms: dict[Path, Path]) -> dict[Path, list[str]]:
    """XLSForm -> XForm with pyxform for each pair, then ODK Validate on all of them in one
    run (one JVM: a run per form costs a second each); returns pyxform's warnings per
    XLSForm and fails, naming the form, when ODK Validate refuses one or warns."""
    jar = pyxform_jar()
    if shutil.which("java") is None:
        missing("Java (apt-get install openjdk-17-jre-headless)")
    from pyxform.xls2xform import xls2xform_convert

    warnings = {xlsform: xls2xform_convert(str(xlsform), str(xform), validate=False)
                for xlsform, xform in forms.items()}
    done = subprocess.run(["java", *JVM_OPTIONS, "-jar", str(jar), *map(str, forms.values())],
                          capture_output=True, text=True, timeout=TIMEOUT * 4)
    # ODK Validate writes "Validating: FILE" and then ">> Xform is valid!" for each valid form
    verdicts = re.split(r"^Validating: ", done.stdout, flags=re.MULTILINE)[1:]
    refused = [v.splitlines()[0] for v in verdicts if ">> Xform is valid!" not in v]
    assert done.returncode == 0 and not refused and len(verdicts) == len(forms), (
        f"ODK Validate refused {refused}: {done.stderr.strip()}")
    assert not done.stderr.strip(), f"ODK Validate warned: {done.stderr.strip()}"
    return warnings


@dataclass(frozen=True)
class Text:
    """One text of a form as an engine gives it for display: the field's name ("" for the
    form's title), the role (title, label, hint, constraint, choice; Web Forms adds
    label.shown, ... : the text as its Markdown and HTML formatting displays it) and the
    text."""

    name: str
    role: str
    text: str


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "r": "\r", "t": "\t"}.get(m[1], m[1]),
                  text)


def read_texts(output: str) -> dict[str, tuple[Text, ...]]:
    """Form path -> its texts, from the output of ShowText.java or show-text.mjs."""
    texts: dict[str, list[Text]] = {}
    current: list[Text] = []
    for line in output.split("\n"):
        if not line:
            continue
        name, role, text = line.split("\t", 2)
        if not name and role == "form":
            current = texts.setdefault(text, [])
        else:
            current.append(Text(name=name, role=role, text=_unescape(text)))
    return {path: tuple(found) for path, found in texts.items()}


@dataclass(frozen=True)
class Fill:
    """What one filled instance left behind (see FillForm.java for the steps)."""

    start: str            # the draft saved right after the form opened
    again_cleared: str    # the draft just after the first answer was cleared
    answered: str         # the draft with every question answered
    reopen_cleared: str   # the reopened draft, first answer cleared again
    submission: str       # the finalized submission
    events: tuple[tuple[str, str, str], ...]  # (step, field name, text shown or given)

    def shown(self, step: str) -> dict[str, str]:
        """Field name -> text of every note shown in ``step`` (fill, back, again, reopen)."""
        return {name: text for s, name, text in self.events
                if s == step and not text.startswith(_QUESTION_EVENTS)}

    def asked(self, step: str) -> dict[str, tuple[str, tuple[str, ...]]]:
        """Question name -> (label, choice labels) as the client showed them in ``step``."""
        labels: dict[str, str] = {}
        choices: dict[str, tuple[str, ...]] = {}
        for s, name, text in self.events:
            if s == step and text.startswith("QUESTION "):
                labels[name] = text[len("QUESTION "):]
            elif s == step and text.startswith("CHOICES "):
                choices[name] = tuple(text[len("CHOICES "):].split(" | "))
        return {name: (label, choices.get(name, ())) for name, label in labels.items()}


def read_fills(out: Path, runs: int) -> list[Fill]:
    fills = []
    for run in range(1, runs + 1):
        def text(stem: str, run: int = run) -> str:
            return (out / f"{stem}-{run}.xml").read_text(encoding="utf-8")
        # the harnesses write a label's line breaks as \n, one event per line
        events = tuple(
            tuple(part.replace("\\n", "\n") for part in line.split("\t", 2))
            for line in (out / f"events-{run}.tsv").read_text(encoding="utf-8").splitlines()
            if line)
        fills.append(Fill(start=text("start"), again_cleared=text("again-cleared"),
                          answered=text("answered"), reopen_cleared=text("reopen-cleared"),
                          submission=text("submission"), events=events))
    return fills


def _pairs(answers: dict[str, str]) -> list[str]:
    return [f"{name}={value}" for name, value in answers.items()]


class HarnessError(AssertionError):
    """A harness run failed: the client refused an answer or the form broke."""


@dataclass(frozen=True)
class FillJob:
    """One form to fill in a :meth:`JavaRosa.fill_many` or :meth:`WebForms.fill_many` run:
    the arguments of ``fill``."""

    xform: Path
    out: Path
    answers: dict[str, str]
    runs: int = 1


def fills_of(outcome: list[Fill] | HarnessError) -> list[Fill]:
    """A job's fills, or its error raised (as ``fill`` raises it)."""
    if isinstance(outcome, HarnessError):
        raise outcome
    return outcome


def _run_jobs(command: list[str], jobs: list[FillJob], cwd: Path | None = None
              ) -> list[list[Fill] | HarnessError]:
    """Run a harness with ``--jobs JOBS.tsv RESULTS.txt`` (FillForm.java says the format):
    per job, in order, its fills or the HarnessError that stopped it."""
    lines = []
    for job in jobs:
        fields = [str(job.xform), str(job.out), str(job.runs), *_pairs(job.answers)]
        assert not [f for f in fields if "\t" in f or "\n" in f], fields
        job.out.mkdir(parents=True, exist_ok=True)
        lines.append("\t".join(fields) + "\n")
    with tempfile.TemporaryDirectory(prefix="surveykit-jobs-") as folder:
        jobs_path, results_path = Path(folder) / "jobs.tsv", Path(folder) / "results.txt"
        jobs_path.write_text("".join(lines), encoding="utf-8")
        done = subprocess.run([*command, "--jobs", str(jobs_path), str(results_path)],
                              capture_output=True, text=True, timeout=TIMEOUT * 4, cwd=cwd)
        results = (results_path.read_text(encoding="utf-8").splitlines()
                   if results_path.exists() else [])
    if done.returncode != 0 or len(results) != len(jobs):
        raise HarnessError(f"exit {done.returncode} after {len(results)} of {len(jobs)} jobs: "
                           f"{done.stderr.strip()[-2000:]}")
    return [read_fills(job.out, job.runs) if result == "OK" else
            HarnessError(result.removeprefix("ERROR\t")) for job, result in zip(jobs, results,
                                                                                 strict=True)]


def _need_jdk() -> None:
    if shutil.which("java") is None or shutil.which("javac") is None:
        missing("a Java 17 JDK (apt-get install openjdk-17-jdk-headless)")


def _compile(jar: Path, classes: Path) -> None:
    """FillForm.java and ShowText.java compiled against ``jar`` into ``classes``."""
    subprocess.run(["javac", *(f"-J{option}" for option in JVM_OPTIONS), "-nowarn",
                    "-proc:none", "-d", str(classes), "-cp", str(jar), str(JAVA_SOURCE),
                    str(SHOW_SOURCE)], check=True, capture_output=True, timeout=TIMEOUT)


class JavaRosa:
    """FillForm.java compiled into ``classes``; :meth:`shared` compiles once per session."""

    name = "javarosa"

    @staticmethod
    @functools.cache
    def shared() -> JavaRosa:
        """The harness compiled once for all test processes (javac takes 3-6 s of CPU): the
        classes are kept in the temporary folder under the SHA-256 of the sources, the jar
        and the JDK's path, compiled by the first process that needs them while the others
        wait."""
        jar = pyxform_jar()
        _need_jdk()
        digest = hashlib.sha256()
        for path in (JAVA_SOURCE, SHOW_SOURCE, jar):
            digest.update(path.read_bytes())
        for program in ("javac", "java"):  # another JDK, other classes
            digest.update(os.path.realpath(shutil.which(program)).encode())
        classes = (Path(tempfile.gettempdir())
                   / f"surveykit-javarosa-classes-{digest.hexdigest()[:16]}")
        with open(f"{classes}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not classes.is_dir():
                building = Path(tempfile.mkdtemp(prefix="surveykit-javarosa-build-"))
                _compile(jar, building)
                building.rename(classes)  # whole or not at all
        return JavaRosa(classes)

    def __init__(self, classes: Path) -> None:
        """The harness in ``classes``, compiled there unless it is there already."""
        self.jar = pyxform_jar()
        _need_jdk()
        self.classes = classes
        if not all((classes / f"{source.stem}.class").is_file()
                   for source in (JAVA_SOURCE, SHOW_SOURCE)):
            _compile(self.jar, classes)

    def show(self, xforms: list[Path]) -> dict[str, tuple[Text, ...]]:
        """Every text of each form as JavaRosa hands it to ODK Collect (ShowText.java)."""
        done = subprocess.run(
            ["java", *JVM_OPTIONS, "-cp", f"{self.jar}{os.pathsep}{self.classes}", "ShowText",
             *map(str, xforms)], capture_output=True, encoding="utf-8", timeout=TIMEOUT * 4)
        if done.returncode != 0:
            raise HarnessError(done.stderr.strip().splitlines()[0] if done.stderr else
                               f"exit {done.returncode}")
        return read_texts(done.stdout)

    def fill(self, xform: Path, out: Path, answers: dict[str, str], runs: int = 1
             ) -> list[Fill]:
        """Fill ``runs`` instances of ``xform`` in one JVM (one Collect session)."""
        out.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            ["java", *JVM_OPTIONS, "-cp", f"{self.jar}{os.pathsep}{self.classes}", "FillForm",
             str(xform),
             str(out), str(runs), *_pairs(answers)],
            capture_output=True, text=True, timeout=TIMEOUT)
        if done.returncode != 0:
            raise HarnessError(done.stderr.strip().splitlines()[0] if done.stderr else
                               f"exit {done.returncode}")
        return read_fills(out, runs)

    def fill_many(self, jobs: list[FillJob]) -> list[list[Fill] | HarnessError]:
        """Every job filled in one JVM (one Collect session: the jobs share JavaRosa's
        random generator as the runs of one ``fill`` do); per job its fills or its error
        (:func:`fills_of`)."""
        return _run_jobs(["java", *JVM_OPTIONS, "-cp", f"{self.jar}{os.pathsep}{self.classes}",
                          "FillForm"], jobs)


class WebForms:
    """fill-form.mjs under Node with the engine that ``npm ci`` put in tests/webforms."""

    name = "webforms"

    def __init__(self) -> None:
        if shutil.which("node") is None:
            missing("Node.js 20 or later (apt-get install nodejs npm)")
        if not (WEBFORMS_DIR / "node_modules" / "@getodk" / "xforms-engine").is_dir():
            missing("@getodk/xforms-engine (run 'npm ci' in tests/webforms)")

    def fill(self, xform: Path, out: Path, answers: dict[str, str], runs: int = 1
             ) -> list[Fill]:
        out.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            ["node", str(WEBFORMS_DIR / "fill-form.mjs"), str(xform), str(out), str(runs),
             *_pairs(answers)],
            capture_output=True, text=True, timeout=TIMEOUT, cwd=WEBFORMS_DIR)
        if done.returncode != 0:
            lines = [line for line in done.stderr.splitlines() if line.startswith("Error: ")]
            raise HarnessError(lines[0] if lines else f"exit {done.returncode}")
        return read_fills(out, runs)

    def fill_many(self, jobs: list[FillJob]) -> list[list[Fill] | HarnessError]:
        """Every job filled in one Node process; per job its fills or its error
        (:func:`fills_of`)."""
        return _run_jobs(["node", str(WEBFORMS_DIR / "fill-form.mjs")], jobs, cwd=WEBFORMS_DIR)

    def show(self, xforms: list[Path]) -> dict[str, tuple[Text, ...]]:
        """Every text of each form as ODK Web Forms' engine gives it (show-text.mjs), plain
        and as its Markdown and HTML formatting displays it."""
        done = subprocess.run(
            ["node", str(WEBFORMS_DIR / "show-text.mjs"), *map(str, xforms)],
            capture_output=True, encoding="utf-8", timeout=TIMEOUT * 4, cwd=WEBFORMS_DIR)
        if done.returncode != 0:
            lines = [line for line in done.stderr.splitlines() if "Error" in line]
            raise HarnessError(lines[0] if lines else f"exit {done.returncode}")
        return read_texts(done.stdout)


def leaves(document: str) -> dict[str, str]:
    """Element name -> text of every leaf of an instance document (no namespaces)."""
    root = ET.fromstring(document.encode("utf-8"))
    found: dict[str, str] = {}
    for element in root.iter():
        if len(element) == 0:
            found[re.sub(r"^\{.*\}", "", element.tag)] = (element.text or "").strip()
    return found
