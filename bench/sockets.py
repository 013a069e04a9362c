"""Benchmark: memory per connected live-feed socket, beside a bare Channels consumer; and two
campaigns' socket writes in one process, beside one campaign's.

    .venv/bin/python bench/sockets.py [--sockets 200] [--writes 60] [--database-url URL]

Memory: starts the real app under uvicorn (SQLite under var/bench/, in-memory channel layer) with
a campaign and a token, opens N authenticated feed sockets to it and reads the server's resident
memory before and after (once a few sockets are connected: the first ones' one-off costs are not
a socket's); then does the same against a bare `AsyncWebsocketConsumer` that accepts
every socket and does nothing (the baseline: what Channels and uvicorn cost per socket anyway).

Writes: one uvicorn process, two campaigns, WRITERS sockets on each sending rolls one after the
other. The time for `--writes` rolls on each of the two campaigns at once, beside the time for
`--writes` rolls on one campaign alone (the baseline), alternated, median of three: 2.0 means the
process ran the two campaigns' writes one at a time (as on channels' one shared database thread),
1.0 fully side by side. Writes to one campaign serialise on its lock anyway; on SQLite (the
default) every write takes the file's one write lock, so the figure that tells is PostgreSQL's
(`--database-url`, a database it empties first).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "var" / "bench"
sys.path.insert(0, str(ROOT))
from config.websocket import UVICORN_WS  # noqa: E402

BARE_APP = """
import os
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
import django
django.setup()
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.routing import URLRouter
from django.urls import re_path

class Bare(AsyncWebsocketConsumer):
    async def connect(self):
        await self.accept()

application = URLRouter([re_path(r"^ws/", Bare.as_asgi())])
"""


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def fresh_sqlite(name: str) -> str:
    """The URL of a new, empty SQLite file under var/bench/."""
    BENCH.mkdir(parents=True, exist_ok=True)
    db = BENCH / name
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    return f"sqlite:///{db}"


def run_django(script: str, database_url: str) -> list[str]:
    """Run `script` with Django set up on `database_url`; the words it printed."""
    env = {**os.environ, "DATABASE_URL": database_url, "DJANGO_SETTINGS_MODULE": "config.settings"}
    env.pop("REDIS_URL", None)
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()


def prepare() -> tuple[str, int, str]:
    url = fresh_sqlite("sockets.sqlite3")
    script = (
        "import django; django.setup();"
        "from django.core.management import call_command; call_command('migrate', verbosity=0);"
        "from django.contrib.auth import get_user_model;"
        "from rest_framework.authtoken.models import Token;"
        "from campaign import services;"
        "u = get_user_model().objects.create_user('bench', password='bench-pass');"
        "c = services.create_campaign(name='B', system='cofd', created_by=u);"
        "print(c.pk, Token.objects.create(user=u).key)"
    )
    out = run_django(script, url)
    return url, int(out[-2]), out[-1]


WRITERS = 2  # sockets per campaign, each writing one roll after the other (WRITERS_PER_CAMPAIGN)
WRITES_SCRIPT = """
import django
django.setup()
from django.core.management import call_command
from django.db import connection
if connection.vendor == "postgresql":
    with connection.cursor() as cursor:  # start from an empty schema
        cursor.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public;")
call_command("migrate", verbosity=0)
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from campaign import services
user = get_user_model().objects.create_user("writer", password="bench-pass")
print(Token.objects.create(user=user).key)
for name in ("A", "B"):
    campaign = services.create_campaign(name=name, system="cofd", created_by=user)
    services.start_chapter(campaign=campaign, actor=user)
    services.start_session(campaign=campaign, actor=user)
    sheet = {"attributes": {"Wits": 3}, "skills": {"Occult": 2}}
    hero = services.create_character(campaign=campaign, actor=user, name="NPC", traits=sheet)
    print(campaign.pk, hero.pk)
"""


def start(
    app: str, database_url: str, *options: str, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen, int]:
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1024)
    listener.set_inheritable(True)
    port = listener.getsockname()[1]
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "DEBUG": "0",
        "LOG_LEVEL": "WARNING",
        "PYTHONPATH": f"{ROOT}:{BENCH}",
        **(env or {}),
    }
    env.pop("REDIS_URL", None)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            app,
            *UVICORN_WS,
            "--fd",
            str(listener.fileno()),
            "--log-level",
            "warning",
            *options,
        ],
        cwd=ROOT,
        env=env,
        pass_fds=[listener.fileno()],
    )
    listener.close()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return process, port
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"{app} did not start")


WARM_SOCKETS = 20  # connected (and kept) before the first reading: see `measure`


async def measure(
    process: subprocess.Popen, url: str, count: int, headers: dict[str, str]
) -> float:
    """KiB of resident memory per socket: the growth while ``count`` more sockets connect,
    once WARM_SOCKETS are connected. Reading it from the first socket counted what the first
    connections cost once (imports, the database connection, the thread pool's arenas) and,
    when the server's port answered before its application had loaded, some of the loading:
    the bare consumer read 72-178 KiB a socket in three runs, 72 KiB in every later batch."""
    from websockets.asyncio.client import connect

    sockets = [
        await connect(url, additional_headers=headers, max_size=None, open_timeout=60)
        for _ in range(WARM_SOCKETS)
    ]
    await asyncio.sleep(2)  # let catch-up and presence settle
    before = rss_kib(process.pid)
    for _ in range(count):
        sockets.append(await connect(url, additional_headers=headers, max_size=None))
    await asyncio.sleep(2)
    after = rss_kib(process.pid)
    for ws in sockets:
        await ws.close()
    return (after - before) / count


def prepare_writes(database_url: str | None) -> tuple[str, str, list[tuple[int, str]]]:
    """Two campaigns with an open session and a character each, and the GM's token."""
    url = database_url or fresh_sqlite("writes.sqlite3")
    token, *tables = run_django(WRITES_SCRIPT, url)
    return url, token, [(int(c), hero) for c, hero in zip(tables[::2], tables[1::2], strict=True)]


async def write_times(
    port: int, token: str, tables: list[tuple[int, str]], writes: int, rounds: int = 3
) -> tuple[float, float]:
    """Median seconds for `writes` rolls to one campaign, and to each of two at once."""
    from websockets.asyncio.client import connect

    headers = {"Authorization": f"Token {token}"}
    sockets = {
        campaign: [
            await connect(
                f"ws://127.0.0.1:{port}/ws/campaigns/{campaign}/", additional_headers=headers
            )
            for _ in range(WRITERS)
        ]
        for campaign, _ in tables
    }

    async def write(ws, hero: str, count: int) -> None:
        for n in range(count):
            request = {"character": hero, "traits": ["Wits", "Occult"], "label": f"w{n}"}
            await ws.send(json.dumps({"type": "roll", "ref": n, "request": request}))
            while True:  # the campaign's events arrive meanwhile
                frame = json.loads(await ws.recv())
                if frame.get("ref") == n:
                    if frame["type"] != "result":
                        raise RuntimeError(f"a roll was refused: {frame}")
                    break

    async def timed(chosen: list[tuple[int, str]]) -> float:
        began = time.perf_counter()
        await asyncio.gather(
            *(write(ws, hero, writes // WRITERS) for c, hero in chosen for ws in sockets[c])
        )
        return time.perf_counter() - began

    await timed(tables)  # warm up: connections, imports, caches
    one, two = [], []
    for _ in range(rounds):
        one.append(await timed(tables[:1]))
        two.append(await timed(tables))
    for group in sockets.values():
        for ws in group:
            await ws.close()
    return statistics.median(one), statistics.median(two)


def measure_writes(writes: int, database_url: str | None) -> None:
    url, token, tables = prepare_writes(database_url)
    db = "PostgreSQL" if url.startswith("postgres") else "SQLite"
    # One user writes everything: lift the per-user and per-socket budgets.
    budgets = {"WRITE_RATE": "1000000/min", "LIVE_FRAME_RATE": "10000", "LIVE_FRAME_BURST": "10000"}
    process, port = start("config.asgi:application", url, env=budgets)
    try:
        one, two = asyncio.run(write_times(port, token, tables, writes))
    finally:
        process.terminate()
        process.wait(timeout=10)
    ratio = two / one
    print(f"socket writes, one uvicorn process, {db}, {WRITERS} sockets per campaign:")
    print(f"  {writes} rolls to one campaign      {one:8.2f} s")
    print(f"  {writes} rolls to each of two        {two:8.2f} s")
    print(f"  ratio (2.0: one at a time)   {ratio:8.2f}x")
    sys.path.insert(0, str(Path(__file__).parent))
    from summary import record

    record(
        f"sockets: two campaigns' socket writes in one process ({db}, {writes} each)",
        two,
        "s",
        one,
        "baseline: one campaign's alone; 2x: one at a time",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sockets", type=int, default=200)
    parser.add_argument("--writes", type=int, default=60, help="rolls per campaign; 0: none")
    parser.add_argument("--writes-only", action="store_true")
    parser.add_argument("--database-url", default=None, help="for the writes (emptied first)")
    args = parser.parse_args()
    if args.writes:
        measure_writes(args.writes, args.database_url)
    if args.writes_only:
        return
    database_url, campaign_id, token = prepare()
    (BENCH / "bare_asgi.py").write_text(BARE_APP)
    results = {}
    headers = {"Authorization": f"Token {token}"}
    for label, app, path in (
        ("live feed", "config.asgi:application", f"/ws/campaigns/{campaign_id}/"),
        ("bare consumer", "bare_asgi:application", "/ws/bare/"),
    ):
        process, port = start(app, database_url)
        try:
            results[label] = asyncio.run(
                # The token in a header: one in the URL is refused (accounts/socket_auth.py).
                measure(process, f"ws://127.0.0.1:{port}{path}", args.sockets, headers)
            )
        finally:
            process.terminate()
            process.wait(timeout=10)
    print(f"memory per connected socket, {args.sockets} sockets, one uvicorn process:")
    for label, kib in results.items():
        print(f"  {label:<14} {kib:8.1f} KiB")
    print(f"  ratio          {results['live feed'] / max(results['bare consumer'], 0.1):8.2f}x")
    sys.path.insert(0, str(Path(__file__).parent))
    from summary import record

    record(
        f"sockets: memory per feed socket ({args.sockets})",
        results["live feed"],
        "KiB",
        results["bare consumer"],
        "baseline: a bare Channels consumer",
    )


if __name__ == "__main__":
    main()
