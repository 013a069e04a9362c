"""What the one-line roll box adds to a check: reading the line, against assembling its request.

    .venv/bin/python bench/rollbox.py [--quick]

For typical lines of every system this times ``rollbox.parse`` + ``assemble`` (what
``POST …/checks/parse/`` does before the odds) against ``assemble`` alone on the same request
(what the roll form's ``POST …/checks/odds/`` does): the baseline is measured in the same run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from summary import record  # bench/ is on sys.path when a script runs from it

from rolls.checks.assembly import assemble
from rolls.systems.rollbox import parse

SHEETS = {
    "cofd": {
        "attributes": {"Wits": 3, "Dexterity": 2, "Composure": 2},
        "skills": {"Occult": 2, "Investigation": 3, "Athletics": 1},
        "specialties": {"Investigation": ["Crime scenes"]},
    },
    "storyteller": {"attributes": {"Dexterity": 3, "Wits": 2}, "abilities": {"Brawl": 4}},
    "age": {"abilities": {"Dexterity": 3}, "focuses": {"Dexterity": ["Acrobatics"]}},
    "d6pool": {"attributes": {"Reaction": 4}, "abilities": {"Shooting": 4}},
    "nice_damnit": {"areas": {"Firearms": 2}, "skills": {"Quick draw": "pro_1"}},
}
LINES = [
    ("cofd", "Wits + Occult 8again rote"),
    ("cofd", "Wits + Investigation (Crime scenes) +2 equipment -1 blind"),
    ("cofd", "Сообразительность + Оккультизм"),
    ("storyteller", "Dexterity + Brawl diff 7"),
    ("storyteller", "5d10 diff 6"),
    ("age", "Dexterity (Acrobatics) tn 11"),
    ("d6pool", "Reaction + Shooting very hard"),
    ("nice_damnit", "2d10 + Firearms + Quick draw + 1"),
]


def per_line(work, rounds: int) -> float:
    """Median microseconds per line over five timed passes."""
    passes = []
    for _pass in range(5):
        start = time.perf_counter()
        for _round in range(rounds):
            for system, text in LINES:
                work(system, text)
        passes.append((time.perf_counter() - start) / (rounds * len(LINES)) * 1e6)
    return statistics.median(passes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    rounds = 100 if parser.parse_args().quick else 1000
    requests = {
        (system, text): parse(system, text, sheet=SHEETS[system]).request for system, text in LINES
    }

    def form(system: str, text: str) -> None:
        assemble(system, SHEETS[system], requests[system, text], {})

    def box(system: str, text: str) -> None:
        assemble(system, SHEETS[system], parse(system, text, sheet=SHEETS[system]).request, {})

    form(*LINES[0])
    box(*LINES[0])  # warm up
    baseline = per_line(form, rounds)
    figure = per_line(box, rounds)
    reading = per_line(lambda system, text: parse(system, text, sheet=SHEETS[system]), rounds)
    print(f"{'path':<44}{'µs per line':>12}")
    print(f"{'assemble the request (the form)':<44}{baseline:>12.1f}")
    print(f"{'parse the line (the box)':<44}{reading:>12.1f}")
    print(f"{'parse + assemble':<44}{figure:>12.1f}   {figure / baseline:.2f} times the form")
    record(
        "roll box: parse + assemble a line",
        figure,
        "µs/line",
        baseline,
        "baseline: assemble the same request (the roll form)",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
