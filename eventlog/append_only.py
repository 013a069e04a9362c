"""Database triggers that make the event table append-only, for SQLite and PostgreSQL.

The migration installs them; tests that must empty the table between runs drop and reinstall
them around Django's flush (see tests/conftest.py). Nothing else should ever call `drop`.
"""

from __future__ import annotations

from django.db.backends.base.base import BaseDatabaseWrapper

TABLE = "campaign_event"
MESSAGE = "campaign_event is append-only"

_SQLITE_INSTALL = [
    f"""CREATE TRIGGER IF NOT EXISTS {TABLE}_no_update BEFORE UPDATE ON {TABLE}
        BEGIN SELECT RAISE(ABORT, '{MESSAGE}: UPDATE refused'); END""",
    f"""CREATE TRIGGER IF NOT EXISTS {TABLE}_no_delete BEFORE DELETE ON {TABLE}
        BEGIN SELECT RAISE(ABORT, '{MESSAGE}: DELETE refused'); END""",
]
_SQLITE_DROP = [
    f"DROP TRIGGER IF EXISTS {TABLE}_no_update",
    f"DROP TRIGGER IF EXISTS {TABLE}_no_delete",
]

_POSTGRES_INSTALL = [
    f"""CREATE OR REPLACE FUNCTION {TABLE}_refuse_change() RETURNS trigger AS $$
        BEGIN
            RAISE EXCEPTION '{MESSAGE}: % refused', TG_OP
                USING ERRCODE = 'integrity_constraint_violation';
        END;
        $$ LANGUAGE plpgsql""",
    f"DROP TRIGGER IF EXISTS {TABLE}_no_change ON {TABLE}",
    f"""CREATE TRIGGER {TABLE}_no_change BEFORE UPDATE OR DELETE ON {TABLE}
        FOR EACH ROW EXECUTE FUNCTION {TABLE}_refuse_change()""",
    f"DROP TRIGGER IF EXISTS {TABLE}_no_truncate ON {TABLE}",
    f"""CREATE TRIGGER {TABLE}_no_truncate BEFORE TRUNCATE ON {TABLE}
        FOR EACH STATEMENT EXECUTE FUNCTION {TABLE}_refuse_change()""",
]
_POSTGRES_DROP = [
    f"DROP TRIGGER IF EXISTS {TABLE}_no_change ON {TABLE}",
    f"DROP TRIGGER IF EXISTS {TABLE}_no_truncate ON {TABLE}",
]


def _statements(connection: BaseDatabaseWrapper, install: bool) -> list[str]:
    if connection.vendor == "sqlite":
        return _SQLITE_INSTALL if install else _SQLITE_DROP
    if connection.vendor == "postgresql":
        return _POSTGRES_INSTALL if install else _POSTGRES_DROP
    raise NotImplementedError(f"no append-only triggers for {connection.vendor}")


def install(connection: BaseDatabaseWrapper) -> None:
    with connection.cursor() as cursor:
        for statement in _statements(connection, install=True):
            cursor.execute(statement)


def drop(connection: BaseDatabaseWrapper) -> None:
    with connection.cursor() as cursor:
        for statement in _statements(connection, install=False):
            cursor.execute(statement)
