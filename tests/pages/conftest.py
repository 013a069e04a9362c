"""A campaign with an open session and chapter, characters for alice and boris, a few rolls, and
a signed-in Django test client per user."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client

from campaign import services
from campaign.models import Campaign, Character
from rolls.checks import services as roll_services

SHEET = {
    "attributes": {"Wits": 3, "Dexterity": 2},
    "skills": {"Occult": 2, "Athletics": 1},
    "specialties": {"Occult": ["Ghosts"]},
}


@dataclass
class Table:
    campaign: Campaign
    characters: dict[str, Character]
    users: dict[str, Any]

    def client(self, who: str | None) -> Client:
        client = Client()
        if who is not None:
            client.force_login(self.users[who])
        return client

    def roll(self, who: str, faces: list[int], **request: Any):
        request.setdefault("character", str(self.characters[who].pk))
        return roll_services.check_roll(
            campaign=self.campaign, actor=self.users[who], request={"faces": faces, **request}
        )

    def url(self, page: str) -> str:
        return f"/campaigns/{self.campaign.pk}/{page}"


@pytest.fixture
def table(make_campaign, users) -> Table:
    campaign = make_campaign("cofd", options={"manual_dice": True})
    characters = {
        who: services.create_character(
            campaign=campaign,
            actor=users["gm"],
            name=name,
            traits=SHEET,
            resources={"beats": 0},
            owner_id=users[who].pk,
        )
        for who, name in (("alice", "Marianne"), ("boris", "Theo"))
    }
    services.start_session(campaign=campaign, actor=users["gm"], title="Friday")
    services.start_chapter(campaign=campaign, actor=users["gm"], title="The crypt")
    campaign.refresh_from_db()
    return Table(campaign, characters, users)
