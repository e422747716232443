"""What a randomized-response design is: a matrix P(response | true state, group) and a protocol.

Every design in surveykit, from Warner's (1965) to the stochastic lie detector,
is described by the same few things (RRreg's "misclassification matrix",
Heck and Moshagen 2018, J. Stat. Softw. 85(2), with a third axis for groups):

* ``states``: the true states a respondent can be in. Binary designs have
  ``("yes", "no")``; k-category designs their categories; detection designs
  add behavioural states (the cheating detection model's ``"cheater"``).
* ``responses``: the labels a respondent can give, always ending with
  ``"dont_know"``: the paper's "don't know" branch. With probability
  ``dont_know`` a respondent is told to answer "don't know" whatever the truth;
  the other answers then follow the design with probability 1 - dont_know
  (paper, Section 3: the generalized Warner mechanism is Warner's with this
  branch). A design without the branch gives "don't know" probability 0.
* ``groups``: split-sample designs (SLD, CDM, the unrelated question with an
  unknown innocuous prevalence) give each respondent one group; the group is
  known to the analyst (a form version, not a secret).
* the matrix ``P[g, r, s] = P(response r | state s, group g)``, which may depend
  on *nuisance parameters* estimated from the data (the SLD's honesty t). Every
  design's matrix is affine in its nuisance parameters,
  ``P(eta) = base + sum_j eta_j slopes[j]``, so the likelihood machinery needs
  no design-specific code.
* the ``protocol`` a compliant respondent follows: per group, instructions
  ("answer truthfully", "answer yes", "answer the other question", ...) with
  their exact probabilities. The randomizer, the questionnaires and the dice
  use it; the matrix of compliant respondents follows from it.

Privacy losses come from the matrix for any design (paper, Def. 3.1 and 3.13):
each response except "don't know" is a singleton focal set, "don't know" is the
focal set of all answers (:meth:`Design.to_evidential`).

This module is pure math: it imports nothing from storage, rendering or the CLI.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from functools import cached_property, lru_cache
from typing import ClassVar, Literal

import numpy as np

from surveykit.designs.evidential import EvidentialMechanism
from surveykit.errors import ParameterError

__all__ = [
    "DONT_KNOW",
    "NO",
    "YES",
    "BudgetFamily",
    "Design",
    "DontKnowBranch",
    "Instruction",
    "NuisanceParameter",
    "Protocol",
    "Structure",
    "TwoGroups",
    "as_fraction",
    "check_identifiable",
    "check_probability",
    "describe_parameters",
    "given_design",
    "has_free_entries",
    "mechanism_deprecated",
    "with_dont_know_parameter",
]

YES, NO, DONT_KNOW = "yes", "no", "dont_know"
BINARY_STATES: tuple[str, str] = (YES, NO)
# Floats are read as fractions with at most this denominator when that is exact.
_MAX_DENOMINATOR = 10**6
# Columns of a matrix must sum to one up to this floating-point slack.
_SUM_TOLERANCE = 1e-9


def as_fraction(value: float | int | str | Decimal | Fraction) -> Fraction:
    """The exact probability meant by ``value``.

    A float becomes the simplest fraction (denominator up to 10^6) whose
    double is exactly that float, else its shortest decimal (``repr``); so
    0.6 is 3/5 and 2/3 is 2/3, and 1 - 0.6 - 0.2 is exactly 1/5.

    >>> as_fraction(0.6), as_fraction(2 / 3), as_fraction("0.35")
    (Fraction(3, 5), Fraction(2, 3), Fraction(7, 20))
    """
    if isinstance(value, bool):
        raise ParameterError(f"probability ({value!r}) must be a number, not a truth value")
    if isinstance(value, Fraction | int):
        return Fraction(value)
    if isinstance(value, Decimal | str):
        try:
            return Fraction(value)
        except (ValueError, ArithmeticError):
            raise ParameterError(f"probability ({value!r}) is not a number") from None
    if isinstance(value, float | np.floating):
        return _float_fraction(float(value))
    if isinstance(value, np.integer):
        return Fraction(int(value))
    raise ParameterError(f"probability ({value!r}) must be a number")


# A design reads each of its probabilities several times (checks, matrix, protocol), and
# planning builds hundreds of designs that share most of them; the continued fraction of
# limit_denominator was a quarter of building one.
@lru_cache(maxsize=4096)
def _float_fraction(value: float) -> Fraction:
    if not math.isfinite(value):
        raise ParameterError(f"probability ({value!r}) must be finite")
    simple = Fraction(value).limit_denominator(_MAX_DENOMINATOR)
    return simple if float(simple) == value else Fraction(repr(value))


def check_probability(name: str, value: object) -> float:
    """``value`` as a float in [0, 1], or a ParameterError naming ``name``.

    >>> check_probability("p", 0.25)
    0.25
    """
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating | np.integer):
        raise ParameterError(f"{name} ({value!r}) must be a number between 0 and 1")
    value = float(value)
    if not math.isfinite(value) or not 0 <= value <= 1:
        raise ParameterError(f"{name} ({value}) must be a probability between 0 and 1")
    return value


def check_probabilities(name: str, values: object, length: int | None = None) -> tuple[float, ...]:
    """A vector of probabilities (a list, tuple or array), each checked; ``length`` if given."""
    if isinstance(values, str | bytes) or not isinstance(values, Sequence | np.ndarray):
        if length == 1:
            return (check_probability(name, values),)
        expected = f"a list of {length} probabilities" if length else "a list of probabilities"
        raise ParameterError(f"{name} ({values!r}) must be {expected}, e.g. [0.2, 0.8]")
    items = tuple(values)
    if length is not None and len(items) != length:
        raise ParameterError(
            f"{name} ({list(items)!r}) must have {length} entries, not {len(items)}")
    if not items:
        raise ParameterError(f"{name} must not be empty")
    return tuple(check_probability(f"{name}[{i}]", v) for i, v in enumerate(items, start=1))


@dataclass(frozen=True)
class NuisanceParameter:
    """An unknown parameter of the design, estimated with pi (e.g. the SLD's honesty t)."""

    name: str
    description: str
    low: float = 0.0
    high: float = 1.0


InstructionKind = Literal["truthful", "opposite", "say", "dont_know", "sensitive", "innocuous",
                          "answer_table"]


@dataclass(frozen=True)
class Instruction:
    """One rule a respondent may be told to follow, with its exact probability.

    ``kind`` is what the respondent does:

    * ``truthful``: give their true answer; ``opposite``: the other answer
      (binary designs only); ``say``: answer ``say`` whatever the truth;
      ``dont_know``: answer "don't know" whatever the truth;
    * ``sensitive`` / ``innocuous``: answer the sensitive question, or the
      innocuous one, truthfully (unrelated-question designs);
    * ``answer_table``: give the response ``table`` lists for their true state
      (Kuk's cards drawn ahead of time; any custom matrix).
    """

    kind: InstructionKind
    probability: Fraction
    say: str | None = None
    table: tuple[tuple[str, str], ...] | None = None

    def response(self, state: str) -> str | None:
        """The response a respondent in ``state`` gives; None where it depends on another
        question (``innocuous``)."""
        if self.kind in ("truthful", "sensitive"):
            return state
        if self.kind == "opposite":
            return NO if state == YES else YES
        if self.kind == "say":
            return self.say
        if self.kind == "dont_know":
            return DONT_KNOW
        if self.kind == "answer_table":
            return dict(self.table or ())[state]
        return None

    @property
    def code(self) -> str:
        """A short stable name: ``truthful``, ``say:yes``, ``table:yes=2;no=0``, ..."""
        if self.kind == "say":
            return f"say:{self.say}"
        if self.kind == "answer_table":
            return "table:" + ";".join(f"{s}={r}" for s, r in self.table or ())
        return self.kind


@dataclass(frozen=True)
class Protocol:
    """What compliant respondents are told, per group.

    ``kind``:

    * ``"instructions"``: each respondent draws one instruction per question
      (slips, dice, the web page's secure draw);
    * ``"per_state"``: the natural device is one draw per true state (Kuk's two
      decks of cards): a die table per state; slips draw the instruction
      ``answer_table`` (one response per state) from the same probabilities;
    * ``"combined"``: no randomizer at all; the questionnaire asks one combined
      question (crosswise, triangular) and the randomness is the innocuous
      question's.
    """

    kind: Literal["instructions", "per_state", "combined"]
    instructions: tuple[tuple[Instruction, ...], ...]

    def for_group(self, group: int) -> tuple[Instruction, ...]:
        """The instructions of group ``group`` (0-based)."""
        return self.instructions[group]


@dataclass(frozen=True)
class Structure:
    """The arrays behind a design, computed once and read-only."""

    states: tuple[str, ...]
    categories: tuple[str, ...]
    responses: tuple[str, ...]
    groups: tuple[str, ...]
    base: np.ndarray       # (groups, responses, states)
    slopes: np.ndarray     # (nuisance, groups, responses, states)
    nuisance: tuple[NuisanceParameter, ...]
    protocol: Protocol
    privacy_states: tuple[str, ...]
    state_parameters: Mapping[str, str]


@dataclass(frozen=True)
class BudgetFamily:
    """The designs a privacy budget chooses among: one value x fills every free entry.

    ``parameters`` are the design's parameters with ``None`` where x goes
    (``{"p": [0.1667, None]}``: p[2], group 2's, is free: entries count from 1, as
    users number groups); x ranges over
    (low, high). A family that ``None`` entries cannot say (the generalized
    Warner's p with q = 1 - dont_know - p) gives ``build`` (x -> design) and
    ``label`` (how the free entry reads). A family with a closed form for the design
    that spends a budget gives ``solve`` ((epsilon, semantics) -> (design, x), the
    generalized Warner's Corollary 3.12), used instead of a numerical search.
    """

    parameters: Mapping[str, object]
    low: float
    high: float
    label: str | None = None
    build: Callable[[float], Design] | None = field(default=None, compare=False,
                                                       repr=False)
    solve: Callable[[float, str], tuple[Design, float]] | None = field(
        default=None, compare=False, repr=False)


def mechanism_deprecated(where: str, *, stacklevel: int = 3) -> None:
    """Warn that ``where`` uses ``mechanism``, surveykit 0.1's second name for the design."""
    warnings.warn(f"{where}: 'mechanism' is deprecated; use 'design' (the same object)",
                  DeprecationWarning, stacklevel=stacklevel)


def given_design(design: object, mechanism: object, where: str) -> object:
    """``design``, or the deprecated ``mechanism`` keyword of ``where`` (with a
    DeprecationWarning); never both.

    >>> given_design("gw", None, "estimate()")
    'gw'
    """
    if mechanism is None:
        return design
    if design is not None:
        raise ParameterError("give design or mechanism, not both")
    mechanism_deprecated(where, stacklevel=4)
    return mechanism


def has_free_entries(parameters: Mapping[str, object]) -> bool:
    """Whether some entry of ``parameters`` is ``None`` (left for a budget to choose).

    >>> has_free_entries({"p": [0.1667, None]}), has_free_entries({"p": 0.7})
    (True, False)
    """
    return any(v is None or (isinstance(v, list | tuple) and any(i is None for i in v))
               for v in parameters.values())


def with_dont_know_parameter(parameters: Mapping[str, object], dont_know: float | None
                             ) -> dict[str, object]:
    """The parameters with ``dont_know`` added (it may be given once, either way).

    >>> with_dont_know_parameter({"p": 0.7}, 0.2)
    {'p': 0.7, 'dont_know': 0.2}
    """
    out = dict(parameters)
    if dont_know is not None:
        if "dont_know" in out:
            raise ParameterError(f"dont_know is given twice ({dont_know:g} and "
                                 f"{out['dont_know']:g}); give it once")
        out["dont_know"] = dont_know
    return out


def one_free_entry(model: str, parameters: Mapping[str, object], key: str, low: float,
                   high: float) -> BudgetFamily:
    """The family where the budget chooses parameter ``key`` in (low, high); ``key`` must not
    be given."""
    if key in parameters:
        raise ParameterError(
            f"{key} is what the budget chooses for design {model!r}; drop --param {key} "
            "(or drop --epsilon to evaluate the design as given)")
    return BudgetFamily({**parameters, key: None}, low, high)


class DontKnowBranch:
    """Mixin of presets with a ``dont_know`` field: the paper's branch, exact."""

    dont_know: float

    @property
    def designed_dont_know(self) -> Fraction:
        """The designed probability of "don't know", as an exact fraction."""
        return as_fraction(self.dont_know)


class Design:
    """Base class of every randomized-response design (see the module docstring).

    Subclasses are frozen keyword-only dataclasses whose fields are the
    design's known parameters (as RRreg names them); they validate those in
    ``__post_init__`` and describe the design in :meth:`_build`. Everything
    else (matrix, privacy, protocol, estimation) is generic.
    """

    #: The preset's name, as in RRreg (lower case): "warner", "sld", ...
    model: ClassVar[str] = "custom"
    #: One line for ``--help`` and docs.
    summary: ClassVar[str] = ""

    # -- facts the rest of surveykit asks the design (never its name) -------------------

    #: Whether respondents also answer an innocuous question, whose text a survey file gives
    #: (``innocuous = "..."`` in the [design] table) and forms show.
    asks_innocuous: ClassVar[bool] = False
    #: Wording keys (``templates/wording.json``) of a combined question: ``"prompt"`` (what
    #: the sheet says above the answers) and the answers ``"yes"`` and ``"no"``. Empty for
    #: designs whose respondents draw an instruction.
    combined_wording: ClassVar[Mapping[str, str]] = {}
    #: Probability parameters that are facts about the population, not settings (the
    #: innocuous question's yes share): (name, index in a list or None). No die draws them,
    #: so the nearest design that dice realize keeps them.
    population_parameters: ClassVar[frozenset[tuple[str, int | None]]] = frozenset()
    #: surveykit 0.1's output: JSON and reports show the parameters (p, q) as fields of
    #: their own beside the estimate. Only the generalized Warner design does.
    flat_parameters: ClassVar[bool] = False
    #: How to mark the entries a budget chooses, for designs without a natural free
    #: parameter (``p=0.1667,? (p[2] for the budget, given p[1])``); None: the design has
    #: nothing a budget could choose.
    budget_example: ClassVar[str | None] = None

    def repeated_draw(self) -> tuple[tuple[Fraction, ...], int] | None:
        """For a design whose respondents repeat one two-way draw and report how often one
        side came up (Kuk's cards drawn r times): that side's chance per true state, and r.
        Dice realize it as one die rolled r times. None for every other design."""
        return None

    @classmethod
    def budget_family(cls, parameters: Mapping[str, object],
                      dont_know: float | None = None) -> BudgetFamily:
        """The designs a privacy budget chooses among, given the other ``parameters``.

        Entries marked ``None`` are free; without any, the design's natural free
        parameter (:meth:`_natural_budget_family`). ``dont_know`` is the
        designed don't-know probability, given apart from the parameters.

        >>> from surveykit.designs.warner import Warner
        >>> Warner.budget_family({})
        BudgetFamily(parameters={'p': None}, low=0.5, high=1.0, label=None)
        """
        parameters = with_dont_know_parameter(parameters, dont_know)
        if has_free_entries(parameters):
            return BudgetFamily(parameters, 0.0, 1.0)
        return cls._natural_budget_family(parameters)

    @classmethod
    def _natural_budget_family(cls, parameters: dict[str, object]) -> BudgetFamily:
        """The family a budget chooses from when no entry is marked: none by default."""
        if cls.budget_example is not None:
            raise ParameterError(
                f"design {cls.model!r} has no single free parameter: mark the entries to "
                f"solve for with ?, e.g. --param {cls.budget_example}")
        raise ParameterError(
            f"design {cls.model!r} has no parameter to solve for a budget; drop --epsilon to "
            "see its privacy loss and precision as given")

    # -- to be provided by each design -------------------------------------------------

    def _build(self) -> Structure:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def parameters(self) -> dict[str, object]:
        """The known parameters as the user gives them (JSON-ready), without the model name."""
        raise NotImplementedError  # pragma: no cover

    # -- the structure -----------------------------------------------------------------

    @cached_property
    def structure(self) -> Structure:
        """The design's arrays and labels (computed once; arrays are read-only)."""
        structure = self._build()
        _validate_structure(structure, self.model)
        return structure

    # Preset fields carry the user's names (``categories``, ``groups``, ``states``); the
    # labels the design ends up with are these ``*_labels`` / ``group_names`` properties.

    @property
    def state_labels(self) -> tuple[str, ...]:
        """The true states, e.g. ``("yes", "no")``."""
        return self.structure.states

    @property
    def category_labels(self) -> tuple[str, ...]:
        """The substantive states whose shares are estimated (the states minus behavioural
        ones such as the CDM's cheaters)."""
        return self.structure.categories

    @property
    def response_labels(self) -> tuple[str, ...]:
        """The response labels, ending with ``"dont_know"``."""
        return self.structure.responses

    @property
    def answer_labels(self) -> tuple[str, ...]:
        """The responses other than "don't know"."""
        return self.structure.responses[:-1]

    @property
    def group_names(self) -> tuple[str, ...]:
        """Group names, in the order of the parameter vector (group 1 first)."""
        return self.structure.groups

    @property
    def nuisance(self) -> tuple[NuisanceParameter, ...]:
        """Unknown parameters estimated with the prevalences (empty for most designs)."""
        return self.structure.nuisance

    @property
    def protocol(self) -> Protocol:
        """What compliant respondents are told, per group."""
        return self.structure.protocol

    @property
    def is_binary(self) -> bool:
        """True when the sensitive question has the answers yes and no."""
        return self.structure.categories == BINARY_STATES

    @property
    def is_simple_binary(self) -> bool:
        """One group, the states yes and no only, the answers yes, no and "don't know", no
        nuisance parameter: the designs with Warner's binomial estimator and exact variance."""
        s = self.structure
        return (s.states == s.categories and self.is_binary and len(s.groups) == 1
                and not s.nuisance and len(s.responses) == 3)

    @property
    def designed_dont_know(self) -> Fraction:
        """The designed probability of "don't know" (the same in every group and state), exact."""
        raise NotImplementedError  # pragma: no cover

    def matrix(self, nuisance: Sequence[float] | None = None) -> np.ndarray:
        """P[g, r, s] = P(response r | state s, group g) at the nuisance values (default:
        the middle of each range).

        >>> from surveykit.designs.warner import GeneralizedWarner
        >>> GeneralizedWarner(p=0.6, q=0.2).matrix()[0].tolist()
        [[0.6, 0.2], [0.2, 0.6], [0.2, 0.2]]
        """
        s = self.structure
        eta = self._nuisance_values(nuisance)
        matrix = s.base + np.tensordot(eta, s.slopes, axes=1) if eta.size else s.base.copy()
        return matrix

    def _nuisance_values(self, nuisance: Sequence[float] | Mapping[str, float] | None
                         ) -> np.ndarray:
        params = self.structure.nuisance
        if nuisance is None:
            return np.array([(p.low + p.high) / 2 for p in params], dtype=float)
        if isinstance(nuisance, Mapping):
            unknown = sorted(set(nuisance) - {p.name for p in params})
            if unknown:
                raise ParameterError(
                    f"design {self.model!r} has no nuisance parameter {unknown[0]!r}"
                    + (f"; its nuisance parameters are {', '.join(p.name for p in params)}"
                       if params else "; it has none"))
            nuisance = [nuisance.get(p.name, (p.low + p.high) / 2) for p in params]
        values = np.asarray(nuisance, dtype=float).reshape(-1)
        if values.size != len(params):
            raise ParameterError(
                f"design {self.model!r} has {len(params)} nuisance parameter(s), "
                f"got {values.size} value(s)")
        for value, p in zip(values, params, strict=True):
            if not p.low <= value <= p.high:
                raise ParameterError(
                    f"{p.name} ({value:g}) must be between {p.low:g} and {p.high:g}")
        return values

    def group_index(self, group: object) -> int:
        """The 0-based index of ``group``: its number (1, 2, ...) or its name.

        >>> from surveykit.designs.detection import StochasticLieDetector
        >>> StochasticLieDetector(p=[0.2, 0.8]).group_index("2")
        1
        """
        names = self.group_names
        text = str(group).strip()
        if text in names:
            return names.index(text)
        if text.isdigit() and 1 <= int(text) <= len(names):
            return int(text) - 1
        folded = [name.casefold() for name in names]
        if text.casefold() in folded:
            return folded.index(text.casefold())
        allowed = ", ".join(f"{i} ({name})" if name != str(i) else str(i)
                            for i, name in enumerate(names, start=1))
        raise ParameterError(
            f"group {group!r} is not a group of design {self.model!r}, which has "
            f"{len(names)} group{'s' if len(names) != 1 else ''}: {allowed}")

    # -- privacy -----------------------------------------------------------------------

    def to_evidential(self, group: int = 0, nuisance: Sequence[float] | None = None
                      ) -> EvidentialMechanism:
        """The design in group ``group`` (0-based) as an evidential mechanism (paper, Sec. 3).

        Inputs are the privacy states (the true states of respondents who follow
        the instructions), outputs the answers other than "don't know"; each
        answer is a singleton focal set and "don't know" is the focal set of all
        answers.
        """
        s = self.structure
        matrix = self.matrix(nuisance)[group]
        columns = [s.states.index(state) for state in s.privacy_states]
        answers = self.answer_labels
        focal = tuple(frozenset({r}) for r in answers) + (frozenset(answers),)
        masses = matrix[:, columns].T
        # rows sum to 1 up to rounding; the evidential mechanism checks that
        return EvidentialMechanism(inputs=s.privacy_states, outputs=answers,
                                   focal_sets=focal, masses=masses)

    def privacy_loss(self, semantics: str = "shafer",
                nuisance: Sequence[float] | Mapping[str, float] | None = None) -> float:
        """The privacy loss in ``semantics`` (shafer, bel, pl, walley), the largest over groups.

        With nuisance parameters it is the loss at the given values; without
        values, the worst case over their ranges (the loss of a ratio of affine
        functions is largest at a corner of the box).

        >>> from surveykit.designs.warner import GeneralizedWarner
        >>> round(GeneralizedWarner(p=0.6, q=0.2).privacy_loss("walley"), 4)  # ln((1 - q)/q)
        1.3863
        """
        params = self.structure.nuisance
        if nuisance is None and params:
            corners = itertools.product(*[(p.low, p.high) for p in params])
            return max(self.privacy_loss(semantics, list(corner)) for corner in corners)
        eta = self._nuisance_values(nuisance) if params else None
        return max(self.to_evidential(g, eta).epsilon(semantics)
                   for g in range(len(self.group_names)))

    # Computed once per design (designs are frozen): a report reads each question's losses
    # for its table, its totals and its JSON, and each reading built an evidential
    # mechanism per group and nuisance corner.
    @cached_property
    def epsilon_shafer(self) -> float:
        """Shafer privacy loss (Def. 3.1), worst case over nuisance ranges; ``inf`` if unbounded."""
        return self.privacy_loss("shafer")

    @cached_property
    def epsilon_walley(self) -> float:
        """Walley privacy loss (Def. 3.13), worst case over nuisance ranges (``inf``: none)."""
        return self.privacy_loss("walley")

    # -- description -------------------------------------------------------------------

    def spec(self) -> dict[str, object]:
        """``{"name": model, "parameters": {...}}``: what JSON output and survey files hold.

        >>> from surveykit.designs.warner import GeneralizedWarner
        >>> GeneralizedWarner(p=0.6, q=0.2).spec()
        {'name': 'generalized_warner', 'parameters': {'p': 0.6, 'q': 0.2}}
        """
        return {"name": self.model, "parameters": self.parameters()}

    def describe(self) -> str:
        """One line: the model and its parameters, e.g. ``sld (p = [0.2, 0.8])``.

        >>> from surveykit.designs.warner import GeneralizedWarner
        >>> GeneralizedWarner(p=0.6, q=0.2).describe()
        'generalized_warner (p = 0.6, q = 0.2)'
        """
        return describe_parameters(self.model, self.parameters())



@dataclass(frozen=True, kw_only=True)
class TwoGroups(DontKnowBranch, Design):
    """Base of the yes/no presets asked in two groups with one probability p[g] each (the
    cheating detection model, the stochastic lie detector, the unrelated question with an
    unknown innocuous share): equal p[g] identify nothing, for the reason the preset
    gives in ``equal_p_reason``. A preset whose p says more per group (the symmetric
    cheating detection model) checks it in its own :meth:`_checked_p`. Each preset gives
    one group's answers and instructions in :meth:`_group`; the matrix, its don't-know
    branch and the protocol are built here for all.

    >>> from surveykit.designs.detection import StochasticLieDetector
    >>> StochasticLieDetector(p=[0.2, 0.8], groups=["a", "b"]).parameters()
    {'p': [0.2, 0.8], 'dont_know': 0.0, 'groups': ['a', 'b']}
    """

    #: What the two groups must do differently, and what equal p[g] would confuse.
    equal_p_reason: ClassVar[str]
    #: True states besides yes and no, each with the name of its share (the cheaters' gamma).
    extra_states: ClassVar[Mapping[str, str]] = {}
    #: The nuisance parameter the matrix is affine in (the SLD's honesty t), if any.
    nuisance_parameter: ClassVar[NuisanceParameter | None] = None

    p: tuple[float, float]
    dont_know: float = 0.0
    groups: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "p", self._checked_p())
        object.__setattr__(self, "groups", group_names(self.groups, 2, self.model))
        object.__setattr__(self, "dont_know", float(check_dont_know(self.dont_know)))

    def _checked_p(self) -> tuple[float, ...]:
        """p, checked: one probability per group, the two different."""
        p = check_probabilities("p", self.p, 2)
        if p[0] == p[1]:
            raise ParameterError(f"p ({list(p)!r}): {self.equal_p_reason}")
        return p

    def parameters(self) -> dict[str, object]:
        out: dict[str, object] = {"p": list(self.p), "dont_know": self.dont_know}
        if self.groups != ("1", "2"):
            out["groups"] = list(self.groups)
        return out

    def _group(self, g: int) -> tuple[list[list[float]], list[list[float]] | None,
                                      list[Instruction]]:  # pragma: no cover - presets do
        """Group g's P(yes/no | state) (at nuisance 0), its slope in the nuisance parameter
        (None without one) and the instructions of its protocol, before don't know."""
        raise NotImplementedError

    def _build(self) -> Structure:
        d = self.designed_dont_know
        groups = [self._group(g) for g in range(2)]
        base = np.array([answers for answers, _, _ in groups], dtype=float)
        nuisance = () if self.nuisance_parameter is None else (self.nuisance_parameter,)
        slopes = (np.array([[slope for _, slope, _ in groups]], dtype=float) if nuisance
                  else np.zeros((0, *base.shape)))
        protocol = tuple(instructions_with_dont_know(instructions, d)
                         for _, _, instructions in groups)
        return Structure(
            states=(*BINARY_STATES, *self.extra_states), categories=BINARY_STATES,
            responses=(YES, NO, DONT_KNOW), groups=self.groups,
            base=readonly(with_dont_know(base, d)), slopes=readonly(scale_slopes(slopes, d)),
            nuisance=nuisance, protocol=Protocol("instructions", protocol),
            privacy_states=BINARY_STATES, state_parameters=dict(self.extra_states))


def describe_parameters(model: str, parameters: Mapping[str, object]) -> str:
    """``model (key = value, ...)``: how every design, yes/no or numeric, shows itself.

    >>> describe_parameters("sld", {"p": [0.2, 0.8], "dont_know": 0.0})
    'sld (p = [0.2, 0.8], dont_know = 0)'
    """
    parts = []
    for key, value in parameters.items():
        if isinstance(value, list | tuple):
            shown = "[" + ", ".join(_short(v) for v in value) + "]"
        else:
            shown = _short(value)
        parts.append(f"{key} = {shown}")
    return f"{model} ({', '.join(parts)})" if parts else model


def check_identifiable(design: Design) -> None:
    """Refuse, in one line naming the parameters exactly as given (``repr``:
    0.09999999999999999 is not 0.1), a design whose answers carry no information about the
    shares of the true states: the estimator's own test (:func:`identifiable`) fails, as it
    does when the presets' checks (p > q, p != 0.5, ...) pass by a unit in the last place.

    >>> from surveykit.designs.warner import GeneralizedWarner
    >>> check_identifiable(GeneralizedWarner(p=0.6, q=0.2))
    >>> check_identifiable(GeneralizedWarner(p=0.1, q=0.09999999999999999))
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    surveykit.errors.ParameterError: design 'generalized_warner' (p = 0.1, ...
    """
    s = design.structure
    if identifiable(s):
        return
    shown = ", ".join(f"{key} = {value!r}" for key, value in design.parameters().items())
    target = "pi" if set(s.categories) == set(BINARY_STATES) else "the shares of the true states"
    nuisance = f" or {', '.join(p.name for p in s.nuisance)}" if s.nuisance else ""
    raise ParameterError(
        f"design {design.model!r} ({shown}): the answers carry no information about "
        f"{target}{nuisance}: different true states give the same answers with the same "
        "probabilities (to 10 decimals); choose parameters further apart")


def _short(value: object) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, str):
        return repr(value)
    return str(value)


# -- building blocks for the presets ----------------------------------------------------------


def with_dont_know(matrix: np.ndarray, dont_know: Fraction) -> np.ndarray:
    """Add the "don't know" branch to ``matrix`` (groups, answers, states): the answers are
    scaled by 1 - d and a last row d is appended (paper, Section 3)."""
    d = float(dont_know)
    scaled = matrix * float(1 - dont_know)
    row = np.full(matrix.shape[:1] + (1,) + matrix.shape[2:], d)
    return np.concatenate([scaled, row], axis=1)


def scale_slopes(slopes: np.ndarray, dont_know: Fraction) -> np.ndarray:
    """Nuisance slopes (nuisance, groups, answers, states) under the "don't know" branch."""
    scaled = slopes * float(1 - dont_know)
    zeros = np.zeros(slopes.shape[:2] + (1,) + slopes.shape[3:])
    return np.concatenate([scaled, zeros], axis=2)


def instructions_with_dont_know(instructions: Sequence[Instruction], dont_know: Fraction
                                ) -> tuple[Instruction, ...]:
    """Scale a group's instructions by 1 - d and add "answer don't know" with probability d."""
    scaled = tuple(Instruction(i.kind, i.probability * (1 - dont_know), i.say, i.table)
                   for i in instructions if i.probability > 0)
    if dont_know > 0:
        scaled += (Instruction("dont_know", dont_know),)
    return scaled


def matrix_from_instructions(instructions: Sequence[Instruction], states: Sequence[str],
                             responses: Sequence[str], innocuous: float | None = None
                             ) -> np.ndarray:
    """P(response | state) of respondents who follow ``instructions`` (responses x states).

    ``innocuous`` is the prevalence of the innocuous question, needed when an
    instruction says to answer it.
    """
    matrix = np.zeros((len(responses), len(states)))
    for instruction in instructions:
        weight = float(instruction.probability)
        for j, state in enumerate(states):
            if instruction.kind == "innocuous":
                if innocuous is None:
                    raise ParameterError("the innocuous question's prevalence is needed")
                matrix[responses.index(YES), j] += weight * innocuous
                matrix[responses.index(NO), j] += weight * (1 - innocuous)
            else:
                matrix[responses.index(instruction.response(state)), j] += weight
    return matrix


def check_dont_know(value: object) -> Fraction:
    """The don't-know probability as an exact fraction in [0, 1)."""
    d = check_probability("dont_know", value)
    if d >= 1:
        raise ParameterError(
            f"dont_know ({d:g}) must be below 1: with dont_know = 1 nobody answers the question")
    return as_fraction(d)


def group_names(given: object, count: int, model: str) -> tuple[str, ...]:
    """Names of ``count`` groups: the given list, or "1", "2", ..."""
    if given is None:
        return tuple(str(i) for i in range(1, count + 1))
    if isinstance(given, str) or not isinstance(given, Sequence):
        raise ParameterError(f"groups ({given!r}) must be a list of {count} names")
    names = tuple(str(name).strip() for name in given)
    if len(names) != count:
        raise ParameterError(
            f"groups ({list(names)!r}) must name the {count} group(s) of design {model!r}")
    if any(not name for name in names) or len({n.casefold() for n in names}) != len(names):
        raise ParameterError(f"groups ({list(names)!r}) must be distinct, non-empty names")
    return names


def readonly(array: np.ndarray) -> np.ndarray:
    """A read-only float copy."""
    out = np.array(array, dtype=float, copy=True)
    out.setflags(write=False)
    return out


def _validate_structure(s: Structure, model: str) -> None:
    """Internal consistency of a preset's arrays (a programming error if it fails)."""
    g, r, k = s.base.shape
    assert (g, r, k) == (len(s.groups), len(s.responses), len(s.states)), model
    assert s.slopes.shape == (len(s.nuisance), g, r, k), model
    assert s.responses[-1] == DONT_KNOW, model
    corners = list(itertools.product(*[(p.low, p.high) for p in s.nuisance])) or [()]
    for corner in corners:
        eta = np.asarray(corner, dtype=float)
        matrix = s.base + np.tensordot(eta, s.slopes, axes=1) if eta.size else s.base
        if np.any(matrix < -_SUM_TOLERANCE) or np.any(
                np.abs(matrix.sum(axis=1) - 1) > _SUM_TOLERANCE):
            raise ParameterError(
                f"design {model!r}: the probabilities of the responses must be >= 0 and add up "
                f"to 1 for every true state; they add up to {matrix.sum(axis=1).round(6).tolist()}")


def identifiable(s: Structure) -> bool:
    """Whether the matrix identifies the state shares and nuisance parameters.

    The Jacobian of the cell probabilities with respect to the free
    parameters (state shares on the simplex, nuisance values) at an interior
    point must have full column rank.
    """
    k = len(s.states)
    pi = np.full(k, 1.0 / k)
    eta = np.array([(p.low + p.high) / 2 for p in s.nuisance])
    matrix = s.base + np.tensordot(eta, s.slopes, axes=1) if eta.size else s.base
    columns = [(matrix[:, :, i] - matrix[:, :, -1]).ravel() for i in range(k - 1)]
    columns += [np.einsum("grs,s->gr", s.slopes[j], pi).ravel() for j in range(len(s.nuisance))]
    if not columns:
        return True
    jacobian = np.stack(columns, axis=1)
    return int(np.linalg.matrix_rank(jacobian, tol=1e-10)) == jacobian.shape[1]
