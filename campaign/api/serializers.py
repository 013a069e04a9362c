"""Shapes of campaign resources over the API. Validation of meaning lives in the services."""

from __future__ import annotations

from typing import Any

from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from campaign.limits import NON_BLANK
from campaign.models import Campaign, Character, Membership, Role
from config.schema import component
from rolls.systems import SYSTEM_IDS
from rolls.systems.options import option_table


class PeriodSerializer(serializers.Serializer):
    id = serializers.UUIDField(read_only=True)
    number = serializers.IntegerField(read_only=True)
    title = serializers.CharField(read_only=True)
    started_seq = serializers.IntegerField(read_only=True)
    ended_seq = serializers.IntegerField(read_only=True, allow_null=True)
    started_at = serializers.DateTimeField(read_only=True)
    ended_at = serializers.DateTimeField(read_only=True, allow_null=True)
    is_open = serializers.BooleanField(read_only=True)


class MemberSerializer(serializers.ModelSerializer):
    user_id = serializers.IntegerField(read_only=True)
    username = serializers.CharField(source="user.username", read_only=True)

    class Meta:
        model = Membership
        fields = ["user_id", "username", "role", "joined_seq"]


class CampaignSerializer(serializers.ModelSerializer):
    my_role = serializers.SerializerMethodField()
    invite_code = serializers.SerializerMethodField()

    class Meta:
        model = Campaign
        fields = ["id", "name", "system", "options", "head_seq", "my_role", "invite_code"]

    def get_my_role(self, campaign: Campaign) -> str | None:
        roles = self.context.get("roles", {})
        return roles.get(campaign.pk)

    def get_invite_code(self, campaign: Campaign) -> str | None:
        """Only GMs see the invite code (anyone holding it can join)."""
        return campaign.invite_code if self.get_my_role(campaign) == Role.GM else None


NAME = {
    "type": "string",
    "minLength": 1,
    "maxLength": 100,
    "pattern": NON_BLANK,  # the services strip it; no NUL (campaign/limits.py)
}


def options_schema(system: str) -> dict[str, str]:
    """The rule options of ``system`` as ``validate_options`` accepts them (rolls/systems/
    options.py), a component per system."""
    table = option_table(system)
    return component(
        f"{SYSTEM_SCHEMA_NAMES[system]}Options",
        {
            "type": "object",
            "properties": {name: option.json_schema() for name, option in table.items()},
            "additionalProperties": False,
            "description": f"rule options of {system} (RULES.md A.2; GET /api/rules/)",
        },
    )


SYSTEM_SCHEMA_NAMES = {
    "d6pool": "D6Pool",
    "storyteller": "Storyteller",
    "nice_damnit": "NiceDamnit",
    "age": "Age",
    "cofd": "Cofd",
}


def campaign_create_schema() -> dict[str, Any]:
    """A new campaign: its system decides which options it may carry."""
    variants = [
        component(
            f"{SYSTEM_SCHEMA_NAMES[system]}CampaignCreateRequest",
            {
                "type": "object",
                "properties": {
                    "name": NAME,
                    "system": {"type": "string", "enum": [system]},
                    "options": options_schema(system),
                },
                "required": ["name", "system"],
                "additionalProperties": False,
            },
        )
        for system in SYSTEM_IDS
    ]
    return {"oneOf": variants}


def campaign_update_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "name": NAME,
            "options": {
                "anyOf": [options_schema(system) for system in SYSTEM_IDS],
                "description": "only the options to change, of the campaign's system",
            },
        },
        "additionalProperties": False,
    }


@extend_schema_field(NAME)
class NameField(serializers.Field):
    """A name the service checks (with the rest of a sheet, so a form hears of every bad field
    at once): passed on as sent; the schema says what the service accepts."""

    def to_internal_value(self, data):
        return data

    def to_representation(self, value):
        return value


class Text(serializers.CharField):
    """Text, and only text: DRF's CharField would take a number and store its digits. Unless it
    may be blank, it must hold a non-space character (the schema says so with a pattern)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        if not self.allow_blank:
            self.validators.append(RegexValidator(NON_BLANK))

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class Integer(serializers.IntegerField):
    """An integer, and only an integer: DRF's IntegerField would take "1" and 1.0 and true."""

    def to_internal_value(self, data):
        if not isinstance(data, int) or isinstance(data, bool):
            self.fail("invalid")
        return super().to_internal_value(data)


class CampaignCreateSerializer(serializers.Serializer):
    name = Text(max_length=100)
    system = serializers.ChoiceField(choices=SYSTEM_IDS)
    options = serializers.DictField(required=False, help_text="rule options; see /api/rules/")


class CampaignUpdateSerializer(serializers.Serializer):
    name = Text(max_length=100, required=False)
    options = serializers.DictField(required=False, help_text="only the options to change")


class JoinSerializer(serializers.Serializer):
    invite_code = Text(max_length=32)


class RoleSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=Role.choices)


class CharacterSerializer(serializers.ModelSerializer):
    owner_id = serializers.IntegerField(allow_null=True, required=False)

    class Meta:
        model = Character
        fields = [
            "id",
            "name",
            "owner_id",
            "traits",
            "resources",
            "favourites",
            "created_seq",
            "updated_seq",
        ]
        read_only_fields = ["id", "favourites", "created_seq", "updated_seq"]


class CharacterWriteSerializer(serializers.Serializer):
    # The service checks the name with the traits and resources, so a form hears of every bad
    # field in one answer.
    name = NameField(required=False, help_text="1-100 characters")
    traits = serializers.DictField(required=False)
    resources = serializers.DictField(required=False)
    owner_id = Integer(allow_null=True, required=False)


class CharacterCreateSerializer(CharacterWriteSerializer):
    name = NameField(help_text="1-100 characters")
    owner_id = Integer(
        allow_null=True, required=False, help_text="a player of the campaign (GM only)"
    )


class FavouriteSerializer(serializers.Serializer):
    id = serializers.UUIDField(read_only=True)
    name = Text(required=False, allow_blank=True, max_length=60, help_text="≤ 60 characters")
    text = Text(max_length=200, help_text="a line of the roll box (docs/rollbox.md)")


class TitleSerializer(serializers.Serializer):
    title = Text(max_length=200, required=False, allow_blank=True)
