"""Benchmark: the luck report and the session chronicle on a long campaign.

    .venv/bin/python bench/report.py [--events 100000] [--quick] [--database-url URL]

Writes one campaign of N server-rolled CofD checks (as bench/log.py does), projects it, then
times the luck report of the whole campaign for the GM and for a player, and the first
session's chronicle (sessions of 500 rolls), beside a baseline measured in the same run: reading
the same check rows with their events (what any report must at least do).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def timed(label: str, work, count: int, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    print(f"  {label:<44} {best:8.3f}s  {count / best:12,.0f} checks/s", flush=True)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--quick", action="store_true", help="20,000 events")
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    events = 20_000 if args.quick else args.events

    from log import setup_django, write_log

    setup_django(args.database_url)

    from django.contrib.auth import get_user_model
    from django.db import transaction

    from campaign import services
    from campaign.models import Campaign, Membership, Session
    from eventlog import projections
    from eventlog.stream import lock_stream
    from rolls.models import Check
    from rolls.reads.chronicle import session_chronicle, to_markdown
    from rolls.reads.luck import luck_report

    campaign_id = write_log(events)
    with transaction.atomic():
        campaign = lock_stream(campaign_id)
        projections.rebuild(campaign)
    campaign = Campaign.objects.get(pk=campaign_id)
    player = get_user_model().objects.create_user("player", password="bench-password")
    services.join_campaign(invite_code=campaign.invite_code, user=player)
    gm = Membership.objects.get(campaign=campaign, role="gm")
    member = Membership.objects.get(campaign=campaign, user=player)
    # bench/log.py's writer plays sessions of 500 rolls: the chronicle is of the first one.
    session = Session.objects.filter(campaign=campaign).order_by("started_seq").first()
    in_session = Check.objects.filter(campaign=campaign, session_id=session.pk).count()
    checks = Check.objects.filter(campaign=campaign).count()

    def read_rows() -> None:
        for check in Check.objects.filter(campaign=campaign).order_by("seq").iterator(2000):
            check.event.payload  # noqa: B018

    from summary import record

    db = "PostgreSQL" if args.database_url else "SQLite"
    print(f"\n{checks:,} checks on {db}")
    base = timed("baseline: read the checks and their events", read_rows, checks)
    from django.core.cache import cache

    def cold(work):
        def run() -> None:
            cache.clear()
            work()

        return run

    gm_time = timed(
        "luck report, whole campaign, GM (cold)",
        cold(lambda: luck_report(campaign=campaign, membership=gm)),
        checks,
    )
    player_time = timed(
        "luck report, whole campaign, player (cold)",
        cold(lambda: luck_report(campaign=campaign, membership=member)),
        checks,
    )
    warm_time = timed(
        "luck report, whole campaign, GM (warm)",
        lambda: luck_report(campaign=campaign, membership=gm),
        checks,
    )
    chronicle_time = timed(
        "chronicle of one session (Markdown), GM",
        lambda: to_markdown(session_chronicle(campaign=campaign, membership=gm, session=session)),
        in_session,
        repeat=1,
    )
    record(
        f"report: luck report, {checks:,} checks, {db}",
        checks / gm_time,
        "checks/s",
        checks / base,
        "baseline: reading the checks",
    )
    print(f"\n  luck report (GM)     {gm_time:.2f}s = {gm_time / base:.2f}x the read baseline")
    print(f"  luck report (player) {player_time:.2f}s = {player_time / base:.2f}x")
    print(f"  luck report (warm)   {warm_time * 1000:.1f} ms")
    print(f"  chronicle            {chronicle_time * 1000:.1f} ms for {in_session:,} checks")


if __name__ == "__main__":
    main()
