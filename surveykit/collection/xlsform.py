"""XLSForms for ODK Collect, KoboToolbox, Enketo and ODK Web Forms (docs/field-collection.md).

An XLSForm is a workbook with three sheets: ``survey`` (one row per question
or note), ``choices`` (the answers of each ``select_one`` list) and
``settings``. Field tools convert it to an XForm (pyxform) and fill it on a
tablet or in a browser. The form surveykit writes holds, in this order:

* a note with the introduction and how the rules work;
* ``respondent_id`` (text, required, checked against the id format of
  :mod:`surveykit.collection.respondent_ids`, in any case and with or without
  hyphens, as imports read it);
* ``group`` (``select_one``, required) when the survey's questions have
  several groups: the form version printed with the id, not a secret;
* per question the randomization (below), then the answer, named after the
  question id, as ``select_one`` over the design's responses (yes / no /
  don't know for binary designs), required.

Two ways to randomize (``randomize``):

* ``"self"`` (default): the respondent rolls dice in private; a note shows
  the lookup table of :mod:`surveykit.collection.dice` (faces -> rule). The
  device never learns the roll, so the form is private on every client.
* ``"device"``: the form draws ``random()`` once, as a dynamic default (at
  the form's first load), and shows only the rule it selects. The draw, the
  rule's code and its note are *relevant only while the answer is empty*;
  the answer is required, so a finalized submission holds none of them
  (JavaRosa and ODK Web Forms leave non-relevant nodes out of what they
  serialize). Two limits remain, :data:`DEVICE_RISKS`: on ODK Collect the
  draw can be recomputed from the submission's instanceID, and a draft
  saved before an answer holds the draw. It is written only when the caller
  acknowledges them.

The usual XLSForm for randomized response (``calculate`` with
``once(random())`` and a note) stores the draw next to the answer in every
submission; surveykit never writes it.

Texts come from the survey's wording (templates/wording.json, the survey's
``[wording]``, each question's ``wording``): the same texts as the paper
forms. Label, hint and constraint message columns are named
``label::English (en)`` etc., one per language of the survey.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from types import MappingProxyType

from surveykit.collection.questionnaire import (
    DieView,
    QuestionView,
    build_layout,
    merge_wording,
)
from surveykit.collection.render import faces, load_wording_defaults, make_environment
from surveykit.collection.respondent_ids import ID_GROUPS
from surveykit.designs.base import Design, Instruction
from surveykit.designs.warner import GeneralizedWarner
from surveykit.errors import ParameterError

__all__ = [
    "DEVICE_RISKS",
    "RANDOMIZE",
    "XLSForm",
    "XLSFormExport",
    "build_xlsform",
    "export_xlsform",
    "id_constraint",
    "language_column",
    "write_xlsform",
]

#: How the rule of each question is drawn: by the respondent's dice, or by the device.
RANDOMIZE: tuple[str, ...] = ("self", "device")

#: The two limits of ``randomize="device"``, stated wherever that form is written.
DEVICE_RISKS: tuple[str, ...] = (
    "ODK Collect (and KoboCollect, built on it) draws random() and the uuid that "
    "becomes meta/instanceID from one java.util.Random: anyone who holds the "
    "submissions can recover the generator's 48-bit state from the instanceID every "
    "submission carries, and with it every draw ('surveykit docs field-collection' shows it "
    "done). Enketo and ODK Web Forms take the instanceID from the browser's secure "
    "generator.",
    "Drafts hold the draw: a form saved before a question is answered keeps that "
    "question's draw on the device until the form is finalized.",
)

# XLSForm columns, in the order written; the localized ones get "::Language (code)".
_SURVEY_COLUMNS = ("type", "name", "label", "hint", "required", "relevant", "constraint",
                   "constraint_message", "calculation", "default", "appearance")
_LOCALIZED = frozenset({"label", "hint", "constraint_message"})
_CHOICE_COLUMNS = ("list_name", "name", "label")
_SETTINGS_COLUMNS = ("form_title", "form_id", "version", "instance_name", "default_language")

# English names of common language tags, for the "English (en)" form ODK documents;
# other tags are written as "xx (xx)", which the tools accept as well.
_LANGUAGE_NAMES: Mapping[str, str] = MappingProxyType({
    "am": "Amharic", "ar": "Arabic", "bn": "Bengali", "de": "German", "en": "English",
    "es": "Spanish", "fa": "Persian", "fr": "French", "ha": "Hausa", "hi": "Hindi",
    "id": "Indonesian", "it": "Italian", "ja": "Japanese", "ko": "Korean", "nl": "Dutch",
    "pl": "Polish", "pt": "Portuguese", "ru": "Russian", "sw": "Swahili", "th": "Thai",
    "tr": "Turkish", "uk": "Ukrainian", "ur": "Urdu", "vi": "Vietnamese", "yo": "Yoruba",
    "zh": "Chinese",
})
# Names the form uses besides the question ids.
_FIXED_NAMES = ("intro", "respondent_id", "group", "meta")
_ANSWER_WORDING = {"yes": "answer_yes", "no": "answer_no", "dont_know": "answer_dont_know"}


def language_column(tag: str) -> str:
    """The language as XLSForm column suffixes name it: ``Name (tag)``.

    >>> language_column("en"), language_column("pt-BR"), language_column("xx")
    ('English (en)', 'Portuguese (pt-BR)', 'xx (xx)')
    """
    name = _LANGUAGE_NAMES.get(tag.split("-")[0].casefold(), tag)
    return f"{name} ({tag})"


def id_constraint() -> str:
    """The XPath constraint on ``respondent_id``: 14 symbols in groups 4-4-4-2.

    Symbols are Crockford base32 in either case, and I, L, O (read as 1, 1, 0,
    as :func:`surveykit.collection.respondent_ids.normalize_respondent_id`
    does); groups may be joined by a hyphen, a space or nothing.

    >>> id_constraint()[:40]
    "regex(., '^ *[0-9A-TV-Za-tv-z]{4}[- ]?[0"
    """
    symbol = "[0-9A-TV-Za-tv-z]"  # every letter but U; I, L, O are typed 1, 1, 0
    body = "[- ]?".join(f"{symbol}{{{n}}}" for n in ID_GROUPS)
    return f"regex(., '^ *{body} *$')"


@dataclass(frozen=True, kw_only=True)
class XLSForm:
    """The three sheets of an XLSForm, as plain rows (no I/O).

    Localized cells (label, hint, constraint_message) map a language column
    name (``"English (en)"``) to the text.
    """

    survey: tuple[Mapping[str, object], ...]
    choices: tuple[Mapping[str, object], ...]
    settings: Mapping[str, str]
    languages: tuple[str, ...]
    randomize: str
    answer_fields: tuple[str, ...]

    def sheets(self) -> dict[str, tuple[tuple[str, ...], list[tuple[str, ...]]]]:
        """Sheet name -> (header, rows of text cells), with ``label::Language`` columns."""
        return {
            "survey": self._table(_SURVEY_COLUMNS, self.survey),
            "choices": self._table(_CHOICE_COLUMNS, self.choices),
            "settings": (_SETTINGS_COLUMNS,
                         [tuple(self.settings.get(c, "") for c in _SETTINGS_COLUMNS)]),
        }

    def _table(self, columns: Sequence[str], rows: Sequence[Mapping[str, object]]
               ) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
        used = [c for c in columns if any(row.get(c) for row in rows)]
        header: list[str] = []
        for column in used:
            if column in _LOCALIZED:
                header += [f"{column}::{language}" for language in self.languages]
            else:
                header.append(column)
        table = []
        for row in rows:
            cells: list[str] = []
            for column in used:
                value = row.get(column, "")
                if column in _LOCALIZED:
                    texts = value if isinstance(value, Mapping) else {}
                    cells += [str(texts.get(language, "")) for language in self.languages]
                else:
                    cells.append(str(value))
            table.append(tuple(cells))
        return tuple(header), table


@dataclass(frozen=True)
class XLSFormExport:
    """What :func:`export_xlsform` wrote."""

    path: Path
    survey: str
    form_id: str
    version: str
    randomize: str
    languages: tuple[str, ...]
    answer_fields: tuple[str, ...]
    risks: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict:
        """Plain JSON-ready data."""
        return {
            "path": str(self.path), "survey": self.survey, "form_id": self.form_id,
            "version": self.version, "randomize": self.randomize,
            "languages": list(self.languages), "answer_fields": list(self.answer_fields),
            "risks": list(self.risks),
        }


class FieldNameError(ParameterError):
    """Two fields of the form need the same name (a question id collides with a helper
    field); ``survey add`` refuses such a survey (see :mod:`surveykit.readiness`)."""


def _ref(name: str) -> str:
    return "${" + name + "}"


def _number(value: Fraction) -> str:
    # shortest decimal that reads back as the same double: random() < 0.6, not 0.59999...
    return repr(float(value))


class _Builder:
    """Collects the rows of one form; ``texts`` makes localized cells."""

    def __init__(self, survey, languages: tuple[str, ...], wording: Mapping[str, str]) -> None:
        self.survey = survey
        self.languages = languages
        self.wording = wording
        self.rows: list[dict[str, object]] = []
        self.choices: list[dict[str, object]] = []
        self.lists: dict[tuple[str, ...], str] = {}
        self.names: dict[str, str] = {}

    def texts(self, text: str) -> dict[str, str]:
        # One language today: a survey file has one language. More languages are more
        # entries here, from the survey's translations.
        return dict.fromkeys(self.languages, text)

    def add(self, owner: str, **cells: object) -> None:
        name = str(cells["name"])
        if name in self.names:
            raise FieldNameError(
                f"question id {owner!r}: the form needs the field name {name!r} for "
                f"{self.names[name]}; rename the question in the survey file")
        self.names[name] = f"question {owner!r}"
        self.rows.append(cells)

    def choice_list(self, responses: tuple[str, ...], wording: Mapping[str, str]) -> str:
        if responses not in self.lists:
            name = "answers" if not self.lists else f"answers_{len(self.lists) + 1}"
            self.lists[responses] = name
            for response in responses:
                key = _ANSWER_WORDING.get(response)
                label = wording[key] if key else response
                self.choices.append({"list_name": name, "name": response,
                                     "label": self.texts(label)})
        return self.lists[responses]


def build_xlsform(survey, *, randomize: str = "self",
                  wording_defaults: Mapping[str, str] | None = None) -> XLSForm:
    """The XLSForm of ``survey`` (a :class:`surveykit.definition.survey.Survey`), no I/O.

    ``randomize="self"``: die tables as notes (any die of
    :func:`surveykit.collection.dice.find_die_design`); ``"device"``: the
    guarded device draw described in the module docstring.

    >>> from surveykit.definition.survey import load_survey_file
    >>> from surveykit.resources import locate_resource
    >>> survey = load_survey_file(locate_resource("sample_data") / "academic_integrity.toml")
    >>> form = build_xlsform(survey)
    >>> [row["name"] for row in form.survey][:4]
    ['intro', 'respondent_id', 'exam_cheating_die', 'exam_cheating']
    >>> form.settings["form_id"], form.answer_fields[:2]
    ('academic_integrity', ('exam_cheating', 'plagiarism'))
    """
    if randomize not in RANDOMIZE:
        raise ParameterError(
            f"randomize ({randomize!r}) must be one of {', '.join(RANDOMIZE)}: self (the "
            "respondent rolls dice) or device (the form draws, see 'surveykit docs "
            "field-collection')")
    if wording_defaults is None:
        wording_defaults = load_wording_defaults(make_environment())
    languages = (language_column(survey.language),)
    survey_wording = merge_wording(wording_defaults,
                                   (f"survey {survey.name!r} [wording]", survey.wording))
    builder = _Builder(survey, languages, survey_wording)
    for name in _FIXED_NAMES:
        builder.names[name] = "the form itself"
    how = survey_wording["die_instructions" if randomize == "self" else "device_instructions"]
    builder.rows.append({"type": "note", "name": "intro",
                         "label": builder.texts(f"{survey_wording['intro']}\n\n{how}")})
    builder.rows.append({
        "type": "text", "name": "respondent_id", "required": "yes",
        "label": builder.texts(survey_wording["respondent_id_label"]),
        "hint": builder.texts(survey_wording["respondent_id_hint"]),
        "constraint": id_constraint(),
        "constraint_message": builder.texts(survey_wording["respondent_id_constraint"]),
    })
    groups = tuple(survey.groups)
    if len(groups) > 1:
        builder.rows.append({"type": "select_one groups", "name": "group", "required": "yes",
                             "label": builder.texts(survey_wording["group_question_label"])})
        for number, name in enumerate(groups, start=1):
            builder.choices.append({"list_name": "groups", "name": str(number),
                                    "label": builder.texts(name)})
    views = _question_views(survey, randomize, wording_defaults)
    for question, view in zip(survey.questions, views, strict=True):
        if randomize == "self":
            _self_rows(builder, view, groups)
        else:
            _device_rows(builder, question, view, groups)
        answers = builder.choice_list(tuple(question.design.response_labels), view.wording)
        row: dict[str, object] = {
            "type": f"select_one {answers}", "name": question.id, "required": "yes",
            "label": builder.texts(f"{view.wording['question_label']} {view.number}. "
                                   f"{view.text}")}
        if view.wording.get("reminder"):
            row["hint"] = builder.texts(view.wording["reminder"])
        builder.add(question.id, **row)
    settings = {
        "form_title": survey.title,
        "form_id": survey.name,
        # instance names list drafts on the device: the id, never an answer
        "instance_name": f"concat('{survey.name} ', {_ref('respondent_id')})",
        "default_language": languages[0],
    }
    settings["version"] = _content_version(builder.rows, builder.choices, settings)
    return XLSForm(survey=tuple(builder.rows), choices=tuple(builder.choices),
                   settings=MappingProxyType(settings), languages=languages,
                   randomize=randomize,
                   answer_fields=tuple(q.id for q in survey.questions))


def _question_views(survey, randomize: str, wording_defaults: Mapping[str, str]
                    ) -> tuple[QuestionView, ...]:
    """The questions as the paper forms show them (number, text, wording, die table).

    Self-randomized forms need a die table per question: the die-mode layout
    of :mod:`surveykit.collection.questionnaire`, which today realizes the
    generalized Warner design.
    """
    if randomize == "self":
        for question in survey.questions:
            if not isinstance(question.design, GeneralizedWarner):
                raise ParameterError(
                    f"question {question.id!r}: --randomize self needs a die table, and "
                    f"surveykit has die tables for the generalized Warner design (p, q) "
                    f"only, not yet for {question.design.describe()}; give the question a "
                    "[questions.mechanism] with p and q, or see 'surveykit docs field-collection' "
                    "for --randomize device and its limits")
        layout = build_layout(survey, mode="die", wording_defaults=wording_defaults)
    else:
        layout = build_layout(survey, mode="slips", wording_defaults=wording_defaults)
    return layout.questions


def _die_lines(die: DieView, wording: Mapping[str, str]) -> list[str]:
    lines = []
    for row in die.rows:
        for rule in row.rules:
            shown = faces(rule.faces, wording["die_none"])
            if die.two_dice:
                lines.append(f"{wording['die_first_label']} {row.first}, "
                             f"{wording['die_second_label']} {shown}: {rule.instruction}")
            else:
                lines.append(f"{wording['die_roll_label']} {shown}: {rule.instruction}")
    return lines


def _self_rows(builder: _Builder, view: QuestionView, groups: tuple[str, ...]) -> None:
    # One die table for the question (a group's own table when designs differ by group
    # arrives with die tables for multi-group designs).
    die = view.die
    dice = " + ".join(f"d{d}" for d in die.dice)
    heading = f"{view.wording['question_label']} {view.number} ({dice}): {view.text}"
    label = "\n".join([heading, "", *_die_lines(die, view.wording)])
    builder.add(view.id, type="note", name=f"{view.id}_die", label=builder.texts(label))


def instruction_text(instruction: Instruction, wording: Mapping[str, str],
                     innocuous: str | None = None) -> str:
    """The respondent-facing text of one instruction: the wording key ``rule_KIND``,
    with ``{answer}`` (the answer a ``say`` rule names, as the form labels it) and
    ``{innocuous}`` (the innocuous question) filled in.

    >>> from fractions import Fraction
    >>> instruction_text(Instruction("say", Fraction(1, 5), say="yes"),
    ...                  {"rule_say": 'Answer "{answer}".', "answer_yes": "Yes"})
    'Answer "Yes".'
    """
    key = f"rule_{instruction.kind}"
    if key not in wording:
        raise ParameterError(
            f"no respondent wording for the instruction {instruction.code!r} (wording key "
            f"{key!r}); surveykit words truthful, opposite and dont_know rules so far")
    answer = instruction.say or ""
    answer = wording.get(_ANSWER_WORDING.get(answer, ""), answer)
    return wording[key].format(answer=answer, innocuous=innocuous or "")


def _device_rows(builder: _Builder, question, view: QuestionView,
                 groups: tuple[str, ...]) -> None:
    design: Design = question.design
    if design.protocol.kind != "instructions":
        raise ParameterError(
            f"question {question.id!r}: the {design.model} design is not one random "
            "instruction per question, so the device cannot draw it; use a design with "
            "instructions (e.g. the generalized Warner)")
    qid = question.id
    draw, code = f"{qid}_draw", f"{qid}_code"
    unanswered = f"{_ref(qid)} = ''"
    rules: list[str] = []  # distinct instruction texts; their 1-based index is the code
    per_group: list[str] = []
    for g in range(len(design.group_names)):
        instructions = [i for i in design.protocol.for_group(g) if i.probability > 0]
        codes = []
        for instruction in instructions:
            text = instruction_text(instruction, view.wording, question.innocuous)
            if text not in rules:
                rules.append(text)
            codes.append(str(rules.index(text) + 1))
        expression = f"'{codes[-1]}'"
        cumulative = sum((i.probability for i in instructions[:-1]), Fraction(0))
        for instruction, value in zip(reversed(instructions[:-1]), reversed(codes[:-1]),
                                      strict=True):
            expression = f"if({_ref(draw)} < {_number(cumulative)}, '{value}', {expression})"
            cumulative -= instruction.probability
        per_group.append(expression)
    if len(per_group) == 1:
        choose = per_group[0]
    else:
        choose = "''"
        for number in range(len(per_group), 0, -1):
            choose = f"if({_ref('group')} = '{number}', {per_group[number - 1]}, {choose})"
    # The draw is a dynamic default: drawn once, when the form first loads. once() only
    # draws again when the draw is gone: a draft saved after the answer does not hold it
    # (it was not relevant), so clearing the answer of a reopened draft needs a new one.
    # Relevance keeps the draw out of every finalized submission (the answer is required).
    builder.add(qid, type="calculate", name=draw, relevant=unanswered, default="random()",
                calculation="once(random())")
    builder.add(qid, type="calculate", name=code, relevant=unanswered,
                calculation=f"if({_ref(draw)} = '', '', {choose})")
    for number, text in enumerate(rules, start=1):
        builder.add(qid, type="note", name=f"{qid}_rule_{number}",
                    relevant=f"{unanswered} and {_ref(code)} = '{number}'",
                    label=builder.texts(f"{view.wording['question_label']} {view.number}. "
                                        f"{view.wording['rule_label']}: {text}"))


def _content_version(rows, choices, settings) -> str:
    """A version that changes whenever the form's content does (ODK Central and
    KoboToolbox need a new version for every changed upload), and only then."""
    data = json.dumps([rows, choices, sorted(settings.items())], sort_keys=True,
                      ensure_ascii=False)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()[:12]


def write_xlsform(form: XLSForm, path: str | Path) -> Path:
    """Write ``form`` to the workbook ``path`` (.xlsx), replacing it atomically.

    Every cell is written as text, so a question that starts with "=" stays a
    question, not a spreadsheet formula.
    """
    from openpyxl import Workbook

    path = Path(path)
    if path.suffix.casefold() != ".xlsx":
        raise ParameterError(f"--out {str(path)!r} must end in .xlsx: field tools read "
                             "XLSForms as Excel workbooks")
    if path.is_dir():
        raise ParameterError(f"--out {str(path)!r} is a folder; give a file name such as "
                             "form.xlsx")
    if not path.parent.is_dir():
        raise ParameterError(f"--out {str(path)!r}: the folder {str(path.parent)!r} does "
                             "not exist; create it first")
    workbook = Workbook()
    workbook.remove(workbook.active)
    for title, (header, rows) in form.sheets().items():
        sheet = workbook.create_sheet(title)
        for r, values in enumerate([header, *rows], start=1):
            for c, value in enumerate(values, start=1):
                if value == "":
                    continue
                cell = sheet.cell(row=r, column=c)
                cell.value = value
                cell.data_type = "s"
    descriptor, temporary = tempfile.mkstemp(prefix=".surveykit-", suffix=".xlsx",
                                             dir=path.parent)
    os.close(descriptor)
    try:
        workbook.save(temporary)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def export_xlsform(engine, survey_name: str, *, out: str | Path, randomize: str = "self",
                   acknowledge_risk: bool = False, templates_dir: str | Path | None = None
                   ) -> XLSFormExport:
    """Load ``survey_name`` from the store and write its XLSForm to ``out``.

    ``randomize="device"`` is refused (ParameterError) unless
    ``acknowledge_risk`` is true: the message states :data:`DEVICE_RISKS`.
    ``templates_dir`` is a folder with the user's own ``wording.json``.
    """
    from surveykit import store

    if randomize == "device" and not acknowledge_risk:
        raise ParameterError(
            "--randomize device is not private on every client: "
            + " ".join(f"({n}) {risk}" for n, risk in enumerate(DEVICE_RISKS, start=1))
            + " Pass --acknowledge-risk to write it anyway, or use --randomize self "
            "(respondents roll dice), which is private on every client.")
    survey = store.load_survey(engine, survey_name)
    wording = load_wording_defaults(make_environment(templates_dir))
    form = build_xlsform(survey, randomize=randomize, wording_defaults=wording)
    written = write_xlsform(form, out)
    return XLSFormExport(
        path=written, survey=survey.name, form_id=form.settings["form_id"],
        version=form.settings["version"], randomize=randomize, languages=form.languages,
        answer_fields=form.answer_fields,
        risks=DEVICE_RISKS if randomize == "device" else (),
    )
