"""What a respondent reads: an instruction's text, answer options, for any design.

The one place that turns a design's protocol into words, shared by the
printed slips, the die tables, the XLSForm
(:mod:`surveykit.collection.xlsform`) and the web page
(:mod:`surveykit.collection.webform`). The texts come from the merged wording
(``templates/wording.json``, then the survey's ``[wording]``, then the
question's ``wording``):

* ``rule_truthful``, ``rule_opposite``, ``rule_dont_know``, ``rule_sensitive``
  (answer the question, or the combined question, truthfully): no placeholders;
* ``rule_say`` -- Answer "{answer}", whatever the truth is;
* ``rule_innocuous`` -- Answer this other question truthfully instead: {innocuous};
* ``rule_table`` -- If your true answer is {state}, answer {response}. (one
  sentence per true state, for Kuk's cards and custom matrices on slips);
* ``die_answer`` -- Answer "{answer}". (a face of a per-state die table);
* ``die_state`` -- If your true answer is {state}: (heading of a per-state table);
* ``die_count`` -- Roll the {die} {repetitions} times and count the rolls that
  show {faces}. Mark that number. (Kuk's cards drawn several times);
* ``web_progress`` -- Question {number} of {total} (the web page's heading);
* ``web_number_*`` -- the web page's rules for numeric questions, whose
  ``{value}``, ``{factor}`` and ``{offset}`` the browser fills with the numbers it
  drew (docs/web-collection.md), and its messages about a typed number.
* ``number_*`` -- the rules of numeric questions, with the drawn numbers filled in
  (:mod:`surveykit.collection.numeric` lists them).

Placeholders are filled with :meth:`str.format`; a text with a placeholder
the key does not know (``{answr}``) is refused when the layout is built, so a
typo never reaches a printed slip. Write ``{{`` and ``}}`` for literal braces
in these keys.

Every text a respondent or an operator reads obeys one rule, :func:`text_problem`: no
control characters but tab and line feed, no bidirectional overrides, no U+FFFE or
U+FFFF. The survey file's texts are checked with it when the survey is read, a
``--templates`` folder's ``wording.json`` when it is loaded (:func:`check_wording_file`).

Answers: a yes/no design's ``yes``, ``no`` and ``dont_know`` read
``answer_yes``, ``answer_no``, ``answer_dont_know``; crosswise and triangular
designs answer their combined question (``crosswise_yes`` "Both the same",
``triangular_no`` "Both no", ...), which ``crosswise_instructions`` and
``triangular_instructions`` ask on paper, in the XLSForm and on the web page;
other labels (Kuk's counts 0..r, category labels) are shown as they are.
"""

from __future__ import annotations

from collections.abc import Mapping

from surveykit.definition.wording import (
    PLACEHOLDERS,
    check_placeholders,
    check_wording_file,
    text_problem,
)
from surveykit.designs.base import DONT_KNOW, NO, YES, Design, Instruction
from surveykit.errors import ParameterError

__all__ = [
    "PLACEHOLDERS",
    "answer_options",
    "answer_text",
    "check_placeholders",
    "check_wording_file",
    "fill",
    "instruction_lines",
    "instruction_text",
    "state_text",
    "text_problem",
    "wording_text",
]

_SIMPLE_RULES = {"truthful": "rule_truthful", "opposite": "rule_opposite",
                 "dont_know": "rule_dont_know", "sensitive": "rule_sensitive"}
_ANSWER_KEYS = {YES: "answer_yes", NO: "answer_no", DONT_KNOW: "answer_dont_know"}


def wording_text(wording: Mapping[str, str], key: str) -> str:
    """``wording[key]``, or an error saying which wording file lacks it.

    >>> wording_text({"rule_truthful": "Answer truthfully."}, "rule_truthful")
    'Answer truthfully.'
    """
    try:
        return wording[key]
    except KeyError:
        raise ParameterError(
            f"wording key {key!r} is missing; add it to your wording.json (surveykit's "
            "templates/wording.json has every key and its English default)") from None


def fill(wording: Mapping[str, str], key: str, **values: object) -> str:
    """The text of ``key`` with its placeholders filled in.

    >>> fill({"rule_say": 'Answer "{answer}".'}, "rule_say", answer="Yes")
    'Answer "Yes".'
    """
    return wording_text(wording, key).format(**values)


def answer_text(design: Design, label: str, wording: Mapping[str, str]) -> str:
    """What an answer box (or an instruction) calls the response ``label`` of ``design``.

    >>> from surveykit.designs.unrelated import Crosswise
    >>> from surveykit.designs.warner import Kuk
    >>> w = {"answer_yes": "Yes", "crosswise_yes": "Both the same"}
    >>> answer_text(Crosswise(p=0.25), "yes", w), answer_text(Kuk(p=[0.7, 0.3],
    ...     repetitions=2), "2", w)
    ('Both the same', '2')
    """
    combined = design.combined_wording.get(label)
    if combined is not None:
        return wording_text(wording, combined)
    key = _ANSWER_KEYS.get(label)
    if key is not None and label in design.response_labels:
        return wording_text(wording, key)
    return label


def state_text(label: str, wording: Mapping[str, str]) -> str:
    """What a true state is called in an instruction ("If your true answer is Yes, ...").

    >>> state_text("yes", {"answer_yes": "Yes"}), state_text("often", {})
    ('Yes', 'often')
    """
    if label in (YES, NO):
        return wording_text(wording, _ANSWER_KEYS[label])
    return label


def instruction_lines(instruction: Instruction, design: Design, wording: Mapping[str, str], *,
                      innocuous: str | None = None) -> tuple[str, ...]:
    """The sentences that tell a respondent to follow ``instruction`` for a question of
    ``design``: one sentence, or one per true state for an ``answer_table`` (Kuk's cards, a
    custom matrix), which the web page shows as separate lines. ``innocuous``: the innocuous
    question's text, for unrelated-question designs.

    >>> from surveykit.designs.warner import Kuk
    >>> kuk = Kuk(p=[0.7, 0.3])
    >>> w = {"rule_table": "If your true answer is {state}, answer {response}.",
    ...      "answer_yes": "Yes", "answer_no": "No"}
    >>> instruction_lines(kuk.protocol.for_group(0)[1], kuk, w)
    ('If your true answer is Yes, answer Yes.', 'If your true answer is No, answer No.')
    """
    kind = instruction.kind
    if kind in _SIMPLE_RULES:
        return (wording_text(wording, _SIMPLE_RULES[kind]),)
    if kind == "say":
        return (fill(wording, "rule_say", answer=answer_text(design, instruction.say, wording)),)
    if kind == "innocuous":
        if innocuous is None:
            raise ParameterError(f"design {design.model!r} tells respondents to answer an "
                                 "innocuous question; give its text (innocuous = \"...\")")
        return (fill(wording, "rule_innocuous", innocuous=innocuous),)
    if kind == "answer_table":
        return tuple(fill(wording, "rule_table", state=state_text(state, wording),
                          response=answer_text(design, response, wording))
                     for state, response in instruction.table or ())
    raise ParameterError(f"instruction kind {kind!r} has no wording")  # pragma: no cover


def instruction_text(instruction: Instruction, design: Design, wording: Mapping[str, str], *,
                     innocuous: str | None = None) -> str:
    """The text that tells a respondent to follow ``instruction`` for a question of
    ``design``: :func:`instruction_lines` as one paragraph (slips, die tables, XLSForms).

    >>> from surveykit.designs.forced import ForcedResponse
    >>> fr = ForcedResponse(p=[0.1, 0.2])
    >>> w = {"rule_say": 'Answer "{answer}", whatever the truth is.', "answer_yes": "Yes",
    ...      "answer_no": "No"}
    >>> instruction_text(fr.protocol.for_group(0)[2], fr, w)
    'Answer "Yes", whatever the truth is.'
    """
    return " ".join(instruction_lines(instruction, design, wording, innocuous=innocuous))


def answer_options(design: Design, wording: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """(label, text) of the boxes on an answer sheet: the design's answers, and "don't know"
    when the design can tell a respondent to give it.

    >>> from surveykit.designs.warner import Kuk
    >>> answer_options(Kuk(p=[0.7, 0.3], repetitions=2), {})
    (('0', '0'), ('1', '1'), ('2', '2'))
    """
    labels = list(design.answer_labels)
    if design.designed_dont_know > 0:
        labels.append(DONT_KNOW)
    return tuple((label, answer_text(design, label, wording)) for label in labels)
