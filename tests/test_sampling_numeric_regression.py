"""Regression of a numeric question's scrambled answers under a complex sample.

survey_linear_regress is svyglm(r ~ ell + meals, family = gaussian()) on the design's
unbiased transform r = (z - a) / b of Eriksson answers on the api samples (stratified with
fpc, one-stage and two-stage clusters with fpc), "don't know" answers left out as svyglm's
subset design leaves them: coefficients, the sandwich, df.residual and regTermTest's Wald and
working-Wald (Rao-Scott) tests to 1e-6
(tests/reference/survey_api/numeric_regression.json, tools/r_reference/
survey_api_numeric_regression.R).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from surveykit.designs.quantitative import Eriksson, MixUnknown
from surveykit.errors import ParameterError
from surveykit.sampling import SamplingDesign, survey_linear_regress

ROOT = Path(__file__).resolve().parent / "reference" / "survey_api"
REFERENCE = json.loads((ROOT / "numeric_regression.json").read_text(encoding="utf-8"))
SAMPLINGS = {
    "apistrat": SamplingDesign(weight="pw", strata="stype", fpc=("fpc",)),
    "apiclus1": SamplingDesign(weight="pw", clusters=("dnum",), fpc=("fpc",)),
    "apiclus2": SamplingDesign(weight="pw", clusters=("dnum", "snum"), fpc=("fpc1", "fpc2")),
}
CASES = {case["sample"]: case for case in REFERENCE["cases"]}


def design() -> Eriksson:
    spec = REFERENCE["design"]
    return Eriksson(p=spec["p"], scrambler=spec["scrambler"], dont_know=spec["dont_know"])


def answers(sample: str) -> pd.DataFrame:
    frame = pd.read_csv(ROOT / f"numeric_answers_{sample}.csv", dtype={"answer": str})
    frame["answer"] = [a if a == "dont_know" else float(a) for a in frame["answer"]]
    return frame


def test_the_fixture_uses_the_transform_of_the_design():
    spec = REFERENCE["design"]
    assert design().transform([spec["a"]]).tolist() == [0.0]
    assert design().transform([spec["a"] + spec["b"]]).tolist() == pytest.approx([1.0])


@pytest.mark.parametrize("sample", sorted(SAMPLINGS))
def test_equals_svyglm_gaussian_on_the_transform(sample):
    case = CASES[sample]
    fit = survey_linear_regress(answers(sample), "answer ~ ell + meals", scrambled="answer",
                                design=design(), sampling=SAMPLINGS[sample])
    terms = ["(Intercept)", "ell", "meals"]
    assert fit.params.index.tolist() == terms
    assert np.allclose(fit.params.to_numpy(), [case["coefficients"][t] for t in terms],
                       rtol=1e-6, atol=0)
    assert np.allclose(fit.bse.to_numpy(), [case["se"][t] for t in terms], rtol=1e-6, atol=0)
    assert np.allclose(fit.covariance, np.asarray(case["vcov"]["values"]), rtol=1e-6,
                       atol=1e-12)
    assert fit.df_residual == case["df_residual"]
    assert (fit.n, fit.dont_know) == (case["n"], case["dont_know"])
    assert fit.notes == (f"{case['dont_know']} \"don't know\" answer(s) left out: they carry "
                         "no value",)


@pytest.mark.parametrize("sample", sorted(SAMPLINGS))
def test_term_tests_equal_reg_term_test(sample):
    expected = CASES[sample]["reg_term_test"]
    fit = survey_linear_regress(answers(sample), "answer ~ ell + meals", scrambled="answer",
                                design=design(), sampling=SAMPLINGS[sample])
    wald = fit.wald_test(expected["terms"])
    assert (wald.df, wald.ddf) == (expected["wald"]["df"], expected["wald"]["ddf"])
    assert [wald.statistic, wald.p_value] == pytest.approx(
        [expected["wald"]["F"], expected["wald"]["p"]], rel=1e-6)
    working = fit.rao_scott(expected["terms"])
    assert working.ddf == expected["working_wald"]["ddf"]
    assert [working.statistic, working.p_value, *working.lambdas] == pytest.approx(
        [expected["working_wald"]["chisq"], expected["working_wald"]["p"],
         *expected["working_wald"]["lambda"]], rel=1e-6)


def test_the_weights_and_clusters_matter():
    # the same answers as a simple random sample: another variance (the test can fail)
    fit = survey_linear_regress(answers("apiclus1"), "answer ~ ell + meals",
                                scrambled="answer", design=design(),
                                sampling=SamplingDesign(weight="pw"))
    assert not np.allclose(fit.bse.to_numpy(),
                           list(CASES["apiclus1"]["se"].values()), rtol=1e-2)


def test_a_formula_without_the_question_or_a_two_group_design_without_groups_is_refused():
    # as a predictor it is fitted (test_sampling_numeric_predictor.py)
    frame = answers("apistrat")
    with pytest.raises(ParameterError, match="does not use the numeric question 'answer'"):
        survey_linear_regress(frame, "ell ~ meals", scrambled="answer", design=design(),
                              sampling=SAMPLINGS["apistrat"])
    # mix_unknown needs its groups (with them it is fitted: test_sampling_numeric_domains.py)
    with pytest.raises(ParameterError, match="has 2 groups; give the column"):
        survey_linear_regress(frame, "answer ~ ell", scrambled="answer",
                              design=MixUnknown(p=[0.7, 0.3]),
                              sampling=SAMPLINGS["apistrat"])
    with pytest.raises(ParameterError, match="linearization variance only"):
        survey_linear_regress(frame, "answer ~ ell", scrambled="answer", design=design(),
                              sampling=SAMPLINGS["apistrat"], variance="jackknife")
