"""Rewriting a stored event's payload in place, as a forger with the owner's rights would (the
append-only triggers lifted): where the trust tests start."""

from __future__ import annotations

from django.db import connection


def payload_column() -> str:
    """The column that holds an event's payload as written: SQLite's payload; PostgreSQL's
    canonical text, which the jsonb payload is generated from (eventlog.0007)."""
    return "payload_text" if connection.vendor == "postgresql" else "payload"
