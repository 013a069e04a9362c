"""The hash chain of the event log, in plain Python so that a standalone verifier can use it.

Each event's hash is SHA-256 over a canonical JSON of the event's document (`HASHED_FIELDS`) and
the previous event's hash; the first event of a campaign chains to GENESIS. Changing, removing or
reordering any event changes every hash after it. `event_document` is the one place that turns an
event's stored values into that document (the server's append, its stored-log check and exports
all call it); `document_hash` is the one place that hashes it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

GENESIS = "0" * 64
HASHED_FIELDS = (
    "campaign",
    "seq",
    "type",
    "payload",
    "actor",
    "created_at",
    "visibility",
    "session",
    "scene",
    "chapter",
    "character",
    "prev_hash",
)


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def timestamp(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def _text(value: UUID | str | None) -> str | None:
    return None if value is None else str(value)


def event_document(
    campaign: int,
    seq: int,
    type: str,
    payload: Any,
    actor: int | None,
    created_at: datetime,
    visibility: str,
    session: UUID | str | None,
    scene: UUID | str | None,
    chapter: UUID | str | None,
    character: UUID | str | None,
    prev_hash: str,
    hash: str | None = None,
) -> dict[str, Any]:
    """An event's stored values as the plain document that is hashed, exported and verified
    (ids as text, the time in ISO 8601 UTC with microseconds); ``hash`` is added when given."""
    document = {
        "campaign": campaign,
        "seq": seq,
        "type": type,
        "payload": payload,
        "actor": actor,
        "created_at": timestamp(created_at),
        "visibility": visibility,
        "session": _text(session),
        "scene": _text(scene),
        "chapter": _text(chapter),
        "character": _text(character),
        "prev_hash": prev_hash,
    }
    if hash is not None:
        document["hash"] = hash
    return document


def document_hash(document: Mapping[str, Any]) -> str:
    """The chain hash of an event document (only `HASHED_FIELDS` count; raises KeyError when one
    is missing)."""
    body = {name: document[name] for name in HASHED_FIELDS}
    return hashlib.sha256(canonical_json(body).encode()).hexdigest()
