"""Verify a campaign's event log: the hash chain, the roll keys, every roll and its outcome.

Standard library and `rolls` only, so that anyone can check an exported log without the server:

    python -m rolls.trust.verify export.json [--receipt SEQ:HASH ...] [--earlier old.json ...]

An export is ``{"campaign": {"id", "system", "head_seq", "head_hash", …}, "events": [event, …]}``
where each event has the fields `eventlog.chain.HASHED_FIELDS` plus its ``hash``; an event its
viewer may not see is ``{"redacted": true, …}``: its sealed hashed document (eventlog.chain),
whose hash is checked too. Checked (docs/verification.md):

* chain: seq 1..n without gaps, every ``prev_hash`` link, every hash, the campaign's head; every
  hidden event carries a secret salt;
* sessions: one open at a time, numbered 1, 2, …; ``session.started`` commits to the first roll
  key, every ``check.rolled`` discloses its key (if this viewer may see it) and commits to the
  next; the receipt in ``session.ended`` is the event before it; receipts a player kept
  (``--receipt``, or the heads of earlier exports, ``--earlier``) are still in the chain;
* ``check.rolled``: system and options are the ones in force, ``manual`` dice only while
  ``manual_dice`` is on; server faces follow from the roll's key and client seed
  (`rolls.systems.KeyedDice`); each result follows from its faces (`rolls.systems.resolve`),
  the comparison from the results, CofD Beats from the result;
* follow-ups (Fortune, extra Nice!, intentional dramatic failure): allowed by the options, the new
  check is the rolled one with only the follow-up's change, the new result follows from the faces.

Exit status: 0 when everything verifies, 1 when something does not, 2 when the file is unusable.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import marshal
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from eventlog.chain import GENESIS, canonical_json, document_hash, is_sealed
from eventlog.event_types import (
    ALL_TYPES,
    CAMPAIGN_CREATED,
    CAMPAIGN_OPTIONS_CHANGED,
    CAMPAIGN_RENAMED,
    CHAPTER_ENDED,
    CHAPTER_STARTED,
    CHARACTER_CHANGED,
    CHARACTER_CREATED,
    CHARACTER_FAVOURITE_ADDED,
    CHARACTER_FAVOURITE_REMOVED,
    CHARACTER_WILLPOWER_RESTORED,
    CHECK_CALL_CLOSED,
    CHECK_CALLED,
    CHECK_DRAMATIC_FAILURE_TAKEN,
    CHECK_EXTRA_NICE_TAKEN,
    CHECK_FORTUNE_SPENT,
    CHECK_REVEALED,
    CHECK_ROLLED,
    MEMBER_JOINED,
    MEMBER_LEFT,
    MEMBER_ROLE_CHANGED,
    SCENE_ENDED,
    SCENE_STARTED,
    SESSION_ENDED,
    SESSION_STARTED,
    TASK_RESET,
)
from rolls import systems
from rolls.rules import ROLL_COUNTS, compare, compares, failed_attempt, option
from rolls.systems import KeyedDice, age, cofd, d6pool, nice_damnit, storyteller

MAX_PROBLEMS = 200  # per campaign: a wholesale forgery need not be listed event by event
FORTUNE, EXTRA_NICE, DRAMATIC = (
    CHECK_FORTUNE_SPENT,
    CHECK_EXTRA_NICE_TAKEN,
    CHECK_DRAMATIC_FAILURE_TAKEN,
)
# Event types whose content has nothing to re-derive: only their place in the chain is checked.
CHAIN_ONLY_TYPES = frozenset(
    {
        CAMPAIGN_RENAMED,
        MEMBER_JOINED,
        MEMBER_ROLE_CHANGED,
        MEMBER_LEFT,
        CHARACTER_CREATED,
        CHARACTER_CHANGED,
        CHARACTER_FAVOURITE_ADDED,
        CHARACTER_FAVOURITE_REMOVED,
        CHARACTER_WILLPOWER_RESTORED,
        CHAPTER_STARTED,
        CHAPTER_ENDED,
        SCENE_STARTED,
        SCENE_ENDED,
        CHECK_REVEALED,
        CHECK_CALLED,
        CHECK_CALL_CLOSED,
        TASK_RESET,
    }
)
FOLLOWUP_SYSTEMS = {FORTUNE: "age", EXTRA_NICE: "nice_damnit", DRAMATIC: "cofd"}
# What untrusted JSON can raise when it lacks a key or has the wrong shape (RuleError included).
_MALFORMED = (KeyError, TypeError, ValueError, AttributeError, IndexError)
_MISSING = object()
# Each system's one die size: a roll's faces are the next faces of its key's stream at that size.
_SIDES = {
    mod.__name__.rpartition(".")[2]: mod.SIDES
    for mod in (age, cofd, d6pool, nice_damnit, storyteller)
}
RESOLUTIONS_KEPT = 4096  # distinct (system, check, faces) resolved, per verifier
QUICK_FACES_MAX = 4096  # more faces than any roll draws: the long way, which stops at the rules'
CACHED_FACES = 4  # rolls of up to this many faces are resolved once (3d6: 216 kinds; 2d10: 100)


@dataclass(frozen=True)
class Problem:
    campaign: int
    seq: int | None
    event_type: str | None
    what: str

    def __str__(self) -> str:
        where = f"event #{self.seq} ({self.event_type})" if self.seq is not None else "stream"
        return f"campaign {self.campaign}, {where}: {self.what}"


@dataclass(frozen=True)
class Receipt:
    """What a participant kept at a session's end: an event's seq (optional) and chain hash."""

    hash: str
    seq: int | None = None

    @classmethod
    def parse(cls, text: str) -> Receipt:
        seq, _, digest = text.strip().rpartition(":")
        seq = seq.strip().lstrip("#")
        if not _is_hex(digest.lower(), 64) or (seq and not seq.isdigit()):
            raise ValueError(f"a receipt is SEQ:HASH or HASH (64 hex digits), not {text!r}")
        return cls(digest.lower(), int(seq) if seq else None)

    def __str__(self) -> str:
        return f"#{self.seq}:{self.hash}" if self.seq is not None else self.hash


@dataclass
class SessionSummary:
    """One session as the verifier saw it, and what its key commitments prove."""

    number: Any
    session_id: str
    started_seq: int
    ended_seq: int | None = None
    server_rolls: int = 0
    proven: int = 0  # server rolls whose key matches its commitment and gives every face
    manual_rolls: int = 0
    hidden_rolls: int = 0
    final_seq: int | None = None
    final_hash: str | None = None

    @property
    def ok(self) -> bool:
        return self.proven == self.server_rolls

    def describe(self) -> str:
        span = f"#{self.started_seq}..#{self.ended_seq}" if self.ended_seq else "open"
        parts = [
            f"{self.proven}/{self.server_rolls} server roll(s) follow from keys committed "
            "before them and the players' client seeds"
        ]
        if self.manual_rolls:
            parts.append(f"{self.manual_rolls} manual roll(s), not covered by the keys")
        if self.hidden_rolls:
            parts.append(f"{self.hidden_rolls} roll(s) hidden from this export's viewer")
        if self.final_hash:
            parts.append(f"receipt #{self.final_seq}:{self.final_hash}")
        return f"session {self.number} ({span}): " + "; ".join(parts)


@dataclass
class StreamReport:
    campaign: int
    events: int = 0
    redacted: int = 0
    problems: list[Problem] = field(default_factory=list)
    unlisted: int = 0  # problems beyond MAX_PROBLEMS
    # The sessions this verifier saw, after the `sessions_before` that a resumed verifier's
    # keeper holds (`earlier_sessions` reads them when a report is wanted: `all_sessions`).
    sessions: list[SessionSummary] = field(default_factory=list)
    sessions_before: int = 0
    earlier_sessions: Callable[[], list[SessionSummary]] | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return not self.problems

    def all_sessions(self) -> list[SessionSummary]:
        """Every session of the stream, the earlier ones read in (once) if they are kept apart."""
        if self.sessions_before and self.earlier_sessions is not None:
            earlier = self.earlier_sessions()
            if len(earlier) != self.sessions_before:
                raise ValueError(
                    f"{len(earlier)} earlier session(s) kept, {self.sessions_before} expected"
                )
            self.sessions[:0] = earlier
            self.sessions_before, self.earlier_sessions = 0, None
        return self.sessions

    @property
    def sessions_proven(self) -> int:
        """Closed sessions whose every server roll this viewer may see is proven."""
        return sum(1 for s in self.all_sessions() if s.ended_seq is not None and s.ok)

    def detail_lines(self, indent: str = "  ") -> list[str]:
        lines = [indent + session.describe() for session in self.all_sessions()]
        if self.redacted:
            lines.append(
                f"{indent}{self.redacted} event(s) redacted for this export's viewer: "
                "linked into the chain, contents not checked"
            )
        lines += [f"FAIL {problem}" for problem in self.problems]
        if self.unlisted:
            lines.append(f"FAIL … and {self.unlisted} more problem(s)")
        return lines


@dataclass(slots=True)
class _Roll:
    """A single check's roll as its follow-ups change it (as rolls.checks.projectors applies them).

    Kept packed (marshal: the parsed JSON values as they are, a fraction of the dicts' memory,
    and several times faster to pack than JSON): a long log has many rolls that may yet be
    followed up. A CofD roll keeps only its outcome unless it failed (only a failure can become
    a dramatic failure).
    """

    system: str
    packed: bytes
    followups: tuple[str, ...] = ()

    @classmethod
    def keep(cls, system: str, roll: Mapping[str, Any]) -> _Roll:
        result = roll["result"]
        outcome = result.get("outcome")
        if system == "cofd" and outcome != "failure":
            if isinstance(outcome, str):
                return cls(system, _outcome_only(outcome))
            return cls(system, _pack((None, None, {"outcome": outcome})))
        return cls(system, _pack((roll["check"], roll["faces"], result)))

    def unpack(self) -> tuple[Any, Any, Any]:
        check, faces, result = marshal.loads(self.packed)
        return check, faces, result

    def update(self, check: Any, faces: Any, result: Any, followup: str) -> None:
        self.packed = _pack((check, faces, result))
        self.followups += (followup,)


def _pack(values: tuple[Any, Any, Any]) -> bytes:
    """Values decoded from JSON (dicts, lists, str, int, float, bool, None) as marshal bytes;
    `_Roll.unpack` gives them back equal and of the same types."""
    try:
        return marshal.dumps(values)
    except ValueError:  # not from JSON (a caller's own objects): through JSON first
        return marshal.dumps(tuple(_plain(list(values))))


@functools.lru_cache(maxsize=64)
def _outcome_only(outcome: str) -> bytes:
    return _pack((None, None, {"outcome": outcome}))


def _is_salt(payload: Any) -> bool:
    return isinstance(payload, Mapping) and _is_hex(payload.get("salt"), 32)


_HEX = re.compile("[0-9a-f]+")


def _is_hex(value: Any, length: int | None = None) -> bool:
    if not isinstance(value, str) or (length is not None and len(value) != length):
        return False
    return _HEX.fullmatch(value) is not None


def _plain(value: Any) -> Any:
    """As JSON would store it (tuples become lists, int keys become strings)."""
    return json.loads(json.dumps(value, sort_keys=True))


def _same(a: Any, b: Any) -> bool:
    return a == b or _plain(a) == _plain(b)


def _diff(stored: Any, expected: Any, by: str) -> str:
    """The fields that differ, as "outcome is 'success', the faces give 'failure'"."""
    if isinstance(stored, Mapping) and isinstance(expected, Mapping):
        a, b = _plain(stored), _plain(expected)
        parts = [
            f"{key} is {a.get(key, '(missing)')!r}, {by} {b.get(key, '(missing)')!r}"
            for key in sorted(set(a) | set(b))
            if a.get(key, _MISSING) != b.get(key, _MISSING)
        ]
        return "; ".join(parts)
    return f"it is {stored!r}, {by} {expected!r}"


class StreamVerifier:
    """Checks one campaign's events, fed in stored order; `finish` returns the report.

    One pass: every server roll is proven as it streams by, from the key its event discloses
    (checked against the commitment published before it) and its client seed. Memory holds a
    compact copy of each single check that a follow-up may still change.
    """

    def __init__(
        self,
        campaign: int,
        *,
        system: str | None = None,
        receipts: Iterable[Receipt] = (),
        rules: bool = True,
        earlier_events: Callable[[int, int], list[Mapping[str, Any]]] | None = None,
    ) -> None:
        self.campaign = campaign
        # After a resume: a follow-up of a check verified before the checkpoint reads that
        # check.rolled and its earlier follow-ups back, (check seq, before seq) -> events.
        self._earlier_events = earlier_events
        self._resumed_at = 0
        self.report = StreamReport(campaign)
        self._expected_system = system
        # The open session's key chain: the commitment the next check.rolled's key must match
        # (published by the event at `_commitment_seq`), and that roll's index in the session.
        self._next_key: Any = None
        self._commitment_seq = 0
        self._key_index = 0
        self._receipts = {receipt: False for receipt in receipts}
        self._rules = rules
        self._next_seq, self._prev_hash = 1, GENESIS
        self._last: tuple[int, Any] = (0, GENESIS)
        self._system: str | None = None
        self._options: dict[str, Any] = {}
        self._session: SessionSummary | None = None
        self._checks: dict[int, _Roll] = {}
        self._hidden: set[int] = set()
        self._resolutions: dict[tuple[str, str, tuple[int, ...]], Any] = {}
        self._handlers: dict[str, Callable[[Mapping[str, Any]], None]] = {
            CAMPAIGN_CREATED: self._campaign_created,
            CAMPAIGN_OPTIONS_CHANGED: self._options_changed,
            SESSION_STARTED: self._session_started,
            SESSION_ENDED: self._session_ended,
            CHECK_ROLLED: self._check_rolled,
            FORTUNE: self._followup,
            EXTRA_NICE: self._followup,
            DRAMATIC: self._followup,
        }

    # --- reporting ---------------------------------------------------------------------------

    def _problem_at(self, seq: int | None, event_type: str | None, what: str) -> None:
        if len(self.report.problems) >= MAX_PROBLEMS:
            self.report.unlisted += 1
        else:
            self.report.problems.append(Problem(self.campaign, seq, event_type, what))

    def note(self, what: str) -> None:
        """A problem of the stream as a whole (not of one event)."""
        self._problem_at(None, None, what)

    def _problem(self, event: Mapping[str, Any], what: str) -> None:
        self._problem_at(event.get("seq"), event.get("type"), what)

    # --- the stream --------------------------------------------------------------------------

    def feed(self, event: Mapping[str, Any], *, hash_checked: bool = False) -> None:
        """``hash_checked``: the caller has already found the event's hash to be its content's
        (the server hashes its stored canonical text; rolls.trust.stored_log)."""
        self.report.events += 1
        if not isinstance(event, Mapping):
            self._problem_at(None, None, f"event {self.report.events} is not an object")
            return
        self._link(event, hash_checked)
        self._last = (event.get("seq"), event.get("hash"))
        self._match_receipts(event)
        event_type = event.get("type")
        if event.get("redacted"):
            self.report.redacted += 1
            if event_type == CHECK_ROLLED and self._session is not None:
                self._session.hidden_rolls += 1
                self._advance_keys(event, event.get("payload") or {})
            self._hidden.add(event.get("seq"))
            return
        if event_type not in ALL_TYPES:
            self._problem(event, f"unknown event type {event_type!r}")
            return
        if is_sealed(event.get("visibility")) and not _is_salt(event.get("payload")):
            self._problem(
                event,
                "is hidden from some members but carries no secret salt: its hash would let "
                "anyone test guesses of its content",
            )
        handler = self._handlers.get(event_type) if self._rules else None
        if handler is not None:
            try:
                handler(event)
            except _MALFORMED as error:
                self._problem(
                    event, f"unreadable {event_type} event: {type(error).__name__} {error}"
                )

    def _link(self, event: Mapping[str, Any], hash_checked: bool = False) -> None:
        """One problem per event at most; then resynchronise on the stored values, so that the
        events after an edit, a gap or a swap are still checked against each other."""
        seq, expected = event.get("seq"), self._next_seq
        if not isinstance(seq, int) or seq < expected:
            # Out of place: leave the state, so the next event links to the one before this.
            self._problem(event, f"expected seq {expected}: seq out of order or repeated")
            return
        if seq > expected:
            what = f"expected seq {expected}: events {expected}..{seq - 1} are missing or moved"
        elif event.get("campaign") != self.campaign:
            what = f"belongs to campaign {event.get('campaign')}, not this stream"
        elif event.get("prev_hash") != self._prev_hash:
            what = "prev_hash does not link to the previous event's hash"
        elif not hash_checked and self._computed_hash(event) != event.get("hash"):
            what = (
                "hash mismatch: the event's contents differ from what was chained "
                "(a field was altered after it was logged)"
            )
        else:
            what = ""
        if what:
            self._problem(event, what)
        self._next_seq, self._prev_hash = seq + 1, event.get("hash")

    @staticmethod
    def _computed_hash(event: Mapping[str, Any]) -> str | None:
        """A full event is sealed here if it is hidden; a redacted one already is its sealed
        hashed document (eventlog.chain), so its hash is checked too."""
        try:
            return document_hash(event)
        except _MALFORMED:
            return None

    def _match_receipts(self, event: Mapping[str, Any]) -> None:
        for receipt, matched in self._receipts.items():
            if matched:
                continue
            if receipt.seq is None:
                self._receipts[receipt] = event.get("hash") == receipt.hash
            elif receipt.seq == event.get("seq"):
                self._receipts[receipt] = True
                if event.get("hash") != receipt.hash:
                    self._problem(
                        event,
                        f"the receipt says its hash was {receipt.hash}, the log has "
                        f"{event.get('hash')}: history up to here changed after the receipt",
                    )

    # --- checkpoints ---------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """Everything needed to carry on later from here (plain JSON): where the chain and the
        key chain stand, the rules in force, and what was proven so far. Take it before
        `finish`, which adds the head's and the receipts' problems."""
        report = self.report
        open_index = report.sessions.index(self._session) if self._session else None
        return {
            "next_seq": self._next_seq,
            "prev_hash": self._prev_hash,
            "last": list(self._last),
            "system": self._system,
            "options": self._options,
            "next_key": self._next_key,
            "commitment_seq": self._commitment_seq,
            "key_index": self._key_index,
            "open_session": open_index,
            "events": report.events,
            "redacted": report.redacted,
            "unlisted": report.unlisted,
            "problems": [[p.seq, p.event_type, p.what] for p in report.problems],
            "sessions": [vars(session).copy() for session in report.sessions],
            "sessions_before": report.sessions_before,  # open_session indexes "sessions"
        }

    @classmethod
    def resume(cls, campaign: int, state: Mapping[str, Any], **kwargs: Any) -> StreamVerifier:
        """A verifier that carries on after the events `state` (from `snapshot`) covered."""
        verifier = cls(campaign, **kwargs)
        report = verifier.report
        report.events, report.redacted = state["events"], state["redacted"]
        report.unlisted = state["unlisted"]
        report.problems = [Problem(campaign, *problem) for problem in state["problems"]]
        report.sessions = [SessionSummary(**session) for session in state["sessions"]]
        report.sessions_before = state.get("sessions_before", 0)  # (checkpoints before it: 0)
        if state["open_session"] is not None:
            verifier._session = report.sessions[state["open_session"]]
        verifier._next_seq, verifier._prev_hash = state["next_seq"], state["prev_hash"]
        verifier._last = tuple(state["last"])
        verifier._system, verifier._options = state["system"], dict(state["options"])
        verifier._next_key, verifier._key_index = state["next_key"], state["key_index"]
        verifier._commitment_seq = state["commitment_seq"]
        verifier._resumed_at = verifier._next_seq
        return verifier

    def _earlier_roll(self, target: int, before: int) -> _Roll | None:
        """A check verified before the checkpoint, with the follow-ups it had by ``before``."""
        if self._earlier_events is None or target >= self._resumed_at:
            return None
        events = self._earlier_events(target, before)
        if not events or events[0].get("type") != CHECK_ROLLED:
            return None
        payload = events[0]["payload"]
        if payload.get("kind") != "single" or len(payload.get("rolls", ())) != 1:
            return None
        roll = _Roll.keep(payload["system"], payload["rolls"][0])
        for followup in events[1:]:
            check, faces, _ = roll.unpack()
            new = followup["payload"]
            roll.update(new.get("check", check), faces, new["result"], followup["type"])
        return roll

    def finish(self, *, head_seq: int | None = None, head_hash: str | None = None) -> StreamReport:
        last_seq, last_hash = self._last
        if head_seq is not None and head_seq != last_seq:
            what = f"the stream head says {head_seq} events, the log holds {last_seq}"
            self._problem_at(None, None, what)
        elif head_hash is not None and last_seq and head_hash != last_hash:
            self._problem_at(None, None, "the stream head's hash is not the last event's")
        for receipt, matched in self._receipts.items():
            if not matched:
                where = f"has no event #{receipt.seq}" if receipt.seq else "has no event with it"
                self._problem_at(
                    None, None, f"receipt {receipt}: the log {where}; it was changed or is another"
                )
        return self.report

    # --- rules in force ------------------------------------------------------------------------

    def _campaign_created(self, event: Mapping[str, Any]) -> None:
        payload = event["payload"]
        self._system, self._options = payload["system"], dict(payload["options"])
        if self._expected_system and self._system != self._expected_system:
            self._problem(
                event, f"creates a {self._system} campaign; the export says {self._expected_system}"
            )

    def _options_changed(self, event: Mapping[str, Any]) -> None:
        self._options = dict(event["payload"]["options"])

    def _rules_in_force(self, event: Mapping[str, Any], payload: Mapping[str, Any]) -> None:
        if payload["system"] != self._system:
            self._problem(event, f"is a {payload['system']} roll in a {self._system} campaign")
        if not _same(payload["options"], self._options):
            what = _diff(payload["options"], self._options, "in force")
            self._problem(event, f"records other rule options than those in force: {what}")
        dice, manual = (
            payload["dice"],
            bool(option(self._options, payload["system"], "manual_dice")),
        )
        if dice not in ("server", "manual"):
            self._problem(event, f"dice is {dice!r}, not server or manual")
        elif (dice == "manual") != manual:
            state = "on" if manual else "off"
            self._problem(event, f"is marked {dice} dice, but manual_dice was {state}")

    # --- sessions and their seeds --------------------------------------------------------------

    def _session_started(self, event: Mapping[str, Any]) -> None:
        payload = event["payload"]
        if self._session is not None:
            open_ = self._session
            self._problem(
                event, f"session {open_.number} (#{open_.started_seq}) is still open, never ended"
            )
        expected = self.report.sessions_before + len(self.report.sessions) + 1
        if payload.get("number") != expected:
            self._problem(event, f"is numbered {payload.get('number')!r}, expected {expected}")
        commitment = payload.get("key_commitment")
        if not _is_hex(commitment, 64):
            self._problem(event, "publishes no key_commitment (a SHA-256 hex digest)")
        if event.get("session") != payload.get("id"):
            self._problem(
                event, f"is tagged session {event.get('session')}, starts {payload['id']}"
            )
        self._session = SessionSummary(
            number=payload.get("number"),
            session_id=str(payload.get("id")),
            started_seq=event["seq"],
        )
        self.report.sessions.append(self._session)
        self._next_key, self._commitment_seq, self._key_index = commitment, event["seq"], 0

    def _session_ended(self, event: Mapping[str, Any]) -> None:
        payload, seq = event["payload"], event["seq"]
        session = self._session
        if session is None or str(payload.get("id")) != session.session_id:
            self._problem(event, f"ends session {payload.get('number')!r}, which is not open")
            return
        self._session, self._next_key = None, None
        session.ended_seq = seq
        session.final_seq, session.final_hash = seq - 1, event.get("prev_hash")
        if (payload.get("final_seq"), payload.get("final_hash")) != (
            session.final_seq,
            session.final_hash,
        ):
            self._problem(event, "its receipt (final_seq, final_hash) is not the event before it")

    def _advance_keys(self, event: Mapping[str, Any], payload: Mapping[str, Any]) -> None:
        """Every check.rolled of a session, hidden or not, commits to the next roll's key."""
        next_key = payload.get("next_key")
        if not _is_hex(next_key, 64):
            self._problem(event, "publishes no next_key (the commitment to the next roll's key)")
        self._next_key, self._commitment_seq = next_key, event.get("seq")
        self._key_index += 1

    def _roll_key(self, event: Mapping[str, Any], payload: Mapping[str, Any]) -> bytes | None:
        """This roll's key, if it is the session's next one and matches its commitment."""
        dice_key = payload["dice_key"]
        index, key = dice_key["index"], dice_key["key"]
        if index != self._key_index:
            what = f"uses roll key {index!r}; it is the session's roll {self._key_index}"
            self._problem(event, what)
            return None
        if not _is_hex(key, 64):
            self._problem(event, "discloses no roll key (64 hex digits)")
            return None
        if hashlib.sha256(bytes.fromhex(key)).hexdigest() != self._next_key:
            self._problem(
                event,
                f"its roll key does not match the commitment published by #{self._commitment_seq}"
                " before it was rolled",
            )
            return None
        return bytes.fromhex(key)

    def _rolls_follow(self, system: str, rolls: list, dice: KeyedDice) -> bool:
        """Do all the event's rolls follow from ``dice``? The quick way, which gives the same
        answer as rolling them (`_reroll`) and says nothing more: each roll's stored faces must
        be the next faces of the key's stream (one die size per system), and its stored result
        what those faces resolve to (`_resolved`, which also requires the check to use exactly
        those faces: `rolls.systems.resolve`). False: roll them again to say what is wrong."""
        sides = _SIDES.get(system)
        if sides is None:
            return False
        try:
            for roll in rolls:
                faces = roll["faces"]
                if type(faces) is not list or len(faces) > QUICK_FACES_MAX:
                    return False  # (a forged list of millions is not derived here)
                if not all(type(face) is int for face in faces):
                    return False  # bools and floats compare equal to ints: the long way decides
                if dice.roll_many(sides, len(faces)) != faces:
                    return False
                computed = self._resolved(system, roll["check"], faces)
                if computed is None or not _same(computed, roll["result"]):
                    return False
        except _MALFORMED:
            return False
        return True

    def _resolved(self, system: str, check: Any, faces: list[int]) -> Any:
        """`rolls.systems.resolve`, once per distinct (system, check, faces): small pools repeat
        (3d6, 2d10), and resolving is pure. The key is the check's canonical JSON (which tells
        true from 1) and the faces (ints only, see `_rolls_follow`); None: it does not resolve.
        Bounded: emptied when full."""
        if len(faces) > CACHED_FACES:  # big pools seldom repeat: not worth a key
            try:
                return systems.resolve(system, check, faces)
            except _MALFORMED:
                return None
        try:
            key = (system, canonical_json(check), tuple(faces))
        except (TypeError, ValueError):
            return None
        cached = self._resolutions.get(key, _MISSING)
        if cached is _MISSING:
            try:
                cached = systems.resolve(system, check, faces)
            except _MALFORMED:
                cached = None
            if len(self._resolutions) >= RESOLUTIONS_KEPT:
                self._resolutions.clear()
            self._resolutions[key] = cached
        return cached

    def _reroll(self, seq: int, label: str, system: str, roll: Any, dice: KeyedDice) -> bool:
        """Do the roll's faces follow from its key and client seed? The result is checked too."""
        try:
            faces, result = systems.roll(system, roll["check"], dice)
        except _MALFORMED as error:
            self._problem_at(seq, CHECK_ROLLED, f"{label}: its check cannot be rolled: {error}")
            return False
        stored_faces = roll["faces"]
        if faces != stored_faces or any(type(face) is not int for face in stored_faces):
            # (true and 1.0 equal 1 in Python, not in the record)
            what = (
                f"{label}: faces {roll['faces']} do not follow from its key and client seed, "
                f"which give {faces}"
            )
            self._problem_at(seq, CHECK_ROLLED, what)
            faces, stored = roll["faces"], roll["result"]
            self._outcome(seq, CHECK_ROLLED, label, system, roll["check"], faces, stored)
            return False
        if not _same(result, roll["result"]):
            what = _diff(roll["result"], result, "the faces give")
            self._problem_at(
                seq, CHECK_ROLLED, f"{label}: the result does not follow from the faces: {what}"
            )
        return True

    # --- checks --------------------------------------------------------------------------------

    def _check_rolled(self, event: Mapping[str, Any]) -> None:
        payload, seq = event["payload"], event["seq"]
        system, kind, rolls = payload["system"], payload["kind"], payload["rolls"]
        self._rules_in_force(event, payload)
        session, dice, proven, quick = self._session, None, False, False
        if session is None or event.get("session") != session.session_id:
            where = f"session {session.number} was open" if session else "no session was open"
            self._problem(event, f"is tagged session {event.get('session')}, but {where}")
            session = None
        else:
            key = self._roll_key(event, payload)
            self._advance_keys(event, payload)
            client_seed = payload.get("client_seed")
            if client_seed is not None and not _is_hex(client_seed):
                self._problem(event, f"client_seed {client_seed!r} is not hex digits")
            elif payload["dice"] == "manual":
                session.manual_rolls += 1
            else:
                session.server_rolls += 1
                proven = key is not None
                if key is not None:
                    dice = KeyedDice(key, self.campaign, seq, client_seed or "")
                    if self._rolls_follow(system, rolls, dice):
                        quick = True  # every roll's faces and result follow: nothing to name
                    else:  # the long way, from the start of the key's stream, names what is wrong
                        dice = KeyedDice(key, self.campaign, seq, client_seed or "")
        on_dramatic = system == "cofd" and bool(
            option(self._options, "cofd", "beat_on_dramatic_failure")
        )
        for index, roll in enumerate(rolls, 1):
            if quick:
                pass  # its faces and result were proven above
            elif dice is not None:  # re-rolling gives the result too: no separate resolve
                proven &= self._reroll(seq, f"roll {index}", system, roll, dice)
            else:
                faces, stored = roll["faces"], roll["result"]
                self._outcome(
                    seq, event["type"], f"roll {index}", system, roll["check"], faces, stored
                )
            if system == "cofd":
                beats = cofd.beats(roll["result"], on_dramatic)
                if roll.get("beats_awarded") != beats:
                    what = f"awards {roll.get('beats_awarded')!r} Beat(s), the result gives {beats}"
                    self._problem(event, f"roll {index}: {what}")
        if session is not None:
            session.proven += proven
        self._comparison(event, system, kind, [roll["result"] for roll in rolls], payload)
        if "failed_attempt" in payload:  # recorded since rolls.rules; older events decide it later
            first = rolls[0]
            expected = failed_attempt(
                system,
                payload["task"],
                first["character_id"],
                first["result"],
                bool(first["rules"].get("not_escalating")),
            )
            if payload["failed_attempt"] != expected:
                recorded = payload["failed_attempt"]
                what = f"records failed_attempt {recorded!r}; the rules give {expected!r}"
                self._problem(event, what)
        if kind == "single" and len(rolls) == 1 and system in FOLLOWUP_SYSTEMS.values():
            self._checks[seq] = _Roll.keep(system, rolls[0])

    def _outcome(
        self,
        seq: int,
        event_type: str,
        label: str,
        system: str,
        check: Any,
        faces: Any,
        stored: Any,
    ) -> None:
        """``stored`` must be the result `rolls.systems.resolve` gives for the faces."""
        try:
            computed = systems.resolve(system, check, faces)
        except _MALFORMED as error:
            what = f"{label}: the faces {faces} do not fit its check: {error}"
            self._problem_at(seq, event_type, what)
            return
        if not _same(computed, stored):
            what = _diff(stored, computed, "the faces give")
            what = f"{label}: the result does not follow from the faces: {what}"
            self._problem_at(seq, event_type, what)

    def _comparison(
        self, event: Mapping[str, Any], system: str, kind: str, results: list, payload: Mapping
    ) -> None:
        counts = ROLL_COUNTS.get((system, kind))
        if counts is None:
            self._problem(event, f"a {kind!r} check does not exist in {system}")
            return
        low, high = counts
        if len(results) < low or (high is not None and len(results) > high):
            self._problem(
                event, f"a {kind} check has {low}..{high or 'n'} rolls, not {len(results)}"
            )
            return
        stored = payload.get("comparison")
        if not compares(system, kind):
            if stored is not None:
                self._problem(event, f"a {kind} check compares nothing, yet records a comparison")
            return
        try:
            expected = compare(system, kind, results)
        except _MALFORMED as error:
            self._problem(event, f"the comparison cannot follow from the results: {error}")
            return
        if not _same(expected, stored):
            what = _diff(stored, expected, "the results give")
            self._problem(event, f"the comparison does not follow from the results: {what}")

    def _followup(self, event: Mapping[str, Any]) -> None:
        payload, event_type = event["payload"], event["type"]
        target = payload["check_seq"]
        roll = self._checks.get(target)
        if roll is None and (roll := self._earlier_roll(target, event["seq"])) is not None:
            self._checks[target] = roll
        if roll is None:
            if target not in self._hidden:
                self._problem(event, f"follows up #{target}, not a single roll earlier in the log")
            return
        system = FOLLOWUP_SYSTEMS[event_type]
        if roll.system != system:
            self._problem(event, f"applies to {system} rolls; check #{target} is {roll.system}")
            return
        if event_type in roll.followups:
            self._problem(event, f"check #{target} already had this follow-up")
        check, faces, result = roll.unpack()
        options = self._options
        if event_type == DRAMATIC:
            mode = option(options, "cofd", "intentional_dramatic_failure")
            if mode == "off" or payload.get("mode") != mode:
                what = f"records mode {payload.get('mode')!r}; the option in force is {mode!r}"
                self._problem(event, what)
            try:
                expected = cofd.intentional_dramatic_failure(result)
            except _MALFORMED as error:
                self._problem(event, f"check #{target} cannot become a dramatic failure: {error}")
                return
            if not _same(expected, payload["result"]):
                what = _diff(payload["result"], expected, "the rules give")
                self._problem(event, f"the new result does not follow: {what}")
            roll.update(check, faces, payload["result"], event_type)
            return
        if event_type == FORTUNE:
            if not option(options, "age", "fortune_dice"):
                self._problem(event, "Fortune dice were off in this campaign")
            self._only_change(event, check, "fortune_change", payload["change"])
            if payload["cost"] != age.fortune_cost(payload["change"]):
                cost = age.fortune_cost(payload["change"])
                self._problem(event, f"costs {payload['cost']!r} Fortune; the change costs {cost}")
        else:
            if not option(options, "nice_damnit", "extra_nice"):
                self._problem(event, "extra Nice! were off in this campaign")
            self._only_change(event, check, "extra_nice", _MISSING)
        label = f"check #{target} after the follow-up"
        where = event["seq"], event_type
        self._outcome(*where, label, system, payload["check"], faces, payload["result"])
        roll.update(payload["check"], faces, payload["result"], event_type)

    def _only_change(self, event: Mapping[str, Any], rolled: Any, key: str, value: Any) -> None:
        """A follow-up re-resolves the rolled check with one key changed; nothing else may move."""
        new = event["payload"]["check"]
        rest_new = {k: v for k, v in new.items() if k != key}
        rest_old = {k: v for k, v in rolled.items() if k != key}
        if not _same(rest_new, rest_old):
            what = _diff(rest_new, rest_old, "the roll had")
            self._problem(event, f"its check differs from the rolled one beyond {key}: {what}")
        if value is not _MISSING and not _same(new.get(key), value):
            self._problem(event, f"its check's {key} is not the change it records")


def verify_chain(
    campaign: int,
    events: Iterable[Mapping[str, Any]],
    *,
    head_seq: int | None = None,
    head_hash: str | None = None,
) -> tuple[int, Problem | None]:
    """The chain alone (seq, links, hashes, head): (events read, first problem)."""
    verifier = StreamVerifier(campaign, rules=False)
    for event in events:
        verifier.feed(event)
    report = verifier.finish(head_seq=head_seq, head_hash=head_hash)
    return report.events, report.problems[0] if report.problems else None


class ExportError(ValueError):
    """The document is not a campaign export at all."""


def check_export(document: Mapping[str, Any], *, receipts: Iterable[Receipt] = ()) -> StreamReport:
    """Everything `rolls.trust.verify` checks, on an exported document."""
    campaign = document.get("campaign") if isinstance(document, Mapping) else None
    events = document.get("events") if isinstance(document, Mapping) else None
    if not isinstance(campaign, Mapping) or not isinstance(events, list):
        raise ExportError('not a campaign export: expected {"campaign": {...}, "events": [...]}')
    campaign_id = campaign.get("id")
    if not isinstance(campaign_id, int) or isinstance(campaign_id, bool):
        raise ExportError("not a campaign export: campaign.id must be an integer")
    verifier = StreamVerifier(campaign_id, system=campaign.get("system"), receipts=receipts)
    for event in events:
        verifier.feed(event)
    return verifier.finish(head_seq=campaign.get("head_seq"), head_hash=campaign.get("head_hash"))


def verify_export(document: Mapping[str, Any]) -> list[Problem]:
    return check_export(document).problems


def earlier_head(path: str) -> Receipt:
    """The head of an export saved earlier, as a receipt: a later export of the same campaign
    must contain that event with that hash, or history was rewritten since."""
    with open(path, encoding="utf-8") as handle:
        campaign = json.load(handle).get("campaign")
    if not isinstance(campaign, Mapping):
        raise ExportError(f"{path}: not a campaign export")
    seq, digest = campaign.get("head_seq"), campaign.get("head_hash")
    if not isinstance(seq, int) or not _is_hex(digest, 64):
        raise ExportError(f"{path}: its campaign has no head_seq/head_hash")
    return Receipt(digest, seq)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m rolls.trust.verify", description=__doc__.splitlines()[0]
    )
    parser.add_argument("export", help="a campaign log exported as JSON")
    parser.add_argument(
        "--receipt",
        action="append",
        default=[],
        metavar="SEQ:HASH",
        help="a session receipt you kept (final_seq:final_hash); the log must still contain it",
    )
    parser.add_argument(
        "--earlier",
        action="append",
        default=[],
        metavar="EXPORT",
        help="an export you saved earlier: its head must still be in this log, unchanged",
    )
    args = parser.parse_args(argv)
    try:
        receipts = [Receipt.parse(text) for text in args.receipt]
        receipts += [earlier_head(path) for path in args.earlier]
        with open(args.export, encoding="utf-8") as handle:
            document = json.load(handle)
        report = check_export(document, receipts=receipts)
    except (OSError, ValueError) as error:  # unreadable file, bad JSON, not an export
        print(f"ERROR {error}", file=sys.stderr)
        return 2
    info = document["campaign"]
    print(f"campaign {info['id']} {info.get('name', '')!r} ({info.get('system')})")
    for line in report.detail_lines():
        print(line)
    closed = report.sessions_proven
    if report.ok:
        print(f"OK {report.events} events verify; {closed} closed session(s) proven")
        return 0
    print(f"FAIL {len(report.problems) + report.unlisted} problem(s) in {report.events} events")
    return 1


if __name__ == "__main__":
    sys.exit(main())
