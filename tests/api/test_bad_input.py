"""Bad input over the REST API: refused with the right status, a body that names the field
(`{"<field>": ["message"], "code": …}`), and nothing appended to the campaign's log."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from campaign import services
from eventlog.models import Event
from tests.api.conftest import World, assert_refusal, dump

NOBODY = "00000000-0000-4000-8000-000000000000"


def alice_char(w: World) -> str:
    return str(w.characters["alice"].pk)


def roll(**fields: Any) -> Callable[[World], dict[str, Any]]:
    """A roll request for alice's character with these fields (a callable: the id varies)."""
    return lambda w: {"character": alice_char(w), "traits": ["Wits", "Occult"], **fields}


@dataclass(frozen=True)
class Bad:
    id: str
    status: int
    field: str | None
    body: Callable[[World], Any] | str | None = None  # a string is sent as is, as JSON
    path: Callable[[World], str] = lambda w: w.url("checks/")
    who: str = "alice"
    system: str = "cofd"
    options: dict | None = None
    prepare: Callable[[World], None] | None = None


def _failure(w: World) -> None:
    """alice's five dice show no 8+ (a failure); then a success with two 8+."""
    w.checks["failure"] = w.roll("alice", faces=[1, 2, 3, 4, 5])
    w.checks["success"] = w.roll("alice", faces=[8, 9, 3, 4, 5])


def _nice(w: World) -> None:
    w.checks["nice"] = w.roll("alice", traits=["Firearms"], faces=[6, 7])


def _no_session(w: World) -> None:
    services.end_session(campaign=w.campaign, actor=w.users["gm"])


MANUAL = {"manual_dice": True}


def _followup(name: str, kind: str) -> Callable[[World], str]:
    return lambda w: w.url(f"checks/{w.checks[name]}/{kind}/")


# fmt: off
BAD: list[Bad] = [
    Bad("unknown trait", 400, "traits", roll(traits=["Wits", "Telepathy"])),
    Bad("pool beyond the bound", 400, "pool", roll(pool=101)),
    # Wits 3 + Occult 2 + 96 = 101 dice: every part is in range, the sum is not.
    Bad("pool above the cap of 100 dice", 400, "pool", roll(pool=96)),
    Bad("storyteller difficulty 11", 400, "difficulty", system="storyteller",
        body=lambda w: {"character": alice_char(w), "traits": ["Mental"], "difficulty": 11}),
    Bad("storyteller difficulty 1", 400, "difficulty", system="storyteller",
        body=lambda w: {"character": alice_char(w), "traits": ["Mental"], "difficulty": 1}),
    Bad("faces sent to a server-rolled campaign", 400, "faces", roll(faces=[8, 8, 8, 8, 8])),
    Bad("manual dice: no faces", 400, "faces", roll(), options=MANUAL),
    Bad("manual dice: too few faces", 400, "faces", roll(faces=[8, 9]), options=MANUAL),
    Bad("manual dice: too many faces", 400, "faces", roll(faces=[1, 2, 3, 4, 5, 6, 7]),
        options=MANUAL),
    Bad("manual dice: 11 on a d10", 400, "faces", roll(faces=[1, 2, 3, 4, 11]), options=MANUAL),
    Bad("manual dice: faces as text", 400, "faces", roll(faces="12345"), options=MANUAL),
    Bad("follow-up on someone else's roll", 403, "character", who="boris", options=MANUAL,
        path=_followup("failure", "dramatic-failure"), prepare=_failure),
    Bad("dramatic failure on a success", 409, "check", options=MANUAL,
        path=_followup("success", "dramatic-failure"), prepare=_failure),
    Bad("an AGE follow-up on a CofD roll", 409, "check", lambda w: {"die": 0, "value": 3},
        options=MANUAL, path=_followup("failure", "fortune"), prepare=_failure),
    Bad("three extra Nice!", 400, "count", lambda w: {"count": 3}, system="nice_damnit",
        options=MANUAL, path=_followup("nice", "extra-nice"), prepare=_nice),
    Bad("follow-up on a check that does not exist", 404, "check",
        path=lambda w: w.url("checks/4242/dramatic-failure/")),
    Bad("malformed JSON", 400, "body", '{"character": "'),
    Bad("a JSON array", 400, "non_field_errors", lambda w: [alice_char(w), "Wits"]),
    Bad("JSON null", 400, "non_field_errors", "null"),
    Bad("traits as text", 400, "traits", roll(traits="Wits")),
    Bad("five traits", 400, "traits", roll(traits=["Wits", "Occult", "Wits", "Occult", "Wits"])),
    Bad("pool as text", 400, "pool", roll(pool="3")),
    Bad("pool as a boolean", 400, "pool", roll(pool=True)),
    Bad("visibility unknown", 400, "visibility", roll(visibility="secret")),
    Bad("modifiers as text", 400, "modifiers", roll(modifiers="+2")),
    Bad("a modifier beyond 50", 400, "modifiers.0", roll(modifiers=[{"value": 51}])),
    Bad("label too long", 400, "label", roll(label="x" * 201)),
    Bad("unknown field", 400, "bogus", roll(bogus=1)),
    Bad("a field of another system", 400, "difficulty", roll(difficulty=6)),
    Bad("character id that is not an id", 400, "character", roll(character="Marianne")),
    Bad("character id as a number", 400, "character", roll(character=7)),
    Bad("unknown character id", 404, "character", roll(character=NOBODY)),
    Bad("no character (a player)", 400, "character", lambda w: {"traits": ["Wits"]}),
    Bad("answering a call that does not exist", 404, "call", roll(call=NOBODY)),
    Bad("a roll with no open session", 409, "session", roll(), prepare=_no_session),
    Bad("odds: unknown trait", 400, "traits", roll(traits=["Telepathy"]),
        path=lambda w: w.url("checks/odds/")),
    Bad("events: negative cursor", 400, "after", path=lambda w: w.url("events/?after=-1")),
    Bad("events: session that is not an id", 400, "session",
        path=lambda w: w.url("events/?session=first")),
    Bad("events: a type outside the vocabulary", 400, "type",
        path=lambda w: w.url("events/?type=check.rolld")),
    Bad("events: one bad type among good ones", 400, "type",
        path=lambda w: w.url("events/?type=check.rolled&type=" + "x" * 100_000)),
    Bad("events: an empty type", 400, "type", path=lambda w: w.url("events/?type=")),
]
# fmt: on


def _log(w: World) -> tuple[int, int]:
    w.campaign.refresh_from_db()
    return w.campaign.head_seq, Event.objects.count()


@pytest.mark.parametrize("bad", BAD, ids=[bad.id for bad in BAD])
def test_bad_input_is_refused_naming_the_field_and_appends_nothing(build_world, bad: Bad) -> None:
    w = build_world(bad.system, options=bad.options, rolls=False)
    if bad.prepare:
        bad.prepare(w)
    client = w.client(bad.who)
    before = _log(w)

    path = bad.path(w)
    if "?" in path:
        response = client.get(path)
    elif isinstance(bad.body, str):
        response = client.post(path, bad.body, content_type="application/json")
    elif bad.body is None:
        response = client.post(path)
    else:
        response = client.post(path, bad.body(w), format="json")

    assert _log(w) == before, "a refused request must append nothing"
    message = assert_refusal(response, bad.status, bad.field)
    assert len(message) < 300


def test_the_same_bad_roll_by_the_gm_is_refused_the_same_way(build_world) -> None:
    """The GM may roll for anyone, but no more than the sheet and the cap allow."""
    w = build_world("cofd", rolls=False)
    before = _log(w)
    gm = w.client("gm")
    assert_refusal(gm.post(w.url("checks/"), roll(pool=96)(w), format="json"), 400, "pool")
    assert_refusal(gm.post(w.url("checks/"), roll(faces=[8])(w), format="json"), 400, "faces")
    assert _log(w) == before


def test_a_refused_roll_does_not_use_up_the_dice(build_world) -> None:
    """After refusals the next good roll is the next seq: no gap, no burnt event."""
    w = build_world("cofd", rolls=False)
    head = _log(w)[0]
    client = w.client("alice")
    for body in (roll(pool=101)(w), roll(bogus=True)(w), [1, 2]):
        assert client.post(w.url("checks/"), body, format="json").status_code == 400
    good = client.post(w.url("checks/"), roll()(w), format="json")
    assert good.status_code == 201, dump(good)
    assert good.json()["seq"] == head + 1


def test_a_trait_named_twice_is_refused(build_world) -> None:
    w = build_world("cofd", rolls=False)
    before = _log(w)
    response = w.client("alice").post(
        w.url("checks/"), roll(traits=["Wits", "Wits", "Wits", "Wits"])(w), format="json"
    )
    assert _log(w) == before
    assert_refusal(response, 400, "traits")


def test_unknown_fields_are_refused_when_editing_a_character(build_world) -> None:
    w = build_world("cofd", rolls=False)
    response = w.client("alice").patch(
        w.url(f"characters/{alice_char(w)}/"), {"nmae": "Marianne"}, format="json"
    )
    assert response.status_code == 400, dump(response)
    assert "nmae" in response.json()


def test_the_type_filter_takes_names_of_the_vocabulary_and_several_are_their_union(
    build_world,
) -> None:
    w = build_world("cofd")
    client = w.client("gm")
    everything = client.get(w.url("events/?limit=1000")).json()

    def of(*types: str) -> list[dict]:
        query = "".join(f"&type={name}" for name in types)
        response = client.get(w.url(f"events/?limit=1000{query}"))
        assert response.status_code == 200, dump(response)
        return response.json()

    rolled = of("check.rolled")
    assert rolled and rolled == [event for event in everything if event["type"] == "check.rolled"]
    both = {"check.rolled", "session.started"}
    assert of(*both) == [event for event in everything if event["type"] in both]
    assert of("check.rolled", "check.rolled", "check.rolled") == rolled


def test_a_wrong_type_is_named_in_the_refusal_cut_short_in_either_language(build_world) -> None:
    w = build_world("cofd", rolls=False)
    client = w.client("gm")
    message = assert_refusal(client.get(w.url("events/?type=check.rolld")), 400, "type")
    assert "check.rolld" in message
    long = "x" * 100_000
    message = assert_refusal(client.get(w.url(f"events/?type={long}")), 400, "type")
    assert "x" * 40 + "…" in message and len(message) < 300
    russian = client.get(w.url("events/?type=check.rolld"), HTTP_ACCEPT_LANGUAGE="ru")
    assert "«check.rolld» — не тип события" in assert_refusal(russian, 400, "type")
