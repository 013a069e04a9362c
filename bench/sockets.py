"""Benchmark: memory per connected live-feed socket, beside a bare Channels consumer.

    .venv/bin/python bench/sockets.py [--sockets 200]

Starts the real app under uvicorn (SQLite under var/bench/, in-memory channel layer) with a
campaign and a token, opens N authenticated feed sockets to it and reads the server's resident
memory before and after; then does the same against a bare `AsyncWebsocketConsumer` that accepts
every socket and does nothing (the baseline: what Channels and uvicorn cost per socket anyway).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "var" / "bench"
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


def prepare() -> tuple[str, int, str]:
    BENCH.mkdir(parents=True, exist_ok=True)
    db = BENCH / "sockets.sqlite3"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    url = f"sqlite:///{db}"
    env = {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "config.settings"}
    env.pop("REDIS_URL", None)
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
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return url, int(out[-2]), out[-1]


def start(app: str, database_url: str, *options: str) -> tuple[subprocess.Popen, int]:
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
    }
    env.pop("REDIS_URL", None)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            app,
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


async def measure(
    process: subprocess.Popen, url: str, count: int, headers: dict[str, str]
) -> float:
    from websockets.asyncio.client import connect

    await asyncio.sleep(1)
    before = rss_kib(process.pid)
    sockets = []
    for _ in range(count):
        sockets.append(await connect(url, additional_headers=headers, max_size=None))
    await asyncio.sleep(2)  # let catch-up and presence settle
    after = rss_kib(process.pid)
    for ws in sockets:
        await ws.close()
    return (after - before) / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sockets", type=int, default=200)
    args = parser.parse_args()
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
