"""A numeric question's XLSForm texts follow the survey's language and wording (issue 23).

A yes/no question's rules in the XLSForm come from the wording keys (templates/wording.json,
the survey's ``[wording]``, the question's ``wording``), written in the ``label::Language
(tag)`` column of the survey's language; numeric questions' step notes used the designs'
English words (``Step.text()``) whatever the survey said. Now they are the die-mode paper
form's texts, from the same keys: a French survey's form has French numeric notes in its
``label::French (fr)`` column, a question's own wording wins over the survey's, and a key
the survey does not translate falls back to the English default, as it does for a yes/no
question. Each form passes pyxform and ODK Validate.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from field_clients import convert_many
from openpyxl import load_workbook

from surveykit.collection.render import load_wording_defaults, make_environment
from surveykit.collection.xlsform import build_xlsform, export_survey_xlsform
from surveykit.definition.survey import parse_survey
from tests.numeric_support import choice_question, income_question, numeric_survey

DEFAULTS = load_wording_defaults(make_environment())
# The survey's translation of every key a numeric note or rule uses, and of a yes/no rule.
FRENCH = {
    "question_label": "Question",
    "rule_label": "Votre règle",
    "die_roll_label": "Dé",
    "die_first_label": "Premier dé",
    "die_second_label": "Second dé",
    "rule_truthful": "Répondez sincèrement.",
    "rule_opposite": "Donnez le contraire de la vraie réponse.",
    "rule_dont_know": "Répondez « je ne sais pas », quelle que soit la vérité.",
    "number_truthful": "Écrivez votre vraie valeur.",
    "number_draw": "Écrivez {number}, quelle que soit votre vraie valeur.",
    "number_times": "Multipliez votre vraie valeur par {multiplier} et écrivez le résultat.",
    "number_round_whole": "Arrondissez à un nombre entier.",
    "number_device_value": "votre nombre {name}",
    "number_device_dice": "Votre nombre {name} : lancez {dice} en privé et additionnez les "
                          "faces.",
    "number_device_table": "Votre nombre {name} : lancez le dé en privé et lisez votre "
                           "résultat ci-dessous.",
}
PARTENAIRES = '''[[questions]]
id = "partenaires"
text = "Combien de partenaires ?"
type = "number"
range = [0, 50]
decimals = 0
[questions.wording]
number_times = "Multipliez votre vraie valeur par {multiplier}, puis écrivez le produit."
[questions.design]
model = "eichhorn_hayre"
scrambler = "dice"
'''
SURVEY = numeric_survey(
    choice_question("fraude", "Avez-vous déjà fraudé ?", 0.75),
    income_question("revenu", "Quel revenu avez-vous omis ?"),
    PARTENAIRES, name="impots", title="Impôts", head='language = "fr"\n[wording]\n{wording}\n')


def _toml(table: dict[str, str]) -> str:
    return "\n".join(f'{key} = "{value}"' for key, value in table.items())


def _survey(wording: dict[str, str]):
    return parse_survey(SURVEY.replace("{wording}", _toml(wording)), "impots.toml")


def _notes(form, question: str) -> list[str]:
    """The label texts of a question's notes (die table or drawn rules), as one list."""
    found = []
    for row in form.survey:
        if str(row["name"]).startswith(f"{question}_") and row["type"] == "note":
            assert list(row["label"]) == ["French (fr)"]
            found.append(row["label"]["French (fr)"])
    assert found
    return found


def _english(key: str) -> str:
    """The fixed words of an English default (between placeholders)."""
    return max(re.split(r"\{\w+\}", DEFAULTS[key]), key=len).strip()


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict[str, tuple[Path, list[str]]]:
    """The French survey exported in both modes, converted by pyxform and passed by ODK
    Validate in one run (a JVM each costs a second or two): mode -> (XLSForm, pyxform's
    warnings)."""
    folder = tmp_path_factory.mktemp("impots")
    xlsforms = {}
    for randomize in ("self", "device"):
        out = folder / f"impots-{randomize}.xlsx"
        export_survey_xlsform(_survey(FRENCH), out=out, randomize=randomize,
                              acknowledge_risk=True)
        xlsforms[randomize] = out
    warnings = convert_many({x: x.with_suffix(".xml") for x in xlsforms.values()})
    return {randomize: (x, warnings[x]) for randomize, x in xlsforms.items()}


@pytest.mark.parametrize("randomize", ["self", "device"])
def test_numeric_notes_are_in_the_surveys_language_and_wording(exported, randomize):
    survey = _survey(FRENCH)
    out, warnings = exported[randomize]
    assert warnings == []  # pyxform, ODK Validate

    # the workbook: one language column per localized cell, the survey's language
    header = [cell.value for cell in next(load_workbook(out)["survey"].iter_rows())]
    localized = [name for name in header if name and "::" in name]
    assert localized and {name.split("::")[1] for name in localized} == {"French (fr)"}

    form = build_xlsform(survey, randomize=randomize)
    income = "\n".join(_notes(form, "revenu"))
    partners = "\n".join(_notes(form, "partenaires"))
    yes_no = "\n".join(_notes(form, "fraude"))
    assert "Écrivez votre vraie valeur." in income
    assert "Écrivez votre nombre S, quelle que soit votre vraie valeur." in income
    assert "Répondez « je ne sais pas », quelle que soit la vérité." in income
    # the question's own wording wins over the survey's
    assert ("Multipliez votre vraie valeur par votre nombre S, puis écrivez le produit. "
            "Arrondissez à un nombre entier.") in partners
    assert "Répondez sincèrement." in yes_no and "Donnez le contraire" in yes_no
    if randomize == "self":
        assert "Dé 1–54: Écrivez votre vraie valeur." in income
        assert "Votre nombre S : lancez le dé en privé et lisez votre résultat ci-dessous." \
            in income and "Dé (d4) 2: 1000" in income
        assert "Votre nombre S : lancez d6 + d6 en privé et additionnez les faces." in partners
    else:
        assert "Question 2. Votre règle: Écrivez votre nombre S, quelle que soit votre " \
               "vraie valeur. S = ${revenu_code_1}." in income
    # no English text of a translated key, no design's own English words
    for key in FRENCH:
        if key not in ("question_label",):
            assert _english(key) not in income + partners, key
    assert "Report" not in income + partners and "true value" not in income + partners


def test_a_key_the_survey_does_not_translate_falls_back_to_english_as_for_yes_no():
    """Without number_truthful and rule_truthful in [wording], both the numeric step and the
    yes/no rule use the English defaults (templates/wording.json, or the --templates folder's
    translation); every translated key stays French."""
    wording = {k: v for k, v in FRENCH.items() if k not in ("number_truthful",
                                                            "rule_truthful")}
    form = build_xlsform(_survey(wording), randomize="device")
    income = "\n".join(_notes(form, "revenu"))
    yes_no = "\n".join(_notes(form, "fraude"))
    assert f"Votre règle: {DEFAULTS['number_truthful']}" in income
    assert f"Votre règle: {DEFAULTS['rule_truthful']}" in yes_no
    assert "Écrivez votre nombre S, quelle que soit votre vraie valeur." in income


def test_a_templates_translation_words_numeric_notes_as_it_words_yes_no_rules():
    """A --templates folder's wording.json (a translation of every key) is the defaults of
    numeric notes too."""
    translated = {**DEFAULTS, **FRENCH}
    form = build_xlsform(_survey({}), randomize="self", wording_defaults=translated)
    income = "\n".join(_notes(form, "revenu"))
    assert "Dé 1–54: Écrivez votre vraie valeur." in income
    assert "Dé 55–90: Écrivez votre nombre S, quelle que soit votre vraie valeur." in income
