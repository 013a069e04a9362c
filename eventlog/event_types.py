"""The event vocabulary: every event type of the log, named once, with the payload it carries.

Services append these types, projectors project them (every type has a projector), the verifier
understands each one (it re-derives the content of the rule-bearing ones and chain-checks the rest)
and the pages' JS gets the same names from the generated ``static/js/events.js``
(``manage.py export_event_types``). Standard library only: the standalone verifier imports it.

Adding an event type: a constant here with its payload, a projector, the verifier's entry.
"""

from __future__ import annotations

from dataclasses import dataclass

# Types names (the string is what the log stores; never change one).
CAMPAIGN_CREATED = "campaign.created"
CAMPAIGN_OPTIONS_CHANGED = "campaign.options_changed"
CAMPAIGN_RENAMED = "campaign.renamed"
MEMBER_JOINED = "member.joined"
MEMBER_ROLE_CHANGED = "member.role_changed"
MEMBER_LEFT = "member.left"
CHARACTER_CREATED = "character.created"
CHARACTER_CHANGED = "character.changed"
CHARACTER_FAVOURITE_ADDED = "character.favourite_added"
CHARACTER_FAVOURITE_REMOVED = "character.favourite_removed"
CHARACTER_WILLPOWER_RESTORED = "character.willpower_restored"
CHAPTER_STARTED = "chapter.started"
CHAPTER_ENDED = "chapter.ended"
SESSION_STARTED = "session.started"
SESSION_ENDED = "session.ended"
SCENE_STARTED = "scene.started"
SCENE_ENDED = "scene.ended"
CHECK_ROLLED = "check.rolled"
CHECK_DRAMATIC_FAILURE_TAKEN = "check.dramatic_failure_taken"
CHECK_FORTUNE_SPENT = "check.fortune_spent"
CHECK_EXTRA_NICE_TAKEN = "check.extra_nice_taken"
CHECK_REVEALED = "check.revealed"
CHECK_CALLED = "check.called"
CHECK_CALL_CLOSED = "check.call_closed"
TASK_RESET = "task.reset"


@dataclass(frozen=True)
class Payload:
    """The keys an event's payload carries: ``always`` in every event of the type, ``optional``
    in some (older events, or only for some systems or periods)."""

    always: tuple[str, ...]
    optional: tuple[str, ...] = ()


_PERIOD_STARTED = Payload(("id", "number", "title"))
_PERIOD_ENDED = Payload(("id", "number"))
_FOLLOWUP = ("check_seq", "check", "result")

PAYLOADS: dict[str, Payload] = {
    CAMPAIGN_CREATED: Payload(("name", "system", "options")),
    CAMPAIGN_OPTIONS_CHANGED: Payload(("options", "changes")),
    CAMPAIGN_RENAMED: Payload(("name",)),
    MEMBER_JOINED: Payload(("user_id", "username", "role")),
    MEMBER_ROLE_CHANGED: Payload(("user_id", "role")),
    MEMBER_LEFT: Payload(("user_id",)),
    CHARACTER_CREATED: Payload(("character_id", "owner_id", "name", "traits", "resources")),
    # A trait change records what changed and whether a session was open (the GM's feed shows
    # a player's mid-session edit). ``resource_changes``: what the GM's edit changed, by how
    # much (+1 Beat), never the sheet's values, which hold what hidden rolls did (this event is
    # public); ``resources``: the values set, in events logged before the changes were.
    CHARACTER_CHANGED: Payload(
        ("character_id",),
        ("name", "traits", "resources", "resource_changes", "owner_id", "diff", "during_session"),
    ),
    # A favourite roll: {"id", "name", "text"}, a line of the roll box (docs/rollbox.md).
    CHARACTER_FAVOURITE_ADDED: Payload(("character_id", "favourite")),
    CHARACTER_FAVOURITE_REMOVED: Payload(("character_id", "favourite_id")),
    CHARACTER_WILLPOWER_RESTORED: Payload(("character_id", "amount")),
    CHAPTER_STARTED: _PERIOD_STARTED,
    CHAPTER_ENDED: _PERIOD_ENDED,
    # A session commits to its first roll's key when it starts (each roll commits to the next,
    # docs/verification.md), and ends with a receipt of its last event; its seed stays secret.
    SESSION_STARTED: Payload((*_PERIOD_STARTED.always, "key_commitment")),
    SESSION_ENDED: Payload((*_PERIOD_ENDED.always, "final_seq", "final_hash")),
    SCENE_STARTED: _PERIOD_STARTED,
    SCENE_ENDED: _PERIOD_ENDED,
    CHECK_ROLLED: Payload(
        (
            "kind",
            "system",
            "options",
            "dice",
            "label",
            "task",
            "call_id",
            "helpers",
            "audience",
            "rolls",
            "comparison",
            "free_botch_scope",
            "client_seed",  # the player's entropy (null when the request sent none)
            "dice_key",  # this roll's key and its index in the session
            "next_key",  # the commitment to the session's next roll key
        ),
        # failed_attempt: recorded since the rule tables moved to rolls.rules; request: what was
        # asked (a call's request merged in), so the roller can roll it again.
        ("failed_attempt", "request"),
    ),
    CHECK_DRAMATIC_FAILURE_TAKEN: Payload(("check_seq", "period_id", "mode", "beats", "result")),
    CHECK_FORTUNE_SPENT: Payload((*_FOLLOWUP, "change", "cost")),
    CHECK_EXTRA_NICE_TAKEN: Payload(_FOLLOWUP),
    CHECK_REVEALED: Payload(("check_seq",)),
    CHECK_CALLED: Payload(("call_id", "character_ids", "character_names", "request")),
    CHECK_CALL_CLOSED: Payload(("call_id",)),
    # check_seq: the last failure it resets when the table knows of none (the reset is then as
    # visible as that roll).
    TASK_RESET: Payload(("character_id", "task"), ("check_seq",)),
}
ALL_TYPES: tuple[str, ...] = tuple(PAYLOADS)
# Every event hidden from some members (visibility other than public) also carries this secret
# random key, which its sealed hash covers (eventlog.chain).
SEALED_KEY = "salt"
# Follow-ups amend one earlier check (payload ``check_seq``) and share its visibility.
FOLLOWUP_TYPES: tuple[str, ...] = (
    CHECK_DRAMATIC_FAILURE_TAKEN,
    CHECK_FORTUNE_SPENT,
    CHECK_EXTRA_NICE_TAKEN,
)


def javascript_module() -> str:
    """The text of ``static/js/events.js``: the same names for the pages' scripts."""
    names = {
        name: value
        for name, value in globals().items()
        if isinstance(value, str) and value in PAYLOADS
    }
    lines = [
        "// Generated from eventlog/event_types.py by `manage.py export_event_types`; do not edit.",
        "export const EVENT = Object.freeze({",
        *(f'  {name}: "{value}",' for name, value in names.items()),
        "});",
        "export const FOLLOWUP_EVENTS = Object.freeze([",
        *(f'  "{value}",' for value in FOLLOWUP_TYPES),
        "]);",
        "",
    ]
    return "\n".join(lines)
