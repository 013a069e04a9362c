"""bench/check_path.py's writers start a phase together, once the slowest is ready (a writer
started on a clock fixed in advance measured beside others still importing Django)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("bench_check_path", ROOT / "bench" / "check_path.py")
check_path = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_path)

# A writer: warms for ``argv[1]`` seconds, then waits for the start and prints when it was.
WRITER = f"""
import importlib.util, sys, time
spec = importlib.util.spec_from_file_location("cp", {str(ROOT / "bench" / "check_path.py")!r})
cp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cp)
time.sleep(float(sys.argv[1]))
ready = time.time()
print(ready, cp.wait_for_start(), flush=True)
"""


def _writer(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_every_writer_is_given_one_start_after_the_slowest_is_ready():
    writers = [_writer(WRITER, str(warm)) for warm in (0.0, 1.0, 0.3)]
    check_path.start_together(writers, "test")
    lines = [writer.communicate(timeout=30)[0].split() for writer in writers]
    readies = [float(ready) for ready, _ in lines]
    starts = {float(start) for _, start in lines}
    assert len(starts) == 1, "each writer was sent a start time of its own"
    assert starts.pop() > max(readies), "the phase started before the slowest writer was ready"


def test_a_writer_that_fails_before_it_is_ready_stops_the_phase_with_its_error():
    writers = [_writer(WRITER, "0"), _writer("raise SystemExit('no database here')")]
    with pytest.raises(SystemExit) as refused:
        check_path.start_together(writers, "test")
    assert "test worker failed before it was ready" in str(refused.value)
    assert "no database here" in str(refused.value)  # its own error, from its stderr
    for writer in writers:
        writer.kill()
        writer.communicate()
