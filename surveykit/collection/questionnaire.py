"""What a questionnaire template needs, as plain data; no I/O.

A survey is rendered in one of two modes (docs/questionnaires.md):

* ``slips``: each respondent gets a private *instruction slip* (question by
  question, the rule their code says: answer truthfully, give the opposite
  answer, or say "don't know") and an *answer sheet* with their respondent id
  and yes / no / don't know boxes. The answer sheet is the same for everybody
  except the id; the slip carries no id and stays with the respondent.
* ``die``: everybody gets the same form (plus their id); the respondent rolls
  dice in private and the form maps faces to rules (:mod:`surveykit.collection.dice`).

Respondent-facing wording has English defaults in the templates folder
(``wording.json``); a survey's ``[wording]`` table overrides keys for the
whole survey and a question's ``wording`` table for that question only.
Unknown keys are refused, so a typo does not silently fall back to English.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from surveykit.collection.dice import DieDesign, find_die_design
from surveykit.errors import ParameterError

__all__ = [
    "MODES",
    "RULE_KEYS",
    "DieRule",
    "DieRowView",
    "DieView",
    "QuestionView",
    "QuestionnaireLayout",
    "SlipLine",
    "build_layout",
    "build_slip",
    "merge_wording",
]

MODES: tuple[str, ...] = ("slips", "die")
Mode = Literal["slips", "die"]

#: Code -> (rule name used in templates, wording key of its instruction).
RULE_KEYS: Mapping[str, tuple[str, str]] = MappingProxyType({
    "T": ("truthful", "rule_truthful"),
    "L": ("opposite", "rule_opposite"),
    "D": ("dont_know", "rule_dont_know"),
})


@dataclass(frozen=True)
class DieRule:
    """Faces (low, high) of the (second) die that mean ``rule``, and its instruction."""

    rule: str
    faces: tuple[int, int]
    instruction: str


@dataclass(frozen=True)
class DieRowView:
    """One face of the first die (``first`` is None with a single die) and its rules."""

    first: int | None
    rules: tuple[DieRule, ...]


@dataclass(frozen=True)
class DieView:
    """The lookup table printed under a question in die mode."""

    dice: tuple[int, ...]
    two_dice: bool
    rows: tuple[DieRowView, ...]


@dataclass(frozen=True)
class QuestionView:
    """A question as printed: 1-based number, id, text, merged wording, die table."""

    number: int
    id: str
    text: str
    wording: Mapping[str, str]
    die: DieView | None


@dataclass(frozen=True)
class QuestionnaireLayout:
    """Everything that is the same on every respondent's pages."""

    survey_name: str
    title: str
    language: str
    mode: str
    wording: Mapping[str, str]
    questions: tuple[QuestionView, ...]


@dataclass(frozen=True)
class SlipLine:
    """One line of a private slip: the question and the rule the respondent's code says."""

    question: QuestionView
    rule: str
    instruction: str


def merge_wording(defaults: Mapping[str, str], *overrides: tuple[str, Mapping[str, str]]
                  ) -> Mapping[str, str]:
    """Defaults updated by each ``(where, table)`` in turn; unknown keys are refused.

    >>> merge_wording({"answer_yes": "Yes"}, ("survey wording", {"answer_yes": "Oui"}))
    mappingproxy({'answer_yes': 'Oui'})
    """
    merged = dict(defaults)
    for where, table in overrides:
        for key, text in table.items():
            if key not in defaults:
                raise ParameterError(
                    f"{where}: unknown wording key {key!r}; known keys are "
                    f"{', '.join(sorted(defaults))} (docs/questionnaires.md)"
                )
            merged[key] = str(text)
    return MappingProxyType(merged)


def _die_view(design: DieDesign, wording: Mapping[str, str]) -> DieView:
    rows = []
    for row in design.rows():
        rules = tuple(
            DieRule(rule=name, faces=span, instruction=wording[key])
            for (name, key), span in zip(
                RULE_KEYS.values(), (row.truthful, row.opposite, row.dont_know), strict=True)
            if span is not None
        )
        rows.append(DieRowView(first=row.first, rules=rules))
    return DieView(dice=design.dice, two_dice=len(design.dice) == 2, rows=tuple(rows))


def build_layout(survey, *, mode: Mode, wording_defaults: Mapping[str, str]
                 ) -> QuestionnaireLayout:
    """The shared part of every respondent's pages for ``survey`` in ``mode``.

    ``survey`` is a :class:`surveykit.definition.survey.Survey` (name, title, language,
    wording, questions with id, text, mechanism and wording). In die mode each
    question's mechanism must be realizable by dice, else the
    :class:`surveykit.collection.dice.DieDesignError` names the question and the nearest
    design.
    """
    if mode not in MODES:
        raise ParameterError(f"mode ({mode!r}) must be one of {', '.join(MODES)}")
    survey_wording = merge_wording(wording_defaults,
                                   (f"survey {survey.name!r} [wording]", survey.wording))
    questions = []
    for number, question in enumerate(survey.questions, start=1):
        wording = merge_wording(survey_wording,
                                (f"question {question.id!r} wording", question.wording))
        die = None
        if mode == "die":
            mechanism = question.mechanism
            try:
                design = find_die_design(mechanism.p, mechanism.q)
            except ParameterError as exc:
                raise _with_question(exc, question.id) from None
            die = _die_view(design, wording)
        questions.append(QuestionView(number=number, id=question.id, text=question.text,
                                      wording=wording, die=die))
    return QuestionnaireLayout(survey_name=survey.name, title=survey.title,
                               language=survey.language, mode=mode, wording=survey_wording,
                               questions=tuple(questions))


def _with_question(exc: ParameterError, question_id: str) -> ParameterError:
    exc.args = (f"question {question_id!r}: {exc.args[0]}",) + exc.args[1:]
    return exc


def build_slip(layout: QuestionnaireLayout, codes: Sequence[str]) -> list[SlipLine]:
    """The lines of one private slip: for each question, the rule its code ("T", "L" or
    "D") says, in that question's wording.

    The slip deliberately holds no respondent id (docs/questionnaires.md).
    """
    if len(codes) != len(layout.questions):
        raise ParameterError(
            f"{len(codes)} codes for {len(layout.questions)} questions; give one per question"
        )
    lines = []
    for question, code in zip(layout.questions, codes, strict=True):
        try:
            rule, key = RULE_KEYS[code]
        except KeyError:
            raise ParameterError(f"code {code!r} must be one of T, L, D") from None
        lines.append(SlipLine(question=question, rule=rule, instruction=question.wording[key]))
    return lines
