"""Benchmark: presenting checks per viewer (visibility, follow-ups, dice marks).

    .venv/bin/python bench/presenting.py [--checks 200] [--members 6]

Builds a fresh SQLite database under var/bench/ with one CofD campaign (a GM, players with a
character each, an observer) and N public checks rolled through the services, then times:

- the live feed's rendering of each check event for every member (`messages_for`) as it is
  published: from what the write had in hand (the check row, the campaign, the character, the
  open periods, the answer's reading of the dramatic failures taken; #17), beside the same
  frames from the event read back from the log (every fact read again: how every check was
  published before) and the baseline of rendering it once for one member (`present_events`);
  the statements of each are counted;
- a catch-up page of the log for the owner of the characters (follow-ups computed for each check),
  beside the same page for an observer (no follow-ups to compute).

Figures are CPU time per check (of this process, which runs SQLite too), printed with ratios to
the in-run baselines (in `make bench`'s table too).
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def setup_django() -> None:
    bench_dir = ROOT / "var" / "bench"
    bench_dir.mkdir(parents=True, exist_ok=True)
    db = bench_dir / "presenting.sqlite3"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    os.environ["DATABASE_URL"] = f"sqlite:///{db}"
    os.environ.pop("REDIS_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


RUNS = 5  # each figure is the median of this many runs of the same work


def timed(label: str, work, count: int) -> float:
    """CPU time per check, the median of RUNS runs (this process's: the machine is shared, so
    wall time says little; SQLite runs in this process, so its reads are counted). A single run
    of a 200-check page is 10-100 ms: one full collection landing in it (where depends on what
    was allocated before, down to a migration's) moved a row by 7x between two trees."""
    runs = []
    for _ in range(RUNS):
        started = time.process_time()
        work()
        runs.append((time.process_time() - started) / count * 1000)
    per = statistics.median(runs)
    print(f"  {label:<70} {per:8.2f} ms CPU per check", flush=True)
    return per


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checks", type=int, default=200)
    parser.add_argument("--members", type=int, default=6, help="players, besides GM and observer")
    args = parser.parse_args()
    setup_django()
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from campaign import services
    from campaign.models import Membership
    from eventlog.models import Event
    from rolls.checks.services import check_roll
    from rolls.live.broadcast import messages_for
    from rolls.reads.present import present_check
    from rolls.reads.selectors import events_for

    try:
        from rolls.reads.present import present_events
    except ImportError:  # before per-viewer presenting (to measure the old code the same way)
        from rolls.reads.selectors import present_events

    User = get_user_model()
    gm = User.objects.create_user("gm", password="x")
    campaign = services.create_campaign(name="Bench", system="cofd", created_by=gm)
    players = [User.objects.create_user(f"p{i}", password="x") for i in range(args.members)]
    observer = User.objects.create_user("watcher", password="x")
    for user in [*players, observer]:
        services.join_campaign(invite_code=campaign.invite_code, user=user)
    services.change_role(campaign=campaign, actor=gm, user_id=observer.pk, role="observer")
    services.start_session(campaign=campaign, actor=gm)
    services.start_chapter(campaign=campaign, actor=gm)
    sheet = {"attributes": {"Wits": 3}, "skills": {"Occult": 2}}
    hero = services.create_character(
        campaign=campaign, actor=gm, name="Hero", traits=sheet, owner_id=players[0].pk
    )
    campaign.refresh_from_db()
    first = campaign.head_seq + 1
    owner = Membership.objects.get(campaign=campaign, user=players[0])
    watcher = Membership.objects.get(campaign=campaign, user=observer)
    written = []  # each event as its write hands it to the live feed, the answer presented
    for _ in range(args.checks):
        request = {"character": str(hero.pk), "traits": ["Wits", "Occult"]}
        check = check_roll(campaign=campaign, actor=players[0], request=request)
        present_check(check, owner)  # the API's answer, as a view presents it
        written.append(check.event)
    events = list(Event.objects.filter(campaign=campaign, seq__gte=first).order_by("seq"))
    # The heap as a serving process keeps it (config/startup.py's settle): what was allocated to
    # set the table up is out of the collector's way.
    gc.collect()
    gc.freeze()
    print(f"{args.checks} public checks, {args.members + 2} members", flush=True)
    base = timed(
        "baseline: render once (present_events, one member)",
        lambda: [present_events([event], watcher) for event in events],
        len(events),
    )
    read_again = timed(
        "live feed, every fact read again (messages_for, event from the log)",
        lambda: [messages_for(event) for event in events],
        len(events),
    )
    live = timed(
        "live feed, from the write's facts (messages_for, as published)",
        lambda: [messages_for(event) for event in written],
        len(written),
    )
    statements = {}
    for name, sample in (("read again", events), ("as published", written)):
        with CaptureQueriesContext(connection) as captured:
            for event in sample:
                messages_for(event)
        statements[name] = len(captured) / len(sample)
    print(
        "  statements per check: "
        + ", ".join(f"{name} {count:.2f}" for name, count in statements.items())
    )
    page_base = timed(
        "baseline: catch-up page for an observer",
        lambda: events_for(membership=watcher, after=first - 1, limit=args.checks),
        len(events),
    )
    page = timed(
        "catch-up page for the owner (follow-ups offered)",
        lambda: events_for(membership=owner, after=first - 1, limit=args.checks),
        len(events),
    )
    print(
        f"  ratios: live feed {live / base:.2f}x the baseline, {live / read_again:.2f}x read "
        f"again; owner's catch-up {page / page_base:.2f}x"
    )
    sys.path.insert(0, str(ROOT / "bench"))
    from summary import record

    members = args.members + 2
    record(
        f"presenting: live frames of a check for {members} members",
        live,
        "ms CPU/check",
        base,
        "baseline: the check rendered once, for one member",
    )
    record(
        f"presenting: live frames of a check for {members} members, from the write's facts",
        live,
        "ms CPU/check",
        read_again,
        "baseline: the same frames from the event read back (every fact read again)",
    )
    record(
        "presenting: catch-up page for the owner",
        page,
        "ms CPU/check",
        page_base,
        "baseline: the same page for an observer",
    )


if __name__ == "__main__":
    main()
