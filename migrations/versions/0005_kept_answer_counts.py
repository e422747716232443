"""kept answer counts

Counts kept, not recounted: every write of responses (imports, replacements,
web submissions) changes these in its own transaction, so counts and reports
read a few rows whatever the number of answers.

* answer_counts(survey_id, question_id, group_number, answer, count): stored
  answers per cell; (survey_id, question_id) -> questions, like responses;
* known_respondents(survey_id, respondent_id): the ids with at least one
  answer; a writer's INSERT ... ON CONFLICT DO NOTHING adds exactly the ids
  new to the survey, also under concurrent writers. WITHOUT ROWID on SQLite;
  no foreign key (PostgreSQL would check it once per id);
* surveys.known_respondents: their number, for `missing`.

Existing databases get them from their answers: one GROUP BY along the
primary key of responses, the distinct ids, and their number per survey
(what `surveykit check --repair` does for one survey). The downgrade drops
them; the answers are untouched either way.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0005'
down_revision: str | None = '0004'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'known_respondents',
        sa.Column('survey_id', sa.Integer(), nullable=False),
        sa.Column('respondent_id', sa.String(length=200), nullable=False),
        sa.PrimaryKeyConstraint('survey_id', 'respondent_id',
                                name=op.f('pk_known_respondents')),
        sqlite_with_rowid=False,
    )
    op.create_table(
        'answer_counts',
        sa.Column('survey_id', sa.Integer(), nullable=False),
        sa.Column('question_id', sa.Integer(), nullable=False),
        sa.Column('group_number', sa.Integer(), nullable=False),
        sa.Column('answer', sa.String(length=64), nullable=False),
        sa.Column('count', sa.BigInteger(), nullable=False),
        sa.CheckConstraint('count >= 0', name=op.f('ck_answer_counts_count')),
        sa.ForeignKeyConstraint(['survey_id', 'question_id'],
                                ['questions.survey_id', 'questions.id'],
                                name=op.f('fk_answer_counts_survey_id_questions'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('survey_id', 'question_id', 'group_number', 'answer',
                                name=op.f('pk_answer_counts')),
    )
    with op.batch_alter_table('surveys') as batch:
        batch.add_column(sa.Column('known_respondents', sa.Integer(), server_default='0',
                                   nullable=False))
        batch.create_check_constraint('known_respondents', 'known_respondents >= 0')
    op.execute(
        "INSERT INTO answer_counts (survey_id, question_id, group_number, answer, count) "
        "SELECT survey_id, question_id, group_number, answer, count(*) FROM responses "
        "GROUP BY survey_id, question_id, group_number, answer")
    op.execute(
        "INSERT INTO known_respondents (survey_id, respondent_id) "
        "SELECT DISTINCT survey_id, respondent_id FROM responses")
    op.execute(
        "UPDATE surveys SET known_respondents = (SELECT count(*) FROM known_respondents k "
        "WHERE k.survey_id = surveys.id)")


def downgrade() -> None:
    """Back to 0004: the kept counts go; counts are recomputed from the answers again."""
    with op.batch_alter_table('surveys') as batch:
        batch.drop_constraint(op.f('ck_surveys_known_respondents'), type_='check')
        batch.drop_column('known_respondents')
    op.drop_table('answer_counts')
    op.drop_table('known_respondents')
