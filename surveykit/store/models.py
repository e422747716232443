"""SQLAlchemy models (2.0 typed declarative). Models only: the schema is built by migrations/.

Privacy by construction: no table holds a respondent's randomization code.
``respondents`` lists issued questionnaire ids (with their group: a form
version, not a secret), ``code_tallies`` only counts how many instructions of
each kind were issued per question and group, by ``generate`` runs large
enough that the counts cannot be read back to a respondent
(``AUDIT_MINIMUM_PER_GROUP``; docs/questionnaires.md, "Threat model").
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from surveykit.definition.covariates import COVARIATE_NAME_LENGTH, COVARIATE_VALUE_LENGTH
from surveykit.definition.limits import ANSWER_LENGTH, CODE_LENGTH, RESPONDENT_ID_LENGTH

# Constraint names that are the same on every database, so migrations can name them.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}



class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class SurveyRecord(Base):
    """A survey; its definitions (TOML sources) are its versions in ``survey_versions``.

    ``known_respondents`` is the number of rows of ``known_respondents`` for
    the survey (respondents with at least one answer), kept by every write
    with the answers so that ``missing`` needs no count over the answers.
    """

    __tablename__ = "surveys"
    __table_args__ = (CheckConstraint("known_respondents >= 0", name="known_respondents"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    title: Mapped[str] = mapped_column(Text)
    language: Mapped[str] = mapped_column(String(35))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    known_respondents: Mapped[int] = mapped_column(Integer, server_default="0")


class SurveyVersionRecord(Base):
    """One version of a survey's definition (its TOML text), 1, 2, ...; the highest is current.

    ``surveykit survey update`` adds a version when only the ``[import]``
    profile or aliases change; questions and designs never do. Each import
    records the version its answers were read with.
    """

    __tablename__ = "survey_versions"

    survey_id: Mapped[int] = mapped_column(
        ForeignKey("surveys.id", ondelete="CASCADE"), primary_key=True)
    version: Mapped[int] = mapped_column(Integer, primary_key=True)
    source: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class QuestionRecord(Base):
    """A question of a survey: its position, id and wording.

    Its design is not copied here: the survey's TOML source (survey_versions)
    is the one record of it, parsed at every load.
    """

    __tablename__ = "questions"
    __table_args__ = (
        UniqueConstraint("survey_id", "name"),
        UniqueConstraint("survey_id", "position"),
        # the target of responses' one foreign key (survey_id, question_id)
        UniqueConstraint("survey_id", "id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    survey_id: Mapped[int] = mapped_column(ForeignKey("surveys.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    name: Mapped[str] = mapped_column(String(64))
    text: Mapped[str] = mapped_column(Text)


class RespondentRecord(Base):
    """An issued questionnaire id and its group (1, 2, ... or None for one-group surveys).

    Deliberately no code column (see module docstring).
    """

    __tablename__ = "respondents"

    survey_id: Mapped[int] = mapped_column(
        ForeignKey("surveys.id", ondelete="CASCADE"), primary_key=True)
    respondent_id: Mapped[str] = mapped_column(String(RESPONDENT_ID_LENGTH), primary_key=True)
    issued_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    group_number: Mapped[int | None] = mapped_column(Integer, nullable=True)


class CodeTallyRecord(Base):
    """How many instructions of one kind a question issued in one group (aggregate only,
    over the runs with at least AUDIT_MINIMUM_PER_GROUP respondents per group)."""

    __tablename__ = "code_tallies"
    __table_args__ = (CheckConstraint("count >= 0", name="count"),)

    question_id: Mapped[int] = mapped_column(
        ForeignKey("questions.id", ondelete="CASCADE"), primary_key=True)
    group_number: Mapped[int] = mapped_column(Integer, primary_key=True)
    code: Mapped[str] = mapped_column(String(CODE_LENGTH), primary_key=True)
    count: Mapped[int] = mapped_column(Integer)


class ImportRecord(Base):
    """One imported response file; (survey, sha256) is unique, which makes imports idempotent.

    ``survey_version`` is the version of the definition its answers were read with
    (NULL for records written without it: the daily records of web submissions).
    """

    __tablename__ = "imports"
    __table_args__ = (
        UniqueConstraint("survey_id", "sha256"),
        ForeignKeyConstraint(["survey_id", "survey_version"],
                             ["survey_versions.survey_id", "survey_versions.version"],
                             ondelete="CASCADE"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    survey_id: Mapped[int] = mapped_column(ForeignKey("surveys.id", ondelete="CASCADE"))
    survey_version: Mapped[int | None] = mapped_column(Integer, nullable=True)
    file_name: Mapped[str] = mapped_column(Text)
    sha256: Mapped[str] = mapped_column(String(64))
    file_format: Mapped[str] = mapped_column(String(8))
    rows_read: Mapped[int] = mapped_column(Integer)
    imported: Mapped[int] = mapped_column(Integer)
    replaced: Mapped[int] = mapped_column(Integer)
    rejected: Mapped[int] = mapped_column(Integer)
    missing: Mapped[int] = mapped_column(Integer)
    imported_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ResponseRecord(Base):
    """One answer: one per (survey, question, respondent), enforced by the primary key.

    ``answer`` is one of the question's design's response labels (checked on
    import); ``group_number`` is the respondent's group (1 for one-group
    surveys).

    The key starts with (survey_id, question_id) so that counting answers per
    question is a GROUP BY along the key; on SQLite the table is WITHOUT ROWID,
    so the key *is* the table and the count reads nothing else.

    One foreign key, (survey_id, question_id) -> questions, checks both ids
    (and that the question is the survey's): PostgreSQL runs a foreign key's
    check once per inserted row, and three of them made a bulk insert about
    2.5x slower than two (benchmarks/bench_import.py --postgres).
    """

    __tablename__ = "responses"
    __table_args__ = (
        CheckConstraint("answer <> ''", name="answer"),
        ForeignKeyConstraint(["survey_id", "question_id"],
                             ["questions.survey_id", "questions.id"], ondelete="CASCADE"),
        {"sqlite_with_rowid": False},
    )

    survey_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    question_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    respondent_id: Mapped[str] = mapped_column(String(RESPONDENT_ID_LENGTH), primary_key=True)
    answer: Mapped[str] = mapped_column(String(ANSWER_LENGTH))
    group_number: Mapped[int] = mapped_column(Integer, server_default="1")
    import_id: Mapped[int] = mapped_column(ForeignKey("imports.id", ondelete="CASCADE"))


class CovariateRecord(Base):
    """One covariate value of one respondent: (survey, respondent, name) -> value.

    Only covariates the survey declares (``[covariates]``) are stored, as text:
    a number in its shortest form (``21``, ``21.5``), a category as written
    (or as its declared level). ``import_id`` is the import that gave the
    value. Covariates are not randomized (docs/store.md, "Covariates and
    privacy"); like every other table, this one holds no instruction code.
    On SQLite the table is WITHOUT ROWID (its key is the table).
    """

    __tablename__ = "covariates"
    __table_args__ = (
        CheckConstraint("value <> ''", name="value"),
        {"sqlite_with_rowid": False},
    )

    survey_id: Mapped[int] = mapped_column(
        ForeignKey("surveys.id", ondelete="CASCADE"), primary_key=True)
    respondent_id: Mapped[str] = mapped_column(String(RESPONDENT_ID_LENGTH), primary_key=True)
    name: Mapped[str] = mapped_column(String(COVARIATE_NAME_LENGTH), primary_key=True)
    value: Mapped[str] = mapped_column(String(COVARIATE_VALUE_LENGTH))
    import_id: Mapped[int] = mapped_column(ForeignKey("imports.id", ondelete="CASCADE"))


class AnswerCountRecord(Base):
    """How many stored answers a question has per group and response: the kept counts.

    Every write of ``responses`` (imports, replacements, web submissions)
    adds its change here in the same transaction, so reading a survey's
    counts reads a few rows whatever the number of answers;
    ``surveykit check`` recomputes them from ``responses`` and compares.
    A cell whose count falls to 0 is deleted.
    """

    __tablename__ = "answer_counts"
    __table_args__ = (
        CheckConstraint("count >= 0", name="count"),
        ForeignKeyConstraint(["survey_id", "question_id"],
                             ["questions.survey_id", "questions.id"], ondelete="CASCADE"),
    )

    survey_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    question_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    group_number: Mapped[int] = mapped_column(Integer, primary_key=True)
    answer: Mapped[str] = mapped_column(String(ANSWER_LENGTH), primary_key=True)
    count: Mapped[int] = mapped_column(BigInteger)


class KnownRespondentRecord(Base):
    """A respondent id with at least one stored answer in the survey.

    Written with the answers (INSERT ... ON CONFLICT DO NOTHING): the rows
    the insert adds are the respondents new to the survey, which keeps
    ``surveys.known_respondents`` exact also under concurrent writers (the
    primary key serializes two writers of one id). WITHOUT ROWID on SQLite.
    No foreign key: PostgreSQL would check it once per inserted id (see
    responses); the rows go with their survey's answers.
    """

    __tablename__ = "known_respondents"
    __table_args__ = ({"sqlite_with_rowid": False},)

    survey_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    respondent_id: Mapped[str] = mapped_column(String(RESPONDENT_ID_LENGTH), primary_key=True)


class WeightedCellRecord(Base):
    """The kept weighted cells of a survey with ``[sampling]``: per question, design key,
    group and response, the number of respondents and the sums of their weights.

    ``design_key`` is a JSON array of the respondent's stored texts of the design's key
    columns, in the order :func:`surveykit.sampling.counts.design_keys` names them
    (stratum, unit at each stage, fpc at each stage; ``[]`` with none, ``null`` for a value
    not stored). ``group_number`` 0 and ``response`` "" are a respondent without an answer
    to the question (it keeps its PSU in the design); a numeric question's number answers
    share the response "#" ("dont_know" is its own). ``n`` respondents, ``invalid`` of them
    without a weight above 0 (the design is then not clean and the report reads rows),
    ``weight`` and ``weight2`` the sums of w and w^2 (w = 1 without a weight column); for
    numeric answers y the sums ``y``, ``y2``, ``wy``, ``wy2``, ``w2y`` and ``w2y2`` (of y,
    y^2, w y, w y^2, w^2 y, w^2 y^2; 0 elsewhere).

    Every write that changes a sampled survey's answers or design values changes these in
    its transaction (:mod:`surveykit.store.kept_cells`). A cell whose ``n`` falls to 0
    stays, with every sum 0 (the cells a survey can have are bounded by its design, not by
    its respondents); readers skip it.
    """

    __tablename__ = "weighted_cells"
    __table_args__ = (
        ForeignKeyConstraint(["survey_id", "question_id"],
                             ["questions.survey_id", "questions.id"], ondelete="CASCADE"),
    )

    survey_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    question_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    design_key: Mapped[str] = mapped_column(Text, primary_key=True)
    group_number: Mapped[int] = mapped_column(Integer, primary_key=True)
    response: Mapped[str] = mapped_column(String(ANSWER_LENGTH), primary_key=True)
    n: Mapped[int] = mapped_column(BigInteger)
    invalid: Mapped[int] = mapped_column(BigInteger)
    weight: Mapped[float] = mapped_column(Float)
    weight2: Mapped[float] = mapped_column(Float)
    y: Mapped[float] = mapped_column(Float)
    y2: Mapped[float] = mapped_column(Float)
    wy: Mapped[float] = mapped_column(Float)
    wy2: Mapped[float] = mapped_column(Float)
    w2y: Mapped[float] = mapped_column(Float)
    w2y2: Mapped[float] = mapped_column(Float)
