"""What the stateful rules allow now (GET …/state/): resources, what the rules have used up, and
the follow-ups each check of the feed offers, per member."""

from __future__ import annotations

from typing import Any

from campaign.models import Campaign, Chapter, Character, Membership, Role, Scene, Session
from rolls.models import RuleUse, TaskAttempts
from rolls.reads.known import dramatic_failure_uses, known_uses, resources_for
from rolls.reads.present import follow_ups_by_seq
from rolls.rules import option

# CofD's intentional dramatic failure: the period its limit counts in, by the option's mode.
DRAMATIC_FAILURE_PERIOD = {"per_chapter": "chapter", "per_scene": "scene"}


def _flag_rules(campaign: Campaign) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Which allowances the panels show (rule, period): per character and for the table,
    decided by the campaign's options here so the pages pick no rows from modes (#11)."""
    system, options = campaign.system, campaign.options
    per_character: list[tuple[str, str]] = []
    per_table: list[tuple[str, str]] = []
    if system == "storyteller":
        scope = option(options, system, "free_botch")
        if scope == "per_character":
            per_character.append(("free_botch", "session"))
        elif scope == "per_table":
            per_table.append(("free_botch", "session"))
    if system == "cofd":
        period = DRAMATIC_FAILURE_PERIOD.get(
            option(options, system, "intentional_dramatic_failure")
        )
        if period is not None:  # off, or unlimited: nothing to track
            per_character.append(("dramatic_failure", period))
    return per_character, per_table


def allowances_for(
    campaign: Campaign, membership: Membership, head: int | None = None
) -> dict[str, Any]:
    """Beats, Fortune, free botches, intentional dramatic failures and retries as they stand,
    and the follow-ups this member may apply now to the checks of the feed, as of ``head_seq``.

    A player learns nothing here that the rolls they may see do not already tell: allowances
    used by hidden rolls (a free botch on a blind roll) are left out until the roll is revealed.
    """
    if head is None:
        head = Campaign.objects.filter(pk=campaign.pk).values_list("head_seq", flat=True).get()
    session, chapter, scene = (
        Session.open_in(campaign),
        Chapter.open_in(campaign),
        Scene.open_in(campaign),
    )
    open_periods = {"session": session, "chapter": chapter, "scene": scene}
    periods = [p.pk for p in open_periods.values() if p is not None]
    session_pk = session.pk if session else None
    flag_rules, table_rules = _flag_rules(campaign)
    # The open period a dramatic failure counts against: the one its flag names (the options').
    counted_in = next(
        (open_periods[period] for rule, period in flag_rules if rule == "dramatic_failure"), None
    )
    uses = known_uses(
        membership,
        [
            *RuleUse.objects.filter(campaign=campaign, period_id__in=periods).exclude(
                rule="intentional_dramatic_failure"
            ),
            # As the rule counts them (`rolls.reads.known.in_period`).
            *dramatic_failure_uses(campaign, None if counted_in is None else counted_in.pk),
        ],
    )
    retries = []
    if membership.role == Role.GM:
        retries = [
            {"character": str(t.character_id), "task": t.task, "failures": t.failures}
            for t in TaskAttempts.objects.filter(campaign=campaign).order_by("task")
        ]
    # An allowance counts in a period that is open: with none, "available" would be untrue.
    is_open = {name: period is not None for name, period in open_periods.items()}
    characters = []
    sheet_rows = list(Character.objects.filter(campaign=campaign))
    resources = resources_for(membership, sheet_rows)
    for character in sheet_rows:
        mine = [u for u in uses if u.character_id == character.pk]
        used = {
            "free_botch": any(u.rule == "free_botch" for u in mine),
            "dramatic_failure": any(u.rule == "intentional_dramatic_failure" for u in mine),
        }
        characters.append(
            {
                "id": str(character.pk),
                "name": character.name,
                "owner_id": character.owner_id,
                "resources": resources[str(character.pk)],
                "free_botch_used": used["free_botch"],
                "dramatic_failure_used": used["dramatic_failure"],
                # What the panels show for this character, as the options decide.
                "flags": [
                    {"rule": rule, "period": period, "used": used[rule], "open": is_open[period]}
                    for rule, period in flag_rules
                ],
            }
        )
    offered, first_seq = follow_ups_by_seq(campaign, membership, head, open_periods)
    # Any free botch consumed this session spends the table's (README: scoping rule).
    table_used = any(u.rule == "free_botch" and u.period_id == session_pk for u in uses)
    return {
        "head_seq": head,
        "system": campaign.system,
        "options": campaign.options,
        "session": session.number if session else None,
        # Whether this member may roll now (what `check_roll` refuses first): the feed offers
        # «Roll again» on their own rolls by it, and follows it when the session ends.
        "may_roll": session is not None and membership.role != Role.OBSERVER,
        "chapter": chapter.number if chapter else None,
        "scene": scene.number if scene else None,
        "table_free_botch_used": table_used,
        "table_flags": [
            {"rule": rule, "period": period, "used": table_used, "open": is_open[period]}
            for rule, period in table_rules
        ],
        "characters": characters,
        "retries": retries,
        "follow_ups": offered,
        "follow_ups_from": first_seq,
    }
