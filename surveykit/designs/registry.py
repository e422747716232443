"""Every preset by name, as RRreg names them, with long aliases; parameters from text.

``make_design("sld", p=[0.1667, 0.8333], dont_know=0.2)`` builds a design
from a name and keyword parameters, with errors that name the parameter, its
value and what is allowed. :func:`parse_parameters` reads the text forms the
CLI and survey files use (``p=0.1,0.2``; ``matrix=0.8,0.3;0.2,0.7``).

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping

from surveykit.designs.base import Design, check_identifiable
from surveykit.designs.custom import Custom
from surveykit.designs.detection import (
    CheatingDetection,
    CheatingDetectionSymmetric,
    StochasticLieDetector,
)
from surveykit.designs.forced import Direct, ForcedResponse, GeneralizedRandomizedResponse, Mangat
from surveykit.designs.unrelated import (
    Crosswise,
    Triangular,
    UnrelatedQuestionKnown,
    UnrelatedQuestionUnknown,
)
from surveykit.designs.warner import GeneralizedWarner, Kuk, Warner
from surveykit.errors import ParameterError

__all__ = ["ALIASES", "EXAMPLES", "PRESETS", "design_class", "design_names", "make_design",
           "parameter_names", "parse_parameters"]

#: Presets by their RRreg name (lower case), in the order docs list them.
PRESETS: Mapping[str, type[Design]] = {
    cls.model: cls for cls in (
        Warner, GeneralizedWarner, ForcedResponse, UnrelatedQuestionKnown,
        UnrelatedQuestionUnknown, Mangat, Kuk, Crosswise, Triangular, CheatingDetection,
        CheatingDetectionSymmetric, StochasticLieDetector, GeneralizedRandomizedResponse,
        Direct, Custom)
}

#: Long names for readability -> the preset's name.
ALIASES: Mapping[str, str] = {
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

# Parameters whose value is a list (of numbers unless noted).
_LIST_PARAMETERS = {"p", "categories", "states", "responses", "groups", "matrix"}
_TEXT_LISTS = {"categories", "states", "responses", "groups"}
_WHOLE_NUMBERS = {"repetitions", "k"}


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
    key = ALIASES.get(key, key)
    if key not in PRESETS:
        raise ParameterError(
            f"unknown design {name!r}; the designs are {', '.join(PRESETS)} "
            f"(long names: {', '.join(sorted(ALIASES))})")
    return PRESETS[key]


def parameter_names(cls: type[Design]) -> list[str]:
    """The keyword parameters a preset takes, in order."""
    return [name for name in inspect.signature(cls).parameters]


def make_design(name: str, **parameters: object) -> Design:
    """Build preset ``name`` from keyword parameters, with errors that say what to fix.

    >>> make_design("fr", p=[0.1, 0.2]).describe()
    'fr (p = [0.1, 0.2], dont_know = 0)'
    >>> make_design("sld", q=0.2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    surveykit.errors.ParameterError: design 'sld' has no parameter 'q'; its parameters are p, ...
    """
    cls = design_class(name)
    allowed = parameter_names(cls)
    for key in parameters:
        if key not in allowed:
            raise ParameterError(
                f"design {cls.model!r} has no parameter {key!r}; its parameters are "
                f"{', '.join(allowed)}")
    signature = inspect.signature(cls)
    missing = [key for key, p in signature.parameters.items()
               if p.default is inspect.Parameter.empty and key not in parameters]
    if missing:
        raise ParameterError(
            f"design {cls.model!r} needs {', '.join(missing)}"
            f" ({_hint(cls)})")
    values = {key: tuple(v) if isinstance(v, list) and key != "matrix" else v
              for key, v in parameters.items()}
    design = cls(**values)
    # a design whose answers identify nothing (p = 0.1 and q = 0.09999999999999999) is
    # refused here, naming its parameters, and not by the first command that estimates
    check_identifiable(design)
    return design


#: A typical parameter set per preset, spelled as ``--param KEY=VALUE`` takes it (text).
EXAMPLES: Mapping[str, Mapping[str, str]] = {
    "warner": {"p": "0.7"}, "generalized_warner": {"p": "0.6", "q": "0.2"},
    "fr": {"p": "0.1,0.2"}, "uqtknown": {"p": "0.7,0.0833"}, "uqtunknown": {"p": "0.8,0.3"},
    "mangat": {"p": "0.7"}, "kuk": {"p": "0.7,0.3", "repetitions": "3"},
    "crosswise": {"p": "0.25"}, "triangular": {"p": "0.25"}, "cdm": {"p": "0.3,0.7"},
    "cdmsym": {"p": "0.2,0.1,0.1,0.2"}, "sld": {"p": "0.1667,0.8333"},
    "grr": {"epsilon": "1", "categories": "a,b,c"}, "direct": {},
    "custom": {"matrix": "0.8,0.3;0.2,0.7"},
}
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
    """
    cls = design_class(name)
    allowed = parameter_names(cls)
    out: dict[str, object] = {}
    for key, text in texts.items():
        key = key.strip()
        if key not in allowed:
            raise ParameterError(
                f"design {cls.model!r} has no parameter {key!r}; its parameters are "
                f"{', '.join(allowed)}")
        out[key] = _parse_value(key, str(text))
    return out


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
