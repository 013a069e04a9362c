"""The rule state as it is, and as one viewer may know it: one place for both.

The rules decide on the true state (attempts at a task, the free botch, allowances taken, Beats
and Fortune), hidden rolls included. A viewer is shown only what the rolls they may see did: a
blind failure does not raise the attempt in their odds, a hidden botch does not spend the free
botch in their panel, Fortune spent on a hidden roll stays in their view of the balance. Every
function here takes ``viewer``: None for the truth (the services), a membership for what that
member may know (odds, panels, sheets, follow-up offers). Where a later roll the viewer sees is
decided on the truth, it can tell them what was hidden (README, "Visibility").
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any
from uuid import UUID

from django.db import connection
from django.db.models import Q, QuerySet

from campaign.models import Campaign, Character, Membership, Role
from eventlog.event_types import TASK_RESET
from eventlog.models import Event
from eventlog.rows import fetch
from rolls.models import Check, RuleUse, TaskAttempts
from rolls.reads.visibility import Facts, Shown, may_see
from rolls.rules import RETRY_SYSTEMS, option, recorded_failed_attempt, task_key


def _knows_all(viewer: Membership | None) -> bool:
    return viewer is None or viewer.role == Role.GM


def _unseen(campaign_id: int, viewer: Membership, **filters) -> list[Check]:
    """Hidden checks (with ``filters``) the viewer may not see; few, so read in full."""
    hidden = Check.objects.filter(campaign_id=campaign_id, revealed=False, **filters).exclude(
        visibility="public"
    )
    return [check for check in hidden if not may_see(check, viewer)]


def known_uses(viewer: Membership | None, uses: Iterable[RuleUse]) -> list[RuleUse]:
    """The allowances taken (free botch, dramatic failure…) by rolls the viewer may see."""
    uses = list(uses)
    if _knows_all(viewer) or not uses:
        return uses
    checks = (
        Check.objects.filter(campaign_id=viewer.campaign_id, seq__in={u.check_seq for u in uses})
        .select_related(None)
        .only("seq", "visibility", "revealed", "audience")
    )
    seen = {check.seq for check in checks if may_see(check, viewer)}
    return [use for use in uses if use.check_seq in seen]


def failed_attempts(
    *, campaign: Campaign, character_id: UUID | str, task: str, viewer: Membership | None = None
) -> int:
    """Failed attempts at ``task`` so far (the next attempt is this + 1); a task is one counter
    however its name is typed (``rolls.rules.task_key``)."""
    if not task or campaign.system not in RETRY_SYSTEMS:
        return 0
    key = task_key(task)
    counter = TaskAttempts.objects.filter(campaign=campaign, character_id=character_id, task=key)
    failures = counter.values_list("failures", flat=True).first() or 0
    if _knows_all(viewer):
        return failures
    return _known_failures(failures, attempts_since_reset(campaign, character_id, key), viewer)


def last_counted_failure(campaign: Campaign, character_id: UUID | str, key: str) -> Check | None:
    """The last failed attempt at the task ``key`` its counter counts (after its last reset and
    its last success), None when it counts none."""
    last = None
    for check in attempts_since_reset(campaign, character_id, key):
        failed = recorded_failed_attempt(check.event.payload)
        if failed is not None:
            last = check if failed else None
    return last


def attempts_since_reset(campaign: Campaign, character_id: UUID | str, key: str) -> list[Check]:
    """The checks at the task ``key`` (a `task_key`) since its last reset, in seq order: what
    its counter counted."""
    resets = Event.objects.filter(
        campaign=campaign, type=TASK_RESET, payload__character_id=str(character_id)
    ).values_list("seq", "payload")
    # Keyed again: a reset logged before task_key folded width and invisible characters holds
    # the key of its day.
    reset = max((seq for seq, payload in resets if task_key(payload["task"]) == key), default=0)
    return [
        check
        for check in Check.objects.filter(
            campaign=campaign, character_id=character_id, seq__gt=reset
        ).order_by("seq")
        if check.task and task_key(check.task) == key
    ]


def _known_failures(failures: int, tried: list[Check], viewer: Membership) -> int:
    """The counter's `failures` as `viewer` knows them, from the attempts since its last reset
    (in seq order)."""
    if all(may_see(check, viewer) for check in tried):
        return failures
    # Replay the counter over the attempts the viewer saw, as the projector counts them all.
    known = 0
    for check in tried:
        if may_see(check, viewer):
            failed = recorded_failed_attempt(check.event.payload)
            if failed is not None:
                known = known + 1 if failed else 0
    return known


def failed_attempts_of(
    counters: Iterable[TaskAttempts], viewer_of: Callable[[int], Membership]
) -> dict[int, int]:
    """`failed_attempts` of many counters (rows with their campaign), each as the viewer
    `viewer_of(campaign_id)` may know it, by counter id: at most two statements whatever their
    number (the admin's pages), the resets and the attempts of every counter read at once."""
    known: dict[int, int] = {}
    replayed: list[TaskAttempts] = []
    for counter in counters:
        if not counter.task or counter.campaign.system not in RETRY_SYSTEMS:
            known[counter.pk] = 0
        elif _knows_all(viewer_of(counter.campaign_id)):
            known[counter.pk] = counter.failures
        else:
            replayed.append(counter)
    if not replayed:
        return known
    campaigns = {counter.campaign_id for counter in replayed}
    resets: dict[tuple[int, str, str], int] = {}
    for campaign_id, payload, seq in Event.objects.filter(
        campaign_id__in=campaigns, type=TASK_RESET
    ).values_list("campaign_id", "payload", "seq"):
        reset = (campaign_id, payload.get("character_id"), task_key(payload.get("task") or ""))
        resets[reset] = max(resets.get(reset, 0), seq)
    tried: dict[tuple[int, str, str], list[Check]] = {}
    for check in (
        Check.objects.filter(
            campaign_id__in=campaigns,
            character_id__in={counter.character_id for counter in replayed},
        )
        .exclude(task="")
        .select_related("event")
        .order_by("seq")
    ):
        attempt = (check.campaign_id, str(check.character_id), task_key(check.task))
        tried.setdefault(attempt, []).append(check)
    for counter in replayed:
        attempt = (counter.campaign_id, str(counter.character_id), task_key(counter.task))
        since = resets.get(attempt, 0)
        checks = [check for check in tried.get(attempt, []) if check.seq > since]
        known[counter.pk] = _known_failures(
            counter.failures, checks, viewer_of(counter.campaign_id)
        )
    return known


def free_botch_available(
    *,
    campaign: Campaign,
    session_id: UUID | None,
    character_id: UUID | str | None,
    viewer: Membership | None = None,
) -> bool:
    """Storyteller: the session's free botch is still unused (per character or per table)."""
    system = campaign.system
    mode = option(campaign.options, system, "free_botch") if system == "storyteller" else "off"
    if mode == "off" or character_id is None or session_id is None:
        return False
    used = RuleUse.objects.filter(campaign=campaign, rule="free_botch", period_id=session_id)
    if mode == "per_character":
        used = used.filter(character_id=character_id)
    return not known_uses(viewer, used)


def dramatic_failures(
    *, campaign: Campaign, period_id: UUID | None, character_id: UUID | str | None = None
) -> dict[UUID, list[Facts]]:
    """CofD: the rolls turned into intentional dramatic failures in this chapter / scene, by the
    character who took them, as the facts `known_checks` reads to tell what a viewer knows of
    them: one hand-written statement, read once for every viewer
    (`rolls.checks.eligibility.Now`) on a check's hot path (for one character) and for a whole
    catch-up page (for all of them). A roll of the period counts whatever period the option
    named when it was turned (`in_period`); ``period_id`` None: those taken under no limit."""
    uuid = RuleUse._meta.get_field("period_id")
    params = [campaign.pk]
    if character_id is not None:
        params += [uuid.get_db_prep_value(character_id, connection)]
    if period_id is not None:
        params += [uuid.get_db_prep_value(period_id, connection)] * 2
    sql = (
        f"SELECT u.character_id, {FACTS_COLUMNS} {_DRAMATIC_FAILURES} "
        "WHERE u.campaign_id = %s AND u.rule = 'intentional_dramatic_failure' "
        + ("" if character_id is None else "AND u.character_id = %s ")
        + ("AND u.period_id IS NULL" if period_id is None else f"AND {in_period('%s')}")
    )
    taken: dict[UUID, list[Facts]] = {}
    for owner, *facts in fetch(sql, params):  # prepared on PostgreSQL
        owner = owner if isinstance(owner, UUID) or owner is None else UUID(owner)
        taken.setdefault(owner, []).append(facts_of(*facts))
    return taken


# A dramatic failure's rule use and the check it turned (for the check's visibility facts).
_DRAMATIC_FAILURES = (
    f"FROM {RuleUse._meta.db_table} u JOIN {Check._meta.db_table} k "
    "ON k.campaign_id = u.campaign_id AND k.seq = u.check_seq"
)
FACTS_COLUMNS = "k.visibility, k.revealed, k.audience"


def in_period(period: str) -> str:
    """The dramatic failures' condition on their roll ``k``: made in ``period`` (an SQL value).

    A dramatic failure counts against the chapter and the scene its roll was made in, whatever
    period its rule use names (the one the option named then): switching the option between
    per_scene, per_chapter and unlimited never hands out a second one in a period. Ids are
    UUIDs: a chapter's is never a scene's."""
    return f"(k.chapter_id = {period} OR k.scene_id = {period})"


def facts_of(visibility: str, revealed: Any, audience: Any) -> Facts:
    """A check's visibility facts from its stored columns (`FACTS_COLUMNS`)."""
    audience = json.loads(audience) if isinstance(audience, str) else audience
    return Facts(visibility, bool(revealed), audience)


def dramatic_failure_uses(campaign: Campaign, period_id: UUID | None) -> QuerySet[RuleUse]:
    """The rule uses of the dramatic failures counted against the chapter or scene
    ``period_id`` (`in_period`; none for None)."""
    rolls = Check.objects.filter(campaign=campaign).filter(
        Q(chapter_id=period_id) | Q(scene_id=period_id)
    )
    return RuleUse.objects.filter(
        campaign=campaign,
        rule="intentional_dramatic_failure",
        check_seq__in=rolls.values("seq") if period_id is not None else [],
    )


def open_periods(campaign_id: int) -> dict[str, UUID | None]:
    """The campaign's open session, chapter and scene by name (each id, or None where none is
    open), in one statement: a follow-up's rules read the session and the period it counts in."""
    from campaign.models import Chapter, Scene, Session

    tables = {"session": Session, "chapter": Chapter, "scene": Scene}
    sql = " UNION ALL ".join(
        f"SELECT '{name}', id FROM {model._meta.db_table} "
        "WHERE campaign_id = %s AND ended_seq IS NULL"
        for name, model in tables.items()
    )
    found = {name: UUID(str(pk)) for name, pk in fetch(sql, [campaign_id] * len(tables))}
    return {name: found.get(name) for name in tables}


def helper_seqs(campaign: Campaign) -> set[int]:
    """The checks another roll has used as a teamwork helper (RULES 3.7)."""
    return set(
        RuleUse.objects.filter(campaign=campaign, rule="helper").values_list("check_seq", flat=True)
    )


def used_as_helper_sql(campaign: str, check: str) -> str:
    """Whether check ``check`` (a seq column) of ``campaign`` was used as a helper (`helper_seqs`),
    as a column of another statement."""
    return (
        f"EXISTS (SELECT 1 FROM {RuleUse._meta.db_table} h WHERE h.campaign_id = {campaign} "
        f"AND h.rule = 'helper' AND h.check_seq = {check})"
    )


def dramatic_failures_taken_sql(campaign: str, period: str, character: str) -> str:
    """`dramatic_failures` for one character and period as a correlated subquery of another
    statement (``campaign``, ``period``, ``character``: its columns): one JSON array of the
    facts (`facts_of` each, after `json.loads`), NULL or "[]" for none."""
    if connection.vendor == "postgresql":
        facts = f"json_agg(json_build_array({FACTS_COLUMNS}))::text"
    else:
        facts = "json_group_array(json_array(k.visibility, k.revealed, json(k.audience)))"
    return (
        f"(SELECT {facts} {_DRAMATIC_FAILURES} WHERE u.campaign_id = {campaign} "
        "AND u.rule = 'intentional_dramatic_failure' "
        f"AND {in_period(period)} AND u.character_id = {character})"
    )


def free_botch_users_sql(campaign: str, session: str) -> str:
    """The characters who used the session's free botch (the truth: `free_botch_available` for
    no viewer) as a correlated subquery of another statement (``campaign``, ``session``: its
    columns): one JSON array of their ids, NULL or "[]" for none."""
    users = (
        "json_agg(u.character_id)::text"
        if connection.vendor == "postgresql"
        else ("json_group_array(u.character_id)")
    )
    return (
        f"(SELECT {users} FROM {RuleUse._meta.db_table} u WHERE u.campaign_id = {campaign} "
        f"AND u.rule = 'free_botch' AND u.period_id = {session})"
    )


def failures_sql(campaign: str, character: str) -> str:
    """The failed attempts so far at a task (the truth: `failed_attempts` for no viewer) as a
    correlated subquery of another statement (``campaign``, ``character``: its columns; the
    task's key is its parameter), NULL for none."""
    return (
        f"(SELECT t.failures FROM {TaskAttempts._meta.db_table} t WHERE t.campaign_id = {campaign} "
        f"AND t.character_id = {character} AND t.task = %s)"
    )


def known_checks(viewer: Membership | None, checks: Iterable[Shown]) -> list[Shown]:
    """The checks among ``checks`` whose effects ``viewer`` knows of (all of them for the truth)."""
    checks = list(checks)
    return checks if _knows_all(viewer) else [c for c in checks if may_see(c, viewer)]


def resources_for(
    viewer: Membership | None, characters: Iterable[Character]
) -> dict[str, dict[str, int]]:
    """Each character's resources as ``viewer`` may know them: what hidden rolls did (a Beat from
    a dramatic failure, Fortune spent) is left out until the roll is revealed."""
    characters = list(characters)
    shown = {str(c.pk): dict(c.resources) for c in characters}
    if _knows_all(viewer) or not characters:
        return shown
    for check in _unseen(characters[0].campaign_id, viewer):
        for character_id, changes in check.resource_changes.items():
            for name, delta in changes.items():
                if character_id in shown and name in shown[character_id]:
                    shown[character_id][name] -= delta
    # A GM's edit after a hidden gain lowers the truth below what was hidden (Beats spent to 0
    # after a blind roll's Beat): "-1" would tell of it.
    return {
        character: {name: max(0, value) for name, value in resources.items()}
        for character, resources in shown.items()
    }
