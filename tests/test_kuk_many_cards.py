"""Kuk's design with up to 100 cards (issue 22, item 7): RRTCS's bundled Kuk survey draws 25.

The estimate is checked against an independent likelihood maximum (tests/closed_forms.py,
scipy's binomial and brentq); the privacy losses of more than 16 answers, which no longer
enumerate the 2^|Y| events, are checked against the enumeration on small mechanisms and
against the closed form k ln(p1 / p2) of Kuk's design without "don't know".
"""

from __future__ import annotations

import itertools
import math

import closed_forms as cf
import numpy as np
import pytest

from surveykit.designs import make_design
from surveykit.designs.warner import MAX_KUK_CARDS, Kuk
from surveykit.errors import ParameterError
from surveykit.estimation import estimate
from surveykit.privacy.evidential import EvidentialMechanism

TOLERANCE = 1e-8


@pytest.mark.parametrize("cards", [25, 100])
def test_kuk_with_many_cards_equals_an_independent_likelihood_maximum(cards):
    design = Kuk(p=[0.7, 0.3], repetitions=cards)
    rng = np.random.default_rng(cards)
    for pi in (0.05, 0.3, 0.8):
        n = 1500
        red = rng.binomial(cards, np.where(rng.random(n) < pi, 0.7, 0.3))
        counts = np.bincount(red, minlength=cards + 1)
        result = estimate(design=design, counts=dict(zip(design.answer_labels,
                                                         map(int, counts), strict=True)))
        reference, variance = cf.kuk_mle(list(counts), 0.7, 0.3)
        assert result.pi_mle == pytest.approx(reference, abs=TOLERANCE)
        assert result.se == pytest.approx(math.sqrt(variance), rel=1e-6)
        # the data are informative: within 4 standard errors of the truth
        assert abs(result.pi_mle - pi) < 4 * result.se


def test_kuk_takes_up_to_100_cards_and_refuses_more():
    assert MAX_KUK_CARDS == 100
    assert len(make_design("kuk", p=[0.6, 0.4], repetitions=100).answer_labels) == 101
    with pytest.raises(ParameterError, match=r"^repetitions \(101\) must be a whole number "
                                             r"of draws from 1 to 100$"):
        Kuk(p=[0.6, 0.4], repetitions=101)


@pytest.mark.parametrize("cards", [25, 100])
def test_privacy_losses_of_kuk_with_many_cards_are_the_closed_form(cards):
    # without "don't know" every loss is the largest likelihood ratio of one answer, all red
    # cards: (p1 / p2)^k, so k ln(7 / 3); Walley equals Shafer (no mass on all of Y)
    design = Kuk(p=[0.7, 0.3], repetitions=cards)
    expected = cards * math.log(0.7 / 0.3)
    assert design.epsilon_shafer == pytest.approx(expected, rel=1e-9)
    assert design.epsilon_walley == pytest.approx(expected, rel=1e-9)
    # with "don't know" d the Walley loss is ln max (a_x(y) + d) / a_x'(y) at y = k red cards
    d = 0.1
    with_dk = Kuk(p=[0.7, 0.3], repetitions=cards, dont_know=d)
    walley = math.log(((1 - d) * 0.7**cards + d) / ((1 - d) * 0.3**cards))
    assert with_dk.epsilon_walley == pytest.approx(walley, rel=1e-9)


def _mechanism(rng, outputs: int, zeros: bool, whole: bool) -> EvidentialMechanism:
    rows = rng.dirichlet(np.ones(outputs + 1), size=3)
    if zeros:
        rows[:, :outputs][rng.random((3, outputs)) < 0.25] = 0
    if not whole:
        rows[:, outputs] = 0
    rows[rows.sum(axis=1) == 0, 0] = 1  # a row all zeros: all its mass on one answer
    rows /= rows.sum(axis=1, keepdims=True)
    names = tuple(f"y{i}" for i in range(outputs))
    return EvidentialMechanism(inputs=("a", "b", "c"), outputs=names,
                               focal_sets=[{y} for y in names] + [set(names)], masses=rows)


def _enumerated(mechanism: EvidentialMechanism, semantics: str) -> float:
    """The loss by every event (the definition), independently of the module; like the
    module, over every pair of inputs, x = x' included (pl_x / bel_x exceeds 1)."""
    best = 1.0
    outputs = mechanism.outputs
    events = [set(c) for r in range(1, len(outputs) + 1)
              for c in itertools.combinations(outputs, r)]
    for x, y in itertools.product(mechanism.inputs, repeat=2):
        for event in events:
            top = (mechanism.belief(x, event) if semantics == "bel"
                   else mechanism.plausibility(x, event))
            bottom = (mechanism.plausibility(y, event) if semantics == "pl"
                      else mechanism.belief(y, event))
            if bottom <= 0:
                if top > 0:
                    return math.inf
                continue
            best = max(best, top / bottom)
    return math.log(best)


def test_losses_without_events_equal_the_enumeration_of_every_event():
    rng = np.random.default_rng(2022)
    checked = 0
    for trial in range(300):
        mechanism = _mechanism(rng, int(rng.integers(2, 8)), zeros=trial % 3 == 0,
                               whole=trial % 4 != 0)
        for semantics in ("bel", "pl", "walley"):
            fast = mechanism._without_events(semantics)
            slow = _enumerated(mechanism, semantics)
            if math.isinf(slow):
                assert math.isinf(fast), (trial, semantics)
            else:
                assert fast == pytest.approx(slow, rel=1e-9, abs=1e-12), (trial, semantics)
                checked += 1
    assert checked > 500


def test_losses_without_events_are_not_used_for_other_focal_sets():
    mechanism = EvidentialMechanism(inputs=("a", "b"), outputs=("y", "n", "d"),
                                    focal_sets=[{"y"}, {"y", "n"}, {"d"}],
                                    masses=[[0.5, 0.3, 0.2], [0.2, 0.3, 0.5]])
    assert mechanism._without_events("walley") is None
