"""Benchmark: a reconnect storm. N feed sockets connect at once with `after=0` to a campaign of
E events (as after a server restart), while one client keeps making REST requests.

    .venv/bin/python bench/catchup.py [--sockets 200] [--events 550]

One uvicorn process (SQLite under var/bench/, in-memory layer). Reports how long until every
socket has caught up, the server's resident memory (before, peak during, 3 s after), and the REST
client's median latency during the storm beside its median with no storm (the in-run baseline).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from sockets import BENCH, ROOT, rss_kib, start

SEED = """
import django, sys
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from campaign import services
try:
    from rolls.checks import services as rolls
except ImportError:  # before the rolls/checks/ layout (to bench an older checkout)
    from rolls import services as rolls
gm = get_user_model().objects.create_user("gm", password="gm-pass")
c = services.create_campaign(name="Storm", system="cofd", created_by=gm,
                             options={"manual_dice": True})
services.start_session(campaign=c, actor=gm)
hero = services.create_character(campaign=c, actor=gm, name="NPC",
                                 traits={"attributes": {"Wits": 3}, "skills": {"Occult": 2}})
for n in range(int(sys.argv[1])):
    rolls.check_roll(campaign=c, actor=gm, request={
        "character": str(hero.pk), "traits": ["Wits", "Occult"], "faces": [8, 3, 2, 9, 1],
        "label": f"roll {n}"})
c.refresh_from_db()
print(c.pk, c.head_seq, Token.objects.create(user=gm).key)
"""


def prepare(events: int) -> tuple[str, int, int, str]:
    BENCH.mkdir(parents=True, exist_ok=True)
    db = BENCH / "catchup.sqlite3"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    url = f"sqlite:///{db}"
    env = {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "config.settings"}
    env.pop("REDIS_URL", None)
    out = subprocess.run(
        [sys.executable, "-c", SEED, str(events)],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return url, int(out[-3]), int(out[-2]), out[-1]


# REST latencies are sampled from a process of their own, so that the sockets' JSON parsing in
# this one does not count as server time.
SAMPLER = """
import json, sys, time, os, httpx
url, token, count, stop = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
latencies = []
with httpx.Client(headers={"Authorization": f"Token {token}"}, timeout=120) as http:
    while (not count or len(latencies) < count) and not os.path.exists(stop):
        began = time.perf_counter()
        try:
            http.get(url).raise_for_status()
        except httpx.HTTPError as error:
            print(f"  REST request failed: {error!r}", file=sys.stderr)
        latencies.append(time.perf_counter() - began)
        time.sleep(0.05)
print(json.dumps(latencies))
"""


def sampler(url: str, token: str, count: int, stop: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", SAMPLER, url, token, str(count), str(stop)],
        stdout=subprocess.PIPE,
        text=True,
    )


def latencies_of(process: subprocess.Popen) -> list[float]:
    out, _ = process.communicate(timeout=600)
    return json.loads(out)


async def catch_up(url: str, token: str) -> int:
    from websockets.asyncio.client import connect

    # The token in a header: one in the URL is refused (accounts/socket_auth.py).
    headers = {"Authorization": f"Token {token}"}
    async with connect(url, additional_headers=headers, max_size=None, open_timeout=120) as ws:
        seen = 0
        while True:
            frame = json.loads(await asyncio.wait_for(ws.recv(), 300))
            if frame["type"] == "events":
                seen += len(frame["events"])
            elif frame["type"] == "caught_up":
                return seen


async def storm(port: int, pid: int, cid: int, head: int, token: str, sockets: int) -> dict:
    rest = f"http://127.0.0.1:{port}/api/campaigns/{cid}/checks/?after={head - 20}&limit=20"
    stop = BENCH / "catchup.stop"
    stop.unlink(missing_ok=True)
    latencies_of(sampler(rest, token, 10, stop))  # warm up
    baseline = latencies_of(sampler(rest, token, 40, stop))
    before = rss_kib(pid)
    peak = before
    done = asyncio.Event()

    async def sample_memory() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, rss_kib(pid))
            await asyncio.sleep(0.1)

    memory = asyncio.create_task(sample_memory())
    during_sampler = sampler(rest, token, 0, stop)
    ws_url = f"ws://127.0.0.1:{port}/ws/campaigns/{cid}/?after=0"
    began = time.perf_counter()
    try:
        counts = await asyncio.gather(*(catch_up(ws_url, token) for _ in range(sockets)))
    finally:  # the sampler stops however the storm ends
        elapsed = time.perf_counter() - began
        done.set()
        stop.touch()
    during = latencies_of(during_sampler)
    await memory
    await asyncio.sleep(3)
    after = rss_kib(pid)
    assert all(count == head for count in counts), "a socket missed events"
    return {
        "elapsed": elapsed,
        "rss_before": before,
        "rss_peak": peak,
        "rss_after": after,
        "p50_quiet": statistics.median(baseline) * 1000,
        "p50_storm": statistics.median(during) * 1000,
        "p90_storm": sorted(during)[int(len(during) * 0.9)] * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sockets", type=int, default=200)
    parser.add_argument("--events", type=int, default=550)
    args = parser.parse_args()
    database_url, cid, head, token = prepare(args.events)
    # This script's one process reads every socket: on a busy machine it may answer the server's
    # keepalive pings late, and the server would close the sockets (1011). Keepalive is not
    # what is measured here.
    process, port = start("config.asgi:application", database_url, "--ws-ping-timeout", "600")
    try:
        result = asyncio.run(storm(port, process.pid, cid, head, token, args.sockets))
    finally:
        process.terminate()
        process.wait(timeout=10)
    mib = 1024
    print(f"reconnect storm: {args.sockets} sockets catching up {head} events each")
    print(f"  all caught up in      {result['elapsed']:8.1f} s")
    print(
        f"  server memory         {result['rss_before'] / mib:8.1f} MiB before, "
        f"{result['rss_peak'] / mib:.1f} peak, {result['rss_after'] / mib:.1f} 3 s after"
    )
    print(
        f"  REST p50              {result['p50_storm']:8.1f} ms during the storm, "
        f"{result['p50_quiet']:.1f} ms without (baseline); p90 during {result['p90_storm']:.1f} ms"
    )
    from summary import record

    record(
        f"catch-up storm: REST p50 during ({args.sockets} sockets x {head} events)",
        result["p50_storm"],
        "ms",
        result["p50_quiet"],
        f"baseline: no storm; all caught up in {result['elapsed']:.1f} s",
    )
    record(
        f"catch-up storm: server memory peak growth ({args.sockets} sockets)",
        (result["rss_peak"] - result["rss_before"]) / mib,
        "MiB",
        0,
        f"{(result['rss_after'] - result['rss_before']) / mib:.1f} MiB kept 3 s after",
    )


if __name__ == "__main__":
    main()
