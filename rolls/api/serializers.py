"""Shapes of checks, calls and events over the API.

Request bodies: the small ones are serializers that *are* the validation (the view reads them
with ``campaign.api.views.body``, which refuses unknown keys); a check request differs per game
system, so its schema is built from the key tables that ``rolls.checks.requests`` refuses
unknown keys with (``request_field_schemas``), one component per system.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from campaign.api.serializers import Integer, Text
from config.schema import component
from eventlog.models import Visibility
from rolls.checks.requests import (
    MAX_CALLED,
    call_request_keys,
    request_field_schemas,
    request_schema,
    roll_request_keys,
)
from rolls.checks.services import MAX_WILLPOWER_RESTORE
from rolls.systems import SYSTEM_IDS

SYSTEM_NAMES = {
    "d6pool": "D6Pool",
    "storyteller": "Storyteller",
    "nice_damnit": "NiceDamnit",
    "age": "Age",
    "cofd": "Cofd",
}


def check_request_schema() -> dict[str, Any]:
    """A roll's request: one of the systems' (the campaign's system decides which applies)."""
    return {
        "anyOf": [
            component(f"{SYSTEM_NAMES[s]}CheckRequest", request_schema(s, roll_request_keys(s)))
            for s in SYSTEM_IDS
        ],
        "description": "the fields of the campaign's game system; unknown fields are refused",
    }


def call_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "characters": {
                "type": "array",
                "items": {"type": "string", "format": "uuid"},
                "minItems": 1,
                "maxItems": MAX_CALLED,
                "description": "the characters whose players are asked to roll",
            },
            "request": {
                "anyOf": [
                    component(
                        f"{SYSTEM_NAMES[s]}CallRequest", request_schema(s, call_request_keys(s))
                    )
                    for s in SYSTEM_IDS
                ],
                "description": "the whole check, fixed by the call (answers add the character, "
                "the faces, Willpower and a client seed)",
            },
        },
        "required": ["characters", "request"],
        "additionalProperties": False,
    }


def line_schema() -> dict[str, Any]:
    fields = request_field_schemas("cofd")
    return {
        "type": "object",
        "properties": {
            "text": {
                "type": "string",
                "minLength": 1,
                "maxLength": 200,
                "pattern": "^[^\\u0000]*$",
                "description": "a line of the roll box (docs/rollbox.md), e.g. Wits + Occult",
            },
            "character": {**fields["character"]},
            "characters": {
                "type": "array",
                "items": {"type": "string", "format": "uuid"},
                "minItems": 1,
                "maxItems": MAX_CALLED,
                "description": "a group check (GM): the line read for each of these characters, "
                "as POST …/calls/ names them; instead of character",
            },
            "target": {
                **fields["character"],
                "description": "the other side of «vs» (instead of @Name)",
            },
        },
        "required": ["text"],
        "additionalProperties": False,
    }


@extend_schema_field(request_field_schemas("cofd")["faces"])
class FacesField(serializers.JSONField):
    """Faces of physical dice, as the roll request takes them (the roller checks them)."""


class AgainSerializer(serializers.Serializer):
    visibility = serializers.ChoiceField(choices=Visibility.choices, required=False)
    faces = FacesField(required=False, help_text="physical dice (manual_dice only)")


class CheckSerializer(serializers.Serializer):
    """A check as the viewer may see it (rolls.reads.present.present_check): a hidden one the
    viewer may not see is only its first eight keys, with ``redacted: true``."""

    seq = serializers.IntegerField()
    kind = serializers.CharField(help_text="single, opposed, resisted, contest, multiple…")
    system = serializers.ChoiceField(choices=SYSTEM_IDS)
    visibility = serializers.ChoiceField(choices=Visibility.choices)
    revealed = serializers.BooleanField()
    actor_id = serializers.IntegerField(allow_null=True, help_text="who rolled (a user id)")
    created_at = serializers.DateTimeField()
    redacted = serializers.BooleanField()
    outcome = serializers.CharField(required=False, allow_null=True)
    character = serializers.UUIDField(required=False, allow_null=True)
    session = serializers.UUIDField(required=False, allow_null=True)
    chapter = serializers.UUIDField(required=False, allow_null=True)
    label = serializers.CharField(required=False, allow_blank=True)
    task = serializers.CharField(required=False, allow_blank=True)
    manual = serializers.BooleanField(required=False, help_text="faces of physical dice")
    data = serializers.JSONField(
        required=False, help_text="the rolls, breakdowns, results and rule decisions"
    )
    dice_marks = serializers.JSONField(
        required=False, help_text="per roll, chains of dice with their marks (docs/websocket.md)"
    )
    roll_terms = serializers.JSONField(
        required=False, help_text="per roll, what it rolls as named terms (docs/websocket.md)"
    )
    follow_ups = serializers.JSONField(
        required=False, help_text="the follow-ups I may apply now, with choices and costs"
    )


class FortuneSerializer(serializers.Serializer):
    """The schema of the body; ``followups.spend_fortune`` validates it (after deciding whether
    the viewer may see the roll, so a hidden roll's refusal never depends on the body)."""

    die = serializers.IntegerField(
        min_value=0, max_value=2, help_text="0 or 1: a regular die; 2: the Drama Die"
    )
    value = serializers.IntegerField(
        min_value=1, max_value=6, help_text="the face, 1..6; costs value, double on the Drama Die"
    )


class ExtraNiceSerializer(serializers.Serializer):
    """The schema of the body; ``followups.take_extra_nice`` validates it (after visibility)."""

    count = serializers.IntegerField(
        min_value=1, max_value=2, help_text="1 or 2 extra Nice!, each with a Damnit!"
    )


class TaskResetSerializer(serializers.Serializer):
    character = serializers.UUIDField()
    task = Text(max_length=120)


class CallSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    seq = serializers.IntegerField()
    characters = serializers.ListField(child=serializers.UUIDField())
    request = serializers.DictField(help_text="the check the call fixes")
    answered = serializers.DictField(help_text="characters that answered: id → check seq")
    closed = serializers.BooleanField()


class EventSerializer(serializers.Serializer):
    seq = serializers.IntegerField()
    type = serializers.CharField()
    created_at = serializers.DateTimeField()
    visibility = serializers.CharField()
    redacted = serializers.BooleanField()
    payload = serializers.JSONField(required=False)
    prev_hash = serializers.CharField(help_text="the previous event's hash (the chain link)")
    hash = serializers.CharField(help_text="this event's chain hash; keep the last as a receipt")
    dice_marks = serializers.JSONField(required=False, help_text="check events: which dice counted")
    roll_terms = serializers.JSONField(required=False, help_text="check events: what each rolls")
    follow_ups = serializers.JSONField(required=False, help_text="check events: what I may apply")


class WillpowerSerializer(serializers.Serializer):
    amount = Integer(min_value=1, max_value=MAX_WILLPOWER_RESTORE)


class WillpowerRestoredSerializer(serializers.Serializer):
    character = serializers.UUIDField()
    resources = serializers.DictField()


class OddsSerializer(serializers.Serializer):
    """A check as it would be rolled now (services.preview_odds): nothing is rolled."""

    system = serializers.ChoiceField(choices=SYSTEM_IDS)
    check = serializers.DictField(help_text="the engine's check: the pool and its options")
    breakdown = serializers.ListField(
        child=serializers.DictField(), help_text="where the dice come from: label, value, kind"
    )
    rules = serializers.DictField(help_text="what the rules decided (attempt, retry penalty…)")
    odds = serializers.DictField(help_text="exact probabilities: outcomes, successes or totals")


class ParsedLineSerializer(OddsSerializer):
    """A line of the roll box read (rollbox.preview_line): its check request and its odds."""

    text = serializers.CharField()
    request = serializers.DictField(help_text="the check request the line names")
    tokens = serializers.ListField(
        child=serializers.DictField(), help_text="the words: start, end, kind, value, label"
    )
    previews = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        help_text="with characters: the odds for each (character, name, and the fields above: "
        "system, check, breakdown, rules, odds); the top-level odds are the first one's",
    )


class ExportSerializer(serializers.Serializer):
    """The log for verification (rolls.trust.export): python -m rolls.trust.verify reads it."""

    format = serializers.CharField()
    exported_at = serializers.CharField()
    campaign = serializers.DictField(help_text="id, name, system, head_seq, head_hash")
    events = serializers.ListField(child=serializers.DictField())
