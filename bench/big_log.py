"""A long, real, verifiable event log, written fast: for benchmarks of a million events.

    from big_log import write_big_log
    campaign_id = write_big_log(1_000_000)  # after Django is set up (bench/log.py: setup_django)

A few hundred events are played through the project's own services (a template: sessions with
scenes, public, private and blind rolls, a helper, a follow-up, a reveal, physical dice); then
the template's sessions are replayed until the log is long enough, each replay a session of its
own: new session and scene ids, a new secret seed and its key chain, every server roll re-rolled
from its new key, seq and client seed (`rolls.systems.roll`), its comparison, Beats and follow-up
results re-derived by the rules' own functions, hidden events re-salted, and every event chained
and hashed by `eventlog.chain` as the server chains it. The rows go in with COPY on PostgreSQL
and executemany on SQLite (minutes become seconds); the head moves once at the end.

The log is what the services would have written, not a projection of it: the read models (Check
rows, sessions) exist for the template only; `rebuild_projections` builds the rest.
"""

from __future__ import annotations

import json
import secrets
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

SYSTEM_SHEETS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    # system: (the hero's sheet, a check request's traits)
    "cofd": ({"attributes": {"Wits": 3}, "skills": {"Occult": 2}}, {"traits": ["Wits", "Occult"]}),
    "age": (
        {"abilities": {"Dexterity": 3}, "focuses": {"Dexterity": ["Acrobatics"]}},
        {"traits": ["Dexterity"], "focus": "Acrobatics", "target": 11},
    ),
    "d6pool": (
        {"attributes": {"Strength": 3}, "abilities": {"Brawl": 2}},
        {"traits": ["Strength", "Brawl"]},
    ),
    "storyteller": (
        {"attributes": {"Dexterity": 3}, "abilities": {"Melee": 2}},
        {"traits": ["Dexterity", "Melee"]},
    ),
    "nice_damnit": (
        {"areas": {"Firearms": 2}, "skills": {"Quick draw": "pro_1"}},
        {"traits": ["Firearms", "Quick draw"]},
    ),
}
_MANUAL = {
    "d6pool": [4, 1],
    "storyteller": [7, 3],
    "cofd": [7],
    "age": [3, 5, 5],
    "nice_damnit": [6, 9],
}
_COLUMNS = (
    "campaign_id",
    "seq",
    "type",
    "payload",
    "actor_id",
    "created_at",
    "visibility",
    "session_id",
    "scene_id",
    "chapter_id",
    "character_id",
    "prev_hash",
    "hash",
    "payload_text",
)


def open_big_log(events: int, *, system: str = "cofd", database_url: str | None = None) -> int:
    """Set Django up on a database that holds a big log of at least ``events`` events and return
    its campaign: the one kept from an earlier run when there is one (writing a million events
    takes minutes), else one written now on an emptied database (SQLite: var/bench/big-<system>
    .sqlite3; PostgreSQL: the database ``database_url`` names, its schema dropped first)."""
    import os
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "var" / "bench" / f"big-{system}.sqlite3"
    path.parent.mkdir(parents=True, exist_ok=True)
    os.environ["DATABASE_URL"] = database_url or f"sqlite:///{path}"
    os.environ.pop("REDIS_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from campaign.models import Campaign

    call_command("migrate", verbosity=0)
    name = f"Bench log ({system})"
    kept = Campaign.objects.filter(name=name, head_seq__gte=events).first()
    if kept is not None:
        print(f"kept {kept.head_seq:,} events ({system}) from an earlier run", flush=True)
        return kept.pk
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public;")
    else:
        connection.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    call_command("migrate", verbosity=0)
    return write_big_log(events, system=system, name=name)


def write_big_log(
    events: int, *, system: str = "cofd", template_sessions: int = 6, name: str = "Bench"
) -> int:
    """One campaign whose log holds at least ``events`` events (whole sessions); its id."""
    started = time.perf_counter()
    campaign_id = play_template(system, template_sessions, name)
    written = extend_with_replays(campaign_id, events)
    print(
        f"wrote {written:,} events ({system}) in {time.perf_counter() - started:.1f}s", flush=True
    )
    return campaign_id


# --- the template, played through the services ----------------------------------------------------


def play_template(system: str, sessions: int, name: str = "Bench") -> int:
    from django.contrib.auth import get_user_model

    from campaign import services
    from rolls.checks import followups
    from rolls.checks import services as checks

    users = get_user_model().objects
    gm = users.create_user("bench", password=None)
    alice = users.create_user("bench-alice", password=None)
    campaign = services.create_campaign(name=name, system=system, created_by=gm)
    services.join_campaign(invite_code=campaign.invite_code, user=alice)
    sheet, traits = SYSTEM_SHEETS[system]
    resources = {"fortune": 999} if system == "age" else None
    hero = services.create_character(
        campaign=campaign, actor=gm, name="Bench", traits=sheet, owner_id=alice.pk,
        resources=resources,
    )  # fmt: skip
    foe = services.create_character(campaign=campaign, actor=gm, name="Foe", traits=sheet)
    mine = {"character": str(hero.pk), **traits}
    other = {"character": str(foe.pk), "traits": traits["traits"][:1]}

    def roll(actor, **request: Any):
        return checks.check_roll(campaign=campaign, actor=actor, request=request)

    for number in range(sessions):
        if number:  # a dramatic failure may be taken once per chapter
            services.end_chapter(campaign=campaign, actor=gm)
        services.start_chapter(campaign=campaign, actor=gm, title=f"Chapter {number + 1}")
        services.start_session(campaign=campaign, actor=gm, title=f"Night {number + 1}")
        services.start_scene(campaign=campaign, actor=gm, title="The docks")
        for _ in range(12):
            roll(alice, **mine, client_seed=secrets.token_hex(16))
        roll(alice, **mine, label="for my eyes", visibility="private")
        blind = roll(gm, pool=3, label="the GM's secret", visibility="blind")
        roll(gm, pool=4, visibility="blind")
        if system == "age":
            roll(gm, **mine, against={**other, "target": 11})
        elif system in ("d6pool", "storyteller"):
            roll(gm, **mine, against=other)
        _followup(system, campaign, alice, roll, mine, followups)
        checks.reveal_check(campaign=campaign, actor=gm, seq=blind.seq)
        services.end_scene(campaign=campaign, actor=gm)
        services.start_scene(campaign=campaign, actor=gm, title="The chase")
        for _ in range(8):
            roll(alice, **mine)
        if number % 3 == 2:
            services.change_options(campaign=campaign, actor=gm, changes={"manual_dice": True})
            roll(gm, pool=len(_MANUAL[system]) - (system == "age"), faces=_MANUAL[system])
            services.change_options(campaign=campaign, actor=gm, changes={"manual_dice": False})
        services.end_scene(campaign=campaign, actor=gm)
        services.end_session(campaign=campaign, actor=gm)
    return campaign.pk


def _followup(system: str, campaign, actor, roll: Callable, mine: dict, followups) -> None:
    from rolls.systems import nice_damnit

    for _ in range(60):  # roll until the dice allow the follow-up; every try stays in the log
        check = roll(actor, **mine)
        result = check.data["rolls"][0]["result"]
        if system == "cofd" and check.outcome == "failure":
            followups.take_dramatic_failure(campaign=campaign, actor=actor, seq=check.seq)
        elif system == "age":
            followups.spend_fortune(campaign=campaign, actor=actor, seq=check.seq, die=0, value=6)
        elif system == "nice_damnit" and nice_damnit.extra_nice_allowed(result["total"]) > 0:
            followups.take_extra_nice(campaign=campaign, actor=actor, seq=check.seq, count=1)
        elif system in ("cofd", "nice_damnit"):
            continue
        return


# --- replays -------------------------------------------------------------------------------------


def _template_sessions(campaign_id: int) -> list[list[dict[str, Any]]]:
    """The template's sessions, each from its session.started to its session.ended (with the
    options changes inside), as event documents."""
    from rolls.trust.stored_log import event_rows

    sessions, current = [], None
    for event in event_rows(campaign_id):
        if event["type"] == "session.started":
            current = []
        if current is not None:
            current.append(event)
        if event["type"] == "session.ended":
            sessions.append(current)
            current = None
    return sessions


def extend_with_replays(campaign_id: int, events: int) -> int:
    """Replay the template's sessions after the head until the log holds ``events``; returns
    how many it holds."""
    from campaign.models import Campaign, Scene

    campaign = Campaign.objects.get(pk=campaign_id)
    template = _template_sessions(campaign_id)
    seq, prev, number = campaign.head_seq, campaign.head_hash, len(template)
    replay = _Replay(campaign_id, campaign.system, campaign.options)
    replay.scenes = Scene.objects.filter(campaign_id=campaign_id).count()
    batch: list[tuple] = []
    index = 0
    while seq < events:
        number += 1
        for row in replay.session(template[index % len(template)], number, seq, prev):
            batch.append(row)
            seq, prev = row[1], row[12]
        index += 1
        if len(batch) >= 20_000:
            _insert(batch, replay.sessions)
            batch.clear()
    _insert(batch, replay.sessions)
    Campaign.objects.filter(pk=campaign_id).update(head_seq=seq, head_hash=prev)
    return seq


class _Replay:
    """Re-derives a template session as a new one, from a new seed, at new seqs."""

    def __init__(self, campaign_id: int, system: str, options: dict[str, Any]) -> None:
        self.campaign_id, self.system = campaign_id, system
        self.options = options
        self.clock = datetime.now(UTC)
        self.scenes = 0
        # (id, number, started seq, started at, seed, ended seq) of the sessions replayed: the
        # Session rows and secrets the services would have kept (`_keep_sessions`).
        self.sessions: list[tuple] = []

    def session(
        self, events: list[dict[str, Any]], number: int, seq: int, prev: str
    ) -> Iterator[tuple]:
        from eventlog.chain import canonical_json, document_hash, event_document
        from rolls.systems import key_commitment, roll_key

        seed = secrets.token_bytes(32)
        ids: dict[str, str] = {}  # template session/scene id -> this replay's
        seqs: dict[int, int] = {}  # template seq -> this replay's
        targets = {
            event["payload"]["check_seq"]: event
            for event in events
            if event["type"] in _FOLLOWUP_RESULT
        }
        for event in events:  # every period id of the template gets a new one first
            for name in ("session", "scene"):
                _renamed_id(event[name], ids)
        rolled: dict[int, dict[str, Any]] = {}  # this replay's check.rolled payloads, by seq
        key_index = 0
        for event in events:
            seq += 1
            seqs[event["seq"]] = seq
            type_ = event["type"]
            payload = json.loads(_renamed(canonical_json(event["payload"]), ids))
            if type_ == "session.started":
                payload.update(number=number, key_commitment=key_commitment(roll_key(seed, 0)))
                self.sessions.append((payload["id"], number, seq, self.clock, seed))
            elif type_ == "session.ended":
                payload.update(number=number, final_seq=seq - 1, final_hash=prev)
                self.sessions[-1] += (seq,)
            elif type_ in ("scene.started", "scene.ended"):
                self.scenes += type_ == "scene.started"
                payload["number"] = self.scenes
            elif type_ == "check.rolled":
                key = roll_key(seed, key_index)
                payload["dice_key"] = {"index": key_index, "key": key.hex()}
                payload["next_key"] = key_commitment(roll_key(seed, key_index + 1))
                key_index += 1
                if payload["dice"] == "server":
                    self._reroll(payload, key, seq, targets.get(event["seq"]))
                if "helpers" in payload:
                    payload["helpers"] = [seqs.get(h, h) for h in payload["helpers"]]
            elif "check_seq" in payload:
                payload["check_seq"] = seqs[payload["check_seq"]]
                if type_ in _FOLLOWUP_RESULT:
                    _FOLLOWUP_RESULT[type_](payload, rolled[payload["check_seq"]])
            elif type_ == "check.revealed" and "seq" in payload:
                payload["seq"] = seqs.get(payload["seq"], payload["seq"])
            if "salt" in payload:
                payload["salt"] = secrets.token_hex(16)
            if type_ == "check.rolled":
                rolled[seq] = payload
            self.clock += timedelta(milliseconds=1500)
            context = [_renamed_id(event[name], ids) for name in ("session", "scene", "chapter")]
            document = event_document(
                self.campaign_id, seq, type_, payload, event["actor"], self.clock,
                event["visibility"], *context, event["character"], prev,
            )  # fmt: skip
            prev = document_hash(document)
            text = canonical_json(payload)
            yield (
                self.campaign_id, seq, type_, text, event["actor"], self.clock,
                event["visibility"], *context, event["character"], document["prev_hash"], prev,
                text,
            )  # fmt: skip

    def _reroll(
        self, payload: dict[str, Any], key: bytes, seq: int, followup: dict[str, Any] | None
    ) -> None:
        """The roll's faces from its new key (the player's client seed kept, or, when a
        follow-up needs a failure, the first of a few new ones that gives it)."""
        from rolls import rules, systems
        from rolls.systems import KeyedDice, cofd

        for attempt in range(200):
            seed = payload.get("client_seed") or ""
            if attempt:
                seed = payload["client_seed"] = secrets.token_hex(16)
            dice = KeyedDice(key, self.campaign_id, seq, seed)
            for roll in payload["rolls"]:
                roll["faces"], roll["result"] = systems.roll(payload["system"], roll["check"], dice)
            if followup is None or _allows(followup["type"], payload["rolls"][0]["result"]):
                break
        system = payload["system"]
        for roll in payload["rolls"]:
            if system == "cofd":
                on_dramatic = bool(rules.option(self.options, "cofd", "beat_on_dramatic_failure"))
                roll["beats_awarded"] = cofd.beats(roll["result"], on_dramatic)
        results = [roll["result"] for roll in payload["rolls"]]
        if rules.compares(system, payload["kind"]):
            payload["comparison"] = rules.compare(system, payload["kind"], results)
        if "failed_attempt" in payload:
            first = payload["rolls"][0]
            payload["failed_attempt"] = rules.failed_attempt(
                system, payload["task"], first["character_id"], first["result"],
                bool(first["rules"].get("not_escalating")),
            )  # fmt: skip


def _allows(followup: str, result: dict[str, Any]) -> bool:
    if followup == "check.dramatic_failure_taken":
        return result.get("outcome") == "failure"
    if followup == "check.extra_nice_taken":
        from rolls.systems import nice_damnit

        return nice_damnit.extra_nice_allowed(result["total"]) > 0
    return True


def _dramatic(payload: dict[str, Any], rolled: dict[str, Any]) -> None:
    from rolls.systems import cofd

    payload["result"] = cofd.intentional_dramatic_failure(rolled["rolls"][0]["result"])


def _resolved(system: str) -> Callable[[dict[str, Any], dict[str, Any]], None]:
    def follow(payload: dict[str, Any], rolled: dict[str, Any]) -> None:
        from rolls import systems

        payload["result"] = systems.resolve(system, payload["check"], rolled["rolls"][0]["faces"])

    return follow


_FOLLOWUP_RESULT = {
    "check.dramatic_failure_taken": _dramatic,
    "check.fortune_spent": _resolved("age"),
    "check.extra_nice_taken": _resolved("nice_damnit"),
}


def _renamed_id(value: str | None, ids: dict[str, str]) -> str | None:
    if value is None:
        return None
    if value not in ids:
        ids[value] = str(uuid.uuid4())
    return ids[value]


def _renamed(text: str, ids: dict[str, str]) -> str:
    for old, new in ids.items():
        text = text.replace(old, new)
    return text


def _insert(rows: list[tuple], sessions: list[tuple]) -> None:
    from django.db import connection, transaction

    from campaign.models import Session, SessionSecret

    if not rows:
        return
    campaign_id = rows[0][0]
    with transaction.atomic(), connection.cursor() as cursor:
        Session.objects.bulk_create(
            Session(id=id_, campaign_id=campaign_id, number=number, title=f"Night {number}",
                    started_seq=started, started_at=at, ended_seq=ended, ended_at=at)
            for id_, number, started, at, _, ended in sessions
        )  # fmt: skip
        SessionSecret.objects.bulk_create(
            SessionSecret(session_id=session[0], campaign_id=campaign_id, seed=session[4])
            for session in sessions
        )
        sessions.clear()
        if connection.vendor == "postgresql":
            # The jsonb payload is generated from its text (eventlog.0007): not written.
            at = _COLUMNS.index("payload")
            columns = _COLUMNS[:at] + _COLUMNS[at + 1 :]
            with cursor.cursor.copy(
                f"COPY campaign_event ({', '.join(columns)}) FROM STDIN"
            ) as copy:
                for row in rows:
                    copy.write_row(row[:at] + row[at + 1 :])
        else:
            # SQLite keeps UUIDs as 32 hex digits and the payload as its canonical text.
            def hexed(value: str | None) -> str | None:
                return None if value is None else value.replace("-", "")

            cursor.executemany(
                f"INSERT INTO campaign_event ({', '.join(_COLUMNS)}) VALUES "
                f"({', '.join(['%s'] * len(_COLUMNS))})",
                [
                    (*row[:5], row[5].replace(tzinfo=None).isoformat(" "), row[6],
                     *map(hexed, row[7:11]), row[11], row[12], None)
                    for row in rows
                ],
            )  # fmt: skip


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--system", default="cofd", choices=sorted(SYSTEM_SHEETS))
    parser.add_argument("--database-url", default=None)
    arguments = parser.parse_args()
    open_big_log(arguments.events, system=arguments.system, database_url=arguments.database_url)
