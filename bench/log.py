"""Benchmark: verify_log, rebuild_projections and a socket's catch-up over long logs, in events/s.

    .venv/bin/python bench/log.py [--events 1000000] [--verify-events 100000]
        [--catchup-events 10000] [--catchup-only] [--viewers gm,player] [--quick]
        [--rebuild-only] [--database-url URL]

Builds a fresh database (SQLite file under var/bench/, or the PostgreSQL database named by
--database-url, which it empties first; its timeouts are lifted: this is not a server), then:

- verify phases, on a campaign of --verify-events real check events (rolled by the engines from
  the session's seed, chained like the server chains them): the chain alone (`chain_intact`)
  beside a loop that reads the same raw rows; verify_log --fresh in one process and per session
  on every CPU;
- rebuild, on a campaign of --events events of mixed play (`write_mixed_log`: one session played
  through the services, replicated and re-chained in bulk): `rebuild_projections` beside
  reading the same rows through the recorder (each event decoded);
- catch-up: one socket of a uvicorn server catching up a campaign of --catchup-events events
  of mixed play from seq 0, beside reading those rows; once per viewer of --viewers (the GM,
  who sees everything, and a player, who gets the others' hidden rolls as stubs), each beside
  its own reading of the rows; the medians of 3 catch-ups (each on a fresh server) and of 6
  reads alternated with them; then, in this process, without a socket, the CPU of reading the
  catch-up's pages and of presenting them for that viewer, beside reading the rows (where the
  time goes). --catchup-only skips the verify and rebuild phases.

Figures are printed as events/s and as ratios to the in-run baseline (--quick: 100,000 events
rebuilt, 20,000 verified).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CATCHUP_RUNS = 3  # catch-ups per viewer, each on a fresh server; the figure is their median
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def setup_django(database_url: str | None) -> None:
    bench_dir = ROOT / "var" / "bench"
    bench_dir.mkdir(parents=True, exist_ok=True)
    db = bench_dir / "log.sqlite3"
    if database_url is None:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
    os.environ["DATABASE_URL"] = database_url or f"sqlite:///{db}"
    os.environ.pop("REDIS_URL", None)
    # Not a server: long transactions of bulk writes and reads are what this measures.
    os.environ.setdefault("DB_IDLE_IN_TRANSACTION_SECONDS", "0")
    os.environ.setdefault("DB_STATEMENT_TIMEOUT_SECONDS", "0")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    if database_url:
        from django.db import connection

        with connection.cursor() as cursor:  # start from an empty schema
            cursor.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public;")
    call_command("migrate", verbosity=0)


def _event_fields() -> tuple:
    """The columns an event's INSERT writes: on PostgreSQL not the jsonb payload, generated from
    its text (eventlog.0007)."""
    from django.db import connection

    from eventlog.models import Event
    from eventlog.projections import written_fields
    from eventlog.recorders.postgres import appended_fields

    return appended_fields() if connection.vendor == "postgresql" else written_fields(Event)


def _store(events: list) -> None:
    """Chained events stored in bulk (the ORM cannot insert PostgreSQL's generated payload)."""
    from django.db import connection

    from eventlog.models import Event
    from eventlog.recorders import event_table

    if connection.vendor != "postgresql":
        Event.objects.bulk_create(events)
        return
    fields = _event_fields()
    rows = [[getattr(event, field.attname) for field in fields] for event in events]
    _insert(event_table(), [field.column for field in fields], rows)


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
                _store(batch)
                batch.clear()
        _store(batch)
        with transaction.atomic():
            Campaign.objects.filter(pk=campaign.pk).update(head_seq=seq, head_hash=prev)
        campaign.head_seq, campaign.head_hash = seq, prev
        written += index + 1
    print(f"wrote {events:,} events in {time.perf_counter() - started:.1f}s", flush=True)
    return campaign.pk


def write_mixed_log(events: int, name: str = "mixed") -> int:
    """One campaign whose log holds about ``events`` events of real play: one session played
    through the services (public, private and blind checks on server dice, reveals, a dramatic
    failure taken for a Beat, Willpower restored and spent, a call answered, a task failed and
    reset, a scene), then that session replicated, re-numbered and re-chained, in bulk (COPY on
    PostgreSQL, executemany on SQLite) until the log is long enough. The copies' dice do not
    verify (their seqs moved); their chain does, so `rebuild_projections` takes them."""
    from django.contrib.auth import get_user_model

    from campaign import services
    from campaign.models import Campaign
    from eventlog.models import Event
    from rolls.checks import calls, followups
    from rolls.checks import services as checks
    from rolls.models import Check, TaskAttempts

    started = time.perf_counter()
    users = get_user_model().objects
    gm = users.create_user(f"{name}-gm", password="bench-password")
    players = [users.create_user(f"{name}-{n}", password="bench-password") for n in ("a", "b")]
    campaign = services.create_campaign(name=name, system="cofd", created_by=gm)
    heroes = []
    for player in players:
        services.join_campaign(invite_code=campaign.invite_code, user=player)
        heroes.append(
            services.create_character(
                campaign=campaign,
                actor=player,
                name=f"Hero {player.username}",
                traits={"attributes": {"Wits": 3}, "skills": {"Occult": 2}},
                resources={"willpower": 5, "beats": 0},
            )
        )
    services.start_chapter(campaign=campaign, actor=gm, title="The story")
    first = Campaign.objects.get(pk=campaign.pk).head_seq + 1
    services.start_session(campaign=campaign, actor=gm, title="An evening")
    services.start_scene(campaign=campaign, actor=gm, title="The house")

    def roll(who: int, **request) -> Check:
        hero, player = heroes[who], players[who]
        if "call" not in request:  # an answer carries only what the call leaves open
            request = {"traits": ["Wits", "Occult"], **request}
        request = {"character": str(hero.pk), **request}
        return checks.check_roll(campaign=campaign, actor=player, request=request)

    hidden = []
    for index in range(160):
        visibility = "private" if index % 9 == 4 else "blind" if index % 17 == 8 else "public"
        check = roll(index % 2, visibility=visibility, label="search" if index % 3 else "")
        if visibility != "public":
            hidden.append(check.seq)
    for seq in hidden[::3]:
        checks.reveal_check(campaign=campaign, actor=gm, seq=seq)
    chance = roll(0, traits=["Wits"], pool=-3)  # a chance die: failure, mostly
    while chance.outcome != "failure":
        chance = roll(0, traits=["Wits"], pool=-3)
    followups.take_dramatic_failure(campaign=campaign, actor=players[0], seq=chance.seq)
    for who in (0, 1):
        roll(who, willpower=True)
        checks.restore_willpower(
            campaign=campaign, actor=gm, character_id=str(heroes[who].pk), amount=1
        )
    call = calls.call_for_check(
        campaign=campaign,
        actor=gm,
        character_ids=[str(hero.pk) for hero in heroes],
        request={"traits": ["Wits"]},
    )
    for who in (0, 1):
        roll(who, call=str(call.pk))
    for _ in range(3):
        roll(1, traits=["Wits"], pool=-3, task="the lock")
    if TaskAttempts.objects.filter(campaign=campaign).exists():  # the chance die may succeed
        checks.reset_task(
            campaign=campaign, actor=gm, character_id=str(heroes[1].pk), task="the lock"
        )
    services.end_scene(campaign=campaign, actor=gm)
    services.end_session(campaign=campaign, actor=gm)
    template = list(Event.objects.filter(campaign=campaign, seq__gte=first).order_by("seq"))
    print(f"  played a session of {len(template)} events in {time.perf_counter() - started:.1f}s")
    replicate(campaign.pk, first, events)
    return campaign.pk


def _insert(table: str, columns: list[str], rows: list[list]) -> None:
    from django.db import transaction

    from eventlog.recorders import recorder

    with transaction.atomic():  # one commit (one fsync on SQLite) per batch
        recorder().copy_rows(table, columns, rows)
    rows.clear()


_REFERS_TO_SEQS = {"check_seq", "helpers", "final_seq"}


def replicate(campaign_id: int, first: int, events: int) -> None:
    """Append copies of the campaign's events from seq ``first`` on (a whole session) until the
    log holds ``events``: fresh ids for the periods and calls they start, seqs and the seqs
    they refer to moved, each copy chained to the one before (`eventlog.replay.stored_hash`)."""
    import uuid

    from django.db import connection

    from campaign.models import Campaign
    from eventlog.chain import canonical_json
    from eventlog.models import Event
    from eventlog.recorders import recorder
    from eventlog.replay import stored_hash

    started = time.perf_counter()
    sqlite = connection.vendor == "sqlite"
    template = list(recorder().replay_rows(campaign_id, after=first - 1))
    head = Campaign.objects.get(pk=campaign_id)
    starts = {"session.started": "id", "scene.started": "id", "chapter.started": "id"}
    renewed = [  # ids that each copy must have afresh (read models keyed by them)
        json.loads(row[3])[starts.get(row[2], "call_id")]
        for row in template
        if row[2] in starts or row[2] == "check.called"
    ]
    refers = [any(f'"{key}"' in row[3] for key in _REFERS_TO_SEQS) for row in template]
    names = [field.attname for field in _event_fields()]
    table = connection.ops.quote_name(Event._meta.db_table)
    columns = [connection.ops.quote_name(field.column) for field in _event_fields()]
    seq, prev = head.head_seq, head.head_hash
    batch: list[list] = []
    written = seq
    while written < events:
        offset = seq + 1 - first
        fresh = {old: str(uuid.uuid4()) for old in renewed}
        stored = {(old.replace("-", "") if sqlite else old): new for old, new in fresh.items()}
        if sqlite:
            stored = {old: new.replace("-", "") for old, new in stored.items()}
        hashes: dict[int, str] = {}
        for row, refer in zip(template, refers, strict=True):
            if written >= events:
                break
            _, old_seq, type_, text, actor, created, created_text, visibility = row[:8]
            session, scene, chapter, character, ids = row[8:13]
            for old, new in fresh.items():
                text = text.replace(old, new)
            seq = old_seq + offset
            if refer:
                payload = json.loads(text)
                if "check_seq" in payload:
                    payload["check_seq"] += offset
                if payload.get("helpers"):
                    payload["helpers"] = [helper + offset for helper in payload["helpers"]]
                if "final_seq" in payload:
                    payload["final_seq"] += offset
                    payload["final_hash"] = hashes.get(payload["final_seq"], prev)
                text = canonical_json(payload)
            ids = tuple(fresh.get(value, value) for value in ids)
            session, scene, chapter = (stored.get(v, v) for v in (session, scene, chapter))
            hashed = stored_hash(
                campaign_id, seq, type_, text, actor, created_text, visibility, ids, prev
            )
            values = {
                "campaign_id": campaign_id,
                "seq": seq,
                "type": type_,
                "payload": text,
                "actor_id": actor,
                "created_at": created,
                "visibility": visibility,
                "session_id": session,
                "scene_id": scene,
                "chapter_id": chapter,
                "character_id": character,
                "prev_hash": prev,
                "hash": hashed,
                "payload_text": None if sqlite else text,
            }
            batch.append([values[name] for name in names])
            hashes[seq], prev, written = hashed, hashed, seq
            if len(batch) >= 20_000:
                _insert(table, columns, batch)
    _insert(table, columns, batch)
    Campaign.objects.filter(pk=campaign_id).update(head_seq=seq, head_hash=prev)
    with connection.cursor() as cursor:  # the planner's statistics, as a live table has them
        cursor.execute(f"ANALYZE {table}")
    print(f"  replicated it to {seq:,} events in {time.perf_counter() - started:.1f}s", flush=True)


def cpu_seconds() -> tuple[float, float | None]:
    """CPU used so far by this process and by its PostgreSQL backend (read from /proc when the
    server runs on this machine; None otherwise, and on SQLite, whose work is this process's)."""
    from django.db import connection

    client = time.process_time()
    if connection.vendor != "postgresql":
        return client, None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return client, None
    return client, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed_cpu(label: str, work, count: int) -> tuple[float, float]:
    """`timed`, and the events per CPU-second of this process and its database server."""
    client, server = cpu_seconds()
    rate = timed(label, work, count)
    client_after, server_after = cpu_seconds()
    used = client_after - client
    text = f"client {used:.1f} s"
    if server is not None and server_after is not None:
        used += server_after - server
        text += f" + server {server_after - server:.1f} s"
    print(f"  {'':<34} CPU {text} = {count / used:,.0f} events per CPU-second", flush=True)
    return rate, count / used


def timed(label: str, work, count: int) -> float:
    started = time.perf_counter()
    work()
    elapsed = time.perf_counter() - started
    rate = count / elapsed
    print(f"  {label:<34} {elapsed:8.2f}s  {rate:12,.0f} events/s", flush=True)
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000, help="the rebuild's log")
    parser.add_argument(
        "--verify-events", type=int, default=100_000, help="the chain's and verify_log's log"
    )
    parser.add_argument("--quick", action="store_true", help="100,000 and 20,000 events")
    parser.add_argument("--rebuild-only", action="store_true", help="skip the verify phases")
    parser.add_argument(
        "--catchup-events", type=int, default=10_000, help="the socket's catch-up (0: skip)"
    )
    parser.add_argument(
        "--catchup-only", action="store_true", help="skip the verify and rebuild phases"
    )
    parser.add_argument(
        "--viewers", default="gm,player", help="whose sockets catch up, in turn: gm, player"
    )
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    viewers = [viewer for viewer in args.viewers.split(",") if viewer]
    if not set(viewers) <= {"gm", "player"}:
        parser.error("--viewers takes gm and player")
    events = 100_000 if args.quick else args.events
    verify_events = 20_000 if args.quick else args.verify_events
    setup_django(args.database_url)
    db = "PostgreSQL" if args.database_url else "SQLite"
    if not (args.rebuild_only or args.catchup_only):
        verify_phases(verify_events, db)
    if not args.catchup_only:
        rebuild_phases(events, db)
    if args.catchup_events:
        catchup_phase(args.catchup_events, db, args.database_url, viewers)


def verify_phases(events: int, db: str) -> None:
    from campaign.models import Campaign
    from rolls.trust.stored_log import chain_intact, raw_chain_rows, verify_campaigns

    campaign_id = write_log(events)
    head = Campaign.objects.get(pk=campaign_id)
    total = head.head_seq

    def read_rows() -> None:
        for _ in raw_chain_rows(campaign_id, head.head_seq):
            pass

    def chain() -> None:
        assert chain_intact(campaign_id, until=head.head_seq, head_hash=head.head_hash)

    def verify(workers: int):
        def run() -> None:
            report = verify_campaigns(campaign_ids=[campaign_id], fresh=True, workers=workers)
            assert not report.problems, report.problems[:3]

        return run

    from summary import record

    print(f"\n{total:,} events on {db} (check events rolled by the engines)")
    workers = os.cpu_count() or 1
    base_rows = timed("baseline: read the raw rows", read_rows, total)
    chain_rate = timed("chain (seq, links, hashes)", chain, total)
    proof_rate = timed("verify_log --fresh, 1 process", verify(1), total)
    verify_rate = timed(f"verify_log --fresh, {workers} workers", verify(workers), total)
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
    print(
        f"\n  chain   {chain_rate:,.0f} events/s = {chain_rate / base_rows:.2f}x reading the rows"
    )
    ratio = verify_rate / proof_rate
    print(f"  verify  {verify_rate:,.0f} events/s on {workers} workers = {ratio:.2f}x one")


def rebuild_phases(events: int, db: str) -> None:
    import io

    from django.core.management import call_command

    from campaign.models import Campaign
    from eventlog.recorders import recorder
    from rolls.models import Check

    campaign_id = write_mixed_log(events)
    total = Campaign.objects.get(pk=campaign_id).head_seq

    def read_rows() -> None:
        for _ in recorder().rows(campaign_id):
            pass

    def rebuild() -> None:
        out = io.StringIO()  # the progress bar would garble the table
        call_command("rebuild_projections", campaign=[campaign_id], stdout=out, stderr=out)

    from summary import record

    print(f"\n{total:,} events on {db} (a session of mixed play, replicated)")
    base, base_cpu = timed_cpu("baseline: read the rows (decoded)", read_rows, total)
    rate, rate_cpu = timed_cpu("rebuild_projections", rebuild, total)
    checks = Check.objects.filter(campaign_id=campaign_id).count()
    record(
        f"log: rebuild_projections, {total:,} events of mixed play, {db}",
        rate,
        "events/s",
        base,
        "baseline: reading the rows (target ≥ 20,000/s, ratio ≥ 0.5)",
    )
    record(
        f"log: rebuild_projections per CPU-second (client + server), {total:,} events, {db}",
        rate_cpu,
        "events/CPU-s",
        base_cpu,
        "baseline: reading the rows, per CPU-second",
    )
    print(
        f"\n  rebuild {rate:,.0f} events/s = {rate / base:.2f}x reading the rows "
        f"({checks:,} check rows); per CPU-second {rate_cpu / base_cpu:.2f}x"
    )


def catchup_phase(events: int, db: str, database_url: str, viewers: list[str]) -> None:
    """One socket catches up ``events`` events from seq 0 (a page after a long absence), timed
    from connecting to `caught_up`, beside reading the same rows in this process just before;
    once for each of ``viewers`` ("gm", "player": the first player, who sees the other's hidden
    rolls as stubs), each on a fresh server (no page kept from the one before)."""
    import io

    from django.core.management import call_command
    from django.db import connection
    from rest_framework.authtoken.models import Token

    from campaign.models import Campaign
    from eventlog.recorders import recorder

    campaign_id = write_mixed_log(events, name="catchup")
    quiet = io.StringIO()
    call_command("rebuild_projections", campaign=[campaign_id], stdout=quiet, stderr=quiet)
    campaign = Campaign.objects.get(pk=campaign_id)
    members = campaign.memberships.select_related("user").order_by("user__username")
    if connection.vendor == "postgresql":
        # The phases before wrote a million events: PostgreSQL flushes them in the background for
        # a minute or more after (a checkpoint spread over its WAL), on the two cores and the
        # disk the socket's server and this client share. A checkpoint now finishes that first.
        began = time.perf_counter()
        with connection.cursor() as cursor:
            cursor.execute("CHECKPOINT")
        print(f"  checkpoint before the catch-ups: {time.perf_counter() - began:.1f}s")
    tokens = {
        "gm": Token.objects.create(user=members.get(role="gm").user).key,
        "player": Token.objects.create(user=members.filter(role="player").first().user).key,
    }
    connection.close()  # the server process reads the database now

    def read_rows() -> None:
        for _ in recorder().rows(campaign_id):
            pass

    total = campaign.head_seq
    url = database_url or f"sqlite:///{ROOT / 'var' / 'bench' / 'log.sqlite3'}"
    from summary import record

    for viewer in viewers:
        print(f"\n{total:,} events on {db}: one socket catches up from seq 0 ({viewer})")
        print(f"  load average {' '.join(f'{load:.2f}' for load in os.getloadavg())}")
        # Each side is the median of several runs, alternated: one 10,000-event read takes
        # 0.2-0.4 s, and a single sample of either moved the ratio by half on this machine.
        reads, runs = [], []
        for _ in range(CATCHUP_RUNS):
            reads += [timed("baseline: read the rows (decoded)", read_rows, total) for _ in "ab"]
            run = _catch_up_once(url, campaign_id, tokens[viewer], total)
            elapsed, seen, sent, server_cpu, client_cpu = run
            assert seen == total, f"the socket was sent {seen} of {total} events"
            runs.append(run)
            label = "socket catch-up (read, presented, sent)"
            print(f"  {label:<34} {elapsed:8.2f}s  {total / elapsed:12,.0f} events/s")
            print(f"  CPU: server {server_cpu:.2f}s, client {client_cpu:.2f}s (until caught_up)")
        base = statistics.median(reads)
        elapsed, _, sent, server_cpu, _ = sorted(runs)[len(runs) // 2]
        rate = total / elapsed
        print(f"  {sent / 1e6:.1f} MB of frames ({sent / total:,.0f} bytes per event)")
        print(f"  load average {' '.join(f'{load:.2f}' for load in os.getloadavg())}")
        print(
            f"\n  catch-up ({viewer}), medians of {CATCHUP_RUNS} catch-ups and {len(reads)} reads:"
            f" {rate:,.0f} events/s = {rate / base:.2f}x reading the rows {base:,.0f}/s"
            f" (catch-ups {min(total / r[0] for r in runs):,.0f}-"
            f"{max(total / r[0] for r in runs):,.0f}/s,"
            f" reads {min(reads):,.0f}-{max(reads):,.0f}/s;"
            f" server CPU {server_cpu:.2f} s)"
        )
        record(
            f"log: a socket catches up {total:,} events ({viewer}), {db}",
            rate,
            "events/s",
            base,
            "baseline: reading the rows (target ratio ≥ 0.5)",
        )
        membership = members.get(role="gm") if viewer == "gm" else members.filter(role="player")[0]
        _print_breakdown(campaign_id, membership, read_rows)


def _print_breakdown(campaign_id: int, membership, read_rows) -> None:
    """Where a catch-up's work goes before any socket: the CPU seconds, in this process, of
    reading the rows decoded (the baseline), of reading the catch-up's pages as it reads them
    (payloads left undecoded) and of reading and presenting them for ``membership`` as its
    socket would be sent them (`catchup.page_after`, nothing kept from a run before); medians
    of 3, alternated. The CPU is the process's: on PostgreSQL the next page is read on a thread
    of its own (`catchup._read_ahead`). Beside the baseline, it says how far the socket's figure
    can go whatever sending costs."""
    from campaign.models import Campaign
    from eventlog.recorders import recorder
    from rolls.live import catchup

    campaign = Campaign.objects.get(pk=campaign_id)
    head, until = (campaign.head_seq, campaign.head_hash), campaign.head_seq

    def pages() -> None:
        after = 0
        while after < until:
            end = min(until, after + catchup.PAGE * catchup.LONG_PAGES)
            recorder().page(campaign_id, after=after, until=end, limit=end - after)
            after = end

    def presented() -> None:
        catchup.forget()
        after = 0
        while after < until:
            page = catchup.page_after(membership, after, until, head)
            assert page is not None and not page.about_me
            after = page.last
        catchup.forget()

    works = {"reading the rows (decoded)": read_rows, "the pages": pages, "presented": presented}
    spent: dict[str, list[float]] = {name: [] for name in works}
    for _ in range(3):
        for name, work in works.items():
            began = time.process_time()
            work()
            spent[name].append(time.process_time() - began)
    base, read, shown = (statistics.median(spent[name]) for name in works)
    print(
        f"  in this process, no socket (CPU, medians of 3): reading the rows decoded {base:.2f} s;"
        f" the catch-up's pages undecoded {read:.2f} s ({read / base:.2f}x);"
        f" read and presented for the {membership.role} {shown:.2f} s ({shown / base:.2f}x,"
        " before a frame is sent)"
    )


def _catch_up_once(
    url: str, campaign_id: int, token: str, head: int
) -> tuple[float, int, int, float, float]:
    """(seconds from connecting to `caught_up`, events sent, characters of frames, the server's
    CPU seconds, and this client's until `caught_up`: it shares the two cores) on a new server."""
    import asyncio

    from sockets import start

    async def catch_up(port: int) -> tuple[float, int, int, float]:
        from websockets.asyncio.client import connect

        address = f"ws://127.0.0.1:{port}/ws/campaigns/{campaign_id}/?after=0"
        headers = {"Authorization": f"Token {token}"}
        began, client_began = time.perf_counter(), time.process_time()
        async with connect(address, additional_headers=headers, max_size=None) as socket:
            texts = []
            while True:
                text = await asyncio.wait_for(socket.recv(), 300)
                texts.append(text)
                # The server writes "type" first: the frames are parsed after the clock stops
                # (a browser parses as they come, on its own machine; here it would share the
                # server's two cores and time what the page does, not what the server does).
                if text.startswith('{"type":"caught_up"'):
                    elapsed = time.perf_counter() - began
                    client_cpu = time.process_time() - client_began
                    break
        frames = [json.loads(text) for text in texts]
        assert frames[-1]["type"] == "caught_up"
        seen = sum(len(frame["events"]) for frame in frames if frame["type"] == "events")
        return elapsed, seen, sum(map(len, texts)), client_cpu

    process, port = start("config.asgi:application", url, "--ws-ping-timeout", "600")
    try:
        # Warm the server (imports, the connection) with a socket that has nothing to catch up.
        asyncio.run(_warm(port, campaign_id, token, head))
        server_before = _cpu_of(process.pid)
        elapsed, seen, sent, client_cpu = asyncio.run(catch_up(port))
        return elapsed, seen, sent, _cpu_of(process.pid) - server_before, client_cpu
    finally:
        process.terminate()
        process.wait(timeout=10)


def _cpu_of(pid: int) -> float:
    """A process's CPU seconds (user + system), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _warm(port: int, campaign_id: int, token: str, head: int) -> None:
    from websockets.asyncio.client import connect

    url = f"ws://127.0.0.1:{port}/ws/campaigns/{campaign_id}/?after={head}"
    headers = {"Authorization": f"Token {token}"}
    async with connect(url, additional_headers=headers, max_size=None, open_timeout=60) as socket:
        while json.loads(await socket.recv())["type"] != "caught_up":
            pass


if __name__ == "__main__":
    main()
