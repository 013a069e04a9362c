"""One line per headline figure, collected by `bench/all.py` into a single table.

A benchmark calls `record(...)`; when the environment names a summary file (BENCH_SUMMARY), the
figure is appended to it as JSON with the load average of the moment (`bench/readme.py` puts both
in the README), otherwise nothing happens (the script's own table is printed anyway).
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
    }
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(row) + "\n")
