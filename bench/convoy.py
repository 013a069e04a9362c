"""Benchmark: reading a page-sized result on PostgreSQL beside a thread busy in Python, through a
psycopg cursor (`Recorder.fetch`, the hot path's small reads) and in one libpq call that holds no
GIL until the whole result is in (`Recorder.fetch_many`, `Recorder.page`: a catch-up's pages).

    .venv/bin/python bench/convoy.py --database-url postgres://…/db [--rounds 15]

The result is 1,000 rows of 1,500 bytes, a catch-up page's size; nothing is read from tables, so
any database will do (it is only connected to). Each way is timed alone (the baseline) and while
another thread runs Python without pause (as a catch-up page being presented does, or a request):
the cursor waits for its result in steps, each taking the GIL back, which the busy thread holds
for the interpreter's switch interval (5 ms) each time (#17). Medians of --rounds reads.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from summary import record  # noqa: E402

PAGE = "SELECT repeat('x', 1500), g FROM generate_series(1, %s) g"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", required=True, help="a PostgreSQL database")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    os.environ["DATABASE_URL"] = args.database_url
    os.environ.pop("REDIS_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.db import connection

    from eventlog.recorders import recorder

    if connection.vendor != "postgresql":
        sys.exit("bench/convoy.py measures PostgreSQL's driver: give a postgres:// URL")
    ways = {
        "a psycopg cursor (fetch)": lambda: recorder().fetch(PAGE, [1000]),
        "one libpq call (fetch_many)": lambda: recorder().fetch_many(PAGE, [1000]),
    }
    print(f"1,000 rows of 1,500 bytes on PostgreSQL, medians of {args.rounds} reads")
    for name, read in ways.items():
        assert len(read()) == 1000
        alone = _median(read, args.rounds)
        busy = _median(read, args.rounds, beside_a_busy_thread=True)
        print(
            f"  {name:<28} alone {alone * 1000:7.1f} ms;"
            f" beside a busy thread {busy * 1000:7.1f} ms ({busy / alone:.1f}x alone)"
        )
        record(
            f"a page-sized read beside a busy thread: {name}",
            busy * 1000,
            "ms",
            alone * 1000,
            "baseline: the same read alone",
        )


def _median(read, rounds: int, beside_a_busy_thread: bool = False) -> float:
    stop = threading.Event()

    def busy() -> None:
        spin = 0
        while not stop.is_set():
            for number in range(1000):
                spin += number * number

    thread = threading.Thread(target=busy, daemon=True)
    if beside_a_busy_thread:
        thread.start()
    try:
        times = []
        for _ in range(rounds):
            began = time.perf_counter()
            read()
            times.append(time.perf_counter() - began)
        return statistics.median(times)
    finally:
        stop.set()
        if beside_a_busy_thread:
            thread.join()


if __name__ == "__main__":
    main()
