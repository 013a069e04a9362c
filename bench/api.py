"""Benchmark: POST /api/campaigns/<id>/checks/ beside a do-nothing endpoint of the same stack.

    .venv/bin/python bench/api.py [--quick] [--duration 10] [--concurrency 8]
                                  [--database-url postgres://…] [--no-sqlite]

For each database (SQLite always, unless --no-sqlite; PostgreSQL when --database-url or
DATABASE_URL names one on this machine) the script prepares a fresh database (migrate, a CofD
campaign, an open session and chapter, a player with a character and an API token), serves it
with a real uvicorn on 127.0.0.1 (1 worker; 1 and 2 workers on PostgreSQL), and drives it with
httpx from this process (the production settings but the per-user write throttle, which would
answer most of one token's requests 429; a measurement with more than 1 % errors records no
figure):

- closed loop: `concurrency` clients send back to back for `duration` seconds (after a warm-up),
  first at POST /bench/noop/ — an APIView with the project's authentication and permission
  classes that parses the same JSON body and does nothing — then at the check endpoint (a player
  rolling Wits + Occult for their own character, token auth);
- open loop: requests arrive at a fixed rate, half the check endpoint's closed-loop rate, at
  both endpoints; latency counts from the scheduled send, so a slow server is not hidden by a
  client that waits for it.

The no-op view lives only in this script's URLconf (this module, served instead of config.urls:
config.api_urls plus /bench/noop/); the product's URLs are unchanged. Printed: requests/s,
p50/p99 latency in ms, errors, and each figure as a ratio to the no-op baseline measured in the
same run. The client shares the machine's cores with the server, and with anything else running:
the load average is printed with the results. The script only talks to 127.0.0.1 and stops by
itself (each measurement is bounded in time; servers are terminated at the end).
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scratch import fresh_database  # bench/ is on sys.path when a script runs from it
from summary import record

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
BENCH_DB = "tablecheck_bench_api"
TARGET_RATE, TARGET_P99_MS = 300.0, 50.0  # production target: PostgreSQL, two workers


# --- the served application (this module, imported by uvicorn as `api`) ------------------------


def _served_application() -> Any:
    """config.asgi's application, with this module as the URLconf (adds /bench/noop/)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.conf import settings

    from config.asgi import application as asgi_application

    settings.ROOT_URLCONF = __name__
    return asgi_application


if __name__ != "__main__" and os.environ.get("BENCH_API_SERVE") == "1":
    application = _served_application()

    from django.http import HttpRequest, HttpResponse
    from django.urls import include, path
    from rest_framework.request import Request
    from rest_framework.response import Response
    from rest_framework.views import APIView

    class NoopView(APIView):
        """The same authentication, permission, parsing and rendering as the API; no work."""

        def post(self, request: Request) -> Response:
            return Response({"ok": isinstance(request.data, dict)}, status=201)

    def ready(request: HttpRequest) -> HttpResponse:
        return HttpResponse("ok")

    urlpatterns = [
        path("bench/noop/", NoopView.as_view()),
        path("api/", include("config.api_urls")),
        path("bench/ready/", ready),
    ]


# --- preparing a database (a subprocess with the bench database's DATABASE_URL) ------------------


def prepare() -> None:
    """Migrate, then print the ids and token a player needs to roll (JSON on the last line)."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from rest_framework.authtoken.models import Token

    from campaign import services

    call_command("migrate", verbosity=0)
    User = get_user_model()
    gm = User.objects.create_user("gm", password="bench-gm-password")
    player = User.objects.create_user("alice", password="bench-alice-password")
    campaign = services.create_campaign(name="Bench table", system="cofd", created_by=gm)
    services.join_campaign(invite_code=campaign.invite_code, user=player)
    services.start_session(campaign=campaign, actor=gm, title="Bench night")
    services.start_chapter(campaign=campaign, actor=gm, title="Chapter one")
    character = services.create_character(
        campaign=campaign,
        actor=player,
        name="Marianne",
        traits={"attributes": {"Wits": 3}, "skills": {"Occult": 2}},
    )
    token = Token.objects.create(user=player).key
    print(json.dumps({"campaign": campaign.pk, "character": str(character.pk), "token": token}))


@dataclass
class Database:
    label: str
    url: str
    workers: list[int]
    cleanup: Any = None


def sqlite_database() -> Database:
    folder = ROOT / "var" / "bench"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "api.sqlite3"

    def remove() -> None:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)

    remove()
    return Database("sqlite", f"sqlite:///{path}", [1], remove)


def postgres_database(url: str) -> Database:
    """A fresh database of our own on the same (loopback) server; dropped at the end."""
    own, drop = fresh_database(url, BENCH_DB)
    return Database("postgresql", own, [1, 2], drop)


# Only with DB_POOL_MAX_SIZE=0: with the pool (config/settings.py's default) connections go back
# to the pool after each request and CONN_MAX_AGE is 0 whatever this says.
CONN_MAX_AGE = os.environ.get("CONN_MAX_AGE", "60")
ERRORS_ALLOWED = 0.01  # the share of a measurement's requests that may fail and still count


def server_env(database: Database) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DEBUG")}
    env.update(
        DATABASE_URL=database.url,
        DJANGO_SETTINGS_MODULE="config.settings",
        LOG_LEVEL="ERROR",
        BENCH_API_SERVE="1",
        CONN_MAX_AGE=CONN_MAX_AGE,
        # The per-user write throttle (300/min) would answer most of one token's requests 429:
        # the only production setting lifted, as in bench/check_path.py and bench/serving.py.
        WRITE_RATE="100000000/min",
    )
    return env


def prepare_database(database: Database) -> dict[str, Any]:
    env = server_env(database)
    env.pop("BENCH_API_SERVE")
    done = subprocess.run(
        [sys.executable, __file__, "--prepare"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        raise SystemExit(f"preparing {database.label} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- the server ---------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and its descendants (Linux /proc; NaN elsewhere)."""
    try:
        stats = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                stats[int(entry.name)] = (int(fields[1]), int(fields[11]) + int(fields[12]))
    except OSError:
        return float("nan")
    family, total = {pid}, 0
    changed = True
    while changed:
        changed = False
        for child, (parent, _) in stats.items():
            if parent in family and child not in family:
                family.add(child)
                changed = True
    total = sum(ticks for proc, (_, ticks) in stats.items() if proc in family)
    return total / os.sysconf("SC_CLK_TCK")


class Server:
    def __init__(self, database: Database, workers: int) -> None:
        self.port = free_port()
        # fmt: off
        command = [
            sys.executable, "-m", "uvicorn", "api:application",
            "--app-dir", str(ROOT / "bench"),
            "--host", "127.0.0.1", "--port", str(self.port),
            "--workers", str(workers),
            "--no-access-log", "--log-level", "warning",
        ]
        # fmt: on
        self.process = subprocess.Popen(command, env=server_env(database), cwd=ROOT)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def ready(self, timeout: float = 60.0) -> None:
        import httpx

        deadline = time.monotonic() + timeout
        async with httpx.AsyncClient(base_url=self.base_url) as client:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise SystemExit(f"uvicorn exited with {self.process.returncode}")
                try:
                    if (await client.get("/bench/ready/")).status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.2)
        raise SystemExit("uvicorn did not answer in time")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)


# --- load ---------------------------------------------------------------------------------------


@dataclass
class Result:
    endpoint: str
    db: str
    workers: int
    mode: str
    seconds: float
    latencies: list[float] = field(default_factory=list)  # seconds, successful requests
    errors: int = 0
    statuses: dict[int, int] = field(default_factory=dict)
    completed: int = 0  # every answered request, warm-up included (for the CPU cost)
    cpu_seconds: float = float("nan")  # the uvicorn processes' CPU time over the measurement

    @property
    def cpu_ms(self) -> float:
        return self.cpu_seconds / self.completed * 1000 if self.completed else float("nan")

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.seconds if self.seconds else 0.0

    def percentile(self, q: float) -> float:
        if len(self.latencies) < 2:
            return float("nan")
        return statistics.quantiles(self.latencies, n=1000, method="inclusive")[int(q * 10) - 1]


def _record(result: Result, status: int, elapsed: float) -> None:
    result.completed += 1
    result.statuses[status] = result.statuses.get(status, 0) + 1
    if 200 <= status < 300:
        result.latencies.append(elapsed)
    else:
        result.errors += 1


async def closed_loop(client, path: str, body: dict, result: Result, concurrency: int,
                      warmup: float) -> None:  # fmt: skip
    """`concurrency` clients back to back; only what completes after the warm-up counts."""
    start = time.perf_counter()
    measure_from, stop_at = start + warmup, start + warmup + result.seconds

    async def one_client() -> None:
        while True:
            sent = time.perf_counter()
            if sent >= stop_at:
                return
            try:
                status = (await client.post(path, json=body)).status_code
            except Exception:  # a refused or dropped connection counts as an error
                status = 599
            if sent >= measure_from:
                _record(result, status, time.perf_counter() - sent)
            else:
                result.completed += 1

    await asyncio.gather(*(one_client() for _ in range(concurrency)))


async def open_loop(client, path: str, body: dict, result: Result, rate: float,
                    max_outstanding: int = 512) -> None:  # fmt: skip
    """Arrivals at a fixed rate, whatever the server does; latency from the scheduled time."""
    start = time.perf_counter() + 0.05
    total = int(rate * result.seconds)
    outstanding: set[asyncio.Task] = set()

    async def one(scheduled: float) -> None:
        try:
            status = (await client.post(path, json=body)).status_code
        except Exception:
            status = 599
        _record(result, status, time.perf_counter() - scheduled)

    for index in range(total):
        scheduled = start + index / rate
        delay = scheduled - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        if len(outstanding) >= max_outstanding:  # the server has fallen hopelessly behind
            result.errors += 1
            continue
        task = asyncio.create_task(one(scheduled))
        outstanding.add(task)
        task.add_done_callback(outstanding.discard)
    if outstanding:
        await asyncio.wait(outstanding, timeout=30)
    result.seconds = max(result.seconds, time.perf_counter() - start)


async def measure(server: Server, table: dict, db: str, workers: int, args) -> list[Result]:
    import httpx

    headers = {"Authorization": f"Token {table['token']}"}
    body = {"character": table["character"], "traits": ["Wits", "Occult"], "visibility": "public"}
    endpoints = {
        "no-op": "/bench/noop/",
        "checks": f"/api/campaigns/{table['campaign']}/checks/",
    }
    limits = httpx.Limits(max_connections=512, max_keepalive_connections=args.concurrency * 4)
    results: list[Result] = []
    async with httpx.AsyncClient(
        base_url=server.base_url, headers=headers, limits=limits, timeout=30
    ) as client:
        closed = {}
        for name, path in endpoints.items():
            result = Result(name, db, workers, f"closed c={args.concurrency}", args.duration)
            cpu = cpu_seconds(server.process.pid)
            await closed_loop(client, path, body, result, args.concurrency, args.warmup)
            result.cpu_seconds = cpu_seconds(server.process.pid) - cpu
            closed[name] = result
            results.append(result)
        half = closed["checks"].rate / 2
        if half >= 1:
            for name, path in endpoints.items():
                result = Result(name, db, workers, f"open {half:.0f}/s", args.duration)
                cpu = cpu_seconds(server.process.pid)
                await open_loop(client, path, body, result, half)
                result.cpu_seconds = cpu_seconds(server.process.pid) - cpu
                results.append(result)
    return results


# --- report -------------------------------------------------------------------------------------


def report(results: list[Result]) -> None:
    header = (
        f"{'endpoint':<8} {'db':<10} {'wk':>2} {'mode':<13} {'req/s':>8} {'p50 ms':>8} "
        f"{'p99 ms':>8} {'err':>5} {'cpu ms':>7}   {'x req/s':>7} {'x p50':>6} {'x p99':>6} "
        f"{'x cpu':>6}"
    )
    print()
    print(header)
    print("-" * len(header))
    baseline = {(r.db, r.workers, r.mode): r for r in results if r.endpoint == "no-op"}
    for r in results:
        base = baseline[(r.db, r.workers, r.mode)]
        p50, p99 = r.percentile(50) * 1000, r.percentile(99) * 1000
        ratios = (
            r.rate / base.rate if base.rate else float("nan"),
            p50 / (base.percentile(50) * 1000),
            p99 / (base.percentile(99) * 1000),
            r.cpu_ms / base.cpu_ms if base.cpu_ms else float("nan"),
        )
        print(
            f"{r.endpoint:<8} {r.db:<10} {r.workers:>2} {r.mode:<13} {r.rate:>8.1f} {p50:>8.1f} "
            f"{p99:>8.1f} {r.errors:>5} {r.cpu_ms:>7.2f}   {ratios[0]:>7.2f} {ratios[1]:>6.2f} "
            f"{ratios[2]:>6.2f} {ratios[3]:>6.2f}"
        )
        if r.errors:
            print(f"         statuses: {r.statuses}")
    print("x …: ratio to the no-op endpoint, same database, workers and mode, in this run")
    print("cpu ms: the uvicorn processes' CPU per request (PostgreSQL's own CPU not included)")
    pool = os.environ.get("DB_POOL_MAX_SIZE", "10")
    connections = (
        f"a pool of {pool} per process, CONN_MAX_AGE 0"
        if pool != "0"
        else f"no pool, CONN_MAX_AGE {CONN_MAX_AGE}"
    )
    print(
        f"PostgreSQL connections: {connections}; channel layer: in-memory (REDIS_URL unset, one "
        "process's sockets only: bench/serving.py measures the production settings with Redis)"
    )
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    verdict(results)


def verdict(results: list[Result]) -> None:
    def find(db: str, workers: int, closed: bool) -> Result | None:
        for r in results:
            if (r.endpoint, r.db, r.workers) == ("checks", db, workers) and (
                r.mode.startswith("closed") == closed
            ):
                return r
        return None

    top, half = find("postgresql", 2, True), find("postgresql", 2, False)
    if top is None or half is None:
        print("production target (PostgreSQL, 2 workers): not measured in this run")
        return
    # A figure over refusals (a throttle's 429s, say) would be no figure; a stray timeout is not
    # that. Errors count requests dropped unsent too, which have no status.
    refused = [r for r in (top, half) if r.errors > ERRORS_ALLOWED * max(r.completed, 1)]
    if refused:
        print(
            "production target (PostgreSQL, 2 workers): NOT MEASURED, errors answered: "
            + "; ".join(f"{r.mode}: {r.errors} errors, statuses {r.statuses}" for r in refused)
        )
        return
    p99 = half.percentile(99) * 1000
    met = top.rate >= TARGET_RATE and p99 <= TARGET_P99_MS
    noop = next(
        (
            r
            for r in results
            if (r.endpoint, r.db, r.workers) == ("no-op", "postgresql", 2)
            and r.mode.startswith("closed")
        ),
        None,
    )
    record(
        "api: POST a check, PostgreSQL, 2 workers, 8 clients",
        top.rate,
        "checks/s",
        noop.rate if noop else None,
        "baseline: a no-op DRF endpoint",
    )
    record(
        "api: p99 at half that rate, PostgreSQL, 2 workers",
        p99,
        "ms",
        None,
        f"target {TARGET_P99_MS:.0f} ms",
    )
    print(
        f"production target: >= {TARGET_RATE:.0f} checks/s and p99 <= {TARGET_P99_MS:.0f} ms at "
        f"half that rate (PostgreSQL, 2 workers): measured {top.rate:.0f} checks/s, p99 "
        f"{p99:.1f} ms at {half.mode.split()[1]} -> {'MET' if met else 'NOT MET'}"
    )


# --- main ---------------------------------------------------------------------------------------


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 s per measurement")
    parser.add_argument("--duration", type=float, default=None, help="seconds per measurement")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL", ""))
    parser.add_argument("--no-sqlite", action="store_true")
    parser.add_argument(
        "--conn-max-age",
        default=CONN_MAX_AGE,
        help="PostgreSQL CONN_MAX_AGE for the server, only with DB_POOL_MAX_SIZE=0 (default 60)",
    )
    parser.add_argument("--prepare", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.duration = args.duration or (3.0 if args.quick else 10.0)
    args.warmup = 0.5 if args.quick else 1.0
    return args


async def run(args: argparse.Namespace) -> list[Result]:
    databases: list[Database] = []
    if not args.no_sqlite:
        databases.append(sqlite_database())
    if args.database_url.startswith(("postgres://", "postgresql://")):
        databases.append(postgres_database(args.database_url))
    results: list[Result] = []
    try:
        for database in databases:
            table = prepare_database(database)
            for workers in database.workers:
                print(f"{database.label}, {workers} worker(s): measuring…", flush=True)
                server = Server(database, workers)
                try:
                    await server.ready()
                    results += await measure(server, table, database.label, workers, args)
                finally:
                    server.stop()
    finally:
        for database in databases:
            if database.cleanup:
                database.cleanup()
    return results


def main() -> None:
    global CONN_MAX_AGE
    args = parse_args()
    CONN_MAX_AGE = str(args.conn_max_age)
    if args.prepare:
        prepare()
        return
    results = asyncio.run(run(args))
    report(results)


if __name__ == "__main__":
    main()
