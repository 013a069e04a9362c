"""Exactly-once writes: a retry with the same Idempotency-Key gets the first answer and writes
nothing; the same key for a different request is refused; keys belong to one user and campaign."""

from __future__ import annotations

import io
import threading
from collections import Counter
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from campaign import services
from campaign.models import IdempotentRequest
from eventlog.models import Event
from rolls.models import Check
from tests.api.conftest import TRAITS

pytestmark = pytest.mark.django_db


def roll_body(world, who: str = "alice") -> dict:
    return {"character": str(world.characters[who].pk), "traits": TRAITS[world.system]}


def post(world, who: str, tail: str, body: dict | None, key: str | None, **kwargs):
    headers = {} if key is None else {"HTTP_IDEMPOTENCY_KEY": key}
    return world.client(who).post(world.url(tail), body, format="json", **headers, **kwargs)


def test_a_retried_roll_returns_the_first_answer_and_rolls_once(world):
    head = world.campaign.head_seq
    first = post(world, "alice", "checks/", roll_body(world), "roll-1")
    again = post(world, "alice", "checks/", roll_body(world), "roll-1")
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again.content == first.content  # the text as sent, its keys in their order
    assert again.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    assert Event.objects.filter(campaign=world.campaign, seq__gt=head).count() == 1


def test_a_new_key_is_a_new_roll(world):
    first = post(world, "alice", "checks/", roll_body(world), "roll-1").json()
    second = post(world, "alice", "checks/", roll_body(world), "roll-2").json()
    assert second["seq"] == first["seq"] + 1


def test_the_same_key_with_a_different_request_is_refused_and_writes_nothing(world):
    post(world, "alice", "checks/", roll_body(world), "roll-1")
    head = Event.objects.filter(campaign=world.campaign).count()
    other = {**roll_body(world), "label": "a different roll"}
    response = post(world, "alice", "checks/", other, "roll-1")
    assert response.status_code == 422
    assert response.json()["code"] == "idempotency_key_reused"
    assert "Idempotency-Key" in response.json()
    assert Event.objects.filter(campaign=world.campaign).count() == head


def test_key_order_and_spacing_of_the_body_do_not_make_it_a_different_request(world):
    import json

    body = roll_body(world)
    first = world.client("alice").post(
        world.url("checks/"),
        json.dumps(body),
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY="k",
    )
    reordered = json.dumps(dict(reversed(list(body.items()))), indent=2)
    again = world.client("alice").post(
        world.url("checks/"), reordered, content_type="application/json", HTTP_IDEMPOTENCY_KEY="k"
    )
    assert again.status_code == 201 and again.json() == first.json()


def test_keys_belong_to_their_user(world):
    """Boris using Alice's key rolls for himself: he never sees her answer."""
    alice = post(world, "alice", "checks/", roll_body(world, "alice"), "shared").json()
    boris = post(world, "boris", "checks/", roll_body(world, "boris"), "shared")
    assert boris.status_code == 201 and "Idempotent-Replayed" not in boris.headers
    assert boris.json()["seq"] == alice["seq"] + 1


def test_keys_belong_to_their_campaign(world, build_world):
    other = build_world("cofd", rolls=False)
    post(world, "alice", "checks/", roll_body(world), "k")
    response = post(other, "alice", "checks/", roll_body(other), "k")
    assert response.status_code == 201 and "Idempotent-Replayed" not in response.headers


def test_a_refused_write_keeps_no_key_so_its_retry_runs_again(world):
    body = {**roll_body(world), "traits": ["No such trait"]}
    assert post(world, "alice", "checks/", body, "k").status_code == 400
    assert not IdempotentRequest.objects.exists()
    fixed = post(world, "alice", "checks/", roll_body(world), "k")
    assert fixed.status_code == 201


def test_a_stranger_replaying_a_key_learns_nothing(world):
    post(world, "alice", "checks/", roll_body(world), "k")
    assert post(world, "stranger", "checks/", roll_body(world), "k").status_code == 404
    assert post(world, "anonymous", "checks/", roll_body(world), "k").status_code == 401


@pytest.mark.parametrize("key", ["", "x" * 256, "tab\there"])
def test_a_malformed_key_is_a_400_naming_the_header(world, key):
    response = post(world, "alice", "checks/", roll_body(world), key)
    assert response.status_code == 400
    assert "Idempotency-Key" in response.json()


def test_every_kind_of_write_replays(world):
    """A write without a body (204) and a GM write (start a scene) replay too."""
    gm_first = post(world, "gm", "scenes/", {"title": "The docks"}, "scene")
    gm_again = post(world, "gm", "scenes/", {"title": "The docks"}, "scene")
    assert gm_first.status_code == gm_again.status_code == 201
    assert gm_again.json() == gm_first.json()
    end = post(world, "gm", "scenes/end/", None, "end")
    end_again = post(world, "gm", "scenes/end/", None, "end")
    assert end.status_code == end_again.status_code == 200
    assert end_again.headers["Idempotent-Replayed"] == "true"
    patch = world.client("gm").patch(
        world.url(), {"name": "Renamed"}, format="json", HTTP_IDEMPOTENCY_KEY="rename"
    )
    patch_again = world.client("gm").patch(
        world.url(), {"name": "Renamed"}, format="json", HTTP_IDEMPOTENCY_KEY="rename"
    )
    assert patch.status_code == patch_again.status_code == 200


def test_keys_are_forgotten_after_their_retention(world, settings):
    settings.IDEMPOTENCY_KEY_HOURS = 1
    first = post(world, "alice", "checks/", roll_body(world), "k").json()
    IdempotentRequest.objects.update(created_at=timezone.now() - timedelta(hours=2))
    again = post(world, "alice", "checks/", roll_body(world), "k")
    assert again.status_code == 201 and again.json()["seq"] == first["seq"] + 1
    IdempotentRequest.objects.update(created_at=timezone.now() - timedelta(hours=2))
    out = io.StringIO()
    call_command("forget_idempotency_keys", stdout=out)
    assert "forgot 1 key" in out.getvalue()
    assert not IdempotentRequest.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_concurrent_retries_with_one_key_roll_exactly_once(build_world):
    """Eight copies of one request at once (a client retrying impatiently): one roll, and every
    copy answers with it."""
    world = build_world("cofd", rolls=False)
    barrier = threading.Barrier(8)
    answers: list = [None] * 8

    def send(index: int) -> None:
        try:
            barrier.wait()
            response = post(world, "alice", "checks/", roll_body(world), "impatient")
            while response.status_code == 503:  # busy on a slow machine: retried, same key
                response = post(world, "alice", "checks/", roll_body(world), "impatient")
            answers[index] = (response.status_code, response.json()["seq"])
        finally:
            connection.close()

    threads = [threading.Thread(target=send, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert Counter(answers) == {answers[0]: 8}, answers
    assert answers[0][0] == 201
    assert Check.objects.filter(campaign=world.campaign).count() == 1


# Writes that are not a campaign's: signing in and out, and a socket ticket (single-use anyway);
# the roll box's preview and the odds are POSTs that write nothing.
NOT_CAMPAIGN_WRITES = {"TokenView", "SocketTicketView", "ParseView", "OddsView"}


def _api_views():
    from django.urls import URLPattern, URLResolver, get_resolver

    def walk(patterns):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns)
            elif isinstance(pattern, URLPattern) and hasattr(pattern.callback, "view_class"):
                yield pattern.callback.view_class

    return set(walk(get_resolver().url_patterns))


def test_every_api_write_goes_through_the_one_write_view():
    """Idempotency and the writer slot come from WriteView: a write view that is a plain APIView
    would write twice on a retry."""
    from rest_framework.views import APIView

    from campaign.api.writes import WriteView

    unsafe = ("post", "put", "patch", "delete")
    plain = sorted(
        view.__name__
        for view in _api_views()
        if issubclass(view, APIView)
        and any(hasattr(view, method) for method in unsafe)
        and not issubclass(view, WriteView)
        and view.__name__ not in NOT_CAMPAIGN_WRITES
    )
    assert plain == []


def test_a_retried_favourite_is_saved_once(world):
    character = world.characters["alice"]
    tail = f"characters/{character.pk}/favourites/"
    body = {"name": "Look", "text": "Wits + Occult"}  # world is a CofD table
    first = post(world, "alice", tail, body, "fav-1")
    again = post(world, "alice", tail, body, "fav-1")
    assert first.status_code == again.status_code == 201, first.json()
    assert again.json() == first.json()
    assert len(world.client("alice").get(world.url(tail)).json()) == 1


def _no_content_writes(w) -> list[tuple[str, str, str]]:
    """(who, method, path) of every campaign write the API answers with 204, each set up to
    succeed (a webhook is the GM's configuration, not an event of play)."""
    from rolls.checks import calls
    from webhooks.services import create_webhook

    gm = w.users["gm"]
    hero = w.characters["alice"]
    favourite = services.add_favourite(
        campaign=w.campaign,
        actor=w.users["alice"],
        character=hero,
        name="Look",
        text=" + ".join(TRAITS[w.system]),
    )
    call = calls.call_for_check(
        campaign=w.campaign,
        actor=gm,
        character_ids=[str(hero.pk)],
        request={"traits": TRAITS[w.system]},
    )
    hook = create_webhook(campaign=w.campaign, actor=gm, url="https://93.184.215.14/hook")
    w.roll("gm", faces=[2, 3, 4, 5, 2], task="the vault door", character=str(hero.pk))
    return [
        ("alice", "delete", f"characters/{hero.pk}/favourites/{favourite['id']}/"),
        ("gm", "post", f"calls/{call.pk}/close/"),
        ("gm", "delete", f"webhooks/{hook.pk}/"),
        ("gm", "delete", f"members/{w.users['boris'].pk}/"),
    ]


def test_a_write_answered_without_a_body_keeps_its_key_and_replays(build_world):
    """A 204 (the pages send a key with every write): kept as no body, replayed as 204, done
    once. It was a 500 on both databases: the empty text sent is not JSON."""
    w = build_world("storyteller", options={"manual_dice": True}, rolls=False)
    writes = _no_content_writes(w)
    reset = {"character": str(w.characters["alice"].pk), "task": "the vault door"}
    for n, (who, method, tail) in enumerate([("gm", "post", "tasks/reset/"), *writes]):
        body = reset if tail == "tasks/reset/" else None
        send = getattr(w.client(who), method)
        head = w.head()
        first = send(w.url(tail), body, format="json", HTTP_IDEMPOTENCY_KEY=f"none-{n}")
        assert first.status_code == 204, (tail, first.content)
        assert first.content == b"" and "Idempotent-Replayed" not in first.headers
        moved = w.head()
        assert moved[0] == head[0] + (0 if tail.startswith("webhooks/") else 1), tail
        again = send(w.url(tail), body, format="json", HTTP_IDEMPOTENCY_KEY=f"none-{n}")
        assert again.status_code == 204, (tail, again.content)
        assert again.content == b"" and again.headers["Idempotent-Replayed"] == "true"
        assert w.head() == moved, tail  # not done twice
