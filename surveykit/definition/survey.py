"""The survey definition file (TOML): parse and validate.

A survey names its questions and, for each, the randomized-response mechanism
respondents follow: answer truthfully with probability p, give the opposite
answer with probability q, say "don't know" with probability 1 - p - q (the
generalized Warner mechanism, paper Section 3). Example (sample_data/)::

    name = "academic_integrity"
    title = "Academic integrity survey 2024"
    language = "en"                  # optional

    [mechanism]                      # default for every question
    p = 0.6
    q = 0.2

    [wording]                        # optional respondent-facing overrides
    intro = "Your answers are protected by a random code."

    [aliases]                        # optional, for every question
    "oui" = "yes"

    [[questions]]
    id = "exam_cheating"
    text = "Have you ever cheated on an exam?"
    [questions.mechanism]            # optional, overrides the default
    p = 0.7
    q = 0.15
    [questions.aliases]              # optional raw answer -> yes | no | dont_know
    "si" = "yes"

Every error names the file, the field (``questions[2].mechanism.p``) and
what is wrong, so the author can fix it without reading this module.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from surveykit.designs.warner import GeneralizedWarner
from surveykit.errors import ParameterError, SurveyDefinitionError

__all__ = [
    "ANSWERS",
    "BUILTIN_SPELLINGS",
    "Question",
    "Survey",
    "canonical_spelling",
    "load_survey_file",
    "parse_survey",
]

ANSWERS: tuple[str, ...] = ("yes", "no", "dont_know")

# Spellings every survey accepts, after canonical_spelling(); an empty cell is
# *missing*, never "don't know" (a blank is not an answer).
BUILTIN_SPELLINGS: Mapping[str, str] = MappingProxyType({
    **dict.fromkeys(("yes", "y", "1", "true"), "yes"),
    **dict.fromkeys(("no", "n", "0", "false"), "no"),
    **dict.fromkeys(("dont_know", "don't know", "dont know", "dk", "don't_know"), "dont_know"),
})

# Short identifiers that work as CSV column names and in every SQL database.
_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}\Z")
_SURVEY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")
_LANGUAGE = re.compile(r"[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*\Z")
# Column names a response CSV uses for itself; a question may not take them.
RESERVED_COLUMNS = frozenset({"respondent_id", "question_id", "answer"})
_TOP_KEYS = frozenset({"name", "title", "language", "mechanism", "wording", "aliases",
                       "questions"})
_QUESTION_KEYS = frozenset({"id", "text", "mechanism", "aliases", "wording"})


def canonical_spelling(raw: str) -> str:
    """The form answers are compared in: trimmed, case-folded, one space, straight quotes.

    >>> canonical_spelling("  Don’t   KNOW ")
    "don't know"
    """
    return " ".join(raw.replace("\u2019", "'").casefold().split())


@dataclass(frozen=True)
class Question:
    """One sensitive question and the mechanism its respondents follow.

    ``aliases`` maps raw answers (in canonical spelling) to "yes", "no" or
    "dont_know"; ``wording`` overrides respondent-facing texts for this question.
    """

    id: str
    text: str
    mechanism: GeneralizedWarner
    aliases: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    wording: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def answer_spellings(self) -> dict[str, str]:
        """Every accepted canonical spelling -> answer (built-ins plus this question's aliases).

        >>> q = Question("q1", "Ever?", GeneralizedWarner(p=0.6, q=0.2), {"si": "yes"})
        >>> q.answer_spellings()["si"], q.answer_spellings()["dk"]
        ('yes', 'dont_know')
        """
        return {**BUILTIN_SPELLINGS, **self.aliases}


@dataclass(frozen=True)
class Survey:
    """A validated survey definition; ``source`` is the TOML text it came from."""

    name: str
    title: str
    mechanism: GeneralizedWarner
    questions: tuple[Question, ...]
    wording: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    language: str = "en"
    source: str = ""

    def question(self, question_id: str) -> Question:
        """The question with this id (case-insensitive), or a SurveyDefinitionError."""
        wanted = question_id.casefold()
        for question in self.questions:
            if question.id.casefold() == wanted:
                return question
        known = ", ".join(q.id for q in self.questions)
        raise SurveyDefinitionError(
            f"survey {self.name!r} has no question {question_id!r}; its questions are {known}"
        )


def load_survey_file(path: str | Path) -> Survey:
    """Read and validate a survey definition file.

    >>> from surveykit.resources import locate_resource
    >>> s = load_survey_file(locate_resource("sample_data") / "academic_integrity.toml")
    >>> s.name, len(s.questions)
    ('academic_integrity', 4)
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SurveyDefinitionError(
            f"{path}: cannot read the survey file ({exc.strerror})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SurveyDefinitionError(
            f"{path}: byte {exc.start} is not UTF-8; save the file as UTF-8"
        ) from None
    return parse_survey(text, str(path))


def parse_survey(text: str, source_name: str = "<survey>") -> Survey:
    """Parse and validate survey TOML ``text``; ``source_name`` appears in errors.

    >>> s = parse_survey('''
    ... name = "demo"
    ... title = "Demo"
    ... [mechanism]
    ... p = 0.6
    ... q = 0.2
    ... [[questions]]
    ... id = "q1"
    ... text = "Have you ever cheated on an exam?"
    ... ''', "demo.toml")
    >>> s.questions[0].mechanism.dont_know
    0.2
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SurveyDefinitionError(f"{source_name}: not valid TOML: {exc}") from None
    return _Validator(source_name).survey(data, text)


class _Validator:
    """Turns parsed TOML into a Survey, raising errors that name file and field."""

    def __init__(self, source_name: str) -> None:
        self.source_name = source_name

    def fail(self, where: str, message: str) -> SurveyDefinitionError:
        return SurveyDefinitionError(f"{self.source_name}: {where}: {message}")

    def survey(self, data: dict, text: str) -> Survey:
        self.unknown_keys(data, _TOP_KEYS, "top level")
        name = self.string(data, "name", "name")
        if not _SURVEY_NAME.match(name):
            raise self.fail("name", f"{name!r} must be 1-64 letters, digits, '_', '-' or '.', "
                                    "starting with a letter or digit (e.g. \"academic_integrity\")")
        title = self.string(data, "title", "title")
        language = self.string(data, "language", "language", default="en")
        if not _LANGUAGE.match(language):
            raise self.fail("language", f"{language!r} must be a language tag such as "
                                        "\"en\" or \"pt-BR\"")
        if "mechanism" not in data:
            raise self.fail("mechanism", "missing: add a [mechanism] table with p and q "
                                         "(e.g. p = 0.6, q = 0.2)")
        mechanism = self.mechanism(data["mechanism"], "mechanism")
        wording = self.strings(data.get("wording", {}), "wording")
        common_aliases = self.aliases(data.get("aliases", {}), "aliases")
        questions = data.get("questions")
        if not isinstance(questions, list) or not questions:
            raise self.fail("questions", "missing: add at least one [[questions]] table "
                                         "with id and text")
        parsed: list[Question] = []
        seen: dict[str, int] = {}
        for index, entry in enumerate(questions):
            where = f"questions[{index}]"
            question = self.question(entry, where, mechanism, common_aliases)
            folded = question.id.casefold()
            if folded in seen:
                raise self.fail(f"{where}.id", f"{question.id!r} repeats the id of "
                                               f"questions[{seen[folded]}]; ids must be unique "
                                               "(case does not count)")
            seen[folded] = index
            parsed.append(question)
        return Survey(name=name, title=title, mechanism=mechanism, questions=tuple(parsed),
                      wording=wording, language=language, source=text)

    def question(self, entry: object, where: str, default: GeneralizedWarner,
                 common_aliases: Mapping[str, str]) -> Question:
        if not isinstance(entry, dict):
            raise self.fail(where, "must be a table with id and text ([[questions]])")
        self.unknown_keys(entry, _QUESTION_KEYS, where)
        question_id = self.string(entry, "id", f"{where}.id")
        if not _IDENTIFIER.match(question_id):
            raise self.fail(f"{where}.id", f"{question_id!r} must start with a letter and "
                                           "contain only letters, digits and '_' (at most 64), "
                                           "so that it works as a CSV column name")
        if question_id.casefold() in RESERVED_COLUMNS:
            raise self.fail(f"{where}.id", f"{question_id!r} is a column name of response "
                                           "files; choose another id")
        text = self.string(entry, "text", f"{where}.text")
        mechanism = default
        if "mechanism" in entry:
            mechanism = self.mechanism(entry["mechanism"], f"{where}.mechanism")
        aliases = dict(common_aliases)
        aliases.update(self.aliases(entry.get("aliases", {}), f"{where}.aliases"))
        wording = self.strings(entry.get("wording", {}), f"{where}.wording")
        return Question(id=question_id, text=text, mechanism=mechanism,
                        aliases=MappingProxyType(aliases), wording=wording)

    def mechanism(self, value: object, where: str) -> GeneralizedWarner:
        if not isinstance(value, dict):
            raise self.fail(where, "must be a table with p and q")
        self.unknown_keys(value, frozenset({"p", "q"}), where)
        numbers = {}
        for key in ("p", "q"):
            if key not in value:
                raise self.fail(f"{where}.{key}", "missing: give p (truthful) and q (opposite); "
                                                  "don't know = 1 - p - q")
            number = value[key]
            if isinstance(number, bool) or not isinstance(number, int | float):
                raise self.fail(f"{where}.{key}", f"{number!r} must be a number between 0 and 1")
            if not 0 <= number <= 1:
                raise self.fail(f"{where}.{key}", f"{number!r} must be a probability "
                                                  "between 0 and 1")
            numbers[key] = float(number)
        try:
            return GeneralizedWarner(p=numbers["p"], q=numbers["q"])
        except ParameterError as exc:
            raise self.fail(where, str(exc)) from None

    def aliases(self, value: object, where: str) -> dict[str, str]:
        if not isinstance(value, dict):
            raise self.fail(where, 'must be a table of raw answer = "yes" | "no" | "dont_know"')
        aliases: dict[str, str] = {}
        for raw, answer in value.items():
            key = f'{where}."{raw}"'
            if answer not in ANSWERS:
                raise self.fail(key, f"{answer!r} must be one of \"yes\", \"no\", \"dont_know\"")
            spelling = canonical_spelling(raw)
            if not spelling:
                raise self.fail(key, "an empty answer is missing, it cannot be an alias")
            builtin = BUILTIN_SPELLINGS.get(spelling)
            if builtin is not None and builtin != answer:
                raise self.fail(key, f"{raw!r} already means {builtin!r} for every survey; "
                                     "it cannot mean " f"{answer!r}")
            aliases[spelling] = answer
        return aliases

    def strings(self, value: object, where: str) -> Mapping[str, str]:
        if not isinstance(value, dict):
            raise self.fail(where, "must be a table of texts (key = \"text\")")
        for key, text in value.items():
            if not isinstance(text, str):
                raise self.fail(f"{where}.{key}", f"{text!r} must be a text in quotes")
        return MappingProxyType(dict(value))

    def string(self, data: dict, key: str, where: str, default: str | None = None) -> str:
        if key not in data:
            if default is not None:
                return default
            raise self.fail(where, "missing")
        value = data[key]
        if not isinstance(value, str) or not value.strip():
            raise self.fail(where, f"{value!r} must be a non-empty text in quotes")
        return value.strip()

    def unknown_keys(self, data: dict, allowed: frozenset[str], where: str) -> None:
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise self.fail(where, f"unknown key {unknown[0]!r}; allowed keys are "
                                   f"{', '.join(sorted(allowed))}")
