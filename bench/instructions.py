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
about a third of a round trip's CPU) and what a cache miss costs. The time figures stay
`check_path.py`'s.

Each side runs twice, with 100 requests to warm it and then none or ``--requests`` more (a
process's start, Django's setup and the warm-up are the same in both): the difference over
``--requests`` is a request's count. What still moves a count between runs (about 0.5 % over
100 checks, 2026-12-06) is the dice: a roll that explodes does more; more requests average it
out.

PostgreSQL's side is counted the same way. The requests go to a private cluster (initdb into a
temporary directory, its own port, autovacuum off; `--database-url`'s server is not touched,
the option only asks for PostgreSQL's figures, as in every bench) whose `postgres` runs under
callgrind too, each backend counted when it exits: a worker's are the backends seen connected
while it ran (its pool's connections, which live as long as it does). The issue's figure is
the sum, client and server, over the view floor's: "total CPU per check ≤ 3x the floor", in
instructions (the kernel's share left out on both sides). It needs PostgreSQL's initdb and
pg_ctl (the fault tests' private cluster, tests/faults/services.py). About eight minutes.
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
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
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


class Server:
    """The private cluster's backends under callgrind: `exited` runs a worker and sums the
    instructions of the backends that served it, seen connected while it ran (a worker's
    connections live as long as it does: the pool's) and counted once they have exited."""

    def __init__(self, url: str, out: Path) -> None:
        import psycopg

        self.watch, self.out = psycopg.connect(url, autocommit=True), out

    def exited(self, env: dict, mode: str, requests: int, setup_json: str) -> tuple[int, int]:
        """`count`'s worker run: its instructions, and its backends'."""
        with ThreadPoolExecutor(1) as running:
            worker = running.submit(count, env, mode, requests, setup_json)
            seen: set[int] = set()
            while not worker.done():
                seen |= self._clients()
                time.sleep(0.05)
        deadline = time.monotonic() + 120
        while True:
            left = seen & self._clients()
            totals = [_totals(self.out / f"callgrind.{pid}") for pid in seen - left]
            if not left and None not in totals:
                return worker.result(), sum(totals)
            if time.monotonic() > deadline:
                raise SystemExit("instructions: the private server's backends did not exit")
            time.sleep(0.2)

    def _clients(self) -> set[int]:
        return {
            pid
            for (pid,) in self.watch.execute(
                "SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend' "
                "AND pid <> pg_backend_pid()"
            )
        }


def _totals(path: Path) -> int | None:
    """A process's count, once callgrind has written it (the totals last)."""
    found = path.exists() and re.search(r"^totals: (\d+)", path.read_text(), re.MULTILINE)
    return int(found.group(1)) if found else None


@contextmanager
def counted_server(directory: Path) -> Iterator[tuple[Path, str]]:
    """A private PostgreSQL whose processes run under callgrind, each writing its count into
    ``directory``/out when it exits: (that folder, the cluster's URL)."""
    sys.path.insert(0, str(HERE.parent))
    from tests.faults.services import Postgres, pg_bin

    out = directory / "out"
    out.mkdir(parents=True)
    wrapper = directory / "postgres-under-callgrind"
    wrapper.write_text(
        "#!/bin/sh\nexec valgrind --tool=callgrind --quiet "
        f'--callgrind-out-file={out}/callgrind.%p {pg_bin() / "postgres"} "$@"\n'
    )
    wrapper.chmod(0o755)
    cluster = Postgres(directory / "cluster", executable=wrapper, settings=("autovacuum=off",))
    if os.geteuid() == 0:  # the cluster runs as `postgres` (see Postgres): it writes there
        shutil.chown(out, "postgres")
        os.chmod(directory, 0o755)
    try:
        yield out, cluster.create().url("postgres")
    finally:
        cluster.destroy()


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

    client: dict[str, float] = {}
    server: dict[str, float] = {}
    with (
        tempfile.TemporaryDirectory() as directory,
        counted_server(Path(directory)) as (out, at),
        scratch_database(at, BENCH_DB) as url,
    ):
        env = check_path._env(url)
        setup = json.dumps(check_path._run(env, "--prepare"))
        backends = Server(at, out)
        for mode in ("viewfloor", "check"):
            base, base_server = backends.exited(env, mode, 0, setup)
            more, more_server = backends.exited(env, mode, args.requests, setup)
            client[mode] = (more - base) / args.requests
            server[mode] = (more_server - base_server) / args.requests
        backends.watch.close()
    total = {mode: client[mode] + server[mode] for mode in client}
    print(f"\ninstructions per request (callgrind, user space, every thread), {args.requests} each")
    print(f"  {'':<12}{'check':>14}{'view floor':>14}{'ratio':>8}")
    for name, counts in (("client", client), ("PostgreSQL", server), ("total", total)):
        ratio = counts["check"] / counts["viewfloor"]
        print(f"  {name:<12}{counts['check']:>14,.0f}{counts['viewfloor']:>14,.0f}{ratio:>8.2f}")
    baseline = "baseline: the floor's statements in a plain Django view"
    for name, counts in (
        ("client process", client),
        ("PostgreSQL's backends", server),
        ("client and PostgreSQL", total),
    ):
        figure = f"check path: instructions per check (callgrind, {name}, user space)"
        record(figure, counts["check"], "instructions", counts["viewfloor"], baseline)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    import check_path

    check_path.side_script(main, worker)
