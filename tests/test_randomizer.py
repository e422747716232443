"""The randomizer draws T / L / D with the design's probabilities from a secure source,
and respondent ids are unguessable, unique and easy to type."""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from surveykit.collection.randomizer import (
    CODES,
    SystemEntropy,
    code_thresholds,
    draw_code_matrix,
    draw_codes,
    seeded_source,
    tally_codes,
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
from surveykit.designs.warner import GeneralizedWarner, Warner
from surveykit.errors import ParameterError

DESIGNS = [GeneralizedWarner(p=0.6, q=0.2), GeneralizedWarner(p=0.7, q=0.15),
           GeneralizedWarner(p=0.5, q=0.25), GeneralizedWarner(p=0.55, q=0.3)]
# Chi-square goodness of fit, 2 degrees of freedom. The seeded run is
# deterministic; its threshold is the 0.999 quantile (p-value 0.001). The
# unseeded run (operating-system entropy) must not be flaky: 1 - 1e-7 quantile.
SEEDED_LIMIT = stats.chi2.ppf(0.999, df=2)  # 13.8
UNSEEDED_LIMIT = stats.chi2.ppf(1 - 1e-7, df=2)  # 32.2
RESPONDENTS = 20_000


def chi_square(tally: dict[str, int], mechanism: GeneralizedWarner) -> float:
    observed = np.array([tally[c] for c in CODES], dtype=float)
    expected = observed.sum() * np.array([mechanism.p, mechanism.q, mechanism.dont_know])
    return float(((observed - expected) ** 2 / expected).sum())


def test_code_frequencies_of_seeded_run_of_20000_respondents_match_the_design():
    codes = draw_code_matrix(DESIGNS, RESPONDENTS, rng=seeded_source(20240))
    assert codes.shape == (RESPONDENTS, len(DESIGNS))
    for j, mechanism in enumerate(DESIGNS):
        tally = tally_codes(codes[:, j])
        assert sum(tally.values()) == RESPONDENTS
        assert chi_square(tally, mechanism) < SEEDED_LIMIT, (mechanism, tally)
        # The same test detects a design with p and q swapped or a shifted don't-know:
        wrong = GeneralizedWarner(p=mechanism.p - 0.03, q=mechanism.q)
        assert chi_square(tally, wrong) > SEEDED_LIMIT


def test_code_frequencies_from_operating_system_entropy_match_the_design():
    for mechanism in DESIGNS[:2]:
        tally = tally_codes(draw_codes(mechanism, RESPONDENTS))
        assert chi_square(tally, mechanism) < UNSEEDED_LIMIT, (mechanism, tally)


def test_columns_of_the_code_matrix_are_independent():
    codes = draw_code_matrix(DESIGNS[:2], RESPONDENTS, rng=seeded_source(5))
    table = np.array([[np.count_nonzero((codes[:, 0] == a) & (codes[:, 1] == b))
                       for b in CODES] for a in CODES])
    result = stats.chi2_contingency(table)
    assert result.pvalue > 0.001


def test_thresholds_are_exact_on_the_2_to_53_grid():
    assert code_thresholds(GeneralizedWarner(p=0.5, q=0.25)) == (2**52, 3 * 2**51)
    t1, t2 = code_thresholds(GeneralizedWarner(p=0.6, q=0.2))
    assert abs(Fraction(t1, 2**53) - Fraction(0.6)) <= Fraction(1, 2**54)
    assert abs(Fraction(t2, 2**53) - (Fraction(0.6) + Fraction(0.2))) <= Fraction(1, 2**54)


def test_degenerate_designs_never_draw_impossible_codes():
    assert set(draw_codes(Warner(p=0.75), 5000, rng=seeded_source(1)).tolist()) == {"T", "L"}
    assert set(draw_codes(GeneralizedWarner(p=1.0, q=0.0), 500).tolist()) == {"T"}
    assert set(draw_codes(GeneralizedWarner(p=0.5, q=0.0), 5000).tolist()) == {"T", "D"}


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
    design = DESIGNS[0]
    a = draw_codes(design, 1000, rng=seeded_source(7))
    b = draw_codes(design, 1000, rng=seeded_source(7))
    c = draw_codes(design, 1000, rng=seeded_source(8))
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_unknown_random_source_is_refused():
    import random

    with pytest.raises(ParameterError, match=r"rng \(<random.Random"):
        draw_codes(DESIGNS[0], 3, rng=random.Random(1))
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
