"""Numeric-answer designs: moments, unbiased transforms, protocols, registry and errors.

The oracle for every formula is exact enumeration: with card decks as scramblers the answer
distribution given a true value is a finite table of fractions, written here from each
paper's formula (Eriksson: y or S; Eichhorn-Hayre: y S; Diana-Perri 2: W (beta U + (1 -
beta) y); ...), independently of the design's Step machinery.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

import numpy as np
import pytest
from quantitative_exact import CASES, exact_answers, moments

from surveykit.designs import make_design, parse_parameters
from surveykit.designs.quantitative import QUANTITATIVE_PRESETS
from surveykit.designs.registry import design_class, quantitative_design_class
from surveykit.designs.scramblers import Deck
from surveykit.errors import ParameterError

F = Fraction

@pytest.mark.parametrize(("name", "parameters", "rules"), CASES, ids=[c[0] for c in CASES])
def test_moments_of_the_answer_are_the_enumerated_ones(name, parameters, rules):
    design = make_design(name, **parameters)
    m = design.moments()
    for y in (F(-3), F(0), F(1, 2), F(7), F(250)):
        table = exact_answers(rules, y)
        assert sum(table.values()) == 1
        mean, variance = moments(table)
        assert m.mean(float(y)) == pytest.approx(float(mean), rel=1e-12, abs=1e-12)
        assert m.variance(float(y)) == pytest.approx(float(variance), rel=1e-12, abs=1e-9)


@pytest.mark.parametrize(("name", "parameters", "rules"), CASES, ids=[c[0] for c in CASES])
def test_transform_is_unbiased_and_its_variance_estimate_too(name, parameters, rules):
    design = make_design(name, **parameters)
    A, _, _ = design.moments().variance_coefficients
    b = design.moments().b
    for y in (F(0), F(3), F(-2, 3), F(40)):
        table = exact_answers(rules, y)
        zs = np.array([float(z) for z in table])
        ps = np.array([float(p) for p in table.values()])
        r = design.transform(zs)
        assert float(np.dot(ps, r)) == pytest.approx(float(y), abs=1e-9)
        variance = float(np.dot(ps, (r - float(y)) ** 2))
        assert float(design.conditional_variance(float(y))) == pytest.approx(variance, rel=1e-10,
                                                                             abs=1e-10)
        unbiased = float(np.dot(ps, design.transform_variance(r)))
        assert unbiased == pytest.approx(variance, rel=1e-10, abs=1e-10)
        plug_in = float(np.dot(ps, design.transform_variance(r, "plug_in")))
        assert plug_in == pytest.approx(variance * (1 + A / b ** 2), rel=1e-10, abs=1e-10)


def test_mixture_moments_are_the_closed_forms():
    # mix.norm: E = p y + (1 - p) mu, Var = p (1 - p) (y - mu)^2 + (1 - p) sigma^2
    m = make_design("mix_norm", p=0.7, mu=40, sigma=15).moments()
    for y in (0.0, 40.0, 55.5):
        assert m.mean(y) == pytest.approx(0.7 * y + 0.3 * 40)
        assert m.variance(y) == pytest.approx(0.7 * 0.3 * (y - 40) ** 2 + 0.3 * 225)
    e = make_design("mix_exp", p=0.6, mu=10).moments()
    assert e.variance(5.0) == pytest.approx(0.6 * 0.4 * (5 - 10) ** 2 + 0.4 * 100)


@pytest.mark.parametrize("scrambler", ["normal", "uniform", "laplace"])
def test_continuous_scramblers_give_the_moments_a_simulation_shows(scrambler):
    design = make_design("chaudhuri_christofides", mu=[2, 1], sigma=[0.5, 3],
                         scrambler=[scrambler, scrambler])
    rng = np.random.default_rng(20240601)
    n = 200_000
    z = design.simulate(np.full(n, 7.0), rng=rng).answers
    m = design.moments()
    # mean within 4 standard errors; the variance's standard error from the fourth moment
    assert abs(z.mean() - m.mean(7.0)) < 4 * math.sqrt(m.variance(7.0) / n)
    m4 = np.mean((z - z.mean()) ** 4)
    assert abs(z.var() - m.variance(7.0)) < 4 * math.sqrt((m4 - z.var() ** 2) / n)


def test_dont_know_branch_scales_the_steps_and_leaves_the_moments():
    design = make_design("eriksson", p=0.5, scrambler=[0, 1, 3, 5, 8], dont_know=0.2)
    steps = design.protocol.for_group(0)
    assert [(s.kind, s.probability) for s in steps] == [
        ("truthful", F(2, 5)), ("draw", F(2, 5)), ("dont_know", F(1, 5))]
    assert sum(s.probability for s in steps) == 1
    assert design.moments() == make_design("eriksson", p=0.5, scrambler=[0, 1, 3, 5, 8]).moments()


def test_protocol_says_what_to_do_with_exact_probabilities_and_devices():
    design = make_design("eriksson", p=0.5, scrambler=[0, 1, 3, 5, 8], dont_know=0.1)
    assert design.protocol.lines() == [
        "with probability 9/20: Report your true value.",
        "with probability 9/20: Report the number you drew (S), whatever your true value.",
        "with probability 1/10: Answer \"don't know\".",
        "S: a card from a well-shuffled deck of 5 cards numbered 0, 1, 3, 5, 8"]
    dice = make_design("eichhorn_hayre", scrambler="dice")
    assert dice.protocol.lines()[-1] == "S: the sum of 2 fair 6-sided dice"
    assert make_design("diana_perri_2", beta=0.2, mu=[1, 1]).protocol.for_group(0)[0].formula() \
        == "W * (0.8 y + 0.2 U)"


def test_simulated_step_frequencies_follow_the_protocol():
    design = make_design("mix_unknown", p=[0.8, 0.3], dont_know=0.1)
    rng = np.random.default_rng(5)
    n = 40_000
    groups = np.repeat([1, 2], n // 2)
    sim = design.simulate(np.zeros(n), rng=rng, groups=groups, unrelated=np.ones(n))
    for g, p in ((0, 0.8), (1, 0.3)):
        members = sim.groups == g
        truthful = np.mean(sim.answers[members & ~sim.dont_know] == 0)
        assert abs(truthful - p) < 4 * math.sqrt(p * (1 - p) / (0.9 * n / 2))
    assert abs(sim.dont_know.mean() - 0.1) < 4 * math.sqrt(0.09 / n)


# -- registry and errors ------------------------------------------------------------------


def test_every_numeric_preset_is_found_by_make_design_and_round_trips():
    examples = {
        "eriksson": {"p": 0.5, "scrambler": [0, 1, 3, 5, 8]},
        "eichhorn_hayre": {"mu": 1.111111, "sigma": 0.5414886},
        "bar_lev": {"p": 0.6, "mu": 1, "sigma": 1},
        "chaudhuri_christofides": {"mu": [6, 6], "sigma": [10 ** 0.5, 10 ** 0.5]},
        "diana_perri_1": {"p": 0.6, "mu": [5 / 3, 5 / 3]},
        "diana_perri_2": {"beta": 0.8, "mu": [50 / 48, 5 / 3]},
        "saha": {"mu": [1.5, 5.5], "sigma": [(1 / 12) ** 0.5, (81 / 12) ** 0.5],
                 "scrambler": "uniform"},
        "mix_norm": {"p": 0.7, "mu": 40, "sigma": 15},
        "mix_exp": {"p": 0.7, "mu": 10},
        "mix_unknown": {"p": [0.8, 0.3]},
        "additive": {"mu": 0, "sigma": 2, "scrambler": "laplace"},
    }
    assert set(examples) == set(QUANTITATIVE_PRESETS)
    for name, parameters in examples.items():
        design = make_design(name, **parameters)
        again = make_design(name, **design.parameters())
        assert again.describe() == design.describe()
        assert isinstance(hash(design), int)            # frozen: usable as a key
        assert again.moments().b == pytest.approx(design.moments().b, rel=1e-12)
    assert make_design("mix.norm", p=0.7, mu=40, sigma=15).model == "mix_norm"
    assert make_design("DianaPerri1", p=0.6, mu=[1, 1]).model == "diana_perri_1"


def test_numeric_designs_are_refused_where_a_yes_no_design_is_expected():
    with pytest.raises(ParameterError, match=r"^design 'mix_norm' is for numeric answers "
                                             r"\(type = \"number\" questions\), not yes/no"):
        design_class("mix.norm")
    with pytest.raises(ParameterError, match="unknown numeric-answer design 'warner'"):
        quantitative_design_class("warner")


def test_parameters_from_text():
    assert parse_parameters("chaudhuri_christofides", {"mu": "6,6", "sigma": "1,2",
                                                       "scrambler": "uniform|0,1,3"}) == {
        "mu": [6.0, 6.0], "sigma": [1.0, 2.0], "scrambler": ["uniform", [0.0, 1.0, 3.0]]}
    design = make_design("eriksson", **parse_parameters("eriksson", {
        "p": "0.5", "scrambler": "0,1,3,5,8", "dont_know": "0.1"}))
    assert design.scramblers["S"] == Deck.from_cards([0, 1, 3, 5, 8])


@pytest.mark.parametrize(("name", "parameters", "message"), [
    ("eriksson", {"p": 0.5}, "scrambler S needs its mean mu (and standard deviation sigma), "
                             "or its distribution"),
    ("eriksson", {"p": 1.5, "mu": 1}, "p (1.5) must be a probability between 0 and 1"),
    ("eriksson", {"p": 0, "mu": 1}, "p (0) must be greater than 0"),
    ("eriksson", {"p": 0.5, "mu": 3, "scrambler": [0, 1, 3, 5, 8]},
     "mu of S (3) disagrees with its cards deck [0, 1, 3, 5, 8], whose mean is 3.4: give one"),
    ("eriksson", {"p": 0.5, "scrambler": "cauchy", "mu": 0},
     "scrambler of S ('cauchy') must be one of moments, normal, uniform, laplace, exponential"),
    ("mix_unknown", {"p": [0.5, 0.5]}, "p[1] and p[2] (0.5) must differ"),
    ("mix_unknown", {"p": [0.5]}, "p ([0.5]) must have 2 entries, one per group"),
    ("chaudhuri_christofides", {"mu": [6]}, "mu ([6]) must have 2 entries, not 1"),
    ("diana_perri_2", {"beta": 1, "mu": [1, 1]}, "beta (1) must be below 1"),
    ("eichhorn_hayre", {"mu": 0, "sigma": 1}, "the answers do not depend on the true value"),
    ("mix_norm", {"p": 0.5, "mu": 0, "sigma": -1}, "sigma (-1) must be greater than 0"),
    ("mix_norm", {"p": 0.5, "mu": 0, "sigma": 1, "q": 2},
     "design 'mix_norm' has no parameter 'q'; its parameters are p, mu, sigma, dont_know"),
    ("mix_exp", {"p": 0.5, "mu": 1, "dont_know": 1}, "dont_know (1) must be below 1"),
])
def test_bad_parameters_are_one_line_errors_that_name_the_value(name, parameters, message):
    with pytest.raises(ParameterError, match=re.escape(message)) as caught:
        make_design(name, **parameters)
    assert "\n" not in str(caught.value)


def test_a_transform_needs_one_group_and_a_variance_needs_sigma():
    with pytest.raises(ParameterError, match="has no per-answer unbiased transform"):
        make_design("mix_unknown", p=[0.8, 0.3]).transform([1.0])
    with pytest.raises(ParameterError, match="needs every scrambler's sd; give sigma"):
        make_design("saha", mu=[1, 2]).transform_variance([1.0])


def test_numeric_modules_import_nothing_from_storage_collection_reporting_or_the_cli():
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "surveykit"
    modules = [root / "numeric_counts.py", root / "designs" / "scramblers.py",
               root / "designs" / "quantitative.py", root / "designs" / "quantitative_privacy.py",
               *sorted((root / "estimation").glob("quantitative*.py"))]
    forbidden = ("surveykit.store", "surveykit.collection", "surveykit.reporting",
                 "surveykit.cli", "surveykit.workflows", "surveykit.web", "surveykit.counting",
                 "surveykit.definition")
    assert len(modules) == 8
    for path in modules:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for name in names:
                assert not name.startswith(forbidden), f"{path.name} imports {name}"
