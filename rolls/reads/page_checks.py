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

from django.db import connection

from eventlog.event_types import CHECK_REVEALED, CHECK_ROLLED, FOLLOWUP_TYPES, TASK_RESET
from eventlog.models import Event
from eventlog.recorders import decode, recorder
from rolls.models import Check
from rolls.reads.known import used_as_helper_sql

COLUMNS = (
    "seq",
    "kind",
    "system",
    "visibility",
    "revealed",
    "audience",
    "character_id",
    "session_id",
    "chapter_id",
    "scene_id",
    "amendments",
    "marks_json",
)
_UUIDS = frozenset({"character_id", "session_id", "chapter_id", "scene_id"})
_JSON = frozenset({"audience", "amendments"})


class CheckRow:
    """A check row as presenting an event reads it; ``event`` is its `check.rolled` event (the
    page's own when the page holds it), as `Check.event` is."""

    __slots__ = (*COLUMNS, "used_as_helper", "event")

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
    if event.type in FOLLOWUP_TYPES or event.type in (CHECK_REVEALED, TASK_RESET):
        return event.payload.get("check_seq")  # a reset's: the failure it names, if hidden
    return None


@cache
def _sql(vendor: str) -> str:
    """One statement for every batch: the checks between the first and the last it needs, taken
    from ``from_seq`` on (a stretch's own) or when listed (the ones before a stretch that its
    follow-ups amend, or every one a filtered page needs). The seqs go as one array
    (PostgreSQL; an IN list of a page's 200 seqs was a new text per count) or one JSON array
    (SQLite's `json_each`). The jsonb columns come as text, decoded once per distinct text
    (`_shared`). The context ids (a check's are its roll's: rolls/checks/projectors.py) come
    as text for the checks before ``from_seq`` only: a stretch's own are taken from its events
    (a quarter of the statement's time on the server, #17)."""
    checks, events = Check._meta.db_table, Event._meta.db_table
    as_text = "::text" if vendor == "postgresql" else ""
    listed = ", ".join(
        f"CASE WHEN k.seq < %s THEN k.{column}{as_text} END"
        if column in _UUIDS
        else f"k.{column}{as_text}"
        if column in _JSON
        else f"k.{column}"
        for column in COLUMNS
    )
    if vendor == "postgresql":
        payload, among = "COALESCE(e.payload_text, e.payload::text)", "= ANY(%s)"
    else:
        payload, among = "e.payload", "IN (SELECT value FROM json_each(%s))"
    helped = used_as_helper_sql("k.campaign_id", "k.seq")  # what a dramatic failure's rule reads
    return (
        # Only the checks whose event the batch does not hold bring its payload (decoding them
        # all cost PostgreSQL's client as much as the rest of the statement), looked up for
        # those alone.
        f"SELECT {listed}, {helped}, CASE WHEN k.seq {among} THEN (SELECT {payload} "
        f"FROM {events} e WHERE e.campaign_id = k.campaign_id AND e.seq = k.seq) END "
        # The bounds let the (campaign, seq) index bound the scan whatever the planner says (a
        # table just rebuilt had no statistics: it scanned the campaign's checks; SQLite, given
        # a stretch's bounds OR'd with the checks before it, scanned them too). A stretch's own
        # rows are not matched against a list: PostgreSQL compared each row with the whole
        # array, a third of a 1,000-event page's statement (#17).
        f"FROM {checks} k WHERE k.campaign_id = %s AND k.seq BETWEEN %s AND %s "
        f"AND (k.seq >= %s OR k.seq {among})"
    )


def _array(seqs: list[int], vendor: str) -> Any:
    return seqs if vendor == "postgresql" else json.dumps(seqs)


def _json(value: Any) -> Any:
    return decode(value) if isinstance(value, (str, bytes)) else value


def _shared(decoded: dict[Any, Any], stored: Any) -> Any:
    if not isinstance(stored, (str, bytes)):  # decoded by the driver already
        return stored
    value = decoded.get(stored)
    if value is None:
        value = decoded[stored] = decode(stored)
    return value


def checks_of(events: Sequence[Event]) -> dict[int, CheckRow]:
    """The check rows ``events`` belong to, by seq (one statement; none without a check event)."""
    targets = sorted({seq for event in events if (seq := target_seq(event)) is not None})
    if not targets:
        return {}
    rolled = {event.seq: event for event in events if event.type == CHECK_ROLLED}
    missing = [seq for seq in targets if seq not in rolled]
    vendor = connection.vendor
    first, last = min(event.seq for event in events), max(event.seq for event in events)
    if last - first + 1 == len(events):  # a stretch of the log: its checks are all its own
        from_seq, listed = first, missing
    else:  # a filtered page (REST's type and context filters): its checks by seq
        from_seq, listed = targets[-1] + 1, targets
    params = [
        *[from_seq] * len(_UUIDS),
        _array(missing, vendor),
        events[0].campaign_id,
        targets[0],
        targets[-1],
        from_seq,
        _array(listed, vendor),
    ]
    found = recorder().fetch_many(_sql(vendor), params)
    return {row.seq: row for row in _rows(found, rolled, from_seq)}


def _rows(found: Iterable[tuple], rolled: dict[int, Event], from_seq: int) -> Iterable[CheckRow]:
    """The check rows, with the context ids of those from ``from_seq`` on (a stretch's own,
    which the query leaves out) taken from their roll's event in ``rolled``."""
    uuids: dict[Any, UUID | None] = {None: None}
    # A page's audiences and amendments are mostly the same few texts ("[2]", "{}"): each is
    # decoded once, and the rows share the value (presenting reads them, never changes them).
    decoded: dict[Any, Any] = {}
    at_uuid = [n for n, column in enumerate(COLUMNS) if column in _UUIDS]
    for values in found:
        row = CheckRow()
        values = list(values)
        event = rolled.get(values[0])
        if values[0] >= from_seq:  # a stretch's own: its roll is on the page
            for n in at_uuid:
                values[n] = getattr(event, COLUMNS[n])
        for n in at_uuid:
            stored = values[n]
            if stored not in uuids:  # the text (dashed, or SQLite's hex): each made once
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
            row.session_id,
            row.chapter_id,
            row.scene_id,
            amendments,
            row.marks_json,
            helped,
            payload,
        ) = values
        row.revealed = bool(revealed)
        row.used_as_helper = bool(helped)
        row.audience = _shared(decoded, audience)
        row.amendments = _shared(decoded, amendments)
        row.event = event if event is not None else _Rolled(_json(payload))
        yield row
