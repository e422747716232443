"""The Python API as a notebook user meets it: paths instead of engines, tables in Jupyter."""

from __future__ import annotations

import surveykit
from surveykit import store
from surveykit.store.importer import import_responses


def test_report_for_survey_takes_a_path_and_renders_as_html(tmp_path, sample_survey,
                                                            sample_survey_path):
    path = tmp_path / "notebook.db"
    engine = store.open_engine(str(path))
    store.init_database(engine)
    store.add_survey(engine, sample_survey)
    import_responses(engine, sample_survey_path.parent / "responses_long.csv", sample_survey.name)
    engine.dispose()
    by_path = surveykit.report_for_survey(str(path), sample_survey.name)
    by_url = surveykit.report_for_survey(f"sqlite:///{path}", sample_survey.name)
    assert by_path.to_dict() == by_url.to_dict()
    html = by_path._repr_html_()
    assert html.count("<tr>") == 1 + len(sample_survey.questions)
    assert "exam_cheating" in html and "generalized_warner" in html


def test_notebook_entry_points_are_exported_from_the_package():
    for name in ("report_for_survey", "open_engine", "make_design", "estimate", "Counts",
                 "load_survey_file"):
        assert name in surveykit.__all__
        assert getattr(surveykit, name) is not None


def test_report_html_escapes_a_hostile_title(tmp_path):
    from surveykit.definition.survey import parse_survey
    from surveykit.reporting.report import build_report

    survey = parse_survey('name = "x"\ntitle = "<script>alert(1)</script>"\n[mechanism]\n'
                          'p = 0.6\nq = 0.2\n[[questions]]\nid = "q1"\ntext = "Ever?"\n', "x")
    html = build_report(survey, [])._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_estimate_from_labels_takes_a_series_with_missing_answers_as_the_cli_reads_labels():
    # issue 11: a pandas Series, None and NaN raised AttributeError
    import numpy as np
    import pandas as pd

    design = surveykit.GeneralizedWarner(p=0.6, q=0.2)
    expected = surveykit.estimate(yes=3, no=2, dont_know=1, design=design)
    labels = ["Yes", "No", "Don't know", "YES", " yes ", "no"]
    gaps = [None, np.nan, pd.NA, "", "  "]
    for given in (pd.Series(labels), pd.Series(labels + gaps), labels + gaps,
                  np.array(labels + gaps, dtype=object),
                  pd.Series(labels + [None], dtype="string")):
        result = surveykit.estimate_from_labels(given, design=design)
        assert (result.yes, result.no, result.dont_know) == (3, 2, 1), given
        assert result.pi_hat == expected.pi_hat and result.se == expected.se


# -- issue 22, item 9: counts from pandas, groups and nuisance parameters in HTML, __dir__ ----

_SLD_COUNTS = {1: {"yes": 60, "no": 40}, 2: {"yes": 35, "no": 65}}


def _sld():
    return surveykit.make_design("sld", p=[0.1667, 0.8333])


def test_estimate_takes_counts_as_a_pandas_series_or_dataframe():
    import pandas as pd

    warner = surveykit.GeneralizedWarner(p=0.6, q=0.2)
    one = surveykit.estimate(design=warner, counts={"yes": 30, "no": 50, "dont_know": 20})
    series = surveykit.estimate(design=warner, counts=pd.Series(
        {"yes": 30, "no": 50, "dont_know": 20}))
    assert (series.pi_mle, series.se) == (one.pi_mle, one.se)
    expected = surveykit.estimate(design=_sld(), counts=_SLD_COUNTS)
    frame = pd.DataFrame(_SLD_COUNTS).T  # a row per group, a column per response
    rows = pd.DataFrame({"group": [1] * 100 + [2] * 100,
                         "answer": ["yes"] * 60 + ["no"] * 40 + ["yes"] * 35 + ["no"] * 65})
    for counts in (frame, pd.crosstab(rows.group, rows.answer),
                   rows.groupby("group")["answer"].value_counts()):
        result = surveykit.estimate(design=_sld(), counts=counts)
        assert result.counts.tolist() == expected.counts.tolist(), counts
        assert result.pi_mle == expected.pi_mle
        assert result.parameters == expected.parameters


def test_counts_with_a_missing_pandas_cell_are_refused_with_the_fix():
    import pandas as pd
    import pytest

    from surveykit.errors import ParameterError

    frame = pd.DataFrame({"yes": [60, 35], "no": [40, None]}, index=[1, 2])
    with pytest.raises(ParameterError, match=r"^count of 'no' in group 2 is missing \(NaN\); "
                                             r"fill the missing cells with 0"):
        surveykit.estimate(design=_sld(), counts=frame)
    with pytest.raises(ParameterError, match=r"^counts \(list\) must be"):
        surveykit.estimate(design=_sld(), counts=[60, 40])


def test_html_of_a_two_group_estimate_shows_each_group_and_the_nuisance_parameter():
    # before: one "answers" line with the groups pooled (yes 95, no 105) and no t
    design = surveykit.make_design("sld", p=[0.1667, 0.8333], groups=["short", "long"])
    result = surveykit.estimate(design=design, counts=_SLD_COUNTS)
    html = result._repr_html_()
    assert "answers, group 1 (short)</th><td colspan=\"3\" style=\"text-align:left\">yes 60, " \
           "no 40, dont_know 0 (n = 100)" in html
    assert "answers, group 2 (long)" in html and "yes 35, no 65" in html
    assert "yes 95" not in html
    t = result.parameters["t"]
    assert (f"parameter t</th><td colspan=\"3\" style=\"text-align:left\">"
            f"{t['estimate']:.4f} (std. error {t['se']:.4f})") in html


def test_html_of_a_report_shows_the_groups_and_nuisance_parameters(tmp_path):
    from surveykit.counts import Counts, QuestionCounts
    from surveykit.definition.survey import parse_survey
    from surveykit.reporting.report import build_report

    survey = parse_survey('name = "x"\ntitle = "X"\n[design]\nmodel = "sld"\n'
                          'p = [0.1667, 0.8333]\n[[questions]]\nid = "q1"\ntext = "Ever?"\n', "x")
    counts = [QuestionCounts(question_id="q1", missing=0,
                             counts=Counts.from_mapping(_SLD_COUNTS))]
    report = build_report(survey, counts)
    t = report.questions[0].estimate.parameters["t"]
    html = report._repr_html_()
    assert "<th>other parameters</th>" in html
    assert f"t {t['estimate']:.3f} (se {t['se']:.3f})" in html
    assert "200 (group 1: 100, group 2: 100)" in html


def test_dir_of_the_package_lists_the_lazy_exports_for_tab_completion():
    listed = dir(surveykit)
    for name in surveykit._LAZY:
        assert name in listed, name
    assert "report_for_survey" in listed and "estimate" in listed
