"""Run every benchmark and print one table of their headline figures (`make bench`).

    .venv/bin/python bench/all.py [--quick] [--database-url postgres://…]

With a PostgreSQL URL, bench/serving.py also runs when REDIS_URL names a Redis (the production
settings it compares the serving stacks on).

Each script prints its own detailed table as it runs; at the end this prints every headline
figure beside its in-run baseline and the ratio, with the date and the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL", ""))
    args = parser.parse_args()
    quick = ["--quick"] if args.quick else []
    pg = ["--database-url", args.database_url] if args.database_url.startswith("postgres") else []
    trust_events = ["--events", "4000"] if args.quick else []
    runs = [
        ["bench/engines.py", *quick],
        ["bench/rollbox.py", *quick],
        # quick: rebuild 100,000 events, verify 20,000; else rebuild a million, verify 100,000.
        ["bench/log.py", *quick],
        ["bench/report.py", *quick],
        ["bench/presenting.py", *(["--checks", "50"] if args.quick else [])],
        ["bench/trust.py", *trust_events],
        ["bench/api.py", *quick, *pg],
        ["bench/check_path.py", *quick, *pg],
        ["bench/fanout.py", *(["--clients", "10,200", "--rounds", "1"] if args.quick else [])],
        ["bench/sockets.py"],
        ["bench/feed.py", *(["--repeat", "3"] if args.quick else [])],
        ["bench/catchup.py", *(["--sockets", "50"] if args.quick else [])],
    ]
    if pg:
        runs.insert(2, ["bench/log.py", *(quick or ["--verify-events", "20000"]), *pg])
        trust = ["bench/trust.py", *trust_events]
        runs.insert(runs.index(trust) + 1, [*trust, *pg])
        # The serving stacks on the production settings: also needs REDIS_URL (skips without).
        runs.insert(
            runs.index(["bench/api.py", *quick, *pg]) + 1, ["bench/serving.py", *quick, *pg]
        )
    with tempfile.NamedTemporaryFile("r", suffix=".jsonl", delete=False) as summary:
        env = {**os.environ, "BENCH_SUMMARY": summary.name}
        failed = []
        for run in runs:
            print(f"\n=== {' '.join(run)}", flush=True)
            if subprocess.run([sys.executable, *run], cwd=ROOT, env=env).returncode:
                failed.append(run[0])
        rows = [json.loads(line) for line in Path(summary.name).read_text().splitlines()]
    print(
        f"\n{date.today()} on {platform.node()} ({os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}); load average {os.getloadavg()[0]:.1f}"
    )
    print(f"{'benchmark':<58}{'figure':>14}  {'unit':<10}{'baseline':>12}{'ratio':>8}  note")
    for row in rows:
        ratio = f"{row['figure'] / row['baseline']:.2f}" if row["baseline"] else "—"
        baseline = f"{row['baseline']:,.1f}" if row["baseline"] else "—"
        print(
            f"{row['benchmark']:<58}{row['figure']:>14,.1f}  {row['unit']:<10}{baseline:>12}"
            f"{ratio:>8}  {row['note']}"
        )
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
