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
    expected = surveykit.estimate(yes=3, no=2, dont_know=1, mechanism=design)
    labels = ["Yes", "No", "Don't know", "YES", " yes ", "no"]
    gaps = [None, np.nan, pd.NA, "", "  "]
    for given in (pd.Series(labels), pd.Series(labels + gaps), labels + gaps,
                  np.array(labels + gaps, dtype=object),
                  pd.Series(labels + [None], dtype="string")):
        result = surveykit.estimate_from_labels(given, mechanism=design)
        assert (result.yes, result.no, result.dont_know) == (3, 2, 1), given
        assert result.pi_hat == expected.pi_hat and result.se == expected.se
