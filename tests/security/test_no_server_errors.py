"""No input makes the server answer 5xx, on SQLite and on PostgreSQL (CI runs this suite on
both): hostile bodies on every write endpoint of the API (the permission matrix's cases, so a new
endpoint is covered the day it is added), integers beyond 64 bits, NUL characters, NaN, nesting
deeper than any parser's stack. schemathesis (tests/api/test_schemathesis.py) fuzzes the rest."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import transaction

from tests.api.test_permission_matrix import CASES, WRITE_METHODS, _table, alice_char

WRITES = [case for case in CASES if case.method in WRITE_METHODS]
HUGE = 2**64 + 1

HOSTILE_BODIES: dict[str, bytes] = {
    "nested_lists": b"[" * 100_000,
    "nested_objects": b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
    "valid_but_deep": json.dumps(json.loads("[" * 50 + "]" * 50)).encode(),
    "nan": b'{"pool": NaN, "value": Infinity}',
    "nul_everywhere": json.dumps(
        {"name": "a\x00b", "title": "\x00", "label": "x\x00", "task": "\x00", "role": "\x00"}
    ).encode(),
    "huge_numbers": json.dumps(
        {"owner_id": HUGE, "pool": HUGE, "count": HUGE, "die": HUGE, "value": HUGE}
    ).encode(),
    "not_utf8": b'{"name": "\xff\xfe"}',
    "a_bare_string": b'"hello"',
}


def _send_raw(world, case, who: str, body: bytes):
    client = world.client(who)
    return client.generic(case.method, case.path(world, who), body, content_type="application/json")


@pytest.mark.parametrize("case", WRITES, ids=[case.id for case in WRITES])
def test_hostile_bodies_on_every_write_endpoint_are_refused_not_crashed(build_world, case):
    world = _table(build_world, case.world)
    failures = []
    for name, body in HOSTILE_BODIES.items():
        with transaction.atomic():
            if case.prepare:
                case.prepare(world)
            response = _send_raw(world, case, "gm", body)
            transaction.set_rollback(True)
        if response.status_code >= 500 or not response["Content-Type"].startswith(
            "application/json"
        ):
            failures.append((name, response.status_code, response.content[:200]))
        world.campaign.refresh_from_db()
    assert not failures


def _post(world, tail: str, body: dict[str, Any], who: str = "gm"):
    return world.client(who).post(world.url(tail), body, format="json")


def _field_refused(response, field: str) -> None:
    assert response.status_code == 400, response.content[:300]
    assert field in response.json(), response.json()


def test_integers_beyond_64_bits_in_fields(build_world):
    world = build_world("cofd")
    alice = alice_char(world)
    _field_refused(_post(world, "characters/", {"name": "X", "owner_id": HUGE}), "owner_id")
    _field_refused(
        world.client("gm").patch(
            world.url(f"characters/{alice}/"), {"owner_id": -HUGE}, format="json"
        ),
        "owner_id",
    )
    _field_refused(
        _post(world, "checks/", {"character": alice, "traits": ["Wits"], "helpers": [HUGE]}),
        "helpers.0",
    )
    _field_refused(_post(world, "checks/", {"character": alice, "pool": HUGE}), "pool")
    for param in ("after", "until", "limit"):
        answer = world.client("gm").get(world.url(f"events/?{param}={HUGE}"))
        assert answer.status_code in (200, 400), (param, answer.content[:200])
    assert world.client("gm").get(world.url(f"checks/?after={HUGE}")).status_code in (200, 400)


def test_nul_characters_are_a_400_naming_the_field(build_world):
    world = build_world("cofd")
    alice = alice_char(world)
    roll = {"character": alice, "traits": ["Wits"]}
    _field_refused(_post(world, "checks/", {**roll, "label": "a\x00"}), "label")
    _field_refused(_post(world, "checks/", {**roll, "task": "\x00"}), "task")
    _field_refused(_post(world, "scenes/", {"title": "cellar\x00"}), "title")
    _field_refused(_post(world, "characters/", {"name": "N\x00"}), "name")
    _field_refused(
        _post(world, "characters/", {"name": "N", "traits": {"attributes": {"W\x00": 1}}}),
        "traits.attributes",
    )
    _field_refused(
        world.client("gm").post("/api/join/", {"invite_code": "\x00"}, format="json"), "invite_code"
    )
    assert world.client("gm").get(world.url("events/?type=\x00")).status_code == 400


def test_pages_take_hostile_queries_and_forms_without_a_500(build_world):
    from django.test import Client

    world = build_world("cofd")
    page = Client(raise_request_exception=False)
    page.force_login(world.users["alice"])
    huge = "9" * 30
    for url in (
        f"/audit/?campaign={huge}",
        f"/audit/?page={huge}",
        f"/audit/?campaign={world.cid}&session={huge}&chapter=x&character=%00",
        f"/campaigns/{huge}/gm/",
        f"/join/{'x' * 5000}/",
        "/join/%00/",
    ):
        assert page.get(url).status_code < 500, url
    for form in ({"name": "A\x00", "system": "cofd"}, {"name": "n" * 5000, "system": "x"}):
        assert page.post("/", form).status_code < 500
    assert page.post("/accounts/login/", {"username": "\x00", "password": "\x00"}).status_code < 500
