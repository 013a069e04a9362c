"""bench/check_path.py's writers start a phase together, once the slowest is ready (a writer
started on a clock fixed in advance measured beside others still importing Django)."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading

import pytest

from tests.bench import BENCH, bench_module

check_path = bench_module("check_path")

# A writer: warms for ``argv[1]`` seconds, then waits for the start and prints when it was.
WRITER = f"""
import sys, time
sys.path.insert(0, {str(BENCH)!r})
import check_path
time.sleep(float(sys.argv[1]))
ready = time.time()
print(ready, check_path.wait_for_start(), flush=True)
"""


def _writer(*args: str) -> subprocess.Popen:
    return check_path.spawn([sys.executable, "-c", *args])


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
    # The writer that was ready is not left waiting for a start that will never come.
    assert writers[0].wait(timeout=10) == -signal.SIGKILL
    for writer in writers:
        writer.communicate()


def test_a_writer_that_warns_more_than_a_pipe_holds_is_not_blocked():
    # 200 KB on stderr before it is ready, more before its result: a pipe read only at the end
    # (64 KiB) blocked such a writer in the middle of its measure.
    noisy = _writer(
        "import sys; sys.stderr.write('w' * 200_000); sys.stderr.flush();"
        f" sys.path.insert(0, {str(BENCH)!r}); import check_path;"
        " start = check_path.wait_for_start(); sys.stderr.write('x' * 200_000); print(start)"
    )
    starting = threading.Thread(target=check_path.start_together, args=([noisy], "test"))
    starting.start()
    starting.join(timeout=30)
    if starting.is_alive():
        noisy.kill()
        pytest.fail("the writer blocked on its stderr before it could say it was ready")
    out, _ = noisy.communicate(timeout=30)
    assert noisy.returncode == 0 and float(out)
    assert len(check_path.errors_of(noisy)) == 400_000  # kept, for the failure message
