"""With physical dice, the largest roll the rules allow can be typed in: a pool at the cap
(MAX_DICE), a desperate d6pool pool of as many dice, a CofD pool whose every die explodes, up
to MAX_FACES faces. Any list held at most 50 items, so a pool over 50 asked for faces that no
request could carry."""

from __future__ import annotations

from rolls.systems import MAX_DICE, MAX_FACES
from tests.rolls.checks.conftest import first_roll


def _roll(t, **request):
    return t.clients["alice"].post(
        f"{t.url}/checks/", {"character": str(t.characters["alice"].pk), **request}, format="json"
    )


def test_a_pool_at_the_cap_is_rolled_with_its_faces(table):
    t = table("storyteller")
    asked = _roll(t, pool=MAX_DICE, faces=[2])
    assert f"expected {MAX_DICE} d10" in asked.json()["faces"][0]
    check = t.roll("alice", pool=MAX_DICE, faces=[2] * MAX_DICE)
    assert len(first_roll(check)["faces"]) == MAX_DICE


def test_a_desperate_pool_of_as_many_dice_is_rolled_with_its_faces(table):
    t = table("d6pool")
    check = t.roll("alice", pool=2 - MAX_DICE, faces=[6] * MAX_DICE)  # 2 - pool dice
    assert len(first_roll(check)["faces"]) == MAX_DICE


def test_explosion_chains_up_to_max_faces_are_rolled_and_a_face_more_is_refused(table):
    t = table("cofd")
    # Every die a 10, and each of its chains 10, 10, 1: MAX_DICE + 3 * MAX_DICE faces.
    faces = [10] * MAX_DICE + [10, 10, 1] * MAX_DICE
    assert len(faces) == MAX_FACES
    check = first_roll(t.roll("alice", pool=MAX_DICE, faces=faces))
    assert (check["faces"], check["result"]["successes"]) == (faces, 3 * MAX_DICE)
    head = t.events()
    refused = _roll(t, pool=MAX_DICE, faces=[*faces, 1])
    assert refused.status_code == 400, refused.json()
    assert refused.json()["faces"] == [f"lists hold at most {MAX_FACES} items"]
    assert t.events() == head


def test_other_lists_stay_within_50_items(table):
    t = table("cofd")
    refused = _roll(t, pool=1, faces=[2], modifiers=[{"value": 0}] * 51)
    assert refused.status_code == 400
    assert refused.json()["modifiers"] == ["lists hold at most 50 items"]
