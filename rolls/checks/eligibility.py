"""The follow-ups after a roll: who may apply which, now, with which choices and at what cost.

One rule per follow-up, used twice: the services call `require` under the stream lock before
they apply one (on the true state), and the presenter calls `offers` to list what a viewer may
apply now (on the state that viewer may know, `rolls.known`). So a page offers exactly what the
server would accept, and a refusal is the rule's own error.

Hidden rolls: a member acts only on a roll they may see (`rolls.reads.visibility`). A blind roll is
the GMs' until it is revealed (its roller knows only that it happened); a private roll is also
its roller's and its character's owner's. Anything about a roll the caller may not see is refused
first, with the one `HIDDEN_ROLL` error, whatever the roll holds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy

from campaign.access import controls_character, require_controls_character
from campaign.errors import Conflict, DomainError, InvalidInput, NotAllowed, call_rules
from campaign.models import Campaign, Character, Membership, Role
from eventlog.models import Visibility
from rolls.models import Check
from rolls.reads.known import (
    dramatic_failures,
    helper_seqs,
    known_checks,
    open_periods,
    resources_for,
)
from rolls.reads.visibility import Facts, may_see, require_may_see
from rolls.rules import option
from rolls.systems import age, cofd, nice_damnit

PERIOD_OVER = {
    "chapter": gettext_lazy("this roll's chapter is over (or none was open when it was made)"),
    "scene": gettext_lazy("this roll's scene is over (or none was open when it was made)"),
}
ALREADY_TAKEN = {
    "chapter": gettext_lazy(
        "{name} has already taken an intentional dramatic failure this chapter"
    ),
    "scene": gettext_lazy("{name} has already taken an intentional dramatic failure this scene"),
}

DRAMATIC_FAILURE = "dramatic_failure"
FORTUNE = "fortune"
EXTRA_NICE = "extra_nice"
REVEAL = "reveal"


@dataclass
class Offer:
    """A follow-up a viewer may apply now; `as_json` is its shape in `follow_ups`."""

    kind: str
    choices: list[dict[str, Any]]
    limit: str | None = None
    balance: dict[str, int] | None = None
    period_id: UUID | None = None  # the chapter / scene a dramatic failure counts against

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "action": self.kind.replace("_", "-"),
            "limit": self.limit,
            "balance": self.balance,
            "choices": self.choices,
        }


@dataclass
class HelperUses:
    """The checks another roll has used as a teamwork helper, read once for a reading of the
    table and its copies (None: not read yet)."""

    seqs: set[int] | None = None


@dataclass
class Now:
    """The table as a rule reads it: the truth (``knower`` None, for the services) or what one
    member may know (for the offers shown to them). Read once per presentation: the copies made
    for each viewer (`known_to`) share what was read (characters, open periods, the dramatic
    failures taken, kept as the truth), and each shows its viewer only what they may know."""

    campaign: Campaign
    knower: Membership | None = None
    _balances: dict[str, dict[str, int]] = field(default_factory=dict)
    _characters: dict[UUID, Character | None] = field(default_factory=dict)
    _periods: dict[str, UUID | None] = field(default_factory=dict)  # the open session, chapter…
    _dramatic_failures: dict[tuple[UUID, UUID], list[Facts]] = field(default_factory=dict)
    _helpers: HelperUses = field(default_factory=HelperUses)

    def open_period(self, name: str) -> UUID | None:
        """The id of the open session, chapter or scene (``name``), None when none is open: the
        three are read at once, the first time one is asked."""
        if name not in self._periods:
            for period, found in open_periods(self.campaign.pk).items():
                self._periods.setdefault(period, found)
        return self._periods[name]

    def as_rolled(self, check: Check) -> Now:
        """This reading, made by the write of ``check``: the periods open as of its seq are the
        check's own (a roll opens and closes none), so presenting it reads none of them."""
        self._periods.setdefault("session", check.session_id)
        self._periods.setdefault("chapter", check.chapter_id)
        self._periods.setdefault("scene", check.scene_id)
        return self

    def known_to(self, viewer: Membership) -> Now:
        """The same reading of the table, for what ``viewer`` may know (balances are theirs)."""
        return Now(
            self.campaign,
            viewer,
            _characters=self._characters,
            _periods=self._periods,
            _dramatic_failures=self._dramatic_failures,
            _helpers=self._helpers,
        )

    def character(self, character_id: UUID) -> Character | None:
        if character_id not in self._characters:
            found = Character.objects.filter(pk=character_id).first()
            self._characters[character_id] = found
        return self._characters[character_id]

    def used_as_helper(self, check: Check) -> bool:
        """Whether another roll has used ``check`` as a teamwork helper: as read with the row
        where its reader could (`used_as_helper`: a catch-up page's rows, a follow-up's locked
        check, a roll just made), else the campaign's, once."""
        read_with_row = getattr(check, "used_as_helper", None)
        if read_with_row is not None:
            return bool(read_with_row)
        if self._helpers.seqs is None:
            self._helpers.seqs = helper_seqs(self.campaign)
        return check.seq in self._helpers.seqs

    def dramatic_failure_taken(self, period_id: UUID, character_id: UUID) -> bool:
        key = (period_id, character_id)
        if key not in self._dramatic_failures:  # one read for every viewer
            taken = dramatic_failures(
                campaign=self.campaign, period_id=period_id, character_id=character_id
            )
            self._dramatic_failures[key] = taken.get(character_id, [])
        return bool(known_checks(self.knower, self._dramatic_failures[key]))

    def read_for(self, checks: Iterable[Check]) -> None:
        """Read at once what offers on ``checks`` may read (a catch-up page): their characters
        in one statement, and the dramatic failures taken in the open period (the only one
        they are counted against) by all of them in another."""
        ids = {check.character_id for check in checks if check.character_id is not None}
        missing = ids - self._characters.keys()
        if missing:
            found = {c.pk: c for c in Character.objects.filter(pk__in=missing)}
            self._characters.update({pk: found.get(pk) for pk in missing})
        if self.campaign.system != "cofd" or not ids:
            return
        mode = option(self.campaign.options, "cofd", "intentional_dramatic_failure")
        if mode not in ("per_chapter", "per_scene"):
            return
        period_id = self.open_period("chapter" if mode == "per_chapter" else "scene")
        if period_id is None or all((period_id, c) in self._dramatic_failures for c in ids):
            return
        taken = dramatic_failures(campaign=self.campaign, period_id=period_id)
        for character_id in ids:
            self._dramatic_failures.setdefault(
                (period_id, character_id), taken.get(character_id, [])
            )

    def resource(self, character: Character, name: str) -> int:
        key = str(character.pk)
        if key not in self._balances:
            self._balances.update(resources_for(self.knower, [character]))
        return int(self._balances[key].get(name, 0))


def _roll_character(check: Check, now: Now) -> Character | None:
    return now.character(check.character_id) if check.character_id else None


def _character_of(check: Check, viewer: Membership, now: Now) -> Character:
    """The roll's character, which the viewer must control (its owner, or a GM)."""
    character = _roll_character(check, now)
    if character is None:
        raise InvalidInput("check", gettext_lazy("this roll was not made for a character"))
    require_controls_character(viewer, character)
    return character


def _for_roll(check: Check, viewer: Membership, now: Now, system: str) -> Character:
    """What every follow-up of a roll requires, the hidden-roll refusal first."""
    if not may_act(viewer):
        raise NotAllowed("role", gettext_lazy("observers watch the game; they cannot act in it"))
    require_may_see(check, viewer)
    if now.campaign.system != system or check.kind != "single":
        # The request is well formed; this roll (its system, its kind) refuses it: a conflict.
        raise Conflict("check", gettext_lazy("this follow-up does not apply to this roll"))
    character = _character_of(check, viewer, now)
    if not _in_open_session(check, now):
        # RULES 3.5, 4.2 (2), 5.3: the roll's moment, before its outcome is narrated; a roll
        # of a session that is over is history (or a Beat per old failure, once unlimited).
        raise Conflict(
            "session",
            gettext_lazy("this roll's session is over: its follow-ups were for its moment"),
        )
    return character


def _in_open_session(check: Check, now: Now) -> bool:
    return check.session_id is not None and now.open_period("session") == check.session_id


def _dramatic_failure(check: Check, viewer: Membership, now: Now) -> Offer:
    character = _for_roll(check, viewer, now, "cofd")
    mode = option(now.campaign.options, "cofd", "intentional_dramatic_failure")
    if mode == "off":
        raise Conflict(
            "check", gettext_lazy("intentional dramatic failures are off in this campaign")
        )
    if _made_without_dramatic_failures(check):  # what the roll was made under (#12, item 5)
        raise Conflict(
            "check",
            gettext_lazy("this roll was made while intentional dramatic failures were off"),
        )
    result = check.data["rolls"][0]["result"]
    if result.get("intentional"):
        # The rule refuses because the roll was already converted: a conflict, like the
        # losers of a race on different rolls (#12, item 6), not bad input.
        raise Conflict(
            "check", gettext_lazy("this roll has already been turned into a dramatic failure")
        )
    try:  # a success cannot become a dramatic failure: this roll's result refuses it
        call_rules(cofd.intentional_dramatic_failure, result, prefix="check.")
    except InvalidInput as refusal:
        raise Conflict(refusal.field, refusal.lazy_message) from refusal
    if now.used_as_helper(check):
        # RULES 3.7: a helper's dramatic failure costs the primary 4 dice, which it has rolled.
        raise Conflict(
            "check",
            gettext_lazy(
                "this roll has helped another roll: it can no longer become a dramatic failure"
            ),
        )
    period_id = None
    if mode in ("per_chapter", "per_scene"):
        name = "chapter" if mode == "per_chapter" else "scene"
        period_id = check.chapter_id if mode == "per_chapter" else check.scene_id
        if period_id is None or now.open_period(name) != period_id:
            raise Conflict(name, PERIOD_OVER[name])
        if now.dramatic_failure_taken(period_id, character.pk):
            raise Conflict("check", format_lazy(ALREADY_TAKEN[name], name=character.name))
    return Offer(
        DRAMATIC_FAILURE,
        [{"body": {}, "cost": None, "gain": {"beats": 1}}],
        limit=mode,
        period_id=period_id,
    )


def _fortune(check: Check, viewer: Membership, now: Now) -> Offer:
    character = _for_roll(check, viewer, now, "age")
    if not option(now.campaign.options, "age", "fortune_dice"):
        raise Conflict("check", gettext_lazy("Fortune dice are off in this campaign"))
    data = check.data
    roll = data["rolls"][0]
    if not roll["check"]["fortune_dice"]:  # what the roll was made under (#12, item 5)
        raise Conflict(
            "check", gettext_lazy("this roll was made without Fortune dice (they were off then)")
        )
    if data.get("fortune_spent"):
        raise Conflict("check", gettext_lazy("Fortune has already changed a die of this roll"))
    if roll["result"]["outcome"] == "auto_failure" or not roll["faces"]:
        raise Conflict(
            "check", gettext_lazy("an automatic failure has no dice for Fortune to change")
        )
    balance = now.resource(character, "fortune")
    choices = [
        {
            "body": {"die": die, "value": value},
            "cost": {"fortune": cost},
            "gain": None,
            "drama_die": die == age.DRAMA,
        }
        for die in range(3)
        for value in range(1, 7)
        if (cost := age.fortune_cost((die, value))) <= balance
    ]
    return Offer(FORTUNE, choices, balance={"fortune": balance})


def _extra_nice(check: Check, viewer: Membership, now: Now) -> Offer:
    _for_roll(check, viewer, now, "nice_damnit")
    if not option(now.campaign.options, "nice_damnit", "extra_nice"):
        raise Conflict("check", gettext_lazy("extra Nice! chips are off in this campaign"))
    roll = check.data["rolls"][0]
    if not roll["check"].get("extra_nice_enabled", True):  # what the roll was made under
        raise Conflict(
            "check", gettext_lazy("this roll was made without extra Nice! (they were off then)")
        )
    result = roll["result"]
    if result["extra_nice"]:
        raise Conflict("check", gettext_lazy("extra Nice! have already been taken on this roll"))
    allowed = nice_damnit.extra_nice_allowed(result["total"])
    if allowed == 0:
        raise Conflict(
            "count", gettext_lazy("no extra Nice! are possible on this roll (bad band or caps)")
        )
    choices = [
        {"body": {"count": n}, "cost": None, "gain": {"nice": n, "damnit": n}}
        for n in range(1, allowed + 1)
    ]
    return Offer(EXTRA_NICE, choices)


def _reveal(check: Check, viewer: Membership, now: Now) -> Offer:
    if viewer.role != Role.GM:
        raise NotAllowed("role", gettext_lazy("only a game master of this campaign may do this"))
    if check.visibility == Visibility.PUBLIC or check.revealed:
        raise Conflict("check", gettext_lazy("this roll is already visible to everyone"))
    return Offer(REVEAL, [{"body": {}, "cost": None, "gain": None}])


# What the roll alone decides of each follow-up: when the roll has closed it (its kind, its
# result, what was taken of it), the rule refuses it to anyone whatever the table, at or before
# the refusal that condition meets. `offers` asks this before the rule: a catch-up asks every
# rule about every check, and the roll has closed most of them (a success, a public roll).
def _single_roll(check: Check) -> dict[str, Any] | None:
    """The roll of a single check (the only kind a follow-up of a roll applies to)."""
    return check.data["rolls"][0] if check.kind == "single" else None


def _made_without_dramatic_failures(check: Check) -> bool:
    made_under = check.data.get("options") or {}
    return option(made_under, "cofd", "intentional_dramatic_failure") == "off"


def _dramatic_failure_closed(check: Check) -> bool:
    roll = _single_roll(check)
    if roll is None:
        return True
    result = roll["result"]
    return (
        bool(result.get("intentional"))
        or not cofd.may_become_dramatic_failure(result)
        or _made_without_dramatic_failures(check)
    )


def _fortune_closed(check: Check) -> bool:
    roll = _single_roll(check)
    return (
        roll is None
        or not roll["check"]["fortune_dice"]
        or bool(check.data.get("fortune_spent"))
        or roll["result"]["outcome"] == "auto_failure"
        or not roll["faces"]
    )


def _extra_nice_closed(check: Check) -> bool:
    roll = _single_roll(check)
    if roll is None:
        return True
    result = roll["result"]
    return (
        not roll["check"].get("extra_nice_enabled", True)
        or bool(result["extra_nice"])
        or nice_damnit.extra_nice_allowed(result["total"]) == 0
    )


def _reveal_closed(check: Check) -> bool:
    return check.visibility == Visibility.PUBLIC or check.revealed


CLOSED_BY_ROLL: dict[str, Callable[[Check], bool]] = {
    DRAMATIC_FAILURE: _dramatic_failure_closed,
    FORTUNE: _fortune_closed,
    EXTRA_NICE: _extra_nice_closed,
    REVEAL: _reveal_closed,
}


def _closed_by_roll(kind: str, check: Check) -> bool:
    try:
        return CLOSED_BY_ROLL[kind](check)
    except (LookupError, TypeError, AttributeError):  # a roll of another shape: the rule says
        return False


RULES: dict[str, Callable[[Check, Membership, Now], Offer]] = {
    DRAMATIC_FAILURE: _dramatic_failure,
    FORTUNE: _fortune,
    EXTRA_NICE: _extra_nice,
    REVEAL: _reveal,
}
# The follow-ups each system has, in the order a page shows them (reveal: every system).
BY_SYSTEM = {"cofd": (DRAMATIC_FAILURE,), "age": (FORTUNE,), "nice_damnit": (EXTRA_NICE,)}


def require(kind: str, check: Check, viewer: Membership, now: Now) -> Offer:
    """The follow-up ``kind`` as ``viewer`` may apply it to ``check`` now; the rule's error if
    they may not (services: with the true state, under the stream lock)."""
    return RULES[kind](check, viewer, now)


def may_act(viewer: Membership) -> bool:
    """Observers watch the game; players and GMs may apply follow-ups."""
    return viewer.role != Role.OBSERVER


def offers(check: Check, viewer: Membership, now: Now) -> list[dict[str, Any]]:
    """Every follow-up ``viewer`` may apply to ``check`` now, as `follow_ups` lists them."""
    if not may_act(viewer) or not may_see(check, viewer):
        return []
    # A roll's own follow-ups are for its session (`_for_roll`): after it, a reveal is left,
    # and none when the roll is shown to all already (most of a catch-up's rolls: asked first).
    kinds = BY_SYSTEM.get(now.campaign.system, ()) if _in_open_session(check, now) else ()
    if not kinds and _closed_by_roll(REVEAL, check):
        return []
    if viewer.role != Role.GM:
        # A player acts only for their own characters (`_character_of`): nothing to ask the
        # rules otherwise, nor a refusal to make (a catch-up asks for every other's roll).
        character = _roll_character(check, now)
        if character is None or not controls_character(viewer, character):
            return []
    shown = []
    for kind in (*kinds, REVEAL):
        if _closed_by_roll(kind, check):
            continue
        try:
            offer = require(kind, check, viewer, now)
        except DomainError:
            continue
        if offer.choices:
            shown.append(offer.as_json())
    return shown
