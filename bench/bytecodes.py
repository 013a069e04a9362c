"""Diagnostic: where a check's interpreted bytecodes go, beside the view floor's, by function.

    .venv/bin/python bench/bytecodes.py [--requests 50] [--top 40] [--database-url postgres://…]

`bench/instructions.py` tells how much more a check executes than the view floor; this tells
where, in the interpreter's terms. Each side (`check_path`'s check and view floor: the
production WSGI application and settings, the live broadcast on its publishing thread) runs in
a process of its own with opcode tracing on every thread, makes 100 requests to warm, and then
counts, over ``--requests`` more, the bytecodes each function executes itself (its callees'
are theirs). It prints both totals per request and the functions whose counts differ most.

A bytecode is not an instruction: C called from one (JSON, hashing, the driver's C, SQLite)
costs nothing here and much under callgrind, and tracing makes a request some fifty times
slower. Use it to find where to look and `bench/instructions.py` to tell what a change saved.
It prints no figure of `make bench`'s and is not part of it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

HERE = Path(__file__).resolve().parent
BENCH_DB = "tablecheck_bench_bytecodes"
WARM = 100


def worker(mode: str, requests: int, setup: dict) -> None:
    """Warm the side, then count its bytecodes per function over ``requests`` requests; print
    them per request as JSON ("file:function": count)."""
    counts: Counter[tuple[str, str]] = Counter()
    counting = False

    def traced(frame: FrameType, event: str, arg: Any):
        frame.f_trace_opcodes = True
        return opcode

    def opcode(frame: FrameType, event: str, arg: Any):
        if counting and event == "opcode":
            code = frame.f_code
            counts[(code.co_filename, code.co_name)] += 1
        return opcode

    # Before the runner starts its threads (the live broadcast's publishing loop), so that
    # they are traced too; the main thread only while counting.
    threading.settrace(traced)
    sys.path.insert(0, str(HERE))
    import check_path

    run = check_path.side(mode, setup)
    for _ in range(WARM):
        run()
    sys.settrace(traced)
    counting = True
    for _ in range(requests):
        run()
    counting = False
    sys.settrace(None)
    print(json.dumps({f"{_short(f)}:{name}": n / requests for (f, name), n in counts.items()}))


def _short(filename: str) -> str:
    """A module's path from its package (site-packages', the project's, the standard library's)."""
    for prefix in ("site-packages/", f"{HERE.parent}/"):
        if prefix in filename:
            return filename.split(prefix, 1)[1]
    return re.sub(r"^.*/lib/python3\.\d+/", "", filename)


def counted(env: dict, mode: str, requests: int, setup_json: str) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, "--worker", mode, str(requests), setup_json],
        env={**env, "PYTHONHASHSEED": "0"},  # as bench/instructions.py: one dict layout
        cwd=HERE.parent,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"{mode} worker failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL", ""))
    args = parser.parse_args()
    if not args.database_url.startswith("postgres"):
        raise SystemExit("bytecodes: needs --database-url postgres://… (the floor is PostgreSQL's)")
    sys.path.insert(0, str(HERE))
    import check_path
    from scratch import scratch_database

    with scratch_database(args.database_url, BENCH_DB) as url:
        env = check_path._env(url)
        setup = json.dumps(check_path._run(env, "--prepare"))
        check, floor = (counted(env, mode, args.requests, setup) for mode in ("check", "viewfloor"))
    total_check, total_floor = sum(check.values()), sum(floor.values())
    print(f"\nbytecodes per request, {args.requests} requests each, every thread")
    print(f"  check {total_check:,.0f}   view floor {total_floor:,.0f}   ratio ", end="")
    print(f"{total_check / total_floor:.2f}")
    print(f"\n  {'check - floor':>13} {'check':>8} {'floor':>8}  function")
    difference = {name: check.get(name, 0) - floor.get(name, 0) for name in check | floor}
    for name in sorted(difference, key=lambda n: -abs(difference[n]))[: args.top]:
        line = f"{difference[name]:>13,.0f} {check.get(name, 0):>8,.0f} {floor.get(name, 0):>8,.0f}"
        print(f"  {line}  {name}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    import check_path

    check_path.side_script(main, worker)
