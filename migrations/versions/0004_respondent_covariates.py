"""respondent covariates

covariates(survey_id, respondent_id, name, value, import_id): the columns of
a response file that a survey declares in [covariates] (age, faculty, ...),
one value per respondent and covariate, as text (numbers in their shortest
form). import_id is the import that gave the value. No existing row changes:
databases made by 0003 get an empty table.

On SQLite the table is WITHOUT ROWID, like responses: the primary key
(survey_id, respondent_id, name) is the table, so reading one survey's
covariates is a range scan along the key.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0004'
down_revision: str | None = '0003'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'covariates',
        sa.Column('survey_id', sa.Integer(), nullable=False),
        sa.Column('respondent_id', sa.String(length=200), nullable=False),
        sa.Column('name', sa.String(length=64), nullable=False),
        sa.Column('value', sa.String(length=200), nullable=False),
        sa.Column('import_id', sa.Integer(), nullable=False),
        sa.CheckConstraint("value <> ''", name=op.f('ck_covariates_value')),
        sa.ForeignKeyConstraint(['import_id'], ['imports.id'],
                                name=op.f('fk_covariates_import_id_imports'),
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['survey_id'], ['surveys.id'],
                                name=op.f('fk_covariates_survey_id_surveys'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('survey_id', 'respondent_id', 'name',
                                name=op.f('pk_covariates')),
        sqlite_with_rowid=False,
    )


def downgrade() -> None:
    """Back to 0003: the covariates go (the answers stay)."""
    op.drop_table('covariates')
