"""What field tools put in their response exports, besides the answers: one table per tool.

An import recognizes the tool by a few columns only it writes (its
*signature*), then ignores that tool's standard metadata columns and reads
its labels for "no answer" as missing. Group prefixes need no tool:
``group/question`` (KoboToolbox) and ``group-question`` (ODK Central) are
stripped for every file, because a question id never contains ``/`` or ``-``.

Sources, as each tool documents its exports:

* KoboToolbox, "Exporting and downloading your data" (support.kobotoolbox.org):
  metadata questions ``start``, ``end``, ``today``, ``deviceid`` ...; the
  submission columns ``_id``, ``_uuid``, ``_submission_time``,
  ``_validation_status``, ``_notes``, ``_status``, ``_submitted_by``,
  ``__version__``, ``_tags``, ``_index``; ``/`` between group and question
  names; ``;`` as the default CSV separator.
* ODK Central, "Submissions: CSV export" (docs.getodk.org/central-submissions):
  ``SubmissionDate`` first; ``meta-instanceID``, ``KEY``, ``SubmitterID``,
  ``SubmitterName``, ``AttachmentsPresent``, ``AttachmentsExpected``,
  ``Status``, ``ReviewState``, ``DeviceID``, ``Edits``, ``FormVersion`` last;
  ``-`` between group and field names; each repeat group in a file of its own
  whose rows carry ``PARENT_KEY``.
* Google Forms, "View & manage form responses" (support.google.com/docs):
  ``Timestamp`` (in the form's language) first, ``Email Address`` and
  ``Score`` when collected, then one column per question titled with its text.
* LimeSurvey, "Export responses" (manual.limesurvey.org): ``id``,
  ``submitdate``, ``lastpage``, ``startlanguage``, ``seed``, ``token``,
  ``startdate``, ``datestamp``, ``ipaddr``, ``refurl`` (as question codes) or
  "Response ID", "Date submitted", ... (as full headings); "No answer" where
  a respondent chose not to answer.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from surveykit.vocabulary import canonical_spelling

__all__ = ["TOOLS", "ExportTool", "canonical_header", "detect_tool", "header_paths"]


def canonical_header(header: str) -> str:
    """A column name as headers are compared: trimmed, case-folded, one space.

    >>> canonical_header("  Respondent   ID ")
    'respondent id'
    """
    return canonical_spelling(header)


@dataclass(frozen=True)
class ExportTool:
    """One field tool's export conventions (all names in :func:`canonical_header` form)."""

    name: str
    signature: frozenset[str]
    metadata: frozenset[str]
    missing_labels: frozenset[str] = frozenset()
    # A header that marks a repeat-group file (its rows are not respondents).
    repeat_marker: str | None = None
    # How many signature columns must be present to name the tool.
    needs: int = 2


def _names(*names: str) -> frozenset[str]:
    return frozenset(canonical_header(name) for name in names)


_XLSFORM_META = ("start", "end", "today", "deviceid", "username", "simserial", "subscriberid",
                 "phonenumber", "audit", "instanceID", "instanceName")

KOBOTOOLBOX = ExportTool(
    name="KoboToolbox",
    signature=_names("_uuid", "_submission_time", "_index", "_id", "_validation_status"),
    metadata=_names(*_XLSFORM_META, "_id", "_uuid", "_submission_time", "_validation_status",
                    "_notes", "_status", "_submitted_by", "__version__", "_version_", "_tags",
                    "_index", "_attachments", "_geolocation", "_xform_id_string",
                    "meta/instanceID", "meta/instanceName", "meta/deprecatedID",
                    "meta/rootUuid", "formhub/uuid", "_parent_index", "_parent_table_name",
                    "_submission__id", "_submission__uuid", "_submission__submission_time",
                    "_submission__validation_status", "_submission__notes",
                    "_submission__status", "_submission__submitted_by",
                    "_submission___version__", "_submission__tags"),
)

ODK_CENTRAL = ExportTool(
    name="ODK Central",
    signature=_names("SubmissionDate", "KEY", "SubmitterID", "meta-instanceID", "ReviewState"),
    metadata=_names(*_XLSFORM_META, "SubmissionDate", "meta-instanceID", "meta-instanceName",
                    "meta-audit", "meta-deprecatedID", "meta-entity", "KEY", "SubmitterID",
                    "SubmitterName", "AttachmentsPresent", "AttachmentsExpected", "Status",
                    "ReviewState", "DeviceID", "Edits", "FormVersion", "PARENT_KEY"),
    repeat_marker=canonical_header("PARENT_KEY"),
)

# Google Forms names its first column after the form's language.
_TIMESTAMPS = ("Timestamp", "Horodateur", "Zeitstempel", "Marca temporal",
               "Carimbo de data/hora", "Informazioni cronologiche", "Tijdstempel",
               "Sygnatura czasowa", "Marca de temps", "Tidstämpel", "Tidsstempel")

GOOGLE_FORMS = ExportTool(
    name="Google Forms",
    signature=_names(*_TIMESTAMPS),
    metadata=_names(*_TIMESTAMPS, "Email Address", "Email address", "Adresse e-mail",
                    "E-Mail-Adresse", "Dirección de correo electrónico", "Score", "Punkte",
                    "Points", "Puntuación"),
    needs=1,
)

LIMESURVEY = ExportTool(
    name="LimeSurvey",
    signature=_names("submitdate", "lastpage", "startlanguage", "seed", "Response ID",
                     "Date submitted", "Last page", "Start language"),
    metadata=_names("id", "submitdate", "lastpage", "startlanguage", "seed", "token",
                    "startdate", "datestamp", "ipaddr", "refurl", "interviewtime",
                    "Response ID", "Date submitted", "Last page", "Start language", "Seed",
                    "Token", "Access code", "Date started", "Date last action", "IP address",
                    "Referrer URL", "Total time"),
    missing_labels=_names("No answer", "N/A"),
)

TOOLS: tuple[ExportTool, ...] = (KOBOTOOLBOX, ODK_CENTRAL, GOOGLE_FORMS, LIMESURVEY)


def detect_tool(headers: Iterable[str]) -> ExportTool | None:
    """The tool whose signature columns the header has (the most of them), or None.

    >>> detect_tool(["start", "end", "grp/q1", "_uuid", "_index"]).name
    'KoboToolbox'
    >>> detect_tool(["respondent_id", "q1"]) is None
    True
    """
    names = {canonical_header(header) for header in headers}
    best, best_hits = None, 0
    for tool in TOOLS:
        hits = len(tool.signature & names)
        if hits >= tool.needs and hits > best_hits:
            best, best_hits = tool, hits
    return best


def header_paths(header: str) -> tuple[str, ...]:
    """The names a header may stand for: itself, then its last ``/`` or ``-`` segment.

    >>> header_paths("integrity/exam_cheating"), header_paths("grp-sub-q1")
    (('integrity/exam_cheating', 'exam_cheating'), ('grp-sub-q1', 'q1'))
    """
    names = [header]
    for separator in ("/", "-"):
        if separator in header:
            last = header.rsplit(separator, 1)[1].strip()
            if last and last not in names:
                names.append(last)
    return tuple(names)
