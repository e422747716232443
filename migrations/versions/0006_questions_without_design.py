"""questions without the design column

questions.design (JSON: {"name", "parameters"}) was written when a survey was
added and never read: a stored survey is loaded by parsing its TOML source
(survey_versions.source), which alone holds the wording, aliases, [sampling],
models and everything else a design is used with. One truth, so the copy goes.
No other row changes.

The downgrade restores the column filled from the source: each survey's
current version is parsed and each question gets the JSON of its design,
exactly what surveykit at 0005 wrote.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-27
"""

import json
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0006'
down_revision: str | None = '0005'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('questions') as batch:
        batch.drop_column('design')


def downgrade() -> None:
    """Back to 0005: questions.design again, each question's design from its survey's source."""
    from surveykit.definition.survey import parse_survey

    bind = op.get_bind()
    with op.batch_alter_table('questions') as batch:
        batch.add_column(sa.Column('design', sa.Text(), nullable=True))
    versions = sa.table('survey_versions', sa.column('survey_id', sa.Integer),
                        sa.column('version', sa.Integer), sa.column('source', sa.Text))
    questions = sa.table('questions', sa.column('id', sa.Integer),
                         sa.column('survey_id', sa.Integer), sa.column('name', sa.String),
                         sa.column('design', sa.Text))
    current = (sa.select(versions.c.survey_id, sa.func.max(versions.c.version).label('version'))
               .group_by(versions.c.survey_id).subquery())
    sources = bind.execute(sa.select(versions.c.survey_id, versions.c.source).join(
        current, (versions.c.survey_id == current.c.survey_id)
        & (versions.c.version == current.c.version))).all()
    for survey_id, source in sources:
        designs = {q.id: json.dumps(q.design.spec()) for q in parse_survey(source).questions}
        for key, name in bind.execute(sa.select(questions.c.id, questions.c.name)
                                      .where(questions.c.survey_id == survey_id)).all():
            bind.execute(questions.update().where(questions.c.id == key)
                         .values(design=designs[name]))
    with op.batch_alter_table('questions') as batch:
        batch.alter_column('design', existing_type=sa.Text(), nullable=False)
