"""Benchmark: the serving stack — uvicorn for everything vs gunicorn (REST) + uvicorn (sockets).

    .venv/bin/python bench/serving.py [--quick] [--duration 5] [--repeat 3] [--clients 8]
                                      [--campaigns 8] [--workers 2] [--threads 8]
                                      [--database-url postgres://…] [--redis-url redis://…]

The production settings, as docker-compose runs them: PostgreSQL (a fresh database
`<name>_serving` beside the one --database-url names, dropped at the end), the Redis channel
layer, DEBUG off, psycopg's pool of DB_POOL_MAX_SIZE (10) per process, CONN_MAX_AGE 0. The one
departure: WRITE_RATE is raised so that the per-user write throttle (300/min) does not answer 429
to the bench's few users; the throttle still runs (its counters in Redis).

Two stacks over real HTTP on 127.0.0.1, the same number of web processes (--workers):
  (a) uvicorn --workers N serving config.asgi (HTTP and the socket);
  (b) gunicorn -c config/gunicorn.py (gthread, WEB_THREADS threads) serving config.wsgi, plus one
      uvicorn process for the sockets (config.asgi) — docker-compose's production topology,
      without the reverse proxy in front (its cost is not measured; a TLS proxy sits in front of
      either stack in production).
For each: one socket per campaign connected to the stack's socket server (so each check is
published through Redis and delivered), then in turn, after a warm-up:
- a bare Django view (POST /bench/bare/: the project's middleware, `HttpResponse("ok")`), closed
  loop, `clients` clients back to back — the stack's floor; then the same view as `async def`
  (/bench/async/: what async views would save under uvicorn; under WSGI Django runs it in an
  event loop of its own per request);
- POST /api/campaigns/<id>/checks/, closed loop, clients spread over `campaigns` campaigns (a
  player per campaign rolling Wits + Occult, token auth);
- the same, open loop at half of (a)'s closed-loop rate (latency from the scheduled send).
Measured: requests/s, p50/p99 latency, the server processes' CPU per request (user + system from
/proc before and after, once every broadcast of the phase has reached the sockets; every process of
the stack, socket server included; PostgreSQL's and Redis's own CPU not counted). The pair is
measured `repeat` times, alternating which stack goes first, since the machine is shared: printed
in one table, the medians, their ratio (b)/(a), each round's ratio, and the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from api import Result, cpu_seconds, free_port  # noqa: E402  (bench/ is on sys.path)
from scratch import fresh_database  # noqa: E402
from summary import record  # noqa: E402

POOL_SIZE = "10"  # DB_POOL_MAX_SIZE: config/settings.py's default, stated here to print it

# --- the served application (this module, imported by uvicorn or gunicorn as `serving`) -------

SERVE = os.environ.get("BENCH_SERVING_SERVE", "")
if __name__ != "__main__" and SERVE in ("asgi", "wsgi"):
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    if SERVE == "asgi":
        from config.asgi import application  # noqa: F401
    else:
        from config.wsgi import application as wsgi_application  # noqa: F401
    from django.conf import settings
    from django.http import HttpRequest, HttpResponse
    from django.urls import include, path
    from django.views.decorators.csrf import csrf_exempt

    @csrf_exempt
    def bare(request: HttpRequest) -> HttpResponse:
        return HttpResponse("ok")

    @csrf_exempt
    async def bare_async(request: HttpRequest) -> HttpResponse:
        return HttpResponse("ok")

    settings.ROOT_URLCONF = __name__  # the product's URLs plus /bench/bare/ and /bench/async/
    urlpatterns = [
        path("bench/bare/", bare),
        path("bench/async/", bare_async),
        path("", include("config.urls")),
    ]


# --- the database ---------------------------------------------------------------------------


def prepare(campaigns: int) -> None:
    """Migrate; print each campaign's id, its player's token and character (JSON, last line)."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from rest_framework.authtoken.models import Token

    from campaign import services

    call_command("migrate", verbosity=0)
    User = get_user_model()
    gm = User.objects.create_user("gm", password="bench-gm-password")
    tables = []
    for number in range(campaigns):
        player = User.objects.create_user(f"player{number}", password="bench-player-password")
        campaign = services.create_campaign(name=f"Table {number}", system="cofd", created_by=gm)
        services.join_campaign(invite_code=campaign.invite_code, user=player)
        services.start_session(campaign=campaign, actor=gm, title="Bench night")
        services.start_chapter(campaign=campaign, actor=gm, title="Chapter one")
        character = services.create_character(
            campaign=campaign,
            actor=player,
            name=f"Marianne {number}",
            traits={"attributes": {"Wits": 3}, "skills": {"Occult": 2}},
        )
        token = Token.objects.create(user=player).key
        tables.append({"campaign": campaign.pk, "character": str(character.pk), "token": token})
    print(json.dumps(tables))


def serving_database(url: str) -> tuple[str, Any]:
    """`<name>_serving` on the same loopback server, created empty; returns (url, drop)."""
    name = f"{urlsplit(url).path.lstrip('/') or 'tablecheck'}_serving"
    return fresh_database(url, name)


def production_env(database_url: str, redis_url: str, args: argparse.Namespace) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "CONN_MAX_AGE")}
    env.update(
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        DJANGO_SETTINGS_MODULE="config.settings",
        DEBUG="0",
        DB_POOL_MAX_SIZE=POOL_SIZE,
        WEB_WORKERS=str(args.workers),
        WEB_THREADS=str(args.threads),
        LOG_LEVEL="ERROR",
        WRITE_RATE="1000000/min",
        PYTHONWARNINGS="ignore:No directory at:UserWarning",  # no collectstatic in a checkout
    )
    return env


# --- the stacks -----------------------------------------------------------------------------


class Stack:
    """The server processes of one stack; `http` and `ws` are where requests and sockets go."""

    def __init__(self, name: str, env: dict[str, str], workers: int) -> None:
        self.name = name
        self.http, self.ws = free_port(), free_port()
        uvicorn = [sys.executable, "-m", "uvicorn", "serving:application", "--app-dir",
                   str(ROOT / "bench"), "--host", "127.0.0.1", "--no-access-log",
                   "--log-level", "warning"]  # fmt: skip
        self.processes: list[subprocess.Popen] = []
        if name == "uvicorn":
            self.ws = self.http
            command = [*uvicorn, "--port", str(self.http), "--workers", str(workers)]
            self._start(command, {**env, "BENCH_SERVING_SERVE": "asgi"})
        else:
            config = str(ROOT / "config" / "gunicorn.py")
            gunicorn = [sys.executable, "-m", "gunicorn", "-c", config,
                        "--bind", f"127.0.0.1:{self.http}", "--pythonpath", str(ROOT / "bench"),
                        "serving:wsgi_application"]  # fmt: skip
            self._start(gunicorn, {**env, "BENCH_SERVING_SERVE": "wsgi"})
            command = [*uvicorn, "--port", str(self.ws), "--workers", "1"]
            self._start(command, {**env, "BENCH_SERVING_SERVE": "asgi"})

    def _start(self, command: list[str], env: dict[str, str]) -> None:
        self.processes.append(subprocess.Popen(command, env=env, cwd=ROOT))

    def cpu(self) -> float:
        return sum(cpu_seconds(process.pid) for process in self.processes)

    async def ready(self, timeout: float = 60.0) -> None:
        import httpx

        deadline = time.monotonic() + timeout
        async with httpx.AsyncClient() as client:
            for port in {self.http, self.ws}:
                while True:
                    if any(process.poll() is not None for process in self.processes):
                        raise SystemExit(f"{self.name}: a server process exited")
                    with contextlib.suppress(httpx.TransportError):
                        answer = await client.get(f"http://127.0.0.1:{port}/health/")
                        if answer.status_code == 200:
                            break
                    if time.monotonic() > deadline:
                        raise SystemExit(f"{self.name} did not answer in time")
                    await asyncio.sleep(0.2)

    def stop(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)


@dataclass
class Sockets:
    """One socket per campaign, as its player; counts the events delivered."""

    events: int = 0
    from_log: int = 0  # of which sent as a gap read from the log (a live message came late)
    tasks: list[asyncio.Task] = field(default_factory=list)
    seqs: dict[str, set[int]] = field(default_factory=dict)  # per socket, to tell gaps from a tail

    async def open(self, port: int, tables: list[dict[str, Any]]) -> None:
        import websockets

        ready = []
        for table in tables:
            opened = asyncio.get_running_loop().create_future()
            url = f"ws://127.0.0.1:{port}/ws/campaigns/{table['campaign']}/"
            headers = {"Authorization": f"Token {table['token']}"}
            self.tasks.append(asyncio.create_task(self._read(websockets, url, headers, opened)))
            ready.append(opened)
        await asyncio.wait_for(asyncio.gather(*ready), 30)

    async def _read(self, websockets: Any, url: str, headers: dict, opened: asyncio.Future) -> None:
        async with websockets.connect(url, additional_headers=headers) as socket:
            async for text in socket:
                frame = json.loads(text)
                if frame["type"] == "caught_up" and not opened.done():
                    opened.set_result(None)
                elif frame["type"] in ("event", "events"):  # live, or a gap read from the log
                    events = [frame["event"]] if frame["type"] == "event" else frame["events"]
                    self.events += len(events)
                    self.from_log += len(events) if frame["type"] == "events" else 0
                    self.seqs.setdefault(url, set()).update(event["seq"] for event in events)

    async def delivered(self, expected: int, quiet: float = 5.0) -> float:
        """Wait until `expected` events have arrived, or none for `quiet` seconds (some were
        lost); the seconds from the call to the last event."""
        start = last = time.perf_counter()
        seen = self.events
        while self.events < expected and time.perf_counter() - last < quiet:
            await asyncio.sleep(0.05)
            if self.events != seen:
                seen, last = self.events, time.perf_counter()
        # At least the polling interval: "at once" is not measured finer than that.
        return max(0.05, (time.perf_counter() if self.events >= expected else last) - start)

    def ended(self) -> list[str]:
        """Sockets that ended before the bench closed them (the server closed them, say)."""
        return [
            repr(task.exception()) for task in self.tasks if task.done() and not task.cancelled()
        ]

    async def close(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


# --- load -----------------------------------------------------------------------------------


@dataclass
class Phase(Result):
    drain_seconds: float = 0.0  # after the last answer, until every broadcast had arrived


ENDPOINTS = {
    "bare": "/bench/bare/",
    "async bare": "/bench/async/",
    "checks": "/api/campaigns/{campaign}/checks/",
}


@dataclass
class Target:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def targets(tables: list[dict[str, Any]], clients: int, endpoint: str) -> list[Target]:
    chosen = []
    for number in range(clients):
        table = tables[number % len(tables)]
        path = ENDPOINTS[endpoint].format(campaign=table["campaign"])
        body = {
            "character": table["character"],
            "traits": ["Wits", "Occult"],
            "visibility": "public",
        }
        chosen.append(Target(path, {"Authorization": f"Token {table['token']}"}, body))
    return chosen


def _count(result: Phase, status: int, elapsed: float | None) -> None:
    result.completed += 1
    result.statuses[status] = result.statuses.get(status, 0) + 1
    if elapsed is None:
        return
    if 200 <= status < 300:
        result.latencies.append(elapsed)
    else:
        result.errors += 1


async def _post(client: Any, target: Target) -> int:
    try:
        answer = await client.post(target.path, json=target.body, headers=target.headers)
        return answer.status_code
    except Exception:  # a refused or dropped connection counts as an error
        return 599


async def closed_loop(client: Any, chosen: list[Target], result: Result, warmup: float) -> None:
    start = time.perf_counter()
    measure_from, stop_at = start + warmup, start + warmup + result.seconds

    async def one_client(target: Target) -> None:
        while (sent := time.perf_counter()) < stop_at:
            status = await _post(client, target)
            _count(result, status, time.perf_counter() - sent if sent >= measure_from else None)

    await asyncio.gather(*(one_client(target) for target in chosen))


async def open_loop(client: Any, chosen: list[Target], result: Result, rate: float) -> None:
    """Arrivals at a fixed rate, round robin over the targets; latency from the scheduled time."""
    start = time.perf_counter() + 0.05
    tasks = []

    async def one(target: Target, scheduled: float) -> None:
        _count(result, await _post(client, target), time.perf_counter() - scheduled)

    for index in range(int(rate * result.seconds)):
        scheduled = start + index / rate
        if (delay := scheduled - time.perf_counter()) > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(chosen[index % len(chosen)], scheduled)))
    await asyncio.wait(tasks, timeout=30)


async def measure(stack: Stack, tables: list, args: Any, open_rate: float) -> dict:
    import httpx

    sockets = Sockets()
    await sockets.open(stack.ws, tables)
    checks = 0
    results: dict[str, Result] = {}
    limits = httpx.Limits(max_connections=256, max_keepalive_connections=64)
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{stack.http}", limits=limits, timeout=30
    ) as client:
        for endpoint, mode in (
            ("bare", "closed"),
            ("async bare", "closed"),
            ("checks", "closed"),
            ("checks", "open"),
        ):
            result = Phase(endpoint, "postgresql", args.workers, mode, args.duration)
            chosen = targets(tables, args.clients, endpoint)
            before = stack.cpu()
            if mode == "closed":
                await closed_loop(client, chosen, result, args.warmup)
            else:  # at half of the first stack's closed-loop rate, for both stacks
                open_rate = open_rate or results["checks closed"].rate / 2
                await open_loop(client, chosen, result, open_rate)
            if (
                endpoint == "checks"
            ):  # the broadcasts lag the answers: their CPU belongs to the checks
                checks += sum(result.statuses.get(status, 0) for status in (200, 201))
                result.drain_seconds = await sockets.delivered(checks)
            result.cpu_seconds = stack.cpu() - before
            results[f"{endpoint} {mode}"] = result
    gaps = sum(max(seen) - min(seen) + 1 - len(seen) for seen in sockets.seqs.values())
    if ended := sockets.ended():
        print(f"{stack.name}: {len(ended)} socket(s) ended early: {ended}")
    await sockets.close()
    results["delivered"] = (sockets.events, checks, sockets.from_log, gaps)  # type: ignore
    return results


# --- report ---------------------------------------------------------------------------------


def figures(results: dict, args: argparse.Namespace, open_rate: float) -> dict[str, float]:
    """One stack's figures in one round, by label."""

    def ms(result: Result, q: float) -> float:
        return result.percentile(q) * 1000

    shown: dict[str, float] = {}
    for key, label in (
        ("bare closed", "bare view"),
        ("async bare closed", "the same, async def"),
        ("checks closed", "check"),
    ):
        result = results[key]
        shown[f"{label}: req/s, {args.clients} clients"] = result.rate
        shown[f"{label}: server CPU ms / request"] = result.cpu_ms
        shown[f"{label}: p50 ms"] = ms(result, 50)
        shown[f"{label}: p99 ms"] = ms(result, 99)
    shown["check: s until the broadcasts arrived"] = results["checks closed"].drain_seconds
    shown["check CPU / bare view CPU (same stack)"] = (
        results["checks closed"].cpu_ms / results["bare closed"].cpu_ms
    )
    result = results["checks open"]
    shown[f"check at {open_rate:.0f}/s (open loop): p50 ms"] = ms(result, 50)
    shown[f"check at {open_rate:.0f}/s (open loop): p99 ms"] = ms(result, 99)
    shown[f"check at {open_rate:.0f}/s (open loop): CPU ms / check"] = result.cpu_ms
    shown[f"check at {open_rate:.0f}/s: s until the broadcasts arrived"] = result.drain_seconds
    return shown


def report(rounds: list[tuple[dict, dict]], args: argparse.Namespace, open_rate: float) -> None:
    """Medians over the rounds, their ratio (b)/(a), and each round's ratio (the noise)."""
    per_round = [(figures(a, args, open_rate), figures(b, args, open_rate)) for a, b in rounds]
    header = (
        f"{'figure (median of the rounds)':<48}{'(a) uvicorn':>13}{'(b) gunicorn':>14}"
        f"{'(b)/(a)':>9}  each round's (b)/(a)"
    )
    print()
    print(header)
    print("-" * len(header))
    medians: dict[str, tuple[float, float]] = {}
    for label in per_round[0][0]:
        fa = statistics.median(fa[label] for fa, _ in per_round)
        fb = statistics.median(fb[label] for _, fb in per_round)
        medians[label] = (fa, fb)
        each = " ".join(
            f"{rb[label] / ra[label]:.2f}" if ra[label] else "—" for ra, rb in per_round
        )
        ratio = fb / fa if fa else float("nan")
        print(f"{label:<48}{fa:>13.2f}{fb:>14.2f}{ratio:>9.2f}  {each}")
    for name, index in (("(a)", 0), ("(b)", 1)):
        delivered = [stack[index]["delivered"] for stack in rounds]
        errors = [
            {k: r.statuses for k, r in stack[index].items() if k != "delivered" and r.errors}
            for stack in rounds
        ]
        print(
            f"{name}: events delivered to the sockets {sum(d[0] for d in delivered)} of "
            f"{sum(d[1] for d in delivered)} checks (until none came for 5 s), "
            f"{sum(d[2] for d in delivered)} of them read from the log to fill a gap; seqs "
            f"missing {sum(d[3] for d in delivered)}; errors {[e for e in errors if e] or 'none'}"
        )
    print(
        f"{len(rounds)} round(s), the stacks' order alternating. (a) uvicorn --workers "
        f"{args.workers} (HTTP and sockets); (b) gunicorn gthread {args.workers} workers x "
        f"{args.threads} threads (config/gunicorn.py) + uvicorn 1 worker (sockets). Production "
        f"settings: PostgreSQL, Redis channel layer, DEBUG off, pool DB_POOL_MAX_SIZE={POOL_SIZE} "
        "per process, CONN_MAX_AGE 0; WRITE_RATE raised."
    )
    print("CPU: every server process of the stack (PostgreSQL's and Redis's own not counted)")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    note = f"baseline: uvicorn serving everything, {args.workers} processes (medians)"
    rate = medians[f"check: req/s, {args.clients} clients"]
    cpu = medians["check: server CPU ms / request"]
    bare = medians["bare view: server CPU ms / request"]
    record("serving: checks/s, gunicorn REST + uvicorn sockets", rate[1], "checks/s", rate[0], note)
    record("serving: server CPU per check, gunicorn + uvicorn", cpu[1], "ms", cpu[0], note)
    record(
        "serving: bare view CPU per request, gunicorn",
        bare[1],
        "ms",
        bare[0],
        "baseline: the same view under uvicorn",
    )


# --- main -----------------------------------------------------------------------------------


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 s per measurement")
    parser.add_argument("--duration", type=float, default=None, help="seconds per measurement")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--campaigns", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=8, help="WEB_THREADS (default: 8)")
    parser.add_argument("--repeat", type=int, default=None, help="rounds (default 3; quick 1)")
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL", ""))
    parser.add_argument("--redis-url", default=os.environ.get("REDIS_URL", ""))
    parser.add_argument("--prepare", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.duration = args.duration or (3.0 if args.quick else 5.0)
    args.repeat = args.repeat or (1 if args.quick else 3)
    args.warmup = 0.5 if args.quick else 1.0
    return args


async def run(args: argparse.Namespace) -> None:
    database_url, drop = serving_database(args.database_url)
    try:
        env = production_env(database_url, args.redis_url, args)
        prepared = subprocess.run(
            [sys.executable, __file__, "--prepare", str(args.campaigns)],
            env=env, cwd=ROOT, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        if prepared.returncode:
            raise SystemExit(f"preparing the database failed:\n{prepared.stderr[-3000:]}")
        tables = json.loads(prepared.stdout.strip().splitlines()[-1])
        rounds: list[tuple[dict, dict]] = []
        open_rate = 0.0
        for number in range(args.repeat):
            measured: dict[str, dict] = {}
            order = ("uvicorn", "gunicorn") if number % 2 == 0 else ("gunicorn", "uvicorn")
            for name in order:
                print(f"round {number + 1}: {name}: measuring…", flush=True)
                stack = Stack(name, env, args.workers)
                try:
                    await stack.ready()
                    measured[name] = await measure(stack, tables, args, open_rate)
                finally:
                    stack.stop()
                open_rate = open_rate or measured[name]["checks closed"].rate / 2
            rounds.append((measured["uvicorn"], measured["gunicorn"]))
        report(rounds, args, open_rate)
    finally:
        drop()


def main() -> None:
    args = parse_args()
    if args.prepare:
        prepare(args.prepare)
        return
    if not args.database_url.startswith(("postgres://", "postgresql://")) or not (
        args.redis_url.startswith("redis://")
    ):
        print(
            "bench/serving.py measures the production settings: it needs DATABASE_URL=postgres://"
        )
        print("and REDIS_URL=redis:// (or --database-url / --redis-url); skipped.")
        return
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
