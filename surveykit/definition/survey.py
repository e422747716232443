"""The survey definition file (TOML): parse and validate.

A survey names its questions and, for each, the randomized-response design
respondents follow (any preset of :mod:`surveykit.designs`, named and
parameterized as in R's RRreg). Example::

    name = "academic_integrity"
    title = "Academic integrity survey 2024"
    language = "en"                  # optional

    [design]                         # default for every question (optional when
    model = "sld"                    # every question has its own)
    p = [0.1667, 0.8333]
    dont_know = 0.2                  # the paper's "don't know" branch, any design
    groups = ["A", "B"]              # optional names of the groups

    [mechanism]                      # shorthand for model = "generalized_warner"
    p = 0.6                          # (answer truthfully with p, the opposite
    q = 0.2                          # with q, "don't know" with 1 - p - q)

    [wording]                        # optional respondent-facing overrides
    intro = "Your answers are protected by a random code."

    [aliases]                        # optional, for every question
    "oui" = "yes"

    [[questions]]
    id = "exam_cheating"
    text = "Have you ever cheated on an exam?"
    [questions.design]               # optional, overrides the default
    model = "crosswise"
    p = 0.25
    innocuous = "Is your mother's birthday in January, February or March?"
    [questions.aliases]              # optional raw answer -> one of the design's answers
    "si" = "yes"

    [import]                         # optional: how field exports map (see
    respondent_id = "Questionnaire"  # surveykit.definition.profile); with added
    [import.labels]                  # aliases, covariates and models, the only
    "Oui" = "yes"                    # part 'surveykit survey update' may change

    [covariates]                     # optional: other columns of response files
    age = "number"                   # kept per respondent, typed (see
    faculty = "category"             # surveykit.definition.covariates)

    [[models]]                       # optional: regressions the report fits
    formula = "exam_cheating ~ age + C(faculty)"

    [sampling]                       # optional: a complex sample (weights, strata,
    weight = "pw"                    # clusters, fpc; surveykit.definition.sampling,
    strata = "stype"                 # docs/complex-samples.md)

Designs that ask an innocuous question (uqtknown, uqtunknown, crosswise,
triangular) need its text, ``innocuous``. Multi-group designs (sld, cdm,
uqtunknown, ...) give each respondent one group for the whole questionnaire,
so every multi-group question of a survey has the same groups.

Every error names the file, the field (``questions[2].design.p``) and
what is wrong, so the author can fix it without reading this module. The
file is checked completely here, so that a survey that parses works with
every command: wording keys must be keys of the shipped
``templates/wording.json`` (with their placeholders), ids have no spaces
around them, texts and labels have no control characters (nor U+FFFE, U+FFFF, which
XML cannot hold), and every
instruction of a design is one a randomizer can draw (a probability of 0 or
at least one in a million). The file may be at most 1 MB, nested at most
:data:`MAX_DEPTH` deep.
"""

from __future__ import annotations

import difflib
import json
import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType

from surveykit.definition.covariates import (
    Covariate,
    ModelSpec,
    parse_covariates,
    parse_models,
)
from surveykit.definition.joint import JointSpec, parse_joint
from surveykit.definition.limits import MAX_DIGITS
from surveykit.definition.profile import ImportProfile, parse_profile
from surveykit.definition.sampling import read_sampling
from surveykit.definition.wording import check_placeholders, text_problem
from surveykit.designs.base import Design, check_identifiable, mechanism_deprecated
from surveykit.designs.quantitative import QUANTITATIVE_PRESETS, QuantitativeDesign
from surveykit.designs.registry import (
    ALIASES,
    PRESETS,
    QUANTITATIVE_ALIASES,
    RR_NAMES,
    accepted_parameters,
    design_class,
    is_quantitative,
    make_design,
    parameter_names,
    quantitative_design_class,
)
from surveykit.designs.warner import GeneralizedWarner
from surveykit.errors import (
    ParameterError,
    SurveyDefinitionError,
    allowed_keys,
    did_you_mean,
    printable,
)
from surveykit.resources import locate_resource
from surveykit.sampling.design import SamplingDesign
from surveykit.vocabulary import BUILTIN_SPELLINGS, canonical_spelling, response_spellings

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

# Short identifiers that work as CSV column names and in every SQL database.
_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}\Z")
_SURVEY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")
_LANGUAGE = re.compile(r"[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*\Z")
# Column names a response CSV uses for itself; a question may not take them.
RESERVED_COLUMNS = frozenset({"respondent_id", "question_id", "answer", "group"})
_TOP_KEYS = frozenset({"name", "title", "language", "design", "mechanism", "wording", "aliases",
                       "questions", "import", "covariates", "models", "joint", "sampling"})
_QUESTION_KEYS = frozenset({"id", "text", "type", "design", "mechanism", "aliases", "wording",
                            "range", "unit", "decimals"})
#: Numeric designs that ask an unrelated numeric question, whose text ``innocuous`` gives.
UNRELATED_NUMERIC_DESIGNS = ("mix_unknown",)
#: What a question asks for: one of the design's answers (yes/no, categories) or a number.
QUESTION_TYPES = ("choice", "number")
_NUMBER_KEYS = ("range", "unit", "decimals")
#: The most decimals a numeric answer may declare (cents of a currency need 2).
MAX_DECIMALS = 6
#: Longest unit text ("EUR", "partners", "days in the last 30").
MAX_UNIT = 32
# For "did you mean": every design name the reader takes, and every parameter of any design.
_DESIGN_SPELLINGS = (*PRESETS, *ALIASES, *RR_NAMES)
_NUMERIC_SPELLINGS = (*QUANTITATIVE_PRESETS, *QUANTITATIVE_ALIASES)
_ALL_PARAMETERS = tuple(sorted({name for cls in PRESETS.values()
                                for name in parameter_names(cls)}))
#: The largest survey file read (a survey of a thousand questions is about 200 KB).
MAX_FILE_BYTES = 1_000_000
#: How deeply tables and arrays may nest (a survey needs 7: a custom design's matrices).
MAX_DEPTH = 12
#: The smallest non-zero probability of an instruction: below it no respondent of any
#: survey would ever be told to follow it, and neither dice nor a browser can draw it.
MIN_PROBABILITY = Fraction(1, 10**6)
#: Longest label (answers, categories, groups) a response file and the database hold.
MAX_LABEL = 64


@lru_cache(maxsize=1)
def wording_keys() -> frozenset[str]:
    """The keys of the shipped ``templates/wording.json``: the only keys [wording] may set.

    >>> "intro" in wording_keys() and "rule_say" in wording_keys()
    True
    """
    path = locate_resource("templates") / "wording.json"
    return frozenset(json.loads(path.read_text(encoding="utf-8")))


@dataclass(frozen=True)
class Question:
    """One sensitive question and the design its respondents follow.

    ``aliases`` maps raw answers (in canonical spelling) to the design's
    responses; ``wording`` overrides respondent-facing texts for this question;
    ``innocuous`` is the innocuous question's text for designs that ask one.

    A question of ``type`` ``"number"`` (income, number of partners) has a design for
    numeric answers (:mod:`surveykit.designs.quantitative`) and may state the allowed
    ``range`` of true values (low, high), its ``unit`` and the ``decimals`` an answer may
    have; a ``"choice"`` question (the default) has one of the categorical designs.
    """

    id: str
    text: str
    design: Design | QuantitativeDesign
    aliases: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    wording: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    innocuous: str | None = None
    type: str = "choice"
    range: tuple[float, float] | None = None
    unit: str | None = None
    decimals: int | None = None

    @property
    def numeric(self) -> bool:
        """True for a ``type = "number"`` question (its answers are numbers).

        >>> from surveykit.designs.quantitative import MixNorm
        >>> Question("income", "Income?", MixNorm(p=0.7, mu=40, sigma=15), type="number").numeric
        True
        """
        return self.type == "number"

    @property
    def mechanism(self) -> Design:
        """Deprecated: the question's :attr:`design` (surveykit 0.1's name for it)."""
        mechanism_deprecated("Question.mechanism")
        return self.design

    def answer_spellings(self) -> dict[str, str]:
        """Every accepted canonical spelling -> response (the design's labels, the built-in
        spellings of yes/no designs, "don't know", and this question's aliases).

        >>> q = Question("q1", "Ever?", GeneralizedWarner(p=0.6, q=0.2), {"si": "yes"})
        >>> q.answer_spellings()["si"], q.answer_spellings()["dk"]
        ('yes', 'dont_know')

        A numeric question's answers are numbers; its only label is "don't know", and only
        when its design has that branch (``dont_know > 0``), as the web page, the paper sheet
        and the XLSForm offer it only then.

        >>> from surveykit.designs.quantitative import Eriksson
        >>> def income(dont_know):
        ...     return Question("income", "Income?", Eriksson(p=0.6, scrambler=[0, 1000],
        ...                     dont_know=dont_know), type="number")
        >>> income(0.1).answer_spellings()["dk"], income(0.0).answer_spellings()
        ('dont_know', {})
        """
        if isinstance(self.design, QuantitativeDesign):
            return (response_spellings(("dont_know",)) if self.design.designed_dont_know > 0
                    else {})
        return {**response_spellings(self.design.response_labels), **self.aliases}


@dataclass(frozen=True)
class Survey:
    """A validated survey definition; ``source`` is the TOML text it came from.

    ``design`` is the survey's default design (None when every question has
    its own); ``groups`` names the groups of its multi-group questions (one
    group, "1", when there are none); ``profile`` is its ``[import]`` table
    (:mod:`surveykit.definition.profile`); ``covariates`` and ``models`` are
    its ``[covariates]`` and ``[[models]]`` (:mod:`surveykit.definition.covariates`);
    ``sampling`` its ``[sampling]`` design (:mod:`surveykit.definition.sampling`), None for
    a simple random sample.
    """

    name: str
    title: str
    design: Design | None
    questions: tuple[Question, ...]
    wording: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    language: str = "en"
    source: str = ""
    groups: tuple[str, ...] = ("1",)
    profile: ImportProfile = field(default_factory=ImportProfile)
    covariates: tuple[Covariate, ...] = ()
    models: tuple[ModelSpec, ...] = ()
    sampling: SamplingDesign | None = None
    #: Its ``[[joint]]`` analyses (:mod:`surveykit.definition.joint`), shown by the report.
    joint: tuple[JointSpec, ...] = ()

    @property
    def mechanism(self) -> Design | None:
        """Deprecated: the default :attr:`design` (surveykit 0.1's name for it)."""
        mechanism_deprecated("Survey.mechanism")
        return self.design

    def covariate(self, name: str) -> Covariate:
        """The declared covariate ``name`` (case-insensitive), or a SurveyDefinitionError.

        A column that ``[sampling] replicate_weights`` matches as a pattern
        (``"repw*"``) is a number covariate without a declaration.
        """
        for covariate in self.covariates:
            if covariate.name.casefold() == name.casefold():
                return covariate
        replicates = self.sampling.replicate_weights if self.sampling else None
        if replicates is not None and replicates.pattern is not None \
                and replicates.matches(name):
            return Covariate(name=name, kind="number")
        declared = ", ".join(c.name for c in self.covariates) or "none"
        raise SurveyDefinitionError(
            f"survey {self.name!r} declares no covariate {name!r} (declared: {declared}); "
            "add it to [covariates] and run 'surveykit survey update FILE'")

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

    def group_number(self, group: object) -> int:
        """The 1-based number of ``group`` (its number or its name, any case).

        >>> parse_survey('''name = "s"
        ... title = "S"
        ... [design]
        ... model = "sld"
        ... p = [0.2, 0.8]
        ... groups = ["short", "long"]
        ... [[questions]]
        ... id = "q"
        ... text = "Ever?"''').group_number("Long")
        2
        """
        text = str(group).strip()
        for number, name in enumerate(self.groups, start=1):
            if text == name or text.casefold() == name.casefold():
                return number
        if text.isdigit() and 1 <= int(text) <= len(self.groups):
            return int(text)
        allowed = ", ".join(f"{i} ({name})" if name != str(i) else str(i)
                            for i, name in enumerate(self.groups, start=1))
        raise SurveyDefinitionError(
            f"group {text!r} is not a group of survey {self.name!r}; its groups are {allowed}")


def load_survey_file(path: str | Path) -> Survey:
    """Read and validate a survey definition file.

    >>> from surveykit.resources import locate_resource
    >>> s = load_survey_file(locate_resource("sample_data") / "academic_integrity.toml")
    >>> s.name, len(s.questions)
    ('academic_integrity', 4)
    """
    path = Path(path)
    try:
        size = path.stat().st_size
        if path.is_dir():
            raise SurveyDefinitionError(f"{path} is a folder; give the survey file (.toml)")
        if size > MAX_FILE_BYTES:
            raise SurveyDefinitionError(
                f"{path}: the file has {size:,} bytes; a survey file may have at most "
                f"{MAX_FILE_BYTES:,} (is it the survey file?)")
        raw = path.read_bytes()
    except OSError as exc:
        raise SurveyDefinitionError(
            f"{path}: cannot read the survey file ({exc.strerror})") from None
    if raw.startswith((b"PK\x03\x04", b"\xd0\xcf\x11\xe0")) or b"\x00" in raw[:4096]:
        raise SurveyDefinitionError(
            f"{path}: this is a binary file (a spreadsheet or an archive?), not a survey "
            "file; a survey file is TOML text ('surveykit init --example' writes one)")
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
    >>> s.questions[0].design.dont_know
    0.2
    """
    if len(text) > MAX_FILE_BYTES:
        raise SurveyDefinitionError(f"{source_name}: the text has {len(text):,} characters; a "
                                    f"survey file may have at most {MAX_FILE_BYTES:,}")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SurveyDefinitionError(f"{source_name}: not valid TOML: {exc}") from None
    except RecursionError:
        raise SurveyDefinitionError(
            f"{source_name}: arrays or tables are nested too deeply to read; a survey nests "
            f"at most {MAX_DEPTH} levels") from None
    where = _too_deep(data)
    if where is not None:
        raise SurveyDefinitionError(f"{source_name}: {where}: nested more than {MAX_DEPTH} "
                                    "levels deep; no survey field needs that")
    return _Validator(source_name, text).survey(data, text)


def _position(text: str, key: str, value: str | None = None) -> tuple[int, int] | None:
    r"""(line, column), from 1, of the one line that sets ``key`` (to ``value``), or None
    when no line or several do (tomllib keeps no positions; this finds the common case,
    ``key = ...`` or ``"key" = ...`` on its own line).

    >>> _position('name = "s"\n[design]\n  modle = "fr"\n', "modle")
    (3, 3)
    >>> _position('model = "sdl"\n', "model", "sdl")
    (1, 9)
    """
    name = re.escape(key)
    pattern = rf'^[ \t]*(?:{name}|"{name}"|\'{name}\')[ \t]*=[ \t]*'
    if value is not None:
        pattern += rf'(?:"{re.escape(value)}"|\'{re.escape(value)}\')'
    found = list(re.finditer(pattern, text, flags=re.MULTILINE))
    if len(found) != 1:
        return None
    match = found[0]
    start = match.end() - len(value) - 2 if value is not None else \
        match.start() + len(match.group(0)) - len(match.group(0).lstrip(" \t"))
    line = text.count("\n", 0, start) + 1
    return line, start - (text.rfind("\n", 0, start) + 1) + 1


def _too_deep(data: object) -> str | None:
    """The key path where ``data`` nests deeper than MAX_DEPTH, or None (no recursion)."""
    stack: list[tuple[object, str, int]] = [(data, "top level", 1)]
    while stack:
        value, path, depth = stack.pop()
        if depth > MAX_DEPTH:
            return path
        if isinstance(value, dict):
            stack.extend((v, f"{path}.{k}" if depth > 1 else str(k), depth + 1)
                         for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value))
    return None


class _Validator:
    """Turns parsed TOML into a Survey, raising errors that name file and field."""

    def __init__(self, source_name: str, text: str = "") -> None:
        self.source_name = source_name
        self.source_text = text

    def fail(self, where: str, message: str) -> SurveyDefinitionError:
        return SurveyDefinitionError(f"{self.source_name}: {where}: {message}")

    def fail_at(self, where: str, message: str, key: str,
                value: str | None = None) -> SurveyDefinitionError:
        """:meth:`fail`, with the line and column of ``key`` (of its ``value`` when given)
        after the file's name when the text has exactly one such line."""
        position = _position(self.source_text, key, value)
        place = f"{self.source_name}:{position[0]}:{position[1]}" if position \
            else self.source_name
        return SurveyDefinitionError(f"{place}: {where}: {message}")

    def survey(self, data: dict, text: str) -> Survey:
        self.unknown_keys(data, _TOP_KEYS, "top level")
        name = self.string(data, "name", "name", exact=True)
        if not _SURVEY_NAME.match(name):
            raise self.fail("name", f"{name!r} must be 1-64 letters, digits, '_', '-' or '.', "
                                    "starting with a letter or digit (e.g. \"academic_integrity\")")
        title = self.string(data, "title", "title")
        language = self.string(data, "language", "language", default="en")
        if not _LANGUAGE.match(language):
            raise self.fail("language", f"{language!r} must be a language tag such as "
                                        "\"en\" or \"pt-BR\"")
        default = self.default_design(data)
        wording = self.wording(data.get("wording", {}), "wording")
        questions = data.get("questions")
        if not isinstance(questions, list) or not questions:
            raise self.fail("questions", "missing: add at least one [[questions]] table "
                                         "with id and text")
        ids = [entry["id"] for entry in questions
               if isinstance(entry, dict) and isinstance(entry.get("id"), str)]
        declared = data.get("covariates", {})
        sampling = None
        if "sampling" in data:  # its design columns are kept like covariates
            sampling, implicit = read_sampling(
                data["sampling"], declared if isinstance(declared, dict) else {}, self.fail)
            if isinstance(declared, dict):
                declared = {**declared, **implicit}
        covariates = parse_covariates(declared, [*ids, *RESERVED_COLUMNS], self.fail)
        profile = ImportProfile()
        if "import" in data:
            profile = parse_profile(data["import"], ids, self.fail,
                                    covariates=[c.name for c in covariates])
        # [import.labels] that name an answer are aliases of every question
        labels = data.get("import", {}).get("labels", {})
        common_aliases = {canonical_spelling(raw): (answer, f'import.labels."{raw}"')
                          for raw, answer in labels.items()
                          if canonical_spelling(raw) in profile.aliases}
        common_aliases.update({raw: (answer, f'aliases."{raw}"') for raw, answer in
                               self.raw_aliases(data.get("aliases", {}), "aliases").items()})
        parsed: list[Question] = []
        seen: dict[str, int] = {}
        for index, entry in enumerate(questions):
            where = f"questions[{index}]"
            question = self.question(entry, where, default, common_aliases)
            folded = question.id.casefold()
            if folded in seen:
                raise self.fail(f"{where}.id", f"{question.id!r} repeats the id of "
                                               f"questions[{seen[folded]}]; ids must be unique "
                                               "(case does not count)")
            seen[folded] = index
            parsed.append(question)
        groups = self.groups(parsed)
        models = parse_models(data.get("models", []), [q.id for q in parsed], covariates,
                              self.fail, numeric=[q.id for q in parsed if q.numeric])
        joint = parse_joint(data.get("joint", []), [q.id for q in parsed], self.fail)
        return Survey(name=name, title=title, design=default[0] if default else None,
                      questions=tuple(parsed), wording=wording, language=language, source=text,
                      groups=groups, profile=profile, covariates=covariates, models=models,
                      sampling=sampling, joint=joint)

    def default_design(self, data: dict) -> tuple[Design, str | None] | None:
        """The survey-level design ([design] or its shorthand [mechanism]) and innocuous text."""
        if "design" in data and "mechanism" in data:
            raise self.fail("mechanism", "give either [design] or its shorthand [mechanism] "
                                         "(p, q of the generalized Warner), not both")
        if "design" in data:
            return self.design(data["design"], "design")
        if "mechanism" in data:
            return self.mechanism(data["mechanism"], "mechanism"), None
        return None

    def groups(self, questions: list[Question]) -> tuple[str, ...]:
        """The groups every multi-group question shares (a respondent has one group)."""
        first: tuple[int, Question] | None = None
        for index, question in enumerate(questions):
            names = question.design.group_names
            if len(names) == 1:
                continue
            if first is None:
                first = (index, question)
                continue
            other = first[1].design.group_names
            if len(names) != len(other) or [n.casefold() for n in names] != [
                    n.casefold() for n in other]:
                raise self.fail(
                    f"questions[{index}].design",
                    f"groups {list(names)!r} differ from the groups {list(other)!r} of "
                    f"questions[{first[0]}]: a respondent gets one group (one form version) "
                    "for the whole questionnaire, so every multi-group question must have "
                    "the same groups")
        return first[1].design.group_names if first else ("1",)

    def question(self, entry: object, where: str, default: tuple[Design, str | None] | None,
                 common_aliases: Mapping[str, tuple[str, str]]) -> Question:
        if not isinstance(entry, dict):
            raise self.fail(where, "must be a table with id and text ([[questions]])")
        self.unknown_keys(entry, _QUESTION_KEYS, where)
        question_id = self.string(entry, "id", f"{where}.id", exact=True)
        if not _IDENTIFIER.match(question_id):
            raise self.fail(f"{where}.id", f"{question_id!r} must start with a letter and "
                                           "contain only letters, digits and '_' (at most 64), "
                                           "so that it works as a CSV column name")
        if question_id.casefold() in RESERVED_COLUMNS:
            raise self.fail(f"{where}.id", f"{question_id!r} is a column name of response "
                                           "files; choose another id")
        text = self.string(entry, "text", f"{where}.text")
        kind = entry.get("type", "choice")
        if kind not in QUESTION_TYPES:
            raise self.fail_at(f"{where}.type", f"{kind!r} must be \"choice\" (one of the "
                               "design's answers, the default) or \"number\" (a numeric "
                               "answer such as an income)", "type",
                               kind if isinstance(kind, str) else None)
        if kind != "number":
            for key in _NUMBER_KEYS:
                if key in entry:
                    raise self.fail(f"{where}.{key}", f"{key} is for numeric questions; add "
                                                      "type = \"number\" or remove it")
        if "design" in entry and "mechanism" in entry:
            raise self.fail(f"{where}.mechanism", "give either design or its shorthand "
                                                  "mechanism (p, q), not both")
        if "design" in entry:
            design, innocuous = self.design(entry["design"], f"{where}.design")
        elif "mechanism" in entry:
            design, innocuous = self.mechanism(entry["mechanism"], f"{where}.mechanism"), None
        elif default is not None:
            design, innocuous = default
        else:
            raise self.fail("design", f"missing: {where} has no design of its own, so the "
                                      "survey needs a default [design] table (e.g. model = "
                                      "\"warner\", p = 0.7) or [mechanism] with p and q")
        if kind == "number":
            return self.numeric_question(entry, where, question_id, text, design, innocuous)
        if isinstance(design, QuantitativeDesign):
            origin = f"{where}.design" if "design" in entry else "design"
            raise self.fail(f"{origin}.model", (
                f"the {design.model} design is for numeric answers, and {where} "
                f"({question_id!r}) asks for a choice; add type = \"number\" to the "
                "question, or give it a design for yes/no answers ([questions.design])"))
        own = self.raw_aliases(entry.get("aliases", {}), f"{where}.aliases")
        wanted = dict(common_aliases)
        wanted.update({raw: (answer, f'{where}.aliases."{raw}"') for raw, answer in own.items()})
        aliases = self.aliases(wanted, design)
        wording = self.wording(entry.get("wording", {}), f"{where}.wording")
        return Question(id=question_id, text=text, design=design,
                        aliases=MappingProxyType(aliases), wording=wording, innocuous=innocuous)

    def numeric_question(self, entry: dict, where: str, question_id: str, text: str,
                         design: Design | QuantitativeDesign,
                         innocuous: str | None = None) -> Question:
        """A ``type = "number"`` question: a numeric-answer design, its range, unit, decimals."""
        if not isinstance(design, QuantitativeDesign):
            origin = f"{where}.design" if "design" in entry else "design"
            names = ", ".join(QUANTITATIVE_PRESETS)
            raise self.fail(f"{origin}.model", (
                f"{where} ({question_id!r}) asks for a number, and the {design.model} design "
                f"is for yes/no or category answers; give it a design for numeric answers "
                f"([questions.design], model = one of {names})"))
        if "mechanism" in entry:
            raise self.fail(f"{where}.mechanism", "[mechanism] is the generalized Warner "
                                                  "design for yes/no answers; a numeric "
                                                  "question needs [questions.design]")
        if "aliases" in entry:
            raise self.fail(f"{where}.aliases", "a numeric question's answers are numbers "
                                                "and need no aliases; remove the table")
        decimals = entry.get("decimals")
        if decimals is not None and (isinstance(decimals, bool) or not isinstance(decimals, int)
                                     or not 0 <= decimals <= MAX_DECIMALS):
            raise self.fail(f"{where}.decimals", f"{decimals!r} must be a whole number of "
                                                 f"decimals from 0 to {MAX_DECIMALS}")
        bounds = self.range(entry.get("range"), f"{where}.range", decimals)
        unit = entry.get("unit")
        if unit is not None:
            if not isinstance(unit, str) or not unit.strip():
                raise self.fail(f"{where}.unit", f"{unit!r} must be a text in quotes, e.g. "
                                                 "unit = \"EUR\"")
            if len(unit.strip()) > MAX_UNIT:
                raise self.fail(f"{where}.unit", f"{unit.strip()[:20]!r}... has "
                                                 f"{len(unit.strip())} characters; a unit has "
                                                 f"at most {MAX_UNIT}")
            self.text(unit, f"{where}.unit")
            unit = unit.strip()
        self.numeric_realizable(design, f"{where}.design" if "design" in entry else "design")
        wording = self.wording(entry.get("wording", {}), f"{where}.wording")
        return Question(id=question_id, text=text, design=design, wording=wording,
                        type="number", range=bounds, unit=unit, decimals=decimals,
                        innocuous=innocuous)

    def range(self, value: object, where: str, decimals: int | None
              ) -> tuple[float, float] | None:
        """``range = [low, high]``: two finite numbers, low below high, on the decimals."""
        if value is None:
            return None
        if (not isinstance(value, list) or len(value) != 2
                or any(isinstance(v, bool) or not isinstance(v, int | float) for v in value)):
            raise self.fail(where, f"{value!r} must be two numbers [low, high], e.g. "
                                   "range = [0, 100000]")
        low, high = (float(v) for v in value)
        if not (math.isfinite(low) and math.isfinite(high)):
            raise self.fail(where, f"{value!r} must be finite numbers")
        if max(abs(low), abs(high)) >= 10.0 ** MAX_DIGITS:
            raise self.fail(where, f"{value!r}: numbers are stored below 10^{MAX_DIGITS} in "
                                   "size; state the range in a larger unit (thousands, "
                                   "millions)")
        if not low < high:
            raise self.fail(where, f"{value!r}: low ({value[0]}) must be below high "
                                   f"({value[1]})")
        if decimals is not None:
            for bound in value:
                if round(float(bound), decimals) != float(bound):
                    raise self.fail(where, f"{bound!r} has more decimals than decimals = "
                                           f"{decimals} allows")
        return (low, high)

    def numeric_realizable(self, design: QuantitativeDesign, where: str) -> None:
        """Every step of a numeric design is 0 or at least MIN_PROBABILITY likely (a die, a
        deck or a browser can draw it)."""
        for g, steps in enumerate(design.protocol.groups):
            for step in steps:
                if 0 < step.probability < MIN_PROBABILITY:
                    in_group = f" in group {g + 1}" if len(design.group_names) > 1 else ""
                    raise self.fail(where, (
                        f"the {design.model} design tells respondents{in_group} to "
                        f"{step.kind.replace('_', ' ')} with probability "
                        f"{float(step.probability):.3g}: below one in a million no respondent "
                        "would ever be told it, and no die or browser can draw it; make it 0 "
                        "or at least 0.000001"))

    def design(self, value: object, where: str
               ) -> tuple[Design | QuantitativeDesign, str | None]:
        """A [design] table: model = NAME, the preset's parameters, and innocuous text."""
        if not isinstance(value, dict):
            raise self.fail(where, "must be a table with model and the design's parameters "
                                   "(e.g. model = \"sld\", p = [0.1667, 0.8333])")
        if "model" not in value:
            # a misspelt model (modle = "fr") is an unknown key, not a missing model
            self.unknown_keys(value, ["model", "innocuous", *_ALL_PARAMETERS], where,
                              "model, innocuous and the design's parameters")
            raise self.fail(f"{where}.model", "missing: name the design, e.g. model = \"fr\"")
        model = value["model"]
        if not isinstance(model, str):
            raise self.fail(f"{where}.model", f"{model!r} must be a design name in quotes")
        if is_quantitative(model.strip()):
            return self.numeric_design(value, where, model)
        try:
            cls = design_class(model)
        except ParameterError as exc:
            message = str(exc)
            hint = did_you_mean(model.strip().casefold(),
                                (*_DESIGN_SPELLINGS, *_NUMERIC_SPELLINGS))
            if hint:  # "unknown design 'sdl', did you mean 'sld'? The designs are ..."
                message = message.replace(f"{model!r}; the designs", f"{model!r}{hint} The "
                                                                     "designs", 1)
            message += ("; for numeric answers (type = \"number\"): "
                        + ", ".join(QUANTITATIVE_PRESETS))
            raise self.fail_at(f"{where}.model", message, "model", model) from None
        self.unknown_keys(value, ["model", "innocuous", *accepted_parameters(model)],
                          where, f"model, innocuous and the parameters of {cls.model} "
                                 f"({', '.join(parameter_names(cls))})")
        parameters = {k: v for k, v in value.items() if k not in ("model", "innocuous")}
        innocuous = value.get("innocuous")
        if innocuous is not None and (not isinstance(innocuous, str) or not innocuous.strip()):
            raise self.fail(f"{where}.innocuous", f"{innocuous!r} must be the innocuous "
                                                  "question's text in quotes")
        try:
            design = make_design(model, **parameters)
        except ParameterError as exc:
            key = next((k for k in parameters if str(exc).startswith(f"{k} ")
                        or str(exc).startswith(f"{k}[")), None)
            raise self.fail(f"{where}.{key}" if key else where, str(exc)) from None
        if cls.asks_innocuous and innocuous is None:
            raise self.fail(f"{where}.innocuous", (
                f"missing: the {cls.model} design asks an innocuous question beside the "
                "sensitive one; give its text, e.g. innocuous = \"Were you born in January, "
                "February or March?\""))
        if not cls.asks_innocuous and innocuous is not None:
            raise self.fail(f"{where}.innocuous", f"the {cls.model} design asks no innocuous "
                                                  "question; remove innocuous")
        if innocuous is not None:
            self.text(innocuous, f"{where}.innocuous")
        self.realizable(design, where)
        self.labels(design, where, parameters)
        return design, innocuous.strip() if innocuous else None

    def numeric_design(self, value: dict, where: str, model: str
                       ) -> tuple[QuantitativeDesign, str | None]:
        """A design for numeric answers (RRTCS's and RRreg's names and parameters), and the
        unrelated numeric question's text (``innocuous``) of a design that asks one
        (mix_unknown: printed on slips and forms, which cannot ask it without)."""
        cls = quantitative_design_class(model.strip())
        allowed = accepted_parameters(model.strip())
        if cls.model in UNRELATED_NUMERIC_DESIGNS:
            allowed = [*allowed, "innocuous"]
        self.unknown_keys(value, ["model", *allowed], where,
                          f"model and the parameters of {cls.model} ({', '.join(allowed)})")
        innocuous = value.get("innocuous")
        if innocuous is not None:
            if not isinstance(innocuous, str) or not innocuous.strip():
                raise self.fail(f"{where}.innocuous", f"{innocuous!r} must be the unrelated "
                                                      "question's text in quotes")
            self.text(innocuous, f"{where}.innocuous")
            innocuous = innocuous.strip()
        parameters = {k: v for k, v in value.items() if k not in ("model", "innocuous")}
        try:
            design = make_design(model.strip(), **parameters)
        except ParameterError as exc:
            key = next((k for k in parameters if str(exc).startswith((f"{k} ", f"{k}["))),
                       None)
            raise self.fail(f"{where}.{key}" if key else where, str(exc)) from None
        assert isinstance(design, QuantitativeDesign)
        return design, innocuous

    def realizable(self, design: Design, where: str) -> None:
        """Every instruction's probability is 0 or at least MIN_PROBABILITY, and the answers
        carry information about the true states (:func:`check_identifiable`)."""
        for g, group in enumerate(design.group_names):
            for instruction in design.protocol.for_group(g):
                p = instruction.probability
                if 0 < p < MIN_PROBABILITY:
                    in_group = f" in group {group!r}" if len(design.group_names) > 1 else ""
                    raise self.fail(where, (
                        f"the {design.model} design tells respondents{in_group} to follow "
                        f"'{instruction.code}' with probability {float(p):.3g}: "
                        "below one in a million no respondent would ever be told it, and no "
                        "die or browser can draw it; make it 0 or at least 0.000001"))
        try:
            check_identifiable(design)
        except ParameterError as exc:
            raise self.fail(where, str(exc)) from None

    def labels(self, design: Design, where: str, parameters: Mapping[str, object]) -> None:
        """Answer, category and group labels a response file, the database, a form and a
        terminal can all show: 1 to 64 characters, no control characters; a group named by
        a number is that group's own number (a file's group column reads numbers and names)."""
        kinds = (("groups", design.group_names), ("responses", design.response_labels),
                 ("categories", design.state_labels))
        for key, labels in kinds:
            found = key if key in parameters else next(
                (k for k in ("states", "categories") if k in parameters and key != "groups"),
                None)
            path = f"{where}.{found}" if found else where
            for label in labels:
                if len(label) > MAX_LABEL:
                    raise self.fail(path, f"the label {label[:20]!r}... has {len(label)} "
                                          f"characters; labels have at most {MAX_LABEL}")
                if text_problem(label, lines=False):
                    raise self.fail(path, f"the label {printable(label)!r} holds a control "
                                          "character; labels are plain text")
        for number, name in enumerate(design.group_names, start=1):
            if name.isdigit() and int(name) != number:
                raise self.fail(f"{where}.groups", (
                    f"group {number} is named {name!r}, the number of another group; a "
                    "group named by a number must be its own number (response files give "
                    "groups by number or name)"))

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
            design = GeneralizedWarner(p=numbers["p"], q=numbers["q"])
        except ParameterError as exc:
            raise self.fail(where, str(exc)) from None
        self.realizable(design, where)
        return design

    def raw_aliases(self, value: object, where: str) -> dict[str, str]:
        """A survey-level [aliases] table: raw answer -> answer, checked per question later."""
        if not isinstance(value, dict):
            raise self.fail(where, 'must be a table of raw answer = "yes" | "no" | "dont_know"')
        aliases: dict[str, str] = {}
        for raw, answer in value.items():
            key = f'{where}."{raw}"'
            if not isinstance(answer, str):
                raise self.fail(key, f"{answer!r} must be an answer in quotes")
            self.text(raw, key)
            spelling = canonical_spelling(raw)
            if not spelling:
                raise self.fail(key, "an empty answer is missing, it cannot be an alias")
            aliases[spelling] = answer
        return aliases

    def alias_target(self, answer: str, design: Design, key: str) -> str:
        """The response an alias means under ``design``, or an error listing the answers."""
        labels = design.response_labels
        found = response_spellings(labels).get(canonical_spelling(answer))
        if answer not in labels and found is None:
            shown = ", ".join(f'"{label}"' for label in labels)
            raise self.fail(key, f"{answer!r} must be one of the design's answers: {shown}")
        return answer if answer in labels else found

    def aliases(self, wanted: Mapping[str, tuple[str, str]], design: Design) -> dict[str, str]:
        """Raw spelling -> the design's response, for (answer, key path) pairs."""
        builtin = response_spellings(design.response_labels)
        aliases: dict[str, str] = {}
        for spelling, (answer, key) in wanted.items():
            target = self.alias_target(answer, design, key)
            existing = builtin.get(spelling)
            if existing is not None and existing != target:
                raise self.fail(key, f"{spelling!r} already means {existing!r} for every "
                                     f"survey; it cannot mean {target!r}")
            aliases[spelling] = target
        return aliases

    def wording(self, value: object, where: str) -> Mapping[str, str]:
        """A [wording] table: known keys (templates/wording.json), valid placeholders."""
        texts = self.strings(value, where)
        known = wording_keys()
        for key, text in texts.items():
            if key not in known:
                close = difflib.get_close_matches(key, sorted(known), n=3, cutoff=0.75)
                hint = f" (keys like it: {', '.join(close)})" if close else ""
                raise self.fail(f"{where}.{key}", (
                    f"unknown wording key {key!r}{hint}; 'surveykit docs questionnaires' "
                    "lists every key under 'Wording and other languages'"))
            self.text(text, f"{where}.{key}")
            try:
                check_placeholders({key: text}, where)
            except ParameterError as exc:
                # "where: key ('text') uses ..." -> "where.key: 'text' uses ..."
                reason = str(exc).split(") ", 1)[-1]
                raise self.fail(f"{where}.{key}", f"{text!r} {reason}") from None
        return texts

    def text(self, text: str, where: str) -> None:
        """Refuse control characters (newlines and tabs are fine in long texts)."""
        problem = text_problem(text)
        if problem:
            raise self.fail(where, problem)

    def strings(self, value: object, where: str) -> Mapping[str, str]:
        if not isinstance(value, dict):
            raise self.fail(where, "must be a table of texts (key = \"text\")")
        for key, text in value.items():
            if not isinstance(text, str):
                raise self.fail(f"{where}.{key}", f"{text!r} must be a text in quotes")
        return MappingProxyType(dict(value))

    def string(self, data: dict, key: str, where: str, default: str | None = None, *,
               exact: bool = False) -> str:
        """A non-empty text; ``exact`` (names and ids) refuses spaces around it, which a
        response file's header or a command line would not match."""
        if key not in data:
            if default is not None:
                return default
            raise self.fail(where, "missing")
        value = data[key]
        if not isinstance(value, str) or not value.strip():
            raise self.fail(where, f"{value!r} must be a non-empty text in quotes")
        if exact and value != value.strip():
            raise self.fail(where, f"{value!r} has spaces at its start or end; write "
                                   f"{value.strip()!r}")
        self.text(value, where)
        return value.strip()

    def unknown_keys(self, data: dict, allowed: frozenset[str] | list[str], where: str,
                     listed: str | None = None) -> None:
        """Refuse a key not in ``allowed``, with the closest one and where it is;
        ``listed`` says what is allowed when a list of names would not."""
        unknown = sorted(set(data) - set(allowed))
        if unknown:
            key = unknown[0]
            raise self.fail_at(where, f"unknown key {key!r}"
                                      f"{allowed_keys(key, allowed, listed)}", key)
