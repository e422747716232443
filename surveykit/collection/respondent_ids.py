"""The respondent ids, under the name they had before they moved to :mod:`surveykit.respondent_ids`.

The id format is shared by collection (it issues ids), reading (id columns) and the web
store (typo diagnosis), so it lives below all three; this module keeps the documented
``surveykit.collection.respondent_ids`` imports working.
"""

from surveykit.respondent_ids import (
    CHECK_ALPHABET,
    ID_ALPHABET,
    ID_BITS,
    ID_EXAMPLE,
    ID_GROUPS,
    ID_LENGTH,
    ID_PATTERN,
    LEGACY_GROUPS,
    LEGACY_LENGTH,
    IdDiagnosis,
    RespondentIdTypo,
    check_symbol,
    diagnose_unknown_id,
    new_respondent_ids,
    normalize_respondent_id,
)

__all__ = [
    "CHECK_ALPHABET",
    "ID_ALPHABET",
    "ID_BITS",
    "ID_EXAMPLE",
    "ID_GROUPS",
    "ID_LENGTH",
    "ID_PATTERN",
    "LEGACY_GROUPS",
    "LEGACY_LENGTH",
    "IdDiagnosis",
    "RespondentIdTypo",
    "check_symbol",
    "diagnose_unknown_id",
    "new_respondent_ids",
    "normalize_respondent_id",
]
