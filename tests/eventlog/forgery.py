"""Rewriting a stored event's payload in place, as a forger with the owner's rights would (the
append-only triggers lifted): where the trust tests start."""

from __future__ import annotations

from django.db import connection

from eventlog import append_only


def payload_column() -> str:
    """The column that holds an event's payload as written: SQLite's payload; PostgreSQL's
    canonical text, which the jsonb payload is generated from (eventlog.0007)."""
    return "payload_text" if connection.vendor == "postgresql" else "payload"


def rewrite_payload(event_id: int, text: str) -> str:
    """Store ``text`` as the event's payload, as written, and return the text it replaces (to
    put it back)."""
    column = payload_column()
    append_only.drop(connection)
    try:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT {column} FROM campaign_event WHERE id = %s", [event_id])
            (stored,) = cursor.fetchone()
            update = f"UPDATE campaign_event SET {column} = %s WHERE id = %s"
            cursor.execute(update, [text, event_id])
    finally:
        append_only.install(connection)
    return stored
