"""One line per headline figure, collected by `bench/all.py` into a single table.

A benchmark calls `record(...)`; when the environment names a summary file (BENCH_SUMMARY), the
figure is appended to it as JSON with the load average of the moment and the machine's CPU
counters (`bench/readme.py` puts both in the README: the load, and the share of the CPU time the
hypervisor took since the figure before), otherwise nothing happens (the script's own table is
printed anyway).
"""

from __future__ import annotations

import json
import os


def record(
    benchmark: str, figure: float, unit: str, baseline: float | None, note: str = ""
) -> None:
    path = os.environ.get("BENCH_SUMMARY")
    if not path:
        return
    row = {
        "benchmark": benchmark,
        "figure": figure,
        "unit": unit,
        "baseline": baseline,
        "note": note,
        "load": round(os.getloadavg()[0], 2),
        "cpu": cpu_counters(),
    }
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(row) + "\n")


def cpu_counters() -> list[int] | None:
    """[stolen, all] CPU time of the whole machine so far, in clock ticks (/proc/stat): the time
    the hypervisor gave other guests while this one wanted to run ("steal") and the time of
    every state. None where there is no /proc/stat."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = [int(value) for value in stat.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    if len(fields) < 8:
        return None
    return [fields[7], sum(fields)]  # user … softirq, steal (guest time is within user)
