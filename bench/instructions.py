"""Benchmark: a check's CPU instructions beside the view floor's, counted by callgrind.

    .venv/bin/python bench/instructions.py [--requests 200] [--database-url postgres://…]

The client side of `bench/check_path.py`'s first figure (CPU per check, one writer), as a count
instead of a time: the same check (`check_path._check_runner`, the production WSGI application
and settings, its live broadcast rendered on the publishing thread) and the same view floor
(`check_path._view_floor_runner`), each run in a process under valgrind's callgrind, which
counts the instructions every thread of the process executes in user space. A count is
nearly the same from run to run (within 0.3 % over 100 checks with the string hashing fixed,
as here) whatever else the machine does, where CPU times on these shared machines move by a
third from one minute to the next: it tells a change's worth, a cut of 1 % included (over a
few hundred checks), where timing cannot. What it leaves out: the kernel's share (system calls:
about a third of a round trip's CPU), PostgreSQL's CPU, and what a cache miss costs. The time
figures stay `check_path.py`'s.

Each side runs twice, with 100 requests to warm it and then none or ``--requests`` more (a
process's start, Django's setup and the warm-up are the same in both): the difference over
``--requests`` is a request's count. Four processes under callgrind: about five minutes. What
still moves a count between runs (about 0.5 % over 100 checks, 2026-12-06) is the dice: a roll
that explodes does more; more requests average it out.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCH_DB = "tablecheck_bench_instructions"
WARM = 100


def worker(mode: str, requests: int, setup: dict) -> None:
    """Under callgrind: warm the side, then make ``requests`` more requests."""
    sys.path.insert(0, str(HERE))
    import check_path

    run = check_path.side(mode, setup)
    for _ in range(WARM + requests):
        run()


def count(env: dict, mode: str, requests: int, setup_json: str) -> int:
    """The instructions of a worker process making ``requests`` requests after its warm-up."""
    with tempfile.TemporaryDirectory() as out:
        done = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out}/callgrind.out",
                sys.executable,
                __file__,
                "--worker",
                mode,
                str(requests),
                setup_json,
            ],
            env={**env, "PYTHONHASHSEED": "0"},  # one hashing of strings: one dict layout
            cwd=HERE.parent,
            capture_output=True,
            text=True,
        )
    collected = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or collected is None:
        raise SystemExit(f"{mode} worker under callgrind failed:\n{done.stderr[-3000:]}")
    return int(collected.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL", ""))
    args = parser.parse_args()
    if not args.database_url.startswith("postgres"):
        print(
            "instructions: needs --database-url postgres://… (the floor is PostgreSQL's); skipped"
        )
        return 0
    if shutil.which("valgrind") is None:
        raise SystemExit("instructions: needs valgrind (Debian's package valgrind)")
    sys.path.insert(0, str(HERE))
    import check_path
    from scratch import scratch_database
    from summary import record

    with scratch_database(args.database_url, BENCH_DB) as url:
        env = check_path._env(url)
        setup = json.dumps(check_path._run(env, "--prepare"))
        per_request = {}
        for mode in ("viewfloor", "check"):
            base = count(env, mode, 0, setup)
            per_request[mode] = (count(env, mode, args.requests, setup) - base) / args.requests
    check, floor = per_request["check"], per_request["viewfloor"]
    print(f"\ninstructions per request (callgrind, user space, every thread), {args.requests} each")
    print(f"  {'check':<12}{check:>14,.0f}")
    print(f"  {'view floor':<12}{floor:>14,.0f}")
    print(f"  {'ratio':<12}{check / floor:>14.2f}")
    record(
        "check path: instructions per check (callgrind, client process, user space)",
        check,
        "instructions",
        floor,
        "baseline: the floor's statements in a plain Django view",
    )
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4]))
    else:
        sys.exit(main())
