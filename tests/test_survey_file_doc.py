"""The survey file's reference (docs/survey-file.md), its JSON Schema (``surveykit schema``)
and the reader stay one (issue 22, item 5).

* Every key the reader accepts is declared (surveykit.definition.survey_schema.KEYS), and
  every declared key is one the reader accepts: the reader's own list of allowed keys, as
  its error for an undeclared key prints it, is compared with the declaration, table by
  table and design by design.
* The guide's tables are the ones made from the declaration; the shipped schema file is
  the one made from it.
* Every survey file in the repository (sample data, test fixtures, the guides' examples)
  passes both the schema and the reader; broken and hostile files are refused by both.
* Misspelt keys, design names and question ids get "did you mean", with line and column.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from surveykit.cli import main
from surveykit.definition.survey import parse_survey
from surveykit.definition.survey_schema import (
    INNOCUOUS_DESIGNS,
    KEYS,
    SCHEMA_PATH,
    design_parameters_markdown,
    keys_markdown,
    model_names,
    schema_text,
    survey_schema,
    table_keys,
)
from surveykit.designs.registry import PRESETS, parameter_names
from surveykit.errors import SurveyDefinitionError
from surveykit.guides import TOPICS, guide_text

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "survey-file.md").read_text(encoding="utf-8")
VALIDATOR = jsonschema.Draft7Validator(survey_schema())

MINIMAL = 'name = "s"\ntitle = "S"\n[design]\nmodel = "warner"\np = 0.7\n' \
          '[[questions]]\nid = "q1"\ntext = "Ever?"\n'


def refusal(text: str) -> str:
    with pytest.raises(SurveyDefinitionError) as caught:
        parse_survey(text, "s.toml")
    return str(caught.value)


def allowed_by_reader(text: str) -> set[str]:
    """The keys the reader says it allows, from its error for the key ``zz_undeclared``."""
    message = refusal(text)
    assert "unknown key 'zz_undeclared'" in message or "'zz_undeclared': unknown key" \
        in message or "zz_undeclared: unknown key" in message, message
    listed = re.search(r"allowed keys are (.*)$", message, flags=re.IGNORECASE).group(1)
    return {name.strip() for name in listed.split(",")}


# -- the declaration against the reader ------------------------------------------------------

TABLES = {
    "": MINIMAL + 'zz_undeclared = 1\n',
    "questions[]": MINIMAL + 'zz_undeclared = 1\n',
    "mechanism": MINIMAL.replace('[design]\nmodel = "warner"\np = 0.7\n',
                                 '[mechanism]\np = 0.6\nq = 0.2\nzz_undeclared = 1\n'),
    "import": MINIMAL + '[import]\nzz_undeclared = 1\n',
    "models[]": MINIMAL + '[[models]]\nformula = "q1 ~ 1"\nzz_undeclared = 1\n',
    "joint[]": MINIMAL + '[[questions]]\nid = "q2"\ntext = "Q2?"\n'
                         '[[joint]]\nquestions = ["q1", "q2"]\nzz_undeclared = 1\n',
}


@pytest.mark.parametrize("table", sorted(TABLES))
def test_every_key_the_reader_accepts_is_declared_and_no_other(table):
    text = TABLES[table]
    if table == "":
        text = 'zz_undeclared = 1\n' + MINIMAL
    assert allowed_by_reader(text) == set(table_keys(table))


@pytest.mark.parametrize("kind", ["number", "category"])
def test_covariate_keys_are_declared(kind):
    text = MINIMAL + f'[covariates]\nage = {{ type = "{kind}", zz_undeclared = 1 }}\n'
    declared = {"type", "levels"} if kind == "category" else {"type", "min", "max"}
    assert allowed_by_reader(text) == declared
    assert declared <= set(table_keys("covariates.<name>"))
    assert set(table_keys("covariates.<name>")) == {"type", "levels", "min", "max"}


@pytest.mark.parametrize("preset", list(PRESETS))
def test_each_design_takes_the_parameters_the_guide_and_schema_list(preset):
    text = MINIMAL.replace('model = "warner"\np = 0.7\n',
                           f'model = "{preset}"\nzz_undeclared = 1\n')
    message = refusal(text)
    listed = re.search(r"the parameters of (\w+) \(([^)]*)\)", message)
    assert listed is not None, message
    assert listed.group(1) == preset
    reader = {n.strip() for n in listed.group(2).split(",") if n.strip()}
    assert reader == set(parameter_names(PRESETS[preset]))
    row = next(line for line in DOC.splitlines() if line.startswith(f"| `{preset}` |"))
    assert set(re.findall(r"`(\w+)`", row.split("|", 3)[3])) - {"innocuous"} == reader
    rule = next(r for r in survey_schema()["properties"]["design"]["allOf"]
                if preset in r["if"]["properties"]["model"]["enum"])
    allowed = set(rule["then"]["properties"]) - {"model", "innocuous"}
    assert allowed == reader
    assert ("innocuous" in rule["then"]["required"]) == (preset in INNOCUOUS_DESIGNS)


def test_design_tables_declare_model_innocuous_and_the_parameters():
    assert set(table_keys("design")) == {"model", "innocuous", "<parameter>"}
    assert set(table_keys("questions[]")) >= {"design", "mechanism"}
    # a question's design table is the survey's: the reader uses one method for both
    text = MINIMAL.replace('text = "Ever?"\n', 'text = "Ever?"\n[questions.design]\n'
                                               'model = "warner"\nzz_undeclared = 1\n')
    assert "questions[0].design: unknown key 'zz_undeclared'" in refusal(text)


# -- the guide and the shipped schema ---------------------------------------------------------


def _between(marker: str) -> str:
    match = re.search(rf"<!-- {marker}: begin[^>]*-->\n(.*?)<!-- {marker}: end -->", DOC,
                      flags=re.DOTALL)
    assert match is not None, marker
    return match.group(1)


def test_the_guide_lists_every_declared_key_and_no_other():
    assert _between("keys") == keys_markdown()
    named = re.findall(r"^\| `([^`]+)` \|", _between("keys"), flags=re.MULTILINE)
    assert named == [key.path for key in KEYS]


def test_the_guide_lists_every_design_and_its_parameters():
    assert _between("designs") == design_parameters_markdown()


def test_the_shipped_schema_is_the_declared_one_and_a_valid_draft_7_schema():
    assert SCHEMA_PATH.read_text(encoding="utf-8") == schema_text()
    jsonschema.Draft7Validator.check_schema(json.loads(schema_text()))


def test_surveykit_schema_prints_and_writes_the_schema(tmp_path):
    printed = CliRunner().invoke(main, ["schema"])
    assert printed.exit_code == 0 and printed.stdout == schema_text()
    out = tmp_path / "survey.schema.json"
    written = CliRunner().invoke(main, ["schema", "--out", str(out)])
    assert written.exit_code == 0, written.output
    assert out.read_text(encoding="utf-8") == schema_text()
    assert written.stderr.startswith("Wrote the survey file's JSON Schema to ")
    missing = CliRunner().invoke(main, ["schema", "--out", str(tmp_path / "no" / "x.json")])
    assert missing.exit_code != 0
    assert missing.stderr.startswith("Error: --out ") and len(missing.stderr.splitlines()) == 1


def test_the_guide_ships_and_is_listed():
    assert "survey-file" in TOPICS
    assert guide_text("survey-file").startswith("# The survey file")


# -- every survey file of the repository ------------------------------------------------------


def repository_surveys() -> list[tuple[str, str]]:
    """(where, text) of every survey file: .toml files that are surveys, and every TOML
    block of the guides and the README that is a whole survey (has name and questions)."""
    found = []
    for path in sorted(ROOT.rglob("*.toml")):
        relative = path.relative_to(ROOT)
        if relative.parts[0] in (".git", "node_modules") or "node_modules" in relative.parts:
            continue
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
        if "questions" in data:
            found.append((str(relative), text))
        elif "import" in data and relative.parts[:2] == ("tests", "exports"):
            # an [import] profile the field tests append to the sample survey
            sample = (ROOT / "sample_data" / "academic_integrity.toml").read_text("utf-8")
            found.append((str(relative), sample + "\n" + text))
    for doc in [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]:
        blocks = re.findall(r"```toml\n(.*?)```", doc.read_text(encoding="utf-8"), re.DOTALL)
        for index, block in enumerate(blocks):
            try:
                data = tomllib.loads(block)
            except tomllib.TOMLDecodeError:
                continue
            if "name" in data and "questions" in data:
                found.append((f"{doc.relative_to(ROOT)} block {index + 1}", block))
    return found


SURVEYS = repository_surveys()


def test_the_repository_has_survey_files_of_every_kind():
    places = {where.split("/")[0] for where, _ in SURVEYS}
    assert {"sample_data", "tests", "docs"} <= places
    names = {where for where, _ in SURVEYS}
    assert {"tests/exports/french.toml", "tests/surveys/mixed.toml",
            "docs/survey-file.md block 1"} <= names
    assert len(SURVEYS) >= 10


@pytest.mark.parametrize(("where", "text"), SURVEYS, ids=[w for w, _ in SURVEYS])
def test_every_survey_file_in_the_repository_passes_the_schema_and_the_reader(where, text):
    errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}"
              for e in VALIDATOR.iter_errors(tomllib.loads(text))]
    assert errors == []
    parse_survey(text, where)


BROKEN = {
    "a misspelt key": ("[design]\nmodel", "[design]\nmodle"),
    "an unknown top-level key": ('title = "S"', 'title = "S"\ntitel = "x"'),
    "no title": ('title = "S"\n', ""),
    "no questions": ('[[questions]]\nid = "q1"\ntext = "Ever?"\n', ""),
    "a question id with spaces": ('id = "q1"', 'id = "q 1"'),
    "a text that is a number": ('text = "Ever?"', "text = 3"),
    "an unknown design": ('model = "warner"', 'model = "warnr"'),
    "a parameter of another design": ("p = 0.7", "p = 0.7\nq = 0.2"),
    "crosswise without its innocuous question": ('model = "warner"', 'model = "crosswise"'),
    "an innocuous question where there is none": ("p = 0.7", 'p = 0.7\ninnocuous = "Born in May?"'),
    "both design and mechanism": ("[[questions]]", "[mechanism]\np = 0.6\nq = 0.2\n[[questions]]"),
    "a probability above 1": ("[design]\nmodel = \"warner\"\np = 0.7",
                              "[mechanism]\np = 1.6\nq = 0.2"),
    "an unknown wording key": ("[[questions]]", '[wording]\nintroo = "Hi"\n[[questions]]'),
    "a covariate of an unknown type": ("[[questions]]", '[covariates]\nage = "numeric"\n'
                                                        "[[questions]]"),
    "a model family that does not exist": ("[[questions]]", '[[models]]\nformula = "q1 ~ 1"\n'
                                                            'family = "poisson"\n[[questions]]'),
    "a joint analysis of one question": ("[[questions]]", '[[joint]]\nquestions = ["q1"]\n'
                                                          "[[questions]]"),
    "a joint analysis naming a question twice": (
        "[[questions]]", '[[joint]]\nquestions = ["q1", "q1"]\n[[questions]]'),
    "an import key that does not exist": ("[[questions]]", '[import]\nrespondent = "x"\n'
                                                           "[[questions]]"),
    "a hostile name": ('name = "s"', 'name = "../../etc/passwd"'),
    "a language that is not a tag": ('title = "S"', 'title = "S"\nlanguage = "english!"'),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_and_hostile_files_are_refused_by_the_schema_and_the_reader(case):
    old, new = BROKEN[case]
    assert old in MINIMAL
    text = MINIMAL.replace(old, new, 1)
    assert list(VALIDATOR.iter_errors(tomllib.loads(text))), f"the schema accepts {case}"
    refusal(text)


# -- did you mean ------------------------------------------------------------------------------


def test_a_misspelt_model_key_is_named_with_the_key_it_means_and_where():
    # before: "design.model: missing: name the design"
    text = MINIMAL.replace('model = "warner"', 'modle = "warner"')
    assert refusal(text) == ("s.toml:4:1: design: unknown key 'modle', did you mean 'model'? "
                             "Allowed keys are model, innocuous and the design's parameters")


def test_misspelt_design_names_parameters_and_question_ids_get_the_closest_name():
    assert refusal(MINIMAL.replace('"warner"', '"wraner"')).startswith(
        "s.toml:4:9: design.model: unknown design 'wraner', did you mean 'warner'? The designs "
        "are warner, ")
    assert refusal(MINIMAL.replace("p = 0.7", "p = 0.7\ndont_kno = 0.1")).startswith(
        "s.toml:6:1: design: unknown key 'dont_kno', did you mean 'dont_know'? Allowed keys are "
        "model, innocuous and the parameters of warner (p, dont_know)")
    named = MINIMAL.replace('id = "q1"', 'id = "exam_cheating"')
    assert refusal(named + '[import.columns]\n"Q 1" = "exam_cheatng"\n') == (
        "s.toml: import.columns.\"Q 1\": 'exam_cheatng', did you mean 'exam_cheating'? It must "
        "be a question id of this survey (exam_cheating)")
    assert refusal(MINIMAL + '[[models]]\nformula = "q1 ~ 1"\nfamly = "binomial"\n') == (
        "s.toml: models[0].famly: unknown key, did you mean 'family'? Allowed keys are family, "
        "formula, sensitive_formula")
    # nothing close: no guess
    assert "did you mean" not in refusal(MINIMAL + "zzzz = 1\n")


def test_the_guide_shows_the_reader_s_own_message_for_its_example():
    example = re.search(r"## A complete example\n\n```toml\n(.*?)```", DOC, re.DOTALL).group(1)
    parse_survey(example, "survey.toml")
    with pytest.raises(SurveyDefinitionError) as caught:
        parse_survey(example.replace('model = "fr"', 'modle = "fr"'), "survey.toml")
    message = str(caught.value)
    assert f"$ surveykit survey add survey.toml\nError: {message}\n" in DOC


def test_model_names_are_every_spelling_the_reader_takes():
    for preset in PRESETS:
        for name in model_names(preset):
            text = MINIMAL.replace('model = "warner"', f'model = "{name}"')
            message = refusal(text.replace("p = 0.7", "zz_undeclared = 1"))
            assert f"the parameters of {preset} (" in message, (name, message)
