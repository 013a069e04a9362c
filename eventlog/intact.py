"""The stream's own integrity, checked as it is read: seqs gapless from 1, each event chained to
the one before, each hash what the event's content gives, and the campaign's head at the last
event. (Whether the dice follow from the seeds and the outcomes from the dice is the trust
layer's business: `verify_log`.)"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from eventlog.stream import hash_of

GENESIS = "0" * 64  # the prev_hash of a campaign's first event (Campaign.head_hash's default)


class ChainBroken(Exception):
    def __init__(self, campaign_id: int, seq: int, what: str) -> None:
        super().__init__(f"campaign {campaign_id}, seq {seq}: {what}")
        self.campaign_id, self.seq, self.what = campaign_id, seq, what


def refuse(problem: ChainBroken) -> None:
    raise problem


def intact(
    campaign: Any,
    events: Iterable[Any],
    on_problem: Callable[[ChainBroken], None] = refuse,
) -> Iterator[Any]:
    """Yield `events` (a Campaign's whole stream of Events, in seq order), checking each on the
    way; a problem is raised (or handed to `on_problem`) before the event is yielded."""
    due, previous = 1, GENESIS
    for event in events:
        if event.seq != due:
            on_problem(ChainBroken(campaign.pk, event.seq, f"seq {due} is missing"))
        elif event.prev_hash != previous:
            on_problem(ChainBroken(campaign.pk, event.seq, "not chained to the event before"))
        elif hash_of(event) != event.hash:
            on_problem(ChainBroken(campaign.pk, event.seq, "its hash does not match its content"))
        due, previous = event.seq + 1, event.hash
        yield event
    if (due - 1, previous) != (campaign.head_seq, campaign.head_hash):
        on_problem(ChainBroken(campaign.pk, campaign.head_seq, "the head is not the last event"))
