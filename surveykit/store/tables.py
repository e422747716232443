"""The Core tables of :mod:`surveykit.store.models`, by their short names."""

from surveykit.store.models import (
    AnswerCountRecord,
    CodeTallyRecord,
    CovariateRecord,
    ImportRecord,
    KnownRespondentRecord,
    QuestionRecord,
    RespondentRecord,
    ResponseRecord,
    SurveyRecord,
    SurveyVersionRecord,
    WeightedCellRecord,
)

__all__ = ["answer_counts", "covariates", "imports", "known_respondents", "questions",
           "respondents", "responses", "survey_versions", "surveys", "tallies",
           "weighted_cells"]

surveys = SurveyRecord.__table__
survey_versions = SurveyVersionRecord.__table__
questions = QuestionRecord.__table__
respondents = RespondentRecord.__table__
tallies = CodeTallyRecord.__table__
imports = ImportRecord.__table__
responses = ResponseRecord.__table__
covariates = CovariateRecord.__table__
answer_counts = AnswerCountRecord.__table__
known_respondents = KnownRespondentRecord.__table__
weighted_cells = WeightedCellRecord.__table__
