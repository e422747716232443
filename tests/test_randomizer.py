"""The randomizer draws every design's instructions with their exact probabilities from a
secure source, balances groups, and respondent ids are unguessable, unique and easy to type."""

from __future__ import annotations

import itertools
import math
import re
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from surveykit.collection.randomizer import (
    GRID_BITS,
    SystemEntropy,
    balanced_groups,
    draw_instruction_matrix,
    draw_instructions,
    instruction_indices,
    instruction_thresholds,
    question_protocols,
    random_permutation,
    seeded_source,
    uniform_integers,
)
from surveykit.collection.respondent_ids import (
    ID_ALPHABET,
    ID_BITS,
    ID_LENGTH,
    ID_PATTERN,
    new_respondent_ids,
    normalize_respondent_id,
)
from surveykit.designs.base import Instruction
from surveykit.designs.registry import make_design
from surveykit.designs.warner import GeneralizedWarner, Warner
from surveykit.errors import ParameterError

GRID = 2**GRID_BITS
# Designs of every protocol kind: instructions (one and two groups, k categories), per-state
# tables (Kuk's cards: 16 table instructions plus don't know; a custom matrix), combined.
DESIGNS = {
    "generalized_warner": GeneralizedWarner(p=0.6, q=0.2),
    "warner": Warner(p=0.7, dont_know=0.1),
    "fr": make_design("fr", p=[0.1, 0.15, 0.05], categories=["a", "b", "c"], dont_know=0.1),
    "grr": make_design("grr", p=0.55, k=4),
    "uqtknown": make_design("uqtknown", p=[0.7, 1 / 12], dont_know=0.2),
    "mangat": make_design("mangat", p=0.7),
    "sld": make_design("sld", p=[1 / 6, 5 / 6], dont_know=0.1),
    "cdmsym": make_design("cdmsym", p=[0.2, 0.1, 0.1, 0.25]),
    "kuk": make_design("kuk", p=[0.7, 0.3], repetitions=3, dont_know=0.05),
    "custom": make_design("custom", matrix=[[0.6, 0.1, 0.3], [0.3, 0.6, 0.2],
                                            [0.1, 0.3, 0.5]]),
    "crosswise": make_design("crosswise", p=0.25, dont_know=0.15),
}
# Chi-square goodness of fit. The seeded runs are deterministic; their threshold is the
# 0.999 quantile. The unseeded run (operating-system entropy) must not be flaky: 1 - 1e-7.
SEEDED_P = 0.001
UNSEEDED_P = 1e-7
RESPONDENTS = 20_000


def chi_square_pvalue(indices: np.ndarray, instructions) -> float:
    """Goodness of fit of drawn indices to the instructions' probabilities (cells with
    probability 0 must be empty)."""
    observed = np.bincount(indices, minlength=len(instructions))
    expected = np.array([float(i.probability) for i in instructions]) * len(indices)
    assert np.all(observed[expected == 0] == 0)
    used = expected > 0
    if used.sum() < 2:
        return 1.0
    return float(stats.chisquare(observed[used], expected[used]).pvalue)


@pytest.mark.parametrize("name", list(DESIGNS))
def test_instruction_frequencies_of_a_seeded_run_match_every_design(name):
    design = DESIGNS[name]
    groups = balanced_groups(RESPONDENTS, len(design.group_names), rng=seeded_source(1))
    drawn = draw_instruction_matrix([design], groups, rng=seeded_source(20240))
    assert drawn.shape == (RESPONDENTS, 1)
    for g, instructions in enumerate(question_protocols(design, len(design.group_names))):
        mine = drawn[groups == g, 0]
        assert chi_square_pvalue(mine, instructions) > SEEDED_P, (name, g)


def test_the_chi_square_test_detects_a_design_off_by_three_points():
    design = DESIGNS["generalized_warner"]
    indices = draw_instructions(design.protocol.for_group(0), RESPONDENTS,
                                rng=seeded_source(20240))
    wrong = GeneralizedWarner(p=0.57, q=0.2).protocol.for_group(0)
    assert chi_square_pvalue(indices, wrong) < SEEDED_P


def test_two_group_designs_draw_each_groups_own_instructions():
    design = DESIGNS["sld"]  # group 1 truthful 1/6 (of 0.9), group 2 truthful 5/6
    groups = np.repeat([0, 1], RESPONDENTS // 2)
    drawn = draw_instruction_matrix([design, DESIGNS["warner"]], groups,
                                    rng=seeded_source(3))
    truthful = [np.mean(drawn[groups == g, 0] == 0) for g in (0, 1)]
    se = math.sqrt(0.25 / (RESPONDENTS // 2))
    assert abs(truthful[0] - 0.9 / 6) < 4 * se and abs(truthful[1] - 0.9 * 5 / 6) < 4 * se
    # a one-group question draws the same instructions in both groups
    for g in (0, 1):
        assert chi_square_pvalue(drawn[groups == g, 1],
                                 DESIGNS["warner"].protocol.for_group(0)) > SEEDED_P


@pytest.mark.parametrize("name", ["generalized_warner", "sld", "kuk"])
def test_instruction_frequencies_from_operating_system_entropy_match_the_design(name):
    instructions = DESIGNS[name].protocol.for_group(0)
    indices = draw_instructions(instructions, RESPONDENTS)
    assert chi_square_pvalue(indices, instructions) > UNSEEDED_P


def test_columns_of_the_instruction_matrix_are_independent():
    designs = [DESIGNS["generalized_warner"], DESIGNS["fr"]]
    drawn = draw_instruction_matrix(designs, size=RESPONDENTS, rng=seeded_source(5))
    table = np.zeros((3, 5))
    np.add.at(table, (drawn[:, 0], drawn[:, 1]), 1)
    table = table[:, table.sum(axis=0) > 0]
    assert stats.chi2_contingency(table).pvalue > SEEDED_P


# -- exactness of the thresholds -----------------------------------------------------------


def test_dyadic_probabilities_are_exact_on_the_2_to_53_grid():
    assert instruction_thresholds(GeneralizedWarner(p=0.5, q=0.25).protocol.for_group(0)) \
        == (2**52, 3 * 2**51, GRID)
    # forced response 1/8 no, 3/8 yes: truthful 1/2
    assert instruction_thresholds(make_design("fr", p=[0.125, 0.375]).protocol.for_group(0)) \
        == (GRID // 2, GRID // 2 + GRID // 8, GRID)


@pytest.mark.parametrize("name", list(DESIGNS))
def test_every_cumulative_probability_is_within_2_to_the_minus_54(name):
    design = DESIGNS[name]
    for g in range(len(design.group_names)):
        instructions = design.protocol.for_group(g)
        thresholds = instruction_thresholds(instructions)
        assert thresholds[-1] == GRID
        assert all(a <= b for a, b in zip(thresholds, thresholds[1:], strict=False))
        exact = list(itertools.accumulate(i.probability for i in instructions))
        for threshold, cumulative in zip(thresholds, exact, strict=True):
            assert abs(Fraction(threshold, GRID) - cumulative) <= Fraction(1, 2**54)
        # hence each instruction's probability is within 2^-53
        previous = [0, *thresholds[:-1]]
        for t0, t1, instruction in zip(previous, thresholds, instructions, strict=True):
            assert abs(Fraction(t1 - t0, GRID) - instruction.probability) <= Fraction(1, 2**53)


def test_uniforms_at_the_thresholds_pick_the_instruction_above():
    instructions = GeneralizedWarner(p=0.6, q=0.2).protocol.for_group(0)
    t1, t2, _ = instruction_thresholds(instructions)
    uniforms = np.array([0, t1 - 1, t1, t2 - 1, t2, GRID - 1], dtype=np.uint64)
    assert instruction_indices(instructions, uniforms).tolist() == [0, 0, 1, 1, 2, 2]
    # so P(truthful) = t1 / 2^53 exactly: the count of uniforms below t1


def test_impossible_instructions_are_never_drawn():
    assert set(draw_instructions(Warner(p=0.75).protocol.for_group(0), 5000,
                                 rng=seeded_source(1)).tolist()) == {0, 1}
    only = GeneralizedWarner(p=1.0, q=0.0).protocol.for_group(0)
    assert {only[i].kind for i in draw_instructions(only, 500)} == {"truthful"}
    zero = (Instruction("truthful", Fraction(1, 2)), Instruction("opposite", Fraction(0)),
            Instruction("dont_know", Fraction(1, 2)))
    assert set(draw_instructions(zero, 5000, rng=seeded_source(2)).tolist()) == {0, 2}


def test_thirds_are_within_one_grid_step_and_a_zero_rule_gets_an_empty_interval():
    # (also the web page's thresholds: surveykit.collection.webform sends these integers)
    thirds = tuple(Instruction(kind, Fraction(1, 3)) for kind in ("truthful", "opposite",
                                                                  "dont_know"))
    bounds = (0, *instruction_thresholds(thirds))
    for k, instruction in enumerate(thirds):
        assert abs(Fraction(bounds[k + 1] - bounds[k], GRID) - instruction.probability) \
            <= Fraction(1, GRID)
    zero = (Instruction("truthful", Fraction(1, 2)), Instruction("opposite", Fraction(0)),
            Instruction("dont_know", Fraction(1, 2)))
    assert instruction_thresholds(zero) == (GRID // 2, GRID // 2, GRID)


def test_negative_or_no_probabilities_are_refused():
    with pytest.raises(ParameterError, match=r"must be >= 0"):
        instruction_thresholds((Instruction("truthful", Fraction(3, 2)),
                                Instruction("opposite", Fraction(-1, 2))))
    with pytest.raises(ParameterError, match=r"the design has no instructions to draw"):
        instruction_thresholds(())


def test_probabilities_that_do_not_add_up_to_one_are_refused():
    with pytest.raises(ParameterError, match=r"instruction probabilities add up to 0.9, not 1"):
        instruction_thresholds((Instruction("truthful", Fraction(9, 10)),))
    # a custom matrix typed as decimals adds up to 1 within 1e-9: normalized, last = 2^53
    slack = (Instruction("truthful", Fraction(1, 3)), Instruction("opposite", Fraction(
        666_666_667, 1_000_000_000)))
    assert instruction_thresholds(slack)[-1] == GRID


def test_a_survey_group_the_designs_lack_is_refused():
    with pytest.raises(ParameterError, match=r"groups must be group indices 0 to 1"):
        draw_instruction_matrix([DESIGNS["sld"]], np.array([0, 2]), rng=seeded_source(1))


# -- groups ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("size", "count"), [(10, 2), (7, 2), (11, 3), (1, 3), (0, 2)])
def test_groups_are_balanced_exactly(size, count):
    groups = balanced_groups(size, count, rng=seeded_source(size))
    counts = np.bincount(groups, minlength=count)
    assert counts.sum() == size and counts.max() - counts.min() <= (1 if size else 0)


def test_which_groups_get_the_extra_respondent_is_random():
    # 7 respondents, 3 groups: one group gets 3; each group equally often (chi-square)
    larger = [int(np.argmax(np.bincount(balanced_groups(7, 3, rng=seeded_source(s)),
                                        minlength=3))) for s in range(3000)]
    assert stats.chisquare(np.bincount(larger, minlength=3)).pvalue > SEEDED_P


def test_every_order_of_a_balanced_assignment_is_equally_likely():
    # 4 respondents in 2 groups: 6 orders; 6000 seeded runs, chi-square over the orders
    seen = [tuple(balanced_groups(4, 2, rng=seeded_source(s)).tolist()) for s in range(6000)]
    orders = {order: seen.count(order) for order in set(seen)}
    assert len(orders) == 6
    assert stats.chisquare(list(orders.values())).pvalue > SEEDED_P


def test_permutations_are_uniform_and_from_the_secure_source_by_default():
    counts = {}
    for seed in range(6000):
        order = tuple(random_permutation(3, rng=seeded_source(seed)).tolist())
        counts[order] = counts.get(order, 0) + 1
    assert len(counts) == 6 and stats.chisquare(list(counts.values())).pvalue > SEEDED_P
    first, second = random_permutation(50), random_permutation(50)
    assert sorted(first.tolist()) == list(range(50)) and not np.array_equal(first, second)


def test_groups_position_by_position_are_uniform():
    groups = np.stack([balanced_groups(6, 2, rng=seeded_source(s)) for s in range(2000)])
    ones = groups.sum(axis=0)  # each position is in group 2 half the time
    assert np.all(np.abs(ones - 1000) < 4 * math.sqrt(2000 * 0.25))


# -- the sources ----------------------------------------------------------------------------


def test_default_source_is_operating_system_entropy_and_not_reproducible():
    first = uniform_integers(None, 64, bits=53)
    second = uniform_integers(None, 64, bits=53)
    assert first.dtype == np.uint64 and int(first.max()) < 2**53
    assert not np.array_equal(first, second)
    assert repr(SystemEntropy()) == "SystemEntropy()"


def test_every_bit_of_the_secure_source_is_used():
    values = SystemEntropy().uniform_integers(4000, bits=53)
    bits = (values[:, None] >> np.arange(53, dtype=np.uint64)) & np.uint64(1)
    share = bits.mean(axis=0)
    # each bit is Bernoulli(1/2): 6 standard errors of a mean of 4000
    assert np.all(np.abs(share - 0.5) < 6 * 0.5 / np.sqrt(4000))


def test_seeded_source_is_reproducible_and_seed_dependent():
    instructions = DESIGNS["fr"].protocol.for_group(0)
    a = draw_instructions(instructions, 1000, rng=seeded_source(7))
    b = draw_instructions(instructions, 1000, rng=seeded_source(7))
    c = draw_instructions(instructions, 1000, rng=seeded_source(8))
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_unknown_random_source_is_refused():
    import random

    with pytest.raises(ParameterError, match=r"rng \(<random.Random"):
        draw_instructions(DESIGNS["warner"].protocol.for_group(0), 3, rng=random.Random(1))
    with pytest.raises(ParameterError, match=r"seed \(-1\) must be a whole number >= 0"):
        seeded_source(-1)


# -- respondent ids --------------------------------------------------------------


def test_ids_are_unique_of_the_promised_alphabet_and_length():
    ids = new_respondent_ids(100_000)
    assert len(set(ids)) == 100_000
    assert ID_BITS >= 64 and ID_LENGTH == 14
    for respondent_id in ids:
        assert ID_PATTERN.match(respondent_id), respondent_id
    symbols = set("".join(ids).replace("-", ""))
    assert symbols <= set(ID_ALPHABET)
    assert not symbols & set("ILOU")
    assert re.fullmatch(r"\w{4}-\w{4}-\w{4}-\w{2}", ids[0])


def test_id_symbols_are_uniform():
    ids = new_respondent_ids(20_000, rng=seeded_source(11))
    symbols = np.array(list("".join(ids).replace("-", "")))
    counts = np.array([np.count_nonzero(symbols == s) for s in ID_ALPHABET])
    assert len(counts) == 32
    assert stats.chisquare(counts).pvalue > 0.001


def test_new_ids_avoid_excluded_ids():
    first = new_respondent_ids(50, rng=seeded_source(3))
    again = new_respondent_ids(50, rng=seeded_source(3), exclude=set(first))
    assert len(again) == 50 and not set(first) & set(again)


def test_typed_ids_are_normalized_and_bad_ones_explained():
    assert normalize_respondent_id(" 7kq2 m9xd 4frt 8b ") == "7KQ2-M9XD-4FRT-8B"
    assert normalize_respondent_id("7KQ2M9XD4FRTOL") == "7KQ2-M9XD-4FRT-01"
    with pytest.raises(ParameterError, match=r"contains 'U'; ids use only"):
        normalize_respondent_id("7KQ2-M9XD-4FRT-8U")
    with pytest.raises(ParameterError, match=r"has 13 symbols, expected 14"):
        normalize_respondent_id("7KQ2-M9XD-4FRT-8")
