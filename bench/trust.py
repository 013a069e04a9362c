"""Benchmark: the trust layer's costs, each beside an in-run baseline (issue #16).

    .venv/bin/python bench/trust.py [--events 16000] [--database-url URL]
    .venv/bin/python bench/trust.py --big-log [--events 1000000] [--database-url URL]

On a fresh database (SQLite under var/bench/, or the PostgreSQL database --database-url names,
which it empties first) with one campaign of N real check events in sessions of 500 (bench/log.py's
writer):

- the audit page (stored verification, carried on from its checkpoint) beside the GM page;
- the chain alone (seq, links, hashes; `chain_intact`, raw rows, stored payload text hashed as is)
  beside a loop that only reads the same raw rows, and the verifier's own chain pass;
- the full proof (every key against its commitment, every face re-derived, every outcome
  re-resolved), from scratch, in one process and per session in one process per CPU;
- carrying the stored verification on after one new roll (verify_log's and the audit page's
  path), beside `verify_log --rehash`, which re-hashes the chain below the checkpoint first;
- a check's derivation: roll key + one keyed hash per roll (KeyedDice), beside the former HMAC per
  die, and a check's service p50 for scale.

--big-log: the same figures but the pages', on a realistic mixed log (bench/big_log.py: sessions
of public, private and blind rolls, follow-ups, reveals, scenes; default a million events), kept
in its database between runs (SQLite: var/bench/big-cofd.sqlite3) since writing it takes minutes.
The load average is printed with the figures: the machine's other work slows every figure, the
parallel proof's most.
"""

from __future__ import annotations

import argparse
import contextlib
import hmac
import os
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from log import setup_django, write_log  # noqa: E402


class FormerHmacDice:
    """The derivation before issue #16 (one HMAC per die attempt), kept here as the baseline."""

    def __init__(self, seed: bytes, campaign: str, seq: int) -> None:
        self._keyed = hmac.new(seed, digestmod="sha256")
        self._prefix, self._counter = f"{campaign}|{seq}|", 0

    def roll(self, sides: int) -> int:
        limit = 2**64 - (2**64 % sides)
        while True:
            h = self._keyed.copy()
            h.update(f"{self._prefix}{self._counter}".encode())
            self._counter += 1
            x = int.from_bytes(h.digest()[:8], "big")
            if x < limit:
                return x % sides + 1


def median_ms(work, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=16_000)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--big-log", action="store_true", help="a realistic log, kept between runs")
    args = parser.parse_args()
    if args.big_log:
        from big_log import open_big_log

        events = args.events if args.events != 16_000 else 1_000_000
        campaign_id = open_big_log(events, database_url=args.database_url)
    else:
        setup_django(args.database_url)
        campaign_id = write_log(args.events)

    from django.contrib.auth import get_user_model
    from summary import record

    from campaign.models import Campaign, Character
    from eventlog.models import Event
    from rolls.trust.stored_log import chain_intact, event_rows, raw_chain_rows, verify_campaigns
    from rolls.trust.verify import verify_chain

    campaign = Campaign.objects.get(pk=campaign_id)
    total = Event.objects.filter(campaign_id=campaign_id).count()
    user = get_user_model().objects.get(username="bench")
    character = Character.objects.filter(campaign=campaign).order_by("name").first()
    db = "PostgreSQL" if args.database_url else "SQLite"
    print(f"\n{total:,} events on {db}; load average {_load()}")

    head = Campaign.objects.get(pk=campaign_id)

    def read_rows() -> None:
        for _ in raw_chain_rows(campaign_id, head.head_seq):
            pass

    def chain() -> None:
        assert chain_intact(campaign_id, until=head.head_seq, head_hash=head.head_hash)

    def chain_per_event() -> None:
        _, problem = verify_chain(campaign_id, event_rows(campaign_id))
        assert problem is None, problem

    def full(workers: int):
        def prove() -> None:
            report = verify_campaigns(campaign_ids=[campaign_id], fresh=True, workers=workers)
            assert not report.problems, report.problems[:3]

        return prove

    repeats = 1 if args.big_log else 3
    read_s = median_ms(read_rows, repeats) / 1000
    print(f"  read rows only        {total / read_s:12,.0f} events/s", flush=True)
    chain_s = median_ms(chain, repeats) / 1000
    print(f"  chain (seq, hashes)   {total / chain_s:12,.0f} events/s  = {read_s / chain_s:.2f}x")
    if not args.big_log:
        verifier_s = median_ms(chain_per_event, 1) / 1000
        print(f"  chain, StreamVerifier {total / verifier_s:12,.0f} events/s  (each re-encoded)")
    with cpu_seconds() as one_cpu:
        full_s = median_ms(full(1), 1) / 1000
    print(
        f"  full proof, 1 process {total / full_s:12,.0f} events/s  "
        f"({total / one_cpu[0]:,.0f} per CPU-second of Python)",
        flush=True,
    )
    workers = os.cpu_count() or 1
    with cpu_seconds() as all_cpu:
        parallel_s = median_ms(full(workers), 1) / 1000
    print(
        f"  full proof, {workers} workers {total / parallel_s:12,.0f} events/s  = "
        f"{full_s / parallel_s:.2f}x one process ({total / all_cpu[0]:,.0f} per CPU-second of "
        f"Python, the workers' included; load average {_load()})",
        flush=True,
    )
    record(f"trust: chain, {total:,} events, {db}", total / chain_s, "events/s", total / read_s,
           "baseline: reading the raw rows")  # fmt: skip
    record(f"trust: full proof, {workers} workers, {total:,} events, {db}", total / parallel_s,
           "events/s", total / full_s, "baseline: the full proof in one process")  # fmt: skip

    print(f"  load average {_load()}")
    if not args.big_log:  # the big log's replayed sessions have no read models for the pages
        pages(campaign_id, user, db, total)
    check_p50 = incremental(campaign, user, character, db, total, repeats=3 if args.big_log else 7)
    derivation(check_p50)


@contextlib.contextmanager
def cpu_seconds():
    """The CPU time this process and its finished children spend inside (a list of one, filled
    on exit): what a figure costs whatever else the machine runs (the database's not counted)."""
    spent: list[float] = []

    def now() -> float:
        own, children = (
            resource.getrusage(resource.RUSAGE_SELF),
            resource.getrusage(resource.RUSAGE_CHILDREN),
        )
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

    started = now()
    yield spent
    spent.append(now() - started)


def _load() -> str:
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


def pages(campaign_id: int, user, db: str, total: int) -> None:
    from django.conf import settings
    from django.test import Client
    from summary import record

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    client = Client()
    client.force_login(user)
    gm_page, audit_page = f"/campaigns/{campaign_id}/gm/", f"/campaigns/{campaign_id}/audit/"

    def get(url: str):
        return lambda: client.get(url).status_code == 200 or sys.exit(f"GET {url} failed")

    get(audit_page)()  # the first view stores the checkpoint (verify_log would have, too)
    gm_ms = median_ms(get(gm_page), 7)
    audit_ms = median_ms(get(audit_page), 7)
    print(f"  GM page               {gm_ms:9.1f} ms")
    print(f"  audit page            {audit_ms:9.1f} ms  = {audit_ms / gm_ms:.2f}x the GM page")
    record(f"trust: audit page, {total:,} events, {db}", audit_ms, "ms", gm_ms,
           "baseline: the GM page")  # fmt: skip


def incremental(campaign, user, character, db: str, total: int, repeats: int) -> float:
    """Verification carried on after one new roll, beside --rehash; returns a check's p50 (ms)."""
    # write_log's events bypass the services (no Check rows): the rolls below start a session of
    # their own, so that their key chain is the server's and the verification stays clean.
    from summary import record

    from campaign import services as campaign_services
    from campaign.models import Session
    from rolls.checks import services
    from rolls.trust.stored_log import verify_campaigns

    campaign_id = campaign.pk

    if Session.open_in(campaign):
        campaign_services.end_session(campaign=campaign, actor=user)
    campaign_services.start_session(campaign=campaign, actor=user)
    trait = next(name for group in character.traits.values() if group for name in group)
    request = {
        "character": str(character.pk),
        "traits": [trait],
        "client_seed": "ab" * 16,
    }

    def one_roll() -> None:
        services.check_roll(campaign=campaign, actor=user, request=request)

    def verify(**options) -> None:
        assert not verify_campaigns(campaign_ids=[campaign_id], **options).problems

    verify()
    carried, carried_cpu, rehashed, rolls = [], [], [], []
    for _ in range(repeats):
        rolls.append(median_ms(one_roll, 1))
        started = time.process_time()
        carried.append(median_ms(verify, 1))
        carried_cpu.append((time.process_time() - started) * 1000)
        one_roll()
        rehashed.append(median_ms(lambda: verify(rehash=True), 1))
    carry_ms, rehash_ms = statistics.median(carried), statistics.median(rehashed)
    print(
        f"  after one new event: carried on {carry_ms:7.1f} ms (verify_log, the audit page; "
        f"{statistics.median(carried_cpu):.1f} ms of CPU)"
    )
    print(f"  after one new event: --rehash   {rehash_ms:7.1f} ms (re-hashes the chain first)")
    record(f"trust: verification after one new event, {total:,} events, {db}", carry_ms, "ms",
           rehash_ms, "baseline: verify_log --rehash (re-hashes the chain below)")  # fmt: skip
    return statistics.median(rolls)


def derivation(check_p50: float) -> None:
    from summary import record

    from rolls.systems import KeyedDice, face_source, roll, roll_key

    check = {"pool": 8, "again": 10, "rote": False, "exceptional_at": 5, "extra_successes": 0}
    seed, n = bytes(32), 20_000

    def keyed() -> None:
        for seq in range(n):
            roll("cofd", check, KeyedDice(roll_key(seed, seq), 1, seq, "ab" * 16))

    def former() -> None:
        for seq in range(n):
            roll("cofd", check, face_source(FormerHmacDice(seed, "1", seq)))

    keyed_us, former_us = median_ms(keyed, 3) * 1000 / n, median_ms(former, 3) * 1000 / n
    print(f"  cofd pool 8, keyed    {keyed_us:9.1f} µs/roll (key + one keyed hash)")
    print(f"  cofd pool 8, former   {former_us:9.1f} µs/roll (HMAC per die)")
    print(f"  check service p50     {check_p50:9.2f} ms: the derivation's change is "
          f"{(keyed_us - former_us) / 10 / check_p50:+.2f}% of it")  # fmt: skip
    record("trust: roll derivation, cofd pool 8", keyed_us, "µs/roll", former_us,
           "baseline: the former HMAC per die")  # fmt: skip


if __name__ == "__main__":
    main()
