"""The survey file's keys, declared once: the reference in docs/survey-file.md and the JSON
Schema editors use (``surveykit schema``) are made from :data:`KEYS` and the design registry.

The reader (:mod:`surveykit.definition.survey`, with :mod:`~surveykit.definition.profile`
and :mod:`~surveykit.definition.covariates`) validates by hand and says more than a schema
can (a question's aliases against its design, formulas against the declared covariates);
``tests/test_survey_file_doc.py`` keeps the three in step: every key the reader accepts is
declared here, every declared key is one the reader accepts, the guide's tables are the
ones :func:`keys_markdown` and :func:`design_parameters_markdown` make, and the shipped
``survey.schema.json`` is :func:`survey_schema`'s.

Paths name a key as the reader's errors do: ``questions[].design.model`` is ``model`` in
the ``[questions.design]`` table of any ``[[questions]]``; ``<header>`` stands for a key the
author names (a column header, a label, a covariate).

>>> next(key for key in KEYS if key.path == "language").default
'"en"'
>>> survey_schema()["required"]
['name', 'title', 'questions']
"""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from surveykit.definition.covariates import COVARIATE_KINDS
from surveykit.definition.survey import (
    MAX_DECIMALS,
    MAX_UNIT,
    QUESTION_TYPES,
    UNRELATED_NUMERIC_DESIGNS,
    wording_keys,
)
from surveykit.designs.registry import (
    ALIASES,
    PRESETS,
    QUANTITATIVE_ALIASES,
    QUANTITATIVE_PRESETS,
    RR_NAMES,
    accepted_parameters,
    parameter_names,
)

__all__ = ["INNOCUOUS_DESIGNS", "KEYS", "SCHEMA_PATH", "Key", "design_parameters_markdown",
           "keys_markdown", "model_names", "schema_text", "survey_schema", "table_keys"]

#: The shipped JSON Schema (``surveykit schema`` prints it).
SCHEMA_PATH = Path(__file__).with_name("survey.schema.json")
#: The designs that ask an innocuous question (the reader's list).
INNOCUOUS_DESIGNS = tuple(sorted(name for name, cls in PRESETS.items() if cls.asks_innocuous))
# rr's parameter names, per rr design name (besides the preset's own).
_RR_EXTRA = {rr_name: tuple(n for n in accepted_parameters(rr_name)
                            if n not in parameter_names(PRESETS[target]))
             for rr_name, target in RR_NAMES.items()}
_RR_EXTRA = {rr_name: extra for rr_name, extra in _RR_EXTRA.items() if extra}


@dataclass(frozen=True, kw_only=True)
class Key:
    """One key of the survey file: where it is, its type, its default, an example line."""

    path: str
    kind: str
    default: str
    example: str
    about: str


_DESIGN_ABOUT = ("the design's parameters, as RRreg names them (the table below); "
                 "`dont_know` adds the \"don't know\" branch to any design")

#: Every key of the survey file, in the order of the guide.
KEYS: tuple[Key, ...] = (
    Key(path="name", kind="text", default="required", example='name = "academic_integrity"',
        about="the survey's name in commands: 1-64 letters, digits, `_`, `-`, `.`"),
    Key(path="title", kind="text", default="required",
        example='title = "Academic integrity survey"', about="shown on forms and reports"),
    Key(path="language", kind="text", default='"en"', example='language = "fr"',
        about="language tag of the respondent texts (`en`, `pt-BR`)"),
    Key(path="design", kind="table", default="none",
        example='[design]', about="the default design of every question (or `[mechanism]`)"),
    Key(path="design.model", kind="text", default="required",
        example='model = "sld"', about="the design's name (RRreg's, a long alias or rr's)"),
    Key(path="design.innocuous", kind="text", default="required for uqtknown, uqtunknown, "
        "crosswise, triangular; for mix_unknown the unrelated numeric question (generate "
        "needs it); refused otherwise",
        example='innocuous = "Were you born in January, February or March?"',
        about="the innocuous question's text"),
    Key(path="design.<parameter>", kind="per design", default="per design",
        example="p = [0.1667, 0.8333]", about=_DESIGN_ABOUT),
    Key(path="mechanism", kind="table", default="none", example="[mechanism]",
        about="shorthand for `model = \"generalized_warner\"`; not with `[design]`"),
    Key(path="mechanism.p", kind="number in [0, 1]", default="required", example="p = 0.6",
        about="probability of answering truthfully"),
    Key(path="mechanism.q", kind="number in [0, 1]", default="required", example="q = 0.2",
        about="probability of the opposite answer; \"don't know\" gets 1 - p - q"),
    Key(path="wording", kind="table of texts", default="the shipped texts",
        example='intro = "Your answers are protected."',
        about="respondent-facing texts, keys of templates/wording.json "
              "(`surveykit docs questionnaires`)"),
    Key(path="aliases", kind="table of texts", default="none", example='"oui" = "yes"',
        about="raw answer -> one of the design's answers, for every question"),
    Key(path="questions", kind="array of tables", default="required (at least one)",
        example="[[questions]]", about="the sensitive questions"),
    Key(path="questions[].id", kind="text", default="required", example='id = "exam_cheating"',
        about="letters, digits, `_`, starting with a letter, at most 64; unique in any case"),
    Key(path="questions[].text", kind="text", default="required",
        example='text = "Have you ever cheated on an exam?"', about="the question as asked"),
    Key(path="questions[].type", kind="text", default='"choice"', example='type = "number"',
        about="`\"choice\"`: one of the design's answers; `\"number\"`: a number (income, "
              "partners) with a design for numeric answers (`eriksson`, `mix_norm`, ...)"),
    Key(path="questions[].range", kind="list of 2 numbers", default="none (unbounded)",
        example="range = [0, 100000]",
        about="numeric questions: the true values allowed (low, high); the privacy loss is "
              "stated for it"),
    Key(path="questions[].unit", kind="text", default="none", example='unit = "EUR"',
        about=f"numeric questions: the answer's unit, at most {MAX_UNIT} characters"),
    Key(path="questions[].decimals", kind="whole number", default="any",
        example="decimals = 2",
        about=f"numeric questions: most decimals an answer has (0 to {MAX_DECIMALS})"),
    Key(path="questions[].design", kind="table", default="the survey's `[design]`",
        example="[questions.design]", about="this question's design: the keys of `[design]`"),
    Key(path="questions[].mechanism", kind="table", default="the survey's design",
        example="[questions.mechanism]", about="this question's `[mechanism]` (p, q)"),
    Key(path="questions[].aliases", kind="table of texts", default="none",
        example='"si" = "yes"', about="raw answer -> answer, for this question"),
    Key(path="questions[].wording", kind="table of texts", default="the survey's wording",
        example='reminder = "Follow your rule."', about="wording for this question"),
    Key(path="import", kind="table", default="none", example="[import]",
        about="how field exports map (`surveykit docs field-imports`)"),
    Key(path="import.respondent_id", kind="text", default='"respondent_id"',
        example='respondent_id = "Questionnaire"', about="the column with the respondent id"),
    Key(path="import.group", kind="text", default='"group"', example='group = "Form version"',
        about="the column with the group"),
    Key(path="import.ignore", kind="list of texts", default="[]",
        example='ignore = ["Consent", "Interviewer"]', about="more columns to ignore"),
    Key(path="import.columns", kind="table of texts", default="none",
        example='"integrity/q1" = "exam_cheating"',
        about="header, path or question text -> question id or declared covariate"),
    Key(path="import.labels", kind="table of texts", default="none",
        example='"Je ne sais pas" = "dont_know"',
        about="label -> answer, or \"missing\" (an empty cell)"),
    Key(path="covariates", kind="table", default="none", example='age = "number"',
        about="other columns kept per respondent, typed"),
    Key(path="covariates.<name>", kind='"number", "category" or a table', default="-",
        example='campus = { type = "category", levels = ["north", "south"] }',
        about="a covariate's type, or a table with `type` and its checks"),
    Key(path="covariates.<name>.type", kind="text", default="required",
        example='type = "number"', about='"number" or "category"'),
    Key(path="covariates.<name>.levels", kind="list of texts", default="any text",
        example='levels = ["north", "south"]', about="a category's allowed values"),
    Key(path="covariates.<name>.min", kind="number", default="none", example="min = 16",
        about="a number's smallest value (inclusive)"),
    Key(path="covariates.<name>.max", kind="number", default="none", example="max = 99",
        about="a number's largest value (inclusive)"),
    Key(path="models", kind="array of tables", default="none", example="[[models]]",
        about="regressions `surveykit report` fits (`surveykit docs regression`)"),
    Key(path="models[].formula", kind="text", default="required",
        example='formula = "exam_cheating ~ age + C(faculty)"',
        about="one question and declared covariates, as in R"),
    Key(path="models[].family", kind="text", default='"gaussian" (question as a term)',
        example='family = "binomial"', about="the outcome's model when the question is a term"),
    Key(path="models[].sensitive_formula", kind="text", default='"~ 1"',
        example='sensitive_formula = "~ age"',
        about="the true answer's model when the question is a term"),
    Key(path="joint", kind="array of tables", default="none", example="[[joint]]",
        about="joint analyses of sensitive questions `surveykit report` shows "
        "(`surveykit docs joint`)"),
    Key(path="joint[].questions", kind="list of texts", default="required",
        example='questions = ["exam_cheating", "plagiarism"]',
        about="2 to 4 question ids of the survey, each once"),
    Key(path="joint[].title", kind="text", default="the questions' ids",
        example='title = "Cheating and plagiarism"', about="the report section's heading"),
    Key(path="sampling", kind="table", default="none (simple random sampling)",
        example="[sampling]", about="how the respondents were sampled, in R `survey`'s "
        "words; its columns are kept like covariates (`surveykit docs complex-samples`)"),
    Key(path="sampling.weight", kind="text", default="every respondent weighs 1",
        example='weight = "pw"', about="the column of each respondent's sampling weight"),
    Key(path="sampling.strata", kind="text", default="one stratum", example='strata = "stype"',
        about="the column of the first-stage strata"),
    Key(path="sampling.clusters", kind="text or list of texts", default="respondents are PSUs",
        example='clusters = ["dnum", "snum"]', about="one column per stage, first-stage PSU "
        "first"),
    Key(path="sampling.fpc", kind="text or list of texts", default="with replacement",
        example='fpc = ["fpc1", "fpc2"]', about="per stage, the column of the population "
        "size (> 1) or sampling fraction (<= 1)"),
    Key(path="sampling.population", kind="number > 0", default="the sum of the weights",
        example="population = 6194", about="N, for totals when no fpc gives it"),
    Key(path="sampling.lonely_psu", kind="text", default='"fail"',
        example='lonely_psu = "certainty"', about="a stratum with one PSU: fail, certainty, "
        "adjust, average or remove (survey's options)"),
    Key(path="sampling.nest", kind="true or false", default="false", example="nest = true",
        about="cluster ids repeat across strata (survey's `nest = TRUE`)"),
    Key(path="sampling.replicate_weights", kind="text or list of texts", default="none",
        example='replicate_weights = "repw*"',
        about="the producer's replicate-weight columns: a list, or a pattern matched "
        "against each file's header (natural order: repw1, repw2, ..., repw10)"),
    Key(path="sampling.replicate_type", kind="text", default="required with replicate_weights",
        example='replicate_type = "JK1"', about="JK1, JKn, BRR, Fay or bootstrap"),
    Key(path="sampling.replicate_scale", kind="number > 0", default="svrepdesign's",
        example="replicate_scale = 0.9875", about="the variance's scale"),
    Key(path="sampling.replicate_rscales", kind="list of numbers", default="1 each",
        example="replicate_rscales = [0.5, 0.5]", about="per replicate (JKn needs them)"),
    Key(path="sampling.replicate_rho", kind="number in (0, 1)", default="Fay only",
        example="replicate_rho = 0.5", about="Fay's coefficient"),
    Key(path="sampling.replicate_mse", kind="true or false", default="false",
        example="replicate_mse = true", about="centre on the full-sample estimate"),
    Key(path="sampling.replicate_combined", kind="true or false", default="true",
        example="replicate_combined = false",
        about="the columns are analysis weights (false: factors of the weight)"),
)


def table_keys(table: str) -> frozenset[str]:
    """The declared keys directly in ``table`` ("" for the top level).

    >>> sorted(table_keys("mechanism"))
    ['p', 'q']
    """
    prefix = f"{table}." if table else ""
    names = set()
    for key in KEYS:
        if key.path.startswith(prefix) and key.path != table:
            rest = key.path[len(prefix):]
            names.add(rest.split(".")[0].removesuffix("[]"))
    return frozenset(names)


def model_names(preset: str) -> list[str]:
    """Every lower-case spelling the reader takes for ``preset``: its name, its long
    aliases and rr's names (RRreg's and RRTCS's for a numeric design), with ``_`` or ``-``
    (the reader also takes any case).

    >>> model_names("fr")
    ['fr', 'forced_response', 'forced-response', 'forced_known', 'forced-known']
    """
    names = [preset, *(a for aliases in (ALIASES, RR_NAMES, QUANTITATIVE_ALIASES)
                       for a, target in aliases.items() if target == preset)]
    spelled = []
    for name in names:
        for variant in (name, name.replace("_", "-")):
            if variant not in spelled:
                spelled.append(variant)
    return spelled


def _parameters(preset: str) -> dict[str, bool]:
    """A preset's parameters -> whether the reader needs it (no default)."""
    cls = PRESETS[preset] if preset in PRESETS else QUANTITATIVE_PRESETS[preset]
    signature = inspect.signature(cls)
    return {name: signature.parameters[name].default is inspect.Parameter.empty
            for name in parameter_names(cls)}


_NUMBERS = {"type": "array", "items": {"type": "number"}, "minItems": 1}
_TEXTS = {"type": "array", "items": {"type": "string"}, "minItems": 1}
#: JSON Schema of each design parameter (a parameter missing here fails the schema's build).
_PARAMETER_SCHEMAS: dict[str, dict] = {
    "p": {"anyOf": [{"type": "number"}, _NUMBERS], "description": "probabilities (RRreg's p)"},
    "q": {"type": "number", "minimum": 0, "maximum": 1},
    "p0": {"type": "number", "minimum": 0, "maximum": 1, "description": "rr: forced no"},
    "p1": {"type": "number", "minimum": 0, "maximum": 1, "description": "rr: forced yes"},
    "dont_know": {"type": "number", "minimum": 0, "maximum": 1,
                  "description": "probability of the \"don't know\" branch"},
    "repetitions": {"type": "integer", "minimum": 1, "description": "Kuk's number of cards"},
    "k": {"type": "integer", "minimum": 2, "description": "number of categories"},
    "epsilon": {"type": "number", "exclusiveMinimum": 0, "description": "privacy budget"},
    "categories": _TEXTS, "states": _TEXTS, "responses": _TEXTS,
    "groups": {**_TEXTS, "description": "names of the groups"},
    "beta": {"type": "number", "minimum": 0, "exclusiveMaximum": 1,
             "description": "Diana-Perri 2: weight of the scrambling number U"},
    "mu": {"anyOf": [{"type": "number"}, {"type": "array", "items": {"type": "number"}}],
           "description": "mean of the scrambling number (a pair as [mu1, mu2])"},
    "sigma": {"anyOf": [{"type": "number"}, {"type": "array", "items": {"type": "number"}}],
              "description": "standard deviation of the scrambling number"},
    "scrambler": {"description": "the scrambling device: a kind (\"normal\", \"uniform\", "
                                 "\"die\", \"dice\") or a deck's cards [0, 1, 3, 5, 8], one per "
                                 "scrambler as a list"},
    "matrix": {"type": "array", "minItems": 1, "items": {"type": "array", "items": {
        "anyOf": [{"type": "number"}, _NUMBERS]}},
        "description": "P(response | state): rows responses, columns states (or one such "
                       "matrix per group)"},
}


def _rule(spellings: list[str], allowed: list[str], required: list[str]) -> dict:
    """If model is one of ``spellings``, only ``allowed`` keys and every ``required`` one."""
    return {"if": {"properties": {"model": {"enum": spellings}}, "required": ["model"]},
            "then": {"properties": {name: {} for name in allowed},
                     "additionalProperties": False, "required": required}}


def _design_schema() -> dict:
    every = sorted({name for preset in (*PRESETS, *QUANTITATIVE_PRESETS)
                    for name in _parameters(preset)}
                   | {name for extra in _RR_EXTRA.values() for name in extra})
    described = {k.path.removeprefix("design."): k.about for k in KEYS
                 if k.path.startswith("design.")}
    properties = {"model": {"type": "string", "description": described["model"],
                            "enum": [*(n for preset in PRESETS for n in model_names(preset)),
                                     *(n for preset in QUANTITATIVE_PRESETS
                                       for n in model_names(preset))]},
                  "innocuous": {"type": "string", "minLength": 1,
                                "description": described["innocuous"]},
                  **{name: _PARAMETER_SCHEMAS[name] for name in every}}
    rr_own = {r: [r, r.replace("_", "-")] for r in _RR_EXTRA}
    taken = {spelling for spellings in rr_own.values() for spelling in spellings}
    rules = []
    for preset in PRESETS:
        parameters = _parameters(preset)
        required = ["model", *(n for n, needed in parameters.items() if needed)]
        allowed = ["model", *parameters]
        if preset in INNOCUOUS_DESIGNS:
            allowed.append("innocuous")
            required.append("innocuous")
        spellings = [n for n in model_names(preset) if n not in taken]
        rules.append(_rule(spellings, allowed, required))
        for rr_name, target in RR_NAMES.items():
            if target == preset and rr_name in _RR_EXTRA:
                # rr's parameters (p truthful, p0, p1; or p and q) or the preset's own
                rules.append(_rule(rr_own[rr_name], [*allowed, *_RR_EXTRA[rr_name]],
                                   [n for n in required if n != "p"]))
    for preset in QUANTITATIVE_PRESETS:
        parameters = _parameters(preset)
        extra = ["innocuous"] if preset in UNRELATED_NUMERIC_DESIGNS else []
        rules.append(_rule(model_names(preset), ["model", *parameters, *extra],
                           ["model", *(n for n, needed in parameters.items() if needed)]))
    return {"type": "object", "description": "a design: model = NAME and its parameters",
            "required": ["model"], "properties": properties, "additionalProperties": False,
            "allOf": rules}


def _about(path: str) -> str:
    return next(key.about for key in KEYS if key.path == path)


def _sampling() -> dict:
    """The ``[sampling]`` table's schema (the reader, SamplingDesign.from_mapping, checks the
    rest: which keys go together, stages against fpc)."""
    def about(key: str, schema: dict) -> dict:
        return {**schema, "description": _about(f"sampling.{key}")}

    text = {"type": "string", "minLength": 1}
    texts = {"anyOf": [text, {"type": "array", "items": text}]}
    flag = {"type": "boolean"}
    positive = {"type": "number", "exclusiveMinimum": 0}
    return {"type": "object", "description": _about("sampling"), "additionalProperties": False,
            "properties": {
                "weight": about("weight", text), "strata": about("strata", text),
                "clusters": about("clusters", texts), "fpc": about("fpc", texts),
                "population": about("population", positive),
                "lonely_psu": about("lonely_psu", {"enum": ["fail", "certainty", "adjust",
                                                            "average", "remove"]}),
                "nest": about("nest", flag),
                "replicate_weights": about("replicate_weights", {"anyOf": [
                    text, {"type": "array", "items": text, "minItems": 2}]}),
                "replicate_type": about("replicate_type", {"enum": ["JK1", "JKn", "BRR", "Fay",
                                                                    "bootstrap"]}),
                "replicate_scale": about("replicate_scale", positive),
                "replicate_rscales": about("replicate_rscales", {
                    "type": "array", "items": {"type": "number", "minimum": 0}}),
                "replicate_rho": about("replicate_rho", {"type": "number",
                                                         "exclusiveMinimum": 0,
                                                         "exclusiveMaximum": 1}),
                "replicate_mse": about("replicate_mse", flag),
                "replicate_combined": about("replicate_combined", flag)}}


def _texts(path: str) -> dict:
    return {"type": "object", "description": _about(path),
            "additionalProperties": {"type": "string"}}


def survey_schema() -> dict:
    """The JSON Schema (draft 07) of a survey file, for editors (taplo, Even Better TOML).

    It checks what a schema can: the keys, their types, each design's parameters, the
    wording keys. The reader checks the rest (values against each other and the designs).
    """
    design = _design_schema()
    mechanism = {"type": "object", "description": _about("mechanism"),
                 "required": ["p", "q"], "additionalProperties": False,
                 "properties": {k: {"type": "number", "minimum": 0, "maximum": 1,
                                    "description": _about(f"mechanism.{k}")}
                                for k in ("p", "q")}}
    wording = {"type": "object", "description": _about("wording"),
               "additionalProperties": False,
               "properties": {key: {"type": "string"} for key in sorted(wording_keys())}}
    question = {
        "type": "object", "required": ["id", "text"], "additionalProperties": False,
        "properties": {
            "id": {"type": "string", "pattern": "^[A-Za-z][A-Za-z0-9_]{0,63}$",
                   "description": _about("questions[].id")},
            "text": {"type": "string", "minLength": 1,
                     "description": _about("questions[].text")},
            "type": {"enum": list(QUESTION_TYPES), "default": "choice",
                     "description": _about("questions[].type")},
            "range": {"type": "array", "items": {"type": "number"}, "minItems": 2,
                      "maxItems": 2, "description": _about("questions[].range")},
            "unit": {"type": "string", "minLength": 1, "maxLength": MAX_UNIT,
                     "description": _about("questions[].unit")},
            "decimals": {"type": "integer", "minimum": 0, "maximum": MAX_DECIMALS,
                         "description": _about("questions[].decimals")},
            "design": {**design, "description": _about("questions[].design")},
            "mechanism": {**mechanism, "description": _about("questions[].mechanism")},
            "aliases": _texts("questions[].aliases"),
            "wording": {**wording, "description": _about("questions[].wording")}}}
    covariate_table = {
        "type": "object", "required": ["type"], "additionalProperties": False,
        "properties": {
            "type": {"enum": list(COVARIATE_KINDS), "description": _about(
                "covariates.<name>.type")},
            "levels": {**_TEXTS, "description": _about("covariates.<name>.levels")},
            "min": {"type": "number", "description": _about("covariates.<name>.min")},
            "max": {"type": "number", "description": _about("covariates.<name>.max")}}}
    model = {"type": "object", "required": ["formula"], "additionalProperties": False,
             "properties": {
                 "formula": {"type": "string", "minLength": 1,
                             "description": _about("models[].formula")},
                 "family": {"enum": ["gaussian", "binomial"],
                            "description": _about("models[].family")},
                 "sensitive_formula": {"type": "string",
                                       "description": _about("models[].sensitive_formula")}}}
    joint = {"type": "object", "required": ["questions"], "additionalProperties": False,
             "properties": {
                 "questions": {"type": "array", "minItems": 2, "maxItems": 4,
                               "uniqueItems": True, "items": {"type": "string"},
                               "description": _about("joint[].questions")},
                 "title": {"type": "string", "minLength": 1,
                           "description": _about("joint[].title")}}}
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "surveykit survey file",
        "description": "A randomized-response survey ('surveykit docs survey-file').",
        "type": "object",
        "required": ["name", "title", "questions"],
        "additionalProperties": False,
        "not": {"required": ["design", "mechanism"]},
        "properties": {
            "name": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$",
                     "description": _about("name")},
            "title": {"type": "string", "minLength": 1, "description": _about("title")},
            "language": {"type": "string", "pattern": "^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$",
                         "default": "en", "description": _about("language")},
            "design": {**design, "description": _about("design")},
            "mechanism": mechanism,
            "wording": wording,
            "aliases": _texts("aliases"),
            "questions": {"type": "array", "minItems": 1, "items": question,
                          "description": _about("questions")},
            "import": {"type": "object", "description": _about("import"),
                       "additionalProperties": False, "properties": {
                           "respondent_id": {"type": "string", "minLength": 1,
                                             "description": _about("import.respondent_id")},
                           "group": {"type": "string", "minLength": 1,
                                     "description": _about("import.group")},
                           "ignore": {"type": "array", "items": {"type": "string"},
                                      "description": _about("import.ignore")},
                           "columns": _texts("import.columns"),
                           "labels": _texts("import.labels")}},
            "covariates": {"type": "object", "description": _about("covariates"),
                           "additionalProperties": {"anyOf": [
                               {"enum": list(COVARIATE_KINDS)}, covariate_table]}},
            "models": {"type": "array", "items": model, "description": _about("models")},
            "joint": {"type": "array", "items": joint, "description": _about("joint")},
            "sampling": _sampling(),
        },
    }


@lru_cache(maxsize=1)
def schema_text() -> str:
    """:func:`survey_schema` as the shipped file holds it (indented JSON, a final newline)."""
    return json.dumps(survey_schema(), indent=2, ensure_ascii=False) + "\n"


def keys_markdown() -> str:
    """The guide's table of every key (docs/survey-file.md, between its markers)."""
    rows = ["| key | type | default | example | what it is |", "|---|---|---|---|---|"]
    for key in KEYS:
        rows.append(f"| `{key.path}` | {key.kind} | {key.default} | `{key.example}` | "
                    f"{key.about} |")
    return "\n".join(rows) + "\n"


def design_parameters_markdown() -> str:
    """The guide's table of each design's parameters (from the design registry)."""
    rows = ["| model | also spelt | needs | may give |", "|---|---|---|---|"]
    for preset in (*PRESETS, *QUANTITATIVE_PRESETS):
        parameters = _parameters(preset)
        needed = [n for n, required in parameters.items() if required]
        if preset in INNOCUOUS_DESIGNS:
            needed.append("innocuous")
        optional = [n for n, required in parameters.items() if not required]
        if preset in UNRELATED_NUMERIC_DESIGNS:
            optional.append("innocuous")
        others = [n for n in model_names(preset)[1:] if "-" not in n]
        rows.append(f"| `{preset}` | {', '.join(f'`{n}`' for n in others) or '-'} | "
                    f"{', '.join(f'`{n}`' for n in needed) or '-'} | "
                    f"{', '.join(f'`{n}`' for n in optional) or '-'} |")
    return "\n".join(rows) + "\n"
