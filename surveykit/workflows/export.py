"""Export a stored survey as an XLSForm (ODK Collect, KoboToolbox, SurveyCTO).

The form is built and written by :func:`surveykit.collection.xlsform.export_survey_xlsform`;
this module reads the survey from the store.

>>> # export_xlsform(open_engine("surveykit.db"), "academic_integrity", out="form.xlsx")
"""

from __future__ import annotations

from pathlib import Path

from surveykit import store
from surveykit.collection.xlsform import XLSFormExport, check_export, export_survey_xlsform

__all__ = ["export_xlsform"]


def export_xlsform(engine, survey_name: str, *, out: str | Path, randomize: str = "self",
                   acknowledge_risk: bool = False, templates_dir: str | Path | None = None
                   ) -> XLSFormExport:
    """Load ``survey_name`` from the store and write its XLSForm to ``out``.

    ``randomize="device"`` is refused (ParameterError) unless
    ``acknowledge_risk`` is true: the message states
    :data:`~surveykit.collection.xlsform.DEVICE_RISKS`. ``templates_dir`` is a
    folder with the user's own ``wording.json``.
    """
    # before any work: a mistyped path or a refused mode fails before the store is read
    check_export(out, randomize=randomize, acknowledge_risk=acknowledge_risk)
    survey = store.load_survey(engine, survey_name)
    return export_survey_xlsform(survey, out=out, randomize=randomize,
                                 acknowledge_risk=acknowledge_risk, templates_dir=templates_dir)
