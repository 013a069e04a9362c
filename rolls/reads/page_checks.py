"""The check rows a batch of events belongs to, in one hand-written statement, as the few
columns presenting reads (`may_see`, the follow-up rules, a follow-up's amended marks): no
queryset, no model instance. A catch-up page of 200 events read them through the ORM with their
events in about as long as the rest of the page took to present (issue #17)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any
from uuid import UUID

from eventlog.event_types import CHECK_REVEALED, CHECK_ROLLED, FOLLOWUP_TYPES
from eventlog.models import Event
from eventlog.rows import fetch
from rolls.models import Check

COLUMNS = (
    "seq",
    "kind",
    "system",
    "visibility",
    "revealed",
    "audience",
    "character_id",
    "chapter_id",
    "scene_id",
    "amendments",
)
_UUIDS = frozenset({"character_id", "chapter_id", "scene_id"})
SMALLEST = 8  # the IN list is padded to a power of two: a few shapes, each prepared once


class CheckRow:
    """A check row as presenting an event reads it; ``event`` is its `check.rolled` event (the
    page's own when the page holds it), as `Check.event` is."""

    __slots__ = (*COLUMNS, "event")

    data = property(Check.data.fget)  # the one composition of the roll and its amendments

    def __repr__(self) -> str:
        return f"<CheckRow #{self.seq}>"


class _Rolled:
    """The `check.rolled` event of a check the batch does not hold: only its payload is read."""

    __slots__ = ("payload",)

    def __init__(self, payload: dict[str, Any]) -> None:
        self.payload = payload


def target_seq(event: Event) -> int | None:
    """The seq of the check an event belongs to (its own for a roll), None for other events."""
    if event.type == CHECK_ROLLED:
        return event.seq
    if event.type in FOLLOWUP_TYPES or event.type == CHECK_REVEALED:
        return event.payload.get("check_seq")
    return None


@cache
def _sql(size: int, missing: int) -> str:
    checks, events = Check._meta.db_table, Event._meta.db_table
    listed = ", ".join(f"k.{column}" for column in COLUMNS)
    return (
        # Only the checks whose event the batch does not hold bring its payload (decoding them
        # all cost PostgreSQL's client as much as the rest of the statement).
        f"SELECT {listed}, e.payload FROM {checks} k "
        f"LEFT JOIN {events} e ON e.campaign_id = k.campaign_id AND e.seq = k.seq "
        f"AND e.seq IN ({', '.join(['%s'] * missing)}) "
        # The bounds let the (campaign, seq) index bound the scan whatever the planner's
        # statistics say (a table just rebuilt had none: it scanned the campaign's checks).
        f"WHERE k.campaign_id = %s AND k.seq BETWEEN %s AND %s "
        f"AND k.seq IN ({', '.join(['%s'] * size)})"
    )


def _padded(seqs: list[int], pad: int) -> list[int]:
    """``seqs`` padded to a power of two (at least SMALLEST) with ``pad``."""
    size = SMALLEST
    while size < len(seqs):
        size *= 2
    return [*seqs, *[pad] * (size - len(seqs))]


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, (str, bytes)) else value


def _shared(decoded: dict[Any, Any], stored: Any) -> Any:
    if not isinstance(stored, (str, bytes)):  # decoded by the driver already
        return stored
    value = decoded.get(stored)
    if value is None:
        value = decoded[stored] = json.loads(stored)
    return value


def checks_of(events: Sequence[Event]) -> dict[int, CheckRow]:
    """The check rows ``events`` belong to, by seq (one statement; none without a check event)."""
    targets = sorted({seq for event in events if (seq := target_seq(event)) is not None})
    if not targets:
        return {}
    rolled = {event.seq: event for event in events if event.type == CHECK_ROLLED}
    missing = _padded([seq for seq in targets if seq not in rolled], -1)  # no event has seq -1
    listed = _padded(targets, targets[-1])
    params = [*missing, events[0].campaign_id, targets[0], targets[-1], *listed]
    return {row.seq: row for row in _rows(fetch(_sql(len(listed), len(missing)), params), rolled)}


def _rows(found: Iterable[tuple], rolled: dict[int, Event]) -> Iterable[CheckRow]:
    uuids: dict[Any, UUID | None] = {None: None}  # SQLite keeps UUIDs as hex text
    # A page's audiences and amendments are mostly the same few texts ("[2]", "{}"): each is
    # decoded once, and the rows share the value (presenting reads them, never changes them).
    decoded: dict[Any, Any] = {}
    at_uuid = [n for n, column in enumerate(COLUMNS) if column in _UUIDS]
    for values in found:
        row = CheckRow()
        values = list(values)
        for n in at_uuid:
            stored = values[n]
            if stored not in uuids:
                uuids[stored] = stored if isinstance(stored, UUID) else UUID(stored)
            values[n] = uuids[stored]
        (
            row.seq,
            row.kind,
            row.system,
            row.visibility,
            revealed,
            audience,
            row.character_id,
            row.chapter_id,
            row.scene_id,
            amendments,
            payload,
        ) = values
        row.revealed = bool(revealed)
        row.audience = _shared(decoded, audience)
        row.amendments = _shared(decoded, amendments)
        event = rolled.get(row.seq)
        row.event = event if event is not None else _Rolled(_json(payload))
        yield row
