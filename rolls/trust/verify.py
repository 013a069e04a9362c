"""Verify a campaign's event log: the hash chain, the session seeds, every roll and its outcome.

Standard library and `rolls` only, so that anyone can check an exported log without the server:

    python -m rolls.trust.verify export.json [--receipt SEQ:HASH ...]

An export is ``{"campaign": {"id", "system", "head_seq", "head_hash", …}, "events": [event, …]}``
where each event has the fields `eventlog.chain.HASHED_FIELDS` plus its ``hash``; an event its
viewer may not see is ``{"redacted": true, …}`` with its seq, type and hashes only. Checked:

* chain: seq 1..n without gaps, every ``prev_hash`` link, every hash, the campaign's head;
* sessions: one open at a time, numbered 1, 2, …; the seed revealed by ``session.ended`` hashes
  to the commitment of ``session.started``; its receipt (``final_seq``/``final_hash``) is the
  event before the reveal; receipts a player kept (``--receipt``) are still in the chain;
* ``check.rolled``: system and options are the ones in force, ``manual`` dice only while
  ``manual_dice`` is on; each result follows from its faces (`rolls.systems.resolve`), the
  comparison from the results, CofD Beats from the result; server faces follow from the
  revealed seed (`rolls.systems.HmacDice`);
* follow-ups (Fortune, extra Nice!, intentional dramatic failure): allowed by the options, the new
  check is the rolled one with only the follow-up's change, the new result follows from the faces.

Exit status: 0 when everything verifies, 1 when something does not, 2 when the file is unusable.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from eventlog.chain import GENESIS, canonical_json, document_hash
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
from rolls.systems import HmacDice, age, cofd

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
    """One session as the verifier saw it, and what its seed proves."""

    number: Any
    session_id: str
    started_seq: int
    commitment: str
    ended_seq: int | None = None
    seed_ok: bool | None = None  # None: the seed is not revealed (the session is open)
    private: bool = False  # proven with the server's stored secret, which stays unrevealed
    server_rolls: int = 0
    proven: int = 0  # server rolls whose every face follows from the seed
    manual_rolls: int = 0
    hidden_rolls: int = 0
    final_seq: int | None = None
    final_hash: str | None = None
    # (seq, system, rolls) of server rolls waiting for the reveal (when no seed was known before)
    pending: list[tuple[int, str, list[Any]]] = field(default_factory=list, repr=False)

    def describe(self) -> str:
        span = f"#{self.started_seq}..#{self.ended_seq}" if self.ended_seq else "open"
        if self.seed_ok is None:
            parts = [f"{self.server_rolls} server roll(s) await the seed's reveal"]
        elif not self.seed_ok:
            parts = [f"seed does not match; {self.server_rolls} server roll(s) unproven"]
        else:
            source = "the server's unrevealed secret" if self.private else "the revealed seed"
            parts = [f"{self.proven}/{self.server_rolls} server roll(s) follow from {source}"]
        if self.manual_rolls:
            parts.append(f"{self.manual_rolls} manual roll(s), not covered by the seed")
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
    sessions: list[SessionSummary] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def sessions_proven(self) -> int:
        """Closed sessions whose revealed seed gives every one of their server rolls."""
        return sum(
            1 for s in self.sessions if s.seed_ok and not s.private and s.proven == s.server_rolls
        )

    def detail_lines(self, indent: str = "  ") -> list[str]:
        lines = [indent + session.describe() for session in self.sessions]
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

    Kept as canonical JSON, a fraction of the parsed dicts' memory: a long log has many rolls
    that may yet be followed up. A CofD roll keeps only its outcome unless it failed (only a
    failure can become a dramatic failure).
    """

    system: str
    packed: str
    followups: tuple[str, ...] = ()

    @classmethod
    def keep(cls, system: str, roll: Mapping[str, Any]) -> _Roll:
        result = roll["result"]
        if system == "cofd" and result.get("outcome") != "failure":
            return cls(system, canonical_json([None, None, {"outcome": result.get("outcome")}]))
        return cls(system, canonical_json([roll["check"], roll["faces"], result]))

    def unpack(self) -> tuple[Any, Any, Any]:
        check, faces, result = json.loads(self.packed)
        return check, faces, result

    def update(self, check: Any, faces: Any, result: Any, followup: str) -> None:
        self.packed = canonical_json([check, faces, result])
        self.followups += (followup,)


def _is_hex(value: Any, length: int | None = None) -> bool:
    if not isinstance(value, str) or (length is not None and len(value) != length) or not value:
        return False
    return all(c in "0123456789abcdef" for c in value)


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

    One pass. Server rolls are proven as they arrive when the session's seed is known in advance
    (``seed_for``: the server's stored seeds), else buffered until the reveal; so memory grows
    with one session's rolls (exports, already in memory anyway) or not at all (the server), plus
    a compact copy of each single check that a follow-up may still change.
    """

    def __init__(
        self,
        campaign: int,
        *,
        system: str | None = None,
        seed_for: Callable[[str], bytes | None] | None = None,
        receipts: Iterable[Receipt] = (),
        rules: bool = True,
    ) -> None:
        self.campaign = campaign
        self.report = StreamReport(campaign)
        self._expected_system = system
        # The server's stored seeds: rolls are proven as they stream by (nothing is buffered),
        # open sessions too, without revealing anything.
        self._seed_for = seed_for
        self._seed: bytes | None = None  # the open session's seed, when known in advance
        self._receipts = {receipt: False for receipt in receipts}
        self._rules = rules
        self._next_seq, self._prev_hash = 1, GENESIS
        self._last: tuple[int, Any] = (0, GENESIS)
        self._system: str | None = None
        self._options: dict[str, Any] = {}
        self._session: SessionSummary | None = None
        self._checks: dict[int, _Roll] = {}
        self._hidden: set[int] = set()
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

    def _problem(self, event: Mapping[str, Any], what: str) -> None:
        self._problem_at(event.get("seq"), event.get("type"), what)

    # --- the stream --------------------------------------------------------------------------

    def feed(self, event: Mapping[str, Any]) -> None:
        self.report.events += 1
        if not isinstance(event, Mapping):
            self._problem_at(None, None, f"event {self.report.events} is not an object")
            return
        self._link(event)
        self._last = (event.get("seq"), event.get("hash"))
        self._match_receipts(event)
        event_type = event.get("type")
        if event.get("redacted"):
            self.report.redacted += 1
            if event_type == CHECK_ROLLED and self._session is not None:
                self._session.hidden_rolls += 1
            self._hidden.add(event.get("seq"))
            return
        if event_type not in ALL_TYPES:
            self._problem(event, f"unknown event type {event_type!r}")
            return
        handler = self._handlers.get(event_type) if self._rules else None
        if handler is not None:
            try:
                handler(event)
            except _MALFORMED as error:
                self._problem(
                    event, f"unreadable {event_type} event: {type(error).__name__} {error}"
                )

    def _link(self, event: Mapping[str, Any]) -> None:
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
        elif not event.get("redacted") and self._computed_hash(event) != event.get("hash"):
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

    def finish(self, *, head_seq: int | None = None, head_hash: str | None = None) -> StreamReport:
        if self._session is not None and self._seed is not None:
            self._session.seed_ok, self._session.private = True, True
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
        expected = len(self.report.sessions) + 1
        if payload.get("number") != expected:
            self._problem(event, f"is numbered {payload.get('number')!r}, expected {expected}")
        commitment = payload.get("seed_commitment")
        if not _is_hex(commitment, 64):
            self._problem(event, "publishes no seed_commitment (a SHA-256 hex digest)")
        if event.get("session") != payload.get("id"):
            self._problem(
                event, f"is tagged session {event.get('session')}, starts {payload['id']}"
            )
        self._session = SessionSummary(
            number=payload.get("number"),
            session_id=str(payload.get("id")),
            started_seq=event["seq"],
            commitment=commitment if isinstance(commitment, str) else "",
        )
        self.report.sessions.append(self._session)
        self._seed = self._seed_for(self._session.session_id) if self._seed_for else None
        if self._seed is not None and hashlib.sha256(self._seed).hexdigest() != commitment:
            what = "the server's stored seed for this session does not match its seed_commitment"
            self._problem(event, what)
            self._seed = None

    def _session_ended(self, event: Mapping[str, Any]) -> None:
        payload, seq = event["payload"], event["seq"]
        session = self._session
        if session is None or str(payload.get("id")) != session.session_id:
            self._problem(event, f"ends session {payload.get('number')!r}, which is not open")
            return
        self._session, self._seed = None, None
        session.ended_seq = seq
        session.final_seq, session.final_hash = seq - 1, event.get("prev_hash")
        if ("final_hash" in payload or "final_seq" in payload) and (
            payload.get("final_seq"),
            payload.get("final_hash"),
        ) != (session.final_seq, session.final_hash):
            self._problem(event, "its receipt (final_seq, final_hash) is not the event before it")
        seed = payload.get("seed")
        if not _is_hex(seed) or len(seed) % 2:
            self._problem(event, "reveals no seed (hex digits)")
            session.seed_ok = False
        elif hashlib.sha256(bytes.fromhex(seed)).hexdigest() != session.commitment:
            self._problem(
                event,
                "the revealed seed does not hash to the seed_commitment of "
                f"#{session.started_seq} (session.started)",
            )
            session.seed_ok = False
        else:
            session.seed_ok = True
            self._prove_pending(session, bytes.fromhex(seed))
        session.pending = []

    def _prove_pending(self, session: SessionSummary, seed: bytes) -> None:
        """At the reveal: re-roll the session's buffered server rolls from the seed."""
        for seq, system, rolls in session.pending:
            dice = HmacDice(seed, str(self.campaign), seq)  # one source per event, in roll order
            proven = True
            for index, roll in enumerate(rolls, 1):
                proven &= self._reroll(seq, f"roll {index}", system, roll, dice, revealed=True)
            session.proven += proven

    def _reroll(
        self, seq: int, label: str, system: str, roll: Any, dice: HmacDice, *, revealed: bool
    ) -> bool:
        """Do the roll's faces follow from the seed? (Unless ``revealed``, the seed is the
        server's secret: then its faces are not printed, and the result is checked here too.)"""
        try:
            faces, result = systems.roll(system, roll["check"], dice)
        except _MALFORMED as error:
            self._problem_at(seq, CHECK_ROLLED, f"{label}: its check cannot be rolled: {error}")
            return False
        if faces != roll["faces"]:
            gives = f"; the seed gives {faces}" if revealed else ""
            what = f"{label}: faces {roll['faces']} do not follow from the session seed{gives}"
            self._problem_at(seq, CHECK_ROLLED, what)
            if not revealed:
                faces, stored = roll["faces"], roll["result"]
                self._outcome(seq, CHECK_ROLLED, label, system, roll["check"], faces, stored)
            return False
        if not revealed and not _same(result, roll["result"]):
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
        session, dice = self._session, None
        if session is None or event.get("session") != session.session_id:
            where = f"session {session.number} was open" if session else "no session was open"
            self._problem(event, f"is tagged session {event.get('session')}, but {where}")
            session = None
        elif payload["dice"] == "manual":
            session.manual_rolls += 1
        elif self._seed is not None:
            session.server_rolls += 1
            dice = HmacDice(self._seed, str(self.campaign), seq)
        else:
            session.server_rolls += 1
            session.pending.append((seq, system, rolls))
        proven = True
        for index, roll in enumerate(rolls, 1):
            if dice is not None:  # re-rolling gives the result too: no separate resolve
                proven &= self._reroll(seq, f"roll {index}", system, roll, dice, revealed=False)
            else:
                faces, stored = roll["faces"], roll["result"]
                self._outcome(
                    seq, event["type"], f"roll {index}", system, roll["check"], faces, stored
                )
            if system == "cofd":
                beats = cofd.beats(
                    roll["result"], bool(option(self._options, "cofd", "beat_on_dramatic_failure"))
                )
                if roll.get("beats_awarded") != beats:
                    what = f"awards {roll.get('beats_awarded')!r} Beat(s), the result gives {beats}"
                    self._problem(event, f"roll {index}: {what}")
        if dice is not None and session is not None:
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
    args = parser.parse_args(argv)
    try:
        receipts = [Receipt.parse(text) for text in args.receipt]
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
        print(f"OK {report.events} events verify; {closed} closed session(s) proven from the seed")
        return 0
    print(f"FAIL {len(report.problems) + report.unlisted} problem(s) in {report.events} events")
    return 1


if __name__ == "__main__":
    sys.exit(main())
