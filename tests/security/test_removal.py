"""A removed member cannot come back with the invite code they had: removal renews it, and only
someone the GM gives the new code to can join. Leaving by oneself keeps the code."""

from __future__ import annotations


def _join(world, who: str, code: str):
    return world.client(who).post("/api/join/", {"invite_code": code}, format="json")


def test_a_removed_member_needs_the_gm_to_invite_again(build_world):
    world = build_world("cofd")
    old = world.campaign.invite_code
    gm = world.client("gm")
    assert gm.delete(world.url(f"members/{world.users['boris'].pk}/")).status_code == 204
    refused = _join(world, "boris", old)
    assert refused.status_code == 404 and refused.json()["code"] == "not_found"
    assert world.client("boris").get(world.url()).status_code == 404
    new = gm.get(world.url()).json()["invite_code"]
    assert new != old
    assert _join(world, "boris", new).status_code == 200


def test_leaving_by_oneself_keeps_the_invite_code(build_world):
    world = build_world("cofd")
    code = world.campaign.invite_code
    alice = world.client("alice")
    assert alice.delete(world.url(f"members/{world.users['alice'].pk}/")).status_code == 204
    assert world.client("gm").get(world.url()).json()["invite_code"] == code
    assert _join(world, "alice", code).status_code == 200
