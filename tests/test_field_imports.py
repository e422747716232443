"""Imports of real exports (KoboToolbox, ODK Central, Google Forms, LimeSurvey), the [import]
profile, versioned survey updates and --dry-run. Fixtures: tests/exports/ (README.md there
has the hand-checked table every fixture must give). Real databases, real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import migrated
import pytest
from click.testing import CliRunner
from sqlalchemy import func, select

from surveykit.cli import main
from surveykit.definition.survey import parse_survey
from surveykit.errors import CsvImportError, StoreError
from surveykit.resources import locate_resource
from surveykit.store import database as store
from surveykit.store.importer import import_responses
from tests.store_support import checked_counts

EXPORTS = Path(__file__).resolve().parent / "exports"
SAMPLE_TOML = (locate_resource("sample_data") / "academic_integrity.toml").read_text("utf-8")
SURVEY = "academic_integrity"

# The hand-checked table (tests/exports/README.md): every fixture holds the same eight
# respondents' answers: (yes, no, dont_know, missing) per question.
EXPECTED = {
    "exam_cheating": (3, 4, 1, 0),
    "plagiarism": (2, 5, 0, 1),
    "contract_cheating": (1, 5, 2, 0),
    "fabricated_data": (1, 5, 1, 1),
}

FIXTURES = [
    # (file, profile appended to the sample survey or None, tool, notes expected)
    ("kobotoolbox_labels.csv", None, "KoboToolbox", 0),
    ("kobotoolbox_values.xlsx", None, "KoboToolbox", 1),
    ("kobotoolbox_legacy.xls", None, "KoboToolbox", 1),
    ("kobotoolbox_french.csv", "french.toml", "KoboToolbox", 0),
    ("odk_central.csv", None, "ODK Central", 0),
    ("odk_central.zip", None, "ODK Central", 1),
    ("google_forms.csv", "google_forms.toml", "Google Forms", 0),
    ("limesurvey.csv", "limesurvey.toml", "LimeSurvey", 0),
]


def survey_text(profile: str | None) -> str:
    if profile is None:
        return SAMPLE_TOML
    return SAMPLE_TOML + "\n" + (EXPORTS / profile).read_text("utf-8")


def counts_of(engine, name: str = SURVEY) -> dict[str, tuple[int, int, int, int]]:
    return {c.question_id: (c.yes, c.no, c.dont_know, c.missing)
            for c in checked_counts(engine, name)}


def stored_rows(engine) -> tuple[int, int]:
    with engine.connect() as conn:
        return (conn.execute(select(func.count()).select_from(store.responses)).scalar_one(),
                conn.execute(select(func.count()).select_from(store.imports)).scalar_one())


def cli(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.mark.parametrize("name, profile, tool, notes", FIXTURES)
def test_each_export_imports_with_the_hand_checked_counts(engine, name, profile, tool, notes):
    store.add_survey(engine, parse_survey(survey_text(profile), name))
    result = import_responses(engine, EXPORTS / name, SURVEY)
    assert (result.rows_read, result.imported, result.missing, result.rejected) == (8, 30, 2, 0)
    assert counts_of(engine) == EXPECTED
    assert result.mapping[0] == f"layout wide, written by {tool}"
    assert len(result.notes) == notes


def test_all_exports_together_add_up(engine):
    """Every fixture uses its own respondent ids, so one survey takes them all; a profile's
    respondent id column does not stop files that name theirs respondent_id."""
    store.add_survey(engine, parse_survey(survey_text("google_forms.toml")))
    names = [name for name, profile, _, _ in FIXTURES if profile is None
             and name != "odk_central.zip"] + ["google_forms.csv"]  # the zip: odk_central.csv
    for name in names:
        assert import_responses(engine, EXPORTS / name, SURVEY).imported == 30
    assert counts_of(engine) == {q: tuple(len(names) * x for x in row)
                                 for q, row in EXPECTED.items()}


def test_the_zip_reads_the_main_file_and_sets_the_repeat_group_file_aside(engine):
    store.add_survey(engine, parse_survey(SAMPLE_TOML, "s"))
    result = import_responses(engine, EXPORTS / "odk_central.zip", SURVEY)
    assert result.notes == ("repeat-group files set aside (their rows are repeats, not "
                            "respondents): odk_central-household-members.csv",)
    with pytest.raises(CsvImportError) as caught:
        import_responses(engine, EXPORTS / "odk_central-household-members.csv", SURVEY)
    assert str(caught.value) == (
        f"{EXPORTS / 'odk_central-household-members.csv'} is a repeat-group file of an ODK "
        "Central export (it has a PARENT_KEY column): its rows are repeats, not respondents; "
        "import the main file of the export (the one without PARENT_KEY) or the export's "
        ".zip; nothing was imported")


@pytest.mark.parametrize("separator, metadata", [
    ("/", ["start", "end", "meta/instanceID", "_id", "_uuid", "_submission_time", "_index"]),
    ("-", ["SubmissionDate", "meta-instanceID", "KEY", "SubmitterID", "SubmitterName",
           "AttachmentsPresent", "AttachmentsExpected", "Status", "ReviewState", "DeviceID",
           "Edits", "FormVersion"]),
])
def test_an_export_of_the_form_export_xlsform_wrote_imports_as_it_is(engine, tmp_path,
                                                                     separator, metadata):
    """Every field of the form becomes a column (notes, draws and codes empty), in a
    group path as KoboToolbox (/) or ODK Central (-) writes it, beside their metadata.
    The fields of the device form and of the self-randomized one (die notes) together."""
    from surveykit.collection.xlsform import build_xlsform

    survey = parse_survey(SAMPLE_TOML)
    store.add_survey(engine, survey)
    fields: list[str] = []
    for randomize in ("device", "self"):
        form = build_xlsform(survey, randomize=randomize, wording_defaults=None)
        fields += [row["name"] for row in form.survey
                   if row.get("type") not in ("begin group", "end group")
                   and row["name"] not in fields]
    assert any(name.endswith("_die") for name in fields)
    header = [*metadata[:1], *(f"data{separator}{name}" for name in fields), *metadata[1:]]
    answers = {"respondent_id": "F-1", "exam_cheating": "yes", "plagiarism": "no",
               "contract_cheating": "dont_know", "fabricated_data": "no"}
    row = [answers.get(name.rsplit(separator, 1)[-1], "") for name in header]
    path = tmp_path / "export.csv"
    path.write_text(",".join(header) + "\n" + ",".join(row) + "\n", encoding="utf-8")
    result = import_responses(engine, path, SURVEY)
    assert (result.imported, result.rejected) == (4, 0)
    assert "ignored (a note or draw of surveykit's XLSForm): 'data" + separator + "intro'" in \
        " ".join(result.mapping)


def test_a_self_randomized_two_group_form_imports_with_its_group_tables(engine, tmp_path):
    """A multi-group self-randomized form has one die note per group (QUESTION_die_N)."""
    from surveykit.collection.xlsform import build_xlsform

    survey = parse_survey((EXPORTS / "two_groups.toml").read_text("utf-8"))
    store.add_survey(engine, survey)
    form = build_xlsform(survey, randomize="self", wording_defaults=None)
    fields = [row["name"] for row in form.survey if row.get("type") not in ("begin group",
                                                                          "end group")]
    assert "exam_cheating_die_1" in fields and "exam_cheating_die_2" in fields
    answers = {"respondent_id": "F-1", "group": "long", "exam_cheating": "yes"}
    path = tmp_path / "export.csv"
    path.write_text(",".join(fields) + "\n" + ",".join(answers.get(f, "") for f in fields)
                    + "\n", encoding="utf-8")
    result = import_responses(engine, path, "two_groups")
    assert (result.imported, result.rejected) == (1, 0)
    counts = store.count_responses(engine, "two_groups")[0].counts.to_dict()
    assert counts == {"2": {"yes": 1}}


def test_a_group_column_read_by_name_from_a_workbook(engine):
    store.add_survey(engine, parse_survey((EXPORTS / "two_groups.toml").read_text("utf-8")))
    result = import_responses(engine, EXPORTS / "kobotoolbox_groups.xlsx", "two_groups")
    assert result.imported == 6
    counts = store.count_responses(engine, "two_groups")[0].counts.to_dict()
    assert counts == {"1": {"yes": 1, "no": 2}, "2": {"yes": 2, "no": 1}}


# -- what no rule maps fails in one line naming the column or label and the profile key --


def test_a_column_no_rule_maps_names_the_column_and_the_profile_keys(engine, tmp_path):
    store.add_survey(engine, parse_survey(SAMPLE_TOML))
    text = (EXPORTS / "kobotoolbox_labels.csv").read_text("utf-8-sig").splitlines()
    text = [line + (";integrity/consent" if i == 0 else ";Yes") for i, line in enumerate(text)]
    path = tmp_path / "kobo.csv"
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    with pytest.raises(CsvImportError) as caught:
        import_responses(engine, path, SURVEY)
    assert str(caught.value).splitlines()[0] == (
        f"{path}: column 'integrity/consent' maps to no question of survey "
        "'academic_integrity': set [import.columns] \"integrity/consent\" = \"QUESTION_ID\", "
        "declare it in [covariates] if it describes the respondent, or [import] ignore = "
        "[\"integrity/consent\"] in the survey file and run 'surveykit "
        "survey update FILE'; nothing was imported:")
    assert stored_rows(engine) == (0, 0)


def test_a_label_no_rule_maps_is_named_with_the_profile_key(engine):
    # the French export with the column mapping but without [import.labels]
    profile = (EXPORTS / "french.toml").read_text("utf-8").split("[import.labels]")[0]
    store.add_survey(engine, parse_survey(SAMPLE_TOML + "\n" + profile))
    with pytest.raises(CsvImportError) as caught:
        import_responses(engine, EXPORTS / "kobotoolbox_french.csv", SURVEY)
    first = str(caught.value).splitlines()[0]
    assert first == (
        f"8 bad rows in {EXPORTS / 'kobotoolbox_french.csv'} (8 not an answer; labels no rule "
        "maps: 'Non' 19, 'Oui' 7, 'Je ne sais pas' 4 (map each with [import.labels] \"LABEL\" "
        "= an answer or \"missing\")); nothing was imported (fix them and import again, or "
        "import the other rows with --skip-invalid --rejects FILE):")
    assert caught.value.problems[0].reason.endswith(
        '[import.labels] "Oui" = one of "yes", "no", "dont_know", "missing"')
    assert stored_rows(engine) == (0, 0)


def test_two_columns_mapped_to_one_question_fail_naming_both(engine, tmp_path):
    store.add_survey(engine, parse_survey(
        SAMPLE_TOML + '\n[import.columns]\n"Q1 (copy)" = "exam_cheating"\n'))
    path = tmp_path / "two.csv"
    path.write_text("respondent_id,exam_cheating,Q1 (copy)\nr1,yes,no\n", encoding="utf-8")
    with pytest.raises(CsvImportError) as caught:
        import_responses(engine, path, SURVEY)
    assert str(caught.value).splitlines()[0] == (
        f"{path}: columns 'exam_cheating' and 'Q1 (copy)' both map to question "
        "'exam_cheating'; keep one, or name the other in [import] ignore = [\"Q1 (copy)\"]; "
        "nothing was imported:")


def test_no_respondent_id_column_says_which_profile_key_to_set(engine):
    store.add_survey(engine, parse_survey(SAMPLE_TOML))
    with pytest.raises(CsvImportError) as caught:
        import_responses(engine, EXPORTS / "google_forms.csv", SURVEY)
    assert 'set [import] respondent_id = "COLUMN"' in caught.value.problems[0].reason
    assert "found: Questionnaire number, Have you ever copied" in caught.value.problems[0].reason


@pytest.mark.parametrize("profile, key, message", [
    ('[import]\nrespondent = "x"\n', "import", "unknown key 'respondent'"),
    ('[import.columns]\n"Q" = "nope"\n', 'import.columns."Q"', "'nope' must be a question id"),
    ('[import.labels]\n"Oui" = "peut-être"\n', 'import.labels."Oui"',
     "'peut-être' must be one of the design's answers"),
    ('[import]\nignore = "x"\n', "import.ignore", "'x' must be a list of column names"),
    ('[import]\nrespondent_id = "Id"\nignore = ["Id"]\n', "import.ignore",
     "'Id' is also mapped"),
])
def test_a_bad_profile_is_refused_at_the_door_with_its_key(profile, key, message):
    with pytest.raises(Exception) as caught:
        parse_survey(SAMPLE_TOML + "\n" + profile, "s.toml")
    assert str(caught.value).startswith(f"s.toml: {key}: {message}")


# -- survey update: versioned, only the mapping and added aliases -------------------------


def test_survey_update_adds_a_version_and_imports_keep_theirs(engine):
    store.add_survey(engine, parse_survey(SAMPLE_TOML))
    first = import_responses(engine, EXPORTS / "kobotoolbox_labels.csv", SURVEY)
    with pytest.raises(CsvImportError):
        import_responses(engine, EXPORTS / "kobotoolbox_french.csv", SURVEY)
    french = parse_survey(survey_text("french.toml"))
    update = store.update_survey(engine, french)
    assert (update.version, update.previous, update.changed) == (2, 1, ("[import]",))
    assert store.update_survey(engine, french).version == 2  # the same file: nothing changes
    second = import_responses(engine, EXPORTS / "kobotoolbox_french.csv", SURVEY)
    assert (first.survey_version, second.survey_version) == (1, 2)
    with engine.connect() as conn:
        versions = conn.execute(select(store.imports.c.file_name, store.imports.c.survey_version)
                                .order_by(store.imports.c.id)).all()
    assert [tuple(v) for v in versions] == [("kobotoolbox_labels.csv", 1),
                                            ("kobotoolbox_french.csv", 2)]
    assert store.load_survey(engine, SURVEY).profile == french.profile
    assert counts_of(engine) == {q: tuple(2 * x for x in row) for q, row in EXPECTED.items()}


@pytest.mark.parametrize("edit, message", [
    (("p = 0.7\nq = 0.15", "p = 0.75\nq = 0.15"),
     "questions[1].mechanism.p differs from the stored definition"),
    (('id = "plagiarism"\ntext = "Have you ever submitted', 'id = "plagiarism"\ntext = "Did you '
                                                             'ever submit'),
     "questions[1].text differs from the stored definition"),
    (('"made up" = "yes"', '"made up" = "no"'),
     "questions[id = \"fabricated_data\"].aliases.\"made up\" changes from 'yes' to 'no'"),
    (('"no, never" = "no"\n', ''), "aliases.\"no, never\" = 'no' was removed"),
])
def test_survey_update_refuses_anything_but_the_mapping_and_added_aliases(engine, edit, message):
    store.add_survey(engine, parse_survey(SAMPLE_TOML))
    old, new = edit
    assert old in SAMPLE_TOML
    with pytest.raises(StoreError) as caught:
        store.update_survey(engine, parse_survey(SAMPLE_TOML.replace(old, new, 1)))
    assert f"survey 'academic_integrity' cannot be updated: {message}" in str(caught.value)
    assert store.load_survey(engine, SURVEY).source == SAMPLE_TOML


def test_survey_add_of_a_mapping_change_points_to_survey_update(engine):
    store.add_survey(engine, parse_survey(SAMPLE_TOML))
    with pytest.raises(StoreError, match="run 'surveykit survey update FILE' to store it as a "
                                         "new version"):
        store.add_survey(engine, parse_survey(survey_text("google_forms.toml")))


def test_cli_survey_update(tmp_path):
    db = f"sqlite:///{tmp_path / 's.db'}"
    base, french = tmp_path / "base.toml", tmp_path / "french.toml"
    base.write_text(SAMPLE_TOML, encoding="utf-8")
    french.write_text(survey_text("french.toml"), encoding="utf-8")
    migrated.migrated_sqlite(Path(db.removeprefix("sqlite:///")))
    assert cli("survey", "add", str(base), "--db", db).exit_code == 0
    result = cli("survey", "update", str(french), "--db", db)
    assert result.exit_code == 0
    assert result.stdout == ("Updated survey 'academic_integrity' to version 2 ([import] "
                             "changed); earlier imports keep version 1 or before.\n")
    again = cli("survey", "update", str(french), "--db", db, "--format", "json")
    assert json.loads(again.stdout)["version"] == 2
    assert cli("survey", "update", "--help").exit_code == 0


# -- import --dry-run ------------------------------------------------------------------------


def test_dry_run_shows_the_mapping_and_counts_and_changes_nothing(tmp_path):
    db = f"sqlite:///{tmp_path / 's.db'}"
    path = tmp_path / "survey.toml"
    path.write_text(SAMPLE_TOML, encoding="utf-8")
    migrated.migrated_sqlite(Path(db.removeprefix("sqlite:///")))
    cli("survey", "add", str(path), "--db", db)
    kobo = EXPORTS / "kobotoolbox_labels.csv"
    result = cli("import", str(kobo), "--survey", SURVEY, "--db", db, "--dry-run")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[:4] == [f"Dry run: {kobo} into 'academic_integrity'; nothing will be changed.",
                         "Columns:", "  layout wide, written by KoboToolbox",
                         "  respondent_id <- column 5 'integrity/respondent_id' (path)"]
    assert ("Would import (wide layout, survey version 1): 8 rows read, 30 answers added, "
            "0 unchanged, 0 replaced, 0 rows refused (changed answers), 2 missing (empty "
            "cells), 0 rows rejected.") in lines
    assert lines[-5:-1] == ["  exam_cheating: yes +3, no +4, dont_know +1",
                            "  plagiarism: yes +2, no +5", "  contract_cheating: yes +1, no +5, "
                            "dont_know +2", "  fabricated_data: yes +1, no +5, dont_know +1"]
    assert lines[-1] == "Dry run: nothing was changed."
    engine = store.open_engine(db)
    assert stored_rows(engine) == (0, 0)
    real = cli("import", str(kobo), "--survey", SURVEY, "--db", db)
    assert "30 answers added" in real.stdout  # not "already imported": the dry run left no trace
    assert counts_of(engine) == EXPECTED
    engine.dispose()


def test_dry_run_with_bad_rows_fails_like_the_import_after_showing_the_mapping(tmp_path):
    db = f"sqlite:///{tmp_path / 's.db'}"
    path = tmp_path / "survey.toml"
    path.write_text(SAMPLE_TOML, encoding="utf-8")
    migrated.migrated_sqlite(Path(db.removeprefix("sqlite:///")))
    cli("survey", "add", str(path), "--db", db)
    result = cli("import", str(EXPORTS / "kobotoolbox_french.csv"), "--survey", SURVEY,
                 "--db", db, "--dry-run")
    assert result.exit_code == 1
    assert "Columns:" in result.stdout
    assert result.stderr.startswith(f"Error: {EXPORTS / 'kobotoolbox_french.csv'}: column ")


# -- counting the same exports where they lie: counts --data and report --data ----------------


@pytest.mark.parametrize("name, profile, tool, notes", FIXTURES)
def test_each_export_counts_and_reports_as_it_imports(tmp_path, name, profile, tool, notes):
    """counts --data and report --data read an export through import's reader: its kind, the
    survey's [import] profile, group paths and the tool's metadata (they failed with
    KeyError: 'respondent_id' on the KoboToolbox and ODK Central exports, issue 22)."""
    db = f"sqlite:///{tmp_path / 's.db'}"
    survey_file = tmp_path / "survey.toml"
    survey_file.write_text(survey_text(profile), encoding="utf-8")
    migrated.migrated_sqlite(Path(db.removeprefix("sqlite:///")))
    assert cli("survey", "add", str(survey_file), "--db", db).exit_code == 0
    common = ["--survey", SURVEY, "--db", db]
    path = str(EXPORTS / name)
    counted = {engine: cli("counts", *common, "--format", "csv", "--data", path, "--engine",
                           engine) for engine in ("duckdb", "dask")}
    reported = cli("report", *common, "--format", "json", "--data", path)
    for result in (*counted.values(), reported):
        assert result.exit_code == 0, result.output
    assert cli("import", path, *common).exit_code == 0
    stored = cli("counts", *common, "--format", "csv").output
    assert counted["duckdb"].output == counted["dask"].output == stored
    assert json.loads(reported.output) == json.loads(
        cli("report", *common, "--format", "json").output)
    with store.engine_for(db) as engine:  # disposed: never left to the garbage collector
        assert counts_of(engine) == EXPECTED
