"""Privacy losses of numeric-answer designs: exact by enumeration, on both sides of the exact
boundary, and the rules for continuous scramblers.

The oracle for discrete scramblers is surveykit's evidential mechanism
(:class:`~surveykit.privacy.evidential.EvidentialMechanism`), which enumerates every event
of the answers (not only single answers), built from the test's own enumeration of
P(answer | true value) (tests/quantitative_exact.py), with "don't know" as the focal set of
all answers.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from quantitative_exact import CASES, exact_answers

from surveykit.designs import make_design
from surveykit.designs.quantitative_privacy import MAX_ENUMERATION
from surveykit.errors import ParameterError
from surveykit.privacy.evidential import EvidentialMechanism

F = Fraction
RULES = {name: rules for name, _, rules in CASES}


def evidential(rules, values, d: Fraction) -> EvidentialMechanism:
    tables = {y: exact_answers(rules, y) for y in values}
    outputs = sorted({z for table in tables.values() for z in table})
    masses = [[float((1 - d) * tables[y].get(z, F(0))) for z in outputs] + [float(d)]
              for y in values]
    return EvidentialMechanism(inputs=tuple(values), outputs=tuple(outputs),
                               focal_sets=[{z} for z in outputs] + [set(outputs)],
                               masses=masses)


def eriksson_rules(p: Fraction, cards) -> list:
    deck = [(F(v), F(sum(1 for c in cards if c == v), len(cards))) for v in sorted(set(cards))]
    return [(p, {}, lambda y, draws: y), (1 - p, {"S": deck}, lambda y, draws: draws["S"])]


@pytest.mark.parametrize("d", [F(0), F(1, 5)])
@pytest.mark.parametrize(("p", "cards", "low", "high", "decimals"), [
    (F(1, 2), [0, 1, 2, 3], 0, 3, 0),                     # the deck covers the range
    (F(1, 3), [0, 1, 1, 2, 3], 0, 3, 0),                  # unequal cards
    (F(3, 5), [0, 1, 2, 3, 4, 5, 6], 2, 4, 0),            # the deck covers more than the range
    (F(1, 4), [0, 0.1, 0.2, 0.3], 0, 0.3, 1),             # decimals: values 0, 0.1, 0.2, 0.3
    (F(1, 4), [0, 0.5], 0, 0.5, 1),                       # 0.1 is no card: infinite
    (F(1, 2), [0, 1, 3], 0, 3, 0),                        # a value the deck lacks: infinite
])
def test_eriksson_loss_is_the_evidential_mechanism_s(p, cards, low, high, decimals, d):
    design = make_design("eriksson", p=float(p), scrambler=cards, dont_know=float(d))
    loss = design.privacy_loss(low, high, decimals)
    step = F(1, 10 ** decimals)
    values = [F(low) + k * step for k in range(int((F(str(high)) - F(low)) / step) + 1)]
    mechanism = evidential(eriksson_rules(p, [F(str(c)) for c in cards]), values, d)
    if len(mechanism.outputs) <= 16:
        assert loss.shafer == pytest.approx(mechanism.epsilon_shafer(), rel=1e-12)
        assert loss.walley == pytest.approx(mechanism.epsilon_walley(), rel=1e-12)
    else:
        # too many answers to enumerate every event: the single answers decide (a union's
        # ratio is a mediant), so Shafer's masses and Walley's singletons suffice
        assert loss.shafer == pytest.approx(mechanism.epsilon_shafer(), rel=1e-12)
    assert loss.method == "enumeration"
    if math.isfinite(loss.shafer):
        assert loss.shafer == pytest.approx(math.log(loss.exact_ratio), rel=1e-15)
        assert loss.walley == pytest.approx(math.log(loss.exact_walley_ratio), rel=1e-15)
    else:
        assert "rules that true value out" in loss.explanation


@pytest.mark.parametrize(("name", "parameters", "rules"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("d", [F(0), F(1, 10)])
def test_every_preset_with_decks_has_the_evidential_mechanism_s_loss(name, parameters, rules,
                                                                     d):
    design = make_design(name, **parameters, dont_know=float(d))
    values = [F(0), F(1), F(2)]
    loss = design.privacy_loss(0, 2, decimals=0)
    mechanism = evidential(rules, values, d)
    assert loss.shafer == pytest.approx(mechanism.epsilon_shafer(), rel=1e-12)
    if len(mechanism.outputs) <= 16:
        assert loss.walley == pytest.approx(mechanism.epsilon_walley(), rel=1e-12)


def test_loss_on_both_sides_of_the_exact_boundary():
    # Eriksson with 4 cards covering 0..3: e^eps = 1 + p 4 / (1 - p); p = 1/3 gives ln 3
    exact = make_design("eriksson", p=1 / 3, scrambler=[0, 1, 2, 3]).privacy_loss(0, 3, 0)
    assert exact.exact_ratio == 3
    assert exact.check(math.log(3)) == pytest.approx(math.log(3))
    with pytest.raises(ParameterError, match=r"^epsilon \(1.09861\) is below the Shafer"):
        exact.check(math.log(3) * (1 - 1e-9))
    above = make_design("eriksson", p=1 / 3 + 1e-9, scrambler=[0, 1, 2, 3]).privacy_loss(0, 3, 0)
    assert above.shafer > math.log(3)
    with pytest.raises(ParameterError, match="is below the Shafer privacy loss"):
        above.check(math.log(3))
    below = make_design("eriksson", p=1 / 3 - 1e-9, scrambler=[0, 1, 2, 3]).privacy_loss(0, 3, 0)
    assert below.check(math.log(3)) < math.log(3)
    # Walley with d = 1/5: ((4/5)(1/3 + 1/6) + 1/5) / ((4/5)(1/6)) = 9/2
    walley = make_design("eriksson", p=1 / 3, scrambler=[0, 1, 2, 3],
                         dont_know=0.2).privacy_loss(0, 3, 0)
    assert walley.exact_walley_ratio == F(9, 2)
    assert walley.check(math.log(4.5), "walley") == pytest.approx(math.log(4.5))
    with pytest.raises(ParameterError, match="below the Walley privacy loss"):
        walley.check(math.log(4.5) * (1 - 1e-9), "walley")


def test_finite_exactly_while_the_deck_covers_every_true_value():
    deck = list(range(11))
    design = make_design("eriksson", p=0.5, scrambler=deck)
    assert math.isfinite(design.privacy_loss(0, 10, 0).shafer)
    # one step beyond the deck: the answer 11 comes only from the true value 11
    beyond = design.privacy_loss(0, 11, 0)
    assert beyond.shafer == math.inf and beyond.walley == math.inf
    assert beyond.explanation.startswith("The answer 11 has probability 1/2 when the true value "
                                         "is 11 and 0 when it is 0")
    # a finer grid than the deck's: 0.5 is a true value no card shows
    assert design.privacy_loss(0, 10, 1).shafer == math.inf
    with pytest.raises(ParameterError, match="no finite Shafer privacy loss"):
        beyond.check(10.0)


def test_continuous_true_values_with_cards_only_are_infinite():
    loss = make_design("eriksson", p=0.5, scrambler=list(range(11))).privacy_loss(0, 10)
    assert loss.shafer == math.inf
    assert "State the values' decimals" in loss.explanation


def test_truthful_branch_with_a_continuous_draw_reveals_itself():
    for design in (make_design("mix_norm", p=0.7, mu=40, sigma=15),
                   make_design("mix_exp", p=0.7, mu=10),
                   make_design("bar_lev", p=0.5, mu=1, sigma=0.5, scrambler="uniform"),
                   make_design("diana_perri_1", p=0.5, mu=[1, 2], sigma=[0.2, 1],
                               scrambler="normal")):
        for decimals in (None, 0):
            loss = design.privacy_loss(0, 100, decimals)
            assert (loss.shafer, loss.walley) == (math.inf, math.inf), design.describe()
            assert "the answer is the true value itself" in loss.explanation


def test_unbounded_range_unknown_or_unstated_distributions_are_infinite():
    laplace = make_design("additive", mu=0, sigma=2, scrambler="laplace")
    assert laplace.privacy_loss(0, math.inf).shafer == math.inf
    assert "unbounded answer reveals itself" in laplace.privacy_loss(-math.inf, 0).explanation
    unknown = make_design("mix_unknown", p=[0.8, 0.3]).privacy_loss(0, 10, 0)
    assert unknown.shafer == math.inf and "unknown distribution" in unknown.explanation
    moments = make_design("eriksson", p=0.5, mu=3.4, sigma=2.87).privacy_loss(0, 10, 0)
    assert moments.shafer == math.inf and "Only the mean and sd of S are stated" in \
        moments.explanation


def laplace_density_ratio_sup(scale: float, low: float, high: float) -> float:
    """sup over answers of ln f(z - low) / f(z - high), on a fine grid beyond both ends."""
    z = np.linspace(low - 50 * scale, high + 50 * scale, 400_001)
    log_ratio = (np.abs(z - high) - np.abs(z - low)) / scale
    return float(np.max(np.abs(log_ratio)))


@pytest.mark.parametrize(("sigma", "low", "high"), [(2.0, 0.0, 10.0), (5.0, -3.0, 4.5)])
def test_additive_laplace_noise_is_the_laplace_mechanism(sigma, low, high):
    design = make_design("additive", mu=0, sigma=sigma, scrambler="laplace")
    loss = design.privacy_loss(low, high)
    scale = sigma / math.sqrt(2)
    assert loss.method == "closed form"
    assert loss.shafer == pytest.approx((high - low) / scale, rel=1e-12)
    assert loss.shafer == pytest.approx(laplace_density_ratio_sup(scale, low, high), rel=1e-9)
    assert loss.walley == loss.shafer          # no don't-know branch
    with_dk = make_design("additive", mu=0, sigma=sigma, scrambler="laplace",
                          dont_know=0.1).privacy_loss(low, high)
    assert with_dk.shafer == loss.shafer and with_dk.walley == math.inf
    assert "could stand for any answer" in with_dk.explanation


@pytest.mark.parametrize(("name", "parameters", "phrase"), [
    ("additive", {"mu": 0, "sigma": 1, "scrambler": "normal"}, "With normal noise"),
    ("additive", {"mu": 0, "sigma": 1, "scrambler": "uniform"}, "smallest possible answer moves"),
    ("additive", {"mu": 1, "scrambler": "exponential"}, "smallest possible answer moves"),
    ("eichhorn_hayre", {"mu": 1, "sigma": 0.3, "scrambler": "uniform"}, "possible answer moves"),
    ("eichhorn_hayre", {"mu": 1, "sigma": 0.3, "scrambler": "normal"}, "its spread grows"),
    ("eichhorn_hayre", {"mu": 2, "scrambler": "exponential"}, "its spread grows"),
    ("saha", {"mu": [1.5, 5.5], "sigma": [(1 / 12) ** 0.5, (81 / 12) ** 0.5],
              "scrambler": "uniform"}, "smallest possible answer moves"),
])
def test_continuous_scrambling_that_reveals_is_infinite_with_its_reason(name, parameters,
                                                                       phrase):
    loss = make_design(name, **parameters).privacy_loss(1, 50)
    assert (loss.shafer, loss.walley) == (math.inf, math.inf)
    assert phrase in loss.explanation


def test_uniform_edges_rule_is_right_on_a_simulation():
    # Saha with W ~ U[1, 2], U ~ U[1, 10]: answers below 2 * 1 + ... occur only for small y
    design = make_design("saha", mu=[1.5, 5.5], sigma=[(1 / 12) ** 0.5, (81 / 12) ** 0.5],
                         scrambler="uniform")
    rng = np.random.default_rng(3)
    small = design.simulate(np.full(100_000, 1.0), rng=rng).answers
    large = design.simulate(np.full(100_000, 5.0), rng=rng).answers
    assert small.min() < 6 <= large.min()     # answers below 6 never come from y = 5
    assert np.mean(small < 6) > 0.01


def test_a_combination_surveykit_does_not_compute_says_so():
    loss = make_design("chaudhuri_christofides", mu=[6, 6], sigma=[3, 3],
                       scrambler=["uniform", "laplace"]).privacy_loss(0, 5)
    assert loss.shafer is None and loss.walley is None and loss.method == "not computed"
    assert "Use cards or dice to get an exact loss" in loss.explanation
    with pytest.raises(ParameterError, match="is not computed"):
        loss.check(1.0)
    assert json.loads(json.dumps(loss.to_dict()))["epsilon_shafer"] is None


def test_one_possible_value_has_no_loss_and_json_says_infinite():
    assert make_design("mix_norm", p=0.5, mu=0, sigma=1).privacy_loss(3, 3).shafer == 0
    data = make_design("mix_norm", p=0.5, mu=0, sigma=1).privacy_loss(0, 3).to_dict()
    assert data["epsilon_shafer"] == "inf" and data["shafer_infinite"] is True
    assert data["epsilon_shafer_finite"] is False


@pytest.mark.parametrize(("low", "high", "decimals", "message"), [
    (5, 1, None, "low (5) must not be above high (1)"),
    (0.25, 1, 1, "low (0.25) must be a multiple of 0.1 with decimals = 1"),
    (0, 1, -1, "decimals (-1) must be a whole number from 0 to 9"),
    ("0", 1, None, "low ('0') must be a number"),
    # the ends' answers (0 and 2) are cards too, so only the whole table would tell
    (0, 2, 7, f"pairs exceed {MAX_ENUMERATION:,}; state a narrower range"),
])
def test_bad_ranges_are_one_line_errors(low, high, decimals, message):
    design = make_design("eriksson", p=0.5, scrambler=[0, 1, 2])
    with pytest.raises(ParameterError) as caught:
        design.privacy_loss(low, high, decimals)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_wide_range_with_a_truthful_branch_is_infinite_at_once_and_says_why():
    """The shortcut (an end's own answer that no card gives) agrees with the whole table on a
    range small enough for both, and answers for a range the table would refuse."""
    from fractions import Fraction

    from surveykit.designs import quantitative_privacy as qp

    design = make_design("eriksson", p=0.6, scrambler=[0, 1000, 5000, 20000])
    parts = qp._parts(design, design.answer_steps(0))
    z, y, p = qp._quickly_ruled_out(parts, 0, 3000, 0)
    table = qp._table(parts, 0, 3000, 0)
    assert table.count[z] < table.size                 # the table agrees it is ruled out
    assert table.largest[z] == (p, y) and p == Fraction(3, 5)
    wide = design.privacy_loss(0, 10 ** 7, 0)
    assert wide.shafer == math.inf and wide.walley == math.inf
    assert "The answer 10000000 has probability 3/5 when the true value is 10000000" \
        in wide.explanation
    # a deck covering the range leaves the shortcut nothing: the table decides
    covering = make_design("eriksson", p=0.5, scrambler=[0, 1, 2])
    assert qp._quickly_ruled_out(qp._parts(covering, covering.answer_steps(0)), 0, 2, 0) is None


def test_the_loss_is_kept_per_design_and_range_and_bad_ranges_still_fail():
    """A second ask (survey add's checks, then the report) reuses the first result; a range
    that equals a kept one only by value (True == 1) or cannot be a key still gets its error."""
    design = make_design("eriksson", p=0.5, scrambler=[0, 1, 2])
    first = design.privacy_loss(0, 2, 1)
    assert make_design("eriksson", p=0.5, scrambler=[0, 1, 2]).privacy_loss(0, 2, 1) is first
    with pytest.raises(ParameterError, match="decimals"):
        design.privacy_loss(0, 2, True)
    with pytest.raises(ParameterError, match="must be a number"):
        design.privacy_loss([0], 2, 1)
