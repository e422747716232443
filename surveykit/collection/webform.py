"""The web page's survey as data: per question and group, rules with exact integer thresholds.

``surveykit serve`` (docs/web-collection.md) lets the respondent's browser
draw each instruction. The page's JavaScript is the same for every survey
(so its SHA-256 can be published); everything survey-specific reaches it as
the JSON built here: question texts, button labels, and for each question
and group the design's protocol (``design.protocol.for_group(g)``) as a list
of rules, each with the text the page shows and an integer threshold.

How the page draws (exact to 2^-53): it takes a uniform integer U on
[0, 2^53) from ``crypto.getRandomValues`` (21 + 32 random bits, exact in a
JavaScript number) and shows the first rule whose threshold exceeds U. The
thresholds are the ones paper slips are drawn with,
:func:`surveykit.collection.randomizer.instruction_thresholds`::

    t_k = round(2^53 (p_1 + ... + p_k))      (round half to even; t_K = 2^53)

so rule k is drawn with probability (t_k - t_{k-1}) / 2^53, within 2^-53 of
p_k; every integer up to 2^53 is exact in JavaScript, so the comparison is
exact too.

The page says what the paper forms say: question numbers, texts, answer
buttons, the innocuous question and the combined question's prompt come
from the slips-mode layout (:func:`surveykit.collection.questionnaire.build_layout`),
rule texts from :func:`surveykit.collection.instructions.instruction_lines`.
Protocol kinds (:class:`surveykit.designs.base.Protocol`):

* ``instructions``: one rule per question (answer truthfully, the opposite,
  "yes", "don't know", the sensitive or the innocuous question, ...);
* ``per_state``: one rule that lists a response for every true state
  (Kuk's cards, custom matrices): "If your true answer is Yes, answer No." ...;
* ``combined`` (crosswise, triangular): the page shows both questions and the
  combined question's prompt (``crosswise_instructions``) with the combined
  answers ("Both the same ..."); the rule is "Answer the question truthfully."
  and only a designed "don't know" branch needs a draw.

Nothing here does I/O: the caller passes the default wording
(:func:`surveykit.collection.render.load_wording_defaults`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from surveykit.collection.instructions import fill, instruction_lines
from surveykit.collection.questionnaire import build_layout
from surveykit.collection.randomizer import GRID_BITS, instruction_thresholds

__all__ = [
    "WebForm",
    "WebQuestion",
    "WebRule",
    "build_web_form",
]

# Wording keys the page's script needs besides the questions (all web_* keys and these).
_PAGE_KEYS = ("intro", "rule_label", "respondent_id_label")


@dataclass(frozen=True)
class WebRule:
    """One rule as the page shows it: drawn when the uniform integer is below ``below``."""

    below: int
    lines: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return {"below": self.below, "lines": list(self.lines)}


@dataclass(frozen=True)
class WebQuestion:
    """A question as the page asks it.

    ``rules`` holds, per group of the question's design, the rules with their
    thresholds; ``answers`` pairs each response label with its button text (the
    answer boxes of the paper sheet); ``innocuous`` is the other question of a
    combined design (shown beside the sensitive one), None otherwise, and
    ``prompt`` what to answer about the two ("" otherwise).
    """

    id: str
    number: int
    progress: str
    text: str
    innocuous: str | None
    reminder: str
    answers: tuple[tuple[str, str], ...]
    rules: tuple[tuple[WebRule, ...], ...]
    innocuous_label: str
    prompt: str = ""

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id, "number": self.number, "progress": self.progress, "text": self.text,
            "innocuous": self.innocuous, "innocuous_label": self.innocuous_label,
            "prompt": self.prompt,
            "reminder": self.reminder,
            "answers": [{"label": label, "text": text} for label, text in self.answers],
            "rules": [[rule.to_dict() for rule in group] for group in self.rules],
        }


@dataclass(frozen=True)
class WebForm:
    """Everything survey-specific the page needs (served as ``/survey.json``)."""

    survey: str
    title: str
    language: str
    groups: tuple[str, ...]
    grid_bits: int
    wording: Mapping[str, str]
    questions: tuple[WebQuestion, ...]

    def to_dict(self) -> dict[str, object]:
        """Plain JSON-ready data; the thresholds are integers up to 2^53."""
        return {"survey": self.survey, "title": self.title, "language": self.language,
                "groups": list(self.groups), "grid_bits": self.grid_bits,
                "wording": dict(self.wording),
                "questions": [question.to_dict() for question in self.questions]}


def build_web_form(survey, *, wording_defaults: Mapping[str, str]) -> WebForm:
    """The page data for ``survey`` (a :class:`surveykit.definition.survey.Survey`).

    Wording: ``wording_defaults`` (wording.json), overridden by the survey's
    ``[wording]`` and then by each question's ``wording``; unknown keys are
    refused (ParameterError naming the table and the key).

    >>> from surveykit.definition.survey import parse_survey
    >>> from surveykit.collection.render import load_wording_defaults, make_environment
    >>> survey = parse_survey('name = "s"\\ntitle = "S"\\n[mechanism]\\np = 0.6\\nq = 0.2\\n'
    ...                       '[[questions]]\\nid = "q1"\\ntext = "Ever?"')
    >>> form = build_web_form(survey, wording_defaults=load_wording_defaults(make_environment()))
    >>> [rule.below for rule in form.questions[0].rules[0]]  # 0.6, 0.8 and 1 times 2^53
    [5404319552844595, 7205759403792794, 9007199254740992]
    >>> form.questions[0].rules[0][1].lines
    ('Give the opposite of the true answer.',)
    """
    layout = build_layout(survey, mode="slips", wording_defaults=wording_defaults)
    questions = []
    total = len(survey.questions)
    for question, view in zip(survey.questions, layout.questions, strict=True):
        design = question.design
        rules = []
        for group in range(len(design.group_names)):
            instructions = design.protocol.for_group(group)
            thresholds = instruction_thresholds(instructions)
            rules.append(tuple(
                WebRule(below=below, lines=instruction_lines(
                    instruction, design, view.wording, innocuous=question.innocuous))
                for instruction, below in zip(instructions, thresholds, strict=True)))
        questions.append(WebQuestion(
            id=view.id, number=view.number,
            progress=fill(view.wording, "web_progress", number=view.number, total=total),
            text=view.text, innocuous=view.innocuous, prompt=view.prompt,
            innocuous_label=view.wording["innocuous_label"],
            reminder=view.wording.get("reminder", ""),
            answers=tuple((answer.label, answer.text) for answer in view.answers),
            rules=tuple(rules)))
    page_wording = {key: text for key, text in layout.wording.items()
                    if key.startswith("web_") or key in _PAGE_KEYS}
    return WebForm(survey=survey.name, title=survey.title, language=survey.language,
                   groups=tuple(survey.groups), grid_bits=GRID_BITS, wording=page_wording,
                   questions=tuple(questions))
