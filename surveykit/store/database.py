"""The survey database's functions in one namespace: ``from surveykit.store import database``.

The work is split by job; this module hands on their names so that
``database.load_survey`` and friends keep working:

* :mod:`surveykit.store.engines`: URLs, engines, one snapshot per read, one
  transaction per write, bulk statements;
* :mod:`surveykit.store.schema`: the migration check and upgrade;
* :mod:`surveykit.store.surveys`: stored survey definitions;
* :mod:`surveykit.store.issued`: issued questionnaires and their instruction totals;
* :mod:`surveykit.store.answer_counts`: the kept counts a report reads;
* :mod:`surveykit.store.tables`: the Core tables.
"""

from surveykit.counts import QuestionCounts
from surveykit.errors import StoreError
from surveykit.store.answer_counts import (
    count_responses,
    counts_statement,
    known_respondents_statement,
)
from surveykit.store.engines import (
    DEFAULT_URL,
    SQLITE_BUSY_TIMEOUT_SECONDS,
    BulkStatement,
    dialect_insert,
    display_url,
    engine_for,
    open_engine,
    read_snapshot,
    resolve_url,
    write_transaction,
)
from surveykit.store.issued import (
    check_respondent_id,
    code_tallies,
    issued_count,
    issued_groups,
    issued_respondent_count,
    record_generation,
)
from surveykit.store.schema import (
    init_database,
    require_schema,
)
from surveykit.store.surveys import (
    SurveySummary,
    SurveyUpdate,
    add_survey,
    as_utc,
    current_survey_version,
    definition_changes,
    list_surveys,
    load_survey,
    question_ids,
    stored_definition,
    survey_id,
    update_survey,
)
from surveykit.store.tables import (
    answer_counts,
    covariates,
    imports,
    known_respondents,
    questions,
    respondents,
    responses,
    survey_versions,
    surveys,
    tallies,
)

__all__ = [
    "add_survey",
    "answer_counts",
    "as_utc",
    "BulkStatement",
    "check_respondent_id",
    "code_tallies",
    "count_responses",
    "counts_statement",
    "covariates",
    "current_survey_version",
    "DEFAULT_URL",
    "definition_changes",
    "dialect_insert",
    "display_url",
    "engine_for",
    "imports",
    "init_database",
    "issued_count",
    "issued_groups",
    "issued_respondent_count",
    "known_respondents",
    "known_respondents_statement",
    "list_surveys",
    "load_survey",
    "open_engine",
    "question_ids",
    "QuestionCounts",
    "questions",
    "read_snapshot",
    "record_generation",
    "require_schema",
    "resolve_url",
    "respondents",
    "responses",
    "SQLITE_BUSY_TIMEOUT_SECONDS",
    "StoreError",
    "stored_definition",
    "survey_id",
    "survey_versions",
    "surveys",
    "SurveySummary",
    "SurveyUpdate",
    "tallies",
    "update_survey",
    "write_transaction",
]
