"""A table ready to roll: an open session and chapter, one character each for alice and boris,
and API clients for everybody. Manual dice (the faces are typed in) make outcomes exact."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from rest_framework.test import APIClient

from campaign import services
from campaign.models import Campaign, Character
from eventlog.models import Event
from tests.eventlog.tables import assert_rebuild_equals_live

SHEETS: dict[str, dict[str, Any]] = {
    "cofd": {
        "attributes": {"Wits": 3, "Strength": 2},
        "skills": {"Occult": 2, "Brawl": 3},
        "specialties": {"Occult": ["Ghosts"]},
    },
    "storyteller": {
        "attributes": {"Physical": 3, "Mental": 2},
        "abilities": {"Brawl": 4, "Dodge": 3, "Lockpicking": 4},
    },
    "d6pool": {"attributes": {"Reaction": 4, "Strength": 3}, "abilities": {"Shooting": 4}},
    "age": {"abilities": {"Dexterity": 3, "Fighting": 2}, "focuses": {"Dexterity": ["Acrobatics"]}},
    "nice_damnit": {
        "areas": {"Firearms": 2, "Riding": 1},
        "skills": {"Quick draw": "pro_1", "Horseback": "perk"},
    },
}
RESOURCES: dict[str, dict[str, int]] = {"age": {"fortune": 6}, "cofd": {"beats": 0}}


@dataclass
class Table:
    campaign: Campaign
    clients: dict[str, APIClient]
    characters: dict[str, Character] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"/api/campaigns/{self.campaign.pk}"

    def post(self, who: str, path: str, data: Any = None, expect: int | None = None) -> Any:
        response = self.clients[who].post(f"{self.url}/{path}", data or {}, format="json")
        if expect is not None:
            assert response.status_code == expect, response.content
        return response.json() if response.content else None

    def get(self, who: str, path: str) -> Any:
        response = self.clients[who].get(f"{self.url}/{path}")
        assert response.status_code == 200, response.content
        return response.json()

    def roll(self, who: str, expect: int = 201, **request: Any) -> dict[str, Any]:
        if "character" not in request and who in self.characters:
            request["character"] = str(self.characters[who].pk)
        return self.post(who, "checks/", request, expect=expect)

    def character(self, who: str) -> Character:
        return Character.objects.get(pk=self.characters[who].pk)

    def events(self) -> int:
        return Event.objects.filter(campaign=self.campaign).count()


@pytest.fixture
def table(make_campaign, users):
    """Tables to play at; when the test ends, each campaign's read models are rebuilt from its
    log and must equal, table by table, what the live projectors wrote during the test."""
    made: list[Table] = []

    def make(system: str, manual: bool = True, **options: Any) -> Table:
        campaign = make_campaign(system, options={"manual_dice": manual, **options})
        clients = {}
        for name, user in users.items():
            client = APIClient(HTTP_ACCEPT_LANGUAGE="en")  # the messages asserted are English
            client.force_authenticate(user)
            clients[name] = client
        services.start_session(campaign=campaign, actor=users["gm"], title="Friday")
        services.start_chapter(campaign=campaign, actor=users["gm"], title="One")
        result = Table(campaign, clients)
        for name in ("alice", "boris"):
            result.characters[name] = services.create_character(
                campaign=campaign,
                actor=users["gm"],
                name=f"{name.title()}'s hero",
                traits=SHEETS[system],
                resources=RESOURCES.get(system),
                owner_id=users[name].pk,
            )
        made.append(result)
        return result

    yield make
    for played in made:
        assert_rebuild_equals_live(played.campaign.pk)


def first_roll(check: dict[str, Any]) -> dict[str, Any]:
    return check["data"]["rolls"][0]
