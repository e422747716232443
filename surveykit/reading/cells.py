"""How one cell of a response file is read: question ids, group cells, answers, respondent ids.

The rules of :mod:`surveykit.reading.responses` (the importer's reader),
written once as functions on single values so that every reader applies them
the same way: the importer row by row, and file counting
(:mod:`surveykit.counting`) on the distinct values a GROUP BY returns.

* a question id is matched as typed (spaces trimmed), then case-insensitively;
* a group cell is the group's number or name (any of its usual cases); an
  empty group cell means "take the group of the issued id";
* an answer whose cell is empty (or only spaces) is *missing*; otherwise it is
  looked up as typed, then in its canonical spelling
  (:func:`surveykit.vocabulary.canonical_spelling`), among the question's
  answer spellings (the design's labels, the built-in spellings, aliases);
* a respondent id is trimmed and must be non-empty and at most
  ``RESPONDENT_ID_LENGTH`` characters.

>>> from surveykit.definition.survey import parse_survey
>>> survey = parse_survey('''name = "s"
... title = "S"
... [mechanism]
... p = 0.7
... q = 0.2
... [[questions]]
... id = "cheated"
... text = "Ever?"''')
>>> read_question(question_lookup(survey), " Cheated "), read_answer(
...     survey.questions[0].answer_spellings(), " Y ")
(0, 'yes')
>>> PYTHON_WHITESPACE == "".join(chr(c) for c in range(0x110000) if chr(c).isspace())
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from surveykit.definition.survey import Question, Survey
from surveykit.errors import printable
from surveykit.vocabulary import canonical_spelling

__all__ = [
    "NOT_A_GROUP",
    "PYTHON_WHITESPACE",
    "bad_answer_reason",
    "duplicate_reason",
    "group_lookup",
    "group_names_text",
    "is_blank",
    "no_group_reason",
    "not_a_group_reason",
    "question_lookup",
    "read_answer",
    "read_group",
    "read_question",
    "respondent_problem",
    "unknown_question_reason",
]

# The characters str.strip() removes: readers that trim in another language (SQL)
# trim exactly these, so " yes\xa0" is "yes" everywhere. Written out, not computed: finding
# them reads all 1,114,112 code points (0.15 s of CPU in every process that imports the
# store, each `surveykit` command and server included); the module's doctest checks that
# they are exactly the code points for which str.isspace() is true.
PYTHON_WHITESPACE = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003"
                     "\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")

NOT_A_GROUP: Literal[False] = False


def is_blank(raw: str | None) -> bool:
    """Whether a cell is empty or only spaces (a missing answer, a missing group).

    >>> is_blank(" \\t"), is_blank(None), is_blank("no")
    (True, True, False)
    """
    return raw is None or not raw.strip()


def question_lookup(survey: Survey) -> dict[str, int]:
    """Question id as typed, and case-folded, -> the question's index in the survey."""
    lookup = {question.id.casefold(): index for index, question in enumerate(survey.questions)}
    for index, question in enumerate(survey.questions):
        lookup[question.id] = index
    return lookup


def read_question(lookup: Mapping[str, int], raw: str) -> int | None:
    """The index of the question a cell names (trimmed, then any case), or None."""
    text = raw.strip()
    found = lookup.get(text)
    return found if found is not None else lookup.get(text.casefold())


def group_lookup(survey: Survey) -> dict[str, int | None]:
    """Group cell -> group number; the empty cell maps to None (the issued id's group)."""
    lookup: dict[str, int | None] = {"": None}
    for number, name in enumerate(survey.groups, start=1):
        for spelling in (str(number), name, name.casefold(), name.upper()):
            lookup[spelling] = number
    return lookup


def read_group(lookup: Mapping[str, int | None], raw: str | None) -> int | None | Literal[False]:
    """The group number a cell names, None for an empty cell, NOT_A_GROUP otherwise.

    >>> read_group({"": None, "1": 1, "A": 1}, " a "), read_group({"": None}, "")
    (False, None)
    """
    text = (raw or "").strip()
    found = lookup.get(text, NOT_A_GROUP)
    return found if found is not NOT_A_GROUP else lookup.get(text.casefold(), NOT_A_GROUP)


def read_answer(spellings: Mapping[str, str], raw: str) -> str | None:
    """The response label of a non-empty answer cell, or None if it is not an answer."""
    return spellings.get(raw) or spellings.get(canonical_spelling(raw))


def respondent_problem(value: str, limit: int) -> str | None:
    """Why a trimmed respondent id cannot be stored, or None."""
    if not value:
        return "the respondent id is empty"
    if len(value) > limit:
        return f"the respondent id is longer than {limit} characters"
    return None


def group_names_text(groups: Sequence[str]) -> str:
    """``1 (A), 2 (B)``: group numbers with their names, as messages list them."""
    return ", ".join(f"{i} ({n})" if n != str(i) else str(i)
                     for i, n in enumerate(groups, start=1))


def unknown_question_reason(survey: Survey, name: str) -> str:
    """The reason for a question id the survey does not have."""
    known = ", ".join(q.id for q in survey.questions)
    return f"unknown question id: survey {survey.name!r} has {known}"


def not_a_group_reason(survey: Survey) -> str:
    """The reason for a group cell that names no group of the survey."""
    return (f"not a group of survey {survey.name!r}; its groups are "
            f"{group_names_text(survey.groups)}")


def no_group_reason(survey: Survey) -> str:
    """The reason for an answer of a multi-group survey that has no group."""
    return (f"no group: survey {survey.name!r} has multi-group designs (groups "
            f"{group_names_text(survey.groups)}); add a group column, or import answers of "
            "ids issued with a group")


def bad_answer_reason(question: Question, raw: str) -> str:
    """The reason for an answer cell ``raw`` that is none of the question's answers, with the
    [import.labels] line that would map it."""
    aliases = sorted(question.aliases)
    extra = (f", or an alias of this question ({', '.join(repr(a) for a in aliases)})"
             if aliases else "")
    if question.design.is_binary and len(question.design.response_labels) == 3:
        allowed = "yes/y/1/true, no/n/0/false or dont_know/don't know/dk"
        targets = '"yes", "no", "dont_know"'
    else:
        allowed = ", ".join(question.design.answer_labels) + " or dont_know/don't know/dk"
        targets = ", ".join(f'"{label}"' for label in question.design.response_labels)
    label = printable(raw.strip().replace("\\", "\\\\").replace('"', '\\"'))
    return (f"not an answer: use {allowed}{extra}; "
            "leave the cell empty if the answer is missing; or map the label with "
            f'[import.labels] "{label}" = one of {targets}, "missing"')


def duplicate_reason(question_id: str, lines: Sequence[int], unit: str = "line") -> str:
    """The reason for each row of a respondent who answers one question on several lines
    (``unit`` "row" for workbooks, whose rows are numbered as the sheet shows them)."""
    others = ", ".join(str(line) for line in lines)
    return (f"this respondent answers question {question_id!r} {len(lines)} times in "
            f"this file ({unit}s {others}); keep one row")
