"""A survey file's ``[[joint]]`` entries: the joint analyses ``surveykit report`` shows.

Each entry names 2 to 4 of the survey's questions (each once), and optionally a
title; :func:`surveykit.workflows.joint.joint_for_survey` estimates it from the
stored answers, as ``surveykit joint --survey NAME --questions a,b`` does.
Checked here, when the survey is added, so that a misspelt question is refused
in one line before anything is stored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from surveykit.definition.tables import table_entries
from surveykit.errors import ParameterError, did_you_mean
from surveykit.joint_counts import MAX_QUESTIONS

__all__ = ["JointQuestionError", "JointSpec", "parse_joint", "resolve_questions"]

_JOINT_KEYS = frozenset({"questions", "title"})


@dataclass(frozen=True, kw_only=True)
class JointSpec:
    """One ``[[joint]]`` entry: the questions analysed together and the section's title
    (None: the report names the questions)."""

    questions: tuple[str, ...]
    title: str | None = None

    @property
    def heading(self) -> str:
        """The report's heading of this analysis: its title, or "a and b"."""
        return self.title or " and ".join(self.questions)


class JointQuestionError(ParameterError):
    """``name`` is not one of the survey's questions, or (``twice``) names one already named."""

    def __init__(self, name: str, *, twice: bool) -> None:
        super().__init__(f"{name!r} is named twice" if twice else f"{name!r} is not a question")
        self.name = name
        self.twice = twice


def resolve_questions(names: Sequence[str], questions: Sequence[str]) -> tuple[str, ...]:
    """The survey's ids of ``names`` (case-insensitive), in the order given; a
    :class:`JointQuestionError` for an unknown name or one named twice. The ``[[joint]]``
    check and ``surveykit joint`` both resolve names here, and each words the error.

    >>> resolve_questions(["Plagiarism", "cheating"], ["cheating", "plagiarism"])
    ('plagiarism', 'cheating')
    """
    by_folded = {question.casefold(): question for question in questions}
    chosen: list[str] = []
    for name in names:
        question = by_folded.get(name.casefold())
        if question is None or question in chosen:
            raise JointQuestionError(name, twice=question is not None)
        chosen.append(question)
    return tuple(chosen)


def parse_joint(value: object, questions: Sequence[str],
                fail: Callable[[str, str], Exception]) -> tuple[JointSpec, ...]:
    """Validate ``[[joint]]``: each entry names 2 to 4 distinct questions of the survey.

    ``fail(key_path, message)`` makes the error.

    >>> def fail(where, message): return ValueError(f"{where}: {message}")
    >>> parse_joint([{"questions": ["q1", "q2"]}], ["q1", "q2"], fail)[0].heading
    'q1 and q2'
    >>> parse_joint([{"questions": ["cheating", "plagiarsm"]}], ["cheating", "plagiarism"],
    ...             fail)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: joint[0].questions: 'plagiarsm' is not a question..., did you mean 'plagiarism'?...
    """
    entries = table_entries(value, "joint", _JOINT_KEYS, 'questions = ["a", "b"]', fail)
    if not value:
        return ()
    out = []
    for where, entry in entries:
        names = entry.get("questions")
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise fail(f"{where}.questions", f"{names!r} must be a list of question ids, "
                                             'e.g. questions = ["exam_cheating", "plagiarism"]')
        if not 2 <= len(names) <= MAX_QUESTIONS:
            raise fail(f"{where}.questions", f"names {len(names)} question"
                       f"{'s' if len(names) != 1 else ''}: a joint analysis takes 2 to "
                       f"{MAX_QUESTIONS}, e.g. questions = [\"exam_cheating\", \"plagiarism\"]")
        try:
            chosen = resolve_questions(names, questions)
        except JointQuestionError as problem:
            name = problem.name
            if problem.twice:
                raise fail(f"{where}.questions", f"{name!r} is named twice: name each question "
                                                 "once") from None
            hint = did_you_mean(name, questions)
            listed = ", ".join(questions)
            raise fail(f"{where}.questions",
                       f"{name!r} is not a question of the survey"
                       + (f"{hint} Its questions are {listed}" if hint
                          else f"; its questions are {listed}")) from None
        title = entry.get("title")
        if title is not None and (not isinstance(title, str) or not title.strip()):
            raise fail(f"{where}.title", f"{title!r} must be a text, e.g. "
                                         'title = "Cheating and plagiarism"')
        out.append(JointSpec(questions=chosen,
                             title=title.strip() if title is not None else None))
    return tuple(out)
