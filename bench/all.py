"""Run every benchmark and print one table of their headline figures (`make bench`).

    .venv/bin/python bench/all.py [--quick] [--only SCRIPT] [--no-readme] [--database-url postgres://…]

With a PostgreSQL URL, bench/serving.py also runs when REDIS_URL names a Redis (the production
settings it compares the serving stacks on).

Each script prints its own detailed table as it runs; at the end this prints every headline
figure beside its in-run baseline and the ratio, with the date, the machine and the load average,
saves them as var/bench/summary.jsonl and, after a whole run (not --quick, --only or
--no-readme), writes them into README.md's Performance section between its markers
(`bench/readme.py`, which also does it by hand from a saved summary).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from summary import cpu_counters  # noqa: E402


def databases(database_url: str) -> list[str]:
    """What the figures were measured on: SQLite always, PostgreSQL when given (its version)."""
    found = [f"SQLite {sqlite3.sqlite_version}"]
    if database_url:
        try:
            import psycopg

            with psycopg.connect(database_url.replace("postgres://", "postgresql://", 1)) as db:
                found.append(f"PostgreSQL {db.execute('SHOW server_version').fetchone()[0]}")
        except Exception as error:  # the scripts will say more; the header still names it
            found.append(f"PostgreSQL (version unknown: {type(error).__name__})")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL", ""))
    parser.add_argument("--no-readme", action="store_true", help="leave README.md as it is")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="SCRIPT",
        help="run only these scripts (e.g. log.py; repeatable); the README is left as it is",
    )
    args = parser.parse_args()
    quick = ["--quick"] if args.quick else []
    pg = ["--database-url", args.database_url] if args.database_url.startswith("postgres") else []
    trust_events = ["--events", "4000"] if args.quick else []
    instructions = ["bench/instructions.py", *(["--requests", "50"] if args.quick else []), *pg]
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
        instructions,
        ["bench/fanout.py", *(["--clients", "10,200", "--rounds", "1"] if args.quick else [])],
        ["bench/sockets.py", *pg],
        ["bench/feed.py", *(["--repeat", "3"] if args.quick else [])],
        ["bench/catchup.py", *(["--sockets", "50"] if args.quick else [])],
    ]
    if pg:
        runs.insert(2, ["bench/log.py", *(quick or ["--verify-events", "20000"]), *pg])
        trust = ["bench/trust.py", *trust_events]
        runs.insert(runs.index(trust) + 1, [*trust, *pg])
        runs.insert(runs.index(instructions) + 1, ["bench/convoy.py", *pg])
        # The serving stacks on the production settings: also needs REDIS_URL (skips without).
        runs.insert(
            runs.index(["bench/api.py", *quick, *pg]) + 1, ["bench/serving.py", *quick, *pg]
        )
    if args.only:
        runs = [run for run in runs if Path(run[0]).name in args.only]
    command = "make bench-quick" if args.quick else "make bench"
    if args.only:
        command = f"bench/all.py {'--quick ' if args.quick else ''}--only {','.join(args.only)}"
    if pg:
        redis = os.environ.get("REDIS_URL", "").startswith("redis")
        command = f"DATABASE_URL=postgres://… {'REDIS_URL=redis://… ' if redis else ''}{command}"
    run_info = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": platform.node(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "databases": databases(args.database_url if pg else ""),
        "command": command,
        "cpu": cpu_counters(),  # where the first figure's steal is counted from
    }
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as summary:
        summary.write(json.dumps({"run": run_info}) + "\n")
    env = {**os.environ, "BENCH_SUMMARY": summary.name}
    failed = []
    for run in runs:
        print(f"\n=== {' '.join(run)}", flush=True)
        if subprocess.run([sys.executable, *run], cwd=ROOT, env=env).returncode:
            failed.append(run[0])
    if failed:
        with open(summary.name, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"run": {"failed": failed}}) + "\n")
    kind = "-partial" if args.only else "-quick" if args.quick else ""
    saved = ROOT / "var" / "bench" / f"summary{kind}.jsonl"
    saved.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(summary.name, saved)

    import readme

    _, rows = readme.read(saved)
    print(
        f"\n{run_info['date']} on {run_info['machine']} ({run_info['cpus']} CPUs, Python "
        f"{run_info['python']}); {', '.join(run_info['databases'])}; load average now "
        f"{os.getloadavg()[0]:.1f}"
    )
    print(
        f"{'benchmark':<58}{'figure':>14}  {'unit':<10}{'baseline':>12}{'ratio':>8}{'load':>6}"
        "  note"
    )
    for row in rows:
        ratio = f"{row['figure'] / row['baseline']:.2f}" if row["baseline"] else "—"
        baseline = f"{row['baseline']:,.1f}" if row["baseline"] else "—"
        print(
            f"{row['benchmark']:<58}{row['figure']:>14,.1f}  {row['unit']:<10}{baseline:>12}"
            f"{ratio:>8}{row.get('load', 0):>6.1f}  {row['note']}"
        )
    print(f"saved as {saved.relative_to(ROOT)}")
    if not (args.quick or args.only or args.no_readme):
        readme.write(saved)
        print("README.md: the Performance section's generated table rewritten from it")
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
