"""The survey database: models, migrations, reads and writes, bulk import.

``surveykit.store`` re-exports the one handle, :class:`~surveykit.store.handle.Database`
(``Database(url).survey(name).read()``), and the functions of
:mod:`surveykit.store.database`, so ``from surveykit.store import open_engine``
keeps working; tables and helpers stay in their modules.
"""

from surveykit.store.database import (
    DEFAULT_URL,
    BulkStatement,
    QuestionCounts,
    SurveySummary,
    SurveyUpdate,
    add_survey,
    code_tallies,
    count_responses,
    display_url,
    engine_for,
    init_database,
    issued_respondent_count,
    list_surveys,
    load_survey,
    open_engine,
    record_generation,
    resolve_url,
    update_survey,
)
from surveykit.store.handle import Database, StoredSurvey, SurveyReading

__all__ = [
    "DEFAULT_URL",
    "BulkStatement",
    "Database",
    "StoredSurvey",
    "SurveyReading",
    "QuestionCounts",
    "SurveySummary",
    "SurveyUpdate",
    "add_survey",
    "code_tallies",
    "count_responses",
    "display_url",
    "engine_for",
    "init_database",
    "issued_respondent_count",
    "list_surveys",
    "load_survey",
    "open_engine",
    "record_generation",
    "resolve_url",
    "update_survey",
]
