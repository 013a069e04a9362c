"""Least privilege on PostgreSQL: the owner migrates, the application only appends.

Migrations (and the append-only triggers they install) run as the *owner* of the tables. The
application connects as a separate role that may read everything it shows and write its
projections, but may only SELECT and INSERT the event log and the session secrets: no UPDATE,
DELETE or TRUNCATE, and, not owning any table, no ALTER TABLE … DISABLE TRIGGER, no DROP TRIGGER,
no `SET session_replication_role` (superuser only). A stolen application password can add events
but cannot rewrite, remove or silently bypass history.
"""

from __future__ import annotations

from django.db.backends.base.base import BaseDatabaseWrapper

# Tables the application may only read and append to.
APPEND_ONLY_TABLES = ("campaign_event", "campaign_sessionsecret")


def _quoted(connection: BaseDatabaseWrapper, name: str) -> str:
    return connection.ops.quote_name(name)


def grant_app_role(connection: BaseDatabaseWrapper, *, role: str, password: str | None) -> None:
    """Create ``role`` if it does not exist (idempotent) and give it exactly what the app needs
    on the connection's database. Run as the tables' owner, after every migration."""
    if connection.vendor != "postgresql":
        raise NotImplementedError("database roles are a PostgreSQL feature")
    name = _quoted(connection, role)
    database = _quoted(connection, connection.settings_dict["NAME"])
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role])
        if cursor.fetchone() is None:
            cursor.execute(f"CREATE ROLE {name} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE")
        if password:
            cursor.execute(f"ALTER ROLE {name} PASSWORD %s", [password])
        cursor.execute(f"GRANT CONNECT ON DATABASE {database} TO {name}")
        cursor.execute(f"GRANT USAGE ON SCHEMA public TO {name}")
        cursor.execute(f"REVOKE CREATE ON SCHEMA public FROM {name}")
        cursor.execute(f"REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {name}")
        cursor.execute(
            f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {name}"
        )
        cursor.execute(f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {name}")
        for table in APPEND_ONLY_TABLES:
            cursor.execute(f"REVOKE UPDATE, DELETE ON {_quoted(connection, table)} FROM {name}")
        # The app reads which migrations ran (Django checks at start) but never records one.
        cursor.execute(f"REVOKE INSERT, UPDATE, DELETE ON django_migrations FROM {name}")
