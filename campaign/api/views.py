"""REST views for campaigns, members, characters and periods: thin shells over the services."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from django.utils.translation import gettext
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from campaign import services
from campaign.access import controls_character, member_with_campaign, require_member
from campaign.api.serializers import (
    CampaignCreateSerializer,
    CampaignSerializer,
    CampaignUpdateSerializer,
    CharacterCreateSerializer,
    CharacterSerializer,
    CharacterWriteSerializer,
    FavouriteSerializer,
    JoinSerializer,
    MemberSerializer,
    PeriodSerializer,
    RoleSerializer,
    TitleSerializer,
    campaign_create_schema,
    campaign_update_schema,
)
from campaign.api.writes import WriteView
from campaign.errors import InvalidInput
from campaign.models import Campaign, Chapter, Character, Membership, Scene, Session
from campaign.sheets import sheet_template
from config.schema import json_body
from rolls.systems.options import RULE_OPTIONS, option_table


def body(request: Request, serializer_class) -> dict[str, Any]:
    """Validated request data; a JSON body that is not an object is a 400 naming the body."""
    serializer = serializer_class(data=known_fields(request, serializer_class))
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def known_fields(request: Request, serializer_class) -> dict[str, Any]:
    """The JSON object of the body, naming only the serializer's fields (the first unknown one
    is a 400), not yet validated: for a service that must decide something else first (a
    follow-up on a hidden roll is refused alike whatever its body)."""
    if not isinstance(request.data, dict):
        raise InvalidInput("non_field_errors", gettext("expected a JSON object"))
    unknown = sorted(set(request.data) - set(serializer_class().fields))
    if unknown:
        raise InvalidInput(unknown[0], gettext("unknown field"))
    return request.data


def campaign_for(request: Request, campaign_id: int) -> tuple[Campaign, Membership]:
    """The campaign and the requester's membership, in one query (404 for a non-member)."""
    found = member_with_campaign(campaign_id, request.user)
    if found is None:
        require_member(campaign_id, None)  # raises: the one refusal of a non-member
    return found


def campaign_data(campaign: Campaign, membership: Membership) -> dict[str, Any]:
    data = CampaignSerializer(campaign, context={"roles": {campaign.pk: membership.role}}).data
    open_periods = {
        name: model.open_in(campaign)
        for name, model in (("session", Session), ("chapter", Chapter), ("scene", Scene))
    }
    data.update({name: _period(period) for name, period in open_periods.items()})
    return data


def character_data(characters: list[Character], membership: Membership) -> list[dict[str, Any]]:
    from rolls.reads.known import resources_for  # rolls builds on campaign, not the reverse

    resources = resources_for(membership, characters)
    rows = CharacterSerializer(characters, many=True).data
    for row, character in zip(rows, characters, strict=True):
        row["resources"] = resources[str(row["id"])]
        # Whether this member rolls and answers calls for it: decided here, not in the pages.
        row["acts_for"] = controls_character(membership, character)
    return rows


def _period(period) -> dict[str, Any] | None:
    return None if period is None else PeriodSerializer(period).data


class CampaignListView(WriteView):
    @extend_schema(responses=CampaignSerializer(many=True), summary="My campaigns")
    def get(self, request: Request) -> Response:
        memberships = Membership.objects.filter(user=request.user).select_related("campaign")
        roles = {m.campaign_id: m.role for m in memberships}
        campaigns = [m.campaign for m in memberships]
        return Response(CampaignSerializer(campaigns, many=True, context={"roles": roles}).data)

    @extend_schema(request=json_body(campaign_create_schema()), responses={201: CampaignSerializer})
    def post(self, request: Request) -> Response:
        data = body(request, CampaignCreateSerializer)
        campaign = services.create_campaign(
            name=data["name"],
            system=data["system"],
            options=data.get("options"),
            created_by=request.user,
        )
        membership = Membership.objects.get(campaign=campaign, user=request.user)
        return Response(campaign_data(campaign, membership), status=status.HTTP_201_CREATED)


class CampaignDetailView(WriteView):
    @extend_schema(responses=CampaignSerializer)
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign, membership = campaign_for(request, campaign_id)
        return Response(campaign_data(campaign, membership))

    @extend_schema(request=json_body(campaign_update_schema()), responses=CampaignSerializer)
    def patch(self, request: Request, campaign_id: int) -> Response:
        campaign, membership = campaign_for(request, campaign_id)
        data = body(request, CampaignUpdateSerializer)
        if "name" in data:
            campaign = services.rename_campaign(
                campaign=campaign, actor=request.user, name=data["name"]
            )
        if "options" in data:
            campaign = services.change_options(
                campaign=campaign, actor=request.user, changes=data["options"]
            )
        return Response(campaign_data(campaign, membership))


class InviteView(WriteView):
    @extend_schema(request=None, responses=CampaignSerializer, summary="Renew the invite code")
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign, membership = campaign_for(request, campaign_id)
        campaign = services.regenerate_invite(campaign=campaign, actor=request.user)
        return Response(campaign_data(campaign, membership))


class JoinView(WriteView):
    @extend_schema(request=JoinSerializer, responses=CampaignSerializer, summary="Join by invite")
    def post(self, request: Request) -> Response:
        data = body(request, JoinSerializer)
        membership = services.join_campaign(invite_code=data["invite_code"], user=request.user)
        return Response(campaign_data(membership.campaign, membership))


class MemberListView(APIView):
    @extend_schema(responses=MemberSerializer(many=True))
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign, _ = campaign_for(request, campaign_id)
        members = Membership.objects.filter(campaign=campaign).select_related("user")
        return Response(MemberSerializer(members.order_by("joined_seq"), many=True).data)


class MemberDetailView(WriteView):
    @extend_schema(request=RoleSerializer, responses=MemberSerializer, summary="Change a role")
    def patch(self, request: Request, campaign_id: int, user_id: int) -> Response:
        campaign, _ = campaign_for(request, campaign_id)
        data = body(request, RoleSerializer)
        membership = services.change_role(
            campaign=campaign, actor=request.user, user_id=user_id, role=data["role"]
        )
        return Response(MemberSerializer(membership).data)

    @extend_schema(request=None, responses={204: None}, summary="Leave, or remove a member")
    def delete(self, request: Request, campaign_id: int, user_id: int) -> Response:
        campaign, _ = campaign_for(request, campaign_id)
        services.leave_campaign(campaign=campaign, actor=request.user, user_id=user_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class CharacterListView(WriteView):
    @extend_schema(responses=CharacterSerializer(many=True))
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign, membership = campaign_for(request, campaign_id)
        characters = list(Character.objects.filter(campaign=campaign))
        return Response(character_data(characters, membership))

    @extend_schema(request=CharacterCreateSerializer, responses={201: CharacterSerializer})
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign, _ = campaign_for(request, campaign_id)
        data = body(request, CharacterWriteSerializer)
        if "name" not in data:
            raise InvalidInput("name", gettext("this field is required"))
        character = services.create_character(
            campaign=campaign,
            actor=request.user,
            name=data["name"],
            traits=data.get("traits", {}),
            resources=data.get("resources"),
            owner_id=data.get("owner_id"),
        )
        return Response(CharacterSerializer(character).data, status=status.HTTP_201_CREATED)


class CharacterDetailView(WriteView):
    @extend_schema(responses=CharacterSerializer)
    def get(self, request: Request, campaign_id: int, character_id: str) -> Response:
        campaign, membership = campaign_for(request, campaign_id)
        character = get_object_or_404(Character, campaign=campaign, pk=character_id)
        return Response(character_data([character], membership)[0])

    @extend_schema(request=CharacterWriteSerializer, responses=CharacterSerializer)
    def patch(self, request: Request, campaign_id: int, character_id: str) -> Response:
        campaign, membership = campaign_for(request, campaign_id)
        character = get_object_or_404(Character, campaign=campaign, pk=character_id)
        data = body(request, CharacterWriteSerializer)
        character = services.change_character(
            campaign=campaign,
            actor=request.user,
            character=character,
            name=data.get("name"),
            traits=data.get("traits"),
            resources=data.get("resources"),
            owner_id=data.get("owner_id", services.UNCHANGED),
        )
        return Response(character_data([character], membership)[0])


def period_views(model, start, end, name: str):
    """List / start / end views for chapters, sessions and scenes (one shape for all three)."""

    class ListStart(WriteView):
        @extend_schema(responses=PeriodSerializer(many=True), operation_id=f"{name}s_list")
        def get(self, request: Request, campaign_id: int) -> Response:
            campaign, _ = campaign_for(request, campaign_id)
            periods = model.objects.filter(campaign=campaign).order_by("number")
            return Response(PeriodSerializer(periods, many=True).data)

        @extend_schema(
            request=TitleSerializer,
            responses={201: PeriodSerializer},
            operation_id=f"{name}s_start",
            summary=f"Start a {name}",
        )
        def post(self, request: Request, campaign_id: int) -> Response:
            campaign, _ = campaign_for(request, campaign_id)
            data = body(request, TitleSerializer)
            period = start(campaign=campaign, actor=request.user, title=data.get("title", ""))
            return Response(PeriodSerializer(period).data, status=status.HTTP_201_CREATED)

    class End(WriteView):
        @extend_schema(
            request=None,
            responses=PeriodSerializer,
            operation_id=f"{name}s_end",
            summary=f"End the open {name}",
        )
        def post(self, request: Request, campaign_id: int) -> Response:
            campaign, _ = campaign_for(request, campaign_id)
            return Response(PeriodSerializer(end(campaign=campaign, actor=request.user)).data)

    ListStart.__name__ = f"{name.title()}ListView"
    End.__name__ = f"{name.title()}EndView"
    return ListStart, End


SessionListView, SessionEndView = period_views(
    Session, services.start_session, services.end_session, "session"
)
ChapterListView, ChapterEndView = period_views(
    Chapter, services.start_chapter, services.end_chapter, "chapter"
)
SceneListView, SceneEndView = period_views(Scene, services.start_scene, services.end_scene, "scene")


class SheetTemplatesView(APIView):
    @extend_schema(responses=dict, summary="Character sheet templates of every game system")
    def get(self, request: Request) -> Response:
        return Response({system: sheet_template(system) for system in RULE_OPTIONS})


class CampaignSheetTemplateView(APIView):
    @extend_schema(responses=dict, summary="The campaign's character sheet template")
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign, _ = campaign_for(request, campaign_id)
        return Response(sheet_template(campaign.system))


class FavouriteListView(WriteView):
    @extend_schema(
        responses=FavouriteSerializer(many=True), summary="A character's favourite rolls"
    )
    def get(self, request: Request, campaign_id: int, character_id: str) -> Response:
        campaign, _ = campaign_for(request, campaign_id)
        character = get_object_or_404(Character, campaign=campaign, pk=character_id)
        return Response(character.favourites)

    @extend_schema(
        request=FavouriteSerializer, responses={201: FavouriteSerializer}, summary="Save a roll"
    )
    def post(self, request: Request, campaign_id: int, character_id: str) -> Response:
        campaign, _ = campaign_for(request, campaign_id)
        character = get_object_or_404(Character, campaign=campaign, pk=character_id)
        data = body(request, FavouriteSerializer)
        favourite = services.add_favourite(
            campaign=campaign,
            actor=request.user,
            character=character,
            name=data.get("name", ""),
            text=data.get("text", ""),
        )
        return Response(favourite, status=status.HTTP_201_CREATED)


class FavouriteDetailView(WriteView):
    @extend_schema(request=None, responses={204: None}, summary="Forget a favourite roll")
    def delete(
        self, request: Request, campaign_id: int, character_id: str, favourite_id: str
    ) -> Response:
        campaign, _ = campaign_for(request, campaign_id)
        character = get_object_or_404(Character, campaign=campaign, pk=character_id)
        services.remove_favourite(
            campaign=campaign, actor=request.user, character=character, favourite_id=favourite_id
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


class RulesView(APIView):
    """The rule options of every system (RULES.md A.2) with defaults and explanations."""

    @extend_schema(responses=dict, summary="Rule options per game system")
    def get(self, request: Request) -> Response:
        return Response(
            {
                system: {
                    name: {
                        "default": option.default,
                        "choices": option.choices,
                        "min": option.low,
                        "max": option.high,
                        "help": option.help,
                    }
                    for name, option in option_table(system).items()
                }
                for system in RULE_OPTIONS
            }
        )
