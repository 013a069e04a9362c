"""Everything a client sends is capped before it reaches the append-only log: a refusal is a 400
naming the field (README "Security" lists the limits)."""

from __future__ import annotations

from campaign.limits import MAX_DEPTH, MAX_ITEMS, MAX_KEY, MAX_KEYS, MAX_STRING
from tests.api.test_permission_matrix import alice_char


def _refused(response, field: str) -> str:
    assert response.status_code == 400, response.content[:300]
    body = response.json()
    assert field in body, body
    return body[field][0]


def _roll(world, **extra):
    body = {"character": alice_char(world), "traits": ["Wits"], **extra}
    return world.client("alice").post(world.url("checks/"), body, format="json")


def test_names_are_at_most_100_characters(build_world):
    world = build_world("cofd")
    gm = world.client("gm")
    assert (
        gm.post("/api/campaigns/", {"name": "n" * 100, "system": "age"}, format="json").status_code
        == 201
    )
    _refused(
        gm.post("/api/campaigns/", {"name": "n" * 101, "system": "age"}, format="json"), "name"
    )
    _refused(gm.patch(world.url(), {"name": "n" * 101}, format="json"), "name")
    _refused(gm.post(world.url("characters/"), {"name": "c" * 101}, format="json"), "name")


def test_strings_keys_lists_objects_and_nesting_are_capped(build_world):
    world = build_world("cofd")
    head = world.campaign.head_seq
    _refused(_roll(world, label="l" * (MAX_STRING + 1)), "label")
    _refused(
        _roll(world, modifiers=[{"group": "g" * (MAX_STRING + 1), "value": 1}]),
        "modifiers.0.group",
    )
    _refused(_roll(world, modifiers=[{"value": 1}] * (MAX_ITEMS + 1)), "modifiers")
    gm = world.client("gm")
    sheet = {"attributes": {"Wits": 2}, "skills": {"k" * (MAX_KEY + 1): 1}}
    _refused(
        gm.post(world.url("characters/"), {"name": "A", "traits": sheet}, format="json"),
        "traits.skills",
    )
    many = {"attributes": {f"Trait {n}": 1 for n in range(MAX_KEYS + 1)}}
    _refused(
        gm.post(world.url("characters/"), {"name": "A", "traits": many}, format="json"),
        "traits.attributes",
    )
    specialties = {"specialties": {"Occult": [f"s{n}" for n in range(MAX_ITEMS + 1)]}}
    _refused(
        gm.patch(
            world.url(f"characters/{alice_char(world)}/"), {"traits": specialties}, format="json"
        ),
        "traits.specialties.Occult",
    )
    deep: dict = {}
    node = deep
    for _ in range(MAX_DEPTH + 1):
        node["a"] = {}
        node = node["a"]
    _refused(_roll(world, faces=deep), "faces" + ".a" * (MAX_DEPTH - 1))
    world.campaign.refresh_from_db()
    assert world.campaign.head_seq == head, "nothing refused was recorded"


def test_a_sheet_stays_small_in_the_log(build_world):
    world = build_world("cofd")
    gm = world.client("gm")
    # Within every per-value cap, but far more than any real sheet: refused as a whole.
    skills = dict.fromkeys(
        [
            "Academics",
            "Computer",
            "Crafts",
            "Investigation",
            "Medicine",
            "Occult",
            "Politics",
            "Science",
            "Athletics",
            "Brawl",
            "Drive",
            "Firearms",
            "Larceny",
            "Stealth",
            "Survival",
            "Weaponry",
            "Empathy",
            "Expression",
            "Intimidation",
            "Persuasion",
            "Socialize",
            "Streetwise",
            "Subterfuge",
        ],
        1,
    )
    specialties = {
        name: [f"{name} {chr(97 + k)} " + "x" * 30 for k in range(20)] for name in skills
    }
    sheet = {"attributes": {"Wits": 2}, "skills": skills, "specialties": specialties}
    answer = gm.patch(
        world.url(f"characters/{alice_char(world)}/"), {"traits": sheet}, format="json"
    )
    assert "16384" in _refused(answer, "traits")
    head = world.campaign.head_seq
    answer = gm.post(world.url("characters/"), {"name": "Big", "traits": sheet}, format="json")
    _refused(answer, "traits")
    world.campaign.refresh_from_db()
    assert world.campaign.head_seq == head
