"""Privacy losses of every preset, computed independently, and budgets on both sides of the edge.

* Shafer (paper, Def. 3.1): each answer is a singleton focal set and "don't
  know" the set of all answers, so the loss is ln of the largest ratio of two
  entries in one row of the matrix, across the privacy states (the true states
  of respondents who follow the instructions; the CDM's cheaters are not one),
  the largest over groups. Computed here from the matrix with plain loops, and
  checked against the closed forms docs/designs.md shows.
* Walley (Def. 3.13): ln of the largest pr_x(E) / pr_x'(E) over events E and
  over the probability functions consistent with each belief function. The
  consistent functions here are the mixtures of the vertices "put the
  don't-know mass on answer a"; a ratio of linear functions is largest at
  vertices, so enumerating vertex pairs gives the loss without the pl/bel
  formulas the library uses.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from surveykit.designs import (
    CheatingDetection,
    CheatingDetectionSymmetric,
    Crosswise,
    Custom,
    Direct,
    ForcedResponse,
    GeneralizedRandomizedResponse,
    GeneralizedWarner,
    Kuk,
    Mangat,
    StochasticLieDetector,
    Triangular,
    UnrelatedQuestionKnown,
    UnrelatedQuestionUnknown,
    Warner,
)
from surveykit.errors import ParameterError
from surveykit.privacy.budget import check_budget

DESIGNS = {
    "warner": Warner(p=0.7),
    "warner p<1/2 dk": Warner(p=0.3, dont_know=0.2),
    "generalized_warner": GeneralizedWarner(p=0.6, q=0.2),
    "fr": ForcedResponse(p=[0.1, 0.2]),
    "fr dk": ForcedResponse(p=[0.1, 0.2], dont_know=0.25),
    "fr m=3": ForcedResponse(p=[0.1, 0.1, 0.2]),
    "uqtknown": UnrelatedQuestionKnown(p=[0.7, 1 / 12]),
    "uqtknown dk": UnrelatedQuestionKnown(p=[0.5, 0.5], dont_know=0.1),
    "mangat": Mangat(p=0.7),
    "kuk": Kuk(p=[0.7, 0.3]),
    "kuk 3 cards": Kuk(p=[0.7, 0.3], repetitions=3),
    "kuk 2 cards dk": Kuk(p=[0.2, 0.6], repetitions=2, dont_know=0.3),
    "crosswise": Crosswise(p=0.25),
    "triangular": Triangular(p=0.25),
    "cdm": CheatingDetection(p=[0.3, 0.7]),
    "cdmsym": CheatingDetectionSymmetric(p=[0.2, 0.1, 0.1, 0.2]),
    "cdmsym dk": CheatingDetectionSymmetric(p=[0.3, 0.2, 0.05, 0.4], dont_know=0.2),
    "grr k=3": GeneralizedRandomizedResponse(p=0.6, k=3),
    "grr eps=1 dk": GeneralizedRandomizedResponse(epsilon=1.0, categories=["a", "b", "c", "d"],
                                                  dont_know=0.3),
    "direct": Direct(),
    "custom": Custom(matrix=[[0.8, 0.3], [0.2, 0.7]], states=["no", "yes"],
                     responses=["no", "yes"]),
    "custom 2 groups": Custom(matrix=[[[0.8, 0.3], [0.2, 0.7]], [[0.6, 0.1], [0.4, 0.9]]],
                              states=["no", "yes"], responses=["no", "yes"]),
}
NUISANCE = {
    "sld": StochasticLieDetector(p=[1 / 6, 5 / 6]),
    "sld dk": StochasticLieDetector(p=[0.3, 0.9], dont_know=0.2),
    "uqtunknown": UnrelatedQuestionUnknown(p=[0.8, 0.3]),
}


def _privacy_columns(design):
    s = design.structure
    return [s.states.index(state) for state in s.privacy_states]


def shafer_from_matrix(design, nuisance=None) -> float:
    """ln max over groups, rows and ordered pairs of privacy states of P[g,r,s] / P[g,r,s']."""
    matrix = design.matrix(nuisance)
    best = 1.0
    for g in range(matrix.shape[0]):
        for row in matrix[g]:
            entries = [row[s] for s in _privacy_columns(design)]
            for a, b in itertools.permutations(entries, 2):
                if a > 0 and b == 0:
                    return math.inf
                if b > 0:
                    best = max(best, a / b)
    return math.log(best)


def walley_from_vertices(design, nuisance=None) -> float:
    """ln max over groups, state pairs, events E and credal-set vertices of pr_x(E)/pr_x'(E)."""
    matrix = design.matrix(nuisance)
    answers = len(design.answer_labels)
    best = 1.0
    for g in range(matrix.shape[0]):
        columns = [matrix[g, :, s] for s in _privacy_columns(design)]
        vertices = []
        for column in columns:
            dont_know = column[-1]
            choices = []
            for a in range(answers):
                vertex = np.array(column[:-1], dtype=float)
                vertex[a] += dont_know
                choices.append(vertex)
            vertices.append(choices)
        for x, y in itertools.permutations(range(len(columns)), 2):
            for size in range(1, answers + 1):
                for event in itertools.combinations(range(answers), size):
                    top = max(v[list(event)].sum() for v in vertices[x])
                    bottom = min(v[list(event)].sum() for v in vertices[y])
                    if top > 1e-15 and bottom <= 1e-15:
                        return math.inf
                    if bottom > 1e-15:
                        best = max(best, top / bottom)
    return math.log(best)


@pytest.mark.parametrize("name", list(DESIGNS))
def test_shafer_loss_is_ln_of_the_largest_ratio_in_a_row_of_the_matrix(name):
    design = DESIGNS[name]
    assert design.epsilon_shafer == pytest.approx(shafer_from_matrix(design), rel=1e-12)


@pytest.mark.parametrize("name", list(DESIGNS))
def test_walley_loss_agrees_with_the_credal_set_vertices(name):
    design = DESIGNS[name]
    assert design.epsilon_walley == pytest.approx(walley_from_vertices(design), rel=1e-12)


# Closed forms (docs/designs.md shows them) and their numbers.
CLOSED_FORMS = [
    ("warner", math.log(0.7 / 0.3), math.log(0.7 / 0.3)),
    # truthful 0.3 * 0.8 = 0.24, opposite 0.56, don't know 0.2: Walley ln((0.56 + 0.2) / 0.24)
    ("warner p<1/2 dk", math.log(0.7 / 0.3), math.log(0.76 / 0.24)),
    ("generalized_warner", math.log(3), math.log(0.8 / 0.2)),
    # forced no a = 0.1, forced yes b = 0.2: ln max((1 - a)/b, (1 - b)/a)
    ("fr", math.log(0.8 / 0.1), math.log(0.8 / 0.1)),
    ("fr dk", math.log(8), math.log((0.8 * 0.75 + 0.25) / (0.1 * 0.75))),
    ("fr m=3", math.log((0.6 + 0.1) / 0.1), math.log((0.6 + 0.1) / 0.1)),
    # sensitive s = 0.7, innocuous u = 1/12: yes (s + (1-s)u) / ((1-s)u)
    ("uqtknown", math.log(0.725 / 0.025), math.log(0.725 / 0.025)),
    ("kuk", math.log(0.7 / 0.3), math.log(0.7 / 0.3)),
    ("kuk 3 cards", 3 * math.log(0.7 / 0.3), 3 * math.log(0.7 / 0.3)),
    ("crosswise", math.log(3), math.log(3)),
    ("cdmsym", math.log(0.8 / 0.1), math.log(0.8 / 0.1)),
    ("grr k=3", math.log(0.6 / 0.2), math.log(0.6 / 0.2)),
    ("custom", math.log(0.7 / 0.2), math.log(0.7 / 0.2)),
    ("mangat", math.inf, math.inf),
    ("triangular", math.inf, math.inf),
    ("cdm", math.inf, math.inf),
    ("direct", math.inf, math.inf),
]


@pytest.mark.parametrize(("name", "shafer", "walley"), CLOSED_FORMS)
def test_losses_equal_their_closed_forms(name, shafer, walley):
    design = DESIGNS[name]
    assert design.epsilon_shafer == pytest.approx(shafer, rel=1e-12)
    assert design.epsilon_walley == pytest.approx(walley, rel=1e-12)


def test_grr_built_for_a_budget_spends_exactly_that_budget_in_shafer_semantics():
    assert DESIGNS["grr eps=1 dk"].epsilon_shafer == pytest.approx(1.0, rel=1e-14)


# -- budgets on both sides of the exact boundary -------------------------------------------------


FINITE = [(name, semantics) for name, design in DESIGNS.items() for semantics in
          ("shafer", "walley", "bel", "pl") if math.isfinite(design.privacy_loss(semantics))]


@pytest.mark.parametrize(("name", "semantics"), FINITE)
def test_a_design_passes_a_budget_equal_to_its_loss_and_fails_just_below(name, semantics):
    design = DESIGNS[name]
    loss = design.privacy_loss(semantics)
    assert check_budget(design, loss, semantics) == loss
    with pytest.raises(ParameterError, match=r"^epsilon \(.*\) is below the"):
        check_budget(design, loss - 1e-9, semantics)


@pytest.mark.parametrize("epsilon", [0.5, 1.0, math.log(3), 2.5])
def test_designs_built_for_a_budget_pass_exactly_that_budget(epsilon):
    assert check_budget(GeneralizedWarner.optimal(epsilon=epsilon, dont_know=0.2), epsilon) > 0
    assert check_budget(GeneralizedWarner.for_walley_budget(epsilon=epsilon, dont_know=0.1),
                        epsilon, "walley") > 0
    grr = GeneralizedRandomizedResponse(epsilon=epsilon, k=5)
    assert check_budget(grr, epsilon) > 0
    with pytest.raises(ParameterError):
        check_budget(grr, epsilon - 1e-9)


def test_budget_messages_name_the_budget_the_loss_and_the_fix():
    with pytest.raises(ParameterError) as error:
        check_budget(Warner(p=0.75), 1.0)
    assert str(error.value) == (
        "epsilon (1) is below the Shafer privacy loss of warner (p = 0.75, dont_know = 0), "
        "1.098612289: allow at least that, or choose parameters that randomize more")
    with pytest.raises(ParameterError) as error:
        check_budget(Mangat(p=0.7), 5.0, "walley")
    assert str(error.value) == (
        "epsilon (5): mangat (p = 0.7, dont_know = 0) has no finite Walley privacy loss: some "
        "answer comes only from respondents in one true state, so no budget allows it; choose "
        "a design in which every answer can come from every true state")
    with pytest.raises(ParameterError, match=r"^epsilon \(-1\) must be a positive privacy"):
        check_budget(Warner(p=0.75), -1)
    with pytest.raises(ParameterError, match=r"^semantics \('renyi'\) must be one of shafer"):
        check_budget(Warner(p=0.75), 1.0, "renyi")


# -- designs with nuisance parameters --------------------------------------------------------


@pytest.mark.parametrize("name", list(NUISANCE))
@pytest.mark.parametrize("value", [0.05, 0.3, 0.5, 0.8, 0.97])
def test_loss_at_a_nuisance_value_is_that_matrix_s_loss(name, value):
    design = NUISANCE[name]
    for semantics, oracle in (("shafer", shafer_from_matrix), ("walley", walley_from_vertices)):
        loss = design.privacy_loss(semantics, [value])
        assert loss == pytest.approx(oracle(design, [value]), rel=1e-12)
        assert design.privacy_loss(semantics, {design.nuisance[0].name: value}) == loss
        assert check_budget(design, loss, semantics, [value]) == loss
        with pytest.raises(ParameterError, match=f"at the given {design.nuisance[0].name}"):
            check_budget(design, loss - 1e-9, semantics, [value])


@pytest.mark.parametrize("name", list(NUISANCE))
def test_worst_case_over_the_nuisance_range_is_the_largest_loss_on_a_grid(name):
    # The SLD's carriers answer yes with t: at t = 1 "no" comes only from non-carriers, at
    # t = 0 "yes" does; an innocuous share u = 0 or 1 likewise makes an answer one-sided. So
    # the worst case is unbounded: a respondent can be promised no finite loss unless t (or u)
    # is known to stay inside a narrower range.
    design = NUISANCE[name]
    grid = np.linspace(0, 1, 101)
    for semantics, oracle in (("shafer", shafer_from_matrix), ("walley", walley_from_vertices)):
        worst = max(oracle(design, [v]) for v in grid)
        assert design.privacy_loss(semantics) == worst == math.inf
    with pytest.raises(ParameterError, match=r"worst case over .* in \[0, 1\]"):
        check_budget(design, 10.0)


def test_loss_at_the_estimate_is_reported_with_the_worst_case():
    from surveykit.estimation import estimate

    design = NUISANCE["sld"]
    result = estimate(design=design, counts={1: {"yes": 60, "no": 40}, 2: {"yes": 35, "no": 65}})
    data = result.to_dict()
    t = result.parameters["t"]["estimate"]
    # unbounded worst case: "inf" with its flag, never null (issue 22 item 6)
    assert data["epsilon_shafer"] == "inf" and data["epsilon_shafer_finite"] is False
    assert data["epsilon_shafer_at_estimate"] == pytest.approx(shafer_from_matrix(design, [t]))
    assert data["epsilon_walley_at_estimate"] == pytest.approx(walley_from_vertices(design, [t]))


def test_no_loss_at_the_estimate_when_the_nuisance_parameter_is_not_estimated():
    # pi_mle = 0: the SLD's t is not identified, and the loss "at the estimate" was computed
    # at t = 0.5, where the search had started (0.9163 in both semantics)
    from surveykit.estimation import estimate

    result = estimate(design=StochasticLieDetector(p=[0.2, 0.8]),
                      counts={1: {"yes": 85, "no": 15}, 2: {"yes": 15, "no": 85}})
    assert result.pi_mle == 0 and result.parameters["t"]["estimate"] is None
    data = result.to_dict()
    assert data["epsilon_shafer_at_estimate"] is None
    assert data["epsilon_walley_at_estimate"] is None
