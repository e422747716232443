"""Each erratum in docs/errata.md, shown: the printed formula against the right one.

Items 1, 5, 6, 7 and 8 are shown in test_estimation.py and test_mechanisms.py
(named there); the rest are here.
"""

import math

import numpy as np
import pytest

from surveykit import GeneralizedWarner, conditional_variance

PQ = [(0.6, 0.2), (0.75, 0.25), (0.5, 0.1), (0.45, 0.3)]
PIS = np.linspace(0, 1, 11)


@pytest.mark.parametrize(("p", "q"), PQ)
def test_item_2_second_form_of_theorem_3_10(p, q):
    """q1 q2 / (p - q)^2 = -(pi - 1/2)^2 + (1/4)((p + q)/(p - q))^2.

    The printed -1/4 (pi - 1/2)^2 in the first term is wrong.
    """
    q1, q2, _ = GeneralizedWarner(p=p, q=q).probabilities(PIS)
    left = q1 * q2 / (p - q) ** 2
    right = -((PIS - 0.5) ** 2) + 0.25 * ((p + q) / (p - q)) ** 2
    printed = -0.25 * (PIS - 0.5) ** 2 + 0.25 * ((p + q) / (p - q)) ** 2
    assert left == pytest.approx(right, rel=1e-12)
    assert not np.allclose(left, printed)  # differs wherever pi != 1/2
    assert left[5] == pytest.approx(printed[5])  # ... and agrees at pi = 1/2


@pytest.mark.parametrize(("p", "q"), PQ)
def test_item_3_nu_s_in_section_3_2_has_the_ratio_upside_down(p, q):
    gw = GeneralizedWarner(p=p, q=q)
    n, pi = 500, 0.3
    grab_savage = conditional_variance(gw, pi=pi, n=n, method="grab-savage")
    denominator = (n + 1) * (p + q) - 1
    corrected = (-((pi - 0.5) ** 2) + (p + q) ** 2 / (4 * (p - q) ** 2)) / denominator
    printed = (-((pi - 0.5) ** 2) + (p - q) ** 2 / (4 * (p + q) ** 2)) / denominator
    assert grab_savage == pytest.approx(corrected, rel=1e-12)
    assert abs(printed - grab_savage) > 0.5 * grab_savage  # not a rounding matter
    assert conditional_variance(gw, pi=pi, n=n) == pytest.approx(grab_savage, rel=1e-3)


@pytest.mark.parametrize("c", [0.6, 0.8, 0.95])
@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0])
def test_item_4_design_with_p_plus_q_equal_c(c, epsilon):
    gw = GeneralizedWarner.optimal(epsilon=epsilon, dont_know=1 - c)
    assert gw.p == pytest.approx(c * math.exp(epsilon) / (math.exp(epsilon) + 1), rel=1e-12)
    assert gw.p + gw.q == pytest.approx(c, rel=1e-12)
    printed_p = (1 - c) / (math.exp(-epsilon) + 1)  # right only if c were the don't-know rate
    printed_q = printed_p * math.exp(-epsilon)
    assert printed_p + printed_q != pytest.approx(c)
    assert printed_p + printed_q == pytest.approx(1 - c)


def test_item_5_printed_warner_estimator_is_not_unbiased():
    """Example 3.7 prints n1 / ((p - 1) n) where n1 / ((2p - 1) n) is meant."""
    from scipy import stats

    p, n, pi = 0.7, 50, 0.3
    yes_share = pi * p + (1 - pi) * (1 - p)
    k = np.arange(n + 1)
    weights = stats.binom.pmf(k, n, yes_share)
    corrected = (p - 1) / (2 * p - 1) + k / ((2 * p - 1) * n)
    printed = (p - 1) / (2 * p - 1) + k / ((p - 1) * n)
    assert float(weights @ corrected) == pytest.approx(pi, rel=1e-12)
    assert abs(float(weights @ printed) - pi) > 1
