"""Shapes of checks, calls and events over the API (documentation for the OpenAPI schema)."""

from __future__ import annotations

from rest_framework import serializers

from eventlog.models import Visibility


class ModifierSerializer(serializers.Serializer):
    value = serializers.IntegerField(min_value=-50, max_value=50)
    group = serializers.CharField(required=False, help_text="CofD caps each group at ±5")
    label = serializers.CharField(required=False)


class CheckRequestSerializer(serializers.Serializer):
    """A check request. Per system, these extra fields apply (unknown fields are refused):
    d6pool `life_or_death` (GM), `against`, `mode` (opposed|contest); storyteller `difficulty`,
    `automatic`, `stressful`, `not_escalating` (GM), `against`, `actions`; cofd `again`, `rote`,
    `exceptional_at`, `extra_successes`, `specialty`, `under_pressure`, `extended`, `helpers`;
    age `target`, `focus`, `active`, `focus_required`, `against`; nice_damnit: none."""

    character = serializers.UUIDField(required=False, allow_null=True)
    traits = serializers.ListField(child=serializers.CharField(), required=False, max_length=4)
    pool = serializers.IntegerField(required=False, help_text="dice (or bonus) beyond traits")
    modifiers = ModifierSerializer(many=True, required=False)
    visibility = serializers.ChoiceField(choices=Visibility.choices, required=False)
    label = serializers.CharField(required=False, max_length=200)
    task = serializers.CharField(required=False, max_length=120, help_text="names a retry")
    faces = serializers.JSONField(required=False, help_text="physical dice (manual_dice only)")
    call = serializers.UUIDField(required=False, help_text="answers the GM's call for a check")
    client_seed = serializers.CharField(
        required=False,
        max_length=128,
        help_text="the player's entropy, 1-128 hex digits (pages send 16 random bytes): bound "
        "into the faces, recorded in the event (docs/verification.md)",
    )


class LineSerializer(serializers.Serializer):
    """A line of the roll box (docs/rollbox.md)."""

    text = serializers.CharField(max_length=300, help_text="e.g. Wits + Occult 8again rote")
    character = serializers.UUIDField(required=False, allow_null=True, help_text="whose sheet")
    target = serializers.UUIDField(
        required=False, allow_null=True, help_text="the other side of «vs» (instead of @Name)"
    )


class AgainSerializer(serializers.Serializer):
    visibility = serializers.ChoiceField(choices=Visibility.choices, required=False)
    faces = serializers.JSONField(required=False, help_text="physical dice (manual_dice only)")


class CheckSerializer(serializers.Serializer):
    seq = serializers.IntegerField()
    redacted = serializers.BooleanField()
    kind = serializers.CharField()
    system = serializers.CharField()
    visibility = serializers.CharField()
    outcome = serializers.CharField(required=False)
    data = serializers.JSONField(required=False)
    dice_marks = serializers.JSONField(
        required=False, help_text="per roll, chains of dice with their marks (docs/websocket.md)"
    )
    follow_ups = serializers.JSONField(
        required=False, help_text="the follow-ups I may apply now, with choices and costs"
    )


class FortuneSerializer(serializers.Serializer):
    die = serializers.IntegerField(help_text="0 or 1: a regular die; 2: the Drama Die")
    value = serializers.IntegerField(
        help_text="the face, 1..6; costs value, double on the Drama Die"
    )


class ExtraNiceSerializer(serializers.Serializer):
    count = serializers.IntegerField(help_text="1 or 2 extra Nice!, each with a Damnit!")


class TaskResetSerializer(serializers.Serializer):
    character = serializers.UUIDField()
    task = serializers.CharField(max_length=120)


class CallSerializer(serializers.Serializer):
    characters = serializers.ListField(child=serializers.UUIDField(), max_length=20)
    request = CheckRequestSerializer()


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
    follow_ups = serializers.JSONField(required=False, help_text="check events: what I may apply")


class WillpowerSerializer(serializers.Serializer):
    amount = serializers.IntegerField(min_value=1, max_value=20)
