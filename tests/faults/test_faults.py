"""Faults under load, on the production topology: two uvicorn worker processes behind one port,
PostgreSQL and Redis. Rolls keep coming from several clients while a GM's socket listens; then a
worker is killed with SIGKILL, or Redis restarts, or PostgreSQL restarts. Every roll the server
acknowledged must be in the log, the chain must verify, and the socket must catch up on all of it.

These run as their own pytest invocation (`make test-faults`, CI's last step): the PostgreSQL
restart would disturb any test running beside it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from django.db import connection

from rolls.models import Check
from rolls.trust.stored_log import verify_campaigns
from tests.live.conftest import ROOT, WAIT, _free_socket, database_url, head_of, in_db

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.faults,
]
LOAD_SECONDS = 8
CLIENTS = 4


@dataclass
class Workers:
    """`uvicorn --workers 2` on one loopback port: the compose web service, without Docker."""

    log: Path
    redis_url: str
    port: int = 0
    process: subprocess.Popen | None = None

    def start(self) -> Workers:
        listener = _free_socket()
        self.port = listener.getsockname()[1]
        env = {
            **os.environ,
            "DATABASE_URL": database_url(),
            "REDIS_URL": self.redis_url,
            "DEBUG": "0",
            "LOG_LEVEL": "WARNING",
            "LIVE_HEARTBEAT_SECONDS": "2",
        }
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "uvicorn",
                    "config.asgi:application",
                    "--fd",
                    str(listener.fileno()),
                    "--workers",
                    "2",
                    "--log-level",
                    "warning",
                ],
                cwd=ROOT,
                env=env,
                pass_fds=[listener.fileno()],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        listener.close()
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.http}/health/", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"workers did not start:\n{self.log.read_text()}")

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def worker_pids(self) -> list[int]:
        assert self.process is not None
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        return [
            int(pid)
            for pid in children.read_text().split()
            if "spawn_main" in Path(f"/proc/{pid}/cmdline").read_text()
        ]

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@dataclass
class Tally:
    sent: int = 0
    acknowledged: list[int] = field(default_factory=list)
    statuses: Counter = field(default_factory=Counter)

    def report(self, label: str, in_log: int) -> str:
        return (
            f"{label}: sent {self.sent}, acknowledged {len(self.acknowledged)}, "
            f"in the log {in_log}, answers {dict(self.statuses)}"
        )


async def load(workers: Workers, table, fault: Callable[[], Awaitable[None]]) -> Tally:
    """CLIENTS clients post checks for LOAD_SECONDS; `fault` strikes a third of the way in."""
    tally = Tally()
    url = f"{workers.http}/api/campaigns/{table.id}/checks/"
    headers = {"Authorization": f"Token {table.tokens['alice']}"}
    request = table.roll("alice")
    stop_at = time.monotonic() + LOAD_SECONDS

    async def client() -> None:
        async with httpx.AsyncClient(headers=headers, timeout=10) as http:
            while time.monotonic() < stop_at:
                tally.sent += 1
                try:
                    response = await http.post(url, json=request)
                except httpx.HTTPError:
                    tally.statuses["no answer"] += 1
                    await asyncio.sleep(0.05)
                    continue
                tally.statuses[response.status_code] += 1
                if response.status_code == 201:
                    tally.acknowledged.append(response.json()["seq"])
                else:
                    await asyncio.sleep(0.05)

    async def strike() -> None:
        await asyncio.sleep(LOAD_SECONDS / 3)
        await fault()

    await asyncio.gather(strike(), *(client() for _ in range(CLIENTS)))
    return tally


def logged_seqs(campaign_id: int) -> set[int]:
    return set(Check.objects.filter(campaign_id=campaign_id).values_list("seq", flat=True))


async def assert_nothing_lost(table, tally: Tally, feeds, workers: Workers, start: int, label):
    logged = await in_db(logged_seqs, table.id)
    print(tally.report(label, len(logged)))
    assert tally.acknowledged, "the load never got through"
    assert set(tally.acknowledged) <= logged, "an acknowledged roll is missing from the log"
    assert len(set(tally.acknowledged)) == len(tally.acknowledged)
    assert 500 not in tally.statuses
    report = await in_db(verify_campaigns, campaign_ids=[table.id])
    assert not report.problems, report.problems[:3]
    # A client that lost its socket reconnects with the last seq it saw and catches up on all.
    head = await in_db(head_of, table.id)
    gm = await feeds.open(
        f"ws://127.0.0.1:{workers.port}/ws/campaigns/{table.id}/?after={start}", table.tokens["gm"]
    )
    await gm.through(head)
    assert gm.seqs == list(range(start + 1, head + 1))


@pytest.fixture
def workers(private_redis, tmp_path: Path):
    started = Workers(log=tmp_path / "workers.log", redis_url=private_redis.url).start()
    yield started
    started.stop()


async def test_kill_9_of_a_worker_mid_load_loses_no_acknowledged_roll(workers, table, feeds):
    start = await in_db(head_of, table.id)
    listener = await feeds.open(
        f"ws://127.0.0.1:{workers.port}/ws/campaigns/{table.id}/?after={start}", table.tokens["gm"]
    )
    killed: list[int] = []

    async def kill_a_worker() -> None:
        pid = workers.worker_pids()[0]
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    tally = await load(workers, table, kill_a_worker)
    assert killed and killed[0] not in workers.worker_pids()
    await assert_nothing_lost(table, tally, feeds, workers, start, "kill -9 of a worker")
    del listener


async def test_a_redis_restart_mid_load_loses_nothing(workers, private_redis, table, feeds):
    start = await in_db(head_of, table.id)

    async def restart_redis() -> None:
        private_redis.stop()
        await asyncio.sleep(1)
        private_redis.start()

    tally = await load(workers, table, restart_redis)
    await assert_nothing_lost(table, tally, feeds, workers, start, "Redis restart")


def _pg_cluster(action: str) -> None:
    version = sorted(os.listdir("/etc/postgresql"))[0]
    subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", action, "-m", "fast"]
        if action == "stop"
        else ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", action],
        check=True,
        capture_output=True,
        timeout=60,
    )


def test_a_postgres_restart_answers_503_then_recovers(workers, table):
    start = head_of(table.id)
    outage: Counter = Counter()

    async def restart_postgres() -> None:
        await asyncio.to_thread(_pg_cluster, "stop")
        try:
            async with httpx.AsyncClient(timeout=10) as http:
                for _ in range(3):
                    health = await http.get(f"{workers.http}/health/")
                    outage[f"health {health.status_code}"] += 1
                    await asyncio.sleep(0.3)
        finally:
            await asyncio.to_thread(_pg_cluster, "start")

    tally = asyncio.run(load(workers, table, restart_postgres))
    connection.close()  # this test's own connection died with the server; reconnect
    logged = logged_seqs(table.id)
    print(tally.report("PostgreSQL restart", len(logged)), f"; while down: {dict(outage)}")
    assert outage == {"health 503": 3}
    assert tally.statuses[503] > 0, "requests during the outage must fail cleanly with 503"
    assert set(tally.statuses) <= {201, 503}, tally.statuses
    # Recovery: once PostgreSQL is back, checks go through again (the load may have ended before
    # the restart finished on a busy machine, so probe until WAIT runs out).
    recovered = None
    deadline = time.monotonic() + WAIT
    headers = {"Authorization": f"Token {table.tokens['alice']}"}
    while time.monotonic() < deadline and recovered is None:
        response = httpx.post(
            f"{workers.http}/api/campaigns/{table.id}/checks/",
            json=table.roll("alice"),
            headers=headers,
            timeout=10,
        )
        if response.status_code == 201:
            recovered = response.json()["seq"]
            tally.acknowledged.append(recovered)
        else:
            assert response.status_code == 503, response.text
            time.sleep(0.5)
    assert recovered is not None, "no recovery after PostgreSQL came back"
    logged = logged_seqs(table.id)
    assert set(tally.acknowledged) <= logged
    assert not verify_campaigns(campaign_ids=[table.id]).problems
    assert head_of(table.id) >= start + len(tally.acknowledged)
