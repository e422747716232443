"""survey versions; one foreign key from responses to questions

* survey_versions(survey_id, version, source, created_at) keeps every
  definition of a survey: ``surveykit survey update`` adds one when the
  [import] profile or aliases change. surveys.source moves there as version 1.
* imports.survey_version: the version an import's answers were read with
  (1 for existing imports), a foreign key to survey_versions; NULL where a
  writer does not know it (web submissions' daily records, for now).
* responses: the foreign keys survey_id -> surveys and question_id -> questions
  become one, (survey_id, question_id) -> questions(survey_id, id), which
  also checks that the question is the survey's; PostgreSQL checks foreign
  keys row by row and this one fewer makes bulk inserts about twice as fast.
  questions gets the unique (survey_id, id) the new key needs.
  responses stays WITHOUT ROWID on SQLite (see 0001).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-24
"""

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision: str = '0003'
down_revision: str | None = '0002'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    bind = op.get_bind()
    versions = op.create_table(
        'survey_versions',
        sa.Column('survey_id', sa.Integer(), nullable=False),
        sa.Column('version', sa.Integer(), nullable=False),
        sa.Column('source', sa.Text(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['survey_id'], ['surveys.id'],
                                name=op.f('fk_survey_versions_survey_id_surveys'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('survey_id', 'version', name=op.f('pk_survey_versions')),
    )
    surveys = sa.table('surveys', sa.column('id', sa.Integer), sa.column('source', sa.Text),
                       sa.column('created_at', sa.DateTime(timezone=True)))
    rows = bind.execute(sa.select(surveys.c.id, surveys.c.source, surveys.c.created_at)).all()
    if rows:
        op.bulk_insert(versions, [{"survey_id": key, "version": 1, "source": source,
                                   "created_at": created or datetime.now(UTC)}
                                  for key, source, created in rows])
    with op.batch_alter_table('surveys') as batch:
        batch.drop_column('source')

    with op.batch_alter_table('imports') as batch:
        batch.add_column(sa.Column('survey_version', sa.Integer(), nullable=True))
    imports = sa.table('imports', sa.column('survey_version', sa.Integer))
    bind.execute(imports.update().values(survey_version=1))
    with op.batch_alter_table('imports') as batch:
        batch.create_foreign_key(op.f('fk_imports_survey_id_survey_versions'),
                                 'survey_versions', ['survey_id', 'survey_version'],
                                 ['survey_id', 'version'], ondelete='CASCADE')

    with op.batch_alter_table('questions') as batch:
        batch.create_unique_constraint(op.f('uq_questions_survey_id_id'), ['survey_id', 'id'])
    with op.batch_alter_table('responses', table_kwargs={'sqlite_with_rowid': False}) as batch:
        batch.drop_constraint(op.f('fk_responses_survey_id_surveys'), type_='foreignkey')
        batch.drop_constraint(op.f('fk_responses_question_id_questions'), type_='foreignkey')
        batch.create_foreign_key(op.f('fk_responses_survey_id_questions'), 'questions',
                                 ['survey_id', 'question_id'], ['survey_id', 'id'],
                                 ondelete='CASCADE')


def downgrade() -> None:
    """Back to 0002: each survey keeps its newest definition; the version history goes."""
    bind = op.get_bind()
    with op.batch_alter_table('responses', table_kwargs={'sqlite_with_rowid': False}) as batch:
        batch.drop_constraint(op.f('fk_responses_survey_id_questions'), type_='foreignkey')
        batch.create_foreign_key(op.f('fk_responses_survey_id_surveys'), 'surveys',
                                 ['survey_id'], ['id'], ondelete='CASCADE')
        batch.create_foreign_key(op.f('fk_responses_question_id_questions'), 'questions',
                                 ['question_id'], ['id'], ondelete='CASCADE')
    with op.batch_alter_table('questions') as batch:
        batch.drop_constraint(op.f('uq_questions_survey_id_id'), type_='unique')

    with op.batch_alter_table('imports') as batch:
        batch.drop_constraint(op.f('fk_imports_survey_id_survey_versions'), type_='foreignkey')
        batch.drop_column('survey_version')

    with op.batch_alter_table('surveys') as batch:
        batch.add_column(sa.Column('source', sa.Text(), nullable=True))
    versions = sa.table('survey_versions', sa.column('survey_id', sa.Integer),
                        sa.column('version', sa.Integer), sa.column('source', sa.Text))
    surveys = sa.table('surveys', sa.column('id', sa.Integer), sa.column('source', sa.Text))
    newest = (sa.select(versions.c.survey_id, sa.func.max(versions.c.version).label('version'))
              .group_by(versions.c.survey_id).subquery())
    for key, source in bind.execute(
            sa.select(versions.c.survey_id, versions.c.source).join(
                newest, (newest.c.survey_id == versions.c.survey_id)
                & (newest.c.version == versions.c.version))).all():
        bind.execute(surveys.update().where(surveys.c.id == key).values(source=source))
    with op.batch_alter_table('surveys') as batch:
        batch.alter_column('source', existing_type=sa.Text(), nullable=False)
    op.drop_table('survey_versions')
