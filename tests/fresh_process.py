"""Code run in a fresh interpreter, as a server process or a deploy step would run it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def python_output(
    code: str, tmp_path: Path, database_url: str | None = None, timeout: float = 60
) -> str:
    """What ``code`` prints, run by a fresh interpreter in the project with its var/ in
    ``tmp_path``, on ``database_url`` (default: a SQLite database there) and no Redis."""
    env = {
        **os.environ,
        "VAR_DIR": str(tmp_path),
        "DATABASE_URL": database_url or f"sqlite:///{tmp_path}/db",
    }
    env.pop("REDIS_URL", None)
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout
