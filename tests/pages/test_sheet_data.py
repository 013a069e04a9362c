"""The table pages carry the sheet template in the page's language, and the GM's first paint
shows a player's sheet edit made during the session."""

from __future__ import annotations

import json
import re

from campaign import services


def embedded(html: str, element_id: str):
    match = re.search(
        rf'<script id="{element_id}" type="application/json">(.*?)</script>', html, re.S
    )
    assert match, element_id
    return json.loads(match.group(1))


def test_the_page_embeds_the_sheet_template_in_its_language(table):
    client = table.client("alice")
    client.cookies["django_language"] = "ru"
    html = client.get(f"/campaigns/{table.campaign.pk}/play/").content.decode()
    template = embedded(html, "sheet-template")
    skills = next(g for g in template["groups"] if g["key"] == "skills")
    assert skills["label"] == "Навыки"
    assert next(t for t in skills["traits"] if t["key"] == "Occult")["label"] == "Оккультизм"


def test_the_gms_first_paint_shows_a_players_sheet_edit(table):
    character = table.characters["alice"]
    services.change_character(
        campaign=table.campaign,
        actor=table.users["alice"],
        character=character,
        traits={**character.traits, "skills": {**character.traits["skills"], "Occult": 3}},
    )
    gm = embedded(
        table.client("gm").get(f"/campaigns/{table.campaign.pk}/gm/").content.decode(),
        "table-data",
    )
    changed = [m for m in gm["markers"] if m["type"] == "character.changed"]
    assert changed and changed[-1]["payload"]["diff"] == [
        {"group": "skills", "trait": "Occult", "from": 2, "to": 3}
    ]
    player = embedded(
        table.client("boris").get(f"/campaigns/{table.campaign.pk}/play/").content.decode(),
        "table-data",
    )
    assert not [m for m in player["markers"] if m["type"] == "character.changed"]


def test_a_page_opened_after_the_session_ended_shows_its_markers(table):
    """Found by a review: reloaded after the session's end, the feed lost the "session started"
    and "chapter started" markers older than its first roll, which a page that stayed open
    shows (and no older roll was left to load them with)."""
    services.end_session(campaign=table.campaign, actor=table.users["gm"])
    for who in ("gm", "alice"):
        page = "gm" if who == "gm" else "play"
        html = table.client(who).get(f"/campaigns/{table.campaign.pk}/{page}/").content.decode()
        data = embedded(html, "table-data")
        kinds = [marker["type"] for marker in data["markers"]]
        assert kinds[0] == "session.started" and "session.ended" in kinds, (who, kinds)
        assert "chapter.started" in kinds, (who, kinds)
