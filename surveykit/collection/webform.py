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
thresholds are the cumulative probabilities on the 2^53 grid, computed here
exactly from the design's fractions (:func:`grid_thresholds`)::

    t_k = round(2^53 (p_1 + ... + p_k))      (round half to even; t_K = 2^53)

so rule k is drawn with probability (t_k - t_{k-1}) / 2^53, within 2^-53 of
p_k; every integer up to 2^53 is exact in JavaScript, so the comparison is
exact too. This is the rule :mod:`surveykit.collection.randomizer` uses for
paper slips.

Protocol kinds (:class:`surveykit.designs.base.Protocol`):

* ``instructions``: one rule per question (answer truthfully, the opposite,
  "yes", "don't know", the sensitive or the innocuous question, ...);
* ``per_state``: one rule that lists a response for every true state
  (Kuk's cards, custom matrices): "If your true answer is Yes, answer No." ...;
* ``combined`` (crosswise, triangular): the rule is the combined question
  itself; only a designed "don't know" branch needs a draw.

Nothing here does I/O: the caller passes the default wording
(:func:`surveykit.collection.render.load_wording_defaults`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from surveykit.collection.questionnaire import merge_wording
from surveykit.designs.base import DONT_KNOW, NO, YES, Instruction
from surveykit.errors import ParameterError

__all__ = [
    "GRID_BITS",
    "WebForm",
    "WebQuestion",
    "WebRule",
    "answer_text",
    "build_web_form",
    "grid_thresholds",
]

#: The page draws uniform integers on [0, 2^GRID_BITS): 53 bits, exact in a JavaScript number.
GRID_BITS = 53

# Wording keys the page's script needs besides the questions (all web_* keys and these).
_PAGE_KEYS = ("intro", "rule_label", "respondent_id_label")
# The combined question of each combined design, by the design's model name.
_COMBINED_KEYS = {"crosswise": "combined_crosswise", "triangular": "combined_triangular"}
_ANSWER_KEYS = {YES: "answer_yes", NO: "answer_no", DONT_KNOW: "answer_dont_know"}


def grid_thresholds(probabilities: Sequence[Fraction], bits: int = GRID_BITS) -> tuple[int, ...]:
    """Cumulative thresholds t_k = round(2^bits (p_1 + ... + p_k)) of exact probabilities.

    The probabilities must be fractions >= 0 that add up to exactly 1, so the
    last threshold is 2^bits. A uniform U on [0, 2^bits) picks the first k
    with U < t_k: P(k) = (t_k - t_{k-1}) / 2^bits, within 2^-bits of p_k
    (each t_k is within 1/2 of the exact 2^bits F_k; round half to even).

    >>> grid_thresholds([Fraction(3, 5), Fraction(1, 5), Fraction(1, 5)], bits=4)
    (10, 13, 16)
    >>> grid_thresholds([Fraction(1, 2), Fraction(1, 2)]) == (2**52, 2**53)
    True
    """
    if isinstance(bits, bool) or not isinstance(bits, int) or not 1 <= bits <= 53:
        raise ParameterError(f"bits ({bits!r}) must be a whole number from 1 to 53: "
                             "JavaScript numbers hold integers exactly up to 2^53")
    values = [Fraction(p) for p in probabilities]
    if not values:
        raise ParameterError("probabilities must not be empty: a protocol has one rule or more")
    if any(p < 0 for p in values) or sum(values) != 1:
        raise ParameterError(
            f"probabilities ({', '.join(str(p) for p in values)}) must be >= 0 and add up to "
            "exactly 1: pass the design's protocol fractions, not rounded floats")
    grid = 1 << bits
    total = Fraction(0)
    thresholds = []
    for p in values:
        total += p
        thresholds.append(round(total * grid))
    return tuple(thresholds)


def answer_text(label: str, wording: Mapping[str, str]) -> str:
    """What a button (or a rule) says for response or state ``label``.

    Yes, no and "don't know" have wording keys (``answer_yes``, ...); other
    labels (categories, custom responses) are shown as the survey names them.

    >>> answer_text("dont_know", {"answer_dont_know": "Don't know"}), answer_text("b", {})
    ("Don't know", 'b')
    """
    key = _ANSWER_KEYS.get(label)
    return wording[key] if key is not None and key in wording else label


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
    thresholds; ``answers`` pairs each response label with its button text;
    ``innocuous`` is the other question of a combined design (shown beside the
    sensitive one), None otherwise.
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

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id, "number": self.number, "progress": self.progress, "text": self.text,
            "innocuous": self.innocuous, "innocuous_label": self.innocuous_label,
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


def _rule_lines(instruction: Instruction, question, model: str,
                wording: Mapping[str, str]) -> tuple[str, ...]:
    kind = instruction.kind
    if kind == "say":
        return (wording["rule_say"].replace("{answer}", answer_text(instruction.say, wording)),)
    if kind == "innocuous":
        return (wording["rule_innocuous"].replace("{innocuous}", question.innocuous or ""),)
    if kind == "sensitive" and model in _COMBINED_KEYS:
        return (wording[_COMBINED_KEYS[model]],)
    if kind == "answer_table":
        return tuple(wording["rule_table"].replace("{state}", answer_text(state, wording))
                     .replace("{response}", answer_text(response, wording))
                     for state, response in instruction.table or ())
    return (wording[f"rule_{kind}"],)


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
    survey_wording = merge_wording(wording_defaults,
                                   (f"survey {survey.name!r} [wording]", survey.wording))
    questions = []
    total = len(survey.questions)
    for number, question in enumerate(survey.questions, start=1):
        wording = merge_wording(survey_wording,
                                (f"question {question.id!r} wording", question.wording))
        design = question.design
        protocol = design.protocol
        rules = []
        for group in range(len(design.group_names)):
            instructions = protocol.for_group(group)
            thresholds = grid_thresholds([i.probability for i in instructions])
            rules.append(tuple(
                WebRule(below=below, lines=_rule_lines(instruction, question, design.model,
                                                       wording))
                for instruction, below in zip(instructions, thresholds, strict=True)))
        combined = protocol.kind == "combined"
        questions.append(WebQuestion(
            id=question.id, number=number,
            progress=(wording["web_progress"].replace("{number}", str(number))
                      .replace("{total}", str(total))),
            text=question.text,
            innocuous=question.innocuous if combined else None,
            innocuous_label=wording["innocuous_label"],
            reminder=wording.get("reminder", ""),
            answers=tuple((label, answer_text(label, wording))
                          for label in design.response_labels),
            rules=tuple(rules)))
    page_wording = {key: text for key, text in survey_wording.items()
                    if key.startswith("web_") or key in _PAGE_KEYS}
    return WebForm(survey=survey.name, title=survey.title, language=survey.language,
                   groups=tuple(survey.groups), grid_bits=GRID_BITS, wording=page_wording,
                   questions=tuple(questions))
