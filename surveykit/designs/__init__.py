"""Randomized-response designs: what respondents are told and P(response | true state, group).

The design is surveykit's one currency: estimation, privacy accounting, the
randomizer, questionnaires, survey files and the store all take a
:class:`~surveykit.designs.base.Design`. Presets are named as in R's RRreg
(:data:`~surveykit.designs.registry.PRESETS`); :func:`make_design` builds one
by name. Numeric questions have their own kind of design,
:class:`~surveykit.designs.quantitative.QuantitativeDesign` (RRTCS's and RRreg's
scrambled and mixture designs, :data:`QUANTITATIVE_PRESETS`), which
:func:`make_design` builds too.

>>> make_design("sld", p=[0.1667, 0.8333], dont_know=0.2).group_names
('1', '2')
"""

from surveykit.designs.base import (
    DONT_KNOW,
    NO,
    YES,
    Design,
    Instruction,
    NuisanceParameter,
    Protocol,
    as_fraction,
)
from surveykit.designs.custom import Custom
from surveykit.designs.detection import (
    CheatingDetection,
    CheatingDetectionSymmetric,
    StochasticLieDetector,
)
from surveykit.designs.forced import Direct, ForcedResponse, GeneralizedRandomizedResponse, Mangat
from surveykit.designs.quantitative import QUANTITATIVE_PRESETS, QuantitativeDesign
from surveykit.designs.registry import (
    ALIASES,
    PRESETS,
    design_class,
    design_names,
    make_design,
    parse_parameters,
    register_design,
    unregister_design,
)
from surveykit.designs.unrelated import (
    Crosswise,
    Triangular,
    UnrelatedQuestionKnown,
    UnrelatedQuestionUnknown,
)
from surveykit.designs.warner import GeneralizedWarner, Kuk, Warner

__all__ = [
    "ALIASES",
    "DONT_KNOW",
    "NO",
    "PRESETS",
    "QUANTITATIVE_PRESETS",
    "YES",
    "CheatingDetection",
    "CheatingDetectionSymmetric",
    "Crosswise",
    "Custom",
    "Design",
    "Direct",
    "ForcedResponse",
    "GeneralizedRandomizedResponse",
    "GeneralizedWarner",
    "Instruction",
    "Kuk",
    "Mangat",
    "NuisanceParameter",
    "Protocol",
    "QuantitativeDesign",
    "StochasticLieDetector",
    "Triangular",
    "UnrelatedQuestionKnown",
    "UnrelatedQuestionUnknown",
    "Warner",
    "as_fraction",
    "design_class",
    "design_names",
    "make_design",
    "parse_parameters",
    "register_design",
    "unregister_design",
]
