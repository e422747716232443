"""Alembic environment for surveykit.

surveykit.store.migrate passes an open connection in ``config.attributes["connection"]``;
the alembic command line (developers only) passes ``-x db=URL`` instead.
"""

from alembic import context

from surveykit.store.models import Base

config = context.config
target_metadata = Base.metadata


def run_migrations(connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        # SQLite cannot ALTER most things: batch mode copies the table instead.
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_offline() -> None:
    url = context.get_x_argument(as_dictionary=True).get("db", "sqlite:///surveykit.db")
    context.configure(url=url, target_metadata=target_metadata, literal_binds=True,
                      render_as_batch=url.startswith("sqlite"))
    with context.begin_transaction():
        context.run_migrations()


connection = config.attributes.get("connection")
if context.is_offline_mode():
    run_migrations_offline()
elif connection is not None:
    run_migrations(connection)
else:
    from surveykit.store import open_engine

    url = context.get_x_argument(as_dictionary=True).get("db")
    engine = open_engine(url)
    with engine.connect() as conn:
        run_migrations(conn)
    engine.dispose()
