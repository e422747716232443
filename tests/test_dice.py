"""Die tables realize every design's protocol exactly with the smallest dice, or are refused
with the nearest design of the same preset that dice realize and that loses no more privacy."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from surveykit.collection.dice import (
    DieDesignError,
    DieTable,
    as_fraction,
    candidate_dice,
    die_plan,
    format_probability,
    nearest_die_design,
    smallest_dice,
)
from surveykit.designs.registry import make_design
from surveykit.designs.warner import GeneralizedWarner
from surveykit.errors import ParameterError


def realized(table: DieTable) -> tuple[Fraction, ...]:
    """Each entry's probability, by enumerating every outcome of the dice through the rows."""
    counts = [0] * len(table.counts)
    rows = table.rows()
    for faces in itertools.product(*(range(1, d + 1) for d in table.dice)):
        row = rows[0] if len(faces) == 1 else rows[faces[0] - 1]
        assert row.first == (None if len(faces) == 1 else faces[0])
        last = faces[-1]
        hits = [i for i, span in enumerate(row.spans)
                if span is not None and span[0] <= last <= span[1]]
        assert len(hits) == 1, (faces, row)  # every outcome means exactly one entry
        counts[hits[0]] += 1
    return tuple(Fraction(c, table.outcomes) for c in counts)


def gw_probabilities(p, q) -> tuple[Fraction, ...]:
    p, q = as_fraction(p), as_fraction(q)
    return tuple(x for x in (p, q, 1 - p - q) if x > 0)


@pytest.mark.parametrize(("p", "q", "dice"), [
    (0.6, 0.2, (10,)),
    (0.5, 0.25, (4,)),
    (0.5, 0.0, (2,)),
    (2 / 3, 1 / 6, (6,)),
    (0.625, 0.125, (8,)),
    (5 / 12, 1 / 4, (12,)),
    (0.55, 0.15, (20,)),
    (0.33, 0.17, (100,)),
    (1 / 3, 1 / 9, (6, 6)),
    (7 / 15, 1 / 5, (6, 10)),
])
def test_generalized_warner_maps_exactly_onto_the_smallest_die(p, q, dice):
    (die,) = die_plan(GeneralizedWarner(p=p, q=q))
    assert die.kind == "instructions" and die.dice == dice
    assert realized(die.table) == gw_probabilities(p, q)
    assert [i.kind for i in die.instructions][:2] == ["truthful", "opposite"][:len(
        die.instructions) - 1] or q == 0
    # no earlier (smaller) candidate realizes the design
    for smaller in candidate_dice()[: candidate_dice().index(dice)]:
        n = math.prod(smaller)
        assert any((x * n).denominator != 1 for x in gw_probabilities(p, q)), smaller


def test_sample_survey_designs_map_to_one_die_each():
    assert [die_plan(GeneralizedWarner(p=p, q=q))[0].describe()
            for p, q in ((0.6, 0.2), (0.7, 0.15), (0.5, 0.25), (0.65, 0.15))] == [
        "one d10", "one d20", "one d4", "one d20"]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(candidate_dice()), st.data())
def test_every_design_on_a_candidate_grid_is_realized_exactly(dice, data):
    n = math.prod(dice)
    t = data.draw(st.integers(1, n))
    o = data.draw(st.integers(0, min(t - 1, n - t)))
    p, q = Fraction(t, n), Fraction(o, n)
    (die,) = die_plan(GeneralizedWarner(p=float(p), q=float(q)))
    if p == 1:  # everybody answers truthfully: nothing to roll
        assert die is None
        return
    assert die.table.outcomes <= n or candidate_dice().index(die.dice) < \
        candidate_dice().index(dice)
    assert realized(die.table) == gw_probabilities(p, q)


INSTRUCTION_DESIGNS = [
    ("warner", {"p": 0.7, "dont_know": 0.1}, [(100,)]),
    ("fr", {"p": [0.1, 0.15, 0.05], "categories": ["a", "b", "c"]}, [(20,)]),
    ("mangat", {"p": 0.75}, [(4,)]),
    ("uqtknown", {"p": [0.7, 1 / 12], "dont_know": 0.2}, [(100,)]),
    ("uqtunknown", {"p": [0.8, 0.3]}, [(10,), (10,)]),
    ("sld", {"p": [1 / 6, 5 / 6]}, [(6,), (6,)]),
    ("cdm", {"p": [0.25, 0.5]}, [(4,), (2,)]),
    ("cdmsym", {"p": [0.2, 0.1, 0.1, 0.25]}, [(10,), (20,)]),
    ("grr", {"p": 0.5, "k": 3}, [(4,)]),
    ("crosswise", {"p": 0.25, "dont_know": 0.2}, [(10,)]),
]


@pytest.mark.parametrize(("name", "parameters", "dice"), INSTRUCTION_DESIGNS)
def test_every_group_of_an_instruction_design_gets_an_exact_table(name, parameters, dice):
    design = make_design(name, **parameters)
    plan = die_plan(design)
    assert [die.dice for die in plan] == dice
    for g, die in enumerate(plan):
        assert die.kind == "instructions"
        protocol = {i: i.probability for i in design.protocol.for_group(g) if i.probability}
        assert dict(zip(die.instructions, realized(die.table), strict=True)) == protocol


@pytest.mark.parametrize(("name", "parameters"), [
    ("kuk", {"p": [0.7, 0.3]}),
    ("kuk", {"p": [0.75, 0.25], "dont_know": 0.5}),
    ("custom", {"matrix": [[0.6, 0.1, 0.3], [0.3, 0.6, 0.2], [0.1, 0.3, 0.5]],
                "states": ["a", "b", "c"], "responses": ["a", "b", "c"]}),
])
def test_per_state_designs_get_one_table_per_true_state_realizing_the_matrix(name, parameters):
    design = make_design(name, **parameters)
    (die,) = die_plan(design)
    assert die.kind == "per_state" and len(die.states) == len(design.state_labels)
    matrix = design.matrix()[0]
    for table in die.states:
        column = matrix[:, design.state_labels.index(table.state)]
        shares = dict(zip(table.entries, realized(table.table), strict=True))
        for r, label in enumerate(design.response_labels):
            assert float(shares.get(label, 0)) == pytest.approx(column[r], abs=1e-15)


def test_kuks_cards_drawn_three_times_are_one_die_rolled_three_times():
    design = make_design("kuk", p=[0.7, 0.3], repetitions=3)
    (die,) = die_plan(design)
    assert die.kind == "count" and die.dice == (10,) and die.repetitions == 3
    for table in die.states:
        (row,) = table.table.rows()
        red = row.spans[0]
        # roll a d10 three times; count the rolls among the red faces
        counts = [0] * 4
        for rolls in itertools.product(range(1, 11), repeat=3):
            counts[sum(red[0] <= face <= red[1] for face in rolls)] += 1
        column = design.matrix()[0][:, design.state_labels.index(table.state)]
        assert [c / 1000 for c in counts] == pytest.approx(column[:4].tolist(), abs=1e-15)


def test_designs_with_nothing_to_draw_need_no_die():
    assert die_plan(make_design("crosswise", p=0.25)) == (None,)
    assert die_plan(make_design("triangular", p=0.3)) == (None,)
    assert die_plan(make_design("direct")) == (None,)


# -- refusals and the nearest design ---------------------------------------------------------


def test_unrealizable_generalized_warner_is_refused_with_the_nearest_design_and_its_losses():
    with pytest.raises(DieDesignError) as caught:
        die_plan(GeneralizedWarner(p=0.333, q=0.111))
    message = str(caught.value)
    assert message.startswith("no die in d2, d4, d6, d8, d10, d12, d20, d100 or pair of dice "
                              "realizes generalized_warner with p = 0.333 (333/1000), "
                              "q = 0.111 (111/1000) exactly")
    assert ("nearest design with no more privacy loss: p = 0.3333333333333333 (1/3), "
            "q = 0.1111111111111111 (1/9) with two d6 (Shafer loss 1.0986, Walley 2.0794; "
            "requested 1.0986 and 2.0806)") in message
    nearest = caught.value.nearest
    assert (as_fraction(nearest.p), as_fraction(nearest.q)) == (Fraction(1, 3), Fraction(1, 9))
    assert caught.value.plan[0].dice == (6, 6)
    # the decimals in the message, typed into a survey file, give the fractions exactly
    assert as_fraction(0.3333333333333333) == Fraction(1, 3)


def test_nearest_generalized_warner_is_the_closest_that_loses_no_more_privacy():
    p, q = Fraction(333, 1000), Fraction(111, 1000)
    nearest, _ = nearest_die_design(GeneralizedWarner(p=0.333, q=0.111))
    big_p, big_q = as_fraction(nearest.p), as_fraction(nearest.q)
    best = max(abs(big_p - p), abs(big_q - q))
    # brute force over every design on every candidate grid
    for dice in candidate_dice():
        n = math.prod(dice)
        for o in range(math.ceil(q * n), n + 1):  # Walley: Q >= q
            for t in range(o + 1, n - o + 1):
                other_p, other_q = Fraction(t, n), Fraction(o, n)
                if other_p * q > p * other_q:  # Shafer: P/Q <= p/q
                    break
                assert max(abs(other_p - p), abs(other_q - q)) >= best, (dice, t, o)
    assert nearest.epsilon_shafer <= math.log(p / q) + 1e-12
    assert nearest.epsilon_walley <= math.log((1 - q) / q) + 1e-12


@pytest.mark.parametrize(("name", "parameters", "moved"), [
    ("warner", {"p": 0.7, "dont_know": 0.13}, {"dont_know"}),
    ("sld", {"p": [0.1667, 0.8333]}, {"p"}),
    ("grr", {"epsilon": 1.0, "k": 3}, {"p"}),
    ("uqtknown", {"p": [0.713, 1 / 12]}, {"p"}),
    ("fr", {"p": [0.113, 0.2]}, {"p"}),
    ("kuk", {"p": [0.713, 0.3]}, {"p"}),
    ("crosswise", {"p": 0.25, "dont_know": 0.133}, {"dont_know"}),
])
def test_nearest_design_of_every_preset_is_realized_and_loses_no_more_privacy(name, parameters,
                                                                              moved):
    design = make_design(name, **parameters)
    with pytest.raises(DieDesignError) as caught:
        die_plan(design)
    nearest = caught.value.nearest
    assert nearest is not None and nearest.model == design.model
    assert die_plan(nearest) == caught.value.plan
    for semantics in ("shafer", "walley"):
        assert nearest.privacy_loss(semantics) <= design.privacy_loss(semantics) + 1e-12
    changed = {k for k, v in nearest.parameters().items() if design.parameters().get(k) != v}
    assert changed - {"epsilon"} <= moved
    message = str(caught.value)
    assert f"realizes {design.model} with " in message and "Shafer loss" in message
    assert "Walley" in message and message.endswith("use it in the survey file or generate "
                                                    "with --mode slips")


def test_the_innocuous_share_is_a_fact_the_nearest_design_keeps():
    design = make_design("uqtknown", p=[0.713, 0.123])
    with pytest.raises(DieDesignError) as caught:
        die_plan(design)
    assert caught.value.nearest.p[1] == 0.123


def test_kuks_repeated_draws_with_a_dont_know_branch_are_refused_with_the_reason():
    with pytest.raises(DieDesignError, match=r"Kuk's cards drawn several times are a die rolled "
                                             r"several times, which cannot also give the \"don't "
                                             r"know\" branch; use dont_know = 0"):
        die_plan(make_design("kuk", p=[0.7, 0.3], repetitions=2, dont_know=0.1))


def test_a_custom_matrix_no_die_realizes_points_to_slips():
    design = make_design("custom", matrix=[[0.333, 0.5], [0.667, 0.5]])
    with pytest.raises(DieDesignError, match=r"realizes custom with its matrix, dont_know = 0 "
                                             r"exactly; generate with --mode slips, which "
                                             r"realizes any design$"):
        die_plan(design)


def test_smallest_dice_and_probability_formatting():
    assert smallest_dice([[Fraction(1, 2)], [Fraction(1, 3)]]) == (6,)
    assert smallest_dice([[Fraction(1, 7)]]) is None
    assert smallest_dice([[Fraction(1, 16)]], single=True) is None
    assert smallest_dice([[Fraction(1, 16)]]) == (4, 4)
    assert format_probability(Fraction(3, 5)) == "0.6"
    assert format_probability(Fraction(1, 9)) == "0.1111111111111111 (1/9)"


def test_floats_are_read_as_the_fraction_the_user_meant():
    assert as_fraction(0.6) == Fraction(3, 5)
    assert as_fraction(2 / 3) == Fraction(2, 3)
    assert as_fraction("0.35") == Fraction(7, 20)
    assert as_fraction(0.1 + 0.2) == Fraction("0.30000000000000004")


def test_bad_designs_are_refused_before_any_die_is_searched():
    with pytest.raises(ParameterError, match=r"p \(0.2\) must be greater than q \(0.4\)"):
        die_plan(GeneralizedWarner(p=0.2, q=0.4))


def test_exact_tables_realize_random_grid_designs_of_two_groups():
    rng = np.random.default_rng(5)
    for _ in range(20):
        a, b = (int(x) for x in rng.choice(np.arange(1, 12), size=2, replace=False))
        design = make_design("sld", p=[a / 12, b / 12])
        for g, die in enumerate(die_plan(design)):
            shares = realized(die.table)
            assert shares == tuple(i.probability for i in design.protocol.for_group(g))
