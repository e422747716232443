"""docs/complex-samples.md shows real numbers: its Python examples run here (doctest, from the
repository root) and the numbers its prose quotes are recomputed and compared with R's."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pandas as pd
import pytest
from sampling_support import reference

from surveykit.designs import ForcedResponse
from surveykit.estimation import estimate
from surveykit.guides import guide_text
from surveykit.sampling import SamplingDesign, weighted_counts

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "complex-samples.md"


def test_the_examples_run_and_print_what_the_doc_shows(monkeypatch):
    monkeypatch.chdir(ROOT)
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"^```pycon\n(.*?)^```", text, re.S | re.M)
    assert len(blocks) >= 4
    parser = doctest.DocTestParser()
    test = parser.get_doctest("\n".join(blocks), {}, "complex-samples.md", str(DOC), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.failures == 0 and runner.tries > 20


def test_the_quoted_survey_numbers_are_rs():
    text = DOC.read_text(encoding="utf-8")
    r = reference("rr_designs")["results"]["dclus2"]["fr"]
    quoted = re.search(r"is (\d\.\d{4}) with SE (\d\.\d{4}) and deff (\d\.\d\d)", text)
    assert quoted is not None
    assert float(quoted.group(1)) == pytest.approx(r["mean"], abs=5e-5)
    assert float(quoted.group(2)) == pytest.approx(r["mean_se"], abs=5e-5)
    assert float(quoted.group(3)) == pytest.approx(r["deff"], abs=5e-3)
    regression = reference("complex_designs")["regression"]["warner"]["dclus2"]
    for term, value in regression["coefficients"].items():
        row = re.search(rf"^\s*{re.escape(term)}\s+(-?\d\.\d{{4}})\s+(\d\.\d{{4}})", text, re.M)
        assert row is not None, term
        assert float(row.group(1)) == pytest.approx(value, abs=5e-5)
        assert float(row.group(2)) == pytest.approx(regression["se"][term], abs=5e-5)


def test_the_quoted_srs_numbers_are_todays_estimate(monkeypatch):
    monkeypatch.chdir(ROOT)
    schools = pd.read_csv("tests/reference/survey_api/apiclus2.csv")
    answers = pd.read_csv("tests/reference/survey_api/rr_answers_apiclus2.csv")
    schools["answer"] = answers["answer_fr"].map({1: "yes", 0: "no"})
    design = ForcedResponse(p=[1 / 6, 1 / 6])
    counts = weighted_counts(schools, SamplingDesign(clusters=["dnum", "snum"],
                                                     fpc=["fpc1", "fpc2"]),
                             design=design, answer="answer")
    table = counts.count_table()
    srs = estimate(design=design, counts={"yes": int(table[0, 0]), "no": int(table[0, 1])})
    text = DOC.read_text(encoding="utf-8")
    quoted = re.search(r"unweighted counts is (\d\.\d{4}) with SE (\d\.\d{4})", text)
    assert quoted is not None
    assert float(quoted.group(1)) == pytest.approx(srs.pi_mle, abs=5e-5)
    assert float(quoted.group(2)) == pytest.approx(srs.se, abs=5e-5)
    ratio = re.search(r"an SE (\d\.\d) times too small", text)
    assert float(ratio.group(1)) == pytest.approx(reference("rr_designs")["results"]["dclus2"]
                                                  ["fr"]["mean_se"] / srs.se, abs=0.05)


def test_surveykit_docs_has_the_guide():
    assert guide_text("complex-samples").splitlines()[0] == "# Complex samples"
