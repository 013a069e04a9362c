"""Private services for the fault tests: a PostgreSQL cluster (initdb into a temporary directory,
its own port and socket directory) and a redis-server, both started, crashed (SIGKILL), stopped,
frozen (SIGSTOP) and restarted at will. Nothing here touches the host's shared PostgreSQL or
Redis, whatever DATABASE_URL and REDIS_URL say."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

WAIT = 60  # seconds: the bound on a service starting or stopping


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def pg_bin() -> Path:
    found = shutil.which("pg_config")
    if found:
        out = subprocess.run([found, "--bindir"], capture_output=True, text=True, check=False)
        candidate = Path(out.stdout.strip())
        if (candidate / "initdb").exists():
            return candidate
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if not versions:
        raise RuntimeError("the fault tests need PostgreSQL's initdb and pg_ctl")
    return versions[-1].parent


def _wait_gone(pid: int, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    raise RuntimeError(f"process {pid} did not exit")


@dataclass
class Postgres:
    """A private cluster. PostgreSQL refuses to run as root, so under root it runs as the
    `postgres` system user, which then owns the temporary directory. ``executable`` runs in
    place of `postgres` (bench/instructions.py: it under callgrind), with ``settings`` (`-c`)."""

    directory: Path
    port: int = 0
    executable: Path | None = None
    settings: tuple[str, ...] = ()

    @property
    def data(self) -> Path:
        return self.directory / "data"

    def url(self, database: str = "faults") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def _run(self, *command: str, check: bool = True) -> subprocess.CompletedProcess:
        prefix: list[str] = []
        if os.geteuid() == 0:
            prefix = ["runuser", "-u", "postgres", "--"]
        return subprocess.run(
            [*prefix, *command], capture_output=True, text=True, check=check, timeout=WAIT
        )

    def create(self) -> Postgres:
        self.port = self.port or free_port()
        self.directory.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            owner = pwd.getpwnam("postgres")
            os.chown(self.directory, owner.pw_uid, owner.pw_gid)
        binary = pg_bin()
        self._run(
            str(binary / "initdb"),
            *("-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync"),
            *("-E", "UTF8", "--locale", "C.UTF-8"),
        )
        self.start()
        self._run(
            str(binary / "createdb"),
            *("-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "faults"),
        )
        return self

    def start(self) -> None:
        options = f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1"
        options += "".join(f" -c {setting}" for setting in self.settings)
        executable = ("-p", str(self.executable)) if self.executable else ()
        deadline = time.monotonic() + WAIT
        while True:
            # After a crash the old backends may still hold the shared memory for a moment.
            result = self._run(
                str(pg_bin() / "pg_ctl"),
                *("-D", str(self.data), "-o", options, "-l", str(self.directory / "log")),
                *executable,
                *("-w", "-t", str(WAIT), "start"),
                check=False,
            )
            if result.returncode == 0:
                return
            if time.monotonic() > deadline:
                log = (self.directory / "log").read_text()[-2000:]
                raise RuntimeError(f"PostgreSQL did not start: {result.stderr}\n{log}")
            time.sleep(0.5)

    def stop(self, mode: str = "fast") -> None:
        self._run(str(pg_bin() / "pg_ctl"), "-D", str(self.data), "-m", mode, "stop", check=False)

    def postmaster_pid(self) -> int:
        return int((self.data / "postmaster.pid").read_text().split()[0])

    def kill_9(self) -> None:
        """SIGKILL to the postmaster (a crash): its backends notice and exit; the next start
        runs crash recovery from the WAL."""
        pid = self.postmaster_pid()
        os.kill(pid, signal.SIGKILL)
        _wait_gone(pid)

    def freeze(self) -> None:
        os.kill(self.postmaster_pid(), signal.SIGSTOP)

    def thaw(self) -> None:
        os.kill(self.postmaster_pid(), signal.SIGCONT)

    def destroy(self) -> None:
        with contextlib.suppress(Exception):
            self.stop("immediate")
        shutil.rmtree(self.directory, ignore_errors=True)


@dataclass
class Redis:
    """A private redis-server with CI's flags (no persistence), on a fixed port across restarts."""

    directory: Path
    port: int = 0
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> Redis:
        self.port = self.port or free_port()
        self.process = subprocess.Popen(
            [
                *(shutil.which("redis-server") or "redis-server", "--bind", "127.0.0.1"),
                *("--port", str(self.port), "--save", "", "--appendonly", "no"),
                *("--dir", str(self.directory)),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as probe:
                    probe.sendall(b"PING\r\n")
                    if probe.recv(16).startswith(b"+PONG"):
                        return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not answer PING")

    def kill_9(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=WAIT)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=WAIT)
