"""Regression tests for the leaks of issue #11, each tried as the player or observer who found it:
the page source, the log filters, follow-ups on hidden rolls (REST), odds previews, and the
follow-ups the page offered that the server then refused."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.conf import settings as _settings
from django.test import Client
from django.utils import translation as _translation

from campaign import services
from rolls.reads.visibility import HIDDEN_ROLL
from tests.api.conftest import World, dump

# The one refusal about a hidden roll, in the language a request without preferences gets.
with _translation.override(_settings.LANGUAGE_CODE):
    HIDDEN_TEXT = str(HIDDEN_ROLL)

pytestmark = pytest.mark.django_db

HIDDEN_REFUSAL = {
    "check": [HIDDEN_TEXT],
    "code": "permission_denied",
}
COFD_FAILURE, COFD_SUCCESS = [1, 2, 3, 4, 5], [8, 9, 8, 2, 1]


def page_data(w: World, who: str, page: str = "play/") -> dict[str, Any]:
    """The JSON a table page embeds for its first paint, as the browser receives it."""
    client = Client()
    client.force_login(w.users[who])
    html = client.get(f"/campaigns/{w.cid}/{page}").content.decode()
    match = re.search(r'<script id="table-data" type="application/json">(.*?)</script>', html, re.S)
    assert match, html[:500]
    return json.loads(match.group(1))


def resources_in_page(w: World, who: str, owner: str) -> dict[str, int]:
    data = page_data(w, who)
    (row,) = [c for c in data["characters"] if c["id"] == str(w.characters[owner].pk)]
    return row["resources"]


def post(w: World, who: str, tail: str, body: dict | None = None):
    return w.client(who).post(w.url(tail), body or {}, format="json")


# --- 1. the page embeds what the API shows ------------------------------------------------------


def test_the_player_page_hides_a_private_fortune_spend_from_the_others(build_world) -> None:
    w = build_world("age", options={"manual_dice": True}, rolls=False)
    seq = w.roll("boris", faces=[2, 3, 4], visibility="private")
    spent = post(w, "boris", f"checks/{seq}/fortune/", {"die": 0, "value": 6})
    assert spent.status_code == 200, dump(spent)
    assert resources_in_page(w, "boris", "boris")["fortune"] == 15 - 6
    for reader in ("alice", "olga"):
        assert resources_in_page(w, reader, "boris")["fortune"] == 15, reader
        assert w.client(reader).get(w.url("characters/")).json()[1]["resources"]["fortune"] == 15


def test_the_page_hides_a_beat_from_a_blind_dramatic_failure_even_from_the_owner(
    build_world,
) -> None:
    w = build_world("cofd", options={"manual_dice": True}, rolls=False)
    seq = w.roll(
        "gm", faces=COFD_FAILURE, visibility="blind", character=str(w.characters["alice"].pk)
    )
    assert post(w, "gm", f"checks/{seq}/dramatic-failure/").status_code == 200
    for reader in ("alice", "boris", "olga"):
        assert resources_in_page(w, reader, "alice").get("beats", 0) == 0, reader
    assert page_data(w, "gm", "gm/")["characters"][0]["resources"]["beats"] == 1
    post(w, "gm", f"checks/{seq}/reveal/")
    assert resources_in_page(w, "boris", "alice")["beats"] == 1


# --- 2. filters do not match a hidden roll on what it hides -------------------------------------


def test_the_character_filter_does_not_match_hidden_stubs(world: World) -> None:
    alice = str(world.characters["alice"].pk)

    def rolls(reader: str) -> set[int]:
        events = world.client(reader).get(world.url(f"events/?character={alice}")).json()
        assert events and not [e for e in events if e["redacted"]], reader
        return {e["seq"] for e in events if e["type"] == "check.rolled"}

    for reader in ("boris", "olga"):
        assert rolls(reader) == {world.checks["alice_public"]}, reader
    assert rolls("alice") == {world.checks["alice_public"], world.checks["alice_private"]}
    assert rolls("gm") == {
        world.checks[name]
        for name in ("alice_public", "alice_private", "alice_blind", "gm_blind_for_alice")
    }


# --- 3. follow-ups on hidden rolls tell nothing -------------------------------------------------


def test_a_blind_roll_does_not_tell_its_roller_whether_it_failed(build_world) -> None:
    w = build_world("cofd", options={"manual_dice": True}, rolls=False)
    failed = w.roll("alice", faces=COFD_FAILURE, visibility="blind")
    succeeded = w.roll("alice", faces=COFD_SUCCESS, visibility="blind")
    answers = [post(w, "alice", f"checks/{seq}/dramatic-failure/") for seq in (failed, succeeded)]
    assert [a.status_code for a in answers] == [403, 403]
    assert answers[0].json() == answers[1].json() == HIDDEN_REFUSAL
    # The GM may act on a blind roll; then the owner's Beat stays hidden until the reveal.
    assert post(w, "gm", f"checks/{failed}/dramatic-failure/").status_code == 200


def test_extra_nice_on_a_blind_roll_does_not_tell_the_band(build_world) -> None:
    w = build_world("nice_damnit", options={"manual_dice": True}, rolls=False)
    bad = w.roll("alice", faces=[1, 2], visibility="blind")  # total 5
    average = w.roll("alice", faces=[5, 6], visibility="blind")  # total 13
    for count in (1, 2, 7):
        answers = [
            post(w, "alice", f"checks/{s}/extra-nice/", {"count": count}) for s in (bad, average)
        ]
        assert [a.json() for a in answers] == [HIDDEN_REFUSAL, HIDDEN_REFUSAL], count


def test_fortune_on_the_gms_blind_roll_of_my_character_is_refused_alike(build_world) -> None:
    w = build_world("age", options={"manual_dice": True}, rolls=False)
    hero = str(w.characters["alice"].pk)
    gm_blind = w.roll("gm", faces=[1, 1, 1], visibility="blind", character=hero)
    own_blind = w.roll("alice", faces=[6, 5, 4], visibility="blind")
    for body in ({"die": 0, "value": 6}, {"die": 9, "value": 0}, {}):
        answers = [post(w, "alice", f"checks/{s}/fortune/", body) for s in (gm_blind, own_blind)]
        assert [a.json() for a in answers] == [HIDDEN_REFUSAL, HIDDEN_REFUSAL], body
    assert w.client("alice").get(w.url(f"characters/{hero}/")).json()["resources"]["fortune"] == 15
    # On a private roll the roller sees, Fortune works as before.
    private = w.roll("alice", faces=[1, 1, 1], visibility="private")
    assert post(w, "alice", f"checks/{private}/fortune/", {"die": 0, "value": 6}).status_code == 200


def test_another_players_private_roll_is_refused_like_a_blind_one(world: World) -> None:
    for seq in (world.checks["boris_private"], world.checks["gm_blind_for_alice"]):
        answer = post(world, "alice", f"checks/{seq}/dramatic-failure/")
        assert answer.status_code == 403 and answer.json() == HIDDEN_REFUSAL


def test_a_hidden_helper_roll_does_not_tell_its_successes_through_the_pool(build_world) -> None:
    w = build_world("cofd", options={"manual_dice": True}, rolls=False)
    hero = str(w.characters["boris"].pk)
    none = w.roll("gm", faces=COFD_FAILURE, visibility="blind", character=hero)
    three = w.roll("gm", faces=COFD_SUCCESS, visibility="blind", character=hero)
    answers = []
    for helper in (none, three):
        request = {
            "character": str(w.characters["alice"].pk),
            "traits": ["Wits", "Occult"],
            "helpers": [helper],
            "faces": [1],
        }
        answers.append(post(w, "alice", "checks/", request))
    assert answers[0].status_code == answers[1].status_code == 403
    assert (
        answers[0].json()
        == answers[1].json()
        == {
            "helpers": [HIDDEN_TEXT],
            "code": "permission_denied",
        }
    )


# --- 4. odds previews show only what the viewer may know ----------------------------------------


def odds(w: World, who: str, **request: Any) -> dict[str, Any]:
    if "character" not in request:
        request["character"] = str(w.characters[who].pk)
    request.setdefault("traits", ["Mental", "Alertness"])
    response = post(w, who, "checks/odds/", request)
    assert response.status_code == 200, dump(response)
    return response.json()


def test_a_blind_failure_does_not_raise_the_attempt_the_roller_previews(build_world) -> None:
    w = build_world("storyteller", options={"manual_dice": True}, rolls=False)
    w.roll("alice", faces=[2, 3, 4, 5, 2], visibility="blind", task="the lock")
    assert odds(w, "alice", task="the lock")["rules"]["attempt"] == 1
    # The GM previews with the true state (and a public failure counts for everyone).
    gm_view = odds(w, "gm", task="the lock", character=str(w.characters["alice"].pk))
    assert gm_view["rules"]["attempt"] == 2
    w.roll("alice", faces=[2, 3, 4, 5, 2], visibility="public", task="the lock")
    assert odds(w, "alice", task="the lock")["rules"]["attempt"] == 2


@pytest.mark.parametrize("scope", ["per_character", "per_table"])
def test_a_hidden_botch_does_not_flip_the_free_botch_in_the_odds(build_world, scope) -> None:
    w = build_world("storyteller", options={"manual_dice": True, "free_botch": scope}, rolls=False)
    w.roll("alice", faces=[1, 1, 2, 3, 4], visibility="blind")  # a botch, made a failure
    viewers = ["alice"] + (["boris"] if scope == "per_table" else [])
    for who in viewers:
        assert odds(w, who)["check"]["free_botch"] is True, who
        state = w.client(who).get(w.url("state/")).json()
        assert not state["table_free_botch_used"]
        assert not any(row["free_botch_used"] for row in state["characters"])
    assert odds(w, "gm", character=str(w.characters["alice"].pk))["check"]["free_botch"] is False


# --- 5. the server decides the follow-ups the page offers ---------------------------------------


def offers(w: World, who: str, seq: int) -> dict[str, dict[str, Any]]:
    check = w.client(who).get(w.url(f"checks/{seq}/")).json()
    return {offer["kind"]: offer for offer in check["follow_ups"]}


def test_per_scene_dramatic_failure_is_not_offered_for_an_earlier_scene(build_world) -> None:
    w = build_world(
        "cofd",
        options={"manual_dice": True, "intentional_dramatic_failure": "per_scene"},
        rolls=False,
    )
    services.start_scene(campaign=w.campaign, actor=w.users["gm"], title="The gate")
    seq = w.roll("alice", faces=COFD_FAILURE)
    offered = offers(w, "alice", seq)["dramatic_failure"]
    assert offered["limit"] == "per_scene" and offered["choices"] == [
        {"body": {}, "cost": None, "gain": {"beats": 1}}
    ]
    assert offers(w, "boris", seq) == {} and offers(w, "olga", seq) == {}
    services.end_scene(campaign=w.campaign, actor=w.users["gm"])
    services.start_scene(campaign=w.campaign, actor=w.users["gm"], title="The hall")
    assert "dramatic_failure" not in offers(w, "alice", seq)
    assert post(w, "alice", f"checks/{seq}/dramatic-failure/").status_code == 409


def test_a_desperate_all_sixes_roll_marks_only_sixes_as_hits(build_world) -> None:
    w = build_world("d6pool", options={"manual_dice": True, "desperate": "all_sixes"}, rolls=False)
    seq = w.roll("alice", traits=[], pool=0, faces=[4, 6])
    check = w.client("boris").get(w.url(f"checks/{seq}/")).json()
    [chains] = check["dice_marks"]
    assert [die["face"] for chain in chains for die in chain if "success" in die["marks"]] == [6]


def test_the_dramatic_failure_hint_names_the_campaigns_limit() -> None:
    """The hint said "once per chapter" whatever the mode; the offer's `limit` picks it now."""
    from django.utils import translation

    from pages.templatetags.tablecheck import ui_strings

    with translation.override("en"):
        texts = ui_strings()["t"]
    assert "once per scene" in texts["dramatic_failure_hint_per_scene"]
    assert "once per chapter" in texts["dramatic_failure_hint_per_chapter"]
    assert "once" not in texts["dramatic_failure_hint_unlimited"]


def test_the_calls_list_ties_no_hidden_answer_to_another_players_character(build_world) -> None:
    """GET …/calls/ (and the admin's call) lists a call's answers: a blind answer for alice's
    character is not tied to her character for boris, who is named in the same call (the stub
    hides whose roll it was); alice, whose character has answered, is not offered the call (nor
    a roll it would refuse); the GM sees all."""
    from rolls.checks import services as roll_services

    w = build_world("cofd", options={"manual_dice": True}, rolls=False)
    alice_hero, boris_hero = (str(w.characters[who].pk) for who in ("alice", "boris"))
    call = w.client("gm").post(
        w.url("calls/"),
        {
            "characters": [alice_hero, boris_hero],
            "request": {"traits": ["Wits", "Occult"], "visibility": "blind"},
        },
        format="json",
    )
    assert call.status_code == 201, call.content
    seq = roll_services.check_roll(
        campaign=w.campaign,
        actor=w.users["gm"],
        request={"call": call.json()["id"], "character": alice_hero, "faces": [1, 2, 3, 4, 5]},
    ).seq

    def answered(who: str) -> dict:
        (row,) = w.client(who).get(w.url("calls/")).json()
        return row["answered"]

    assert answered("gm") == {alice_hero: seq}
    assert answered("boris") == {}
    assert w.client("alice").get(w.url("calls/")).json() == []
    w.client("gm").post(w.url(f"checks/{seq}/reveal/"))
    assert answered("boris") == {alice_hero: seq}


def _blind_call(w, characters: list[str]) -> str:
    answer = w.client("gm").post(
        w.url("calls/"),
        {
            "characters": characters,
            "request": {"traits": ["Wits", "Occult"], "visibility": "blind"},
        },
        format="json",
    )
    assert answer.status_code == 201, answer.content
    return answer.json()["id"]


def _answer(w, who: str, call_id: str, character: str) -> int:
    from rolls.checks import services as roll_services

    request = {"call": call_id, "character": character, "faces": [1, 2, 3, 4, 5]}
    return roll_services.check_roll(campaign=w.campaign, actor=w.users[who], request=request).seq


def test_a_call_closing_on_a_hidden_answer_changes_no_other_players_list(build_world) -> None:
    """A call closes by itself once every character it names has answered. Boris has answered;
    the GM's blind answer for alice's character closes it: boris's list (on REST, the pages'
    source) is what it was, so the closing does not tell him that the roll he sees as a stub
    answered the call for alice. Before and after a reveal; the GM's list loses it at once."""
    w = build_world("cofd", options={"manual_dice": True}, rolls=False)
    alice_hero, boris_hero = (str(w.characters[who].pk) for who in ("alice", "boris"))
    call_id = _blind_call(w, [alice_hero, boris_hero])
    waiting = w.client("boris").get(w.url("calls/")).json()
    assert [call["id"] for call in waiting] == [call_id]
    _answer(w, "boris", call_id, boris_hero)
    before = w.client("boris").get(w.url("calls/")).json()
    assert before == [], "no call awaits boris: his character has answered"
    assert [call["id"] for call in w.client("gm").get(w.url("calls/")).json()] == [call_id]

    seq = _answer(w, "gm", call_id, alice_hero)
    assert w.client("boris").get(w.url(f"checks/{seq}/")).json()["redacted"] is True
    assert w.client("boris").get(w.url("calls/")).json() == before
    assert w.client("gm").get(w.url("calls/")).json() == []
    w.client("gm").post(w.url(f"checks/{seq}/reveal/"))
    assert w.client("boris").get(w.url("calls/")).json() == before


def test_an_answers_refusal_does_not_tell_whether_a_hidden_roll_answered_the_call(
    build_world,
) -> None:
    """Boris answers calls that name only alice's character: the refusal is the same whether
    her character has answered (in a roll he sees as a stub, which closed the call) or not (the
    socket's roll runs the same service); nothing is rolled."""
    w = build_world("cofd", options={"manual_dice": True}, rolls=False)
    alice_hero, boris_hero = (str(w.characters[who].pk) for who in ("alice", "boris"))

    def refusal(call_id: str) -> tuple[int, dict]:
        head = w.head()
        answer = w.client("boris").post(
            w.url("checks/"),
            {"call": call_id, "character": boris_hero, "faces": [1, 2, 3]},
            format="json",
        )
        assert w.head() == head, "nothing is rolled"
        return answer.status_code, answer.json()

    unanswered = _blind_call(w, [alice_hero])
    answered = _blind_call(w, [alice_hero])
    seq = _answer(w, "gm", answered, alice_hero)
    assert w.client("boris").get(w.url(f"checks/{seq}/")).json()["redacted"] is True
    assert refusal(unanswered) == refusal(answered)
    assert refusal(answered)[0] == 403


def test_the_admins_call_shows_a_staff_outsider_no_hidden_answer(build_world) -> None:
    from rolls.checks import services as roll_services
    from rolls.models import CheckCall

    w = build_world("cofd", options={"manual_dice": True}, rolls=False)
    hero = str(w.characters["alice"].pk)
    call = (
        w.client("gm")
        .post(
            w.url("calls/"),
            {"characters": [hero], "request": {"traits": ["Wits"], "visibility": "blind"}},
            format="json",
        )
        .json()
    )
    seq = roll_services.check_roll(
        campaign=w.campaign,
        actor=w.users["gm"],
        request={"call": call["id"], "character": hero, "faces": [1, 2, 3]},
    ).seq
    staff = w.users["stranger"]
    staff.is_staff = staff.is_superuser = True
    staff.save()
    client = Client()
    client.force_login(staff)
    page = client.get(f"/admin/rolls/checkcall/{CheckCall.objects.get().pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    answers = html[html.index("field-answers") :]
    answers = answers[:600]
    assert "{}" in answers and hero not in answers, answers
    # It closed on that answer: "closed" would tell the outsider that it was given.
    closed = html[html.index("field-closed_shown") :][:600]
    assert 'alt="False"' in closed, closed
    listed = client.get("/admin/rolls/checkcall/").content.decode()
    assert 'alt="False"' in listed[listed.index("field-closed_shown") :][:300]
    gm = Client()
    gm.force_login(w.users["gm"])
    w.users["gm"].is_staff = w.users["gm"].is_superuser = True
    w.users["gm"].save()
    html = gm.get(f"/admin/rolls/checkcall/{CheckCall.objects.get().pk}/change/").content.decode()
    shown = html[html.index("field-answers") :][:600]
    assert f"{hero}&quot;: {seq}" in shown, shown  # the table's GM: the truth
    assert 'alt="True"' in html[html.index("field-closed_shown") :][:600]


def with_sidekick(w):
    """The world with a second character of alice's (a roll may not help its own character)."""
    from campaign import services

    w.characters["sidekick"] = services.create_character(
        campaign=w.campaign,
        actor=w.users["gm"],
        name="Alice's sidekick",
        traits=w.characters["alice"].traits,
        owner_id=w.users["alice"].pk,
    )
    return w


def _helper_roll(w, who: str, visibility: str, character: str) -> int:
    """``who`` rolls 3 successes for ``character``, seen as ``visibility`` says."""
    return w.roll(
        who,
        faces=[8, 9, 8, 2, 1],
        visibility=visibility,
        character=str(w.characters[character].pk),
    )


def _teamwork(w, who: str, helper: int, visibility: str, character: str = "alice"):
    """``who`` rolls for ``character``'s Wits + Occult (5 physical dice), helped by ``helper``
    (3 successes)."""
    return w.client(who).post(
        w.url("checks/"),
        {
            "character": str(w.characters[character].pk),
            "traits": ["Wits", "Occult"],
            "helpers": [helper],
            "faces": [1] * 8,  # 5 dice and the helper's 3 successes
            "visibility": visibility,
        },
        format="json",
    )


@pytest.mark.parametrize(
    ("helper_by", "helper_visibility", "helper_for", "primary_by", "primary_visibility"),
    [
        ("gm", "blind", "boris", "gm", "public"),  # the GM's secret NPC help, shown to all
        ("gm", "blind", "boris", "gm", "private"),  # shown to alice, the primary's owner
        ("boris", "private", "boris", "gm", "private"),  # boris's own, shown to alice
        ("gm", "private", "boris", "gm", "public"),  # the GM's for boris, to the table
        ("alice", "private", "sidekick", "alice", "public"),  # her own private roll, to all
    ],
)
def test_a_hidden_helper_does_not_show_its_result_in_a_more_visible_primary(
    build_world, helper_by, helper_visibility, helper_for, primary_by, primary_visibility
) -> None:
    """RULES 3.7: a helper's successes are in the primary's pool (and a dramatic failure's -4).
    Naming, as the primary's helper, a roll hidden from anyone who would see the primary is a
    409 naming `helpers`, whoever names it (the GM sees every roll): nothing is rolled."""
    w = with_sidekick(build_world("cofd", options={"manual_dice": True}, rolls=False))
    helper = _helper_roll(w, helper_by, helper_visibility, helper_for)
    head = w.head()
    answer = _teamwork(w, primary_by, helper, primary_visibility)
    assert answer.status_code == 409, answer.content
    assert f"№{helper} " in answer.json()["helpers"][0]  # the page's language: Russian
    assert w.head() == head


@pytest.mark.parametrize(
    ("helper_by", "helper_visibility", "helper_for", "primary_by", "primary_visibility", "for_"),
    [
        ("gm", "blind", "boris", "gm", "blind", "alice"),
        ("alice", "private", "sidekick", "alice", "private", "alice"),
        # The GM's private roll for alice: she and the GM see it, as they see the helper.
        ("alice", "private", "sidekick", "gm", "private", "alice"),
        ("boris", "public", "boris", "alice", "public", "alice"),
    ],
)
def test_a_helper_as_hidden_as_its_primary_helps(
    build_world, helper_by, helper_visibility, helper_for, primary_by, primary_visibility, for_
) -> None:
    w = with_sidekick(build_world("cofd", options={"manual_dice": True}, rolls=False))
    helper = _helper_roll(w, helper_by, helper_visibility, helper_for)
    answer = _teamwork(w, primary_by, helper, primary_visibility, character=for_)
    assert answer.status_code == 201, answer.content


def test_revealing_a_primary_reveals_its_hidden_helpers(build_world) -> None:
    """Shown to everyone, the primary shows its helpers' successes: they are revealed with it
    (each its own `check.revealed`, in the feed as any reveal is)."""
    w = build_world("cofd", options={"manual_dice": True}, rolls=False)
    helper = _helper_roll(w, "gm", "blind", "boris")
    answer = _teamwork(w, "gm", helper, "blind")
    assert answer.status_code == 201, answer.content
    primary = answer.json()["seq"]
    for who in ("alice", "boris", "olga"):
        assert w.client(who).get(w.url(f"checks/{helper}/")).json()["redacted"] is True
    revealed = w.client("gm").post(w.url(f"checks/{primary}/reveal/"))
    assert revealed.status_code == 200, revealed.content
    for who in ("alice", "boris", "olga"):
        shown = w.client(who).get(w.url(f"checks/{primary}/")).json()
        assert shown["redacted"] is False
        assert shown["data"]["rolls"][0]["rules"]["teamwork_bonus"] == 3
        assert w.client(who).get(w.url(f"checks/{helper}/")).json()["redacted"] is False, who
    reveals = w.client("olga").get(w.url("events/?type=check.revealed")).json()
    assert [e["payload"]["check_seq"] for e in reveals] == [primary, helper]
