"""Appending to a campaign's stream: one place, one lock, a gapless seq and a hash chain."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any
from uuid import UUID

from django.db import connection, models, transaction
from django.utils import timezone

from eventlog import projections, rows
from eventlog.chain import (
    SALT_BYTES,
    canonical_json,
    document_hash,
    event_document,
    is_sealed,
    stored_text_hash,
    timestamp,
)
from eventlog.event_types import SEALED_KEY
from eventlog.models import Event, payload_text_for, stream_owners
from eventlog.recorders import recorder

if TYPE_CHECKING:
    from campaign.models import Campaign

# Set on a Campaign whose row this transaction locked: its head_seq/head_hash are the stream's.
HELD = "_stream_head_held"

# Called with each event after its transaction commits (the live feed subscribes here).
_after_commit_listeners: list[Callable[[Event], None]] = []


def on_event_committed(listener: Callable[[Event], None]) -> None:
    _after_commit_listeners.append(listener)


def lock_stream(campaign_id: int) -> Campaign:
    """Lock the campaign's stream head until the transaction ends.

    Services take the lock *before* reading the projections their decisions depend on, so a
    decision (is the free botch still unused?) and the event recording it are one atomic step.
    On SQLite the IMMEDIATE transaction mode already serialises writers.
    """
    if not connection.in_atomic_block:
        raise RuntimeError("lock_stream() must run inside transaction.atomic()")
    owners = stream_owners().model
    row = rows.fetchone(_lock_sql(connection.vendor), (campaign_id,))
    if row is None:
        raise owners.DoesNotExist(f"no campaign {campaign_id}")
    return held(rows.instance(owners, row))


@cache  # hand-written and prepared: the ORM's query building costs more than the lock
def _lock_sql(vendor: str) -> str:
    """On PostgreSQL an UPDATE that changes nothing, not a SELECT … FOR UPDATE: it leaves the
    head's row a new version even when the holder appends nothing, which is how a check, whose
    one statement locks and reads, tells that it waited for a holder that committed
    (`eventlog.recorders.postgres.locked_read_sql`)."""
    table = stream_owners().model._meta.db_table
    columns = rows.columns(stream_owners().model, table)
    if vendor == "postgresql":
        return f"UPDATE {table} SET head_seq = head_seq WHERE id = %s RETURNING {columns}"
    return f"SELECT {columns} FROM {table} WHERE {table}.id = %s"


def held(campaign: Campaign) -> Campaign:
    """Mark a campaign read under the stream lock: appends chain to its head without reading it
    again (the recorder still refuses an append whose head moved)."""
    setattr(campaign, HELD, True)
    return campaign


def document_of(event: Event) -> dict[str, Any]:
    """The event as the plain document the chain hashes (see `eventlog.chain.event_document`)."""
    return event_document(
        event.campaign_id,
        event.seq,
        event.type,
        event.payload,
        event.actor_id,
        event.created_at,
        event.visibility,
        event.session_id,
        event.scene_id,
        event.chapter_id,
        event.character_id,
        event.prev_hash,
    )


def hash_of(event: Event) -> str:
    return document_hash(document_of(event))


def _text(value: UUID | None) -> str | None:
    return None if value is None else str(value)


def append_event(
    *,
    campaign: Campaign,
    type: str,
    payload: dict[str, Any],
    actor_id: int | None,
    visibility: str = "public",
    session_id: UUID | None = None,
    scene_id: UUID | None = None,
    chapter_id: UUID | None = None,
    character_id: UUID | None = None,
    read: Sequence[models.Model] = (),
) -> Event:
    """Append one event to a stream locked by `lock_stream`, and project it, atomically.
    ``read``: read-model rows the caller read under the lock that the event changes; the
    projectors change these instances rather than read them again (`projections.read_row`)."""
    if is_sealed(visibility):
        # The secret salt makes the sealed hash unguessable: see eventlog.chain.
        payload = {**payload, SEALED_KEY: secrets.token_hex(SALT_BYTES)}
    if getattr(campaign, HELD, False):
        head = campaign
    else:  # a campaign object read before the lock: the head as the lock found it
        head = stream_owners().select_for_update().only("head_seq", "head_hash").get(pk=campaign.pk)
    event = rows.new(
        Event,
        {
            "campaign_id": campaign.pk,
            "seq": head.head_seq + 1,
            "type": type,
            "payload": payload,
            "actor_id": actor_id,
            "created_at": timezone.now(),
            "visibility": visibility,
            "session_id": session_id,
            "scene_id": scene_id,
            "chapter_id": chapter_id,
            "character_id": character_id,
            "prev_hash": head.head_hash,
        },
    )
    # The payload encoded canonically once: stored (PostgreSQL's payload_text; SQLite's JSON
    # column), hashed, and decoded by the projection.
    event.canonical_text = text = canonical_json(payload)
    event.payload_text = payload_text_for(payload, text)
    event.hash = stored_text_hash(
        campaign=event.campaign_id,
        seq=event.seq,
        type=type,
        text=text,
        actor=actor_id,
        created_at=timestamp(event.created_at),
        visibility=visibility,
        session=_text(session_id),
        scene=_text(scene_id),
        chapter=_text(chapter_id),
        character=_text(character_id),
        prev_hash=event.prev_hash,
        parsed=payload,
    )
    # The head is locked by this transaction, so nothing waits for the append before COMMIT:
    # on PostgreSQL it goes with it (event.pk is set then; eventlog/commit.py).
    recorder().append_later([event], expected_seq=head.head_seq)
    event._state.adding = False
    campaign.head_seq, campaign.head_hash = event.seq, event.hash
    held(campaign)
    event.read_rows = tuple(read)
    projections.apply(event)
    for listener in _after_commit_listeners:
        transaction.on_commit(lambda listener=listener: listener(event))
    return event
