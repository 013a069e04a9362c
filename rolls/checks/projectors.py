"""Projectors for play events: checks, their follow-ups, rule allowances, retries and calls.

They apply what each event records; the decisions themselves were taken by `rolls.checks.services`
under the stream lock, so replaying the log never re-decides a rule.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.db import connection

from campaign.models import Character
from eventlog import commit
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
from eventlog.models import Event
from eventlog.projections import (
    event_id,
    insert_values,
    projects,
    read_row,
    register_read_models,
    update_later,
)
from rolls.models import Check, CheckCall, RuleUse, TaskAttempts
from rolls.rules import recorded_failed_attempt, task_key
from rolls.systems.marks_text import rolls_json

register_read_models(Check, RuleUse, TaskAttempts, CheckCall)


def _with_change(
    changes: dict[str, dict[str, int]], character_id: str, name: str, delta: int
) -> dict[str, dict[str, int]]:
    """A check's `resource_changes` with ``delta`` more of ``name`` for the character."""
    changed = {key: dict(value) for key, value in changes.items()}
    mine = changed.setdefault(str(character_id), {})
    mine[name] = mine.get(name, 0) + delta
    return changed


def _add_to_sheet(character_id: str, name: str, delta: int) -> None:
    """Add ``delta`` to a resource on the character's sheet, never below 0. On PostgreSQL one
    UPDATE, sent with the COMMIT (eventlog/commit.py): the check that spent it read the sheet
    under the lock already, and a read here would cost the lock a round trip of its own. SQLite
    keeps JSON as its text, which must be the text a rebuild writes: read and written back."""
    if not character_id or not delta:
        return
    if connection.vendor == "postgresql":
        commit.write(connection, _ADD_TO_SHEET_SQL, (name, name, delta, character_id), None)
        return
    character = Character.objects.filter(pk=character_id).first()
    if character is None:
        return
    resources = dict(character.resources)
    resources[name] = max(0, int(resources.get(name, 0)) + delta)
    Character.objects.filter(pk=character_id).update(resources=resources)


_ADD_TO_SHEET_SQL = (
    f"UPDATE {Character._meta.db_table} SET resources = jsonb_set(resources, ARRAY[%s], "
    "to_jsonb(GREATEST(0, COALESCE((resources->>%s)::int, 0) + %s))) WHERE id = %s"
)


def _count_failure(campaign_id: int, character_id: str, task: str, failed: bool) -> None:
    """A task's failed attempts: one more after a failure, none after a success. Written
    without reading the counter (an upsert), so on PostgreSQL it goes with the COMMIT."""
    params = (campaign_id, _uuid_param(character_id), task)
    if failed:
        commit.write(connection, _FAILED_AGAIN_SQL, params, None)
    else:
        commit.write(connection, _TASK_DONE_SQL, params, None)


def _uuid_param(value: str) -> Any:
    return TaskAttempts._meta.get_field("character_id").get_db_prep_value(value, connection)


_ATTEMPTS = TaskAttempts._meta.db_table
_FAILED_AGAIN_SQL = (
    f"INSERT INTO {_ATTEMPTS} (campaign_id, character_id, task, failures) "
    "VALUES (%s, %s, %s, 1) ON CONFLICT (campaign_id, character_id, task) "
    f"DO UPDATE SET failures = {_ATTEMPTS}.failures + 1"
)
_TASK_DONE_SQL = (
    f"DELETE FROM {_ATTEMPTS} WHERE campaign_id = %s AND character_id = %s AND task = %s"
)


def key_index(dice_key: Any) -> int | None:
    """The roll key's index a check.rolled payload records (None where a log has none)."""
    index = dice_key.get("index") if isinstance(dice_key, dict) else None
    return index if type(index) is int and index >= 0 else None


@projects(CHECK_ROLLED)
def _check_rolled(event: Event) -> None:
    data = event.payload
    rolls = data["rolls"]
    # What the rolls spent and earned, on the row as it is inserted (no UPDATE after it).
    spent: list[tuple[str, str, int]] = []
    for roll in rolls:
        if roll.get("beats_awarded"):
            spent.append((roll["character_id"], "beats", roll["beats_awarded"]))
        if roll.get("willpower_spent"):
            spent.append((roll["character_id"], "willpower", -roll["willpower_spent"]))
        resisting = roll.get("resistance_willpower_spent")
        if resisting:  # CofD: the resisting character raised their trait with Willpower
            spent.append((resisting["character_id"], "willpower", -resisting["points"]))
    spent = [(who, name, delta) for who, name, delta in spent if who and delta]
    changes: dict[str, dict[str, int]] = {}
    for character_id, name, delta in spent:
        changes = _with_change(changes, character_id, name, delta)
    insert_values(
        Check,
        {
            "campaign_id": event.campaign_id,
            "event_id": event_id(event),
            "seq": event.seq,
            "kind": data["kind"],
            "system": data["system"],
            "actor_id": event.actor_id,
            "visibility": event.visibility,
            "audience": data["audience"],
            "session_id": event.session_id,
            "scene_id": event.scene_id,
            "chapter_id": event.chapter_id,
            "character_id": event.character_id,
            "label": data["label"],
            "task": data["task"],
            "manual": data["dice"] == "manual",
            "outcome": rolls[0]["result"]["outcome"],
            "resource_changes": changes,
            "created_at": event.created_at,
            "key_index": key_index(data.get("dice_key")),
            "marks_json": rolls_json(data["system"], rolls),
        },
    )
    for roll in rolls:
        if roll["result"].get("free_botch_consumed"):
            # Recorded as the character's under either scope: the services decide a character's
            # and the table's allowance from these rows whatever the option says now (#12, 4).
            insert_values(
                RuleUse,
                {
                    "campaign_id": event.campaign_id,
                    "rule": "free_botch",
                    "period_id": event.session_id,
                    "character_id": roll["character_id"],
                    "check_seq": event.seq,
                },
            )
    for character_id, name, delta in spent:
        _add_to_sheet(character_id, name, delta)
    for helper_seq in data.get("helpers", []):
        insert_values(
            RuleUse,
            {
                "campaign_id": event.campaign_id,
                "rule": "helper",
                "period_id": None,
                "character_id": None,
                "check_seq": helper_seq,
            },
        )
    failed = recorded_failed_attempt(data)
    if failed is not None:
        # One counter per task, whatever its case and spacing.
        _count_failure(event.campaign_id, rolls[0]["character_id"], task_key(data["task"]), failed)
    if data.get("call_id"):
        call_id = UUID(data["call_id"])
        call = (
            read_row(event, CheckCall, pk=call_id) or CheckCall.objects.filter(pk=call_id).first()
        )
        if call is not None:
            call.answered = {**call.answered, str(event.character_id): event.seq}
            call.closed = set(call.answered) >= set(call.character_ids)
            update_later(call, ("answered", "closed"))


def _followed_check(event: Event) -> Check:
    """The check a follow-up amends: as the service read it under the lock, else read."""
    seq = event.payload["check_seq"]
    found = read_row(event, Check, campaign_id=event.campaign_id, seq=seq)
    return found or Check.objects.get(campaign_id=event.campaign_id, seq=seq)


def _amend_roll(event: Event, row: Check, **changes: Any) -> None:
    """Record a follow-up's new result (and check) for the first roll of its check (in memory:
    `_write_amended` writes it)."""
    amendments = dict(row.amendments)
    amendments["roll"] = {**amendments.get("roll", {}), **changes}
    amendments["followups"] = [
        *amendments.get("followups", []),
        {"seq": event.seq, "type": event.type},
    ]
    if event.type == CHECK_FORTUNE_SPENT:
        amendments["fortune_spent"] = True
    row.amendments = amendments
    row.outcome = changes["result"]["outcome"]


def _spend(check: Check, name: str, delta: int) -> None:
    """A follow-up's change of a resource: on the check's record (in memory) and the sheet."""
    if check.character_id is None or not delta:
        return
    character_id = str(check.character_id)
    check.resource_changes = _with_change(check.resource_changes, character_id, name, delta)
    _add_to_sheet(character_id, name, delta)


_AMENDED = ("amendments", "outcome", "resource_changes")


@projects(CHECK_DRAMATIC_FAILURE_TAKEN)
def _dramatic_failure(event: Event) -> None:
    check = _followed_check(event)
    _amend_roll(event, check, result=event.payload["result"])
    insert_values(
        RuleUse,
        {
            "campaign_id": event.campaign_id,
            "rule": "intentional_dramatic_failure",
            "period_id": event.payload["period_id"],
            "character_id": check.character_id,
            "check_seq": check.seq,
        },
    )
    _spend(check, "beats", event.payload["beats"])
    update_later(check, _AMENDED)


@projects(CHECK_FORTUNE_SPENT)
def _fortune_spent(event: Event) -> None:
    check = _followed_check(event)
    _amend_roll(event, check, result=event.payload["result"], check=event.payload["check"])
    _spend(check, "fortune", -event.payload["cost"])
    update_later(check, _AMENDED)


@projects(CHECK_EXTRA_NICE_TAKEN)
def _extra_nice(event: Event) -> None:
    check = _followed_check(event)
    _amend_roll(event, check, result=event.payload["result"], check=event.payload["check"])
    update_later(check, _AMENDED)


@projects(CHECK_REVEALED)
def _revealed(event: Event) -> None:
    check = _followed_check(event)
    check.revealed = True
    update_later(check, ("revealed",))


@projects(TASK_RESET)
def _task_reset(event: Event) -> None:
    TaskAttempts.objects.filter(
        campaign_id=event.campaign_id,
        character_id=event.payload["character_id"],
        task=task_key(event.payload["task"]),
    ).delete()


@projects(CHARACTER_WILLPOWER_RESTORED)
def _willpower_restored(event: Event) -> None:
    _add_to_sheet(event.payload["character_id"], "willpower", event.payload["amount"])


@projects(CHECK_CALLED)
def _called(event: Event) -> None:
    CheckCall.objects.create(
        id=event.payload["call_id"],
        campaign_id=event.campaign_id,
        seq=event.seq,
        request=event.payload["request"],
        character_ids=event.payload["character_ids"],
    )


@projects(CHECK_CALL_CLOSED)
def _call_closed(event: Event) -> None:
    CheckCall.objects.filter(pk=event.payload["call_id"]).update(closed=True)
