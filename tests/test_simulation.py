"""The simulation engine against exact moments, and its bookkeeping of empty surveys.

Monte Carlo tolerances are stated in standard errors (k = 4) with fixed seeds:
a correct engine fails one of these checks with probability below 1e-4 each.
"""

import math

import numpy as np
import pytest
from exact import enumerate_conditional_moments

from surveykit import GeneralizedWarner, ParameterError, Warner, conditional_variance
from surveykit.simulation import simulate, simulate_many

K = 4  # tolerance in Monte Carlo standard errors


@pytest.mark.parametrize(
    ("p", "q", "pi", "n"),
    [(0.4, 0.1, 0.5, 3), (0.5, 0.1, 0.3, 5), (0.6, 0.2, 0.1, 20), (0.75, 0.25, 0.3, 100),
     (0.3, 0.05, 0.9, 1000)],
)
def test_simulated_moments_given_answers_match_exact_enumeration_within_4_se(p, q, pi, n):
    mechanism = GeneralizedWarner(p=p, q=q)
    result = simulate(mechanism=mechanism, pi=pi, n=n, reps=40_000,
                      rng=np.random.default_rng(20261122))
    # Theorem 3.9: E[pi_hat | M > 0] = pi
    assert abs(result.mean - pi) <= K * result.mean_se
    exact = conditional_variance(mechanism, pi=pi, n=n)
    if n <= 20:
        _, enumerated = enumerate_conditional_moments(n, str(p), str(q), str(pi))
        assert exact == pytest.approx(float(enumerated), rel=1e-12)
    assert abs(result.variance - exact) <= K * result.variance_se
    assert abs(result.variance_z(exact)) <= K


def test_engine_has_the_power_to_reject_theorem_3_10_as_printed():
    """n = 3, p = 0.4, q = 0.1, pi = 0.5 (docs/errata.md item 1): the printed formula gives
    0.41956, the truth is 0.47950; 200,000 surveys put the printed value > 10 SE away."""
    result = simulate(mechanism=GeneralizedWarner(p=0.4, q=0.1), pi=0.5, n=3, reps=200_000,
                      rng=np.random.default_rng(7))
    assert abs(result.variance_z(0.4794973545)) <= K
    assert abs(result.variance_z(0.4195601852)) > 10


def test_surveys_without_a_yes_or_no_are_counted_and_left_out():
    mechanism = GeneralizedWarner(p=0.2, q=0.1)  # don't know 0.7
    result = simulate(mechanism=mechanism, pi=0.4, n=2, reps=20_000,
                      rng=np.random.default_rng(11))
    answered = result.counts[:, 0] + result.counts[:, 1] > 0
    assert result.answered_reps + result.no_answer_reps == 20_000
    assert result.no_answer_reps == int(np.sum(~answered))
    assert np.all(np.isnan(result.pi_hat[~answered]))
    assert np.all(np.isfinite(result.pi_hat[answered]))
    # P(M = 0) = 0.7^2 = 0.49; binomial SE sqrt(0.49 * 0.51 / 20000) = 0.0035
    assert abs(result.no_answer_reps / 20_000 - 0.49) <= K * 0.0035
    assert np.nanmean(result.pi_hat) == pytest.approx(result.mean)


def test_counts_are_multinomial_with_the_mechanism_cell_probabilities():
    mechanism = GeneralizedWarner(p=0.6, q=0.2)
    n, reps = 50, 10_000
    result = simulate(mechanism=mechanism, pi=0.3, n=n, reps=reps, rng=np.random.default_rng(3))
    assert np.all(result.counts.sum(axis=1) == n)
    for cell, share in zip(result.counts.T, mechanism.probabilities(0.3), strict=True):
        se = math.sqrt(n * share * (1 - share) / reps)
        assert abs(cell.mean() - n * share) <= K * se


def test_warner_surveys_always_have_answers():
    result = simulate(mechanism=Warner(p=0.75), pi=0.2, n=1, reps=1000,
                      rng=np.random.default_rng(5))
    assert result.no_answer_reps == 0
    assert set(np.unique(result.pi_hat)) == {-0.5, 1.5}  # one answer: (p-1)/(2p-1) or p/(2p-1)


def test_many_scenarios_in_one_call_keep_their_own_parameters():
    gw = GeneralizedWarner(p=0.6, q=0.2)
    results = simulate_many(mechanisms=[gw, Warner(p=0.9), gw], pis=[0.1, 0.5, 0.9],
                            ns=[3, 30, 300], reps=500, rng=np.random.default_rng(9))
    assert [(r.mechanism.p, r.pi, r.n) for r in results] == [(0.6, 0.1, 3), (0.9, 0.5, 30),
                                                             (0.6, 0.9, 300)]
    for r in results:
        assert r.counts.shape == (500, 3)
        assert np.all(r.counts.sum(axis=1) == r.n)
    assert results[1].no_answer_reps == 0


def test_the_same_seed_gives_the_same_surveys():
    def run(seed):
        return simulate(mechanism=GeneralizedWarner(p=0.6, q=0.2), pi=0.3, n=40, reps=300,
                        rng=np.random.default_rng(seed))

    assert np.array_equal(run(1).counts, run(1).counts)
    assert not np.array_equal(run(1).counts, run(2).counts)


def test_result_to_dict_is_plain_numbers():
    result = simulate(mechanism=GeneralizedWarner(p=0.6, q=0.2), pi=0.3, n=10, reps=100,
                      rng=np.random.default_rng(1))
    data = result.to_dict()
    assert set(data) == {"p", "q", "pi", "n", "reps", "answered_reps", "no_answer_reps", "mean",
                         "mean_se", "variance", "variance_se"}
    assert all(isinstance(v, int | float) for v in data.values())


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rng": 42}, r"rng \(42\) must be a numpy.random.Generator"),
        ({"reps": 1}, r"reps \(1\) must be a whole number of surveys, at least 2"),
        ({"pi": 1.5}, r"pis \(\[1.5\]\) must be proportions between 0 and 1"),
        ({"n": 0}, r"ns \(\[0\]\) must be whole numbers of respondents"),
        ({"n": 2.5}, r"n \(2.5\) must be a whole number of respondents"),
        ({"mechanism": "warner"}, r"mechanism \('warner'\) must be a one-group yes/no design"),
    ],
)
def test_bad_arguments_are_refused_with_the_value(kwargs, message):
    arguments = {"mechanism": GeneralizedWarner(p=0.6, q=0.2), "pi": 0.3, "n": 10, "reps": 10,
                 "rng": np.random.default_rng(1)} | kwargs
    with pytest.raises(ParameterError, match=message):
        simulate(**arguments)


def test_scenario_lists_must_have_equal_lengths():
    with pytest.raises(ParameterError, match="same length, got 1, 2 and 1"):
        simulate_many(mechanisms=[Warner(p=0.7)], pis=[0.1, 0.2], ns=[5], reps=10,
                      rng=np.random.default_rng(1))
