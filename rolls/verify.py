"""Verify a campaign's event log: the gapless sequence and the hash chain.

Standard library and `rolls` only, so that anyone can check an exported log without the server:

    python -m rolls.verify export.json

An export is ``{"campaign": {...}, "events": [event, …]}`` where each event has the fields that
`rolls.chain.event_hash` covers plus its ``hash``. Exit status 0 when everything verifies.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rolls.chain import GENESIS, event_hash

HASHED_FIELDS = (
    "campaign",
    "seq",
    "type",
    "payload",
    "actor",
    "created_at",
    "visibility",
    "session",
    "scene",
    "chapter",
    "character",
    "prev_hash",
)


@dataclass(frozen=True)
class Problem:
    campaign: int
    seq: int | None
    event_type: str | None
    what: str

    def __str__(self) -> str:
        where = f"event #{self.seq} ({self.event_type})" if self.seq is not None else "stream"
        return f"campaign {self.campaign}, {where}: {self.what}"


def verify_chain(
    campaign: int,
    events: Iterable[Mapping[str, Any]],
    *,
    head_seq: int | None = None,
    head_hash: str | None = None,
) -> tuple[int, Problem | None]:
    """Check seq 1..n without gaps and every hash link; return (events read, first problem)."""
    expected_seq, prev_hash, count = 1, GENESIS, 0
    for event in events:
        count += 1
        seq, event_type = event["seq"], event["type"]

        def problem(what: str, seq: int = seq, event_type: str = event_type) -> Problem:
            return Problem(campaign, seq, event_type, what)

        if seq != expected_seq:
            return count, problem(
                f"expected seq {expected_seq}: events {expected_seq}..{seq - 1} are missing"
                if seq > expected_seq
                else f"expected seq {expected_seq}: seq out of order or repeated"
            )
        if event["campaign"] != campaign:
            return count, problem(f"belongs to campaign {event['campaign']}, not this stream")
        if event["prev_hash"] != prev_hash:
            return count, problem("prev_hash does not link to the previous event's hash")
        computed = event_hash(**{field: event[field] for field in HASHED_FIELDS})
        if computed != event["hash"]:
            return count, problem(
                "hash mismatch: the event's contents differ from what was chained "
                "(a field was altered after it was logged)"
            )
        prev_hash, expected_seq = event["hash"], expected_seq + 1
    last_seq = expected_seq - 1
    if head_seq is not None and head_seq != last_seq:
        what = f"the stream head says {head_seq} events, the log holds {last_seq}"
        return count, Problem(campaign, None, None, what)
    if head_hash is not None and last_seq and head_hash != prev_hash:
        what = "the stream head's hash is not the last event's"
        return count, Problem(campaign, None, None, what)
    return count, None


def verify_export(document: Mapping[str, Any]) -> list[Problem]:
    campaign = document["campaign"]
    _, problem = verify_chain(
        campaign["id"],
        document["events"],
        head_seq=campaign.get("head_seq"),
        head_hash=campaign.get("head_hash"),
    )
    return [problem] if problem else []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("export", help="a campaign log exported as JSON")
    args = parser.parse_args(argv)
    with open(args.export, encoding="utf-8") as handle:
        document = json.load(handle)
    problems = verify_export(document)
    for problem in problems:
        print(f"FAIL {problem}")
    if not problems:
        print(f"OK campaign {document['campaign']['id']}: {len(document['events'])} events verify")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
