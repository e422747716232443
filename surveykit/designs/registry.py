"""Every preset by name, as RRreg names them, with long aliases; parameters from text.

``make_design("sld", p=[0.1667, 0.8333], dont_know=0.2)`` builds a design
from a name and keyword parameters, with errors that name the parameter, its
value and what is allowed. :func:`parse_parameters` reads the text forms the
CLI and survey files use (``p=0.1,0.2``; ``matrix=0.8,0.3;0.2,0.7``).

Designs for numeric answers (:mod:`surveykit.designs.quantitative`: RRTCS's
and RRreg's ``eriksson``, ``mix_norm``, ...) are found by :func:`make_design`
too; :func:`design_class`, which the yes/no and categorical commands use,
names them and says they are for numeric questions.

A new design is a :class:`~surveykit.designs.base.Design` subclass that
answers what the rest of surveykit asks a design (its matrix and protocol in
``_build``; the class facts ``asks_innocuous``, ``combined_wording``,
``population_parameters``, ``budget_family``, ...), added here with
:func:`register_design`: survey files, estimation, questionnaires, dice,
XLSForm, the web page, planning and reports then take it by its name, with no
other file touched.

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping, Sequence
from functools import cache
from types import MappingProxyType

from surveykit.designs.base import Design, check_identifiable
from surveykit.designs.custom import Custom
from surveykit.designs.detection import (
    CheatingDetection,
    CheatingDetectionSymmetric,
    StochasticLieDetector,
)
from surveykit.designs.forced import Direct, ForcedResponse, GeneralizedRandomizedResponse, Mangat
from surveykit.designs.quantitative import QUANTITATIVE_PRESETS, QuantitativeDesign
from surveykit.designs.unrelated import (
    Crosswise,
    Triangular,
    UnrelatedQuestionKnown,
    UnrelatedQuestionUnknown,
)
from surveykit.designs.warner import GeneralizedWarner, Kuk, Warner
from surveykit.errors import ParameterError

__all__ = ["ALIASES", "EXAMPLES", "PRESETS", "QUANTITATIVE_ALIASES", "QUANTITATIVE_PRESETS",
           "RR_NAMES", "accepted_parameters", "design_class", "design_names", "is_quantitative",
           "make_design", "parameter_names", "parse_parameters", "quantitative_design_class",
           "register_design", "unregister_design"]

#: Presets by their RRreg name (lower case), in the order docs list them (then the ones
#: :func:`register_design` added).
_PRESETS: dict[str, type[Design]] = {
    cls.model: cls for cls in (
        Warner, GeneralizedWarner, ForcedResponse, UnrelatedQuestionKnown,
        UnrelatedQuestionUnknown, Mangat, Kuk, Crosswise, Triangular, CheatingDetection,
        CheatingDetectionSymmetric, StochasticLieDetector, GeneralizedRandomizedResponse,
        Direct, Custom)
}
PRESETS: Mapping[str, type[Design]] = MappingProxyType(_PRESETS)

#: Long names for readability -> the preset's name.
_ALIASES: dict[str, str] = {
    "forced_response": "fr",
    "unrelated_question": "uqtknown",
    "unrelated_question_known": "uqtknown",
    "unrelated_question_unknown": "uqtunknown",
    "stochastic_lie_detector": "sld",
    "cheating_detection": "cdm",
    "cheater_detection": "cdm",
    "cheating_detection_symmetric": "cdmsym",
    "cheater_detection_symmetric": "cdmsym",
    "generalized_randomized_response": "grr",
    "k_rr": "grr",
    "krr": "grr",
    "direct_question": "direct",
    "gw": "generalized_warner",
}
ALIASES: Mapping[str, str] = MappingProxyType(_ALIASES)

#: The design names of R's rr package (Blair, Imai and Zhou 2015; ``rrreg``, ``power.rr.test``)
#: -> the preset. rr's parameters are accepted under these names and translated
#: (:func:`make_design`): ``mirrored`` is Warner's design (p: the sensitive statement);
#: ``forced-known`` takes p (truthful), p0 (forced no) and p1 (forced yes), fr's p = [p0, p1];
#: ``disguised`` is Kuk's with one card, p red in the "yes" deck and 1 - p in the "no" deck;
#: ``unrelated-known`` takes p (the sensitive question) and q (yes to the unrelated one),
#: uqtknown's p = [p, q]. The presets' own parameters work under these names too.
RR_NAMES: Mapping[str, str] = {
    "mirrored": "warner",
    "forced_known": "fr",
    "disguised": "kuk",
    "unrelated_known": "uqtknown",
}
# rr's parameter names, per rr name (besides the preset's own).
_RR_PARAMETERS = {"forced_known": ("p0", "p1"), "unrelated_known": ("q",)}
# rr's p + p0 + p1 = 1 is checked up to this: 0.6667 + 0.1667 + 0.1667 is 2/3 + 1/6 + 1/6.
_RR_SUM_SLACK = 5e-4

#: Other spellings of the numeric-answer designs (RRreg's and RRTCS's own) -> the preset's name.
QUANTITATIVE_ALIASES: Mapping[str, str] = {
    "mix.norm": "mix_norm", "mix.exp": "mix_exp", "mix.unknown": "mix_unknown",
    "eichhornhayre": "eichhorn_hayre", "barlev": "bar_lev",
    "chaudhurichristofides": "chaudhuri_christofides", "dianaperri1": "diana_perri_1",
    "dianaperri2": "diana_perri_2", "additive_scrambling": "additive",
}

# Parameters whose value is a list (of numbers unless noted).
_LIST_PARAMETERS = {"p", "categories", "states", "responses", "groups", "matrix"}
_TEXT_LISTS = {"categories", "states", "responses", "groups"}
_WHOLE_NUMBERS = {"repetitions", "k"}


_MODEL_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}\Z")
# What register_design added: model -> (aliases, whether it added an example).
_REGISTERED: dict[str, tuple[tuple[str, ...], bool]] = {}


def register_design(cls: type[Design], *, aliases: Sequence[str] = (),
                    example: Mapping[str, str] | None = None) -> type[Design]:
    """Make the design class ``cls`` a preset, found by its ``model`` name (and ``aliases``)
    wherever surveykit takes a design name: survey files, ``estimate``, ``design``,
    questionnaires, XLSForm, the web page and reports. ``example`` is a typical parameter
    set as ``--param KEY=VALUE`` takes it (text), shown in help and error hints.

    Returns ``cls``, so it works as a class decorator. Registering the same class again
    changes nothing; another class under a name in use is refused.

    >>> from dataclasses import dataclass
    >>> from surveykit.designs.forced import Mangat
    >>> @dataclass(frozen=True, kw_only=True)
    ... class Timid(Mangat):
    ...     model = "timid"
    >>> _ = register_design(Timid, aliases=["timid_mangat"], example={"p": "0.6"})
    >>> make_design("timid-mangat", p=0.6).describe()
    'timid (p = 0.6, dont_know = 0)'
    >>> unregister_design("timid")
    """
    if not (isinstance(cls, type) and issubclass(cls, Design)) or cls is Design:
        raise ParameterError(f"register_design takes a subclass of Design, not {cls!r}")
    model = cls.__dict__.get("model")
    if not isinstance(model, str) or not _MODEL_NAME.match(model):
        raise ParameterError(
            f"design class {cls.__name__} needs its own model name: a class attribute model "
            f"= \"name\" of lower-case letters, digits and _ (got {model!r})")
    if PRESETS.get(model) is cls:
        return cls
    names = [_normal(alias) for alias in aliases]
    for name in (model, *names):
        if name in PRESETS or name in ALIASES or name in RR_NAMES or \
                _quantitative_key(name) is not None:
            raise ParameterError(f"design name {name!r} is taken; choose another name for "
                                 f"{cls.__name__}")
    _PRESETS[model] = cls
    for name in names:
        _ALIASES[name] = model
    if example is not None:
        _EXAMPLES[model] = dict(example)
    _REGISTERED[model] = (tuple(names), example is not None)
    if example is not None:
        try:
            make_design(model, **parse_parameters(model, example))
        except ParameterError as exc:
            unregister_design(model)
            raise ParameterError(f"the example of design {model!r} is not a design: {exc}"
                                 ) from None
    return cls


def unregister_design(name: str) -> None:
    """Remove a design :func:`register_design` added (the built-in presets stay)."""
    model = _normal(name)
    if model not in _REGISTERED:
        raise ParameterError(f"design {name!r} was not added with register_design")
    aliases, example = _REGISTERED.pop(model)
    del _PRESETS[model]
    for alias in aliases:
        del _ALIASES[alias]
    if example:
        del _EXAMPLES[model]


def _normal(name: str) -> str:
    return "_".join(str(name).strip().casefold().replace("-", " ").split())


def design_names() -> list[str]:
    """The presets' names, in documentation order."""
    return list(PRESETS)


def design_class(name: str) -> type[Design]:
    """The preset class for ``name`` (RRreg's name in any case, or a long alias).

    >>> design_class("SLD").__name__, design_class("forced-response").__name__
    ('StochasticLieDetector', 'ForcedResponse')
    """
    key = _normal(name)
    key = ALIASES.get(key, RR_NAMES.get(key, key))
    quantitative = _quantitative_key(name)
    if quantitative is not None:
        raise ParameterError(
            f"design {quantitative!r} is for numeric answers (type = \"number\" questions), "
            f"not yes/no or categorical ones; the designs here are {', '.join(PRESETS)}")
    if key not in PRESETS:
        raise ParameterError(
            f"unknown design {name!r}; the designs are {', '.join(PRESETS)} "
            f"(long names: {', '.join(sorted(ALIASES))})")
    return PRESETS[key]


def is_quantitative(name: str) -> bool:
    """Whether ``name`` (any spelling the registry takes) is a design for numeric answers.

    >>> is_quantitative("mix.norm"), is_quantitative("Eriksson"), is_quantitative("sld")
    (True, True, False)
    """
    return _quantitative_key(name) is not None


def _quantitative_key(name: str) -> str | None:
    key = _normal(name)
    key = QUANTITATIVE_ALIASES.get(key, key)
    return key if key in QUANTITATIVE_PRESETS else None


def quantitative_design_class(name: str) -> type[QuantitativeDesign]:
    """The numeric-answer preset for ``name`` (RRTCS's or RRreg's name in lower snake case,
    or their own spelling).

    >>> quantitative_design_class("mix.norm").__name__, quantitative_design_class("BarLev").model
    ('MixNorm', 'bar_lev')
    """
    key = _quantitative_key(name)
    if key is None:
        raise ParameterError(
            f"unknown numeric-answer design {name!r}; the designs are "
            f"{', '.join(QUANTITATIVE_PRESETS)}")
    return QUANTITATIVE_PRESETS[key]


def parameter_names(cls: type[Design] | type[QuantitativeDesign]) -> list[str]:
    """The keyword parameters a preset takes, in order (a new list: callers may change it).

    >>> parameter_names(design_class("sld"))
    ['p', 'dont_know', 'groups']
    """
    return list(_signature(cls).parameters)


@cache
def _signature(cls: type[Design] | type[QuantitativeDesign]) -> inspect.Signature:
    # a class's signature does not change, and inspect builds it afresh each time (an eighth
    # of make_design, which planning calls hundreds of times per budget)
    return inspect.signature(cls)


def accepted_parameters(name: str) -> list[str]:
    """The parameters design ``name`` takes: its preset's, and rr's under rr's names.

    >>> accepted_parameters("forced-known")
    ['p', 'categories', 'dont_know', 'p0', 'p1']
    """
    cls = quantitative_design_class(name) if _quantitative_key(name) else design_class(name)
    return parameter_names(cls) + list(_RR_PARAMETERS.get(_normal(name), ()))


def make_design(name: str, **parameters: object) -> Design | QuantitativeDesign:
    """Build preset ``name`` from keyword parameters, with errors that say what to fix.

    >>> make_design("fr", p=[0.1, 0.2]).describe()
    'fr (p = [0.1, 0.2], dont_know = 0)'
    >>> make_design("sld", q=0.2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    surveykit.errors.ParameterError: design 'sld' has no parameter 'q'; its parameters are p, ...
    >>> make_design("eriksson", p=0.5, scrambler=[0, 1, 3, 5, 8]).describe()
    'eriksson (p = 0.5, mu = 3.4, sigma = 2.87054, scrambler = [0, 1, 3, 5, 8], dont_know = 0)'
    """
    cls: type[Design] | type[QuantitativeDesign]
    cls = quantitative_design_class(name) if _quantitative_key(name) else design_class(name)
    parameters = _from_rr(name, dict(parameters))
    allowed = parameter_names(cls)
    for key in parameters:
        if key not in allowed:
            raise ParameterError(
                f"design {cls.model!r} has no parameter {key!r}; its parameters are "
                f"{', '.join(allowed)}")
    signature = _signature(cls)
    missing = [key for key, p in signature.parameters.items()
               if p.default is inspect.Parameter.empty and key not in parameters]
    if missing:
        raise ParameterError(
            f"design {cls.model!r} needs {', '.join(missing)}"
            f" ({_hint(cls)})")
    values = {key: _frozen(v) if key != "matrix" else v for key, v in parameters.items()}
    design = cls(**values)
    # a design whose answers identify nothing (p = 0.1 and q = 0.09999999999999999) is
    # refused here, naming its parameters, and not by the first command that estimates
    if isinstance(design, Design):
        check_identifiable(design)
    return design


def _frozen(value: object) -> object:
    """Lists (also nested: a pair of decks) as tuples, so designs stay hashable."""
    return tuple(_frozen(v) for v in value) if isinstance(value, list) else value


#: A typical parameter set per preset, spelled as ``--param KEY=VALUE`` takes it (text).
_EXAMPLES: dict[str, Mapping[str, str]] = {
    "warner": {"p": "0.7"}, "generalized_warner": {"p": "0.6", "q": "0.2"},
    "fr": {"p": "0.1,0.2"}, "uqtknown": {"p": "0.7,0.0833"}, "uqtunknown": {"p": "0.8,0.3"},
    "mangat": {"p": "0.7"}, "kuk": {"p": "0.7,0.3", "repetitions": "3"},
    "crosswise": {"p": "0.25"}, "triangular": {"p": "0.25"}, "cdm": {"p": "0.3,0.7"},
    "cdmsym": {"p": "0.2,0.1,0.1,0.2"}, "sld": {"p": "0.1667,0.8333"},
    "grr": {"epsilon": "1", "categories": "a,b,c"}, "direct": {},
    "custom": {"matrix": "0.8,0.3;0.2,0.7"},
}
EXAMPLES: Mapping[str, Mapping[str, str]] = MappingProxyType(_EXAMPLES)
_NOTES = {"fr": ": forced no, forced yes"}


def _hint(cls: type[Design]) -> str:
    example = EXAMPLES.get(cls.model)
    if not example:
        return "no parameters needed" if example is not None else "see 'surveykit estimate --help'"
    return ("e.g. " + " and ".join(f"{key}={value}" for key, value in example.items())
            + _NOTES.get(cls.model, ""))


def parse_parameters(name: str, texts: Mapping[str, str]) -> dict[str, object]:
    """Typed parameters from ``KEY=VALUE`` texts, as the CLI takes them.

    Lists are comma-separated; a matrix has rows separated by ``;`` and group
    matrices separated by ``|``.

    >>> parse_parameters("sld", {"p": "0.1667,0.8333", "dont_know": "0.2"})
    {'p': [0.1667, 0.8333], 'dont_know': 0.2}

    A numeric-answer design's ``scrambler`` is a kind (``uniform``), a deck's
    cards (``0,1,3,5,8``), or one of those per scrambler separated by ``|``:

    >>> parse_parameters("saha", {"mu": "1.5,5.5", "scrambler": "uniform|1,2,3"})
    {'mu': [1.5, 5.5], 'scrambler': ['uniform', [1.0, 2.0, 3.0]]}
    """
    quantitative = _quantitative_key(name) is not None
    cls: type[Design] | type[QuantitativeDesign]
    cls = quantitative_design_class(name) if quantitative else design_class(name)
    allowed = accepted_parameters(name)
    out: dict[str, object] = {}
    for key, text in texts.items():
        key = key.strip()
        if key not in allowed:
            raise ParameterError(
                f"design {cls.model!r} has no parameter {key!r}; its parameters are "
                f"{', '.join(allowed)}")
        if quantitative and key == "scrambler":
            parts = [_scrambler_text(part) for part in str(text).split("|")]
            out[key] = parts if len(parts) > 1 else parts[0]
        elif quantitative and key in ("mu", "sigma"):
            items = [_number(key, item) for item in str(text).split(",")]
            out[key] = items if len(items) > 1 else items[0]
        else:
            out[key] = _parse_value(key, str(text))
    return out


def _from_rr(name: str, parameters: dict[str, object]) -> dict[str, object]:
    """rr's parameters (given under one of rr's design names) as the preset's.

    >>> _from_rr("forced-known", {"p": 2 / 3, "p0": 1 / 6, "p1": 1 / 6})
    {'p': [0.16666666666666666, 0.16666666666666666]}
    >>> _from_rr("disguised", {"p": 0.75})
    {'p': [0.75, 0.25]}
    """
    key = _normal(name)
    if key == "forced_known" and ("p0" in parameters or "p1" in parameters):
        if "p0" not in parameters or "p1" not in parameters:
            raise ParameterError(
                "design 'forced-known' (rr's name): give both p0 (forced no) and p1 (forced "
                "yes), e.g. p=0.6667 p0=0.1667 p1=0.1667")
        p0, p1 = parameters.pop("p0"), parameters.pop("p1")
        truthful = parameters.pop("p", None)
        if truthful is not None:
            if isinstance(truthful, list | tuple) or not isinstance(
                    truthful, int | float) or abs(truthful + p0 + p1 - 1) > _RR_SUM_SLACK:
                raise ParameterError(
                    f"design 'forced-known' (rr's name): p ({truthful!r}, answer truthfully), "
                    f"p0 ({p0:g}) and p1 ({p1:g}) must add up to 1")
        parameters["p"] = [p0, p1]
    elif key == "forced_known" and isinstance(parameters.get("p"), int | float):
        raise ParameterError(
            f"design 'forced-known' (rr's name): p ({parameters['p']!r}) is the probability of "
            "answering truthfully; give p0 (forced no) and p1 (forced yes) too, e.g. p=0.6667 "
            "p0=0.1667 p1=0.1667 (or fr's own p=0.1667,0.1667: forced no, forced yes)")
    elif key == "disguised" and isinstance(parameters.get("p"), int | float):
        p = parameters["p"]
        if not isinstance(p, bool) and 0 <= p <= 1:
            parameters["p"] = [p, 1 - p]
    elif key == "unrelated_known" and "q" in parameters:
        q = parameters.pop("q")
        p = parameters.pop("p", None)
        if not isinstance(p, int | float) or isinstance(p, bool):
            raise ParameterError(
                f"design 'unrelated-known' (rr's name): q ({q!r}) goes with p, the probability "
                "of answering the sensitive question, e.g. p=0.7 q=0.3")
        parameters["p"] = [p, q]
    return parameters


def _scrambler_text(text: str) -> object:
    """A kind ("uniform") or a deck's cards ("0,1,3")."""
    items = [item.strip() for item in text.split(",")]
    try:
        return [float(item) for item in items]
    except ValueError:
        if len(items) == 1:
            return items[0]
        raise ParameterError(
            f"scrambler ({text.strip()!r}) must be a kind (normal, uniform, laplace, "
            "exponential, die, dice) or a deck's card values separated by commas") from None


def _parse_value(key: str, text: str) -> object:
    text = text.strip()
    if key == "matrix":
        groups = [[[_number(key, cell) for cell in row.split(",")]
                   for row in group.split(";") if row.strip()]
                  for group in text.split("|")]
        return groups[0] if len(groups) == 1 else groups
    if key in _TEXT_LISTS:
        return [item.strip() for item in text.split(",")]
    if key in _LIST_PARAMETERS:
        items = [_number(key, item) for item in text.split(",")]
        return items if len(items) > 1 else items[0]
    if key in _WHOLE_NUMBERS:
        try:
            return int(text)
        except ValueError:
            raise ParameterError(f"{key} ({text!r}) must be a whole number") from None
    return _number(key, text)


def _number(key: str, text: str) -> float:
    try:
        return float(text.strip())
    except ValueError:
        raise ParameterError(f"{key} ({text.strip()!r}) must be a number") from None
