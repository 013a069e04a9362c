"""Reads of the log for one member: the event log as they may see it.

The REST API and the WebSocket both read events through `events_for`, which presents them with
`rolls.reads.present` (visibility decided by `rolls.reads.visibility.may_see`), so a player sees
exactly the same thing over either.
"""

from __future__ import annotations

import functools
from typing import Any

from django.utils.translation import gettext as _

from campaign.errors import Conflict, InvalidInput
from campaign.models import Campaign, Character, Membership, Role
from eventlog.chain import GENESIS, is_chain_hash
from eventlog.models import Event
from eventlog.recorders import recorder
from rolls.models import Check, CheckCall
from rolls.reads.present import present_events
from rolls.reads.visibility import may_see


def events_for(
    *,
    membership: Membership,
    after: int = 0,
    until: int | None = None,
    types: list[str] | None = None,
    session: str | None = None,
    chapter: str | None = None,
    character: str | None = None,
    limit: int = 200,
) -> list[dict[str, Any]]:
    """A page of the campaign's log after ``after``, as this member may see it.

    Filtering by character matches only events the member may see in full: a hidden roll's stub
    hides whose character it concerned, so the filter must not tell it either.
    """
    read = functools.partial(
        recorder().page,  # rows, not a queryset: a page of the log is read on every poll
        membership.campaign_id,
        limit=limit,
        until=until,
        types=types or (),
    )
    context = [
        (f"{name}_id", value)
        for name, value in (("session", session), ("chapter", chapter))
        if value
    ]
    if not character:
        return present_events(read(after=after, context=context), membership)
    context.append(("character_id", character))
    shown: list[dict[str, Any]] = []
    while len(shown) < limit:
        batch = read(after=after, context=context)
        if not batch:
            break
        after = batch[-1].seq
        shown += [e for e in present_events(batch, membership) if not e["redacted"]]
    return shown[:limit]


def chain_holds(campaign_id: int, seq: int, hash: str) -> bool:
    """Does the campaign's log still have event ``seq`` with this hash (a witness's receipt)?"""
    if seq == 0:
        return hash == GENESIS
    stored = Event.objects.filter(campaign_id=campaign_id, seq=seq).values_list("hash", flat=True)
    return stored.first() == hash


class HistoryChanged(Conflict):
    """A witness's history is no longer the log's (docs/websocket.md, "Witnesses")."""

    code = "history_changed"


def parse_after(text: str) -> tuple[int, str | None]:
    """``after=<seq>`` or ``after=<seq>:<hash>`` (a witness: the hash it saw for seq), as the
    socket and the REST log take it; raises InvalidInput naming ``after``."""
    seq, colon, witness = text.partition(":")
    if (
        not (seq.isascii() and seq.isdigit())
        or len(seq) > 18
        or (colon and not is_chain_hash(witness))
    ):
        what = _("must be the last seq you have seen (0 or more), or <seq>:<its hash>")
        raise InvalidInput("after", what)
    return int(seq), (witness or None)


def check_witness(campaign_id: int, seq: int, witness: str | None, head: int) -> None:
    """Raise HistoryChanged when the log no longer has event ``seq`` with the hash a witness
    saw (a restored older backup, a rewritten and re-hashed history)."""
    if witness is None or chain_holds(campaign_id, seq, witness):
        return
    message = _("the log no longer holds event #{seq} with the hash this client saw")
    details = {"seq": seq, "hash": witness, "head": head}
    raise HistoryChanged("after", message.format(seq=seq), details=details)


def open_calls_for(campaign: Campaign, membership: Membership) -> list[dict[str, Any]]:
    """The open calls for a check as ``membership`` may see them: a GM, every one; a player,
    those awaiting an answer from a character they own, each with its answers as they may see
    them. A call closes by itself once every character it names has answered: one a player's
    list kept until then would tell them when the others' answers, hidden from them, came."""
    calls = list(CheckCall.objects.filter(campaign=campaign, closed=False).order_by("seq"))
    if membership.role == Role.GM:
        return [call_data(call) for call in calls]
    mine = _owned(campaign.pk, membership)
    calls = [call for call in calls if (mine & set(call.character_ids)) - set(call.answered)]
    return [
        call_data(call, answered)
        for call, answered in zip(calls, answers_seen(calls, membership, mine), strict=True)
    ]


def closed_seen(call: CheckCall, viewer: Membership, answered: dict[str, int | None]) -> bool:
    """Whether ``viewer`` may know that ``call`` is closed. The GM's closing is an event everyone
    is shown; a call that closed by itself, on its last answer, is closed to them once they see
    every answer (``answered``, as `answers_seen` gives it them): else it would tell them that an
    answer hidden from them was given."""
    if viewer.role == Role.GM or not call.closed:
        return call.closed
    if not set(call.answered) >= set(call.character_ids):
        return True  # the GM closed it before every character had answered
    return set(answered) >= set(call.character_ids)


def answers_seen(
    calls: list[CheckCall], viewer: Membership, mine: set[str] | None = None
) -> list[dict[str, int | None]]:
    """Each call's ``answered`` ({character id: seq}) as ``viewer`` may see it: all for a GM;
    else the answers they may see, and their own characters' (no seq when the answer is hidden
    from them: they are not offered a roll the call would refuse). Another character's hidden
    answer would tie its stub to that character and to the call's request. ``mine``: the
    characters the viewer owns, when the caller has read them."""
    if viewer.role == Role.GM:
        return [dict(call.answered) for call in calls]
    if mine is None:
        mine = _owned(viewer.campaign_id, viewer)
    seqs = {seq for call in calls for seq in call.answered.values()}
    answers = (
        Check.objects.filter(campaign_id=viewer.campaign_id, seq__in=seqs)
        .select_related(None)
        .only("seq", "visibility", "revealed", "audience")
    )
    seen = {check.seq for check in answers if may_see(check, viewer)}
    return [
        {
            character: seq if seq in seen else None
            for character, seq in call.answered.items()
            if seq in seen or character in mine
        }
        for call in calls
    ]


def _owned(campaign_id: int, viewer: Membership) -> set[str]:
    if viewer.user_id is None:  # an outsider (a staff member not at the table) owns none
        return set()
    owned = Character.objects.filter(campaign_id=campaign_id, owner_id=viewer.user_id)
    return {str(pk) for pk in owned.values_list("pk", flat=True)}


def call_data(call: CheckCall, answered: dict[str, int | None] | None = None) -> dict[str, Any]:
    """A call as the API shows it; ``answered``: as the viewer may see it (the GM's: all)."""
    return {
        "id": call.pk,
        "seq": call.seq,
        "characters": call.character_ids,
        "request": call.request,
        "answered": call.answered if answered is None else answered,
        "closed": call.closed,
    }
