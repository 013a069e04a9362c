"""Helpers of the rule tests (issue #12): refusals that must append nothing, option changes,
and the rule-state rows of one character."""

from __future__ import annotations

from typing import Any


def refused(t: Any, who: str, path: str, data: Any, status: int, field: str) -> dict[str, Any]:
    """POST that must be refused with ``status`` naming ``field``, appending nothing."""
    before = t.events()
    response = t.clients[who].post(f"{t.url}/{path}", data, format="json")
    assert response.status_code == status, response.content
    body = response.json()
    assert field in body, body
    assert t.events() == before, "a refused request appended an event"
    return body


def refused_roll(t: Any, who: str, status: int, field: str, **request: Any) -> dict[str, Any]:
    if "character" not in request and who in t.characters:
        request["character"] = str(t.characters[who].pk)
    return refused(t, who, "checks/", request, status, field)


def set_options(t: Any, **options: Any) -> None:
    response = t.clients["gm"].patch(f"{t.url}/", {"options": options}, format="json")
    assert response.status_code == 200, response.content
    t.campaign.refresh_from_db()


def character_state(t: Any, who: str, viewer: str = "gm") -> dict[str, Any]:
    state = t.get(viewer, "state/")
    return next(c for c in state["characters"] if c["id"] == str(t.characters[who].pk))
