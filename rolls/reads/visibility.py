"""Who may see a roll: the one decision every door asks.

REST lists and details, the event log and its filters, the rule-state panel, the sheets'
resources, odds previews, exports, the CSV, the audit page, the pages' first paint, every socket
frame and every follow-up's refusal call `may_see`; nothing else decides it.

A roll is public, private (its roller and its characters' owners: the check's `audience`) or
blind (GMs only; the roller knows only that it happened), until a GM reveals it. GMs see all.
Follow-up events of a roll are as visible as the roll; other events carry their own visibility.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from django.utils.translation import gettext_lazy

from campaign.errors import NotAllowed
from campaign.models import Membership, Role
from eventlog.models import Visibility

# The one answer to anything about a roll the asker may not see (or a blind roll of their own):
# the same status, field, code and message whatever the roll holds, on REST and on the socket.
HIDDEN_ROLL = gettext_lazy("only the GM acts on a hidden roll until it is revealed")


class Shown(Protocol):
    """What the decision reads: a `Check` row has it, an event without a roll is given it."""

    visibility: str
    revealed: bool
    audience: list[int]


@dataclass(frozen=True)
class Facts:
    """The visibility facts of an event that belongs to no roll."""

    visibility: str
    revealed: bool = False
    audience: list[int] = field(default_factory=list)


def may_see(item: Shown, viewer: Membership) -> bool:
    """True when ``viewer`` may see ``item`` (a check, or the facts of an event) in full."""
    return (
        viewer.role == Role.GM
        or item.visibility == Visibility.PUBLIC
        or item.revealed
        or (item.visibility == Visibility.PRIVATE and viewer.user_id in item.audience)
    )


def outsider(campaign_id: int) -> Membership:
    """Whoever is not at the table but is shown its log (a webhook's receiver, a staff member in
    the admin who is not a member): they see what an observer sees, public and revealed rolls."""
    return Membership(campaign_id=campaign_id, user_id=None, role=Role.OBSERVER)


def require_may_see(item: Shown, viewer: Membership, field: str = "check") -> None:
    """Refuse, alike for every hidden roll, anything about a roll the viewer may not see."""
    if not may_see(item, viewer):
        raise NotAllowed(field, str(HIDDEN_ROLL))


def hidden_from(viewer: Membership, checks: Iterable[Shown]) -> list[Shown]:
    """The checks among ``checks`` that ``viewer`` may not see."""
    if viewer.role == Role.GM:
        return []
    return [check for check in checks if not may_see(check, viewer)]
