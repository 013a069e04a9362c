"""Benchmark: one check (POST /api/campaigns/<id>/checks/) beside the floor, in the same run.

    .venv/bin/python bench/check_path.py [--quick] [--duration 8] [--writers 8]
                                         [--database-url postgres://…]

Two floors, as issue #17 defines them. The floor is what any check must cost at least: raw
psycopg on one connection, lock the campaign's head (SELECT … FOR UPDATE), INSERT an event with a
check's payload, UPDATE the head, COMMIT. The view floor is the same statements in a plain Django
view behind the project's whole middleware stack, requested the same way as a check: the issue's
"Django view + raw psycopg", the baseline the check's ratios (and `make bench`'s table) are
given against. A check is the project's whole request path, run in-process through the
production WSGI application as gunicorn calls it (`config.wsgi`: middleware, token
authentication, DRF, the service, the recorder, the answer, the pooled connection handed back
when the request ends, and the live broadcast rendered and sent after commit by the process's
publishing loop), with an Idempotency-Key and a client seed as the pages send them, server
dice, on the production settings (the connection pool of DB_POOL_MAX_SIZE, prepared
statements) — only the write throttle is lifted and the channel layer is in memory (REDIS_URL
unset). No HTTP server is in the loop: bench/api.py measures that. Both floors' views are
requested the same way.

Each side runs in its own processes (never this one), started together once every one has warmed
and counted after a ramp of RAMP seconds run the same way (the first requests after the start are
not the steady state: see RAMP), the three sides of each phase back to back (a figure and its
baselines seconds apart): first one writer alone, in ROUNDS rounds of half a phase each, the
sides taking turns, each figure the median of its rounds (CPU per check: the process's CPU time
over the checks it made), then one writer again for the statements per check (counted by Django
up to the COMMIT), then `--writers` writers at once on one campaign (checks/s, and the lock hold:
from the moment the lock statement returns to the end of COMMIT, p50 and p99), then the same
writers over 50 campaigns (checks/s), then paced at half that rate (latency p50 and p99: a server
that is not saturated), then bursts: every writer at the same moment on one campaign, four times
a second (latency p99). Printed: each figure beside both floors and the ratios, with the load
average (the machine is shared: read the ratios). PostgreSQL's own CPU per check is read from
/proc for the server processes each writer's statements ran in (the database is on this machine).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH_DB = "tablecheck_bench_check"
BURST_EVERY = 0.25  # seconds between the bursts of the burst phase
SPREAD = 50  # campaigns the spread phases write to (the "clients over 50 campaigns")
# Seconds each phase runs, as measured, before its figures are counted. The writers of a phase start
# together after seconds idle (the others were importing Django), and each one's first requests
# then cost 25-35 ms of CPU against about 5 once running (2026-12-03, 8 paced check writers; 20
# warm-up requests before the wait did not change it): with ~100 checks a writer in a phase, those
# first requests alone were the half-rate phase's p99 (100-250 ms against 30-40 after them).
RAMP = 1.0
ROUNDS = 5  # short rounds of the one-writer phase, the three sides taking turns


# --- inside a subprocess -------------------------------------------------------------------------


def _django() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from config.startup import settle

    settle()  # as the servers do once started (config/wsgi.py, config/asgi.py)


def prepare() -> None:
    """Migrate; a CofD campaign for the checks and one for the floor; print what workers need."""
    _django()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    from campaign import services
    from eventlog.models import Event

    call_command("migrate", verbosity=0)
    User = get_user_model()
    gm = User.objects.create_user("gm", password="bench-gm-password")
    player = User.objects.create_user("alice", password="bench-alice-password")
    tables = []
    names = ["Checks", "Floor"] + [
        f"{side} {n}" for side in ("Spread", "Floor") for n in range(SPREAD)
    ]
    for name in names:
        campaign = services.create_campaign(name=name, system="cofd", created_by=gm)
        services.join_campaign(invite_code=campaign.invite_code, user=player)
        services.start_session(campaign=campaign, actor=gm, title="Bench night")
        services.start_chapter(campaign=campaign, actor=gm, title="Chapter one")
        character = services.create_character(
            campaign=campaign,
            actor=player,
            name="Marianne",
            traits={"attributes": {"Wits": 3}, "skills": {"Occult": 2}},
        )
        tables.append((campaign, character))
    token = Token.objects.create(user=player).key
    (campaign, character), (floor, _) = tables[:2]
    spread = [[c.pk, str(ch.pk)] for c, ch in tables[2 : 2 + SPREAD]]
    floor_spread = [c.pk for c, _ in tables[2 + SPREAD :]]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    body = {"character": str(character.pk), "traits": ["Wits", "Occult"], "client_seed": "ab" * 16}
    answer = client.post(f"/api/campaigns/{campaign.pk}/checks/", body, format="json")
    assert answer.status_code == 201, answer.content
    payload = Event.objects.filter(campaign=campaign).order_by("-seq").first().payload
    print(
        json.dumps(
            {
                "campaign": campaign.pk,
                "floor": floor.pk,
                "spread": spread,
                "floor_spread": floor_spread,
                "body": body,
                "token": token,
                "payload": payload,
            }
        )
    )


def worker(
    mode: str,
    setup: dict,
    duration: float,
    count_statements: bool,
    interval: float = 0.0,
):
    """Run checks (or floor appends) until `duration` has passed, back to back or one every
    ``interval`` seconds; ``mode`` ends in "-spread" to rotate over the 50 campaigns, or in
    "-burst" for writers that start each interval together (a burst on one campaign).

    Warmed, it prints "ready" and waits for the phase's start time on stdin (`phase` sends it
    once every writer is ready); what it runs in the RAMP seconds after the start is not counted."""
    mode, _, variant = mode.partition("-")
    if variant == "spread":
        setup = {**setup, "rotate": True}
    holds: list[float] = []
    statements: list[int] = []
    latencies: list[float] = []
    backends: set[int] = set()  # the PostgreSQL server processes this worker's statements ran in
    if mode == "floor":
        run = _floor_runner(setup, holds, backends)
    elif mode == "viewfloor":
        run = _view_floor_runner(setup, holds, backends)
    else:
        run = _check_runner(setup, holds, statements, count_statements, backends)
    run()  # warm: imports, first-use reads, prepared statements
    holds.clear(), statements.clear()
    start_at = wait_for_start()
    while time.time() < start_at:
        time.sleep(0.001)
    # Paced writers start at random points of their interval: in step, they would arrive as
    # bursts of all writers at once, which is not what "half the rate" means. Bursts are that:
    # every writer fires at the same wall-clock moments (shared by the processes).
    next_at = start_at + (random.uniform(0, interval) if variant != "burst" else 0.0)

    def step() -> None:
        nonlocal next_at
        if interval:
            if (delay := next_at - time.time()) > 0:
                time.sleep(delay)
            next_at += interval
        t0 = time.perf_counter()
        run()
        latencies.append(time.perf_counter() - t0)

    while time.time() < start_at + RAMP:  # run as measured, then forget it
        step()
    holds.clear()
    statements.clear()
    latencies.clear()
    pg0 = {pid: _cpu_of(pid) for pid in backends}
    cpu0, began, done = time.process_time(), time.perf_counter(), 0
    while time.perf_counter() - began < duration:
        step()
        done += 1
    print(
        json.dumps(
            {
                "done": done,
                "cpu": time.process_time() - cpu0,
                "pg_cpu": sum(_cpu_of(pid) - pg0.get(pid, 0.0) for pid in backends),
                "wall": time.perf_counter() - began,
                "holds": holds,
                "latencies": latencies,
                "statements": statements,
            }
        )
    )


def wait_for_start() -> float:
    """A worker's side of `start_together`: say it is ready, and return the start time sent."""
    print("ready", flush=True)
    return float(sys.stdin.readline())


def spawn(args: list[str], **popen: object) -> subprocess.Popen:
    """A phase's worker, its stdin and stdout pipes for `start_together` and its result, its
    stderr a file of its own (`reap` reads it): a pipe nobody reads until the worker ends would
    hold 64 KiB, and a worker that warned more than that would block in the middle of the
    measure."""
    errors = tempfile.TemporaryFile("w+")  # noqa: SIM115 (as long as the worker: reap)
    process = subprocess.Popen(
        args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors, text=True, **popen
    )
    process.errors = errors  # type: ignore[attr-defined]
    return process


def reap(process: subprocess.Popen, grace: float = 0.0) -> str:
    """End a `spawn`ed worker and return what it wrote to stderr: its stdin is closed (a worker
    waiting for its start gets none), it is given ``grace`` seconds, then killed if it still
    runs; its pipes and its stderr's file are closed. Again on a reaped worker: ""."""
    if process.errors.closed:
        return ""
    process.stdin.close()
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=60)
    process.stdout.close()
    process.errors.seek(0)
    text = process.errors.read()
    process.errors.close()
    return text


def start_together(processes: list[subprocess.Popen], label: str) -> None:
    """Send every worker one start time, just ahead, once each has said it is ready (imported
    Django, warmed). With a start fixed in advance (4 s, before), 8 check writers on this
    machine were ready 2-4 s after it: the first measured beside others still importing, and
    paced and burst writers began behind their schedule and fired back to back to catch up,
    which inflated both latency p99s (half-rate 63 ms against 26-38 once started together)."""
    for process in processes:
        if process.stdout.readline().strip() != "ready":
            for other in processes:  # the others would wait for a start forever
                if other is not process:
                    reap(other)
            # It may have printed something else and gone on to wait for its start.
            err = reap(process, grace=10)
            raise SystemExit(f"{label} worker failed before it was ready:\n{err[-3000:]}")
    start_at = f"{time.time() + 0.2}\n"
    for process in processes:
        process.stdin.write(start_at)
        process.stdin.flush()


def _cpu_of(pid: int) -> float:
    """CPU seconds a process has used (user + system), read from /proc (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def side(mode: str, setup: dict) -> Callable[[], None]:
    """One request of the check (``mode`` "check") or of the view floor ("viewfloor"), recording
    nothing: for the benches that measure a side in a process of their own (instructions.py,
    bytecodes.py, idle.py)."""
    if mode == "check":
        return _check_runner(setup, [], [], False, set())
    return _view_floor_runner(setup, [], set())


def side_script(main: Callable[[], int], worker: Callable[[str, int, dict], None]) -> None:
    """The `__main__` of such a bench: ``--worker MODE REQUESTS SETUP_JSON`` (how it starts
    its side's process) runs ``worker``, anything else ``main``."""
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4]))
    else:
        sys.exit(main())


def _check_runner(
    setup: dict, holds: list, statements: list, count_statements: bool, backends: set
):
    _django()
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    post = _wsgi_post({"HTTP_AUTHORIZATION": f"Token {setup['token']}"})
    tables = setup["spread"] if setup.get("rotate") else [[setup["campaign"], None]]
    targets = itertools.cycle(
        [
            (
                f"/api/campaigns/{campaign}/checks/",
                json.dumps({**setup["body"], **({"character": who} if who else {})}).encode(),
            )
            for campaign, who in random.sample(tables, len(tables))
        ]
    )
    key = iter(range(10**9))
    prefix = f"bench-{os.getpid()}-"

    from eventlog.recorders.postgres import PostgresRecorder
    from rolls.checks import services

    lock_table, fetch = services.lock_table, PostgresRecorder.fetch
    granted: list[float] = []

    def timed_fetch(self, sql: str, params) -> list[tuple]:
        rows = fetch(self, sql, params)
        if not granted and "FOR UPDATE" in sql:
            granted.append(time.perf_counter())
        return rows

    def timed_lock_table(*args, **kwargs):
        """The service's locking statement (a prepared statement on the raw connection, which
        Django's execute wrappers do not see), timed from its first return to COMMIT: a writer
        that waited reads the table again under the lock, and that is held time too."""
        granted.clear()
        locked_table = lock_table(*args, **kwargs)
        backends.add(connection.connection.info.backend_pid)
        locked = granted[0] if granted else time.perf_counter()
        transaction.on_commit(lambda: holds.append(time.perf_counter() - locked))
        return locked_table

    services.lock_table = timed_lock_table
    PostgresRecorder.fetch = timed_fetch

    def one() -> None:
        if count_statements:
            with CaptureQueriesContext(connection) as captured:
                answer = _post()
            sqls = [query["sql"].upper() for query in captured.captured_queries]
            # Up to the COMMIT: the broadcast's read after it is not the check's transaction.
            statements.append(next(i for i, sql in enumerate(sqls) if sql == "COMMIT") + 1)
        else:
            answer = _post()
        status, content = answer
        if status != 201:
            raise SystemExit(f"check answered {status}: {content[:300]!r}")

    def _post() -> tuple[int, bytes]:
        url, body = next(targets)
        return post(url, body, {"HTTP_IDEMPOTENCY_KEY": f"{prefix}{next(key)}"})

    return one


def _wsgi_post(headers: dict[str, str]) -> Callable[[str, bytes, dict[str, str]], tuple]:
    """POST a JSON body to the production WSGI application (`config.wsgi`: its live feed's
    publishing loop, its settled heap) as gunicorn calls it: one environ, start_response, the
    body joined and closed. Closing ends the request (Django's request_finished), which hands
    the pooled connection back, as it does after every request served. (`django.test.Client`
    keeps the connection across requests instead, and its per-request signal connections left
    three `weakref.finalize` objects behind per request, which the cyclic collector walked.)"""
    import io

    from config.wsgi import application

    def post(path: str, body: bytes, extra: dict[str, str]) -> tuple[int, bytes]:
        environ = {
            "REQUEST_METHOD": "POST",
            "PATH_INFO": path,
            "QUERY_STRING": "",
            "SERVER_NAME": "testserver",
            "SERVER_PORT": "80",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": "127.0.0.1",
            "HTTP_HOST": "testserver",
            "CONTENT_TYPE": "application/json",
            "CONTENT_LENGTH": str(len(body)),
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(body),
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": True,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
            **headers,
            **extra,
        }
        started: list[str] = []
        result = application(environ, lambda status, _headers, _exc=None: started.append(status))
        try:
            content = b"".join(result)
        finally:
            result.close()
        return int(started[0].split(" ", 1)[0]), content

    return post


def _floor_runner(setup: dict, holds: list, backends: set):
    import psycopg

    connection = psycopg.connect(os.environ["DATABASE_URL"])
    backends.add(connection.info.backend_pid)
    floors = setup["floor_spread"] if setup.get("rotate") else [setup["floor"]]
    campaigns = itertools.cycle(random.sample(floors, len(floors)))
    floor = _floor_statements(setup)

    def one() -> None:
        locked = floor(connection, next(campaigns))
        connection.commit()
        holds.append(time.perf_counter() - locked)

    return one


def _view_floor_runner(setup: dict, holds: list, backends: set):
    """The issue's floor: the same raw psycopg statements, in a plain Django view behind the
    project's whole middleware stack, requested through the same handler as a check (a POST
    with a JSON body, answered 201 with a small JSON document)."""
    import types

    _django()
    from django.conf import settings
    from django.db import connection
    from django.http import HttpResponse
    from django.urls import clear_url_caches, path
    from django.views.decorators.csrf import csrf_exempt

    floors = setup["floor_spread"] if setup.get("rotate") else [setup["floor"]]
    campaigns = itertools.cycle(random.sample(floors, len(floors)))
    floor = _floor_statements(setup)

    @csrf_exempt
    def view(request, campaign_id: int):
        json.loads(request.body)
        connection.ensure_connection()
        raw = connection.connection
        backends.add(raw.info.backend_pid)
        with raw.transaction():
            locked = floor(raw, campaign_id)
        holds.append(time.perf_counter() - locked)
        return HttpResponse(b'{"seq": 1}', content_type="application/json", status=201)

    urls = types.ModuleType("check_path_floor_urls")
    urls.urlpatterns = [path("floor/<int:campaign_id>/", view)]
    sys.modules[urls.__name__] = urls
    settings.ROOT_URLCONF = urls.__name__
    clear_url_caches()
    post = _wsgi_post({})
    body = json.dumps(setup["body"]).encode()

    def one() -> None:
        status, _ = post(f"/floor/{next(campaigns)}/", body, {})
        if status != 201:
            raise SystemExit(f"floor view answered {status}")

    return one


def _floor_statements(setup: dict):
    """Lock the head, INSERT the event, UPDATE the head, on a psycopg connection in a
    transaction (the caller commits); returns when the lock was taken."""
    import hashlib

    payload = json.dumps(setup["payload"], sort_keys=True, separators=(",", ":"))

    def run(raw, campaign: int) -> None:
        with raw.cursor() as cursor:
            cursor.execute(
                "SELECT head_seq, head_hash FROM campaign_campaign WHERE id = %s FOR UPDATE",
                (campaign,),
                prepare=True,
            )
            locked = time.perf_counter()
            seq, previous = cursor.fetchone()
            digest = hashlib.sha256(f"{previous}{seq + 1}{payload}".encode()).hexdigest()
            # The payload as its text: the jsonb is generated from it (eventlog.0007).
            cursor.execute(
                "INSERT INTO campaign_event (campaign_id, seq, type, payload_text, actor_id, "
                "created_at, visibility, prev_hash, hash) "
                "VALUES (%s, %s, 'check.rolled', %s, NULL, now(), 'public', %s, %s)",
                (campaign, seq + 1, payload, previous, digest),
                prepare=True,
            )
            cursor.execute(
                "UPDATE campaign_campaign SET head_seq = %s, head_hash = %s WHERE id = %s",
                (seq + 1, digest, campaign),
                prepare=True,
            )
        return locked

    return run


# --- the driver (this process touches no database but to create and drop the bench's own) ------


def _env(url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DEBUG")}
    env.update(
        DATABASE_URL=url,
        DJANGO_SETTINGS_MODULE="config.settings",
        LOG_LEVEL="ERROR",
        ALLOWED_HOSTS="testserver",
        WRITE_RATE="100000000/min",  # the only production setting lifted: the write throttle
        WEBHOOKS_IN_PROCESS="0",
    )
    return env


def _run(env: dict, *args: str, timeout: float = 600) -> dict:
    done = subprocess.run(
        [sys.executable, __file__, *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args[:2])} failed:\n{done.stderr[-3000:]}{done.stdout[-500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def phase(
    env, setup, mode: str, writers: int, duration: float, statements: bool, interval: float = 0.0
) -> dict:
    processes = [
        spawn(
            [
                sys.executable,
                __file__,
                "--worker",
                mode,
                json.dumps(setup),
                str(duration),
                "1" if statements else "0",
                str(interval),
            ],
            env=env,
            cwd=ROOT,
        )
        for _ in range(writers)
    ]
    start_together(processes, mode)
    results = []
    for process in processes:
        out, _ = process.communicate(timeout=duration + 120)
        err = reap(process)
        if process.returncode != 0:
            for other in processes:
                reap(other)
            raise SystemExit(f"{mode} worker failed:\n{err[-3000:]}")
        results.append(json.loads(out.strip().splitlines()[-1]))
    done = sum(r["done"] for r in results)
    wall = max(r["wall"] for r in results)
    holds = sorted(h for r in results for h in r["holds"])
    latencies = sorted(x for r in results for x in r["latencies"])
    counted = [s for r in results for s in r["statements"]]
    return {
        "per_s": done / wall,
        "cpu_ms": 1000 * sum(r["cpu"] for r in results) / max(done, 1),
        "pg_cpu_ms": 1000 * sum(r["pg_cpu"] for r in results) / max(done, 1),
        "hold_p50": 1000 * statistics.median(holds) if holds else float("nan"),
        "hold_p99": 1000 * holds[int(0.99 * (len(holds) - 1))] if holds else float("nan"),
        "p99": 1000 * latencies[int(0.99 * (len(latencies) - 1))] if latencies else float("nan"),
        "p50": 1000 * statistics.median(latencies) if latencies else float("nan"),
        "statements": statistics.median(counted) if counted else None,
    }


def _medians(rounds: list[dict]) -> dict:
    """A side's rounds as one: the median of each figure."""
    return {
        key: statistics.median(r[key] for r in rounds)
        if all(isinstance(r[key], float | int) for r in rounds)
        else rounds[0][key]
        for key in rounds[0]
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--duration", type=float, default=8.0)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL", ""))
    args = parser.parse_args()
    if not args.database_url.startswith("postgres"):
        print("check_path: needs --database-url postgres://… (the floor is PostgreSQL's); skipped")
        return 0
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from scratch import scratch_database
    from summary import record

    duration = 3.0 if args.quick else args.duration
    with scratch_database(args.database_url, BENCH_DB) as url:
        env = _env(url)
        setup = _run(env, "--prepare")
        modes = ("floor", "viewfloor", "check")
        runs: dict[str, list[dict]] = {mode: [] for mode in modes}

        def each_mode(step) -> None:
            # Each phase for the three sides back to back, so that a figure and its baselines
            # are taken seconds apart, not minutes: this machine's speed drifts by a third
            # from one minute to the next.
            for mode in modes:
                runs[mode].append(step(mode))

        # The one-writer figures (CPU per check) in ROUNDS short rounds, the sides taking
        # turns, each figure the median of its rounds: one long phase a side put the whole
        # drift of a minute between a check and its baseline (the ratio moved from 2.6 to 3.6
        # between runs of the same code, 2026-12-06).
        rounds: dict[str, list[dict]] = {mode: [] for mode in modes}
        for _ in range(ROUNDS):
            for mode in modes:
                rounds[mode].append(phase(env, setup, mode, 1, duration / 2, statements=False))
        for mode in modes:
            runs[mode].append(_medians(rounds[mode]))
        each_mode(
            lambda mode: phase(env, setup, mode, 1, min(duration, 2.0), statements=mode == "check")
        )
        each_mode(lambda mode: phase(env, setup, mode, args.writers, duration, statements=False))
        each_mode(
            lambda mode: phase(
                env, setup, f"{mode}-spread", args.writers, duration, statements=False
            )
        )
        # Half that rate, paced: the latency a table feels when the server is not saturated.
        each_mode(
            lambda mode: phase(
                env,
                setup,
                f"{mode}-spread",
                args.writers,
                duration,
                False,
                2 * args.writers / runs[mode][3]["per_s"],
            )
        )
        # All writers at once on one campaign, every BURST_EVERY seconds.
        each_mode(
            lambda mode: phase(
                env, setup, f"{mode}-burst", args.writers, duration, False, BURST_EVERY
            )
        )
        figures = {mode: tuple(runs[mode]) for mode in modes}

    load = os.getloadavg()
    total_ratios = sorted(
        (c["cpu_ms"] + c["pg_cpu_ms"]) / (v["cpu_ms"] + v["pg_cpu_ms"])
        for c, v in zip(rounds["check"], rounds["viewfloor"], strict=True)
    )

    def row(label: str, unit: str, pick) -> tuple:
        return (label, unit, *(pick(*figures[mode]) for mode in ("check", "viewfloor", "floor")))

    w = args.writers
    rows = [
        row("CPU per check, one writer (client process)", "ms", lambda a, *_: a["cpu_ms"]),
        row("PostgreSQL's CPU per check, one writer", "ms", lambda a, *_: a["pg_cpu_ms"]),
        row(
            "total CPU per check (client + PostgreSQL)",
            "ms",
            lambda a, *_: a["cpu_ms"] + a["pg_cpu_ms"],
        ),
        row("checks/s, one writer", "/s", lambda a, *_: a["per_s"]),
        row(f"checks/s, {w} writers on one campaign", "/s", lambda a, c, w_, *_: w_["per_s"]),
        row(f"lock hold p50, {w} writers", "ms", lambda a, c, w_, *_: w_["hold_p50"]),
        row(f"lock hold p99, {w} writers", "ms", lambda a, c, w_, *_: w_["hold_p99"]),
        row(f"latency p99, {w} writers on one campaign", "ms", lambda a, c, w_, *_: w_["p99"]),
        row("lock hold p50, one writer", "ms", lambda a, *_: a["hold_p50"]),
        row(f"checks/s, {w} writers over {SPREAD} campaigns", "/s", lambda *f: f[3]["per_s"]),
        row(f"latency p99, {SPREAD} campaigns at half that rate", "ms", lambda *f: f[4]["p99"]),
        row(f"latency p50, {SPREAD} campaigns at half that rate", "ms", lambda *f: f[4]["p50"]),
        row(f"latency p99, bursts of {w} at once, one campaign", "ms", lambda *f: f[5]["p99"]),
    ]
    statements = figures["check"][1]["statements"]
    print(f"\ncheck path on PostgreSQL; load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    print(
        f"  one writer: medians of {ROUNDS} rounds, the sides taking turns; total CPU per check"
        f" over the view floor's, round by round: {', '.join(f'{r:.2f}' for r in total_ratios)}"
    )
    print("  view floor: the floor's statements in a plain Django view behind the middleware")
    print(f"  {'figure':<48}{'check':>9}{'view fl.':>9}{'ratio':>7}{'floor':>9}{'ratio':>7}")
    for label, unit, check, view_floor, floor in rows:
        print(
            f"  {label:<48}{check:>9.2f}{view_floor:>9.2f}{check / view_floor:>7.2f}"
            f"{floor:>9.2f}{check / floor:>7.2f}  {unit}"
        )
        record(
            f"check path: {label}",
            check,
            unit,
            view_floor,
            "baseline: the floor's statements in a plain Django view",
        )
    print(f"  {'SQL statements per check, up to its COMMIT':<48}{statements:>9.0f}{5:>9}")
    record("check path: SQL statements per check", statements, "statements", 5, "the floor's")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--prepare":
        prepare()
    elif len(sys.argv) > 1 and sys.argv[1] == "--worker":
        mode, setup, duration, statements, interval = sys.argv[2:7]
        worker(mode, json.loads(setup), float(duration), statements == "1", float(interval))
    else:
        sys.exit(main())
