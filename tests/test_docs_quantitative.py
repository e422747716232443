"""docs/designs.md's part on numeric answers: a section and a table row for every preset, and
its numbers recomputed (the ```python blocks run in tests/test_docs_designs.py; the
simulation numbers are checked by the slow suite of tests/test_quantitative_simulations.py).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from test_quantitative_reference import (
    DESIGNS,
    RRTCS,
    SamplingVariance,
    deville_varest,
    read_csv,
    rrtcs_case,
    vartaylor_ratio_estvar,
)

from surveykit.designs.quantitative import QUANTITATIVE_PRESETS
from surveykit.estimation.quantitative import estimate_mean_from_answers, linearize

TEXT = (Path(__file__).resolve().parent.parent / "docs" / "designs.md").read_text(
    encoding="utf-8")
NUMERIC = TEXT[TEXT.index("# Numeric answers"):]


@pytest.mark.parametrize("name", list(QUANTITATIVE_PRESETS))
def test_every_numeric_preset_has_a_section_and_a_row(name):
    assert re.search(rf"^## {name}: ", NUMERIC, re.M), f"no section for {name}"
    assert re.search(rf"^\| `{name}` \|", NUMERIC, re.M), f"no row for {name}"


def test_eriksson_variances_are_the_ones_the_page_states():
    arguments, result, z, pi = rrtcs_case("Eriksson")
    plan = SamplingVariance(of_sum=deville_varest, with_replacement=False)
    ours = estimate_mean_from_answers(DESIGNS["Eriksson"](arguments), z, weights=1 / pi,
                                      population_size=arguments["N"], sampling_variance=plan)
    assert f"RRTCS's variance of the mean is {result['variance']:.6f}, ours " \
           f"{ours.variance:.6f}" in " ".join(NUMERIC.split())


def test_chaudhuri_christofides_numbers_are_the_ones_the_page_states():
    arguments, result, z, pi = rrtcs_case("ChaudhuriChristofides")
    design = DESIGNS["ChaudhuriChristofides"](arguments)
    rows = read_csv(RRTCS / "data" / "ChaudhuriChristofidesDatapij.csv")
    pij = np.array([[float(x) for x in row.values()] for row in rows])
    N = round(float(np.sum(1 / pi)))
    scale = float(np.sum(1 / pi)) ** 2
    estvar = vartaylor_ratio_estvar(pij)(design.transform(z), 1 / pi)
    plug_in = linearize(design, z, weights=1 / pi, randomization_variance="plug_in")
    unbiased = linearize(design, z, weights=1 / pi)
    consistent = (plug_in.randomization_term + estvar * scale) / N ** 2
    ours = (unbiased.randomization_term + estvar * scale) / N ** 2
    text = " ".join(NUMERIC.split())
    for number in (result["variance"], consistent, ours):
        assert f"{number:,.0f} (SE {math.sqrt(number):,.0f})" in text
    assert f"about {round(scale, -4):,.0f} times too small (N = {N})" in text
