"""Rules-engine benchmark: checks rolled and resolved per second, and odds() latency.

Run directly: ``.venv/bin/python bench/engines.py`` (``--quick`` for a short run, ``--strict`` to
exit 1 when a target is missed). Everything runs in one single-threaded process, so on one core.
Each figure sits beside a baseline measured in the same run:

* roll + resolve and resolve-from-faces: a bare loop drawing the same number of faces per check
  from the same source (so the ratio is the share of time the rules leave to the dice);
* odds(): a 1,000-roll Monte Carlo estimate of the same check (a crude ±1.5 % answer), so the
  ratio says how many times faster the exact answer is.

Times are this process's CPU time (``time.process_time``), so a busy machine slows the figures
less than wall-clock time would; rates are the best of several runs. The CofD target line also
shows the wall-clock rate of the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from summary import record  # bench/ is on sys.path when a script runs from it

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rolls import systems
from rolls.systems import KeyedDice, SeededDice, SystemDice, odds, resolve, roll

ROLL_CHECKS: list[tuple[str, dict[str, Any]]] = [
    ("d6pool", {"pool": 6}),
    ("d6pool", {"pool": -1}),
    ("storyteller", {"pool": 6, "difficulty": 7}),
    ("nice_damnit", {"bonus": 4, "extra_nice": 1}),
    ("age", {"ability": 2, "focus": True, "target": 13}),
    ("cofd", {"pool": 8}),
    ("cofd", {"pool": 8, "again": 8, "rote": True}),
    ("cofd", {"pool": 0, "rote": True}),
]

ODDS_CHECKS: list[tuple[str, dict[str, Any]]] = [
    ("d6pool", {"pool": 3}),
    ("d6pool", {"pool": 30}),
    ("storyteller", {"pool": 5}),
    ("storyteller", {"pool": 20, "difficulty": 7}),
    ("storyteller", {"pool": 30, "difficulty": 8}),
    ("nice_damnit", {"bonus": 5, "extra_nice": 2}),
    ("age", {"ability": 3, "target": 12}),
    ("age", {"ability": 3, "target": 12, "fortune_change": {"die": 2, "value": 6}}),
    ("cofd", {"pool": 0, "rote": True}),
    ("cofd", {"pool": 5}),
    ("cofd", {"pool": 30, "again": 8, "rote": True}),
    ("cofd", {"pool": 100, "again": 8, "rote": True}),
]

SIDES = {"d6pool": 6, "storyteller": 10, "nice_damnit": 10, "age": 6, "cofd": 10}
TARGET_ROLLS = 100_000  # CofD 8-die check, rolled and resolved, per second
TARGET_ODDS_MS = 5.0  # odds() for any check with a pool <= 30


def label(check: dict[str, Any]) -> str:
    return ",".join(f"{k}={json.dumps(v, separators=(',', ':'))}" for k, v in check.items())


clock = time.process_time  # CPU seconds of this process: what one core delivers
WALL: dict[str, float] = {}  # wall-clock rates, for the record


def best_rate(run: Callable[[int], None], n: int, repeats: int, name: str = "") -> float:
    """Best operations per CPU second over ``repeats`` timed runs of ``run(n)``."""
    best = wall = float("inf")
    for _ in range(repeats):
        w, t = time.perf_counter(), clock()
        run(n)
        best = min(best, clock() - t)
        wall = min(wall, time.perf_counter() - w)
    if name:
        WALL[name] = n / wall
    return n / best


def roll_rates(
    system: str, check: dict[str, Any], source: Any, n: int, repeats: int
) -> tuple[float, float, float, float]:
    """(faces per check, roll+resolve/s, resolve-from-faces/s, bare-draw baseline checks/s)."""
    logged = [roll(system, check, source)[0] for _ in range(n)]
    per_check = sum(map(len, logged)) / n
    total_faces = sum(map(len, logged))
    sides = SIDES[system]
    draw = source.roll

    def rolling(k: int) -> None:
        for _ in range(k):
            roll(system, check, source)

    def resolving(k: int) -> None:
        for faces in logged[:k]:
            resolve(system, check, faces)

    def baseline(k: int) -> None:
        for _ in range(total_faces * k // n):
            draw(sides)

    return (
        per_check,
        best_rate(rolling, n, repeats, f"{system} {label(check)}"),
        best_rate(resolving, n, repeats),
        best_rate(baseline, n, repeats),
    )


def odds_latency(system: str, check: dict[str, Any], repeats: int) -> tuple[float, float, float]:
    """(uncached ms, cached µs, 1,000-roll Monte Carlo ms), each the best of ``repeats``."""
    module = getattr(systems, system)
    cold, warm, mc = [], [], []
    dice = SeededDice(1)
    for _ in range(repeats):
        module._odds.cache_clear()
        t = clock()
        odds(system, check)
        cold.append(clock() - t)
        t = clock()
        odds(system, check)
        warm.append(clock() - t)
        t = clock()
        for _ in range(1000):
            roll(system, check, dice)
        mc.append(clock() - t)
    return min(cold) * 1e3, min(warm) * 1e6, min(mc) * 1e3


def worst_odds_sweep(repeats: int) -> tuple[float, str]:
    """The slowest uncached odds() over every pool 0..30 of the pool-based systems."""
    worst, where = 0.0, ""
    variants: list[tuple[str, dict[str, Any]]] = [
        ("d6pool", {}),
        ("storyteller", {"difficulty": 6}),
        ("storyteller", {"difficulty": 2}),
        ("cofd", {}),
        ("cofd", {"again": 8, "rote": True}),
        ("cofd", {"again": 9, "extra_successes": 2}),
    ]
    for system, extra in variants:
        module = getattr(systems, system)
        for pool in range(-2, 31):
            check = {**extra, "pool": pool}
            times = []
            for _ in range(repeats):
                module._odds.cache_clear()
                t = clock()
                odds(system, check)
                times.append(clock() - t)
            ms = statistics.median(times) * 1e3
            if ms > worst:
                worst, where = ms, f"{system} {label(check)}"
    return worst, where


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run (a few seconds)")
    parser.add_argument("--strict", action="store_true", help="exit 1 if a target is missed")
    args = parser.parse_args()
    n, repeats = (5_000, 3) if args.quick else (30_000, 5)
    odds_repeats = 3 if args.quick else 7

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"rules engines, {platform.python_implementation()} {platform.python_version()}, "
        f"one thread (one core), best of {repeats} runs of {n:,} checks; "
        f"{os.cpu_count()} CPUs, load average {load:.2f} at start"
    )

    print("\nroll + resolve (default source: SystemDice, the OS CSPRNG), and resolve from faces")
    head = (
        f"{'system':<12}{'check':<34}{'faces':>6}{'rolled/s':>11}{'resolved/s':>12}"
        f"{'baseline/s':>12}{'roll ratio':>11}{'resolve ratio':>14}"
    )
    print(head)
    cofd8 = cofd8_wall = 0.0
    for system, check in ROLL_CHECKS:
        per, rolled, resolved, base = roll_rates(system, check, SystemDice(), n, repeats)
        if system == "cofd" and check == {"pool": 8}:
            cofd8, cofd8_wall, cofd8_base = rolled, WALL["cofd pool=8"], base
        print(
            f"{system:<12}{label(check):<34}{per:>6.2f}{rolled:>11,.0f}{resolved:>12,.0f}"
            f"{base:>12,.0f}{rolled / base:>11.2f}{resolved / base:>14.2f}"
        )

    print("\ncofd pool=8 with each dice source (baseline: bare draws from that source)")
    print(f"{'source':<14}{'rolled/s':>11}{'baseline/s':>12}{'ratio':>8}")
    for name, source in (
        ("SystemDice", SystemDice()),
        ("SeededDice", SeededDice(7)),
        ("KeyedDice", KeyedDice(b"bench-key", "campaign", 1, "00")),
    ):
        k = n
        _, rolled, _, base = roll_rates("cofd", {"pool": 8}, source, k, repeats)
        print(f"{name:<14}{rolled:>11,.0f}{base:>12,.0f}{rolled / base:>8.2f}")

    print("\nodds() latency, uncached (cache cleared) and cached; baseline: 1,000-roll Monte Carlo")
    print(f"{'system':<12}{'check':<56}{'odds ms':>9}{'cached µs':>11}{'MC ms':>9}{'MC/odds':>9}")
    for system, check in ODDS_CHECKS:
        cold, warm, mc = odds_latency(system, check, odds_repeats)
        print(f"{system:<12}{label(check):<56}{cold:>9.3f}{warm:>11.1f}{mc:>9.1f}{mc / cold:>9.0f}")

    worst, where = worst_odds_sweep(3 if args.quick else 5)
    print(f"\nslowest uncached odds() over pools -2..30 (median of runs): {worst:.3f} ms ({where})")

    record(
        "engines: CofD 8-die check rolled + resolved",
        cofd8,
        "checks/s",
        cofd8_base,
        "baseline: bare draws of the same faces",
    )
    record(
        "engines: odds() worst case, pool <= 30", worst, "ms", None, f"target < {TARGET_ODDS_MS:g}"
    )
    ok_roll = cofd8 >= TARGET_ROLLS
    ok_odds = worst < TARGET_ODDS_MS
    print("\ntargets")
    print(
        f"  cofd 8-die check rolled and resolved >= {TARGET_ROLLS:,}/s: {cofd8:,.0f}/s "
        f"({cofd8 / TARGET_ROLLS:.2f}x target; wall clock {cofd8_wall:,.0f}/s) "
        f"{'MET' if ok_roll else 'MISSED'}"
    )
    print(
        f"  odds() for a pool <= 30 under {TARGET_ODDS_MS:g} ms: worst {worst:.3f} ms "
        f"({TARGET_ODDS_MS / worst:.1f}x headroom) {'MET' if ok_odds else 'MISSED'}"
    )
    return 1 if args.strict and not (ok_roll and ok_odds) else 0


if __name__ == "__main__":
    raise SystemExit(main())
