"""Die mappings realize (p, q, 1 - p - q) exactly with the smallest die, or are refused
with the nearest realizable design and its privacy loss."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from surveykit.collection.dice import (
    DieDesign,
    DieDesignError,
    as_fraction,
    candidate_dice,
    find_die_design,
)
from surveykit.errors import ParameterError


def realized(design: DieDesign) -> tuple[Fraction, Fraction, Fraction]:
    """P(T), P(L), P(D) by enumerating every outcome of the dice through the lookup table."""
    counts = {"truthful": 0, "opposite": 0, "dont_know": 0}
    rows = design.rows()
    for faces in itertools.product(*(range(1, d + 1) for d in design.dice)):
        row = rows[0] if len(faces) == 1 else rows[faces[0] - 1]
        assert row.first == (None if len(faces) == 1 else faces[0])
        last = faces[-1]
        hits = [name for name in counts
                if getattr(row, name) is not None
                and getattr(row, name)[0] <= last <= getattr(row, name)[1]]
        assert len(hits) == 1, (faces, row)  # every outcome means exactly one rule
        counts[hits[0]] += 1
    total = design.outcomes
    return tuple(Fraction(counts[name], total) for name in ("truthful", "opposite", "dont_know"))


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
    ("0.35", "0.15", (20,)),
])
def test_die_mapping_is_exact_with_the_smallest_die(p, q, dice):
    design = find_die_design(p, q)
    assert design.dice == dice
    p_exact, q_exact = as_fraction(p), as_fraction(q)
    assert realized(design) == (p_exact, q_exact, 1 - p_exact - q_exact)
    # no earlier (smaller) candidate realizes the design
    for smaller in candidate_dice()[: candidate_dice().index(dice)]:
        n = math.prod(smaller)
        assert (p_exact * n).denominator != 1 or (q_exact * n).denominator != 1, smaller


def test_sample_survey_designs_map_to_one_die_each():
    assert find_die_design(0.6, 0.2).describe() == "one d10"
    assert find_die_design(0.7, 0.15).describe() == "one d20"
    assert find_die_design(0.5, 0.25).describe() == "one d4"
    assert find_die_design(0.65, 0.15).describe() == "one d20"


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(candidate_dice()), st.data())
def test_every_design_on_a_candidate_grid_is_realized_exactly(dice, data):
    n = math.prod(dice)
    t = data.draw(st.integers(1, n))
    o = data.draw(st.integers(0, min(t - 1, n - t)))
    p, q = Fraction(t, n), Fraction(o, n)
    design = find_die_design(p, q)
    assert design.outcomes <= n or candidate_dice().index(design.dice) < candidate_dice().index(
        dice)
    assert realized(design)[:2] == (p, q)


def test_unrealizable_design_is_refused_with_the_nearest_design_and_its_losses():
    with pytest.raises(DieDesignError) as caught:
        find_die_design(0.333, 0.111)
    message = str(caught.value)
    assert message.startswith("no die in d2, d4, d6, d8, d10, d12, d20, d100 or pair of dice "
                              "realizes p = 0.333 (333/1000), q = 0.111 (111/1000) exactly")
    assert ("nearest design with no more privacy loss: p = 0.333333 (1/3), q = 0.111111 (1/9) "
            "with two d6 (Shafer ln(p/q) = 1.0986, Walley ln((1-q)/q) = 2.0794; "
            "requested 1.0986 and 2.0806)") in message
    nearest = caught.value.nearest
    assert (nearest.p, nearest.q, nearest.dice) == (Fraction(1, 3), Fraction(1, 9), (6, 6))


def test_nearest_design_is_the_closest_that_loses_no_more_privacy():
    p, q = Fraction(333, 1000), Fraction(111, 1000)
    with pytest.raises(DieDesignError) as caught:
        find_die_design(p, q)
    nearest = caught.value.nearest
    best = max(abs(nearest.p - p), abs(nearest.q - q))
    # brute force over every design on every candidate grid
    for dice in candidate_dice():
        n = math.prod(dice)
        for o in range(math.ceil(q * n), n + 1):  # Walley: Q >= q
            for t in range(o + 1, n - o + 1):
                big_p, big_q = Fraction(t, n), Fraction(o, n)
                if big_p * q > p * big_q:  # Shafer: P/Q <= p/q
                    break
                assert max(abs(big_p - p), abs(big_q - q)) >= best, (dice, t, o)
    assert nearest.epsilon_shafer <= math.log(p / q) + 1e-12
    assert nearest.epsilon_walley <= math.log((1 - q) / q) + 1e-12


def test_floats_are_read_as_the_fraction_the_user_meant():
    assert as_fraction(0.6) == Fraction(3, 5)
    assert as_fraction(2 / 3) == Fraction(2, 3)
    assert as_fraction("0.35") == Fraction(7, 20)
    assert as_fraction(0.1 + 0.2) == Fraction("0.30000000000000004")


def test_bad_designs_are_refused_before_searching():
    with pytest.raises(ParameterError, match=r"p \(0.2\) must be greater than q \(0.4\)"):
        find_die_design(0.2, 0.4)
    with pytest.raises(ParameterError, match=r"probability \('abc'\) is not a number"):
        find_die_design("abc", 0.1)
