"""The hash chain of the event log, in plain Python so that a standalone verifier can use it.

Each event's hash is SHA-256 over a canonical JSON of the event's fields and the previous event's
hash; the first event of a campaign chains to GENESIS. Changing, removing or reordering any event
changes every hash after it.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

GENESIS = "0" * 64


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def timestamp(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def event_hash(
    *,
    campaign: int,
    seq: int,
    type: str,
    payload: Any,
    actor: int | None,
    created_at: str,
    visibility: str,
    session: str | None,
    scene: str | None,
    chapter: str | None,
    character: str | None,
    prev_hash: str,
) -> str:
    body = {
        "campaign": campaign,
        "seq": seq,
        "type": type,
        "payload": payload,
        "actor": actor,
        "created_at": created_at,
        "visibility": visibility,
        "session": session,
        "scene": scene,
        "chapter": chapter,
        "character": character,
        "prev_hash": prev_hash,
    }
    return hashlib.sha256(canonical_json(body).encode()).hexdigest()
