"""The chronicle of one session: what happened, roll by roll, as one viewer may see it.

Built from the log through the feed's own presenter (`present_events`), so what a viewer may not
see is a stub here too; rendered to Markdown here and to printable HTML by a template.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, npgettext

from campaign.models import Campaign, Character, Membership, Session
from campaign.sheets import RESOURCES
from eventlog import event_types as types
from eventlog.models import Event
from rolls.models import Check
from rolls.reads.present import present_events
from rolls.words import line_label, outcome_name, traits_text

PERIOD_EVENTS = {
    types.SESSION_STARTED: gettext_lazy("Session {number} begins"),
    types.SESSION_ENDED: gettext_lazy("Session {number} ends"),
    types.CHAPTER_STARTED: gettext_lazy("Chapter {number} begins"),
    types.CHAPTER_ENDED: gettext_lazy("Chapter {number} ends"),
    types.SCENE_STARTED: gettext_lazy("Scene {number} begins"),
    types.SCENE_ENDED: gettext_lazy("Scene {number} ends"),
}


@dataclass
class RollLine:
    """One character's dice in a roll: what was added up, the faces, and what they made."""

    character: str
    terms: str
    dice: str
    outcome: str
    detail: str


@dataclass
class Entry:
    seq: int
    time: str
    kind: str  # period | roll | followup | call | reveal | hidden
    title: str
    rolls: list[RollLine] = field(default_factory=list)
    physical_dice: bool = False


@dataclass
class Chronicle:
    campaign: str
    system: str
    session_number: int
    session_title: str
    entries: list[Entry]
    gains: dict[str, dict[str, int]]  # character name → resource → gained this session
    proof: list[str]

    @property
    def gains_shown(self) -> dict[str, dict[str, int]]:
        """`gains` with each resource by its name in the reader's language (Beats, Биты)."""
        return {
            name: {str(RESOURCES.get(key, key)): delta for key, delta in changes.items()}
            for name, changes in sorted(self.gains.items())
        }


def session_chronicle(*, campaign: Campaign, membership: Membership, session: Session) -> Chronicle:
    last = session.ended_seq or campaign.head_seq
    events = Event.objects.filter(
        campaign=campaign, seq__gte=session.started_seq, seq__lte=last
    ).order_by("seq")
    presented = present_events(events, membership)
    entries = [chronicle_entry(campaign.system, shown) for shown in presented]
    return Chronicle(
        campaign=campaign.name,
        system=campaign.system,
        session_number=session.number,
        session_title=session.title,
        entries=[entry for entry in entries if entry is not None],
        gains=_gains(campaign, presented),
        proof=_proof(presented),
    )


def chronicle_entry(system: str, shown: Mapping[str, Any]) -> Entry | None:
    """One presented event as a line of the chronicle (None: an event the chronicle skips)."""
    seq, kind = shown["seq"], shown["type"]
    when = timezone.localtime(datetime.fromisoformat(shown["created_at"])).strftime("%H:%M")
    who = (shown.get("actor") or {}).get("username") or _("the server")
    if shown.get("redacted"):
        if kind == types.CHECK_ROLLED:
            return Entry(seq, when, "hidden", _("{who} made a hidden roll").format(who=who))
        return None
    payload = shown.get("payload") or {}
    if kind in PERIOD_EVENTS:
        title = str(PERIOD_EVENTS[kind]).format(number=payload.get("number", "?"))
        if payload.get("title"):
            title += f": {payload['title']}"
        return Entry(seq, when, "period", title)
    if kind == types.CHECK_ROLLED:
        return _roll_entry(system, seq, when, who, payload, shown.get("dice_marks") or [])
    if kind == types.CHECK_DRAMATIC_FAILURE_TAKEN:
        return Entry(
            seq, when, "followup",
            _("{who} turned roll #{target} into a dramatic failure (a Beat)").format(
                who=who, target=payload.get("check_seq")
            ),
        )  # fmt: skip
    if kind == types.CHECK_FORTUNE_SPENT:
        change = payload.get("change") or {}
        return Entry(
            seq, when, "followup",
            _("{who} spent {cost} Fortune on roll #{target}: die {die} becomes {value}").format(
                who=who, cost=payload.get("cost"), target=payload.get("check_seq"),
                die=int(change.get("die", 0)) + 1, value=change.get("value"),
            ),
        )  # fmt: skip
    if kind == types.CHECK_EXTRA_NICE_TAKEN:
        return Entry(
            seq, when, "followup",
            _("{who} took {n} extra Nice! on roll #{target}").format(
                who=who, n=_chips_taken(payload), target=payload.get("check_seq")
            ),
        )  # fmt: skip
    if kind == types.CHECK_REVEALED:
        return Entry(
            seq, when, "reveal",
            _("The GM revealed roll #{target}").format(target=payload.get("check_seq")),
        )  # fmt: skip
    if kind == types.CHECK_CALLED:
        names = ", ".join(payload.get("character_names") or ())
        request = payload.get("request") or {}
        what = request.get("label") or traits_text(system, request.get("traits")) or _("a check")
        return Entry(
            seq, when, "call",
            _("The GM called for {what} from {names}").format(what=what, names=names),
        )  # fmt: skip
    return None


def _roll_entry(
    system: str, seq: int, when: str, who: str, payload: Mapping[str, Any], marks: list[Any]
) -> Entry:
    label = payload.get("label") or payload.get("task") or ""
    rolls = payload.get("rolls") or []
    names = " vs ".join(roll.get("character_name") or "?" for roll in rolls)
    title = _("{who} rolled for {names}").format(who=who, names=names or "?")
    if label:
        title += f" — «{label}»"
    lines = []
    for n, roll in enumerate(rolls):
        result = roll.get("result") or {}
        terms = " + ".join(
            f"{line_label(system, term)} {term.get('value')}"
            for term in roll.get("breakdown") or ()
        )
        lines.append(
            RollLine(
                character=roll.get("character_name") or "?",
                terms=terms or "—",
                dice=_dice_text(marks[n] if n < len(marks) else None, roll),
                outcome=outcome_name(system, str(result.get("outcome", ""))),
                detail=_describe(result),
            )
        )
    return Entry(seq, when, "roll", title, lines, physical_dice=payload.get("dice") == "manual")


def _chips_taken(payload: Mapping[str, Any]) -> Any:
    """The extra Nice! chips a follow-up took: a key of its result, not the rule option."""
    try:
        return payload["result"]["extra_nice"]
    except (KeyError, TypeError):
        return "?"


def _dice_text(marks: list[list[dict[str, Any]]] | None, roll: Mapping[str, Any]) -> str:
    """The dice as the feed draws them (the server's dice marks): each die with what it rolled
    on after it, chained with ↯ (a CofD 10 again: "10↯7"); else the faces as drawn."""
    if not marks:
        return " ".join(str(face) for face in roll.get("faces") or ())
    return " ".join("↯".join(str(face["face"]) for face in die) for die in marks)


def _describe(result: Mapping[str, Any]) -> str:
    if "successes" in result:
        n = result["successes"]
        return npgettext("chronicle", "{n} success", "{n} successes", n).format(n=n)
    if "total" in result:
        return _("total {n}").format(n=result["total"])
    return ""


def _gains(campaign: Campaign, presented: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """What the session's visible rolls (with their follow-ups) and the GM's restores did to
    resources: read from what the projection recorded per check, never re-decided here."""
    names = {
        str(character.pk): character.name
        for character in Character.objects.filter(campaign=campaign).only("id", "name")
    }
    rolled = [s["seq"] for s in presented if s["type"] == types.CHECK_ROLLED and not s["redacted"]]
    gains: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    recorded = Check.objects.filter(campaign=campaign, seq__in=rolled)
    for changes_by_character in recorded.values_list("resource_changes", flat=True):
        for character, changes in changes_by_character.items():
            for name, delta in changes.items():
                gains[character][name] += delta
    for shown in presented:
        if shown["type"] == types.CHARACTER_WILLPOWER_RESTORED and not shown["redacted"]:
            payload = shown["payload"]
            gains[str(payload["character_id"])]["willpower"] += int(payload["amount"])
    return {
        names.get(character, character): dict(changes)
        for character, changes in gains.items()
        if any(changes.values())
    }


def _proof(presented: list[dict[str, Any]]) -> list[str]:
    lines = []
    for shown in presented:
        payload = shown.get("payload") or {}
        if shown["type"] == types.SESSION_STARTED and payload.get("key_commitment"):
            lines.append(
                _("First roll key committed at the start: {commitment}").format(
                    commitment=payload["key_commitment"]
                )
            )
        if shown["type"] == types.SESSION_ENDED and payload.get("final_hash"):
            lines.append(
                _("Receipt: #{seq}:{hash}").format(
                    seq=payload.get("final_seq"), hash=payload["final_hash"]
                )
            )
    if not any(shown["type"] == types.SESSION_ENDED for shown in presented):
        lines.append(_("The session is still open: its receipt is written when it ends."))
    lines.append(
        _("Check it yourself: python -m rolls.trust.verify export.json --receipt SEQ:HASH")
    )
    return lines


def to_markdown(chronicle: Chronicle) -> str:
    title = _("Session {number}").format(number=chronicle.session_number)
    if chronicle.session_title:
        title += f": {chronicle.session_title}"
    zone = _("Times in {zone}.").format(zone=timezone.get_current_timezone_name())
    out = [f"# {chronicle.campaign} — {title}", "", zone]
    for entry in chronicle.entries:
        if entry.kind == "period":
            out += ["", f"## {entry.title}", ""]
            continue
        out.append(f"- `#{entry.seq}` {entry.time} — {entry.title}")
        for line in entry.rolls:
            detail = f" ({line.detail})" if line.detail else ""
            out.append(
                f"  - {line.character}: {line.terms} → [{line.dice}] → **{line.outcome}**{detail}"
            )
        if entry.physical_dice:
            out.append(f"  - {_('physical dice')}")
    if chronicle.gains:
        out += ["", "## " + _("Gained this session"), ""]
        for name, changes in chronicle.gains_shown.items():
            listed = ", ".join(f"{resource} {delta:+d}" for resource, delta in changes.items())
            out.append(f"- {name}: {listed}")
    out += ["", "## " + _("Proof"), ""] + [f"- {line}" for line in chronicle.proof]
    return "\n".join(out) + "\n"
