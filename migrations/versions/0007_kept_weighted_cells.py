"""kept weighted cells

A survey with [sampling] is reported from the sums of its answers' weights
per (question, stratum, unit at each stage, fpc, group, response) and, for a
numeric question, the weighted sums of its answers per such cell
(issue 21 item 5, issue 23 item 3). Made by one GROUP BY over every
respondent x question, a report cost a pass over the survey; kept here, it
reads O(cells) rows:

* weighted_cells(survey_id, question_id, design_key, group_number, response,
  n, invalid, weight, weight2, y, y2, wy, wy2, w2y, w2y2): design_key is a JSON
  array of the respondent's design key values (stratum, units, fpc, in
  surveykit.sampling.counts.design_keys order); group 0 and response "" are
  respondents without an answer, "#" a numeric question's numbers
  (surveykit.store.models.WeightedCellRecord says what each sum is);
  (survey_id, question_id) -> questions, like answer_counts.

Every write keeps them from here on (surveykit.store.kept_cells). Existing
databases get them from their answers and design values: each survey whose
current definition has [sampling] is parsed and its cells are made by the
same GROUP BY the writers run (surveykit.store.kept_cells.rebuild_cells). The
downgrade drops the table; answers and design values are untouched either way.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-27
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0007'
down_revision: str | None = '0006'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SUMS = ('weight', 'weight2', 'y', 'y2', 'wy', 'wy2', 'w2y', 'w2y2')


def upgrade() -> None:
    op.create_table(
        'weighted_cells',
        sa.Column('survey_id', sa.Integer(), nullable=False),
        sa.Column('question_id', sa.Integer(), nullable=False),
        sa.Column('design_key', sa.Text(), nullable=False),
        sa.Column('group_number', sa.Integer(), nullable=False),
        sa.Column('response', sa.String(length=64), nullable=False),
        sa.Column('n', sa.BigInteger(), nullable=False),
        sa.Column('invalid', sa.BigInteger(), nullable=False),
        *[sa.Column(name, sa.Float(), nullable=False) for name in SUMS],
        sa.ForeignKeyConstraint(['survey_id', 'question_id'],
                                ['questions.survey_id', 'questions.id'],
                                name=op.f('fk_weighted_cells_survey_id_questions'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('survey_id', 'question_id', 'design_key', 'group_number',
                                'response', name=op.f('pk_weighted_cells')),
    )
    _backfill(op.get_bind())


def _backfill(bind) -> None:
    """Every sampled survey's cells from its stored answers and design values."""
    from surveykit.definition.survey import parse_survey
    from surveykit.store.kept_cells import rebuild_cells

    versions = sa.table('survey_versions', sa.column('survey_id', sa.Integer),
                        sa.column('version', sa.Integer), sa.column('source', sa.Text))
    current = (sa.select(versions.c.survey_id, sa.func.max(versions.c.version).label('version'))
               .group_by(versions.c.survey_id).subquery())
    sources = bind.execute(sa.select(versions.c.survey_id, versions.c.source).join(
        current, (versions.c.survey_id == current.c.survey_id)
        & (versions.c.version == current.c.version))).all()
    for survey_id, source in sources:
        survey = parse_survey(source, f"survey {survey_id}")
        if survey.sampling is not None:
            rebuild_cells(bind, survey_id, survey)


def downgrade() -> None:
    """Back to 0006: the kept cells go; reports make them by a GROUP BY again."""
    op.drop_table('weighted_cells')
