"""How a response file's columns map to a survey: each column's role, by name, path, text,
tool and the survey's ``[import]`` profile (:mod:`surveykit.definition.profile`).

With no configuration a file's header maps itself: ``respondent_id``,
``group``, and one column per question, named by the question's id, by a
path ending in it (``group/question`` from KoboToolbox, ``group-question``
from ODK Central) or by the question's text (Google Forms); the standard
metadata columns of the tool that wrote the file (:mod:`surveykit.reading.exports`),
columns starting with ``_`` and columns without a name are ignored; the
profile names the rest.

Every failure names the column or label and the profile key that fixes it,
in one line: a column no rule maps, two columns for one question, no
respondent id column.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from surveykit.definition.profile import ImportProfile
from surveykit.errors import CsvImportError, CsvProblem, clip, printable
from surveykit.reading.exports import (
    TOOLS,
    ExportTool,
    canonical_header,
    detect_tool,
    header_paths,
)
from surveykit.vocabulary import canonical_spelling

if TYPE_CHECKING:
    from surveykit.definition.survey import Survey

__all__ = ["MAX_COLUMNS", "ColumnMapping", "ColumnRole", "QuestionResolver", "map_columns"]

# Problems kept for the message; all are counted.
_KEPT = 1000
# Excel's limit (XFD): a wider "header" is a wrong separator or not a response file.
MAX_COLUMNS = 16_384
_LONG = ("respondent_id", "question_id", "answer")


@dataclass(frozen=True)
class ColumnRole:
    """What one column of a file is: ``role`` respondent_id, group, question, question_id,
    answer, covariate or ignored; ``question`` the question id (``covariate`` the
    covariate's name); ``rule`` why (for --dry-run)."""

    index: int
    header: str
    role: str
    question: str | None = None
    rule: str = ""
    covariate: str | None = None


@dataclass(frozen=True)
class ColumnMapping:
    """How a file's header maps to a survey: its layout, the tool that wrote it, each column."""

    layout: str
    tool: str | None
    columns: tuple[ColumnRole, ...]
    missing_labels: frozenset[str] = frozenset()
    notes: tuple[str, ...] = ()

    def index(self, role: str) -> int | None:
        """The column index of ``role`` (respondent_id, group, question_id, answer), or None."""
        return next((c.index for c in self.columns if c.role == role), None)

    def questions(self) -> list[ColumnRole]:
        """The question columns of a wide file, in file order."""
        return [column for column in self.columns if column.role == "question"]

    def covariates(self) -> list[ColumnRole]:
        """The columns of declared covariates, in file order."""
        return [column for column in self.columns if column.role == "covariate"]

    def describe(self) -> list[str]:
        """One line per read column and one per reason for ignoring, for ``import --dry-run``."""
        lines = [f"layout {self.layout}" + (f", written by {self.tool}" if self.tool else "")]
        for column in self.columns:
            if column.role == "ignored":
                continue
            target = {"question": column.question,
                      "covariate": f"covariate {column.covariate}"}.get(column.role,
                                                                          column.role)
            lines.append(f"{target} <- column {column.index + 1} "
                         f"{printable(repr(column.header))} ({column.rule})")
        ignored: dict[str, list[str]] = {}
        for column in self.columns:
            if column.role == "ignored":
                ignored.setdefault(column.rule, []).append(printable(repr(column.header)))
        for rule, headers in ignored.items():
            shown = ", ".join(headers[:12]) + (f" and {len(headers) - 12} more"
                                               if len(headers) > 12 else "")
            lines.append(f"ignored ({rule}): {shown}")
        if self.missing_labels:
            lines.append("labels read as missing: " + ", ".join(
                repr(label) for label in sorted(self.missing_labels)))
        lines += list(self.notes)
        return lines


class QuestionResolver:
    """Question id, path or text (as a header or a long file's question_id) -> question index."""

    def __init__(self, survey: Survey) -> None:
        self._by_id: dict[str, int] = {}
        self._by_text: dict[str, int] = {}
        for index, question in enumerate(survey.questions):
            self._by_id[question.id] = index
            self._by_id.setdefault(question.id.casefold(), index)
            self._by_text.setdefault(canonical_spelling(question.text), index)
        ids = {question.id: index for index, question in enumerate(survey.questions)}
        self._profile = {header: ids[question]
                         for header, question in survey.profile.columns.items()}

    def is_form_field(self, name: str) -> bool:
        """A field of the XLSForm ``surveykit export xlsform`` writes that is not an answer:
        the intro note, a question's die table (one per group: QUESTION_die_N), draw, code
        or rule notes (empty in exports); of a numeric question with "don't know", the typed
        number and the "don't know" choice (QUESTION_value, QUESTION_dk: the field named
        after the question holds the answer), and its scrambling draws (QUESTION_draw_N,
        QUESTION_code_N)."""
        if name == "intro":
            return True
        stem, _, suffix = name.rpartition("_")
        if suffix.isdigit():  # QUESTION_rule_N, QUESTION_die_N, QUESTION_draw_N, ...
            stem, _, rule = stem.rpartition("_")
            return rule in ("rule", "die", "draw", "code") and stem in self._by_id
        return suffix in ("die", "draw", "code", "value", "dk") and stem in self._by_id

    def resolve(self, name: str) -> tuple[int, str] | None:
        """(question index, the rule that matched) or None."""
        folded = canonical_header(name)
        if folded in self._profile:
            return self._profile[folded], "[import.columns]"
        for number, path in enumerate(header_paths(name.strip())):
            found = self._by_id.get(path, self._by_id.get(path.casefold()))
            if found is not None:
                return found, "question id" if number == 0 else "path"
            if canonical_header(path) in self._profile:
                return self._profile[canonical_header(path)], "[import.columns]"
        text = self._by_text.get(folded)
        if text is None and "/" in name:  # KoboToolbox labels: "Group label/Question text"
            text = self._by_text.get(canonical_spelling(name.rsplit("/", 1)[1]))
        if text is not None:
            return text, "question text"
        return None


def _role_name(name: str) -> str:
    return canonical_header(name).replace(" ", "_").replace("-", "_")


def map_columns(header: Sequence[str], survey: Survey, requested: str, source: str,
                unit: str = "line") -> ColumnMapping:
    """Map each column of ``header`` to its role, or raise CsvImportError saying how to fix it.

    ``requested`` is the layout asked for ("auto", "long", "wide"); ``source``
    names the file in messages; ``unit`` is "line" (CSV) or "row" (sheets).
    """
    profile = survey.profile
    tool = detect_tool(header)
    names = {canonical_header(name) for name in header}
    repeat = next((t for t in TOOLS if t.repeat_marker is not None and t.repeat_marker in names),
                  None)
    if repeat is not None:
        raise CsvImportError(source, [], summary=(
            f"{source} is a repeat-group file of an {repeat.name} export (it has a "
            "PARENT_KEY column): its rows are repeats, not respondents; import the main "
            "file of the export (the one without PARENT_KEY) or the export's .zip; "
            "nothing was imported"))
    if len(header) > MAX_COLUMNS:
        raise CsvImportError(source, [], summary=(
            f"{source}: the header has {len(header):,} columns, more than the {MAX_COLUMNS:,} "
            "a spreadsheet can hold; this is not a response file (or its separator is "
            "wrong); nothing was imported"))
    resolver = QuestionResolver(survey)
    roles: list[ColumnRole] = []
    seen: dict[str, ColumnRole] = {}  # a header repeated many times is mapped once
    for index, raw in enumerate(header):
        name = raw.strip()
        known = seen.get(name)
        if known is None:
            known = seen[name] = _column_role(index, name, profile, tool, resolver, survey)
        roles.append(known if known.index == index else replace(known, index=index))
    for role in ("respondent_id", "group"):
        # the profile's column wins over one merely named respondent_id or group
        if any(r.role == role and r.rule.startswith("[import]") for r in roles):
            roles = [ColumnRole(r.index, r.header, "ignored",
                                rule=f"[import] {role} names another column")
                     if r.role == role and not r.rule.startswith("[import]") else r
                     for r in roles]
    layout = "long" if any(r.role in ("question_id", "answer") for r in roles) else "wide"
    if requested not in ("auto", layout):
        read = ", ".join(printable(r.header) for r in roles if r.role != "ignored")
        raise CsvImportError(source, [CsvProblem(1, None, None, f"the header is a {layout} "
                                                 "header", unit=unit)], summary=(
            f"{source}: --layout {requested} was given but the header ({read}) is the "
            f"{layout} layout; nothing was imported"))
    _check_entries(roles, layout, profile, source)
    problems = _header_problems(roles, layout, survey, unit)
    if problems:
        _raise_header(source, problems, roles, survey)
    missing = profile.missing_labels | (tool.missing_labels if tool else frozenset())
    return ColumnMapping(layout=layout, tool=tool.name if tool else None,
                         columns=tuple(roles), missing_labels=frozenset(missing))


def _column_role(index: int, name: str, profile: ImportProfile, tool: ExportTool | None,
                 resolver: QuestionResolver, survey: Survey) -> ColumnRole:
    if not name:
        return ColumnRole(index, name, "ignored", rule="no name")
    for path in header_paths(name):  # the profile may name a column by its path's end
        folded = canonical_header(path)
        if folded in profile.ignore:
            return ColumnRole(index, name, "ignored", rule="[import] ignore")
        if folded == profile.respondent_id:
            return ColumnRole(index, name, "respondent_id", rule="[import] respondent_id")
        if folded == profile.group:
            return ColumnRole(index, name, "group", rule="[import] group")
        if folded in profile.columns:
            return ColumnRole(index, name, "question", profile.columns[folded],
                              "[import.columns]")
        if folded in profile.covariate_columns:
            return ColumnRole(index, name, "covariate", rule="[import.columns]",
                              covariate=profile.covariate_columns[folded])
    declared = {covariate.name.casefold(): covariate.name for covariate in survey.covariates}
    for number, path in enumerate(header_paths(name)):
        role = _role_name(path)
        rule = "column name" if number == 0 else "path"
        if role in ("respondent_id", "group"):
            return ColumnRole(index, name, role, rule=rule)
        if role in ("question_id", "answer") and path == name:
            return ColumnRole(index, name, role, rule="long layout")
        if path.casefold() in declared:
            return ColumnRole(index, name, "covariate",
                              rule="[covariates]" if number == 0 else "[covariates], path",
                              covariate=declared[path.casefold()])
    found = resolver.resolve(name)
    if found is not None:
        question, rule = found
        return ColumnRole(index, name, "question", survey.questions[question].id, rule)
    replicates = survey.sampling.replicate_weights if survey.sampling else None
    if replicates is not None and replicates.pattern is not None:
        # a group path's end too, as other columns: Kobo writes "group_x/repw1"
        for number, path in enumerate(header_paths(name)):
            if replicates.matches(path):
                return ColumnRole(index, name, "covariate",
                                  rule="[sampling] replicate_weights"
                                       + (", path" if number else ""), covariate=path)
    if tool is not None and any(canonical_header(p) in tool.metadata for p in header_paths(name)):
        return ColumnRole(index, name, "ignored", rule=f"{tool.name} metadata")
    if any(resolver.is_form_field(path) for path in header_paths(name)):
        return ColumnRole(index, name, "ignored", rule="a note or draw of surveykit's XLSForm")
    if name.startswith("_"):
        return ColumnRole(index, name, "ignored", rule="name starts with '_'")
    return ColumnRole(index, name, "unmapped")


def _check_entries(roles: list[ColumnRole], layout: str, profile: ImportProfile,
                   source: str) -> None:
    """Refuse the file in one line when an ``[import.columns]`` entry matches no column and
    no other column gives what it maps to: a mistyped or outdated entry, which would
    otherwise leave its question unread without a word.

    Entries for questions are checked in a wide file that reads questions (a
    long file's entries may name question_id cells instead), entries for
    covariates in a file that reads covariates; a file holding neither (a
    register of covariates, a wave of answers only) is not asked for them.
    """
    headers = {canonical_header(path): role.header for role in reversed(roles)
               for path in header_paths(role.header) if role.header}
    unmapped = any(role.role == "unmapped" for role in roles)
    questions = {role.question for role in roles if role.role == "question"}
    covariates = {role.covariate for role in roles if role.role == "covariate"}
    checked = []
    if layout == "wide" and (questions or unmapped):
        checked += [(key, f"question {target!r}", target in questions)
                    for key, target in profile.columns.items()]
    if covariates or unmapped:
        checked += [(key, f"covariate {target!r}", target in covariates)
                    for key, target in profile.covariate_columns.items()]
    for key, target, read in checked:
        if read or key in headers:
            continue
        entry = profile.entries.get(key, key)
        close = difflib.get_close_matches(key, list(headers), n=1, cutoff=0.6)
        if close:
            hint = f"did you mean {printable(repr(clip(headers[close[0]])))}?"
        else:
            names = [printable(repr(clip(name, 40))) for name in dict.fromkeys(
                role.header for role in roles if role.header)]
            hint = "its columns: " + ", ".join(names[:8]) + (
                f" and {len(names) - 8} more" if len(names) > 8 else "")
        raise CsvImportError(source, [], summary=(
            f"{source}: [import.columns] {_toml_key(entry)} matches no column of this file "
            f"({hint}), so no column gives {target}; correct the entry in the survey file and "
            "run 'surveykit survey update FILE'; nothing was imported"),
            kinds={"[import.columns] entry matches no column": 1})


def _header_problems(roles: list[ColumnRole], layout: str, survey: Survey,
                     unit: str) -> list[CsvProblem]:
    problems: list[CsvProblem] = []

    def add(column: str | None, reason: str, kind: str) -> None:
        problems.append(CsvProblem(1, column, None, reason, kind=kind, unit=unit))

    by_role: dict[str, list[ColumnRole]] = {}
    for role in roles:
        key = (f"question:{role.question}" if role.role == "question" else
               f"covariate:{role.covariate}" if role.role == "covariate" else role.role)
        by_role.setdefault(key, []).append(role)
    for key, columns in by_role.items():
        if key in ("ignored", "unmapped") or len(columns) < 2:
            continue
        if len({canonical_header(c.header) for c in columns}) == 1:
            add(columns[0].header, "this column appears more than once", "repeated column")
            continue
        kind, _, target = key.partition(":")
        what = f"{kind} {target!r}" if target else f"the {key}"
        names = " and ".join(printable(repr(clip(c.header))) for c in columns[:3])
        add(columns[1].header, (
            f"columns {names} both map to {what}; keep one, or name the other in "
            f"[import] ignore = [{_toml_key(columns[1].header)}]"),
            f"two columns, one {kind}" if target else "two columns, one role")
    if "respondent_id" not in by_role:
        found = [r.header for r in roles if r.role != "ignored" and r.header]
        shown = ", ".join(printable(clip(h)) for h in found[:10]) + (
            f" and {len(found) - 10} more" if len(found) > 10 else "")
        add(None, f"no respondent_id column (found: {shown or 'none'}); name the column "
                  "respondent_id, or set [import] respondent_id = \"COLUMN\"",
            "no respondent id column")
    if layout == "long":
        for name in _LONG:
            if name not in by_role:
                add(None, f"the long layout needs the column {name}", "missing column")
        for role in roles:
            if role.role in ("question", "unmapped"):
                add(role.header, (
                    "unexpected column in the long layout (respondent_id, question_id, "
                    "answer, group for multi-group designs, and declared covariates); remove "
                    "it, rename it to start with '_', declare it in [covariates], or set "
                    f"[import] ignore = [{_toml_key(role.header)}]"),
                    "unexpected column")
        return problems
    unmapped = [role for role in roles if role.role == "unmapped"]
    known = ", ".join(q.id for q in survey.questions)
    for role in unmapped[:_KEPT]:
        add(role.header, (
            f"unknown question id: survey {survey.name!r} has {known}; map the column with "
            f"[import.columns] {_toml_key(role.header)} = \"QUESTION_ID\", or set [import] "
            f"ignore = [{_toml_key(role.header)}]"), "column no rule maps")
    if len(unmapped) > _KEPT:
        problems.append(CsvProblem(1, None, None, f"and {len(unmapped) - _KEPT} more "
                                   "columns no rule maps", kind="column no rule maps",
                                   unit=unit))
    if not by_role.keys() - {"respondent_id", "group", "ignored", "unmapped"} and not problems:
        add(None, "no question columns", "no question columns")
    return problems


def _toml_key(header: str) -> str:
    """A header as a quoted TOML key, escaped for the terminal too (and clipped if huge)."""
    escaped = clip(header).replace("\\", "\\\\").replace('"', '\\"')
    return printable(f'"{escaped}"')


def _raise_header(source: str, problems: list[CsvProblem], roles: list[ColumnRole],
                  survey: Survey) -> None:
    kinds = Counter(problem.kind for problem in problems)
    first = problems[0]
    if kinds.keys() == {"repeated column"}:
        summary = f"{source}: the header repeats columns; nothing was imported"
    elif kinds.get("column no rule maps"):
        count = sum(1 for role in roles if role.role == "unmapped")
        unmapped = next(p for p in problems if p.kind == "column no rule maps")
        more = f" (and {count - 1} more)" if count > 1 else ""
        summary = (f"{source}: column {printable(repr(clip(unmapped.column or '')))}{more} "
                   "maps to no "
                   f"question of survey {survey.name!r}: set [import.columns] "
                   f"{_toml_key(unmapped.column or '')} = \"QUESTION_ID\", declare it in "
                   "[covariates] if it describes the respondent, or [import] ignore "
                   f"= [{_toml_key(unmapped.column or '')}] in the survey file and run "
                   "'surveykit survey update FILE'; nothing was imported")
    elif first.kind in ("two columns, one question", "two columns, one role",
                        "two columns, one covariate"):
        summary = f"{source}: {first.reason}; nothing was imported"
    elif first.kind == "no respondent id column":
        summary = (f"{source}: wrong header: a response file starts with a header line naming "
                   "respondent_id (or the column set by [import] respondent_id) and either "
                   "question_id, answer (long layout) or one column per question (wide "
                   f"layout: {', '.join(q.id for q in survey.questions)}); "
                   "nothing was imported")
    else:
        summary = f"{source}: wrong header; nothing was imported"
    raise CsvImportError(source, problems, summary=summary, kinds=dict(kinds))
