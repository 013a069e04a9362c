"""A dependency-free progress bar for management commands that walk long logs."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    def __init__(self, total: int, label: str, stream: TextIO = sys.stderr, width: int = 30):
        self.total, self.label, self.stream, self.width = max(total, 1), label, stream, width
        self.done = 0
        self.started = time.perf_counter()
        self._last_draw = 0.0
        self.enabled = total >= 10_000  # short logs finish before a bar would help

    def advance(self, count: int = 1) -> None:
        self.done += count
        now = time.perf_counter()
        if self.enabled and (now - self._last_draw > 0.2 or self.done >= self.total):
            self._last_draw = now
            self._draw(now)

    def rate(self) -> float:
        return self.done / max(time.perf_counter() - self.started, 1e-9)

    def _draw(self, now: float) -> None:
        filled = int(self.width * min(self.done / self.total, 1))
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(
            f"\r{self.label} [{bar}] {self.done:,}/{self.total:,} events, {self.rate():,.0f}/s"
        )
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self._draw(time.perf_counter())
            self.stream.write("\n")
