"""Benchmark: the live feed's fan-out, beside a bare Channels group_send over the same layer.

    .venv/bin/python bench/fanout.py [--clients 10,100,200,500] [--rate 5] [--rolls 30]
                       [--rounds 3] [--layers memory,redis] [--redis-url redis://127.0.0.1:6379/0]

This process serves `config.asgi:application` with uvicorn (in-process, on loopback) against a
fresh SQLite database of its own under var/bench/; a child process holds N real WebSocket
clients. For each channel layer (in-memory; then channels_redis, if Redis answers) and each N, in
the same run:

- baseline: the N clients on a bare consumer that joins one group and forwards what it receives;
  this process group_sends a frame the size of a roll event at the steady rate; latency = receipt
  minus the group_send call;
- feed: the N clients are N players of one campaign on /ws/campaigns/<id>/ (API tokens); the GM
  rolls a public check through the service at the same rate; latency = receipt minus commit (a
  listener registered ahead of the broadcaster stamps the commit).

Each figure pools `rounds` rounds of each, interleaved (baseline, feed, feed, baseline…) so that
both meet the same machine load. Both consumers skip channels' per-message close_old_connections,
so the baseline is the cheapest path Channels offers; the feed's figures include making the roll in
the same process. Printed: p50/p99 latency, delivered messages/s, messages lost, and feed/baseline
ratios. Both processes read time.time() on one machine. The Redis layer is configured as
config/settings.py should be for redis-py 8 (socket_timeout above channels_redis's 5 s BZPOPMIN,
a pool larger than 100 connections; docs/websocket.md), under a prefix of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import json
import os
import socket
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from summary import record  # bench/ is on sys.path when a script runs from it

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CONNECT_AT_ONCE = 50
DB_FILES = ("", "-wal", "-shm")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", default="10,100,200,500")
    parser.add_argument("--rate", type=float, default=5.0, help="rolls per second")
    parser.add_argument("--rolls", type=int, default=30, help="rolls per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each, interleaved")
    parser.add_argument("--layers", default="memory,redis")
    parser.add_argument(
        "--redis-url", default=os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
    )
    parser.add_argument("--client", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args()


# --- the client process ----------------------------------------------------------------------


async def client_main() -> None:
    """Read a spec on stdin, connect, say READY, record every event's receipt time, report."""
    from websockets.asyncio.client import connect

    spec = json.loads(sys.stdin.readline())
    expect, feed = spec["expect"], spec["kind"] == "feed"
    receipts: dict[int, list[float]] = defaultdict(list)
    sockets = []
    for start in range(0, len(spec["urls"]), CONNECT_AT_ONCE):
        batch = spec["urls"][start : start + CONNECT_AT_ONCE]
        sockets += await asyncio.gather(
            *(connect(url, additional_headers=headers) for url, headers in batch)
        )
    if feed:  # past the catch-up: everything after it is the measurement
        for ws in sockets:
            while json.loads(await ws.recv())["type"] != "caught_up":
                pass
    print("READY", flush=True)

    async def read(ws) -> None:
        got = 0
        while got < expect:
            raw = await ws.recv()
            now = time.time()
            frame = json.loads(raw)
            if frame["type"] == "event":
                events = [frame["event"]]
            else:
                events = frame["events"] if frame["type"] == "events" else []
            for event in events:
                receipts[event["seq"]].append(now)
                got += 1

    readers = [asyncio.ensure_future(read(ws)) for ws in sockets]
    _, pending = await asyncio.wait(readers, timeout=spec["timeout"])
    for reader in pending:
        reader.cancel()
    print(json.dumps({"receipts": receipts, "unfinished": len(pending)}), flush=True)
    await asyncio.gather(*(ws.close() for ws in sockets), return_exceptions=True)


# --- the server process ----------------------------------------------------------------------


def setup_django() -> None:
    bench_dir = ROOT / "var" / "bench"
    bench_dir.mkdir(parents=True, exist_ok=True)
    db = bench_dir / f"fanout-{os.getpid()}.sqlite3"  # a run of its own: others may run at once
    atexit.register(lambda: [Path(f"{db}{end}").unlink(missing_ok=True) for end in DB_FILES])
    os.environ["DATABASE_URL"] = f"sqlite:///{db}"
    os.environ.pop("REDIS_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def make_table(players: int) -> dict[str, Any]:
    """A CofD campaign with an open session, the GM's NPC, and `players` players with tokens."""
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from campaign import services

    User = get_user_model()
    gm = User.objects.create_user("gm", password="bench-password")
    campaign = services.create_campaign(name="Bench", system="cofd", created_by=gm)
    services.start_session(campaign=campaign, actor=gm)
    npc = services.create_character(
        campaign=campaign,
        actor=gm,
        name="NPC",
        traits={"attributes": {"Wits": 3}, "skills": {"Occult": 2}},
    )
    users = User.objects.bulk_create(User(username=f"player{i}") for i in range(players))
    tokens = []
    for user in users:
        services.join_campaign(invite_code=campaign.invite_code, user=user)
        tokens.append(Token.objects.create(user=user).key)
    campaign.refresh_from_db()
    request = {"character": str(npc.pk), "traits": ["Wits", "Occult"], "visibility": "public"}
    return {"campaign": campaign, "gm": gm, "tokens": tokens, "request": request}


def bench_application() -> Any:
    """The real application, plus /bench/bare/: a bare consumer for the baseline."""
    from channels.consumer import get_handler_name
    from channels.generic.websocket import AsyncWebsocketConsumer

    from config.asgi import application

    class BareConsumer(AsyncWebsocketConsumer):
        async def dispatch(self, message: dict[str, Any]) -> None:
            await getattr(self, get_handler_name(message))(message)

        async def connect(self) -> None:
            await self.channel_layer.group_add("bench.bare", self.channel_name)
            await self.accept()

        async def disconnect(self, code: int) -> None:
            await self.channel_layer.group_discard("bench.bare", self.channel_name)

        async def bench_message(self, message: dict[str, Any]) -> None:
            await self.send(text_data=message["text"])

    bare = BareConsumer.as_asgi()

    async def app(scope, receive, send):
        if scope["type"] == "websocket" and scope["path"] == "/bench/bare/":
            return await bare(scope, receive, send)
        return await application(scope, receive, send)

    return app


class Bench:
    def __init__(self, args: argparse.Namespace, table: dict[str, Any], port: int) -> None:
        self.args, self.table, self.port = args, table, port
        self.commits: dict[int, float] = {}
        self.sample_frame = ""

    def stamp_commit(self, event: Any) -> None:
        self.commits[event.seq] = time.time()

    async def phase(self, kind: str, clients: int) -> Measurement:
        args, cid = self.args, self.table["campaign"].pk
        if kind == "feed":
            url = f"ws://127.0.0.1:{self.port}/ws/campaigns/{cid}/"
            urls = [(url, {"Authorization": f"Token {t}"}) for t in self.table["tokens"][:clients]]
        else:
            urls = [(f"ws://127.0.0.1:{self.port}/bench/bare/", {})] * clients
        spec = {"kind": kind, "urls": urls, "expect": args.rolls}
        spec["timeout"] = args.rolls / args.rate + 30
        child = await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            "--client",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=2**26,
        )
        child.stdin.write(json.dumps(spec).encode() + b"\n")
        await child.stdin.drain()
        ready = await asyncio.wait_for(child.stdout.readline(), 120)
        assert ready.strip() == b"READY", ready
        sent = await (self.drive_feed() if kind == "feed" else self.drive_bare())
        report = json.loads(await asyncio.wait_for(child.stdout.readline(), spec["timeout"] + 30))
        await child.wait()
        await asyncio.sleep(0.5)  # let the server see the sockets go
        return measure(sent, report, clients * args.rolls)

    async def drive_feed(self) -> dict[int, float]:
        from channels.db import database_sync_to_async

        from rolls.checks.services import check_roll

        table = self.table
        roll = database_sync_to_async(check_roll)
        seqs: list[int] = []

        async def one() -> None:
            check = await roll(
                campaign=table["campaign"], actor=table["gm"], request=table["request"]
            )
            seqs.append(check.seq)

        await self.steadily(one)
        return {seq: self.commits[seq] for seq in seqs}

    async def drive_bare(self) -> dict[int, float]:
        from channels.layers import get_channel_layer

        layer = get_channel_layer()
        sent: dict[int, float] = {}
        counter = iter(range(1, 10**9))

        async def one() -> None:
            i = next(counter)
            frame = json.loads(self.sample_frame)
            frame["event"]["seq"] = i
            text = json.dumps(frame, separators=(",", ":"))
            sent[i] = time.time()
            await layer.group_send("bench.bare", {"type": "bench.message", "text": text})

        await self.steadily(one)
        return sent

    async def steadily(self, action) -> None:
        """Start `action` every 1/rate seconds, not waiting for the previous one."""
        started, tasks = time.monotonic(), []
        for i in range(self.args.rolls):
            await asyncio.sleep(max(0.0, started + i / self.args.rate - time.monotonic()))
            tasks.append(asyncio.ensure_future(action()))
        await asyncio.gather(*tasks)


@dataclass
class Measurement:
    latencies: list[float]  # ms, one per message received
    expected: int
    seconds: float  # first send to last receipt


def measure(sent: dict[int, float], report: dict[str, Any], expected: int) -> Measurement:
    latencies = [
        (receipt - sent[int(key)]) * 1000
        for key, receipts in report["receipts"].items()
        if int(key) in sent
        for receipt in receipts
    ]
    receipts = [max(times) for times in report["receipts"].values() if times]
    seconds = max(receipts) - min(sent.values()) if receipts else float("nan")
    return Measurement(latencies, expected, seconds)


def summarise(rounds: list[Measurement]) -> dict[str, float]:
    latencies = sorted(x for m in rounds for x in m.latencies)
    delivered, expected = len(latencies), sum(m.expected for m in rounds)
    if delivered < 2:
        return {"p50": float("nan"), "p99": float("nan"), "rate": 0.0, "lost": expected}
    cuts = statistics.quantiles(latencies, n=100)
    return {
        "p50": cuts[49],
        "p99": cuts[98],
        "rate": delivered / sum(m.seconds for m in rounds),
        "lost": expected - delivered,
    }


def last_frame(campaign_id: int) -> str:
    """The campaign's last event as a player's socket receives it."""
    from campaign.models import Campaign, Membership
    from rolls.live.broadcast import event_frame
    from rolls.reads.selectors import events_for

    head = Campaign.objects.get(pk=campaign_id).head_seq
    player = Membership.objects.filter(campaign_id=campaign_id, role="player").first()
    return event_frame(events_for(membership=player, after=head - 1)[0])


def layer_settings(name: str, redis_url: str) -> dict[str, Any]:
    if name == "memory":
        return {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    host = {"address": redis_url, "socket_timeout": 10, "max_connections": 1000}
    return {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [host], "capacity": 1000, "expiry": 30, "prefix": "bench"},
        }
    }


def redis_answers(url: str) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


async def server_main(args: argparse.Namespace, table: dict[str, Any]) -> None:
    import uvicorn
    from channels.db import database_sync_to_async
    from django.test import override_settings

    from eventlog import stream
    from rolls.live.broadcast import heartbeat_seconds

    sizes = [int(n) for n in args.clients.split(",")]
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    config = uvicorn.Config(bench_application(), log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    serving = asyncio.ensure_future(server.serve(sockets=[listener]))
    while not server.started:
        await asyncio.sleep(0.05)
    bench = Bench(args, table, port)
    # Ahead of the broadcaster: the moment of commit, before anything is published.
    stream._after_commit_listeners.insert(0, bench.stamp_commit)

    print(
        f"fan-out: {args.rounds} x {args.rolls} public rolls at {args.rate:g}/s per figure; "
        f"heartbeat {heartbeat_seconds():g} s; {os.cpu_count()} CPUs; "
        f"load average {os.getloadavg()[0]:.1f} at start"
    )
    header = f"{'layer':<7}{'N':>5}  {'kind':<9}{'p50 ms':>9}{'p99 ms':>9}{'msgs/s':>9}{'lost':>6}"
    print(header + "   feed/baseline: p50  p99  msgs/s")
    for layer in args.layers.split(","):
        if layer == "redis" and not redis_answers(args.redis_url):
            print(f"redis: skipped, nothing answers at {args.redis_url}")
            continue
        with override_settings(CHANNEL_LAYERS=layer_settings(layer, args.redis_url)):
            # A warm-up, whose last roll gives the baseline its payload (a real roll's size).
            await bench.phase("feed", 1)
            bench.sample_frame = await database_sync_to_async(last_frame)(table["campaign"].pk)
            await bench.phase("baseline", 1)
            for clients in sizes:
                # Interleaved rounds (baseline, feed, feed, baseline…): both see the same load.
                rounds: dict[str, list[Measurement]] = {"baseline": [], "feed": []}
                for i in range(args.rounds):
                    for kind in ("baseline", "feed") if i % 2 == 0 else ("feed", "baseline"):
                        rounds[kind].append(await bench.phase(kind, clients))
                base, feed = summarise(rounds["baseline"]), summarise(rounds["feed"])
                record(
                    f"fanout: p99 commit to receipt, {layer}, {clients} clients",
                    feed["p99"],
                    "ms",
                    base["p99"],
                    "baseline: bare group_send",
                )
                for kind, row in (("baseline", base), ("feed", feed)):
                    print(
                        f"{layer:<7}{clients:>5}  {kind:<9}{row['p50']:>9.1f}{row['p99']:>9.1f}"
                        f"{row['rate']:>9.0f}{row['lost']:>6}",
                        end="",
                    )
                    if kind == "feed":
                        print(
                            f"   {feed['p50'] / base['p50']:>17.2f}x"
                            f"{feed['p99'] / base['p99']:>5.2f}x"
                            f"{feed['rate'] / base['rate']:>6.2f}x",
                            end="",
                        )
                    print(flush=True)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    server.should_exit = True
    try:
        await asyncio.wait_for(asyncio.shield(serving), 10)
    except TimeoutError:
        server.force_exit = True
        await serving


def main() -> None:
    args = parse_args()
    try:
        import uvloop

        run = uvloop.run
    except ImportError:  # pragma: no cover
        run = asyncio.run
    if args.client:
        run(client_main())
        return
    setup_django()
    table = make_table(max(int(n) for n in args.clients.split(",")))
    run(server_main(args, table))


if __name__ == "__main__":
    main()
