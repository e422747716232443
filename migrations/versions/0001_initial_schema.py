"""initial schema: surveys, questions, respondents, code tallies, imports, responses

responses is WITHOUT ROWID on SQLite: its primary key (survey_id, question_id,
respondent_id) is the table, so counting answers per question reads only the key.
A later batch migration that recreates this table must keep sqlite_with_rowid=False.

Revision ID: 0001
Revises: (none)
Create Date: 2026-11-22 09:19:21.600967
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0001'
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('surveys',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=64), nullable=False),
    sa.Column('title', sa.Text(), nullable=False),
    sa.Column('language', sa.String(length=35), nullable=False),
    sa.Column('p', sa.Float(), nullable=False),
    sa.Column('q', sa.Float(), nullable=False),
    sa.Column('source', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_surveys')),
    sa.UniqueConstraint('name', name=op.f('uq_surveys_name'))
    )
    op.create_table('imports',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('survey_id', sa.Integer(), nullable=False),
    sa.Column('file_name', sa.Text(), nullable=False),
    sa.Column('sha256', sa.String(length=64), nullable=False),
    sa.Column('file_format', sa.String(length=8), nullable=False),
    sa.Column('rows_read', sa.Integer(), nullable=False),
    sa.Column('imported', sa.Integer(), nullable=False),
    sa.Column('replaced', sa.Integer(), nullable=False),
    sa.Column('rejected', sa.Integer(), nullable=False),
    sa.Column('missing', sa.Integer(), nullable=False),
    sa.Column('imported_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['survey_id'], ['surveys.id'], name=op.f('fk_imports_survey_id_surveys'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_imports')),
    sa.UniqueConstraint('survey_id', 'sha256', name=op.f('uq_imports_survey_id_sha256'))
    )
    op.create_table('questions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('survey_id', sa.Integer(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=64), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.Column('p', sa.Float(), nullable=False),
    sa.Column('q', sa.Float(), nullable=False),
    sa.ForeignKeyConstraint(['survey_id'], ['surveys.id'], name=op.f('fk_questions_survey_id_surveys'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_questions')),
    sa.UniqueConstraint('survey_id', 'name', name=op.f('uq_questions_survey_id_name')),
    sa.UniqueConstraint('survey_id', 'position', name=op.f('uq_questions_survey_id_position'))
    )
    op.create_table('respondents',
    sa.Column('survey_id', sa.Integer(), nullable=False),
    sa.Column('respondent_id', sa.String(length=200), nullable=False),
    sa.Column('issued_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['survey_id'], ['surveys.id'], name=op.f('fk_respondents_survey_id_surveys'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('survey_id', 'respondent_id', name=op.f('pk_respondents'))
    )
    op.create_table('code_tallies',
    sa.Column('question_id', sa.Integer(), nullable=False),
    sa.Column('code', sa.String(length=1), nullable=False),
    sa.Column('count', sa.Integer(), nullable=False),
    sa.CheckConstraint("code = 'T' OR code = 'L' OR code = 'D'", name=op.f('ck_code_tallies_code')),
    sa.CheckConstraint('count >= 0', name=op.f('ck_code_tallies_count')),
    sa.ForeignKeyConstraint(['question_id'], ['questions.id'], name=op.f('fk_code_tallies_question_id_questions'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('question_id', 'code', name=op.f('pk_code_tallies'))
    )
    op.create_table('responses',
    sa.Column('survey_id', sa.Integer(), nullable=False),
    sa.Column('question_id', sa.Integer(), nullable=False),
    sa.Column('respondent_id', sa.String(length=200), nullable=False),
    sa.Column('answer', sa.String(length=9), nullable=False),
    sa.Column('import_id', sa.Integer(), nullable=False),
    sa.CheckConstraint("answer = 'yes' OR answer = 'no' OR answer = 'dont_know'", name=op.f('ck_responses_answer')),
    sa.ForeignKeyConstraint(['import_id'], ['imports.id'], name=op.f('fk_responses_import_id_imports'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['question_id'], ['questions.id'], name=op.f('fk_responses_question_id_questions'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['survey_id'], ['surveys.id'], name=op.f('fk_responses_survey_id_surveys'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('survey_id', 'question_id', 'respondent_id', name=op.f('pk_responses')),
    sqlite_with_rowid=False
    )


def downgrade() -> None:
    op.drop_table('responses')
    op.drop_table('code_tallies')
    op.drop_table('respondents')
    op.drop_table('questions')
    op.drop_table('imports')
    op.drop_table('surveys')
