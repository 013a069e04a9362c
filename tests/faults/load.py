"""The fault tests' load: writers rolling on one campaign through the production topology (two
uvicorn workers behind one port), each roll sent with an Idempotency-Key and retried with that
key after a network error or a 503 until acknowledged, as the pages do. The roll's label is its
key, so the log tells which rolls are in it, and whether any is in it twice."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg

from config.websocket import UVICORN_WS
from tests.faults.services import WAIT, Postgres

ROOT = Path(__file__).resolve().parents[2]
GIVE_UP = 60  # seconds one roll keeps being retried before the client gives up on it


@dataclass
class Workers:
    """`uvicorn --workers 2` on one loopback socket: the compose web service, without Docker."""

    log: Path
    database_url: str
    redis_url: str
    settings: dict[str, str] = field(default_factory=dict)
    port: int = 0
    process: subprocess.Popen | None = None

    def start(self) -> Workers:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen(1024)
        listener.set_inheritable(True)
        self.port = listener.getsockname()[1]
        env = {
            **os.environ,
            "DATABASE_URL": self.database_url,
            "REDIS_URL": self.redis_url,
            "DEBUG": "0",
            "LOG_LEVEL": "WARNING",
            "LIVE_HEARTBEAT_SECONDS": "2",
            # A few users play for 32 writers here: the per-user write budget (#13) would answer
            # 429s that have nothing to do with the faults under test.
            "WRITE_RATE": "1000000/min",
            **self.settings,
        }
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [
                    *(sys.executable, "-m", "uvicorn", "config.asgi:application", *UVICORN_WS),
                    *("--fd", str(listener.fileno()), "--workers", "2", "--log-level", "warning"),
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
        self.stop()
        raise RuntimeError(f"workers did not start:\n{self.log.read_text()[-3000:]}")

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def worker_pids(self) -> list[int]:
        assert self.process is not None
        pid = self.process.pid
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        return [int(child) for child in children if "spawn_main" in _cmdline(child)]

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _cmdline(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text()
    except OSError:
        return ""


@dataclass
class Table:
    id: int
    character: str
    tokens: dict[str, str]

    def roll(self, label: str) -> dict[str, Any]:
        return {
            "character": self.character,
            "traits": ["Wits", "Occult"],
            "faces": [1, 2, 3, 4, 5],
            "label": label,
        }


def seed(postgres: Postgres, count: int = 1) -> list[Table]:
    out = subprocess.run(
        [sys.executable, "-m", "tests.faults.seed", "table", str(count)],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": postgres.url(), "REDIS_URL": ""},
        capture_output=True,
        text=True,
        check=True,
        timeout=WAIT,
    )
    data = json.loads(out.stdout.strip().splitlines()[-1])
    return [Table(t["id"], t["character"], data["tokens"]) for t in data["tables"]]


@dataclass
class Tally:
    sent: int = 0
    acknowledged: dict[str, int] = field(default_factory=dict)  # key -> seq
    answers: Counter = field(default_factory=Counter)
    fault_at: float | None = None
    back_at: float | None = None  # when the faulty service was back (if the fault restarts it)
    recovered_at: float | None = None  # the first acknowledgement after the fault

    @property
    def recovery(self) -> float | None:
        if self.fault_at is None or self.recovered_at is None:
            return None
        return self.recovered_at - self.fault_at

    @property
    def after_back(self) -> float | None:
        if self.back_at is None or self.recovered_at is None:
            return None
        return max(self.recovered_at - self.back_at, 0.0)


async def load(
    workers: Workers,
    table: Table,
    *,
    writers: int = 32,
    seconds: float = 8.0,
    fault: Callable[[Tally], Awaitable[None]] | None = None,
    fault_after: float = 2.5,
) -> Tally:
    """`writers` clients roll for `seconds`; `fault` strikes `fault_after` seconds in."""
    tally = Tally()
    url = f"{workers.http}/api/campaigns/{table.id}/checks/"
    headers = {"Authorization": f"Token {table.tokens['alice']}"}
    stop_at = time.monotonic() + seconds

    async def roll_until_acknowledged(http: httpx.AsyncClient, key: str) -> None:
        give_up = time.monotonic() + GIVE_UP
        while time.monotonic() < give_up:
            try:
                response = await http.post(
                    url, json=table.roll(key), headers={"Idempotency-Key": key}
                )
            except httpx.HTTPError:
                tally.answers["no answer"] += 1
                await asyncio.sleep(0.2)
                continue
            tally.answers[response.status_code] += 1
            if response.status_code == 201:
                tally.acknowledged[key] = response.json()["seq"]
                if tally.fault_at is not None and tally.recovered_at is None:
                    tally.recovered_at = time.monotonic()
                return
            if response.status_code != 503:
                return  # a final answer; the test asserts there are none
            await asyncio.sleep(0.2)

    async def writer(number: int) -> None:
        async with httpx.AsyncClient(headers=headers, timeout=10) as http:
            rolled = 0
            while time.monotonic() < stop_at:
                rolled += 1
                tally.sent += 1
                await roll_until_acknowledged(http, f"w{number}-{rolled}")

    async def strike() -> None:
        if fault is None:
            return
        await asyncio.sleep(fault_after)
        tally.fault_at = time.monotonic()
        await fault(tally)

    await asyncio.gather(strike(), *(writer(n) for n in range(writers)))
    return tally


@dataclass
class Outcome:
    """What the log holds after a load, beside what the clients were told."""

    label: str
    tally: Tally
    in_log: int
    lost: int
    duplicates: int
    chain_ok: bool

    def row(self) -> str:
        recovery = self.tally.recovery
        return (
            f"| {self.label} | {self.tally.sent} | {len(self.tally.acknowledged)} | "
            f"{self.in_log} | {self.lost} | {self.duplicates} | "
            f"{'verifies' if self.chain_ok else 'BROKEN'} | "
            f"{_recovery(recovery, self.tally.after_back)} |"
        )


def _recovery(total: float | None, after_back: float | None) -> str:
    if total is None:
        return "n/a"
    if after_back is None:
        return f"{total:.1f} s"
    return f"{total:.1f} s ({after_back:.1f} s after the restart)"


def outcome(postgres: Postgres, table: Table, tally: Tally, label: str) -> Outcome:
    with psycopg.connect(postgres.url(), autocommit=True) as db:
        rows = db.execute(
            "SELECT label, seq FROM rolls_check WHERE campaign_id = %s AND label LIKE 'w%%'",
            [table.id],
        ).fetchall()
    in_log: dict[str, list[int]] = {}
    for key, seq in rows:
        in_log.setdefault(key, []).append(seq)
    lost = sum(1 for key, seq in tally.acknowledged.items() if seq not in in_log.get(key, []))
    duplicates = sum(len(seqs) - 1 for seqs in in_log.values())
    verify = subprocess.run(
        [sys.executable, "manage.py", "verify_log", "--campaign", str(table.id)],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": postgres.url(), "REDIS_URL": ""},
        capture_output=True,
        text=True,
        timeout=WAIT * 2,
    )
    result = Outcome(label, tally, len(in_log), lost, duplicates, verify.returncode == 0)
    print(f"\n{result.row()}  answers: {dict(tally.answers)}")
    return result


def assert_exactly_once(result: Outcome) -> None:
    tally = result.tally
    assert tally.acknowledged, "the load never got through"
    assert result.lost == 0, "an acknowledged roll is missing from the log"
    assert result.duplicates == 0, "a retried roll was rolled twice"
    assert result.chain_ok, "the chain does not verify"
    assert set(tally.answers) <= {201, 503, "no answer"}, tally.answers
    # Every roll a client gave up on is at most in the log once; every other was acknowledged.
    assert len(tally.acknowledged) <= result.in_log <= tally.sent
