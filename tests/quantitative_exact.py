"""Exact answer distributions of numeric designs with card decks, from each paper's formula.

Written independently of surveykit's Step machinery: ``CASES`` lists, per preset, the
parameters with decks and the answer rules [(probability, {scrambler: deck}, formula)]
(Eriksson: y or S; Eichhorn-Hayre: y S; Diana-Perri 2: W (beta U + (1 - beta) y); ...);
:func:`exact_answers` enumerates P(Z = z | y) in fractions.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

F = Fraction


def deck(*cards) -> list[tuple[Fraction, Fraction]]:
    return [(F(v), F(w, len(cards))) for v, w in
            {F(c): sum(1 for x in cards if F(x) == F(c)) for c in cards}.items()]


S, S1, S2 = deck(1, 2, 2, 4), deck(0, 1, 3), deck(-1, 5)
W, U = deck(1, 2), deck(0, 3, 3)

# (preset, parameters with decks, answer rules: [(probability, {scrambler: deck}, formula)])
CASES = [
    ("eriksson", {"p": 0.3, "scrambler": [1, 2, 2, 4]},
     [(F(3, 10), {}, lambda y, d: y), (F(7, 10), {"S": S}, lambda y, d: d["S"])]),
    ("eichhorn_hayre", {"scrambler": [1, 2, 2, 4]},
     [(F(1), {"S": S}, lambda y, d: y * d["S"])]),
    ("bar_lev", {"p": 0.25, "scrambler": [1, 2, 2, 4]},
     [(F(1, 4), {}, lambda y, d: y), (F(3, 4), {"S": S}, lambda y, d: y * d["S"])]),
    ("chaudhuri_christofides", {"scrambler": [[0, 1, 3], [-1, 5]]},
     [(F(1), {"S1": S1, "S2": S2}, lambda y, d: y * d["S1"] + d["S2"])]),
    ("diana_perri_1", {"p": 0.6, "scrambler": [[1, 2], [0, 3, 3]]},
     [(F(3, 5), {}, lambda y, d: y),
      (F(2, 5), {"W": W, "U": U}, lambda y, d: d["W"] * (y + d["U"]))]),
    ("diana_perri_2", {"beta": 0.8, "scrambler": [[1, 2], [0, 3, 3]]},
     [(F(1), {"W": W, "U": U},
       lambda y, d: d["W"] * (F(4, 5) * d["U"] + F(1, 5) * y))]),
    ("saha", {"scrambler": [[1, 2], [0, 3, 3]]},
     [(F(1), {"W": W, "U": U}, lambda y, d: d["W"] * (y + d["U"]))]),
    ("additive", {"scrambler": [0, 1, 3]},
     [(F(1), {"S": S1}, lambda y, d: y + d["S"])]),
]


def exact_answers(rules, y: Fraction) -> dict[Fraction, Fraction]:
    """P(Z = z | y) from the paper's formula, by enumeration of the decks."""
    out: dict[Fraction, Fraction] = {}
    for probability, decks, formula in rules:
        names = sorted(decks)
        for combination in itertools.product(*[decks[n] for n in names]):
            draws = {n: v for n, (v, _) in zip(names, combination, strict=True)}
            weight = probability * math.prod((w for _, w in combination), start=F(1))
            z = formula(y, draws)
            out[z] = out.get(z, F(0)) + weight
    return out


def moments(table: dict[Fraction, Fraction], f=lambda z: z) -> tuple[Fraction, Fraction]:
    mean = sum((f(z) * p for z, p in table.items()), F(0))
    return mean, sum(((f(z) - mean) ** 2 * p for z, p in table.items()), F(0))


