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


def _workflow_files(tmp_path: Path) -> Path:
    """The guide's survey file, and its response file made from the R reference answers as
    the guide says (apistrat with rr_answers' Warner and complex_answers' "don't know")."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## From survey file to report"):]
    survey = re.search(r"^```toml\n(.*?)^```", section, re.S | re.M).group(1)
    (tmp_path / "api_strat.toml").write_text(survey, encoding="utf-8")
    data = ROOT / "tests" / "reference" / "survey_api"
    schools = pd.read_csv(data / "apistrat.csv")
    warner = pd.read_csv(data / "rr_answers_apistrat.csv")
    dont_know = pd.read_csv(data / "complex_answers_apistrat.csv")
    frame = pd.DataFrame({
        "respondent_id": "s" + schools["snum"].astype(str),
        "awards": warner["answer_warner"].map({1: "yes", 0: "no"}),
        "awards_dk": dont_know["answer_gw"].map({1: "yes", 0: "no", 2: "dont_know"}),
        "pw": schools["pw"], "stype": schools["stype"], "fpc": schools["fpc"]})
    frame.to_csv(tmp_path / "api_strat.csv", index=False)
    shown = re.search(r"^```text\n(respondent_id.*?)^\.\.\.", section, re.S | re.M).group(1)
    assert (tmp_path / "api_strat.csv").read_text().startswith(shown)
    return tmp_path


def test_the_worked_workflow_prints_what_the_guide_shows(tmp_path, monkeypatch):
    from migrated import migrated_sqlite
    from store_support import run_cli

    monkeypatch.chdir(_workflow_files(tmp_path))
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## From survey file to report"):]
    url = migrated_sqlite(Path("guide.db"))  # the guide starts from a database at head
    assert run_cli("survey", "add", "api_strat.toml", "--db", url).exit_code == 0
    # the guide's refusals, on copies of the file with one value changed
    frame = pd.read_csv("api_strat.csv", dtype=str, keep_default_na=False)
    for column, value in (("pw", "-3"), ("stype", "K")):
        bad = frame.copy()
        bad.loc[6, column] = value
        bad.to_csv("api_strat.csv", index=False)
        message = run_cli("import", "api_strat.csv", "--survey", "api_strat",
                          "--db", url).output.strip()
        assert message in section, message
    frame.to_csv("api_strat.csv", index=False)
    assert run_cli("import", "api_strat.csv", "--survey", "api_strat",
                   "--db", url).exit_code == 0
    output = run_cli("report", "--survey", "api_strat", "--by", "stype", "--db", url).output
    printed = output[output.index("Complex sample ("):]
    shown = re.search(r"^```text\n(Complex sample \(.*?)^```", section, re.S | re.M).group(1)
    assert printed == shown
    srs = re.search(r"unweighted estimate of `awards` in the part above is (\d\.\d{3}) "
                    r"\(SE (\d\.\d{4})\)", section)
    assert f"pi_mle {float(srs.group(1)):.4f}, se {srs.group(2)}," in output
    r = reference("rr_designs")["results"]["dstrat"]["warner"]
    quoted = re.search(r"gives (\d\.\d{6}) with SE (\d\.\d{6}) and deff\n?\s*(\d\.\d{4})",
                       section)
    assert float(quoted.group(1)) == pytest.approx(r["mean"], abs=5e-7)
    assert float(quoted.group(2)) == pytest.approx(r["mean_se"], abs=5e-7)
    assert float(quoted.group(3)) == pytest.approx(r["deff"], abs=5e-5)


def test_the_readme_quotes_the_guides_table():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### Complex samples"):]
    block = re.search(r"^```text\n(.*?)^```", section, re.S | re.M).group(1)
    guide = DOC.read_text(encoding="utf-8")
    for line in block.splitlines():
        assert line in guide.splitlines(), line
