"""A survey's ``[import]`` profile: how its response files' columns and labels map to it.

With no configuration a file's header maps itself: ``respondent_id``,
``group``, and one column per question, named by the question's id, by a
path ending in it (``group/question`` from KoboToolbox, ``group-question``
from ODK Central) or by the question's text (Google Forms); the standard
metadata columns of the tool that wrote the file (:mod:`surveykit.reading.exports`),
columns starting with ``_`` and columns without a name are ignored. A survey
may add an ``[import]`` profile for the rest::

    [import]
    respondent_id = "Questionnaire number"   # the column with the respondent id
    group = "Form version"                   # the column with the group
    ignore = ["Consent", "Interviewer"]      # more columns to ignore

    [import.columns]                         # header, path or text -> question id
    "Avez-vous déjà copié pendant un examen ?" = "exam_cheating"
    "integrity/q1" = "exam_cheating"
    "Âge (années)" = "age"                   # or -> a declared covariate

    [import.labels]                          # label -> answer, or "missing"
    "Oui" = "yes"
    "Non" = "no"
    "Je ne sais pas" = "dont_know"
    "Pas de réponse" = "missing"

Labels other than "missing" act as aliases of every question (checked
against each question's design, like ``[aliases]``); "missing" makes a
label count as an empty cell.

This module validates the table when the survey is read; applying it to a
file's header is :func:`surveykit.reading.columns.map_columns`, where every
failure names the column or label and the profile key that fixes it, in one
line: a column no rule maps, two columns for one question, no respondent id
column.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from surveykit.errors import allowed_keys, did_you_mean
from surveykit.vocabulary import canonical_spelling

__all__ = ["MISSING", "ImportProfile", "parse_profile"]

# The label target that means "no answer": counted as missing, never stored.
MISSING = "missing"
_PROFILE_KEYS = frozenset({"respondent_id", "group", "ignore", "columns", "labels"})


@dataclass(frozen=True)
class ImportProfile:
    """A survey's ``[import]`` table, validated; names in canonical spelling
    (:func:`~surveykit.vocabulary.canonical_spelling`: headers compare as answers do).

    ``columns`` maps a header (or path, or question text) to a question id,
    ``covariate_columns`` a header to a declared covariate;
    ``labels`` maps a label's canonical spelling to an answer or to
    :data:`MISSING`; ``entries`` gives each header of ``columns`` and
    ``covariate_columns`` as the survey file writes it (for messages).
    """

    respondent_id: str | None = None
    group: str | None = None
    ignore: frozenset[str] = frozenset()
    columns: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    labels: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    covariate_columns: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    entries: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}),
                                       compare=False)

    @property
    def missing_labels(self) -> frozenset[str]:
        """Canonical spellings of the labels that mean "no answer"."""
        return frozenset(label for label, target in self.labels.items() if target == MISSING)

    @property
    def aliases(self) -> dict[str, str]:
        """Labels that name an answer: canonical spelling -> answer (as written)."""
        return {label: target for label, target in self.labels.items() if target != MISSING}


def parse_profile(value: object, question_ids: Sequence[str],
                  fail: Callable[[str, str], Exception], *,
                  covariates: Sequence[str] = ()) -> ImportProfile:
    """Validate an ``[import]`` table; ``fail(key_path, message)`` makes the error to raise.

    Labels are checked against the designs by the caller (they are aliases);
    here only their form, and that question ids (or declared ``covariates``)
    exist.

    >>> def fail(where, message): return ValueError(f"{where}: {message}")
    >>> p = parse_profile({"columns": {"Q 1": "q1"}, "labels": {"Oui": "yes"}}, ["q1"], fail)
    >>> dict(p.columns), dict(p.labels)
    ({'q 1': 'q1'}, {'oui': 'yes'})
    """
    if not isinstance(value, dict):
        raise fail("import", "must be a table: [import] with respondent_id, group, ignore, "
                             "and [import.columns], [import.labels]")
    unknown = sorted(set(value) - _PROFILE_KEYS)
    if unknown:
        raise fail("import", f"unknown key {unknown[0]!r}"
                             f"{allowed_keys(unknown[0], _PROFILE_KEYS)}")
    names = {}
    for key in ("respondent_id", "group"):
        if key in value:
            text = value[key]
            if not isinstance(text, str) or not text.strip():
                raise fail(f"import.{key}", f"{text!r} must be a column name in quotes")
            names[key] = canonical_spelling(text)
    ignore = value.get("ignore", [])
    if not isinstance(ignore, list) or not all(isinstance(n, str) and n.strip() for n in ignore):
        raise fail("import.ignore", f"{ignore!r} must be a list of column names, e.g. "
                                    "ignore = [\"Consent\", \"Interviewer\"]")
    by_folded = {question.casefold(): question for question in question_ids}
    covariate_by_folded = {name.casefold(): name for name in covariates}
    columns: dict[str, str] = {}
    covariate_columns: dict[str, str] = {}
    entries: dict[str, str] = {}
    table = value.get("columns", {})
    if not isinstance(table, dict):
        raise fail("import.columns", "must be a table of header = \"question id\"")
    for header, question in table.items():
        key = f'import.columns."{header}"'
        folded = question.casefold() if isinstance(question, str) else None
        if folded not in by_folded and folded not in covariate_by_folded:
            declared = (f"; or a covariate it declares ({', '.join(covariates)})"
                        if covariates else "")
            hint = did_you_mean(question, [*question_ids, *covariates]) \
                if isinstance(question, str) else ""
            raise fail(key, f"{question!r}{hint} It must be a question id of this survey "
                            f"({', '.join(question_ids)}){declared}" if hint else
                            f"{question!r} must be a question id of this survey "
                            f"({', '.join(question_ids)}){declared}")
        if not canonical_spelling(header):
            raise fail(key, "an empty header cannot be mapped")
        entries[canonical_spelling(header)] = header
        if folded in by_folded:
            columns[canonical_spelling(header)] = by_folded[folded]
        else:
            covariate_columns[canonical_spelling(header)] = covariate_by_folded[folded]
    labels: dict[str, str] = {}
    table = value.get("labels", {})
    if not isinstance(table, dict):
        raise fail("import.labels", "must be a table of label = \"yes\" | \"no\" | "
                                    "\"dont_know\" | \"missing\"")
    for label, target in table.items():
        key = f'import.labels."{label}"'
        if not isinstance(target, str) or not target.strip():
            raise fail(key, f"{target!r} must be an answer in quotes (\"yes\", \"no\", "
                            "\"dont_know\", another answer of the design) or \"missing\"")
        spelling = canonical_spelling(label)
        if not spelling:
            raise fail(key, "an empty cell is already missing; it needs no label")
        labels[spelling] = MISSING if canonical_spelling(target) == MISSING else target
    mapped = set(names.values()) | set(columns) | set(covariate_columns)
    for name in ignore:
        if canonical_spelling(name) in mapped:
            raise fail("import.ignore", f"{name!r} is also mapped to a question or role; "
                                        "a column is either ignored or read")
    return ImportProfile(respondent_id=names.get("respondent_id"), group=names.get("group"),
                         ignore=frozenset(canonical_spelling(n) for n in ignore),
                         columns=MappingProxyType(columns), labels=MappingProxyType(labels),
                         covariate_columns=MappingProxyType(covariate_columns),
                         entries=MappingProxyType(entries))
