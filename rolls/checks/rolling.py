"""Rolling a check: the dice (server or physical), the rule state under the lock, and the rolls
of single, multiple-action and opposed checks."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any
from uuid import UUID

from django.db import connection
from django.utils.translation import gettext as _

from campaign.errors import Conflict, InvalidInput, NotFound, call_rules
from campaign.limits import MAX_INT
from campaign.models import (
    Campaign,
    Chapter,
    Character,
    Membership,
    Scene,
    Session,
    SessionSecret,
)
from eventlog.models import Event
from eventlog.rows import columns, fetchone, fetchone_locked, instance, width
from eventlog.stream import held
from rolls import systems
from rolls.checks.assembly import SERVER_LABELS, SYSTEM_KEYS, RollContext
from rolls.checks.requests import (
    MAX_ACTIONS,
    ROLL_KEYS,
    WILLPOWER_SYSTEMS,
    find_character,
    parse_uuid,
)
from rolls.models import Check, CheckCall
from rolls.reads.known import (
    dramatic_failures_taken_sql,
    facts_of,
    failed_attempts,
    failures_sql,
    free_botch_available,
    free_botch_users_sql,
    used_as_helper_sql,
)
from rolls.reads.visibility import Facts
from rolls.rules import RETRY_SYSTEMS, compare, option, task_key
from rolls.systems import KeyedDice, cofd, d6pool, key_commitment, roll_key, storyteller


@dataclass(frozen=True)
class Table:
    """What a check is decided in, read in one round trip under the stream lock: the open
    session (its dice seed and how many rolls it has had: the next roll key's index), scene
    and chapter, and the character the request names (``asked``: as the request named it)."""

    session: Session | None
    seed: bytes | None
    key_index: int
    scene_id: UUID | None
    chapter_id: UUID | None
    character: Character | None
    asked: Any = None
    # The character's intentional dramatic failures in the open chapter and the open scene, as
    # `eligibility.Now` keeps them: the answer's offers on a failed CofD roll then read nothing
    # under the lock (a read there would send the queued append on a round trip of its own).
    dramatic_failures: dict[tuple[UUID, UUID], list[Facts]] = field(default_factory=dict)
    # Storyteller: who used the session's free botch (None: not read, the rule is off).
    free_botch_users: frozenset[UUID] | None = None
    # The failed attempts so far at the request's task (its key), None when not read.
    failures: tuple[str, int] | None = None
    # The GM's call the request answers, as (the id it named, the open or closed call or None),
    # None when the request answers none (or named it malformed: the service refuses it).
    call: tuple[UUID, CheckCall | None] | None = None


@dataclass(frozen=True)
class Shape:
    """The rule state the table's statement brings, as the campaign's options and the request
    ask for it: its shape (each is a prepared statement of its own)."""

    period: str | None  # "ch" or "sc": the open period counting intentional dramatic failures
    free_botches: bool  # the session's free botch uses
    task: str  # the task key whose failed attempts to bring ("": none)
    call: bool = False  # the GM's call the request answers


def _shape(campaign: Campaign, task: str, call: bool = False) -> Shape:
    """What a check in ``campaign`` decides on besides the periods: CofD's intentional dramatic
    failures by period (none when the rule is off or unlimited), the Storyteller system's free
    botch, a retried task's failed attempts."""
    system, options = campaign.system, campaign.options
    period = None
    if system == "cofd":
        mode = option(options, "cofd", "intentional_dramatic_failure")
        period = {"per_chapter": "ch", "per_scene": "sc"}.get(mode)
    free_botches = system == "storyteller" and option(options, system, "free_botch") != "off"
    retried = bool(task) and system in RETRY_SYSTEMS
    return Shape(period, free_botches, task_key(task) if retried else "", call)


def _table_sql(
    campaign_from: str, shape: Shape, character_is: str = "%s", leading: str = ""
) -> str:
    """The `Table` columns (after ``leading`` ones, e.g. the campaign's), joined on the campaign
    row ``cc`` that ``campaign_from`` names, with the rule state ``shape`` asks for and the
    character whose id is ``character_is``. Parameters: the task key (when the shape has one),
    those of ``campaign_from``, the character (when ``character_is`` is one), the campaign."""
    return _table_sql_of(connection.vendor, campaign_from, shape, character_is, leading)


@cache  # one text per database (the rule state's subqueries are written per database) and shape
def _table_sql_of(
    vendor: str, campaign_from: str, shape: Shape, character_is: str, leading: str
) -> str:
    period = shape.period
    taken = (
        "NULL" if period is None else dramatic_failures_taken_sql("cc.id", f"{period}.id", "c.id")
    )
    botches = "NULL" if not shape.free_botches else free_botch_users_sql("cc.id", "s.id")
    failures = "NULL" if not shape.task else failures_sql("cc.id", "c.id")
    call_columns, call_join = "", ""
    if shape.call:
        call_columns = f", {columns(CheckCall, 'cl')}"
        call_join = (
            f"LEFT JOIN {CheckCall._meta.db_table} cl ON cl.campaign_id = cc.id AND cl.id = %s "
        )
    return (
        f"SELECT {leading}{columns(Session, 's')}, sec.seed, "
        # The session's last check, at the end of the (campaign, seq) index: its key's index
        # plus one. Counting the session's checks grew with the session (8 ms of the database's
        # time under the lock at 10,000); max() finds the end of the index even where the
        # planner's statistics are stale, which ORDER BY … LIMIT 1 did not. The count stays as
        # the fallback, for a session with no check yet (an empty range) and for a last check
        # written without its index (a process still on the code before rolls.0007).
        f"COALESCE((SELECT k.key_index + 1 FROM {Check._meta.db_table} k "
        " WHERE k.campaign_id = cc.id AND k.session_id = s.id AND k.seq = "
        f" (SELECT max(m.seq) FROM {Check._meta.db_table} m "
        "   WHERE m.campaign_id = cc.id AND m.seq > s.started_seq)), "
        f"(SELECT count(*) FROM {Check._meta.db_table} n "
        "  WHERE n.campaign_id = cc.id AND n.seq > s.started_seq AND n.session_id = s.id)), "
        f"sc.id, ch.id, {taken}, {botches}, {failures}, "
        f"{columns(Character, 'c')}{call_columns} {campaign_from} "
        f"LEFT JOIN {Session._meta.db_table} s ON s.campaign_id = cc.id AND s.ended_seq IS NULL "
        f"LEFT JOIN {SessionSecret._meta.db_table} sec ON sec.session_id = s.id "
        f"LEFT JOIN {Scene._meta.db_table} sc ON sc.campaign_id = cc.id AND sc.ended_seq IS NULL "
        f"LEFT JOIN {Chapter._meta.db_table} ch ON ch.campaign_id = cc.id AND ch.ended_seq IS NULL "
        f"LEFT JOIN {Character._meta.db_table} c "
        f"ON c.campaign_id = cc.id AND c.id = {character_is} "
        f"{call_join}WHERE cc.id = %s"
    )


def _table(row: Sequence[Any], asked: Any, shape: Shape, call_id: UUID | None = None) -> Table:
    n = width(Session)
    seed, key_index, scene_id, chapter_id, taken, botches, failures = row[n : n + 7]
    uuid_of = Scene._meta.pk.to_python
    scene_id = None if scene_id is None else uuid_of(scene_id)
    chapter_id = None if chapter_id is None else uuid_of(chapter_id)
    at = n + 7 + width(Character)
    character = instance(Character, row[n + 7 : at])
    call = (call_id, instance(CheckCall, row[at:])) if shape.call else None
    period_id = {"ch": chapter_id, "sc": scene_id}.get(shape.period)
    dramatic_failures = {}
    if character is not None and period_id is not None:
        facts = [facts_of(*each) for each in json.loads(taken or "[]")]
        dramatic_failures[(period_id, character.pk)] = facts
    return Table(
        session=instance(Session, row[:n]),
        seed=None if seed is None else bytes(seed),
        key_index=key_index or 0,
        scene_id=scene_id,
        chapter_id=chapter_id,
        character=character,
        asked=asked,
        dramatic_failures=dramatic_failures,
        free_botch_users=(
            frozenset(uuid_of(each) for each in json.loads(botches or "[]") if each)
            if shape.free_botches
            else None
        ),
        failures=(shape.task, failures or 0) if shape.task and character is not None else None,
        call=call,
    )


def _character_param(character: Any) -> Any:
    character_id = None if character in (None, "") else parse_uuid(character, "character")
    return Character._meta.pk.get_db_prep_value(character_id, connection)


def read_table(campaign: Campaign, character: Any, task: str = "") -> Table:
    """The `Table` of ``campaign`` (locked by the caller); ``character`` as the request named it
    (404 naming the field when the campaign has no such character), ``task`` its task."""
    param = _character_param(character)
    shape = _shape(campaign, task)
    sql = _table_sql(f"FROM {Campaign._meta.db_table} cc", shape)
    table = _table(fetchone(sql, _table_params(shape, param, campaign.pk)), character, shape)
    if param is not None and table.character is None:
        raise NotFound("character", _("no such character in this campaign"))
    return table


def _table_params(shape: Shape, character: Any, campaign_id: int, call: Any = None) -> tuple:
    return (
        *((shape.task,) if shape.task else ()),
        character,
        *((call,) if shape.call else ()),
        campaign_id,
    )


def lock_table(
    read_before: Campaign, character: Any, task: str = "", call: Any = None
) -> tuple[Campaign, Table | None]:
    """Take the campaign's stream lock and read its `Table` in the same round trip (a check's
    one round trip before it appends; `eventlog.rows.fetchone_locked`); ``read_before``: the
    campaign as read before the lock (its id, and its rule options for the statement's shape);
    ``task``, ``call``: the request's (the call read with the table; a malformed id is left to
    the service to refuse). The table is None when it must be read again with `read_table`:
    when the options changed while this writer waited for the lock, or when ``character`` is
    not a well-formed id (`read_table` refuses it then, where the service's order of refusals
    puts it). A character the campaign does not have is left for the caller to refuse
    (``character`` None)."""
    if not connection.in_atomic_block:
        raise RuntimeError("lock_table() must run inside transaction.atomic()")
    try:
        param = _character_param(character)
    except InvalidInput:
        param, character = None, _MALFORMED
    call_id = _call_id(call)
    n = width(Campaign)
    shape = _shape(read_before, task, call_id is not None)
    sql = _table_sql(
        f"FROM {Campaign._meta.db_table} cc", shape, leading=f"{columns(Campaign, 'cc')}, "
    )
    params = _table_params(shape, param, read_before.pk, _uuid_param(call_id))
    row = fetchone_locked(sql, params)
    if row is None:
        raise Campaign.DoesNotExist(f"no campaign {read_before.pk}")
    campaign = held(instance(Campaign, row[:n]))
    if character is _MALFORMED or _shape(campaign, task, shape.call) != shape:
        return campaign, None
    return campaign, _table(row[n:], character, shape, call_id)


def _call_id(call: Any) -> UUID | None:
    """The call a request answers, when it names one well-formed (else the service refuses it)."""
    if not call:
        return None
    try:
        return parse_uuid(call, "call")
    except InvalidInput:
        return None


def _uuid_param(value: UUID | None) -> Any:
    return CheckCall._meta.pk.get_db_prep_value(value, connection)


_MALFORMED = object()


def lock_followed_check(read_before: Campaign, seq: int) -> tuple[Campaign, Check | None, Table]:
    """Take the campaign's stream lock and read check ``seq`` (with its event) and the `Table`
    of its character, in one round trip (a follow-up's one before it appends); the check is
    None when the campaign has none at that seq. Its rule state is the table's as the options
    stand once the lock is granted (`Table.dramatic_failures` empty when they changed
    meanwhile: the rule then reads them)."""
    if not connection.in_atomic_block:
        raise RuntimeError("lock_followed_check() must run inside transaction.atomic()")
    shape = _shape(read_before, "")
    checks, events = Check._meta.db_table, Event._meta.db_table
    sql = _table_sql(
        f"FROM {Campaign._meta.db_table} cc "
        f"LEFT JOIN {checks} fk ON fk.campaign_id = cc.id AND fk.seq = %s "
        f"LEFT JOIN {events} fe ON fe.id = fk.event_id",
        shape,
        character_is="fk.character_id",
        leading=(
            f"{columns(Campaign, 'cc')}, {columns(Check, 'fk')}, {columns(Event, 'fe')}, "
            f"{used_as_helper_sql('cc.id', 'fk.seq')}, "
        ),
    )
    in_range = 0 <= seq <= MAX_INT  # a seq no check can have is not sent to the database
    row = fetchone_locked(sql, (seq if in_range else -1, read_before.pk))
    if row is None:
        raise Campaign.DoesNotExist(f"no campaign {read_before.pk}")
    at = width(Campaign)
    campaign = held(instance(Campaign, row[:at]))
    check = instance(Check, row[at : at + width(Check)])
    at += width(Check)
    event = instance(Event, row[at : at + width(Event)])
    at += width(Event)
    if check is not None:
        check.event = event
        check.used_as_helper = bool(row[at])  # as `helper_checks` annotates it
    at += 1
    if _shape(campaign, "") != shape:
        shape = replace(shape, period=None)  # the dramatic failures were read for other options
    return campaign, check, _table(row[at:], None, shape)


class Roller:
    """Rolls every roll of one event: server dice from this roll's key and the player's client
    seed, or the player's faces. Every check.rolled of a session uses the next roll key (manual
    ones too, so that the n-th key is always the n-th roll's) and commits to the one after it."""

    def __init__(
        self,
        campaign: Campaign,
        table: Table,
        seq: int,
        faces: Any,
        manual: bool,
        client_seed: str | None,
    ):
        self.manual = manual
        self.index = 0
        seed, key_index = table.seed, table.key_index
        if seed is None:  # no secret kept for this session: fail as the lookup always did
            seed = bytes(SessionSecret.objects.get(session_id=table.session.pk).seed)
        key = roll_key(seed, key_index)
        # Recorded in the event: what anyone needs to re-derive the faces once they may see it.
        self.record = {
            "client_seed": client_seed,
            "dice_key": {"index": key_index, "key": key.hex()},
            "next_key": key_commitment(roll_key(seed, key_index + 1)),
        }
        if manual:
            if faces is None:
                raise InvalidInput("faces", _("this campaign uses physical dice: enter the faces"))
            self.faces = faces
        else:
            if faces is not None:
                raise InvalidInput(
                    "faces",
                    _(
                        "this campaign rolls on the server; faces are accepted only "
                        "when the rule option manual_dice is on"
                    ),
                )
            self.dice = KeyedDice(key, campaign.pk, seq, client_seed or "")

    def roll(self, system: str, check: dict[str, Any], count: int) -> tuple[list[int], dict]:
        """The next roll's faces and result; ``count`` is how many rolls the event has."""
        if not self.manual:
            return call_rules(systems.roll, system, check, self.dice)
        faces = self.faces
        if count > 1:
            if not isinstance(faces, list) or len(faces) != count:
                raise InvalidInput(
                    "faces", _("expected {count} lists of faces, one per roll").format(count=count)
                )
            faces = faces[self.index]
        self.index += 1
        if not isinstance(faces, list) or not all(
            isinstance(f, int) and not isinstance(f, bool) for f in faces
        ):
            raise InvalidInput("faces", _("expected a list of integers"))
        result = call_rules(systems.resolve, system, check, faces, prefix="")
        return list(faces), result


class FreeBotches:
    """Who may still turn a botch into a failure in this event (RULES 2.7, A.2).

    The session's allowance is decided from the log under any scoping (#12, item 4;
    ``rolls.reads.known.free_botch_available``); on top of it, rolls inside one event consume in
    order, so a second botch in the same declaration stays a botch.
    """

    def __init__(
        self,
        campaign: Campaign,
        session: Session,
        viewer: Membership | None = None,
        table: Table | None = None,
    ) -> None:
        self.campaign, self.session, self.viewer = campaign, session, viewer
        # The uses the table read under the lock (the truth, for deciding): none read again.
        self.used = table.free_botch_users if table is not None and viewer is None else None
        self.per_table = (
            campaign.system == "storyteller"
            and option(campaign.options, "storyteller", "free_botch") == "per_table"
        )
        self.consumed_here: set[str] = set()

    def available(self, character: Character | None) -> bool:
        if character is None:  # an unnamed NPC has no allowance to track
            return False
        if self.consumed_here and (self.per_table or str(character.pk) in self.consumed_here):
            return False
        if self.used is not None:
            return not self.used if self.per_table else character.pk not in self.used
        return free_botch_available(
            campaign=self.campaign,
            session_id=self.session.pk,
            character_id=character.pk,
            viewer=self.viewer,
        )

    def consumed(self, character: Character | None, result: Mapping[str, Any]) -> None:
        if character is not None and result.get("free_botch_consumed"):
            self.consumed_here.add(str(character.pk))


def read_roll_context(
    *,
    campaign: Campaign,
    session: Session,
    character: Character | None,
    task: str,
    is_gm: bool,
    life_or_death_called: bool,
    helpers: list[Check],
    viewer: Membership | None = None,
    circumstances_by: str = "player",
    free_botches: FreeBotches | None = None,
    table: Table | None = None,
) -> RollContext:
    """The state the rules decide on (``viewer`` None), or as ``viewer`` may know it (odds);
    ``table``: what the lock's read brought of it (not read again)."""
    attempt = 1
    known = table.failures if table is not None and viewer is None else None
    if known is not None and character is table.character and known[0] == task_key(task):
        attempt += known[1]
    elif character is not None:
        attempt += failed_attempts(
            campaign=campaign, character_id=character.pk, task=task, viewer=viewer
        )
    free_botches = free_botches or FreeBotches(campaign, session, viewer)
    bonus = cofd.teamwork_bonus([h.data["rolls"][0]["result"] for h in helpers]) if helpers else 0
    return RollContext(
        attempt=attempt,
        free_botch_available=free_botches.available(character),
        teamwork_bonus=bonus,
        helper_count=len(helpers),
        life_or_death_allowed=is_gm or life_or_death_called,
        circumstances_by=circumstances_by,
    )


def spend_willpower(
    system: str, rolls: list[dict[str, Any]], character: Character | None = None
) -> None:
    """At most 1 Willpower per roll, checked against the balance read under the stream lock;
    the roll entry records the spend and the projector takes it off the character.
    ``character``: the one the table read under the lock (not read again)."""
    wanted: dict[str, int] = {}
    for entry in rolls:
        if entry["check"].get("willpower") or entry["rules"].get("willpower"):
            if system not in WILLPOWER_SYSTEMS:
                raise InvalidInput(
                    "willpower", _("{system} has no Willpower").format(system=system)
                )
            if not entry["character_id"]:
                raise InvalidInput("willpower", _("Willpower is spent by a character"))
            entry["willpower_spent"] = 1
            wanted[entry["character_id"]] = wanted.get(entry["character_id"], 0) + 1
    for character_id, points in wanted.items():
        known = character is not None and str(character.pk) == character_id
        require_willpower(character if known else Character.objects.get(pk=character_id), points)


def require_willpower(character: Character | None, points: int, field: str = "willpower") -> None:
    """The balance, as read under the stream lock, covers the spend (409 naming the field)."""
    if character is None:
        raise InvalidInput(field, _("Willpower is spent by a character"))
    balance = int(character.resources.get("willpower", 0))
    if points > balance:
        # No balance in the message: a hidden roll may have spent what this member still sees.
        raise Conflict(
            field,
            _("{name} has not enough Willpower: this roll needs {points}").format(
                name=character.name, points=points
            ),
        )


def roll_entry(
    character: Character | None,
    spec: Mapping[str, Any],
    assembled,
    faces: list[int],
    result: dict[str, Any],
) -> dict[str, Any]:
    return {
        "character_id": str(character.pk) if character else None,
        "character_name": character.name if character else "",
        "owner_id": character.owner_id if character else None,
        "traits": list(spec.get("traits") or []),
        "label": (spec.get("label") or "")[:200] if isinstance(spec.get("label"), str) else "",
        "breakdown": assembled.breakdown,
        "rules": assembled.rules,
        "check": assembled.check,
        "faces": faces,
        "result": result,
        **({"circumstances": assembled.circumstances} if assembled.circumstances else {}),
    }


def multiple_actions(data, character, build, roller, state, free_botches) -> list[dict[str, Any]]:
    actions = data["actions"]
    if not isinstance(actions, list) or not 2 <= len(actions) <= MAX_ACTIONS:
        raise InvalidInput("actions", _("declare 2 to {n} actions").format(n=MAX_ACTIONS))
    # What the declaration says of all its actions (the GM's not_escalating too: RULES 2.8).
    shared = {
        k: v
        for k, v in data.items()
        if k in ("difficulty", "stressful", "willpower", "not_escalating")
    }
    specs, bases = [], []
    for index, action in enumerate(actions):
        if not isinstance(action, Mapping) or set(action) - (ROLL_KEYS | {"difficulty"}):
            raise InvalidInput(
                f"actions.{index}",
                _("an action has traits, pool, modifiers, difficulty and label"),
            )
        # Willpower is spent once per declaration (one turn): on its first action.
        spec = {**shared, **action, "willpower": bool(shared.get("willpower")) and index == 0}
        specs.append(spec)
        bases.append(build(spec, character, state, prefix=f"actions.{index}.").check["pool"])
    pools = storyteller.multiple_action_pools(bases)
    rolls = []
    for index, (spec, pool) in enumerate(zip(specs, pools, strict=True)):
        own = replace(state, free_botch_available=free_botches.available(character))
        if pool <= 0:  # §2.9: this action cannot be attempted, Willpower or not
            spec = {**spec, "willpower": False}
        assembled = build(spec, character, own, prefix=f"actions.{index}.")
        split = pool - assembled.check["pool"]
        assembled.check["pool"] = pool
        assembled.breakdown.append(
            {"label": SERVER_LABELS["actions"], "value": split, "kind": "actions"}
        )
        faces, result = roller.roll("storyteller", assembled.check, len(specs))
        free_botches.consumed(character, result)
        rolls.append(roll_entry(character, spec, assembled, faces, result))
    return rolls


def opposed_rolls(campaign, data, character, build, roller, state, free_botches):
    system = campaign.system
    against = data["against"]
    if not isinstance(against, Mapping) or set(against) - (ROLL_KEYS | set(SYSTEM_KEYS[system])):
        raise InvalidInput("against", _("the other side has character, traits, pool, modifiers"))
    if against.get("willpower"):
        raise InvalidInput("against.willpower", _("Willpower is spent by the one who rolls"))
    other = find_character(campaign, against.get("character"), "against.character")
    first_spec = {k: v for k, v in data.items() if k not in ("against", "mode")}
    first = build(first_spec, character, state)
    faces_a, result_a = roller.roll(system, first.check, 2)
    free_botches.consumed(character, result_a)
    # RULES 2.7: "the same goes for their enemies": the resisting side's own free botch.
    other_state = RollContext(
        life_or_death_allowed=True,
        free_botch_available=free_botches.available(other),
        circumstances_by="gm",
    )
    second = build(against, other, other_state, prefix="against.")
    if system == "d6pool":
        mode = data.get("mode") or "opposed"
        if mode not in ("opposed", "contest"):
            raise InvalidInput("mode", _("must be opposed or contest"))
        if mode == "opposed":
            reduced = d6pool.defender_pool(result_a, second.check["pool"])
            kind = "opposed"
            if reduced is None:  # a failed attack needs no defence roll
                comparison = compare(system, kind, [result_a])
                return (
                    kind,
                    [roll_entry(character, first_spec, first, faces_a, result_a)],
                    comparison,
                )
            penalty = reduced - second.check["pool"]
            second.check["pool"] = reduced
            second.breakdown.append(
                {"label": SERVER_LABELS["opposed"], "value": penalty, "kind": "opposed"}
            )
    faces_b, result_b = roller.roll(system, second.check, 2)
    kind = mode if system == "d6pool" else ("resisted" if system == "storyteller" else "opposed")
    comparison = compare(system, kind, [result_a, result_b])
    return (
        kind,
        [
            roll_entry(character, first_spec, first, faces_a, result_a),
            roll_entry(other, against, second, faces_b, result_b),
        ],
        comparison,
    )
