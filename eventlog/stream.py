"""Appending to a campaign's stream: one place, one lock, a gapless seq and a hash chain."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from uuid import UUID

from django.db import connection, transaction
from django.utils import timezone

from eventlog import projections
from eventlog.chain import SALT_BYTES, document_hash, event_document, is_sealed
from eventlog.event_types import SEALED_KEY
from eventlog.models import Event, payload_text_for, stream_owners

if TYPE_CHECKING:
    from campaign.models import Campaign

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
    return stream_owners().select_for_update().get(pk=campaign_id)


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
) -> Event:
    """Append one event to a stream locked by `lock_stream`, and project it, atomically."""
    if is_sealed(visibility):
        # The secret salt makes the sealed hash unguessable: see eventlog.chain.
        payload = {**payload, SEALED_KEY: secrets.token_hex(SALT_BYTES)}
    head = stream_owners().select_for_update().only("head_seq", "head_hash").get(pk=campaign.pk)
    event = Event(
        campaign_id=campaign.pk,
        seq=head.head_seq + 1,
        type=type,
        payload=payload,
        actor_id=actor_id,
        created_at=timezone.now(),
        visibility=visibility,
        session_id=session_id,
        scene_id=scene_id,
        chapter_id=chapter_id,
        character_id=character_id,
        prev_hash=head.head_hash,
        payload_text=payload_text_for(payload),
    )
    event.hash = hash_of(event)
    event.save(force_insert=True)
    stream_owners().filter(pk=campaign.pk).update(head_seq=event.seq, head_hash=event.hash)
    campaign.head_seq, campaign.head_hash = event.seq, event.hash
    projections.apply(event)
    for listener in _after_commit_listeners:
        transaction.on_commit(lambda listener=listener: listener(event))
    return event
