"""The pages' vocabulary: each system's outcomes, traits and options in its own words, translated.

One source for the templates (the filters below) and for the pages' JavaScript (`ui_strings`,
rendered into the page with ``json_script``), so the feed, the audit table and the forms name an
outcome the same way in Russian and in English.
"""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

# Group, resource and rank names: one source with the sheet templates the API delivers.
from campaign.sheets import GROUPS, RANKS, RESOURCES
from pages import once
from rolls.systems.options import option_table
from rolls.systems.traits import NICE_DAMNIT_RANKS, TRAIT_GROUPS
from rolls.words import (
    LINE_NAMES,
    OUTCOMES,
    SERVER_LABELS,
    SYSTEM_NAMES,
    reader_trait_labels,
    traits_text,
)

register = template.Library()

SYSTEM_BLURBS = {
    "d6pool": _("Pool of d6: 4-6 is a success, a 1 takes one away; equal means «wrong way!»."),
    "storyteller": _(
        "Pool of d10 against a difficulty; 1s cancel successes; no success and a 1 is a botch."
    ),
    "nice_damnit": _(
        "2d10 + Area + Skill: bad, average or excellent, with Nice! and Damnit! chips."
    ),
    "age": _(
        "3d6 + ability (+2 focus) against a target; the Drama Die gives stunt points on doubles."
    ),
    "cofd": _(
        "Pool of d10: 8+ succeeds, 10s explode; five successes are exceptional; no dice "
        "left is a chance die."
    ),
}

# How good an outcome is, for its colour: great, good, mixed, bad, awful.
TONES: dict[str, dict[str, str]] = {
    "d6pool": {
        "success": "good",
        "wrong_way": "mixed",
        "failure": "bad",
        "critical_failure": "awful",
    },
    "storyteller": {"success": "good", "failure": "bad", "botch": "awful", "impossible": "bad"},
    "nice_damnit": {"bad": "bad", "average": "mixed", "excellent": "great"},
    "age": {"success": "good", "failure": "bad", "auto_failure": "awful", "rolled": "mixed"},
    "cofd": {
        "exceptional_success": "great",
        "success": "good",
        "failure": "bad",
        "dramatic_failure": "awful",
    },
}

DEGREES = {
    "marginal": _("marginal"),
    "moderate": _("moderate"),
    "complete": _("complete"),
    "exceptional": _("exceptional"),
    "phenomenal": _("phenomenal"),
}

# Rule options (RULES.md A.2): a short name and a one-line explanation each.
OPTIONS: dict[str, dict[str, Any]] = {
    "manual_dice": {
        "label": _("Physical dice"),
        "help": _(
            "Players type in the faces of real dice; such rolls are marked manual and "
            "left out of the dice proof."
        ),
    },
    "desperate": {
        "label": _("Desperate rolls"),
        "help": _(
            "With fewer than one die: succeed only if every die shows 4-6, or only on sixes."
        ),
        "choices": {"all_hits": _("every die 4-6"), "all_sixes": _("every die a 6")},
    },
    "adrenaline_dice": {
        "label": _("Adrenaline dice"),
        "help": _("Extra dice when the GM marks a physical action as life-or-death."),
    },
    "free_botch": {
        "label": _("Free botch"),
        "help": _(
            "The first botch of each session becomes a plain failure — per character or "
            "for the whole table."
        ),
        "choices": {
            "per_character": _("per character"),
            "per_table": _("per table"),
            "off": _("off"),
        },
    },
    "retry_escalation": {
        "label": _("Trying again"),
        "help": _(
            "Each new attempt at a failed task is harder: +1, +3, +6 … (seed), +1, +2, "
            "+3 … (book) or not at all."
        ),
        "choices": {"seed": _("+1, +3, +6 …"), "linear": _("+1, +2, +3 …"), "off": _("off")},
    },
    "extra_nice": {
        "label": _("Extra Nice!"),
        "help": _(
            "After an average or excellent roll, take up to 2 more Nice!, a Damnit! for each."
        ),
    },
    "fortune_dice": {
        "label": _("Fortune"),
        "help": _("After the roll, pay Fortune to set one die; the Drama Die costs double."),
    },
    "intentional_dramatic_failure": {
        "label": _("Dramatic failure for a Beat"),
        "help": _(
            "A player may turn a failure into a dramatic failure and earn a Beat — how "
            "often per character."
        ),
        "choices": {
            "per_chapter": _("once per chapter"),
            "per_scene": _("once per scene"),
            "unlimited": _("unlimited"),
            "off": _("off"),
        },
    },
    "beat_on_dramatic_failure": {
        "label": _("Beat on a natural dramatic failure"),
        "help": _("A 1 on a chance die also earns a Beat (the core book's rule)."),
    },
    "retry_penalty": {
        "label": _("Retry penalty"),
        "help": _(
            "Under pressure, each new attempt at a task loses one more die (not for "
            "extended actions)."
        ),
    },
    "modifier_cap": {
        "label": _("Modifier cap"),
        "help": _("Each group of modifiers counts at most ±N dice; bonuses before penalties."),
    },
    "chance_die_explodes": {
        "label": _("Chance die explodes"),
        "help": _("A 10 on a chance die rolls again (1st edition); off in the 2nd edition."),
    },
    "under_pressure": {
        "label": _("Under pressure by default"),
        "help": _("Rolls that do not say otherwise are under time pressure, so retries lose dice."),
    },
    "extended": {
        "label": _("Extended actions by default"),
        "help": _("Rolls that do not say otherwise are extended actions (no retry penalty)."),
    },
    "stressful": {
        "label": _("Stressful by default"),
        "help": _("Rolls that do not say otherwise are under stress: no automatic success."),
    },
}

VISIBILITY = {
    "public": _("public"),
    "private": _("private"),
    "blind": _("blind"),
}

ROLES = {"gm": _("game master"), "player": _("player"), "observer": _("observer")}


def _text(mapping: dict[Any, Any]) -> dict[str, Any]:
    """Evaluate lazy strings (in the active language), recursively."""
    out: dict[str, Any] = {}
    for key, value in mapping.items():
        out[str(key)] = _text(value) if isinstance(value, dict) else str(value)
    return out


def option_rows(system: str, values: dict[str, Any]) -> list[dict[str, Any]]:
    """The campaign's rule options, each with its control, current value and explanation."""
    rows = []
    for name, option in option_table(system).items():
        words = OPTIONS.get(name, {})
        if option.choices is not None:
            control = "select"
        elif isinstance(option.default, bool):
            control = "checkbox"
        else:
            control = "number"
        choices = words.get("choices", {})
        rows.append(
            {
                "name": name,
                "label": str(words.get("label", name)),
                "help": str(words.get("help", option.help)),
                "control": control,
                "value": values.get(name, option.default),
                "default": option.default,
                "choices": [(c, str(choices.get(c, c))) for c in option.choices or ()],
                "min": option.low,
                "max": option.high,
            }
        )
    return rows


def ui_strings() -> dict[str, Any]:
    """Everything the pages' JavaScript shows, in the active language."""
    return {
        "outcomes": _text(OUTCOMES),
        "tones": TONES,
        "groups": _text(GROUPS),
        "resources": _text(RESOURCES),
        "ranks": _text(RANKS),
        "rank_bonus": NICE_DAMNIT_RANKS,
        "degrees": _text(DEGREES),
        "visibility": _text(VISIBILITY),
        "roles": _text(ROLES),
        "trait_groups": {system: list(groups) for system, groups in TRAIT_GROUPS.items()},
        "traits": reader_trait_labels(),
        "server_labels": SERVER_LABELS,  # a line the server wrote is named by its kind
        "t": _text(JS_TEXT),
    }


JS_TEXT: dict[str, Any] = {
    # connection
    "conn_live": _("live"),
    "conn_connecting": _("connecting…"),
    "conn_offline": _("offline — reconnecting"),
    "conn_title": _("Connection to the table"),
    "history_changed": _(
        "The history of this campaign changed since this browser last saw it: the server's log "
        "no longer holds what you saw (an older backup was restored, or history was rewritten). "
        "Tell the GM, and compare the receipts and exports you kept."
    ),
    # feed
    "hidden_by": _("a hidden roll by {name}"),
    "private_mark": _("private: the roller and the GM"),
    "blind_mark": _("blind: GM only"),
    "revealed_mark": _("revealed"),
    "manual_mark": _("physical dice"),
    "reveal": _("Reveal to everyone"),
    "gm": _("GM"),
    "npc": _("no character"),
    "dice": _("dice"),
    # plural forms, chosen in the browser by Intl.PluralRules (one, few, many, other)
    "success_one": _("{n} success"),
    "success_few": pgettext_lazy("2-4", "{n} successes"),
    "success_many": _("{n} successes"),
    "success_other": pgettext_lazy("fractions", "{n} successes"),
    "total": _("total"),
    "target": _("target"),
    "difficulty": _("difficulty"),
    "chance_die": _("chance die"),
    "drama_die": _("Drama Die"),
    "stunt_points": _("{n} stunt points"),
    "doubles": _("doubles"),
    "fortune_changed": _("Fortune: {die} set to {value} for {cost}"),
    "exploded": _("exploded"),
    "rerolled": _("rote reroll"),
    "free_botch_used": _("free botch used: the botch became a failure"),
    "intentional": _("taken on purpose for a Beat"),
    "beats_awarded": _("+{n} Beat"),
    "attempt": _("attempt {n}"),
    "retry_raise": _("attempt {n}: +{raise}"),
    "difficulty_capped": _("difficulty capped at {n}"),
    "capped_line": _("{label} {raw}, capped at {value}"),
    "circ_under_pressure": _("under pressure"),
    "circ_extended": _("extended action"),
    "circ_stressful": _("stressful"),
    "by_player": _("declared by the player"),
    "by_gm": _("set by the GM"),
    "by_call": _("the GM's call"),
    "by_default": _("campaign default"),
    "task": _("task"),
    "nice_taken": _("{n} extra Nice! taken"),
    "again_10": _("10-again"),
    "again_9": _("9-again"),
    "again_8": _("8-again"),
    "again_none": _("no explosions"),
    "rote": _("rote"),
    "desperate": _("desperate roll"),
    "severity": _("severity {n}"),
    "automatic": _("automatic success"),
    "winner": _("{name} wins"),
    "margin": _("by {n}"),
    "tie": _("a tie"),
    "reroll_tie": _("tied: roll again"),
    "effect": _("the attack lands with {n}"),
    "net_successes": _("{n} net successes"),
    "session_started": _("Session {n} started"),
    "session_ended": _("Session {n} ended — keep its receipt"),
    "chapter_started": _("Chapter {n} started"),
    "chapter_ended": _("Chapter {n} ended"),
    "scene_started": _("Scene {n} started"),
    "scene_ended": _("Scene {n} ended"),
    "called": _("The GM calls for a check: {names}"),
    "joined": _("{name} joined the table"),
    "announce_roll": _("{who}: {outcome}"),
    "feed_empty": _("No rolls yet this session."),
    "show_older": _("Show older rolls"),
    "trait_name": _("Trait name"),
    "trait_value": _("Rating"),
    "add": _("Add"),
    "add_trait_named": _("+ a trait in {group}"),
    "sheet_resources": _("Resources"),
    "fix_fields": _("Fix the marked fields ({n})."),
    "roll_again": _("Roll again"),
    "sheet_changed": _("{name}'s sheet changed: {changes}"),
    "willpower_left": _("{n} left"),
    "willpower_spent": _("1 Willpower spent"),
    "in_feed": _("#{n} in the feed"),
    # follow-ups
    "dramatic_failure": _("Fail dramatically for a Beat"),
    # the hint follows the campaign's option, which the server names in the offer's `limit`
    "dramatic_failure_hint_per_chapter": _(
        "Turn this failure into a dramatic failure and earn a Beat (once per chapter)."
    ),
    "dramatic_failure_hint_per_scene": _(
        "Turn this failure into a dramatic failure and earn a Beat (once per scene)."
    ),
    "dramatic_failure_hint_unlimited": _(
        "Turn this failure into a dramatic failure and earn a Beat."
    ),
    "fortune": _("Spend Fortune"),
    "fortune_die": _("Die"),
    "fortune_value": _("New face"),
    "fortune_cost": _("costs {n} Fortune"),
    "fortune_balance": _("{name} has {n} Fortune"),
    "die_n": _("die {n}"),
    "extra_nice": _("Take {n} extra Nice!"),
    "extra_nice_with_damnit": _("Take {n} extra Nice! (+{d} Damnit!)"),
    # forms
    "roll": _("Roll"),
    "call": _("Call for the check"),
    "answer": _("Roll it"),
    "odds": _("Odds"),
    "odds_none": _("Pick traits to see the odds."),
    "odds_for": _("Odds for {name}"),
    "rollbox_refused": _("The typed line is not a check yet: fix it above, or clear it."),
    "distribution_successes": _("successes"),
    "distribution_totals": _("totals"),
    "or_more": _("{n}+"),
    "select_character": _("Choose a character"),
    "no_traits": _("Click traits on the sheet or below to add them."),
    "error": _("That did not work: {message}"),
    "no_connection": _("No connection: nothing was done. Try again."),
    "no_connection_roll": _(
        "No connection: your roll may not have been made. Roll again: it will not be rolled twice."
    ),
    "no_connection_write": _(
        "No connection: this may not have been done. Try again: it will not be done twice."
    ),
    # The server answered but could not do it (config/outage.py's refusals): its own words.
    "no_connection_refused": _("Nothing was done: {message}."),
    "no_connection_roll_refused": _(
        "Your roll may not have been made: {message}. It will not be rolled twice."
    ),
    "no_connection_write_refused": _(
        "This may not have been done: {message}. It will not be done twice."
    ),
    "blind_sent": _("Your blind roll went to the GM."),
    "saved": _("Saved."),
    "copied": _("Copied to the clipboard."),
    "confirm_end_session": _("End the session? Hidden rolls stay hidden until you reveal them."),
    "confirm_end_session_chapter": _(
        "End the session? Hidden rolls stay hidden until you reveal them. "
        "Chapter {n} is still open: end it too, or keep it open into the next session?"
    ),
    "end_session_and_chapter": _("End the session and the chapter"),
    "end_session_only": _("End the session, keep the chapter"),
    "confirm_remove": _("Remove {name} from the campaign?"),
    "presence_unknown": _("Presence shows once the live connection is up."),
    "online": _("online"),
    "away": _("away"),
    "used": _("used"),
    "available": _("available"),
    "no_session_open": _("no session is open"),
    "no_chapter_open": _("no chapter is open"),
    "no_scene_open": _("no scene is open"),
    "none": _("none"),
    "reset": _("Reset"),
    "failures": _("{n} failed"),
    "chips": _("chips this session"),
    "call_answered": _("answered"),
    "close_call": _("Close the call"),
    "faces_hint": _("the faces you rolled, e.g. 8 3 10"),
    # breakdown lines named by their kind or group (rolls.words.line_label)
    **{f"bd_{kind}": text for kind, text in LINE_NAMES.items()},
    "pool_dice_one": _("{n} die"),
    "pool_dice_few": pgettext_lazy("2-4", "{n} dice"),
    "pool_dice_many": _("{n} dice"),
    "pool_dice_other": pgettext_lazy("fractions", "{n} dice"),
    "vs_tn": _("vs {n}"),
    # sheets and the character editor
    "add_to_roll": _("Add {name} to the roll"),
    "new_character": _("New character"),
    "edit": _("Edit"),
    "save": _("Save"),
    "cancel": _("Cancel"),
    "name": _("Name"),
    "owner": _("Player"),
    "nobody": _("nobody (NPC)"),
    "traits_hint_int": _("One per line: name and value, e.g. “Wits 3”."),
    "traits_hint_rank": _("One per line: name and rank (perk, novice_1 … master_3)."),
    "traits_hint_names": _("One per line: trait, a colon, then names, e.g. “Occult: Ghosts”."),
    "free_botch": _("free botch this session"),
    "table_free_botch": _("table's free botch this session"),
    "dramatic_failure_state": _("dramatic failure for a Beat"),
    "this_chapter": _("this chapter"),
    "this_scene": _("this scene"),
    "no_characters": _("No characters yet."),
    "retries": _("Retries"),
    "no_retries": _("No failed attempts are being counted."),
    # the session bar
    "session_n": _("Session {n}"),
    "chapter_n": _("Chapter {n}"),
    "scene_n": _("Scene {n}"),
    "no_session": _("No session is open"),
    "no_chapter": _("no chapter"),
    "no_scene": _("no scene"),
    "start_session": _("Start a session"),
    "end_session": _("End the session"),
    "start_chapter": _("Start a chapter"),
    "end_chapter": _("End the chapter"),
    "start_scene": _("Start a scene"),
    "end_scene": _("End the scene"),
    "title_optional": _("title (optional)"),
    "title_for": _("Title for the new {what}"),
    "confirm_end_chapter": _("End the chapter? Chapter allowances start afresh in the next one."),
    "rolls_need_session": _("The GM starts a session before anyone rolls."),
    # calls
    "gm_calls": _("The GM calls for a check"),
    "for_character": _("for {name}"),
    "call_show": _("Show me"),
    "call_dismiss": _("Dismiss"),
    "call_answered_by_you": _("Your answer to the GM's call"),
    "open_calls": _("Open calls"),
    "waiting": _("waiting"),
    # members
    "role": _("Role"),
    "remove": _("Remove"),
    "you": _("you"),
    "connected_count": _("{n} connected"),
    "renewed": _("A new invite link is ready; the old one no longer works."),
}


@register.filter
def system_name(system: str) -> str:
    return str(SYSTEM_NAMES.get(system, system))


@register.filter
def system_blurb(system: str) -> str:
    return str(SYSTEM_BLURBS.get(system, ""))


@register.simple_tag
def outcome_label(system: str, outcome: str) -> str:
    return str(OUTCOMES.get(system, {}).get(outcome, outcome))


@register.simple_tag
def outcome_tone(system: str, outcome: str) -> str:
    return TONES.get(system, {}).get(outcome, "mixed")


@register.simple_tag
def roll_traits(system: str, names: list[str] | None) -> str:
    """A roll's traits as the reader names them («Сообразительность + Оккультизм»), or «—»."""
    return traits_text(system, names) or "—"


@register.filter
def role_name(role: str) -> str:
    return str(ROLES.get(role, role))


@register.filter
def visibility_name(visibility: str) -> str:
    return str(VISIBILITY.get(visibility, visibility))


@register.simple_tag
def form_token() -> str:
    """A form's hidden once-only token (pages/once.py): a second submission writes nothing."""
    return format_html('<input type="hidden" name="{}" value="{}">', once.FIELD, once.new_token())
