"""bench/check_path.py's writers start a phase together, once the slowest is ready (a writer
started on a clock fixed in advance measured beside others still importing Django)."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from collections.abc import Callable

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


@pytest.fixture
def spawned():
    """Writers started by a test, each reaped after it: stopped, and its pipes and stderr's
    file closed however the phase ended. Checked here on the writer's own files: a warning
    filter turning unclosed files into errors also failed a test on a socket another test of
    the worker had left to the collector."""
    started: list[subprocess.Popen] = []
    yield started
    for process in started:
        check_path.reap(process)
        files = (process.stdin, process.stdout, process.errors)  # type: ignore[attr-defined]
        assert process.returncode is not None and all(f.closed for f in files), process.args


@pytest.fixture
def writer(spawned):
    def start(*args: str) -> subprocess.Popen:
        process = check_path.spawn([sys.executable, "-c", *args])
        spawned.append(process)
        return process

    return start


def test_every_writer_is_given_one_start_after_the_slowest_is_ready(writer):
    writers = [writer(WRITER, str(warm)) for warm in (0.0, 1.0, 0.3)]
    check_path.start_together(writers, "test")
    lines = [writer.communicate(timeout=30)[0].split() for writer in writers]
    readies = [float(ready) for ready, _ in lines]
    starts = {float(start) for _, start in lines}
    assert len(starts) == 1, "each writer was sent a start time of its own"
    assert starts.pop() > max(readies), "the phase started before the slowest writer was ready"


def test_a_writer_that_fails_before_it_is_ready_stops_the_phase_with_its_error(writer):
    writers = [writer(WRITER, "0"), writer("raise SystemExit('no database here')")]
    with pytest.raises(SystemExit) as refused:
        check_path.start_together(writers, "test")
    assert "test worker failed before it was ready" in str(refused.value)
    assert "no database here" in str(refused.value)  # its own error, from its stderr
    # The writer that was ready is not left waiting for a start that will never come.
    assert writers[0].wait(timeout=10) == -signal.SIGKILL


def test_a_writer_that_prints_something_else_than_ready_stops_the_phase_promptly(writer):
    # It goes on to wait for a start that never comes: the phase must not wait for it forever.
    stray = writer(
        f"import sys; sys.path.insert(0, {str(BENCH)!r}); import check_path;"
        " print('hello', flush=True); sys.stderr.write('my own words'); sys.stderr.flush();"
        " check_path.wait_for_start()"
    )
    refusal = _within(30, lambda: check_path.start_together([stray], "test"))
    assert isinstance(refusal, SystemExit)
    assert "my own words" in str(refusal)  # its own stderr, in the message


def test_a_writer_that_warns_more_than_a_pipe_holds_is_not_blocked(writer):
    # 200 KB on stderr before it is ready, more before its result: a pipe read only at the end
    # (64 KiB) blocked such a writer in the middle of its measure.
    noisy = writer(
        "import sys; sys.stderr.write('w' * 200_000); sys.stderr.flush();"
        f" sys.path.insert(0, {str(BENCH)!r}); import check_path;"
        " start = check_path.wait_for_start(); sys.stderr.write('x' * 200_000); print(start)"
    )
    assert _within(30, lambda: check_path.start_together([noisy], "test")) is None
    out, _ = noisy.communicate(timeout=30)
    assert noisy.returncode == 0 and float(out)
    assert len(check_path.reap(noisy)) == 400_000  # kept, for the failure message


def _within(seconds: float, work: Callable[[], object]) -> BaseException | None:
    """What ``work`` raised (None if it returned), failing the test if it still runs after
    ``seconds`` (the writers the test started are reaped after it, which lets it end)."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            work()
            outcome.append(None)
        except BaseException as raised:  # SystemExit is the answer looked for
            outcome.append(raised)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout=seconds)
    if thread.is_alive():
        pytest.fail(f"still waiting after {seconds} s (a writer blocked, or was waited for)")
    return outcome[0]
