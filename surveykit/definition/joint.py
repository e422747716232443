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

from surveykit.errors import allowed_keys, did_you_mean

__all__ = ["JointSpec", "parse_joint"]

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
    if not isinstance(value, list) or not all(isinstance(entry, dict) for entry in value):
        raise fail("joint", 'must be tables: [[joint]] with questions = ["a", "b"]')
    if not value:
        return ()
    # lazy: the estimator's bound, without loading numpy and pandas for every survey file
    from surveykit.estimation.joint import MAX_QUESTIONS

    by_folded = {question.casefold(): question for question in questions}
    out = []
    for index, entry in enumerate(value):
        where = f"joint[{index}]"
        unknown = sorted(set(entry) - _JOINT_KEYS)
        if unknown:
            raise fail(f"{where}.{unknown[0]}",
                       f"unknown key{allowed_keys(unknown[0], _JOINT_KEYS)}")
        names = entry.get("questions")
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise fail(f"{where}.questions", f"{names!r} must be a list of question ids, "
                                             'e.g. questions = ["exam_cheating", "plagiarism"]')
        if not 2 <= len(names) <= MAX_QUESTIONS:
            raise fail(f"{where}.questions", f"names {len(names)} question"
                       f"{'s' if len(names) != 1 else ''}: a joint analysis takes 2 to "
                       f"{MAX_QUESTIONS}, e.g. questions = [\"exam_cheating\", \"plagiarism\"]")
        chosen: list[str] = []
        for name in names:
            question = by_folded.get(name.casefold())
            if question is None:
                hint = did_you_mean(name, questions)
                listed = ", ".join(questions)
                raise fail(f"{where}.questions",
                           f"{name!r} is not a question of the survey"
                           + (f"{hint} Its questions are {listed}" if hint
                              else f"; its questions are {listed}"))
            if question in chosen:
                raise fail(f"{where}.questions", f"{name!r} is named twice: name each question "
                                                 "once")
            chosen.append(question)
        title = entry.get("title")
        if title is not None and (not isinstance(title, str) or not title.strip()):
            raise fail(f"{where}.title", f"{title!r} must be a text, e.g. "
                                         'title = "Cheating and plagiarism"')
        out.append(JointSpec(questions=tuple(chosen),
                             title=title.strip() if title is not None else None))
    return tuple(out)
