"""A table with real data for the API tests: a campaign with an open session and chapter,
a character each for alice and boris, and checks of every visibility, built through the services
(the same ones the API calls), so each test starts from a log a real table could have written."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser
from rest_framework.authtoken.models import Token
from rest_framework.response import Response
from rest_framework.test import APIClient

from campaign import services
from campaign.models import Campaign, Character
from eventlog.models import Event
from rolls.checks import services as roll_services

ROLES = ("anonymous", "stranger", "olga", "alice", "boris", "gm")

# A sheet per system for alice and boris, and a roll request each sheet can make.
SHEETS: dict[str, dict[str, Any]] = {
    "cofd": {"attributes": {"Wits": 3, "Strength": 2}, "skills": {"Occult": 2, "Brawl": 1}},
    "age": {"abilities": {"Dexterity": 3, "Fighting": 2}, "focuses": {"Dexterity": ["Acrobatics"]}},
    "nice_damnit": {"areas": {"Firearms": 2}, "skills": {"Quick draw": "pro_1"}},
    "storyteller": {"attributes": {"Mental": 3}, "abilities": {"Alertness": 2}},
    "d6pool": {"attributes": {"Reaction": 3}, "abilities": {"Shooting": 2}},
}
TRAITS: dict[str, list[str]] = {
    "cofd": ["Wits", "Occult"],
    "age": ["Dexterity"],
    "nice_damnit": ["Firearms"],
    "storyteller": ["Mental", "Alertness"],
    "d6pool": ["Reaction", "Shooting"],
}
RESOURCES: dict[str, dict[str, int]] = {"age": {"fortune": 15}}


@dataclass
class World:
    campaign: Campaign
    users: dict[str, AbstractBaseUser]
    characters: dict[str, Character]  # by owner: "alice", "boris"
    checks: dict[str, int] = field(default_factory=dict)  # name -> seq
    tokens: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # ids a test set up (a call, …)

    @property
    def cid(self) -> int:
        return self.campaign.pk

    @property
    def system(self) -> str:
        return self.campaign.system

    def url(self, tail: str = "") -> str:
        return f"/api/campaigns/{self.cid}/{tail}"

    def client(self, who: str) -> APIClient:
        """A client authenticated as ``who`` with a token (as a script or the SPA would be)."""
        client = APIClient()
        if who != "anonymous":
            token = self.tokens.get(who)
            if token is None:
                token = self.tokens[who] = Token.objects.get_or_create(user=self.users[who])[0].key
            client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
        return client

    def roll(self, who: str, **request: Any) -> int:
        """A check by ``who`` (for their own character unless told), through the roll service."""
        request.setdefault("traits", TRAITS[self.system])
        if who in self.characters and "character" not in request:
            request["character"] = str(self.characters[who].pk)
        check = roll_services.check_roll(
            campaign=self.campaign, actor=self.users[who], request=request
        )
        self.campaign.refresh_from_db()
        return check.seq

    def head(self) -> tuple[int, int]:
        """The stream head and the number of events: a request that appends moves both."""
        self.campaign.refresh_from_db()
        return self.campaign.head_seq, Event.objects.filter(campaign=self.campaign).count()


@pytest.fixture
def build_world(users, make_campaign) -> Callable[..., World]:
    def build(system: str = "cofd", options: dict | None = None, rolls: bool = True) -> World:
        campaign = make_campaign(system, options=options)
        gm = users["gm"]
        services.start_session(campaign=campaign, actor=gm, title="Friday night")
        services.start_chapter(campaign=campaign, actor=gm, title="Chapter one")
        characters = {
            who: services.create_character(
                campaign=campaign,
                actor=gm,
                name=f"{who.title()}'s hero",
                traits=SHEETS[system],
                resources=RESOURCES.get(system),
                owner_id=users[who].pk,
            )
            for who in ("alice", "boris")
        }
        campaign.refresh_from_db()
        world = World(campaign=campaign, users=users, characters=characters)
        if rolls and not (options or {}).get("manual_dice"):
            world.checks = {
                "alice_public": world.roll("alice", visibility="public"),
                "alice_private": world.roll("alice", visibility="private"),
                "alice_blind": world.roll("alice", visibility="blind"),
                "boris_private": world.roll("boris", visibility="private"),
                # The GM rolls for alice's character in secret (a blind Perception check).
                "gm_blind_for_alice": world.roll(
                    "gm", visibility="blind", character=str(characters["alice"].pk)
                ),
            }
        return world

    return build


@pytest.fixture
def world(build_world) -> World:
    return build_world("cofd")


def dump(response: Response) -> str:
    """The whole body as text, to assert that something appears nowhere in it."""
    if response.get("Content-Type", "").startswith("application/json"):
        return json.dumps(response.json(), sort_keys=True, default=str)
    return response.content.decode(errors="replace")


CODES = {400: "invalid", 403: "permission_denied", 404: "not_found", 409: "conflict"}


def assert_refusal(response: Response, status: int, field: str | None = None) -> str:
    """A refusal names what was wrong and nothing else: ``{field: [message], "code": …}``.
    Returns the message."""
    assert response.status_code == status, dump(response)[:500]
    body = response.json()
    assert isinstance(body, dict), body
    assert body.get("code") == CODES[status], body
    fields = set(body) - {"code"}
    assert len(fields) == 1, body
    named = fields.pop()
    if field is not None:
        assert named == field, body
    message = body[named]
    assert isinstance(message, list) and len(message) == 1, body
    assert isinstance(message[0], str) and message[0].strip(), body
    return message[0]
