"""Benchmark: what a check costs after the process has sat idle, as at a table (seconds between
rolls), beside the check right after it (the in-run baseline: the same process, warm).

    .venv/bin/python bench/idle.py --database-url postgres://… [--rounds 8]

One writer process, prepared and requested as bench/check_path.py's (the production WSGI
application in process, its settings, PostgreSQL): after each idle time it makes two checks and
times both (CPU of the process, wall time). Printed: medians over the rounds, and the ratio of
the first check to the second. A small pure-Python loop, timed the same way, says how much of it
is the machine's own waking up rather than the request's larger working set.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import check_path
from scratch import scratch_database

ROOT = Path(__file__).resolve().parent.parent
BENCH_DB = "tablecheck_bench_idle"
IDLE_SECONDS = (0.0, 0.2, 1.0, 3.0)


def _timed(run) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    run()
    return 1000 * (time.process_time() - cpu), 1000 * (time.perf_counter() - wall)


def _small_loop() -> None:
    data = {f"k{n}": [n, str(n), {"x": n}] for n in range(200)}
    for _ in range(60):
        json.dumps(data)
        sorted(data.items())


def worker(setup: dict, rounds: int) -> None:
    check = check_path.side("check", setup)
    for _ in range(300):  # warm: imports, first-use reads, prepared statements
        check()
        _small_loop()
    figures = {}
    for idle in IDLE_SECONDS:
        for name, run in (("check", check), ("loop", _small_loop)):
            first, second = [], []
            for _ in range(rounds):
                time.sleep(idle)
                first.append(_timed(run))
                second.append(_timed(run))
            figures[f"{name} {idle}"] = [statistics.median(t[i] for t in first) for i in (0, 1)] + [
                statistics.median(t[i] for t in second) for i in (0, 1)
            ]
    print(json.dumps(figures))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL", ""))
    args = parser.parse_args()
    if not args.database_url.startswith("postgres"):
        print("idle: needs --database-url postgres://…; skipped")
        return 0
    with scratch_database(args.database_url, BENCH_DB) as url:
        env = check_path._env(url)
        setup = check_path._run(env, "--prepare")
        done = subprocess.run(
            [sys.executable, __file__, "--worker", json.dumps(setup), str(args.rounds)],
            env={**env, "PYTHONPATH": str(Path(__file__).parent)},
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode != 0:
            raise SystemExit(f"worker failed:\n{done.stderr[-3000:]}")
        figures = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"\nafter idle, one process, medians of {args.rounds}; load {os.getloadavg()[0]:.2f}")
    print("  what        idle   first: CPU ms  wall ms   next: CPU ms  wall ms   ratio (CPU)")
    for key, (cpu, wall, next_cpu, next_wall) in figures.items():
        name, idle = key.split()
        print(
            f"  {name:<10} {float(idle):4.1f} s   {cpu:12.2f} {wall:8.2f}   {next_cpu:11.2f}"
            f" {next_wall:8.2f}   {cpu / next_cpu:10.2f}"
        )
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(json.loads(sys.argv[2]), int(sys.argv[3]))
    else:
        sys.exit(main())
