"""Checks and events as one member may see them, with the follow-ups that member may apply now
and the dice marks the rules gave each die: the shape of every door (REST, socket, first paint,
audit, exports).

The REST API, the socket's catch-up and its live frames, the pages and the exports all present
through this module, and it asks `rolls.reads.visibility.may_see` for every item: a player sees
exactly the same thing over any of them. What may not be seen is a stub that keeps the seq (so
feeds stay gapless) and says only that something happened, and by whom.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from functools import cached_property
from json.encoder import encode_basestring_ascii
from typing import Any

from django.contrib.auth import get_user_model

from campaign.models import Campaign, Membership, Role, Session
from eventlog.chain import timestamp
from eventlog.event_types import CHECK_REVEALED, CHECK_ROLLED, FOLLOWUP_TYPES
from eventlog.models import Event, Visibility
from rolls.checks import eligibility
from rolls.models import Check
from rolls.reads.page_checks import CheckRow, checks_of, target_seq
from rolls.reads.visibility import Facts, may_see
from rolls.systems.marks import dice_marks, roll_terms
from rolls.systems.marks_text import dumps as _dumps
from rolls.systems.marks_text import rolls_json

FEED_LIMIT = 50  # the first paint; older rolls load on demand (GET …/checks/?before=)
# Follow-ups point at the check they belong to; its visibility governs them.
CHECK_EVENT_TYPES = (CHECK_ROLLED, *FOLLOWUP_TYPES)


def marks_of(system: str, data: dict[str, Any]) -> list[list[list[dict[str, Any]]]]:
    """The dice marks of every roll of a check (its data or its event's payload)."""
    return [dice_marks(system, roll["check"], roll["result"]) for roll in data.get("rolls", [])]


def terms_of(system: str, data: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """What every roll of a check rolled, as named terms (``rolls.systems.marks.roll_terms``)."""
    return [roll_terms(system, roll["check"]) for roll in data.get("rolls", [])]


def present_check(
    check: Check, viewer: Membership, now: eligibility.Now | None = None
) -> dict[str, Any]:
    """A check as ``viewer`` may see it; ``now`` shares one reading of the table across many."""
    shown: dict[str, Any] = {
        "seq": check.seq,
        "kind": check.kind,
        "system": check.system,
        "visibility": check.visibility,
        "revealed": check.revealed,
        "actor_id": check.actor_id,
        "created_at": check.created_at,
    }
    if not may_see(check, viewer):
        return {**shown, "redacted": True}
    data = check.data
    return {
        **shown,
        "redacted": False,
        "outcome": check.outcome,
        "character": check.character_id,
        "session": check.session_id,
        "chapter": check.chapter_id,
        "label": check.label,
        "task": check.task,
        "manual": check.manual,
        "data": data,
        "dice_marks": marks_of(check.system, data),
        "roll_terms": terms_of(check.system, data),
        "follow_ups": eligibility.offers(check, viewer, now or _now_of(check, viewer)),
    }


def present_checks(checks: Iterable[Check], viewer: Membership) -> list[dict[str, Any]]:
    now = _now(viewer.campaign_id, viewer)
    return [present_check(check, viewer, now) for check in checks]


def _now_of(check: Check, viewer: Membership) -> eligibility.Now:
    """The reading of the table the check was just decided in (`check_roll` leaves it on the
    check it returns), else a fresh one."""
    decided_in = getattr(check, "now", None)
    if decided_in is not None:
        return decided_in.as_rolled(check).known_to(viewer)
    return _now(check.campaign_id, viewer)


def _now(campaign_id: int, viewer: Membership) -> eligibility.Now:
    return eligibility.Now(Campaign.objects.get(pk=campaign_id), knower=viewer)


# --- events ----------------------------------------------------------------------------------


def _facts(event: Event, checks: dict[int, Check | CheckRow]) -> Check | CheckRow | Facts:
    """What decides an event's visibility: its check's, or its own."""
    target = target_seq(event)
    if target is not None and event.type != CHECK_REVEALED and target in checks:
        return checks[target]
    return Facts(event.visibility, audience=[event.actor_id])


def written_check(event: Event) -> Check | None:
    """The check row the write of ``event`` inserted, with the reading of the table it was
    decided in (`check_roll` leaves both): the table as of the event's seq, read under the stream
    lock. None for an event read from the log (or written by anything else)."""
    if event.type != CHECK_ROLLED:
        return None
    for row in getattr(event, "projected", ()):
        if isinstance(row, Check) and getattr(row, "now", None) is not None:
            return row
    return None


class _EventPresenter:
    """Presents a batch of events for any number of members, reading what they share once.

    ``names``: usernames the caller has read already (the actors not among them are read).
    A check the write of the event has just inserted (`written_check`) is presented from what
    the write had in hand: the row, the campaign, the character and the open periods as of its
    seq, and the dramatic failures taken as its answer read them under the lock."""

    def __init__(
        self,
        events: list[Event],
        names: dict[int, str] | None = None,
        now_of: Callable[[], eligibility.Now] | None = None,
        checks: dict[int, CheckRow] | None = None,
    ) -> None:
        self.events = events
        actors = {event.actor_id for event in events if event.actor_id is not None}
        names = names or {}
        self.names = {
            **{uid: names[uid] for uid in actors if uid in names},
            **_usernames(actors - names.keys()),
        }
        self._checks: dict[int, Check | CheckRow] | None = checks
        self._heads: dict[int, str] = {}  # each event's JSON up to its hash: every viewer's
        self._actors: dict[int | None, str] = {}
        self._contexts: dict[tuple, str] = {}  # the text of each event's four ids, by the ids
        # One reading of the table, shared by members (``now_of`` gives one the pages of a
        # catch-up share, when one is needed).
        self._now: eligibility.Now | None = None
        self._now_of = now_of
        self._read_for = False  # the reading has what the offers on these checks read
        self._nows: dict[tuple[int, str], eligibility.Now] = {}
        written = written_check(events[0]) if len(events) == 1 else None
        if written is not None:
            self._checks = {written.seq: written}
            self._now = written.now.as_rolled(written)
            self._read_for = True

    @property
    def checks(self) -> dict[int, Check | CheckRow]:
        """The checks the events belong to, read once, when a hidden event or an offer needs
        them (a public event shown to someone who may not act needs none)."""
        if self._checks is None:
            self._checks = checks_of(self.events)
        return self._checks

    def check_of(self, event: Event) -> Check | CheckRow | None:
        """The check ``event`` belongs to (its own for a roll), None for any other event."""
        return self.checks.get(target_seq(event) or 0)

    def now_for(self, viewer: Membership) -> eligibility.Now:
        """The table as ``viewer`` may know it: one per viewer for the whole batch, sharing
        the periods and characters read for the others."""
        key = (viewer.user_id, viewer.role)
        now = self._nows.get(key)
        if now is None:
            now = self._nows[key] = self._base_now(viewer).known_to(viewer)
        return now

    def _base_now(self, viewer: Membership) -> eligibility.Now:
        if not self._read_for:
            if self._now is None:
                self._now = self._now_of() if self._now_of else _now(viewer.campaign_id, viewer)
            self._now.read_for(self.checks.values())  # once for the batch, not per check
            self._read_for = True
        return self._now

    def for_member(self, viewer: Membership) -> list[dict[str, Any]]:
        return [self._one(event, viewer) for event in self.events]

    def viewer_class(self, event: Event, viewer: Membership) -> Hashable:
        """What ``event``'s presentation for ``viewer`` depends on: members of one class are
        shown the same thing (the live feed and the socket's catch-up render once per class).

        It depends on the viewer only through `may_see` and the follow-ups offered: every GM
        sees all and is offered alike ("gm"); a member who may not see the event gets the stub
        ("stub"); one who sees it is offered follow-ups only as a player acting for the roll's
        character (its owner, whose offers read what they may know: their own class); everyone
        else who sees it (observers, the other players) is offered nothing ("seen")."""
        if viewer.role == Role.GM:
            return "gm"
        public = event.visibility == Visibility.PUBLIC
        if not (public or may_see(_facts(event, self.checks), viewer)):
            return "stub"
        if event.type in CHECK_EVENT_TYPES and viewer.role == Role.PLAYER:
            check = self.check_of(event)
            if check is not None and check.character_id is not None:
                # Read as the offers read it (one read of each character, shared).
                character = self._base_now(viewer).character(check.character_id)
                if character is not None and character.owner_id == viewer.user_id:
                    return ("owner", viewer.user_id)
        return "seen"

    @cached_property
    def _roll_characters(self) -> set[Any]:
        """The characters whose rolls the batch's check events belong to."""
        return {
            check.character_id
            for event in self.events
            if event.type in CHECK_EVENT_TYPES
            and (check := self.check_of(event)) is not None
            and check.character_id is not None
        }

    def owns_a_roll(self, viewer: Membership) -> bool:
        """Whether a check event of the batch belongs to a roll of a character ``viewer`` owns
        (read as `viewer_class` reads it), whether or not they may see it."""
        now = self._base_now(viewer)
        return any(
            (character := now.character(character_id)) is not None
            and character.owner_id == viewer.user_id
            for character_id in self._roll_characters
        )

    def by_class(
        self,
        viewers: Iterable[Membership],
        render: Callable[[Event, Membership], Any] | None = None,
    ) -> list[list[Any]]:
        """The events as each of ``viewers`` may see them, each event rendered once per class
        of viewer (`viewer_class`); the same renderings are shared between viewers of a class.
        ``render``: `_one` (dicts, the default) or `_text` (JSON texts)."""
        render = render or self._one
        viewers = list(viewers)
        shown: list[list[Any]] = [[] for _ in viewers]
        for event in self.events:
            rendered: dict[Hashable, Any] = {}
            for n, viewer in enumerate(viewers):
                key = self.viewer_class(event, viewer)
                if key not in rendered:
                    rendered[key] = render(event, viewer)
                shown[n].append(rendered[key])
        return shown

    def _one(self, event: Event, viewer: Membership) -> dict[str, Any]:
        shown: dict[str, Any] = {
            "seq": event.seq,
            "type": event.type,
            "created_at": _time(event),
            "actor": {"id": event.actor_id, "username": self.names.get(event.actor_id)},
            "visibility": event.visibility,
            # Safe on a stub too: a hidden event's hash covers a secret salt (eventlog.chain). Pages
            # keep the last one as a witness and check that later events link to it.
            "prev_hash": event.prev_hash,
            "hash": event.hash,
        }
        if not self.shown_in_full(event, viewer):
            shown["redacted"] = True
            return shown
        shown.update(
            redacted=False,
            session=_text(event.session_id),
            scene=_text(event.scene_id),
            chapter=_text(event.chapter_id),
            character=_text(event.character_id),
            payload=event.payload,
        )
        if event.type not in CHECK_EVENT_TYPES:
            return shown
        # A roll's marks come from its payload: its check is read only for the offers.
        needed = event.type != CHECK_ROLLED or eligibility.may_act(viewer)
        check = self.check_of(event) if needed else None
        marks = self._marks(event, check)
        if marks is not None:
            shown["dice_marks"], shown["roll_terms"] = marks
        shown["follow_ups"] = self._follow_ups(check, viewer)
        return shown

    def texts_for(self, viewer: Membership) -> list[tuple[str, bool]]:
        """Each event as ``viewer`` may see it, as its JSON text (`json.dumps` of `_one`'s,
        compact: the same bytes), and whether it is shown in full. The stored payload's
        canonical text goes in as it is, where `json.dumps` would write the same: a page is
        then presented without decoding the payloads nothing reads (#17)."""
        texts = []
        for event in self.events:
            texts.append(self._text(event, viewer))
            # Written: its decoded payload goes (decoded again if another class of viewer or a
            # follow-up reads it). Kept for the page, the payloads were most of what the garbage
            # collector traversed, over and over, during a catch-up.
            _forget_payload(event)
        for event in self.events:  # a roll a later follow-up read again
            if "_payload" in event.__dict__:
                _forget_payload(event)
        return texts

    def _text(self, event: Event, viewer: Membership) -> tuple[str, bool]:
        head = self._heads.get(event.seq)
        if head is None:
            actor = self._actors.get(event.actor_id)
            if actor is None:
                actor = self._actors[event.actor_id] = _dumps(
                    {"id": event.actor_id, "username": self.names.get(event.actor_id)}
                )
            head = self._heads[event.seq] = (
                f'{{"seq":{event.seq!r},"type":{_string(event.type)},'
                f'"created_at":{_string(_time(event))},"actor":{actor},'
                f'"visibility":{_string(event.visibility)},'
                f'"prev_hash":{_string(event.prev_hash)},"hash":{_string(event.hash)}'
            )
        if not self.shown_in_full(event, viewer):
            return head + ',"redacted":true}', False
        ids = (event.session_id, event.scene_id, event.chapter_id, event.character_id)
        context = self._contexts.get(ids)
        if context is None:  # a page has a few distinct ones
            session, scene, chapter, character = map(_nullable, ids)
            context = self._contexts[ids] = (
                f',"redacted":false,"session":{session},"scene":{scene},'
                f'"chapter":{chapter},"character":{character},"payload":'
            )
        parts = [head, context, _payload_json(event)]
        if event.type in CHECK_EVENT_TYPES:
            check = self.check_of(event)
            marks = self._marks_text(event, check)
            if marks is not None:  # its two keys, spliced in
                parts += (",", marks[1:-1])
            follow_ups = self._follow_ups(check, viewer)
            parts += (',"follow_ups":', _dumps(follow_ups) if follow_ups else "[]")
        parts.append("}")
        return "".join(parts), True

    def shown_in_full(self, event: Event, viewer: Membership) -> bool:
        """Whether ``viewer`` is shown ``event`` in full (else as a stub): follow-ups are as
        visible as their roll."""
        public = event.visibility == Visibility.PUBLIC  # needs no check row to decide
        return public or may_see(_facts(event, self.checks), viewer)

    def _marks(self, event: Event, check: Check | CheckRow | None) -> tuple[list, list] | None:
        """A check event's dice marks and roll terms (None: a follow-up of a check not found);
        ``check``: the check it belongs to (`check_of`)."""
        found = self._rolls(event, check)
        if found is None:
            return None
        system, rolls = found
        return marks_of(system, {"rolls": rolls}), terms_of(system, {"rolls": rolls})

    def _marks_text(self, event: Event, check: Check | CheckRow | None) -> str | None:
        """A check event's dice marks and roll terms as `rolls_json` writes them: a roll's as
        its check row keeps them (its payload is not decoded), else made from `_rolls` (a
        follow-up's). None: a follow-up of a check not found."""
        if event.type == CHECK_ROLLED:
            kept = getattr(check, "marks_json", "")
            if kept:
                return kept
        found = self._rolls(event, check)
        return None if found is None else rolls_json(*found)

    def _rolls(
        self, event: Event, check: Check | CheckRow | None
    ) -> tuple[str, list[dict[str, Any]]] | None:
        """The system and the rolls a check event's dice marks and roll terms are of: a roll's
        own; a follow-up's, the first roll as it amended it (None: a follow-up of a check not
        found)."""
        if event.type == CHECK_ROLLED:
            return event.payload["system"], event.payload.get("rolls", [])
        if check is None:
            return None
        roll = check.event.payload["rolls"][0]
        amended = {
            **roll,
            **{k: event.payload[k] for k in ("check", "result") if k in event.payload},
        }
        return check.system, [amended]

    def _follow_ups(
        self, check: Check | CheckRow | None, viewer: Membership
    ) -> list[dict[str, Any]]:
        """The follow-ups ``viewer`` may apply to a check event's ``check`` (`check_of`)."""
        if check is not None and eligibility.may_act(viewer):
            return eligibility.offers(check, viewer, self.now_for(viewer))
        return []


def present_events(
    events: Iterable[Event], viewer: Membership, names: dict[int, str] | None = None
) -> list[dict[str, Any]]:
    return _EventPresenter(list(events), names).for_member(viewer)


def shown_in_full(event: Event, viewer: Membership) -> bool:
    """Whether the feed shows ``viewer`` this one event in full (else as a stub)."""
    return _EventPresenter([event]).shown_in_full(event, viewer)


def hidden_seqs(
    campaign_id: int,
    viewer: Membership,
    *,
    among: Iterable[int] | None = None,
    until: int | None = None,
) -> set[int]:
    """The seqs of the events (``among`` these, up to ``until``) that ``viewer`` is shown as
    stubs: the feed's own presentation, so that no other door shows more than the feed."""
    if viewer.role == Role.GM:
        return set()
    candidates = Event.objects.filter(campaign_id=campaign_id).exclude(visibility=Visibility.PUBLIC)
    if among is not None:
        candidates = candidates.filter(seq__in=list(among))
    if until is not None:
        candidates = candidates.filter(seq__lte=until)
    events = list(candidates)
    presenter = _EventPresenter(events)  # the decision only: nothing is presented
    return {event.seq for event in events if not presenter.shown_in_full(event, viewer)}


def present_to_each(
    event: Event, members: list[Membership], names: dict[int, str] | None = None
) -> dict[int, dict[str, Any]]:
    """One event as each member may see it (the live feed's per-audience rendering), rendered
    once per class of viewer: members of one class share the same dict. ``names``: the members'
    usernames when the caller has them."""
    shown = _EventPresenter([event], names).by_class(members)
    return {member.user_id: own[0] for member, own in zip(members, shown, strict=True)}


def texts_to_each(
    event: Event, members: list[Membership], names: dict[int, str] | None = None
) -> dict[int, tuple[str, bool]]:
    """`present_to_each` as JSON texts (the bytes `json.dumps` writes of its dicts, compact),
    and whether each member is shown the event in full: the live feed's frames, whose payload
    goes in as its stored canonical text instead of being encoded again."""
    presenter = _EventPresenter([event], names)
    shown = presenter.by_class(members, presenter._text)
    return {member.user_id: own[0] for member, own in zip(members, shown, strict=True)}


class SharedPage:
    """A page of the log read once and presented per class of viewer (`viewer_class`): the
    socket's catch-up renders it once per class and shares it between the sockets catching up
    over the same range (rolls/live/catchup.py)."""

    def __init__(
        self,
        events: list[Event],
        now_of: Callable[[], eligibility.Now] | None = None,
        names: dict[int, str] | None = None,
        checks: dict[int, CheckRow] | None = None,
    ) -> None:
        """``now_of``: a reading of the table as of the same head (or later), which the pages
        of a catch-up share: each reads only what its checks add to it. ``names``: the
        usernames read already (`names` gives them with the page's own actors). ``checks``:
        the events' check rows (`checks_of`) when the caller has read them."""
        self._presenter = _EventPresenter(events, names, now_of=now_of, checks=checks)

    def class_of(self, viewer: Membership) -> Hashable:
        """Viewers of one class are shown the whole page alike."""
        if viewer.role == Role.GM:
            return "gm"
        presenter = self._presenter
        if viewer.role == Role.PLAYER and presenter.owns_a_roll(viewer):
            # Offered follow-ups on their own rolls somewhere on the page: a class of their own
            # (what `viewer_class` of those events says), without asking it of every event.
            return ("owner", viewer.user_id)
        # No stake in any roll here: a public event is "seen" by all of them, so only whether
        # each hidden one is shown sets them apart.
        return tuple(
            presenter.viewer_class(event, viewer)
            for event in presenter.events
            if event.visibility != Visibility.PUBLIC
        )

    def for_member(self, viewer: Membership) -> list[dict[str, Any]]:
        return self._presenter.for_member(viewer)

    def texts_for(self, viewer: Membership) -> list[tuple[str, bool]]:
        """`for_member`'s events as their JSON texts, and whether each is shown in full."""
        return self._presenter.texts_for(viewer)

    @property
    def events(self) -> list[Event]:
        return self._presenter.events

    @property
    def names(self) -> dict[int, str]:
        """The usernames of the page's actors."""
        return self._presenter.names


def _usernames(user_ids: set[int | None]) -> dict[int, str]:
    ids = {user_id for user_id in user_ids if user_id is not None}
    if not ids:
        return {}
    User = get_user_model()
    return dict(User.objects.filter(pk__in=ids).values_list("pk", User.USERNAME_FIELD))


def _text(value: object) -> str | None:
    return None if value is None else str(value)


_string = encode_basestring_ascii


def _nullable(value: object) -> str:
    return "null" if value is None else _string(str(value))


def _time(event: Event) -> str:
    """The event's time as its document writes it: a page's event has it as read."""
    return getattr(event, "created_text", None) or timestamp(event.created_at)


def _forget_payload(event: Event) -> None:
    forget = getattr(event, "forget_payload", None)  # a `Paged` event's (its text stays)
    if forget is not None:
        forget()


def _payload_json(event: Event) -> str:
    """The payload as `_dumps` writes it: the stored canonical text as it is when it is ASCII
    without DEL (then the two agree byte for byte: keys sorted, no spaces, the same escapes),
    else encoded again (the canonical text keeps those characters unescaped)."""
    # One read has it stored (PostgreSQL's); a written event has it in hand (eventlog/stream.py).
    text = getattr(event, "payload_text", None) or getattr(event, "canonical_text", None)
    if text is not None and text.isascii() and "\x7f" not in text:
        return text
    return _dumps(event.payload)


# --- the feed window -------------------------------------------------------------------------


def feed_window(campaign: Campaign, head: int, session: Session | None) -> tuple[list[Check], bool]:
    """The checks a table page starts with: the last FEED_LIMIT of the open session's
    (``session``, as the caller read it; of all, when none is open), and whether there are older
    ones."""
    checks = Check.objects.filter(campaign=campaign, seq__lte=head)
    if session is not None:
        checks = checks.filter(seq__gt=session.started_seq)
    recent = list(checks.order_by("-seq")[: FEED_LIMIT + 1])[::-1]
    return recent[-FEED_LIMIT:], len(recent) > FEED_LIMIT


def follow_ups_by_seq(
    campaign: Campaign, viewer: Membership, head: int, periods: dict[str, Any]
) -> tuple[dict[str, list], int]:
    """The follow-ups ``viewer`` may apply now to the checks of the feed window, by seq, and the
    first seq the window covers (older checks carry their own `follow_ups`). ``periods``: the
    open session, chapter and scene by name, as the caller read them (the rules read them too)."""
    opened = {name: None if period is None else period.pk for name, period in periods.items()}
    now = eligibility.Now(campaign, knower=viewer, _periods=opened)
    window, _ = feed_window(campaign, head, periods["session"])
    offered = {}
    for check in window:
        if may_see(check, viewer):
            found = eligibility.offers(check, viewer, now)
            if found:
                offered[str(check.seq)] = found
    return offered, window[0].seq if window else head + 1
