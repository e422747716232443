"""What a questionnaire template needs, as plain data; no I/O.

A survey is rendered in one of two modes ('surveykit docs questionnaires'):

* ``slips``: each respondent gets a private *instruction slip* (question by
  question, the instruction drawn for them from the design's protocol:
  answer truthfully, answer "yes" whatever the truth is, answer another
  question, ...) and an *answer sheet* with their respondent id and the
  design's answer boxes. The answer sheet is the same for everybody of a
  group (form version) except the id; the slip carries no id and stays with
  the respondent.
* ``die``: everybody of a group gets the same form (plus their id); the
  respondent rolls dice in private and the form maps faces to instructions
  (:mod:`surveykit.collection.dice`).

Multi-group surveys (``Survey.groups``) give each respondent one group: the
sheet, slip and form show it ("Form version: A"; a form version, not a
secret) and the slip and die tables give that group's instructions.

Respondent-facing wording has English defaults in the templates folder
(``wording.json``); a survey's ``[wording]`` table overrides keys for the
whole survey and a question's ``wording`` table for that question only.
Unknown keys are refused, so a typo does not silently fall back to English.
Instruction texts come from :mod:`surveykit.collection.instructions`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from surveykit.collection.dice import (
    GroupDie,
    NumberDevice,
    die_plan,
    format_faces,
    numeric_die_plan,
)
from surveykit.collection.instructions import (
    answer_options,
    answer_text,
    check_placeholders,
    fill,
    instruction_text,
    state_text,
    wording_text,
)
from surveykit.collection.numeric import NumberRule, decimal_text, number_rules, scrambler_decimals
from surveykit.collection.randomizer import instruction_thresholds, question_protocols
from surveykit.designs.base import DONT_KNOW
from surveykit.errors import ParameterError

__all__ = [
    "MODES",
    "AnswerOption",
    "DieRowView",
    "DieRule",
    "DieTableView",
    "DieView",
    "FormQuestion",
    "FormView",
    "GroupView",
    "Page",
    "QuestionView",
    "QuestionnaireLayout",
    "Slip",
    "SlipLine",
    "build_layout",
    "merge_wording",
]

MODES: tuple[str, ...] = ("slips", "die")
Mode = Literal["slips", "die"]


@dataclass(frozen=True)
class GroupView:
    """A survey group (form version): its number 1, 2, ... and its name."""

    number: int
    name: str


@dataclass(frozen=True)
class AnswerOption:
    """One answer box: the response label the import reads and the text printed."""

    label: str
    text: str


@dataclass(frozen=True)
class DieRule:
    """Faces (low, high) of the (second) die that mean ``rule`` (an instruction kind, or the
    response label in a per-state table), and its text."""

    rule: str
    faces: tuple[int, int]
    instruction: str


@dataclass(frozen=True)
class DieRowView:
    """One face of the first die (``first`` is None with a single die) and its rules."""

    first: int | None
    rules: tuple[DieRule, ...]


@dataclass(frozen=True)
class DieTableView:
    """One lookup table. ``heading`` is empty for a table of instructions and names the true
    state for a per-state table ("If your true answer is Yes:"); ``count`` is the sentence
    of a die rolled several times (Kuk's cards), or the sentence shown instead of a table
    (numeric questions: a rule that needs no roll, dice to add up, cards to make), whose
    table then has no rows. ``dice`` and ``label`` are set for a numeric question's
    number table (its own dice, and the heading of its second column); else the
    question's dice and ``rule_label`` apply."""

    heading: str
    rows: tuple[DieRowView, ...]
    count: str = ""
    dice: tuple[int, ...] = ()
    label: str = ""


@dataclass(frozen=True)
class DieView:
    """What a question's form says to roll: the dice and one or more tables."""

    dice: tuple[int, ...]
    two_dice: bool
    kind: str
    tables: tuple[DieTableView, ...]


@dataclass(frozen=True)
class QuestionView:
    """A question as printed: 1-based number, id, text, merged wording, answer boxes.

    ``innocuous`` and ``prompt`` are set for designs that ask one combined
    question (crosswise, triangular): the innocuous question printed under the
    sensitive one, and the instructions for the combined answer.

    ``numeric`` is set for a numeric question (``type = "number"``): its sheet has a box
    for the reported number, followed by ``unit`` and the sentence ``number_hint``
    (whole numbers, at most so many decimals), and ``answers`` holds only "don't know"
    when the design has that branch.
    """

    number: int
    id: str
    text: str
    wording: Mapping[str, str]
    answers: tuple[AnswerOption, ...]
    innocuous: str | None = None
    prompt: str = ""
    numeric: bool = False
    unit: str = ""
    number_hint: str = ""


@dataclass(frozen=True)
class FormQuestion:
    """A question on one group's form, with that group's die table (die mode) or None."""

    question: QuestionView
    die: DieView | None


@dataclass(frozen=True)
class FormView:
    """Everything on the sheets (or die-mode forms) of one group, except the id."""

    group: GroupView
    show_group: bool
    questions: tuple[FormQuestion, ...]


@dataclass(frozen=True)
class SlipLine:
    """One line of a private slip: the question and the instruction drawn for it.

    ``rule`` is the instruction's kind (``truthful``, ``say``, ...; a CSS
    class in HTML), ``code`` its stable name (``say:yes``)."""

    question: QuestionView
    rule: str
    instruction: str
    code: str


@dataclass(frozen=True)
class Slip:
    """One private slip: its group (form version) and one line per question."""

    group: GroupView
    show_group: bool
    lines: tuple[SlipLine, ...]


@dataclass(frozen=True)
class Page:
    """One respondent's sheet or form: the id and the form of their group."""

    respondent_id: str
    form: FormView


@dataclass(frozen=True)
class QuestionnaireLayout:
    """Everything that is the same on every page of a group.

    ``slip_lines[j][g][i]`` is the slip line of instruction i of question j
    for group g (slips mode; empty for a numeric question). For a numeric question j,
    ``number_rules[j][g][i]`` is the rule of step i in group g and
    ``number_draws[j]`` the decimals each of its scramblers is printed with (None: a
    deck, exact); both are None for other questions.
    """

    survey_name: str
    title: str
    language: str
    mode: str
    wording: Mapping[str, str]
    questions: tuple[QuestionView, ...]
    groups: tuple[GroupView, ...]
    forms: tuple[FormView, ...]
    slip_lines: tuple[tuple[tuple[SlipLine, ...], ...], ...]
    number_rules: tuple[tuple[tuple[NumberRule, ...], ...] | None, ...] = ()
    number_draws: tuple[Mapping[str, int | None] | None, ...] = ()

    @property
    def show_groups(self) -> bool:
        """True for multi-group surveys: pages name their form version."""
        return len(self.groups) > 1

    def slip(self, group: int, drawn: Sequence[int],
             numbers: Sequence[Mapping[str, object] | None] | None = None) -> Slip:
        """The slip of a respondent of group ``group`` (0-based) with the instructions
        ``drawn`` (one index per question) and, for numeric questions, ``numbers[j]``:
        their drawn scrambling numbers by name (exact fractions, as printed). It
        deliberately holds no respondent id."""
        if len(drawn) != len(self.questions):
            raise ParameterError(f"{len(drawn)} instructions for {len(self.questions)} "
                                 "questions; give one per question")
        lines = []
        for j, i in enumerate(drawn):
            rules = self.number_rules[j] if self.number_rules else None
            if rules is None:
                lines.append(self.slip_lines[j][group][i])
                continue
            rule = rules[group if len(rules) > 1 else 0][i]  # one-group designs: the same
            values = (numbers[j] if numbers is not None else None) or {}
            missing = [name for name in rule.scramblers if name not in values]
            if missing:
                raise ParameterError(f"question {self.questions[j].id!r}: the rule "
                                     f"{rule.code!r} needs the drawn {', '.join(missing)}")
            view = self.questions[j]
            lines.append(SlipLine(question=view, rule=rule.step.kind, code=rule.key_code(values),
                                  instruction=rule.text(view.wording, values)))
        return Slip(group=self.groups[group], show_group=self.show_groups, lines=tuple(lines))

    def pages(self, respondent_ids: Sequence[str], groups: Sequence[int]) -> list[Page]:
        """One page per id, with the form of its group (0-based)."""
        return [Page(respondent_id=rid, form=self.forms[g])
                for rid, g in zip(respondent_ids, groups, strict=True)]


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
                    f"{', '.join(sorted(defaults))} ('surveykit docs questionnaires')"
                )
            merged[key] = str(text)
        check_placeholders(merged, where)
    return MappingProxyType(merged)


def _question_view(number: int, question, wording: Mapping[str, str]) -> QuestionView:
    design = question.design
    if getattr(question, "numeric", False):
        answers = ((AnswerOption(label=DONT_KNOW, text=wording_text(wording, "answer_dont_know")),)
                   if design.designed_dont_know > 0 else ())
        hint = ("" if question.decimals is None
                else wording_text(wording, "number_whole") if question.decimals == 0
                else fill(wording, "number_decimals", decimals=question.decimals))
        return QuestionView(number=number, id=question.id, text=question.text,
                            wording=wording, answers=answers, numeric=True,
                            unit=question.unit or "", number_hint=hint)
    answers = tuple(AnswerOption(label=label, text=text)
                    for label, text in answer_options(design, wording))
    prompt = design.combined_wording.get("prompt")
    combined = prompt is not None and design.protocol.kind == "combined"
    return QuestionView(
        number=number, id=question.id, text=question.text, wording=wording, answers=answers,
        innocuous=question.innocuous if combined else None,
        prompt=wording_text(wording, prompt) if combined and prompt else "")


def _slip_lines(question, view: QuestionView, groups: int
                ) -> tuple[tuple[SlipLine, ...], ...]:
    design = question.design
    lines = []
    for instructions in question_protocols(design, groups):
        instruction_thresholds(instructions)  # refuses a protocol that cannot be drawn
        lines.append(tuple(
            SlipLine(question=view, rule=i.kind, code=i.code,
                     instruction=instruction_text(i, design, view.wording,
                                                  innocuous=question.innocuous))
            for i in instructions))
    return tuple(lines)


def _die_view(die: GroupDie, question, wording: Mapping[str, str]) -> DieView:
    design = question.design
    tables = []
    if die.kind == "instructions":
        texts = [instruction_text(i, design, wording, innocuous=question.innocuous)
                 for i in die.instructions]
        tables.append(DieTableView(heading="", rows=_rows(die.table, [
            i.kind for i in die.instructions], texts)))
    for table in die.states:
        heading = fill(wording, "die_state", state=state_text(table.state, wording))
        if die.kind == "count":
            red = table.table.rows()[0].spans[0]
            count = fill(wording, "die_count", die=f"d{die.dice[0]}",
                         repetitions=die.repetitions,
                         faces=format_faces(red, wording_text(wording, "die_none")))
            tables.append(DieTableView(heading=heading, rows=(), count=count))
            continue
        texts = [fill(wording, "die_answer", answer=answer_text(design, response, wording))
                 for response in table.entries]
        tables.append(DieTableView(heading=heading,
                                   rows=_rows(table.table, table.entries, texts)))
    return DieView(dice=die.dice, two_dice=len(die.dice) == 2, kind=die.kind,
                   tables=tuple(tables))


def _numeric_die_view(question, wording: Mapping[str, str], step_die: GroupDie | None,
                      rules: Sequence[NumberRule], devices: Sequence[NumberDevice]
                      ) -> DieView:
    """A numeric question's form: the table that picks the step (or the one rule), then how
    to draw each scrambling number the rules use."""
    tables = []
    if step_die is None:
        tables.append(DieTableView(heading="", rows=(), count=rules[0].device_text(wording)))
    else:
        by_code = {rule.code: rule for rule in rules}
        used = [by_code[step.code] for step in step_die.instructions]
        tables.append(DieTableView(heading="", rows=_rows(
            step_die.table, [rule.step.kind for rule in used],
            [rule.device_text(wording) for rule in used])))
    for device in devices:
        if device.kind == "dice":
            key = "number_device_die" if len(device.dice) == 1 else "number_device_dice"
            # "d6 + d6", as die tables name dice: no English words inside a translated text
            count = fill(wording, key, name=device.name,
                         dice=" + ".join(f"d{sides}" for sides in device.dice))
            tables.append(DieTableView(heading="", rows=(), count=count))
        elif device.kind == "cards":
            count = fill(wording, "number_device_cards", name=device.name,
                         cards=len(device.values),
                         values=", ".join(decimal_text(v) for v in device.values))
            tables.append(DieTableView(heading="", rows=(), count=count))
        else:
            texts = [decimal_text(v) for v in device.values]
            tables.append(DieTableView(
                heading=fill(wording, "number_device_table", name=device.name),
                rows=_rows(device.table, texts, texts), dice=device.dice,
                label=fill(wording, "number_value_label", name=device.name)))
    dice = step_die.dice if step_die is not None else ()
    return DieView(dice=dice, two_dice=len(dice) == 2, kind="numeric", tables=tuple(tables))


def _rows(table, rules: Sequence[str], texts: Sequence[str]) -> tuple[DieRowView, ...]:
    return tuple(
        DieRowView(first=row.first, rules=tuple(
            DieRule(rule=rule, faces=span, instruction=text)
            for rule, text, span in zip(rules, texts, row.spans, strict=True)
            if span is not None))
        for row in table.rows())


def build_layout(survey, *, mode: Mode, wording_defaults: Mapping[str, str]
                 ) -> QuestionnaireLayout:
    """The shared part of every respondent's pages for ``survey`` in ``mode``.

    ``survey`` is a :class:`surveykit.definition.survey.Survey` (name, title,
    language, wording, groups, questions with id, text, design, innocuous and
    wording). In die mode each question's design must be realizable by dice,
    else the :class:`surveykit.collection.dice.DieDesignError` names the
    question and the nearest design.
    """
    if mode not in MODES:
        raise ParameterError(f"mode ({mode!r}) must be one of {', '.join(MODES)}")
    survey_wording = merge_wording(wording_defaults,
                                   (f"survey {survey.name!r} [wording]", survey.wording))
    groups = tuple(GroupView(number=i, name=name) for i, name in enumerate(survey.groups, 1))
    questions, slip_lines, dice = [], [], []
    numbers: list = []
    draws: list = []
    for number, question in enumerate(survey.questions, start=1):
        try:
            wording = merge_wording(survey_wording,
                                    (f"question {question.id!r} wording", question.wording))
            view = _question_view(number, question, wording)
            questions.append(view)
            if view.numeric:
                rules = number_rules(question, wording)
                numbers.append(rules)
                draws.append(MappingProxyType(scrambler_decimals(question)))
                slip_lines.append(())
                if mode == "slips":
                    for group_rules in rules:
                        instruction_thresholds([rule.step for rule in group_rules])
                    dice.append((None,) * len(groups))
                    continue
                steps, devices = numeric_die_plan(question.design)
                own = len(question.design.group_names)
                dice.append(tuple(
                    _numeric_die_view(question, wording, steps[g if own > 1 else 0],
                                      rules[g if own > 1 else 0], devices)
                    for g in range(len(groups))))
                continue
            numbers.append(None)
            draws.append(None)
            if mode == "slips":
                slip_lines.append(_slip_lines(question, view, len(groups)))
                dice.append((None,) * len(groups))
                continue
            plan = die_plan(question.design)
            own = len(question.design.group_names)
            dice.append(tuple(
                None if plan[g if own > 1 else 0] is None
                else _die_view(plan[g if own > 1 else 0], question, wording)
                for g in range(len(groups))))
        except ParameterError as exc:
            if str(exc).startswith("question "):
                raise
            raise _with_question(exc, question.id) from None
    forms = tuple(
        FormView(group=group, show_group=len(groups) > 1, questions=tuple(
            FormQuestion(question=view, die=dice[j][g]) for j, view in enumerate(questions)))
        for g, group in enumerate(groups))
    return QuestionnaireLayout(survey_name=survey.name, title=survey.title,
                               language=survey.language, mode=mode, wording=survey_wording,
                               questions=tuple(questions), groups=groups, forms=forms,
                               slip_lines=tuple(slip_lines), number_rules=tuple(numbers),
                               number_draws=tuple(draws))


def _with_question(exc: ParameterError, question_id: str) -> ParameterError:
    exc.args = (f"question {question_id!r}: {exc.args[0]}",) + exc.args[1:]
    return exc
