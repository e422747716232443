"""The joint analysis of a stored survey's questions (``surveykit joint --survey``).

Joins :func:`surveykit.store.joint_answers.joint_answers` (the cross-classified
counts, one query) and :func:`surveykit.estimation.joint.joint_from_counts`
(the product design's maximum likelihood), and states what answering all the
questions together costs in privacy: losses compose, so the loss of the
answers together is at most the sum of the questions' losses in each semantics
(Lemmas 3.3 and 3.15 of Li, Zhou, Qin and Xu), whatever the analysis.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from os import PathLike

from sqlalchemy import Engine

from surveykit.errors import ParameterError
from surveykit.estimation.joint import MAX_QUESTIONS, JointEstimate, joint_from_counts
from surveykit.store import database as store
from surveykit.store.joint_answers import joint_answers
from surveykit.vocabulary import loss_fields

__all__ = ["SEMANTICS", "SurveyJoint", "joint_for_survey"]

#: The semantics whose composed losses the joint analysis states.
SEMANTICS = ("shafer", "walley")


@dataclass(frozen=True, kw_only=True)
class SurveyJoint:
    """The joint analysis of ``estimate.questions`` of survey ``survey``: the estimate and the
    privacy loss of each question and of answering them all (``composed``, the sum; ``inf``
    when one question's loss is unbounded)."""

    survey: str
    estimate: JointEstimate
    losses: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def composed(self) -> dict[str, float]:
        """Per semantics, the loss of answering every question: at most the sum."""
        return {semantics: math.fsum(self.losses[q][semantics] for q in self.losses)
                for semantics in SEMANTICS}

    def to_dict(self, *, level: float = 0.95) -> dict[str, object]:
        """Plain data for JSON: the estimate's, the survey and the losses, each as
        ``epsilon_shafer`` and ``epsilon_shafer_finite`` (an unbounded loss is "inf", never
        null: :func:`surveykit.vocabulary.loss_fields`)."""
        def losses(by_semantics: dict[str, float]) -> dict[str, object]:
            out: dict[str, object] = {}
            for semantics, value in by_semantics.items():
                out.update(loss_fields(f"epsilon_{semantics}", value))
            return out

        return {"survey": self.survey, **self.estimate.to_dict(level=level),
                "privacy": {"questions": {q: losses(by) for q, by in self.losses.items()},
                            "together": losses(self.composed),
                            "rule": "losses compose: answering all the questions costs at "
                                    "most the sum of their losses"}}


def joint_for_survey(database: Engine | str | PathLike, survey_name: str,
                     questions: Sequence[str]) -> SurveyJoint:
    """The joint distribution of the true answers to ``questions`` (2 to 4 ids of survey
    ``survey_name``), from the stored answers; ``database`` is an engine, an SQLite path or a
    SQLAlchemy URL, as ``--db`` takes it.

    >>> # joint_for_survey("surveykit.db", "academic_integrity", ["exam_cheating", "plagiarism"])
    """
    names = [str(q) for q in questions]
    if not 2 <= len(names) <= MAX_QUESTIONS:
        raise ParameterError(f"questions ({', '.join(names) or 'none'}): name 2 to "
                             f"{MAX_QUESTIONS} questions of the survey, e.g. "
                             "--questions exam_cheating,plagiarism")
    with store.engine_for(database) as engine:
        stored = joint_answers(engine, survey_name, names)
    survey = stored.survey
    designs = {name: survey.question(name).design for name in stored.counts.questions}
    if stored.counts.total == 0:
        raise ParameterError(
            f"questions {', '.join(designs)} of survey {survey_name!r} have no respondent in "
            "common: nothing says how their answers go together (import answers first, or "
            "name questions asked of the same respondents)")
    estimate = joint_from_counts(stored.counts, designs)
    if stored.left_out:
        estimate = _with_left_out(estimate, stored.left_out)
    losses = {name: {s: design.privacy_loss(s) for s in SEMANTICS}
              for name, design in designs.items()}
    return SurveyJoint(survey=survey.name, estimate=estimate, losses=losses)


def _with_left_out(estimate: JointEstimate, left_out: dict[str, int]) -> JointEstimate:
    return replace(estimate, left_out={**estimate.left_out, **left_out})
