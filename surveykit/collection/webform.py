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

Numeric questions (``type = "number"``, issue 23) carry, per group, the steps
of their design (:attr:`surveykit.designs.quantitative.QuantitativeDesign.protocol`)
as rules with the same integer thresholds, and the scrambling variables the
page draws for them (:class:`WebScrambler`): a deck's cards or the totals of
dice with exact thresholds of their own, or a continuous distribution drawn
by inversion from a uniform on the same 2^53 grid. Each rule says how the
browser turns the draws into the two numbers the respondent is shown: the
answer is W (c y + k U) + V, so the respondent multiplies the true value by
``factor`` = W c and adds ``offset`` = W k U + V (``web_number_*`` wording;
see docs/web-collection.md for the rounding of continuous draws). The
respondent types the result; only that number leaves the browser.

Nothing here does I/O: the caller passes the default wording
(:func:`surveykit.collection.render.load_wording_defaults`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from surveykit.collection.instructions import (
    PLACEHOLDERS,
    fill,
    instruction_lines,
    wording_text,
)
from surveykit.collection.questionnaire import build_layout, merge_wording
from surveykit.collection.randomizer import (
    GRID_BITS,
    instruction_thresholds,
    probability_thresholds,
)
from surveykit.designs.base import DONT_KNOW
from surveykit.designs.quantitative import Step
from surveykit.designs.quantitative_privacy import answer_bounds
from surveykit.designs.scramblers import Deck, Exponential, Laplace, Normal, Uniform, Unknown
from surveykit.errors import ParameterError
from surveykit.vocabulary import decimal_text

__all__ = [
    "WebForm",
    "WebNumber",
    "WebNumberRule",
    "WebQuestion",
    "WebRule",
    "WebScrambler",
    "build_web_form",
    "shown_decimals",
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
class WebNumberRule:
    """One step of a numeric design as the page draws it: drawn when the uniform integer is
    below ``below``; the answer is W (c y + k U) + V with W = ``multiplier``, U = ``inner``,
    V = ``offset`` (scrambler names, None when absent), c = ``coefficient`` and k =
    ``inner_coefficient``. ``lines`` are texts whose ``{factor}`` (W c), ``{offset}``
    (W k U + V) and ``{value}`` (the same, for a step that ignores the true value) the page
    fills, shown with ``factor_decimals`` and ``offset_decimals`` decimals; literal braces
    are doubled."""

    below: int
    kind: str
    lines: tuple[str, ...]
    coefficient: float = 0.0
    inner_coefficient: float = 1.0
    multiplier: str | None = None
    inner: str | None = None
    offset: str | None = None
    factor_decimals: int = 0
    offset_decimals: int = 0

    def to_dict(self) -> dict[str, object]:
        return {"below": self.below, "kind": self.kind, "lines": list(self.lines),
                "coefficient": self.coefficient, "inner_coefficient": self.inner_coefficient,
                "multiplier": self.multiplier, "inner": self.inner, "offset": self.offset,
                "factor_decimals": self.factor_decimals,
                "offset_decimals": self.offset_decimals}


@dataclass(frozen=True)
class WebScrambler:
    """A scrambling variable as the page draws it, rounded to ``decimals`` decimals.

    ``kind`` "deck" (cards or dice): ``values`` with exact thresholds ``below`` (value i
    when the uniform integer lies in [below[i-1], below[i])); "uniform" (``low``,
    ``high``), "normal" (``mu``, ``sigma``), "exponential" (``mu``), "laplace" (``mu``,
    ``scale``) in ``parameters``, drawn by inversion; "unknown": not drawn (the
    respondent answers an unrelated question).
    """

    kind: str
    decimals: int
    values: tuple[float, ...] = ()
    below: tuple[int, ...] = ()
    parameters: Mapping[str, float] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "decimals": self.decimals, "values": list(self.values),
                "below": list(self.below), "parameters": dict(self.parameters)}


@dataclass(frozen=True)
class WebNumber:
    """What the page needs to take a number: the ``unit`` shown beside the field, the most
    ``decimals`` (None: any), the input's ``step``, ``low``/``high``, the answers the
    design can give for the question's range as the server checks them (None: unbounded),
    and ``range_problem``, what the page says of a number outside them."""

    unit: str | None
    decimals: int | None
    step: str
    low: float | None
    high: float | None
    range_problem: str
    scramblers: Mapping[str, WebScrambler]

    def to_dict(self) -> dict[str, object]:
        return {"unit": self.unit, "decimals": self.decimals, "step": self.step,
                "low": self.low, "high": self.high, "range_problem": self.range_problem,
                "scramblers": {name: s.to_dict() for name, s in self.scramblers.items()}}


@dataclass(frozen=True)
class WebQuestion:
    """A question as the page asks it.

    ``rules`` holds, per group of the question's design, the rules with their
    thresholds (:class:`WebNumberRule` for a numeric question, whose
    ``number_answer`` says how the number is typed and which scramblers are drawn;
    its only answer button is "don't know", when the design has that branch);
    ``answers`` pairs each response label with its button text (the
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
    rules: tuple[tuple[WebRule | WebNumberRule, ...], ...]
    innocuous_label: str
    prompt: str = ""
    number_answer: WebNumber | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id, "number": self.number, "progress": self.progress, "text": self.text,
            "type": "number" if self.number_answer is not None else "choice",
            "number_answer": (self.number_answer.to_dict() if self.number_answer is not None
                              else None),
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
    # numeric questions are laid out here (the paper layout knows only choice questions)
    choices = tuple(question for question in survey.questions if not question.numeric)
    layout = build_layout(dataclasses.replace(survey, questions=choices), mode="slips",
                          wording_defaults=wording_defaults)
    views = {view.id: view for view in layout.questions}
    questions = []
    total = len(survey.questions)
    for number, question in enumerate(survey.questions, start=1):
        if question.numeric:
            questions.append(_number_question(number, total, question, layout.wording))
            continue
        view = views[question.id]
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
            id=view.id, number=number,
            progress=fill(view.wording, "web_progress", number=number, total=total),
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


# Decimals shown for a number that has no finite decimal expansion (1/3), or a draw whose
# rounding would otherwise need more.
_MAX_SHOWN = 6


def _fraction_decimals(value: Fraction) -> int:
    """Decimals of ``value`` written out exactly (at most :data:`_MAX_SHOWN`)."""
    for decimals in range(_MAX_SHOWN + 1):
        if (value * 10 ** decimals).denominator == 1:
            return decimals
    return _MAX_SHOWN


def _step(decimals: int) -> str:
    """One unit of the last of ``decimals`` decimals: "1", "0.1", "0.01", ..."""
    return f"{10.0 ** -decimals:.{decimals}f}"


def shown_decimals(scrambler) -> int:
    """The decimals the page shows a draw of ``scrambler`` with: a deck's cards exactly; a
    continuous draw rounded to a step of at most 1/100 of its sd (from 0 to 6 decimals), which
    adds at most (sd/100)^2 / 12 to its variance, a relative 1e-5.

    >>> from surveykit.designs.scramblers import Deck, Normal, Uniform
    >>> shown_decimals(Deck.from_cards([0, 2.5, 10])), shown_decimals(Normal(mu=40, sigma=15))
    (1, 1)
    >>> shown_decimals(Uniform(low=1, high=2))   # sd 0.289: steps of 0.001
    3
    """
    if isinstance(scrambler, Deck):
        return max(_fraction_decimals(value) for value in scrambler.values)
    return min(_MAX_SHOWN, max(0, math.ceil(math.log10(100 / scrambler.sd))))


def _web_scrambler(name: str, scrambler, where: str) -> WebScrambler:
    """The page's view of one scrambler; ParameterError for one the page cannot draw."""
    if isinstance(scrambler, Unknown):
        return WebScrambler(kind="unknown", decimals=0)
    if isinstance(scrambler, Deck):
        points = scrambler.points()
        return WebScrambler(kind="deck", decimals=shown_decimals(scrambler),
                            values=tuple(float(value) for value, _ in points),
                            below=probability_thresholds([p for _, p in points]))
    if isinstance(scrambler, Uniform):
        parameters = {"low": scrambler.low, "high": scrambler.high}
    elif isinstance(scrambler, Normal):
        parameters = {"mu": scrambler.mu, "sigma": scrambler.sigma}
    elif isinstance(scrambler, Exponential):
        parameters = {"mu": scrambler.mu}
    elif isinstance(scrambler, Laplace):
        parameters = {"mu": scrambler.mu, "scale": scrambler.scale}
    else:
        raise ParameterError(
            f"{where}: the web page cannot draw scrambler {name}, {scrambler.describe()}: give "
            "its distribution in the survey file (scrambler = \"uniform\", \"normal\", "
            "\"laplace\", \"exponential\", \"die\", \"dice\" or a list of card values)")
    return WebScrambler(kind=scrambler.kind, decimals=shown_decimals(scrambler),
                        parameters=parameters)


def _number_rule(step: Step, below: int, scramblers: Mapping[str, WebScrambler],
                 wording: Mapping[str, str], decimals: int | None) -> WebNumberRule:
    """How the page shows ``step`` (see :class:`WebNumberRule`)."""
    def braces(text: str) -> str:  # a finished text, as a template the page fills
        return text.replace("{", "{{").replace("}", "}}")

    if step.kind == "dont_know":
        return WebNumberRule(below=below, kind=step.kind,
                             lines=(braces(wording_text(wording, "rule_dont_know")),))
    if step.offset and scramblers[step.offset].kind == "unknown":
        return WebNumberRule(below=below, kind="unrelated",
                             lines=(braces(wording_text(wording, "web_number_unrelated")),))

    def shown(name: str | None) -> int:
        return scramblers[name].decimals if name else 0

    c, k = Fraction(step.coefficient), Fraction(step.inner_coefficient)
    factor_decimals = shown(step.multiplier) + _fraction_decimals(c)
    offset_decimals = max(shown(step.multiplier) + _fraction_decimals(k) + shown(step.inner)
                          if step.inner else 0, shown(step.offset))
    has_factor = step.multiplier is not None or c != 1
    has_offset = step.inner is not None or step.offset is not None
    if c == 0:
        key = "web_number_draw"
    elif not has_factor and not has_offset:
        key = "web_number_truthful"
    elif has_factor and has_offset:
        key = "web_number_linear"
    else:
        key = "web_number_multiply" if has_factor else "web_number_add"
    # the texts with placeholders stay templates; the others become templates here
    lines = [wording_text(wording, key) if key in PLACEHOLDERS
             else braces(wording_text(wording, key))]
    if c == 0:
        if decimals is not None:
            if step.multiplier is None and step.inner is None and step.offset \
                    and scramblers[step.offset].kind == "deck" \
                    and scramblers[step.offset].decimals > decimals:
                raise ParameterError(
                    f"scrambler {step.offset} has cards with {scramblers[step.offset].decimals} "
                    f"decimals, more than the question's decimals = {decimals} allow: a "
                    "respondent told to type a card could not; raise decimals or change the "
                    "cards")
            # the number typed is the draw itself, so it is shown as it is typed
            offset_decimals = min(offset_decimals, decimals)
    elif key != "web_number_truthful" and decimals is not None:
        lines.append(braces(wording_text(wording, "web_number_round_whole")) if decimals == 0
                     else braces(fill(wording, "web_number_round", step=_step(decimals))))
    return WebNumberRule(
        below=below, kind=step.kind, lines=tuple(lines), coefficient=float(c),
        inner_coefficient=float(k), multiplier=step.multiplier, inner=step.inner,
        offset=step.offset, factor_decimals=min(factor_decimals, 12),
        offset_decimals=min(offset_decimals, 12))


def _number_question(number: int, total: int, question, survey_wording: Mapping[str, str]
                     ) -> WebQuestion:
    """A numeric question as the page asks it (module docstring)."""
    where = f"question {question.id!r}"
    wording = merge_wording(survey_wording, (f"{where} wording", question.wording))
    design = question.design
    used = {name for steps in design.protocol.groups for step in steps
            for name in step.scrambler_names}
    scramblers = {name: _web_scrambler(name, scrambler, where)
                  for name, scrambler in design.scramblers.items() if name in used}
    try:
        rules = tuple(
            tuple(_number_rule(step, below, scramblers, wording, question.decimals)
                  for step, below in zip(steps, instruction_thresholds(steps), strict=True))
            for steps in design.protocol.groups)
    except ParameterError as exc:
        raise ParameterError(f"{where}: {exc}") from None
    low = high = None
    range_problem = ""
    if question.range is not None:
        bounds = answer_bounds(design, *question.range, decimals=question.decimals)
        low, high = (None if math.isinf(v) else v for v in bounds)
        # said without the half unit a rounded answer may exceed them by; an unbounded
        # side (a normal or exponential scrambler) is no limit: the page checks only a
        # finite one, and says nothing when neither is
        shown = [("-∞" if v < 0 else "∞") if math.isinf(v) else decimal_text(Decimal(repr(v)))
                 for v in answer_bounds(design, *question.range)]
        if low is not None or high is not None:
            range_problem = fill(wording, "web_number_range", low=shown[0], high=shown[1])
    decimals = question.decimals
    answers = ((DONT_KNOW, wording_text(wording, "answer_dont_know")),) \
        if design.designed_dont_know > 0 else ()
    return WebQuestion(
        id=question.id, number=number,
        progress=fill(wording, "web_progress", number=number, total=total),
        text=question.text, innocuous=None, reminder=wording.get("reminder", ""),
        innocuous_label=wording["innocuous_label"], answers=answers, rules=rules,
        number_answer=WebNumber(
            unit=question.unit, decimals=decimals,
            step="any" if decimals is None else _step(decimals),
            low=low, high=high, range_problem=range_problem, scramblers=scramblers))
