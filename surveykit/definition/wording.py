"""The rules every respondent-facing text obeys, checked when a survey or a wording file is read.

:func:`text_problem`: no control characters but tab and line feed, no bidirectional
overrides, no U+FFFE or U+FFFF (texts are printed on forms, in workbooks and XForms, and
on terminals). :func:`check_placeholders`: a wording key's ``{placeholders}`` are the ones
:data:`PLACEHOLDERS` allows it, so a typo (``{answr}``) never reaches a printed slip.
:func:`check_wording_file` applies both to a ``wording.json``. The survey reader
(:mod:`surveykit.definition.survey`) and collection (:mod:`surveykit.collection.instructions`,
which fills the texts in) share them.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Mapping
from types import MappingProxyType

from surveykit.errors import ParameterError, printable

__all__ = ["PLACEHOLDERS", "check_placeholders", "check_wording_file", "text_problem"]

#: Wording keys that take placeholders, and the placeholders each allows.
PLACEHOLDERS: Mapping[str, frozenset[str]] = MappingProxyType({
    "rule_say": frozenset({"answer"}),
    "rule_innocuous": frozenset({"innocuous"}),
    "rule_table": frozenset({"state", "response"}),
    "die_answer": frozenset({"answer"}),
    "die_state": frozenset({"state"}),
    "die_count": frozenset({"die", "repetitions", "faces"}),
    "web_progress": frozenset({"number", "total"}),
    "web_number_draw": frozenset({"value"}),
    "web_number_multiply": frozenset({"factor"}),
    "web_number_add": frozenset({"offset"}),
    "web_number_linear": frozenset({"factor", "offset"}),
    "web_number_round": frozenset({"step"}),
    "web_number_decimals": frozenset({"step"}),
    "web_number_range": frozenset({"low", "high"}),
    "number_decimals": frozenset({"decimals"}),
    "number_draw": frozenset({"number"}),
    "number_times": frozenset({"multiplier"}),
    "number_plus": frozenset({"addend"}),
    "number_times_plus": frozenset({"multiplier", "addend"}),
    "number_plus_times": frozenset({"addend", "multiplier"}),
    "number_scaled_plus_times": frozenset({"factor", "addend", "multiplier"}),
    "number_unrelated": frozenset({"innocuous"}),
    "number_round": frozenset({"decimals"}),
    "number_device_value": frozenset({"name"}),
    "number_device_scaled": frozenset({"factor", "name"}),
    "number_device_dice": frozenset({"name", "dice"}),
    "number_device_die": frozenset({"name", "dice"}),
    "number_device_table": frozenset({"name"}),
    "number_device_cards": frozenset({"name", "cards", "values"}),
    "number_value_label": frozenset({"name"}),
})

# Control characters (C0 but tab and line feed, DEL, C1) and the bidirectional overrides and
# isolates that reorder what is shown (CVE-2021-42574): they rewrite terminals, spreadsheets
# refuse them, and they hide text on forms.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_CONTROL_IN_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# Characters XML 1.0 cannot hold, which a workbook and an XForm are written in.
_NOT_XML = re.compile("[\ufffe\uffff]")


def text_problem(text: str, *, lines: bool = True) -> str | None:
    r"""What keeps ``text`` from being printed on a form or a terminal, or None.

    ``lines``: tabs and line feeds are allowed (long texts); labels allow neither.

    >>> text_problem("Ever cheated?\nBe honest.") is None
    True
    >>> text_problem("Ever\x1b[2J cheated?")
    'holds the control character \\x1b at position 5; texts are printed on forms and ...'
    >>> text_problem("Ever\ufffe")
    'holds U+FFFE at position 5, which no workbook or XForm can hold (it is not XML); ...'
    """
    found = (_CONTROL if lines else _CONTROL_IN_LINE).search(text)
    if found:
        return (f"holds the control character {printable(found.group())} at position "
                f"{found.start() + 1}; texts are printed on forms and terminals, remove it")
    found = _NOT_XML.search(text)
    if found:
        return (f"holds U+{ord(found.group()):04X} at position {found.start() + 1}, which no "
                "workbook or XForm can hold (it is not XML); remove it")
    return None


def check_wording_file(wording: Mapping[str, str], source: str, filename: str) -> None:
    r"""Refuse a wording file (``wording.json``, e.g. in a ``--templates`` folder) whose
    texts break the rules of the survey file's ``[wording]``: :func:`text_problem` and
    :func:`check_placeholders`. Errors name the file, the key's line and the key.

    >>> check_wording_file({"intro": "Hi\a"}, '{\n  "intro": "Hi\\u0007"\n}', "w.json")
    Traceback (most recent call last):
    ...
    surveykit.errors.ParameterError: w.json, line 2: intro: holds the control character \x07 ...
    """
    for key, text in wording.items():
        # the key's line: where it is written (in its JSON spelling)
        found = re.search(re.escape(json.dumps(key)) + r"\s*:", source)
        where = (filename if found is None
                 else f"{filename}, line {source.count(chr(10), 0, found.start()) + 1}")
        problem = text_problem(key, lines=False) or text_problem(text)
        if problem:
            raise ParameterError(f"{where}: {printable(key)}: {problem}")
        check_placeholders({key: text}, where)


def check_placeholders(wording: Mapping[str, str], where: str) -> None:
    """Refuse texts whose placeholders the key does not know, or broken braces.

    >>> check_placeholders({"rule_say": "Say {answr}."}, "survey 's' [wording]")
    Traceback (most recent call last):
    ...
    surveykit.errors.ParameterError: survey 's' [wording]: rule_say ('Say {answr}.') uses the \
placeholder {answr}; it allows {answer} (write {{ and }} for literal braces)
    """
    for key, allowed in PLACEHOLDERS.items():
        text = wording.get(key)
        if text is None:
            continue
        try:
            fields = [name for _, name, _, _ in string.Formatter().parse(text) if name is not None]
        except ValueError as exc:
            raise ParameterError(f"{where}: {key} ({text!r}) is not a valid text with "
                                 f"placeholders: {exc}; write {{{{ and }}}} for literal braces"
                                 ) from None
        for name in fields:
            if name not in allowed:
                shown = ", ".join(f"{{{a}}}" for a in sorted(allowed))
                raise ParameterError(
                    f"{where}: {key} ({text!r}) uses the placeholder {{{name}}}; it allows "
                    f"{shown} (write {{{{ and }}}} for literal braces)")
