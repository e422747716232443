"""XLSForms for ODK Collect, KoboToolbox, Enketo and ODK Web Forms (docs/field-collection.md).

An XLSForm is a workbook with three sheets: ``survey`` (one row per question
or note), ``choices`` (the answers of each ``select_one`` list) and
``settings``. Field tools convert it to an XForm (pyxform) and fill it on a
tablet or in a browser. The form surveykit writes holds, in this order:

* a note with the introduction and how the rules work;
* ``respondent_id`` (text, required, checked against the id format of
  :mod:`surveykit.respondent_ids`, in any case and with or without
  hyphens, as imports read it);
* ``group`` (``select_one``, required) when the survey's questions have
  several groups: the form version printed with the id, not a secret;
* per question the randomization (below), then the answer, named after the
  question id, as ``select_one`` over the answer boxes of the paper sheet
  (:func:`surveykit.collection.instructions.answer_options`: yes / no, "don't
  know" only for designs with that branch, categories, Kuk's counts, the
  combined answers of crosswise and triangular designs), required.

Two ways to randomize (``randomize``):

* ``"self"`` (default): the respondent rolls dice in private; a note before
  the answer shows the die table of the paper die-mode form
  (:func:`surveykit.collection.questionnaire.build_layout` with
  ``mode="die"``, :mod:`surveykit.collection.dice`): faces -> rule for
  instruction protocols, one table per true state for Kuk's cards and custom
  matrices, nothing to roll for crosswise and triangular questions unless they
  have a "don't know" branch. Where the groups of a multi-group survey roll
  different tables, each group's note is relevant only for that group
  (``${group} = 'N'``). A design no die realizes is refused with the nearest
  design dice realize (:func:`surveykit.collection.dice.die_plan`). The device
  never learns the roll, so the form is private on every client.
* ``"device"``: the form draws ``random()`` once, as a dynamic default (at
  the form's first load), and shows only the rule it selects, for any
  protocol (Kuk's cards and custom matrices draw the slip's per-state rule).
  The rule is chosen with the slips' exact integer thresholds
  (:func:`surveykit.collection.randomizer.instruction_thresholds`): rule k
  when ``draw * 2^53 < t_k``, exact in floating point. The draw, the rule's
  code and its note are *relevant only while the answer is empty*; the
  answer is required, so a finalized submission holds none of them
  (JavaRosa and ODK Web Forms leave non-relevant nodes out of what they
  serialize). Two limits remain, :data:`DEVICE_RISKS`: on ODK Collect the
  draw can be recomputed from the submission's instanceID, and a draft
  saved before an answer holds the draw. It is written only when the caller
  acknowledges them.

Numeric questions (``type = "number"``, issue 23) are asked for the number the
respondent's rule gives: with ``"self"`` a note holds what the die-mode paper form prints
(the die table of the design's steps and how to roll or draw its scrambling numbers:
:func:`surveykit.collection.dice.numeric_die_plan`, worded by
:class:`surveykit.collection.numeric.NumberRule` from the survey's wording, as choice
questions' rules are); with ``"device"`` the form draws the step and each card with the
same thresholds, relevant only while the answer is empty, and its note says the same rule
with the drawn card. The answer is an ``integer``
(``decimals = 0``) or ``decimal`` field constrained to the numbers the design can report
(:meth:`~surveykit.designs.quantitative.QuantitativeDesign.reported_range`, not the true
range) and to the question's decimals; with a "don't know" step, the typed number is
``QUESTION_value``, a "don't know" choice ``QUESTION_dk`` is asked while it is empty, and
the calculate named after the question holds the one answer (the number or
``dont_know``). Designs whose scrambling numbers no card or die gives (continuous or
moment-only scramblers, ``mix_unknown``'s unworded unrelated question) are refused.

Crosswise and triangular questions are asked as the paper sheet asks them:
the sensitive question, the innocuous one and the combined question's prompt
in the answer's label, with the combined answers ("Both the same ...").

The usual XLSForm for randomized response (``calculate`` with
``once(random())`` and a note) stores the draw next to the answer in every
submission; surveykit never writes it.

Texts come from the survey's wording (templates/wording.json, the survey's
``[wording]``, each question's ``wording``) through
:mod:`surveykit.collection.instructions`: the same texts, answers and rules
as the paper forms and the web page. Label, hint and constraint message columns are named
``label::English (en)`` etc., one per language of the survey.

Every text is written so that the field tools show it literally and never read it as
form logic or formatting (:func:`form_text`, :func:`form_title`): ``${name}`` is a
reference to a field for pyxform and JavaRosa, ``instance('x')/...`` an expression for
pyxform, Markdown and HTML formatting for ODK Collect and ODK Web Forms; the setting
``clean_text_values = no`` keeps pyxform from joining runs of spaces. Every cell is a
text cell marked as text (quote prefix, format ``@``), so that a spreadsheet never reads a
text that starts with ``=``, ``+``, ``-`` or ``@`` as a formula, and no cell is longer than
a spreadsheet cell can be (:data:`MAX_CELL`).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from surveykit.collection.dice import (
    DieDesignError,
    die_plan,
    format_faces,
    numeric_die_plan,
)
from surveykit.collection.instructions import instruction_text, wording_text
from surveykit.collection.numeric import NumberRule
from surveykit.collection.questionnaire import (
    AnswerOption,
    DieRowView,
    DieView,
    QuestionView,
    build_layout,
)
from surveykit.collection.randomizer import (
    GRID_BITS,
    instruction_thresholds,
    question_protocols,
)
from surveykit.collection.render import load_wording_defaults, make_environment
from surveykit.designs.scramblers import Deck, Unknown
from surveykit.errors import ParameterError, SurveyDefinitionError
from surveykit.files import output_file
from surveykit.respondent_ids import ID_GROUPS, LEGACY_GROUPS

if TYPE_CHECKING:
    from surveykit.definition.survey import Survey

__all__ = [
    "DEVICE_RISKS",
    "JOINER",
    "MAX_CELL",
    "RANDOMIZE",
    "XLSForm",
    "XLSFormExport",
    "build_xlsform",
    "check_export",
    "export_survey_xlsform",
    "form_text",
    "form_title",
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
_SETTINGS_COLUMNS = ("form_title", "form_id", "version", "instance_name", "default_language",
                     "clean_text_values")

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
# What a self-randomized form's refusal of a design no die realizes proposes instead.
_WITHOUT_DICE = "export with --randomize device"
# The draw is compared on the slips' grid: draw * 2^53 < t_k (exact: a power of two).
_GRID = 1 << GRID_BITS

#: U+2060 WORD JOINER: no width, no glyph (Unicode's "default ignorable"), not a space and
#: not a name character anywhere, so it shows nothing yet breaks syntax where it stands:
#: ``$`` + JOINER + ``{`` reads as ``${`` but is no reference.
JOINER = "\u2060"
#: The most characters a spreadsheet cell holds (Excel's limit): a longer text is cut or
#: the workbook is "repaired" when a field team opens it.
MAX_CELL = 32_767
# Markdown escapes that ODK Collect (HtmlUtils.markdownToHtml: \\ \* \_ \#) and ODK Web
# Forms (CommonMark) both undo.
_BACKSLASHED = re.compile(r"[\\*_#]")
# Where a joiner breaks syntax, inside a line (each pattern matches the empty place):
_JOINS = re.compile(
    r"(?<=\$)(?=\{)"            # ${name}: pyxform's field reference, JavaRosa's ${0} output
    r"|(?<=instance)(?=\()"     # instance('x')/...: pyxform turns it into an <output>
    r"|(?<=<)"                  # <b>, <span style=...>, <https://...>: HTML and autolinks
    r"|(?<=&)(?=[0-9A-Za-z#\\])"  # &lt; &#96; (and &\#96;, which Collect turns into &#96;)
    r"|(?<=\])(?=[(:])")        # [text](url), [label]: url: links and link definitions
# At the start of a line, what starts a CommonMark block: an indented code block (which ODK
# Web Forms does not show at all), a quote, a list item, a heading underline, a fence. The
# joiner goes after the match.
_BLOCK_START = re.compile(
    r"^(?:(?=(?: {0,3}\t| {4})[ \t]*\S)| {0,3}(?=[>+=~-]|[0-9]{1,9}[.)]))", re.MULTILINE)


def form_text(text: str) -> str:
    r"""``text`` as a label, hint, choice label or constraint message that every field
    tool shows literally: nothing in it is read as form logic or formatting.

    What the tools read in such a text, from their sources (docs/field-collection.md,
    "Texts are shown as written"), and how it is kept literal:

    * pyxform 4.5 turns ``${name}`` into an ``<output>`` of that field (and refuses the
      form when no field has the name, or a ``${`` is not closed) and ``instance('x')/path``
      into an ``<output>``; JavaRosa 5.1 fills ``${0}``, ``${1}`` ... with the form's
      outputs and fails on any other ``${...}`` (a "dependency cycle"): a joiner
      (:data:`JOINER`) goes between ``$`` and ``{`` and between ``instance`` and ``(``;
    * ODK Collect reads Markdown (``*``, ``_``, ``**``, ``__``, ``#`` headings, links) and
      then HTML (tags, ``&lt;``-style references); ODK Web Forms reads CommonMark and the
      same HTML: ``\``, ``*``, ``_``, ``#`` get a backslash (both undo it), a joiner follows
      ``<``, precedes a character reference's name, and separates ``]`` from ``(`` or ``:``,
      and stands before what would start a block at the start of a line (``>``, ``-``,
      ``+``, ``=``, ``~``, ``1.``, an indentation of four spaces or a tab); two or more
      backticks (a CommonMark code span, shown without them) are written ``&#96;``, a
      reference every client shows as a backtick.

    The joiner has no width and no glyph: the text reads the same, letter for letter.

    >>> form_text("Your id is ${respondent_id}")
    'Your id is $\u2060{respondent\\_id}'
    >>> form_text("*never* or_often_ #1 <b>")
    '\\*never\\* or\\_often\\_ \\#1 <\u2060b>'
    >>> form_text("A & B"), form_text("- 2 `x` &amp; 5 < 6")
    ('A & B', '\u2060- 2 &#96;x&#96; &\u2060amp; 5 <\u2060 6')
    """
    text = _BACKSLASHED.sub(r"\\\g<0>", text)
    text = _JOINS.sub(JOINER, text)
    text = _BLOCK_START.sub(lambda start: start.group() + JOINER, text)
    if text.count("`") >= 2:
        text = text.replace("`", "&#96;")
    return text


def form_title(text: str) -> str:
    """``text`` as the form's title: the tools show a title as plain text, but pyxform reads
    ``${name}`` in every setting, so a joiner goes between ``$`` and ``{``.

    >>> form_title("*Survey* ${year}")
    '*Survey* $\u2060{year}'
    """
    return text.replace("${", "$" + JOINER + "{")


def language_column(tag: str) -> str:
    """The language as XLSForm column suffixes name it: ``Name (tag)``.

    >>> language_column("en"), language_column("pt-BR"), language_column("xx")
    ('English (en)', 'Portuguese (pt-BR)', 'xx (xx)')
    """
    name = _LANGUAGE_NAMES.get(tag.split("-")[0].casefold(), tag)
    return f"{name} ({tag})"


def id_constraint() -> str:
    """The XPath constraint on ``respondent_id``: 15 symbols in groups 4-4-4-3 (the last
    is the check symbol), or 14 in groups 4-4-4-2 (ids issued before the check symbol).

    Symbols are Crockford base32 in either case, and I, L, O (read as 1, 1, 0,
    as :func:`surveykit.respondent_ids.normalize_respondent_id`
    does); groups may be joined by a hyphen, a space or nothing. The check
    symbol itself is verified on import (XPath has no arithmetic on 70 bits).

    >>> id_constraint()[:40]
    "regex(., '^ *[0-9A-TV-Za-tv-z]{4}[- ]?[0"
    """
    symbol = "[0-9A-TV-Za-tv-z]"  # every letter but U; I, L, O are typed 1, 1, 0
    body = "[- ]?".join(f"{symbol}{{{n}}}" for n in ID_GROUPS[:-1])
    last = f"{symbol}{{{LEGACY_GROUPS[-1]},{ID_GROUPS[-1]}}}"
    return f"regex(., '^ *{body}[- ]?{last} *$')"


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
    """What :func:`export_survey_xlsform` wrote."""

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
    field); ``survey add`` refuses such a survey (see :mod:`surveykit.workflows.readiness`)."""


def _ref(name: str) -> str:
    return "${" + name + "}"


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
        # entries here, from the survey's translations. Every localized cell is a text the
        # tools display (label, hint, choice label, constraint message): shown literally.
        return dict.fromkeys(self.languages, form_text(text))

    def add(self, owner: str, **cells: object) -> None:
        name = str(cells["name"])
        if name in self.names:
            raise FieldNameError(
                f"question id {owner!r}: the form needs the field name {name!r} for "
                f"{self.names[name]}; rename the question in the survey file")
        self.names[name] = f"question {owner!r}"
        self.rows.append(cells)

    def choice_list(self, answers: tuple[AnswerOption, ...]) -> str:
        """The name of the choice list of ``answers`` (labels and texts), added once."""
        key = tuple((answer.label, answer.text) for answer in answers)
        if key not in self.lists:
            name = "answers" if not self.lists else f"answers_{len(self.lists) + 1}"
            self.lists[key] = name
            for answer in answers:
                self.choices.append({"list_name": name, "name": answer.label,
                                     "label": self.texts(answer.text)})
        return self.lists[key]


def build_xlsform(survey, *, randomize: str = "self",
                  wording_defaults: Mapping[str, str] | None = None) -> XLSForm:
    """The XLSForm of ``survey`` (a :class:`surveykit.definition.survey.Survey`), no I/O.

    ``randomize="self"``: the die-mode form's tables as notes (refused, with
    the nearest design dice realize, when no die realizes a question's
    design); ``"device"``: the guarded device draw described in the module
    docstring.

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
    for question in survey.questions:
        if question.numeric:
            _check_numeric_devices(question)
        if randomize == "self":
            try:
                if question.numeric:
                    numeric_die_plan(question.design, otherwise=_WITHOUT_DICE)
                else:
                    die_plan(question.design, otherwise=_WITHOUT_DICE)
            except DieDesignError as exc:
                exc.args = (f"question {question.id!r}: {exc.args[0]} (--randomize device "
                            "has two limits: 'surveykit docs field-collection')",) + exc.args[1:]
                raise
    # The layout of the paper forms: every text from the survey's wording (the shipped
    # defaults, its [wording], each question's wording), numeric questions' rules included.
    layout = build_layout(survey, mode="die" if randomize == "self" else "slips",
                          wording_defaults=wording_defaults)
    languages = (language_column(survey.language),)
    wording = layout.wording
    builder = _Builder(survey, languages, wording)
    for name in _FIXED_NAMES:
        builder.names[name] = "the form itself"
    how = wording_text(wording, "die_instructions" if randomize == "self"
                       else "device_instructions")
    builder.rows.append({"type": "note", "name": "intro",
                         "label": builder.texts(f"{wording_text(wording, 'intro')}\n\n{how}")})
    builder.rows.append({
        "type": "text", "name": "respondent_id", "required": "yes",
        "label": builder.texts(wording_text(wording, "respondent_id_label")),
        "hint": builder.texts(wording_text(wording, "respondent_id_hint")),
        "constraint": id_constraint(),
        "constraint_message": builder.texts(wording_text(wording, "respondent_id_constraint")),
    })
    groups = tuple(group.name for group in layout.groups)
    if len(groups) > 1:
        builder.rows.append({"type": "select_one groups", "name": "group", "required": "yes",
                             "label": builder.texts(wording_text(wording,
                                                                 "group_question_label"))})
        for number, name in enumerate(groups, start=1):
            builder.choices.append({"list_name": "groups", "name": str(number),
                                    "label": builder.texts(name)})
    for k, question in enumerate(survey.questions):
        view = layout.questions[k]
        dice = tuple(form.questions[k].die for form in layout.forms)
        if question.numeric:
            if randomize == "self":
                _self_rows(builder, view, dice)
            else:
                _numeric_device_rows(builder, question, view, layout.number_rules[k],
                                     len(groups))
            _numeric_answer_rows(builder, question, view.number, view.wording)
            continue
        if randomize == "self":
            _self_rows(builder, view, dice)
        else:
            _device_rows(builder, question, view, len(groups))
        row: dict[str, object] = {
            "type": f"select_one {builder.choice_list(view.answers)}", "name": question.id,
            "required": "yes", "label": builder.texts(_question_label(view))}
        if view.wording.get("reminder"):
            row["hint"] = builder.texts(view.wording["reminder"])
        builder.add(question.id, **row)
    settings = {
        "form_title": form_title(survey.title),
        "form_id": survey.name,
        # instance names list drafts on the device: the id, never an answer
        "instance_name": f"concat('{survey.name} ', {_ref('respondent_id')})",
        "default_language": languages[0],
        # pyxform otherwise turns every run of spaces in a label into one space
        "clean_text_values": "no",
    }
    settings["version"] = _content_version(builder.rows, builder.choices, settings)
    _check_cell_lengths(builder, settings)
    return XLSForm(survey=tuple(builder.rows), choices=tuple(builder.choices),
                   settings=MappingProxyType(settings), languages=languages,
                   randomize=randomize,
                   answer_fields=tuple(q.id for q in survey.questions))


class FormTextError(SurveyDefinitionError):
    """A text of the survey makes a cell longer than a spreadsheet cell can be
    (:data:`MAX_CELL`); ``survey add`` refuses such a survey (see
    :mod:`surveykit.workflows.readiness`)."""


def _check_cell_lengths(builder: _Builder, settings: Mapping[str, str]) -> None:
    """Refuse a form with a cell longer than MAX_CELL, naming the question and the cell."""
    cells = [(builder.names[str(row["name"])].replace("the form itself", "wording"),
              f"{column} of the field {row['name']!r}", text)
             for row in builder.rows for column, texts in row.items() if column in _LOCALIZED
             for text in texts.values()]
    cells += [("wording", f"label of the answer {choice['name']!r}", text)
              for choice in builder.choices for text in choice["label"].values()]
    cells.append(("title", "form_title", settings["form_title"]))
    for owner, cell, text in cells:
        if len(text) > MAX_CELL:
            raise FormTextError(
                f"{owner}: the XLSForm's {cell} would have {len(text):,} characters, more "
                f"than the {MAX_CELL:,} a spreadsheet cell holds (a spreadsheet cuts it or "
                "refuses the workbook); shorten the texts it is made of")


def _question_label(view: QuestionView) -> str:
    """The answer's label: the question as the paper sheet prints it (with the innocuous
    question and the combined question's prompt for crosswise and triangular designs)."""
    label = f"{wording_text(view.wording, 'question_label')} {view.number}. {view.text}"
    if view.innocuous is not None:
        label += (f"\n\n{wording_text(view.wording, 'innocuous_label')}: {view.innocuous}"
                  f"\n\n{view.prompt}")
    return label


def _die_lines(rows: tuple[DieRowView, ...], two_dice: bool, wording: Mapping[str, str],
               own_dice: tuple[int, ...] = ()) -> list[str]:
    """A table's rows as lines; ``own_dice``: the dice of a numeric question's number table,
    named on each line (its note's heading names the dice that pick the rule)."""
    none = wording_text(wording, "die_none")
    named = [f" (d{d})" for d in own_dice] if own_dice else ["", ""]
    lines = []
    for row in rows:
        for rule in row.rules:
            shown = format_faces(rule.faces, none)
            if two_dice:
                lines.append(f"{wording_text(wording, 'die_first_label')}{named[0]} "
                             f"{row.first}, {wording_text(wording, 'die_second_label')}"
                             f"{named[-1]} {shown}: {rule.instruction}")
            else:
                lines.append(f"{wording_text(wording, 'die_roll_label')}{named[0]} {shown}: "
                             f"{rule.instruction}")
    return lines


def _die_label(view: QuestionView, die: DieView) -> str:
    """A die note: the question, its dice, and the die-mode form's tables as lines (a
    numeric question with one rule rolls nothing for it: no dice in its heading)."""
    dice = " + ".join(f"d{d}" for d in die.dice)
    lines = [f"{wording_text(view.wording, 'question_label')} {view.number}"
             + (f" ({dice})" if dice else "") + f": {view.text}"]
    for table in die.tables:
        lines.append("")
        if table.heading:
            lines.append(table.heading)
        if table.count:
            lines.append(table.count)
        elif table.dice:
            lines += _die_lines(table.rows, len(table.dice) == 2, view.wording, table.dice)
        else:
            lines += _die_lines(table.rows, die.two_dice, view.wording)
    return "\n".join(lines)


def _self_rows(builder: _Builder, view: QuestionView, dice: tuple[DieView | None, ...]
               ) -> None:
    """The die note of a question: one for everybody when every group rolls the same
    table, else one per group, shown only to that group (relevant on the group question).
    A group with nothing to roll (a crosswise question without "don't know") gets none."""
    if len(set(dice)) == 1:
        if dice[0] is not None:
            builder.add(view.id, type="note", name=f"{view.id}_die",
                        label=builder.texts(_die_label(view, dice[0])))
        return
    for number, die in enumerate(dice, start=1):
        if die is not None:
            builder.add(view.id, type="note", name=f"{view.id}_die_{number}",
                        relevant=f"{_ref('group')} = '{number}'",
                        label=builder.texts(_die_label(view, die)))


def _scaled(draw: str) -> str:
    """The draw times 2^53 (a whole number: both engines draw multiples of 2^-53).

    A calculate keeps its value as text, and the engines write small numbers in exponent
    notation: JavaRosa (Java's Double.toString) below 10^-3, as in ``1.9658100254305033E-4``;
    ODK Web Forms (JavaScript) below 10^-6, as in ``1.2e-7``. XPath's number() reads neither
    (NaN, so every comparison is false and the draw would fall to the last rule: a draw
    below 10^-3 shown the wrong rule). Such text is read as mantissa times a power of ten
    and rounded back to the grid.
    """
    text = f"translate({_ref(draw)}, 'e', 'E')"
    exponent = (f"round(number(substring-before({text}, 'E')) * "
                f"pow(10, number(substring-after({text}, 'E'))) * {_GRID})")
    return f"if(contains({text}, 'E'), {exponent}, {_ref(draw)} * {_GRID})"


def _choose(draw: str, thresholds: tuple[int, ...], codes: list[str]) -> str:
    """The code of the rule ``draw`` selects: rule k when draw * 2^53 < t_k."""
    expression = f"'{codes[-1]}'"
    scaled = _scaled(draw)
    for threshold, code in zip(reversed(thresholds[:-1]), reversed(codes[:-1]), strict=True):
        expression = f"if({scaled} < {threshold}, '{code}', {expression})"
    return expression


def _by_group(per_group: list[str]) -> str:
    """One expression for every group when they agree, else the one of the respondent's
    ``group``."""
    if len(set(per_group)) == 1:
        return per_group[0]
    choose = "''"
    for number in range(len(per_group), 0, -1):
        choose = f"if({_ref('group')} = '{number}', {per_group[number - 1]}, {choose})"
    return choose


def _device_rows(builder: _Builder, question, view: QuestionView, group_count: int) -> None:
    qid = question.id
    draw, code = f"{qid}_draw", f"{qid}_code"
    unanswered = f"{_ref(qid)} = ''"
    rules: list[str] = []  # distinct instruction texts; their 1-based index is the code
    per_group: list[str] = []
    draws = False
    for instructions in question_protocols(question.design, group_count):
        used = [i for i in instructions if i.probability > 0]
        codes = []
        for instruction in used:
            text = instruction_text(instruction, question.design, view.wording,
                                    innocuous=question.innocuous)
            if text not in rules:
                rules.append(text)
            codes.append(str(rules.index(text) + 1))
        draws = draws or len(used) > 1
        per_group.append(_choose(draw, instruction_thresholds(used), codes))
    choose = _by_group(per_group)
    label = f"{wording_text(view.wording, 'question_label')} {view.number}. " \
            f"{wording_text(view.wording, 'rule_label')}: "
    if not draws:
        # Nothing to draw (a crosswise question without "don't know"): each group's rule.
        for number, text in enumerate(rules, start=1):
            shown = [str(g) for g, choice in enumerate(per_group, start=1)
                     if choice == f"'{number}'"]
            relevant = unanswered
            if len(shown) < len(per_group):
                relevant += " and (" + " or ".join(f"{_ref('group')} = '{g}'"
                                                   for g in shown) + ")"
            builder.add(qid, type="note", name=f"{qid}_rule_{number}", relevant=relevant,
                        label=builder.texts(label + text))
        return
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
                    label=builder.texts(label + text))


# -- numeric questions (type = "number") ----------------------------------------------------

#: The largest whole number an XLSForm ``integer`` holds (JavaRosa reads it as a 32-bit int):
#: a reported range beyond it gets a ``decimal`` field.
MAX_INTEGER = 2**31 - 1


@dataclass(frozen=True)
class _Share:
    """Something drawn with an exact probability (a card value), for instruction_thresholds."""

    probability: Fraction
    text: str


def _plain(value: float | Fraction) -> str:
    """A number as plain decimal text for XPath and labels: no exponent, no trailing zeros.

    >>> _plain(20000.0), _plain(Fraction(3, 2)), _plain(-0.0005), _plain(1e21)
    ('20000', '1.5', '-0.0005', '1000000000000000000000')
    """
    text = format(Decimal(repr(float(value))), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _check_numeric_devices(question) -> None:
    """Refuse a numeric design whose scrambling numbers no card deck or die gives: a form can
    only tell respondents to draw from a device they hold (or the device to draw a card)."""
    design = question.design
    for name, scrambler in design.scramblers.items():
        if isinstance(scrambler, Unknown):
            raise ParameterError(
                f"question {question.id!r}: the {design.model} design tells respondents to "
                "report their answer to an unrelated numeric question, whose text a survey "
                "file cannot give, so no form can ask it; use a design with cards or dice "
                "(e.g. model = \"eriksson\" with scrambler = [0, 1, 3, 5, 8])")
        if not isinstance(scrambler, Deck):
            raise ParameterError(
                f"question {question.id!r}: the {design.model} design's scrambling number "
                f"{name} is {scrambler.describe()}, which no card deck or die gives; give it "
                "as cards or dice (scrambler = [0, 1, 3, 5, 8], \"die\" or \"dice\") or collect "
                "on the web (surveykit serve), where the browser draws it")


def _step_groups(question, group_count: int) -> list[tuple]:
    """The steps of each of the survey's ``group_count`` groups (one-group designs: the same
    steps for every group)."""
    groups = question.design.protocol.groups
    return [groups[g if len(groups) > 1 else 0] for g in range(group_count)]


def _scrambler_names(steps) -> list[str]:
    names: list[str] = []
    for step in steps:
        names += [name for name in step.scrambler_names if name not in names]
    return names


def _numeric_device_rows(builder: _Builder, question, view: QuestionView,
                         rules: tuple[tuple[NumberRule, ...], ...], group_count: int) -> None:
    """The device draws the step (as for choice questions) and each scrambling number (a card
    of its deck, with the slips' exact thresholds); the note of the drawn step says the rule
    as the die-mode form words it (``rules``: the layout's, per design group, from the
    survey's wording) and shows the numbers it uses. Every draw is relevant only while the
    answer is empty, so no finalized submission holds one."""
    qid, design, wording = question.id, question.design, view.wording
    unanswered = f"{_ref(qid)} = ''"
    groups = _step_groups(question, group_count)
    texts = {rule.step: rule.device_text(wording) for group in rules for rule in group}
    shown_rules: list[tuple[str, tuple[str, ...]]] = []   # (rule text, scramblers it uses)
    per_group: list[str] = []
    draws = any(len(steps) > 1 for steps in groups)
    draw = f"{qid}_draw"
    for steps in groups:
        codes = []
        for step in steps:
            rule = (texts[step], step.scrambler_names)
            if rule not in shown_rules:
                shown_rules.append(rule)
            codes.append(str(shown_rules.index(rule) + 1))
        per_group.append(_choose(draw, instruction_thresholds(steps), codes)
                         if len(steps) > 1 else f"'{codes[0]}'")
    choose = _by_group(per_group)
    if draws:
        builder.add(qid, type="calculate", name=draw, relevant=unanswered, default="random()",
                    calculation="once(random())")
        choose = f"if({_ref(draw)} = '', '', {choose})"
    code = f"{qid}_code"
    builder.add(qid, type="calculate", name=code, relevant=unanswered, calculation=choose)
    shown = {}  # scrambler name -> what the note shows: a reference to its drawn card
    for i, name in enumerate(_scrambler_names([s for steps in groups for s in steps]), start=1):
        cards = [_Share(p, _plain(v)) for v, p in design.scramblers[name].points()]
        if len(cards) == 1:
            shown[name] = form_text(cards[0].text)
            continue
        card_draw, card = f"{qid}_draw_{i}", f"{qid}_code_{i}"
        pick = _choose(card_draw, instruction_thresholds(cards), [c.text for c in cards])
        builder.add(qid, type="calculate", name=card_draw, relevant=unanswered,
                    default="random()", calculation="once(random())")
        builder.add(qid, type="calculate", name=card, relevant=unanswered,
                    calculation=f"if({_ref(card_draw)} = '', '', {pick})")
        shown[name] = _ref(card)
    prefix = (f"{wording_text(wording, 'question_label')} {view.number}. "
              f"{wording_text(wording, 'rule_label')}: ")
    for n, (text, names) in enumerate(shown_rules, start=1):
        # the drawn numbers are references (outputs): appended after the escaped text
        label = form_text(prefix + text) + "".join(
            f" {form_text(name)} = {shown[name]}." for name in names)
        builder.add(qid, type="note", name=f"{qid}_rule_{n}",
                    relevant=f"{unanswered} and {_ref(code)} = '{n}'",
                    label=dict.fromkeys(builder.languages, label))


def _numeric_answer_rows(builder: _Builder, question, number: int,
                         wording: Mapping[str, str]) -> None:
    """The answer: an ``integer`` (decimals = 0) or ``decimal`` field constrained to the
    numbers the design can report and to the question's decimals; with a "don't know" step,
    the typed number is ``QUESTION_value``, a "don't know" choice ``QUESTION_dk`` appears
    while it is empty, and the field named after the question holds the one answer."""
    qid, design = question.id, question.design
    low, high = question.range or (-math.inf, math.inf)
    lowest, highest = design.reported_range(low, high)
    decimals = question.decimals
    whole = (decimals == 0 and -MAX_INTEGER <= lowest and highest <= MAX_INTEGER)
    constraint = []
    if math.isfinite(lowest):
        constraint.append(f". >= {_plain(lowest)}")
    if math.isfinite(highest):
        constraint.append(f". <= {_plain(highest)}")
    if decimals is not None and not whole:
        constraint.append(f"abs(. * {10 ** decimals} - round(. * {10 ** decimals})) < 0.000001")
    message = []
    if math.isfinite(lowest) or math.isfinite(highest):
        shown = (_plain(lowest) if math.isfinite(lowest) else "\u2026",
                 _plain(highest) if math.isfinite(highest) else "\u2026")
        message.append(f"{wording_text(wording, 'number_constraint')} {shown[0]} \u2013 "
                       f"{shown[1]}.")
    if decimals is not None:
        message.append(f"{wording_text(wording, 'number_decimals_label')}: {decimals}.")
    label = f"{wording_text(wording, 'question_label')} {number}. {question.text}"
    if question.unit:
        label += f" ({question.unit})"
    formulas = []
    for steps in question.design.protocol.groups:
        formulas += [s.formula() for s in steps if s.kind != "dont_know"
                     and s.formula() not in formulas]
    hint = f"{wording_text(wording, 'number_form_hint')}\n{'; '.join(formulas)}"
    if question.unit:
        hint += f"\n{wording_text(wording, 'number_unit_label')}: {question.unit}"
    if wording.get("reminder"):
        hint += f"\n{wording['reminder']}"
    row: dict[str, object] = {
        "type": "integer" if whole else "decimal", "label": builder.texts(label),
        "hint": builder.texts(hint)}
    if constraint:
        row["constraint"] = " and ".join(constraint)
        row["constraint_message"] = builder.texts(" ".join(message))
    if design.designed_dont_know == 0:
        builder.add(qid, name=qid, required="yes", **row)
        return
    value, dont_know = f"{qid}_value", f"{qid}_dk"
    builder.add(qid, name=value, **row)
    answers = (AnswerOption(label="dont_know", text=wording_text(wording, "answer_dont_know")),)
    builder.add(qid, type=f"select_one {builder.choice_list(answers)}", name=dont_know,
                required="yes", relevant=f"{_ref(value)} = ''",
                label=builder.texts(wording_text(wording, "number_dont_know_label")))
    builder.add(qid, type="calculate", name=qid,
                calculation=f"if({_ref(value)} = '', if({_ref(dont_know)} = 'dont_know', "
                            f"'dont_know', ''), {_ref(value)})")


def _content_version(rows, choices, settings) -> str:
    """A version that changes whenever the form's content does (ODK Central and
    KoboToolbox need a new version for every changed upload), and only then."""
    data = json.dumps([rows, choices, sorted(settings.items())], sort_keys=True,
                      ensure_ascii=False)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()[:12]


def _checked_out(path: str | Path) -> Path:
    """The --out workbook: .xlsx (a usage error otherwise) in a folder that can be written
    (an OutputError, naming the folder, otherwise)."""
    path = Path(path)
    if path.suffix.casefold() != ".xlsx":
        raise ParameterError(f"--out {str(path)!r} must end in .xlsx: field tools read "
                             "XLSForms as Excel workbooks")
    return output_file(path, "--out")


def check_export(out: str | Path, *, randomize: str, acknowledge_risk: bool) -> None:
    """Refuse an export before any work: ``out`` not an .xlsx in a writable folder, or
    ``randomize="device"`` without ``acknowledge_risk`` (the message states
    :data:`DEVICE_RISKS`)."""
    _checked_out(out)  # a missing folder fails at once
    if randomize == "device" and not acknowledge_risk:
        raise ParameterError(
            "--randomize device is not private on every client: "
            + " ".join(f"({n}) {risk}" for n, risk in enumerate(DEVICE_RISKS, start=1))
            + " Pass --acknowledge-risk to write it anyway, or use --randomize self "
            "(respondents roll dice), which is private on every client.")


def write_xlsform(form: XLSForm, path: str | Path) -> Path:
    """Write ``form`` to the workbook ``path`` (.xlsx), replacing it atomically.

    Every cell is written as text, so a question that starts with "=" stays a
    question, not a spreadsheet formula; and marked as text (a quote prefix, the number
    format ``@``), so that it stays text when somebody edits the cell in a spreadsheet
    (which otherwise reads ``=``, ``+``, ``-``, ``@`` at the start of what was typed as a
    formula: OWASP's "CSV injection").
    """
    from openpyxl import Workbook

    path = _checked_out(path)
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
                cell.number_format = "@"
                cell.quotePrefix = True
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


def export_survey_xlsform(survey: Survey, *, out: str | Path, randomize: str = "self",
                          acknowledge_risk: bool = False,
                          templates_dir: str | Path | None = None) -> XLSFormExport:
    """Write ``survey``'s XLSForm to ``out``.

    ``randomize="device"`` is refused (ParameterError) unless
    ``acknowledge_risk`` is true: the message states :data:`DEVICE_RISKS`.
    ``templates_dir`` is a folder with the user's own ``wording.json``.
    :func:`surveykit.workflows.export.export_xlsform` exports a stored survey.
    """
    check_export(out, randomize=randomize, acknowledge_risk=acknowledge_risk)
    wording = load_wording_defaults(make_environment(templates_dir))
    form = build_xlsform(survey, randomize=randomize, wording_defaults=wording)
    written = write_xlsform(form, out)
    return XLSFormExport(
        path=written, survey=survey.name, form_id=form.settings["form_id"],
        version=form.settings["version"], randomize=randomize, languages=form.languages,
        answer_fields=form.answer_fields,
        risks=DEVICE_RISKS if randomize == "device" else (),
    )
