"""The survey store on real databases (SQLite file, and PostgreSQL when configured)."""

from __future__ import annotations

import sqlite3

import pytest
from sqlalchemy import inspect, text

from surveykit.definition.limits import AUDIT_MINIMUM_PER_GROUP
from surveykit.definition.survey import parse_survey
from surveykit.errors import ParameterError, StoreError
from surveykit.store import database as store
from surveykit.store.importer import import_responses

SURVEY = "academic_integrity"


def test_resolve_url_prefers_argument_then_environment_then_default(monkeypatch):
    monkeypatch.delenv("SURVEYKIT_DB", raising=False)
    assert store.resolve_url() == "sqlite:///surveykit.db"
    monkeypatch.setenv("SURVEYKIT_DB", "sqlite:////data/field.db")
    assert store.resolve_url() == "sqlite:////data/field.db"
    assert store.resolve_url("other.db") == "sqlite:///other.db"
    assert store.resolve_url("postgres://u:pw@h/db") == "postgresql+psycopg://u:pw@h/db"
    assert store.resolve_url("postgresql+psycopg://h/db") == "postgresql+psycopg://h/db"


def test_open_engine_refuses_a_malformed_url():
    with pytest.raises(ParameterError, match=r"'nonsense://x:y:z' is not a SQLAlchemy URL"):
        store.open_engine("nonsense://x:y:z")


def test_sqlite_connections_have_foreign_keys_wal_and_busy_timeout(sqlite_url):
    engine = store.open_engine(sqlite_url)
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 60_000
    engine.dispose()


def test_foreign_keys_are_enforced(survey_engine):
    with pytest.raises(Exception, match=r"(?i)foreign key"):
        with survey_engine.begin() as conn:
            conn.execute(store.responses.insert().values(
                survey_id=1, question_id=999, respondent_id="r", answer="yes", import_id=999))


def test_store_commands_on_a_missing_sqlite_file_say_to_run_init(tmp_path):
    engine = store.open_engine(f"sqlite:///{tmp_path / 'none.db'}")
    with pytest.raises(StoreError, match=r"no surveykit database at .*none\.db: run 'surveykit "
                                         r"init' there first"):
        store.list_surveys(engine)
    assert not (tmp_path / "none.db").exists()


def test_store_commands_on_an_empty_database_say_to_run_init(database_url):
    engine = store.open_engine(database_url)
    with engine.begin() as conn:  # the database exists but has no surveykit tables
        conn.execute(text("CREATE TABLE unrelated (x INTEGER)"))
    try:
        # SQLite names the other tables (init refuses a foreign file); PostgreSQL databases are
        # shared by many applications, so their other tables are not a reason to refuse
        with pytest.raises(StoreError, match=r"has no surveykit tables: run 'surveykit init' "
                                             r"first|is not a surveykit database \(it holds "
                                             r"other tables: unrelated\)"):
            store.count_responses(engine, SURVEY)
    finally:
        engine.dispose()


def test_init_database_is_idempotent(engine):
    assert store.init_database(engine) == "0007"
    assert store.init_database(engine) == "0007"
    assert store.list_surveys(engine) == []


def test_add_survey_stores_questions_and_their_source_not_a_copy_of_their_designs(
        engine, sample_survey):
    assert store.add_survey(engine, sample_survey) is True
    with engine.connect() as conn:
        rows = conn.execute(text(
            "SELECT q.position, q.name FROM questions q JOIN surveys s "
            "ON s.id = q.survey_id WHERE s.name = :n ORDER BY q.position"), {"n": SURVEY}).all()
        source = conn.execute(text("SELECT source FROM survey_versions")).scalar_one()
    assert [tuple(row) for row in rows] == [
        (0, "exam_cheating"), (1, "plagiarism"), (2, "contract_cheating"), (3, "fabricated_data")]
    # the designs live in the stored source only (migration 0006 dropped questions.design)
    assert {c["name"] for c in inspect(engine).get_columns("questions")} == {
        "id", "survey_id", "position", "name", "text"}
    assert source == sample_survey.source
    assert [q.design.spec() for q in store.load_survey(engine, SURVEY).questions] == [
        {"name": "generalized_warner", "parameters": {"p": p, "q": q}}
        for p, q in [(0.6, 0.2), (0.7, 0.15), (0.5, 0.25), (0.65, 0.15)]]


def test_load_survey_rebuilds_the_full_definition(survey_engine, sample_survey):
    loaded = store.load_survey(survey_engine, SURVEY)
    assert loaded == sample_survey
    assert loaded.questions[3].aliases["made up"] == "yes"
    assert loaded.wording == sample_survey.wording


def test_adding_the_same_survey_again_changes_nothing(survey_engine, sample_survey):
    assert store.add_survey(survey_engine, sample_survey) is False
    assert len(store.list_surveys(survey_engine)) == 1


def test_a_different_survey_under_an_existing_name_is_refused(survey_engine, sample_survey):
    changed = parse_survey(sample_survey.source.replace("p = 0.7", "p = 0.75"), "changed.toml")
    with pytest.raises(StoreError, match=r"a different survey named 'academic_integrity' is "
                                         r"already in the database"):
        store.add_survey(survey_engine, changed)
    assert store.load_survey(survey_engine, SURVEY).questions[1].design.p == 0.7


def test_unknown_survey_names_the_known_ones(survey_engine):
    with pytest.raises(StoreError, match=r"no survey named 'nope' in the database; known "
                                         r"surveys: academic_integrity"):
        store.count_responses(survey_engine, "nope")


def test_unknown_survey_in_an_empty_database_says_how_to_add_one(engine):
    with pytest.raises(StoreError, match=r"add one with 'surveykit survey add FILE'"):
        store.load_survey(engine, "nope")


def test_counts_of_a_survey_without_answers_are_zero(survey_engine):
    counts = store.count_responses(survey_engine, SURVEY)
    assert [(c.question_id, c.yes, c.no, c.dont_know, c.missing) for c in counts] == [
        (q, 0, 0, 0, 0) for q in ("exam_cheating", "plagiarism", "contract_cheating",
                                  "fabricated_data")]


def test_missing_counts_known_respondents_not_issued_ones(survey_engine, tmp_path):
    store.record_generation(survey_engine, SURVEY, ["A", "B", "C", "D"], {})
    answers = tmp_path / "answers.csv"
    answers.write_text(
        "respondent_id,exam_cheating,plagiarism,contract_cheating,fabricated_data\n"
        "A,yes,no,,dk\n"
        "B,no,,,yes\n"
        "C,,,,\n", encoding="utf-8")  # C returned a blank form; D never answered
    import_responses(survey_engine, answers, SURVEY)
    counts = {c.question_id: c for c in store.count_responses(survey_engine, SURVEY)}
    assert counts["exam_cheating"].to_dict() == {
        "id": "exam_cheating", "yes": 1, "no": 1, "dont_know": 0, "missing": 0,
        "answers": {"yes": 1, "no": 1}, "groups": {"1": {"yes": 1, "no": 1}}}
    assert (counts["plagiarism"].no, counts["plagiarism"].missing) == (1, 1)
    assert (counts["contract_cheating"].answered, counts["contract_cheating"].missing) == (0, 2)
    assert (counts["fabricated_data"].yes, counts["fabricated_data"].dont_know) == (1, 1)


def test_list_surveys_counts_questions_issued_respondents_answers_imports(survey_engine,
                                                                          sample_survey_path):
    store.record_generation(survey_engine, SURVEY, [f"AI-{i:04d}" for i in range(1, 501)], {})
    import_responses(survey_engine, sample_survey_path.parent / "responses_long.csv", SURVEY)
    [summary] = store.list_surveys(survey_engine)
    assert (summary.name, summary.questions, summary.issued, summary.imports) == (
        SURVEY, 4, 500, 1)
    assert summary.respondents == 300
    assert summary.answers == 1172  # data lines of sample_data/responses_long.csv
    assert summary.to_dict()["created_at"].endswith("+00:00")


# -- issued questionnaires ------------------------------------------------------------


RUN = [f"r{i}" for i in range(1, AUDIT_MINIMUM_PER_GROUP + 11)]
NEXT_RUN = [f"r{i}" for i in range(AUDIT_MINIMUM_PER_GROUP + 11, 2 * AUDIT_MINIMUM_PER_GROUP + 21)]
N = len(RUN)
TALLIES = {"exam_cheating": {1: {"truthful": N - 10, "opposite": 10}},
           "plagiarism": {1: {"truthful": N - 20, "opposite": 10, "dont_know": 10}}}


def test_record_generation_registers_ids_and_adds_tallies(survey_engine):
    store.record_generation(survey_engine, SURVEY, RUN, TALLIES)
    store.record_generation(survey_engine, SURVEY, NEXT_RUN, TALLIES)
    assert store.issued_respondent_count(survey_engine, SURVEY) == 2 * N
    tallies = store.code_tallies(survey_engine, SURVEY)
    assert tallies["exam_cheating"] == {1: {"opposite": 20, "truthful": 2 * N - 20}}
    assert tallies["plagiarism"] == {1: {"dont_know": 20, "opposite": 20, "truthful": 2 * N - 40}}
    assert tallies["fabricated_data"] == {}


def test_record_generation_with_an_already_issued_id_stores_nothing(survey_engine):
    store.record_generation(survey_engine, SURVEY, RUN, TALLIES)
    with pytest.raises(StoreError, match=rf"1 respondent id\(s\) were already issued for survey "
                                         rf"'academic_integrity': 'r{N}'; nothing was recorded"):
        store.record_generation(survey_engine, SURVEY, [RUN[-1], *NEXT_RUN[1:]], TALLIES)
    assert store.issued_respondent_count(survey_engine, SURVEY) == N
    assert store.code_tallies(survey_engine, SURVEY)["exam_cheating"] == {
        1: {"opposite": 10, "truthful": N - 10}}


def test_record_generation_keeps_no_totals_of_a_small_run_and_says_why(survey_engine):
    """A run's totals are the difference of the database before and after it: for a run of
    one they would be that respondent's codes. Smaller runs register their ids only."""
    small = RUN[:AUDIT_MINIMUM_PER_GROUP - 1]
    with pytest.raises(ParameterError, match=(
            rf"^instruction totals of a run of {len(small)} respondent id\(s\) of survey "
            r"'academic_integrity' would let anyone who compares the database before and after "
            r"it read the run's instructions; keep totals only for runs with at least "
            rf"{AUDIT_MINIMUM_PER_GROUP} ids in every group, and record smaller runs' ids "
            r"without them$")):
        store.record_generation(survey_engine, SURVEY, small,
                                {"plagiarism": {1: {"truthful": len(small)}}})
    with pytest.raises(ParameterError, match=r"a run of 0 respondent id\(s\)"):
        store.record_generation(survey_engine, SURVEY, [], {"plagiarism": {1: {"truthful": 1}}})
    assert store.issued_respondent_count(survey_engine, SURVEY) == 0
    store.record_generation(survey_engine, SURVEY, small, {})
    assert store.issued_respondent_count(survey_engine, SURVEY) == len(small)
    assert all(t == {} for t in store.code_tallies(survey_engine, SURVEY).values())


@pytest.mark.parametrize("ids, tallies, message", [
    ([*RUN[:-1], "r1"], TALLIES, r"1 respondent id\(s\) appear more than once: 'r1'"),
    ([*RUN[:-1], " r2"], TALLIES, r"respondent id ' r2': .*must not start or end with spaces"),
    ([*RUN[:-1], ""], TALLIES, r"respondent id '': a respondent id must be a non-empty text"),
    (RUN, {"nope": {1: {"truthful": N}}}, r"names question 'nope', which survey"),
    (RUN, {"plagiarism": {1: {"": N}}},
     r"instruction code '' for question 'plagiarism' must be a non-empty text"),
    (RUN, {"plagiarism": {1: {"truthful": -1, "opposite": N + 1}}},
     r"count -1 of instruction truthful"),
    (RUN, {"plagiarism": {1: {"truthful": 1, "opposite": N - 2}}},
     rf"in group 1 add up to {N - 1}, but {N} respondent"),
    (RUN, {"plagiarism": {1: {"truthful": N}, 2: {"truthful": N}}},
     rf"in group 2 add up to {N}, but 0 respondent"),
])
def test_record_generation_refuses_bad_input_and_stores_nothing(survey_engine, ids, tallies,
                                                                message):
    with pytest.raises(ParameterError, match=message):
        store.record_generation(survey_engine, SURVEY, ids, tallies)
    assert store.issued_respondent_count(survey_engine, SURVEY) == 0
    assert store.code_tallies(survey_engine, SURVEY)["plagiarism"] == {}


def test_no_table_can_link_a_respondent_to_a_code(engine):
    inspector = inspect(engine)
    for table in inspector.get_table_names():
        columns = {column["name"] for column in inspector.get_columns(table)}
        assert not ({"respondent_id"} <= columns and "code" in columns), table
    assert {c["name"] for c in inspector.get_columns("code_tallies")} == {
        "question_id", "group_number", "code", "count"}


def test_counts_read_one_survey_along_the_primary_key(sqlite_url):
    engine = store.open_engine(sqlite_url)
    store.init_database(engine)
    sql = str(store.counts_statement(1).compile(
        dialect=engine.dialect, compile_kwargs={"literal_binds": True}))
    path = engine.url.database
    plan = "\n".join(row[3] for row in sqlite3.connect(path).execute("EXPLAIN QUERY PLAN " + sql))
    assert "SEARCH responses USING PRIMARY KEY (survey_id=?)" in plan
    assert "SCAN responses" not in plan
