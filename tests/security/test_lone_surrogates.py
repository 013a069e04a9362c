"""A lone UTF-16 surrogate ("\\ud800": a valid JSON escape that no UTF-8 can hold) is refused
where every body is checked (campaign/limits.py), as a 400 naming the field: in a value or a
key, however deep. Fields the services check by hand crashed on it with a 500."""

from __future__ import annotations

import json

import pytest

from tests.api.conftest import assert_refusal
from tests.api.test_permission_matrix import alice_char

LONE = "\ud800"


def _send(world, who: str, method: str, tail: str, body: dict, language: str = "en"):
    raw = json.dumps(body).encode()  # ASCII: a surrogate travels as its escape
    client = world.client(who)
    client.raise_request_exception = False
    return client.generic(
        method, world.url(tail), raw, "application/json", HTTP_ACCEPT_LANGUAGE=language
    )


def _roll(alice: str, **extra) -> dict:
    return {"character": alice, "traits": ["Wits"], "faces": [2, 3, 4], **extra}


# name: (who, method, path, body for alice's character id, the field the refusal names)
CASES = {
    "roll label": ("alice", "POST", "checks/", lambda a: _roll(a, label=f"x{LONE}"), "label"),
    "roll task": ("alice", "POST", "checks/", lambda a: _roll(a, task=f"x{LONE}"), "task"),
    "roll trait": ("alice", "POST", "checks/", lambda a: _roll(a, traits=[LONE]), "traits.0"),
    "odds task": ("alice", "POST", "checks/odds/", lambda a: _roll(a, task=LONE), "task"),
    "roll box": ("alice", "POST", "checks/parse/", lambda a: {"text": f"Wits {LONE}"}, "text"),
    "new character": ("gm", "POST", "characters/", lambda a: {"name": f"N{LONE}"}, "name"),
    "renamed character": ("gm", "PATCH", "characters/{a}/", lambda a: {"name": LONE}, "name"),
    "a sheet's key": (
        "gm",
        "POST",
        "characters/",
        lambda a: {"name": "N", "traits": {"attributes": {f"Wits{LONE}": 2}}},
        "traits.attributes",
    ),
    "call label": (
        "gm",
        "POST",
        "calls/",
        lambda a: {"characters": [a], "request": {"traits": ["Wits"], "label": LONE}},
        "request.label",
    ),
    "a body's key": ("alice", "POST", "checks/", lambda a: {**_roll(a), LONE: 1}, "body"),
}


@pytest.mark.parametrize("case", CASES)
def test_a_lone_surrogate_is_a_400_naming_the_field_and_nothing_is_written(build_world, case):
    world = build_world("cofd", {"manual_dice": True})
    who, method, tail, body, field = CASES[case]
    alice = alice_char(world)
    before = world.head()
    answer = _send(world, who, method, tail.format(a=alice), body(alice))
    assert "surrogate" in assert_refusal(answer, 400, field)
    assert world.head() == before


def test_a_surrogate_pair_is_one_character_and_is_kept(build_world):
    world = build_world("cofd", {"manual_dice": True})
    body = {"character": alice_char(world), "traits": ["Wits"], "faces": [2, 3, 4]}
    answer = _send(world, "alice", "POST", "checks/", {**body, "label": "dice \U0001f3b2"})
    assert answer.status_code == 201, answer.content
    assert answer.json()["label"] == "dice \U0001f3b2"


def test_the_refusal_is_in_the_reader_s_language(build_world):
    world = build_world("cofd", {"manual_dice": True})
    answer = _send(world, "gm", "POST", "characters/", {"name": LONE}, language="ru")
    assert "суррогат" in assert_refusal(answer, 400, "name")
