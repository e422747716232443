"""designs, response labels and groups

Every design, not only the generalized Warner:

* questions.design (JSON: {"name", "parameters"}) replaces questions.p and q;
  surveys.p and q (written, never read) go;
* responses.answer holds any design's response label (up to 64 characters)
  and responses.group_number the respondent's group (1 for one-group surveys);
* respondents.group_number: the group an issued id belongs to (a form version);
* code_tallies count instructions per question, group and code (truthful,
  opposite, dont_know, say:yes, ...) instead of the letters T, L, D.

Existing rows keep their meaning: each question's (p, q) becomes
{"name": "generalized_warner", "parameters": {"p": p, "q": q}}, every answer
and tally goes to group 1, and T, L, D become truthful, opposite, dont_know.
responses stays WITHOUT ROWID on SQLite (see 0001).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23
"""

import json
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0002'
down_revision: str | None = '0001'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_CODES = {"T": "truthful", "L": "opposite", "D": "dont_know"}


def upgrade() -> None:
    bind = op.get_bind()
    with op.batch_alter_table('questions') as batch:
        batch.add_column(sa.Column('design', sa.Text(), nullable=True))
    questions = sa.table('questions', sa.column('id', sa.Integer), sa.column('p', sa.Float),
                         sa.column('q', sa.Float), sa.column('design', sa.Text))
    for key, p, q in bind.execute(sa.select(questions.c.id, questions.c.p, questions.c.q)).all():
        spec = {"name": "generalized_warner", "parameters": {"p": p, "q": q}}
        bind.execute(questions.update().where(questions.c.id == key)
                     .values(design=json.dumps(spec)))
    with op.batch_alter_table('questions') as batch:
        batch.alter_column('design', existing_type=sa.Text(), nullable=False)
        batch.drop_column('p')
        batch.drop_column('q')
    with op.batch_alter_table('surveys') as batch:
        batch.drop_column('p')
        batch.drop_column('q')

    with op.batch_alter_table('respondents') as batch:
        batch.add_column(sa.Column('group_number', sa.Integer(), nullable=True))

    with op.batch_alter_table('responses', table_kwargs={'sqlite_with_rowid': False}) as batch:
        batch.drop_constraint(op.f('ck_responses_answer'), type_='check')
        batch.alter_column('answer', existing_type=sa.String(length=9),
                           type_=sa.String(length=64), existing_nullable=False)
        batch.add_column(sa.Column('group_number', sa.Integer(), server_default='1',
                                   nullable=False))
        batch.create_check_constraint('answer', "answer <> ''")

    old = sa.table('code_tallies', sa.column('question_id', sa.Integer),
                   sa.column('code', sa.String), sa.column('count', sa.Integer))
    rows = bind.execute(sa.select(old.c.question_id, old.c.code, old.c.count)).all()
    op.drop_table('code_tallies')
    tallies = op.create_table(
        'code_tallies',
        sa.Column('question_id', sa.Integer(), nullable=False),
        sa.Column('group_number', sa.Integer(), nullable=False),
        sa.Column('code', sa.String(length=200), nullable=False),
        sa.Column('count', sa.Integer(), nullable=False),
        sa.CheckConstraint('count >= 0', name=op.f('ck_code_tallies_count')),
        sa.ForeignKeyConstraint(['question_id'], ['questions.id'],
                                name=op.f('fk_code_tallies_question_id_questions'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('question_id', 'group_number', 'code',
                                name=op.f('pk_code_tallies')),
    )
    if rows:
        op.bulk_insert(tallies, [
            {"question_id": key, "group_number": 1, "code": _CODES[code], "count": count}
            for key, code, count in rows])


def downgrade() -> None:
    """Back to 0001: possible only while every question is a generalized Warner in one group."""
    bind = op.get_bind()
    questions = sa.table('questions', sa.column('id', sa.Integer),
                         sa.column('survey_id', sa.Integer), sa.column('design', sa.Text))
    specs = {key: (survey, json.loads(text)) for key, survey, text in bind.execute(
        sa.select(questions.c.id, questions.c.survey_id, questions.c.design)).all()}
    if any(spec["name"] != "generalized_warner" for _, spec in specs.values()):
        raise RuntimeError("cannot downgrade below 0002: some questions use designs other "
                           "than the generalized Warner, which schema 0001 cannot hold")
    tallies = sa.table('code_tallies', sa.column('question_id', sa.Integer),
                       sa.column('group_number', sa.Integer), sa.column('code', sa.String),
                       sa.column('count', sa.Integer))
    rows = bind.execute(sa.select(tallies.c.question_id, tallies.c.group_number,
                                  tallies.c.code, tallies.c.count)).all()
    letters = {name: letter for letter, name in _CODES.items()}
    op.drop_table('code_tallies')
    old = op.create_table(
        'code_tallies',
        sa.Column('question_id', sa.Integer(), nullable=False),
        sa.Column('code', sa.String(length=1), nullable=False),
        sa.Column('count', sa.Integer(), nullable=False),
        sa.CheckConstraint("code = 'T' OR code = 'L' OR code = 'D'",
                           name=op.f('ck_code_tallies_code')),
        sa.CheckConstraint('count >= 0', name=op.f('ck_code_tallies_count')),
        sa.ForeignKeyConstraint(['question_id'], ['questions.id'],
                                name=op.f('fk_code_tallies_question_id_questions'),
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('question_id', 'code', name=op.f('pk_code_tallies')),
    )
    totals: dict[tuple[int, str], int] = {}
    for key, _group, code, count in rows:
        totals[key, letters[code]] = totals.get((key, letters[code]), 0) + count
    if totals:
        op.bulk_insert(old, [{"question_id": key, "code": code, "count": count}
                             for (key, code), count in totals.items()])

    with op.batch_alter_table('responses', table_kwargs={'sqlite_with_rowid': False}) as batch:
        batch.drop_constraint(op.f('ck_responses_answer'), type_='check')
        batch.drop_column('group_number')
        batch.alter_column('answer', existing_type=sa.String(length=64),
                           type_=sa.String(length=9), existing_nullable=False)
        batch.create_check_constraint(
            'answer', "answer = 'yes' OR answer = 'no' OR answer = 'dont_know'")
    with op.batch_alter_table('respondents') as batch:
        batch.drop_column('group_number')

    with op.batch_alter_table('surveys') as batch:
        batch.add_column(sa.Column('p', sa.Float(), nullable=True))
        batch.add_column(sa.Column('q', sa.Float(), nullable=True))
    with op.batch_alter_table('questions') as batch:
        batch.add_column(sa.Column('p', sa.Float(), nullable=True))
        batch.add_column(sa.Column('q', sa.Float(), nullable=True))
    full = sa.table('questions', sa.column('id', sa.Integer), sa.column('p', sa.Float),
                    sa.column('q', sa.Float))
    surveys = sa.table('surveys', sa.column('id', sa.Integer), sa.column('p', sa.Float),
                       sa.column('q', sa.Float))
    first: dict[int, tuple[float, float]] = {}
    for key, (survey, spec) in sorted(specs.items()):
        p, q = spec["parameters"]["p"], spec["parameters"]["q"]
        bind.execute(full.update().where(full.c.id == key).values(p=p, q=q))
        first.setdefault(survey, (p, q))
    for survey, (p, q) in first.items():
        bind.execute(surveys.update().where(surveys.c.id == survey).values(p=p, q=q))
    bind.execute(surveys.update().where(surveys.c.p.is_(None)).values(p=0.5, q=0.25))
    with op.batch_alter_table('questions') as batch:
        batch.alter_column('p', existing_type=sa.Float(), nullable=False)
        batch.alter_column('q', existing_type=sa.Float(), nullable=False)
        batch.drop_column('design')
    with op.batch_alter_table('surveys') as batch:
        batch.alter_column('p', existing_type=sa.Float(), nullable=False)
        batch.alter_column('q', existing_type=sa.Float(), nullable=False)
