"""Replayers of play events (`eventlog.replay`): what `rolls.checks.projectors` does to the rows,
done to the rows a rebuild keeps in memory. A long log is mostly `check.rolled`, so its check row
is built straight as the values the database stores (`Checks`)."""

from __future__ import annotations

import json
from functools import cache
from typing import Any
from uuid import UUID

from django.db import connection

from campaign.replayers import characters
from eventlog import replay as replaying
from eventlog.event_types import (
    CHARACTER_WILLPOWER_RESTORED,
    CHECK_CALL_CLOSED,
    CHECK_CALLED,
    CHECK_DRAMATIC_FAILURE_TAKEN,
    CHECK_EXTRA_NICE_TAKEN,
    CHECK_FORTUNE_SPENT,
    CHECK_REVEALED,
    CHECK_ROLLED,
    TASK_RESET,
)
from eventlog.projections import written_fields
from eventlog.replay import Buffer, Replay, Replayed, WriteBehind, replays
from rolls.checks.projectors import key_index
from rolls.models import Check, CheckCall, RuleUse, TaskAttempts
from rolls.rules import recorded_failed_attempt, task_key
from rolls.systems.marks_text import rolls_json

# A check row's values in `written_fields(Check)` order (checked when a replay starts).
COLUMNS = (
    "campaign_id",
    "event_id",
    "seq",
    "kind",
    "system",
    "actor_id",
    "visibility",
    "audience",
    "revealed",
    "session_id",
    "scene_id",
    "chapter_id",
    "character_id",
    "label",
    "task",
    "manual",
    "outcome",
    "amendments",
    "resource_changes",
    "created_at",
    "key_index",
    "marks_json",
)
SEQ, REVEALED, CHARACTER = (COLUMNS.index(name) for name in ("seq", "revealed", "character_id"))
OUTCOME, AMENDMENTS, CHANGES = (
    COLUMNS.index(name) for name in ("outcome", "amendments", "resource_changes")
)
_CHANGED = ("revealed", "outcome", "amendments", "resource_changes")  # what a later event changes


class Checks:
    """The campaign's check rows during a replay, by seq: the latest `WINDOW` in memory (the
    follow-ups' and resources' dicts kept as dicts until written); an older one is read back
    when a later event changes it, and written back with an UPDATE."""

    def __init__(self, behind: WriteBehind) -> None:
        fields = written_fields(Check)
        assert tuple(field.attname for field in fields) == COLUMNS, "Check's columns changed"
        self.fields = fields
        self.behind = behind
        self.rows: dict[int, list[Any]] = {}
        self.read_back: set[int] = set()
        self.campaign_id: int | None = None
        self.slid = False

    def add(self, row: list[Any]) -> None:
        self.campaign_id = row[0]
        self.rows[row[SEQ]] = row
        window = replaying.WINDOW
        if len(self.rows) >= window:
            oldest = [seq for seq, _ in zip(self.rows, range(window // 2), strict=False)]
            self._write([self.rows.pop(seq) for seq in oldest])
            self.slid = True

    def get(self, seq: int) -> list[Any] | None:
        row = self.rows.get(seq)
        if row is None and self.slid:
            self.behind.wait()  # it may be in the batch being written
            row = self._read_back(seq)
        return row

    def write(self) -> None:
        self._write(list(self.rows.values()))
        self.rows.clear()

    def _write(self, rows: list[list[Any]]) -> None:
        new, old = [], []
        for row in rows:
            row[AMENDMENTS] = json.dumps(row[AMENDMENTS]) if row[AMENDMENTS] else "{}"
            row[CHANGES] = json.dumps(row[CHANGES]) if row[CHANGES] else "{}"
            (old if row[SEQ] in self.read_back else new).append(row)
        if new:
            self.behind.copy(Check, self.fields, new)
        if old:  # read back (`get`), so written by a batch before
            cast = "::jsonb" if connection.vendor == "postgresql" else ""
            table = Check._meta.db_table
            with connection.cursor() as cursor:
                cursor.executemany(
                    f"UPDATE {table} SET revealed = %s, outcome = %s, amendments = %s{cast}, "
                    f"resource_changes = %s{cast} WHERE campaign_id = %s AND seq = %s",
                    [
                        (row[REVEALED], row[OUTCOME], row[AMENDMENTS], row[CHANGES], row[0], seq)
                        for row in old
                        for seq in (row[SEQ],)
                    ],
                )

    def _read_back(self, seq: int) -> list[Any] | None:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT {', '.join(_CHANGED)}, character_id FROM {Check._meta.db_table} "
                "WHERE campaign_id = %s AND seq = %s",
                (self.campaign_id, seq),
            )
            found = cursor.fetchone()
        if found is None:
            return None
        revealed, outcome, amendments, changes, character = found
        row: list[Any] = [None] * len(COLUMNS)
        row[0], row[SEQ], row[CHARACTER] = self.campaign_id, seq, character
        row[REVEALED], row[OUTCOME] = bool(revealed), outcome
        row[AMENDMENTS], row[CHANGES] = _decoded(amendments), _decoded(changes)
        self.rows[seq] = row
        self.read_back.add(seq)
        return row


def _decoded(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


@cache
def _audience_text(audience: tuple[int, ...]) -> str:
    """The stored text of a check's audience (a few lists recur over a whole log)."""
    return json.dumps(list(audience))


def checks(replay: Replay) -> Checks:
    return replay.table(Check, lambda: Checks(replay.behind))


def _rule_uses(replay: Replay) -> Buffer:
    return replay.buffer(RuleUse)


def _add_resource(
    replay: Replay, character_id: str | None, name: str, delta: int, check: list | None = None
) -> None:
    """`rolls.checks.projectors._add_resource` on the replay's rows."""
    if not character_id or not delta:
        return
    if check is not None:
        changes = {key: dict(value) for key, value in check[CHANGES].items()}
        mine = changes.setdefault(str(character_id), {})
        mine[name] = mine.get(name, 0) + delta
        check[CHANGES] = changes
    character = characters(replay).get(UUID(str(character_id)))
    if character is None:
        return
    resources = dict(character["resources"])
    resources[name] = max(0, int(resources.get(name, 0)) + delta)
    character["resources"] = resources


@replays(CHECK_ROLLED)
def _check_rolled(replay: Replay, event: Replayed) -> None:
    data = event.payload
    rolls = data["rolls"]
    row = [
        event.campaign_id,
        event.id,
        event.seq,
        data["kind"],
        data["system"],
        event.actor_id,
        event.visibility,
        _audience_text(tuple(data["audience"])),
        False,
        event.session_id,
        event.scene_id,
        event.chapter_id,
        event.character_id,
        data["label"],
        data["task"],
        data["dice"] == "manual",
        rolls[0]["result"]["outcome"],
        {},
        {},
        event.created_at,
        key_index(data.get("dice_key")),
        rolls_json(data["system"], rolls),
    ]
    (replay.buffers.get(Check) or checks(replay)).add(row)
    for roll in rolls:
        if roll["result"].get("free_botch_consumed"):
            _rule_uses(replay).add(
                campaign_id=event.campaign_id,
                rule="free_botch",
                period_id=event.session_id,
                character_id=roll["character_id"],
                check_seq=event.seq,
            )
        if roll.get("beats_awarded"):
            _add_resource(replay, roll["character_id"], "beats", roll["beats_awarded"], row)
        if roll.get("willpower_spent"):
            _add_resource(replay, roll["character_id"], "willpower", -roll["willpower_spent"], row)
        resisting = roll.get("resistance_willpower_spent")
        if resisting:
            _add_resource(replay, resisting["character_id"], "willpower", -resisting["points"], row)
    for helper_seq in data.get("helpers", []):
        _rule_uses(replay).add(
            campaign_id=event.campaign_id, rule="helper", period_id=None, check_seq=helper_seq
        )
    failed = recorded_failed_attempt(data)
    if failed is not None:
        character_id = rolls[0]["character_id"]
        task = task_key(data["task"])
        counters = replay.buffer(TaskAttempts)
        key = (UUID(str(character_id)), task)
        counter = counters.get(key)
        if not failed:
            counters.remove(key)
        elif counter is not None:
            counter["failures"] += 1
        else:
            counters.add(
                key,
                campaign_id=event.campaign_id,
                character_id=character_id,
                task=task,
                failures=1,
            )
    if data.get("call_id"):
        call = replay.buffer(CheckCall).get(UUID(data["call_id"]))
        if call is not None:
            call["answered"] = {
                **call["answered"],
                str(replay.text_id(event.character_id)): event.seq,
            }
            call["closed"] = set(call["answered"]) >= set(call["character_ids"])


def _update_roll(replay: Replay, event: Replayed, **changes: Any) -> list[Any]:
    """`rolls.checks.projectors._update_roll` on the replay's check row."""
    check = checks(replay).get(event.payload["check_seq"])
    if check is None:
        raise Check.DoesNotExist(f"no check #{event.payload['check_seq']} to follow up")
    amendments = dict(check[AMENDMENTS])
    amendments["roll"] = {**amendments.get("roll", {}), **changes}
    amendments["followups"] = [
        *amendments.get("followups", []),
        {"seq": event.seq, "type": event.type},
    ]
    if event.type == CHECK_FORTUNE_SPENT:
        amendments["fortune_spent"] = True
    check[AMENDMENTS] = amendments
    check[OUTCOME] = changes["result"]["outcome"]
    return check


def _character_text(replay: Replay, check: list[Any]) -> str:
    return str(replay.text_id(check[CHARACTER]))


@replays(CHECK_DRAMATIC_FAILURE_TAKEN)
def _dramatic_failure(replay: Replay, event: Replayed) -> None:
    check = _update_roll(replay, event, result=event.payload["result"])
    _rule_uses(replay).add(
        campaign_id=event.campaign_id,
        rule="intentional_dramatic_failure",
        period_id=event.payload["period_id"],
        character_id=check[CHARACTER],
        check_seq=check[SEQ],
    )
    _add_resource(replay, _character_text(replay, check), "beats", event.payload["beats"], check)


@replays(CHECK_FORTUNE_SPENT)
def _fortune_spent(replay: Replay, event: Replayed) -> None:
    check = _update_roll(
        replay, event, result=event.payload["result"], check=event.payload["check"]
    )
    _add_resource(replay, _character_text(replay, check), "fortune", -event.payload["cost"], check)


@replays(CHECK_EXTRA_NICE_TAKEN)
def _extra_nice(replay: Replay, event: Replayed) -> None:
    _update_roll(replay, event, result=event.payload["result"], check=event.payload["check"])


@replays(CHECK_REVEALED)
def _revealed(replay: Replay, event: Replayed) -> None:
    check = checks(replay).get(event.payload["check_seq"])
    if check is not None:
        check[REVEALED] = True


@replays(TASK_RESET)
def _task_reset(replay: Replay, event: Replayed) -> None:
    key = (UUID(str(event.payload["character_id"])), task_key(event.payload["task"]))
    replay.buffer(TaskAttempts).remove(key)


@replays(CHARACTER_WILLPOWER_RESTORED)
def _willpower_restored(replay: Replay, event: Replayed) -> None:
    _add_resource(replay, event.payload["character_id"], "willpower", event.payload["amount"])


@replays(CHECK_CALLED)
def _called(replay: Replay, event: Replayed) -> None:
    call_id = event.payload["call_id"]
    replay.buffer(CheckCall).add(
        UUID(call_id),
        id=call_id,
        campaign_id=event.campaign_id,
        seq=event.seq,
        request=event.payload["request"],
        character_ids=event.payload["character_ids"],
    )


@replays(CHECK_CALL_CLOSED)
def _call_closed(replay: Replay, event: Replayed) -> None:
    call = replay.buffer(CheckCall).get(UUID(event.payload["call_id"]))
    if call is not None:
        call["closed"] = True
