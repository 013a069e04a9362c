"""The fault tests' kit: a private PostgreSQL cluster for the session (migrated once), a private
Redis and two uvicorn workers per test. They never use the host's shared services."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.faults.load import ROOT, Workers
from tests.faults.services import WAIT, Postgres, Redis

RESULTS: list[str] = []  # one table row per fault, printed at the end of the session
logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per request would drown the tally


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    cluster = Postgres(directory=Path(tempfile.mkdtemp(prefix="tc-faults-pg-"))).create()
    try:
        subprocess.run(
            [sys.executable, "-m", "tests.faults.seed", "migrate"],
            cwd=ROOT,
            env={**os.environ, "DATABASE_URL": cluster.url(), "REDIS_URL": ""},
            check=True,
            timeout=WAIT * 3,
        )
        yield cluster
    finally:
        cluster.destroy()


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[Redis]:
    server = Redis(directory=tmp_path).start()
    yield server
    server.stop()


@pytest.fixture
def start_workers(postgres: Postgres, redis: Redis, tmp_path: Path):
    started: list[Workers] = []

    def start(**settings: str) -> Workers:
        workers = Workers(
            log=tmp_path / f"workers{len(started)}.log",
            database_url=postgres.url(),
            redis_url=redis.url,
            settings=settings,
        )
        started.append(workers.start())
        return workers

    yield start
    for workers in started:
        workers.stop()


def pytest_terminal_summary(terminalreporter) -> None:
    if RESULTS:
        terminalreporter.write_line("")
        terminalreporter.write_line(
            "| fault | sent | acknowledged | in the log | lost | duplicates | chain | recovery |"
        )
        terminalreporter.write_line("|---|---|---|---|---|---|---|---|")
        for row in RESULTS:
            terminalreporter.write_line(row)
