"""Benchmark: verify_log and rebuild_projections over a long log, in events per second.

    .venv/bin/python bench/log.py [--events 1000000] [--quick] [--database-url URL]

Builds a fresh database (SQLite file under var/bench/, or the PostgreSQL database named by
--database-url, which it empties first), writes one campaign whose log holds N real check events
(rolled by the engines from the session's seed, chained like the server chains them), then times:

- the chain alone (sequence, links, hashes: `chain_intact`), beside a loop that only reads the
  same raw rows;
- verify_log --fresh (the full proof: keys, faces, outcomes) in one process and per session in
  one process per CPU;
- rebuild_projections, beside a baseline that reads the rows and hashes nothing.

Figures are printed as events/s and as ratios to the in-run baseline.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def setup_django(database_url: str | None) -> None:
    bench_dir = ROOT / "var" / "bench"
    bench_dir.mkdir(parents=True, exist_ok=True)
    db = bench_dir / "log.sqlite3"
    if database_url is None:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
    os.environ["DATABASE_URL"] = database_url or f"sqlite:///{db}"
    os.environ.pop("REDIS_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    if database_url:
        from django.db import connection

        with connection.cursor() as cursor:  # start from an empty schema
            cursor.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public;")
    call_command("migrate", verbosity=0)


def write_log(events: int, per_session: int = 500) -> int:
    """One campaign, a character and `events` check events in sessions of `per_session` rolls
    (an evening's worth), chained in bulk; the sessions are started and ended by the services."""
    from django.contrib.auth import get_user_model
    from django.db import transaction
    from django.utils import timezone

    from campaign import services
    from campaign.models import Campaign, SessionSecret
    from eventlog.models import Event, payload_text_for
    from eventlog.stream import hash_of
    from rolls.systems import KeyedDice, key_commitment, roll, roll_key

    user = get_user_model().objects.create_user("bench", password="bench-password")
    campaign = services.create_campaign(name="Bench", system="cofd", created_by=user)
    character = services.create_character(
        campaign=campaign, actor=user, name="Bench", traits={"attributes": {"Wits": 3}}
    )
    started = time.perf_counter()
    written = 0
    while written < events:
        if written:
            services.end_session(campaign=campaign, actor=user)
        services.start_session(campaign=campaign, actor=user)
        campaign.refresh_from_db()
        session_id = campaign.events.filter(type="session.started").last().session_id
        seed = bytes(SessionSecret.objects.get(session_id=session_id).seed)
        seq, prev = campaign.head_seq, campaign.head_hash
        batch: list[Event] = []
        for index in range(min(per_session, events - written)):
            seq += 1
            check = {
                "pool": 8,
                "again": 10,
                "rote": False,
                "exceptional_at": 5,
                "extra_successes": 0,
            }
            key, client_seed = roll_key(seed, index), f"{index:032x}"
            faces, result = roll("cofd", check, KeyedDice(key, campaign.pk, seq, client_seed))
            event = Event(
                campaign_id=campaign.pk,
                seq=seq,
                type="check.rolled",
                payload={
                    "kind": "single",
                    "system": "cofd",
                    "options": campaign.options,
                    "dice": "server",
                    "label": "",
                    "task": "",
                    "call_id": None,
                    "helpers": [],
                    "audience": [user.pk],
                    "comparison": None,
                    "free_botch_scope": None,
                    "client_seed": client_seed,
                    "dice_key": {"index": index, "key": key.hex()},
                    "next_key": key_commitment(roll_key(seed, index + 1)),
                    "rolls": [
                        {
                            "character_id": str(character.pk),
                            "character_name": "Bench",
                            "owner_id": None,
                            "traits": ["Wits"],
                            "label": "",
                            "breakdown": [],
                            "rules": {"attempt": 1},
                            "check": check,
                            "faces": faces,
                            "result": result,
                            "beats_awarded": 0,
                        }
                    ],
                },
                actor_id=user.pk,
                created_at=timezone.now(),
                visibility="public",
                session_id=session_id,
                character_id=character.pk,
                prev_hash=prev,
            )
            event.payload_text = payload_text_for(event.payload)
            event.hash = prev = hash_of(event)
            batch.append(event)
            if len(batch) == 5000:
                Event.objects.bulk_create(batch)
                batch.clear()
        Event.objects.bulk_create(batch)
        with transaction.atomic():
            Campaign.objects.filter(pk=campaign.pk).update(head_seq=seq, head_hash=prev)
        campaign.head_seq, campaign.head_hash = seq, prev
        written += index + 1
    print(f"wrote {events:,} events in {time.perf_counter() - started:.1f}s", flush=True)
    return campaign.pk


def timed(label: str, work, count: int) -> float:
    started = time.perf_counter()
    work()
    elapsed = time.perf_counter() - started
    rate = count / elapsed
    print(f"  {label:<34} {elapsed:8.2f}s  {rate:12,.0f} events/s", flush=True)
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true", help="100,000 events")
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    events = 100_000 if args.quick else args.events
    setup_django(args.database_url)

    from django.db import transaction

    from campaign.models import Campaign
    from eventlog import projections
    from eventlog.models import Event
    from eventlog.recorders import recorder
    from eventlog.stream import lock_stream
    from rolls.trust.stored_log import chain_intact, raw_chain_rows, verify_campaigns

    campaign_id = write_log(events)
    total = Event.objects.filter(campaign_id=campaign_id).count()

    head = Campaign.objects.get(pk=campaign_id)

    def read_rows() -> None:
        for _ in raw_chain_rows(campaign_id, head.head_seq):
            pass

    def chain() -> None:
        assert chain_intact(campaign_id, until=head.head_seq, head_hash=head.head_hash)

    def read_events() -> None:
        for _ in Event.objects.filter(campaign_id=campaign_id).order_by("seq").iterator(2000):
            pass

    def read_recorded() -> None:
        for _ in recorder().rows(campaign_id):
            pass

    def verify(workers: int):
        def run() -> None:
            report = verify_campaigns(campaign_ids=[campaign_id], fresh=True, workers=workers)
            assert not report.problems, report.problems[:3]

        return run

    def rebuild() -> None:
        with transaction.atomic():
            campaign = lock_stream(campaign_id)
            projections.rebuild(campaign, recorder().events(campaign_id))  # as the command does

    from summary import record

    db = "PostgreSQL" if args.database_url else "SQLite"
    print(f"\n{total:,} events on {db}")
    workers = os.cpu_count() or 1
    base_rows = timed("baseline: read the raw rows", read_rows, total)
    chain_rate = timed("chain (seq, links, hashes)", chain, total)
    proof_rate = timed("verify_log --fresh, 1 process", verify(1), total)
    verify_rate = timed(f"verify_log --fresh, {workers} workers", verify(workers), total)
    base_events = timed("baseline: read Event objects", read_events, total)
    base_recorded = timed("baseline: read rows (recorder)", read_recorded, total)
    rebuild_rate = timed("rebuild_projections", rebuild, total)
    record(
        f"log: chain (verify_log --rehash's pass), {total:,} events, {db}",
        chain_rate,
        "events/s",
        base_rows,
        "baseline: reading the raw rows",
    )
    record(
        f"log: verify_log --fresh, {workers} workers, {total:,} events, {db}",
        verify_rate,
        "events/s",
        proof_rate,
        "baseline: the same in one process",
    )
    record(
        f"log: rebuild_projections, {total:,} events, {db}",
        rebuild_rate,
        "events/s",
        base_recorded,
        "baseline: reading the rows (target ≥ 20,000/s, ratio ≥ 0.5)",
    )
    print(
        f"\n  chain   {chain_rate:,.0f} events/s = {chain_rate / base_rows:.2f}x reading the rows"
    )
    ratio = verify_rate / proof_rate
    print(f"  verify  {verify_rate:,.0f} events/s on {workers} workers = {ratio:.2f}x one")
    print(
        f"  rebuild {rebuild_rate:,.0f} events/s = {rebuild_rate / base_recorded:.2f}x reading the "
        f"rows, {rebuild_rate / base_events:.2f}x reading Event objects"
    )


if __name__ == "__main__":
    main()
