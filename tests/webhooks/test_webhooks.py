"""Webhooks against a real local receiver: signed, public only, in order, retried, not blocking."""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.utils import timezone, translation

from rolls.words import outcome_name
from webhooks import dispatch
from webhooks.models import Delivery, Webhook


class Receiver:
    """An HTTP server on a free loopback port that records requests and answers as told."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.status = 200
        self.hold = threading.Event()
        self.hold.set()  # cleared: every request waits until it is set again
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.hold.wait(10)
                receiver.requests.append({"headers": dict(self.headers), "body": body})
                self.send_response(receiver.status)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(request["body"]) for request in self.requests]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    instance = Receiver()
    yield instance
    instance.hold.set()
    instance.server.shutdown()


@pytest.fixture(autouse=True)
def _loopback_allowed(settings) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE = True
    settings.WEBHOOK_TIMEOUT = 0.5
    settings.WEBHOOKS_IN_PROCESS = False


def _hook(t, url: str, **fields: Any) -> dict[str, Any]:
    return t.post("gm", "webhooks/", {"url": url, **fields}, expect=201)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_only_the_gm_manages_webhooks_and_the_secret_is_shown_once(table, receiver, settings):
    t = table("cofd")
    for who in ("alice", "olga"):
        t.post(who, "webhooks/", {"url": receiver.url}, expect=403)
    created = _hook(t, receiver.url, event_types=["check.rolled"])
    assert len(created["secret"]) == 64
    listed = t.get("gm", "webhooks/")
    assert [w["id"] for w in listed] == [created["id"]] and "secret" not in listed[0]
    assert t.clients["alice"].get(f"{t.url}/webhooks/").status_code == 403
    assert (
        t.clients["alice"].get(f"{t.url}/webhooks/{created['id']}/deliveries/").status_code == 403
    )
    assert t.clients["alice"].delete(f"{t.url}/webhooks/{created['id']}/").status_code == 403
    for bad, field in (
        ({"url": "ftp://example.org/x"}, "url"),
        ({"url": receiver.url, "format": "slack"}, "format"),
        ({"url": receiver.url, "event_types": ["check.peeked"]}, "event_types"),
        ({"url": receiver.url, "secret": "short"}, "secret"),
        ({"url": receiver.url, "colour": "red"}, "colour"),
    ):
        assert field in t.post("gm", "webhooks/", bad, expect=400)
    settings.WEBHOOK_ALLOW_PRIVATE = False
    assert "url" in t.post("gm", "webhooks/", {"url": receiver.url}, expect=400)
    assert t.clients["gm"].delete(f"{t.url}/webhooks/{created['id']}/").status_code == 204
    assert t.clients["gm"].delete(f"{t.url}/webhooks/{created['id']}/").status_code == 404


def test_public_rolls_arrive_signed_and_hidden_ones_never(table, receiver):
    t = table("cofd")
    secret = _hook(t, receiver.url, event_types=["check.rolled", "check.revealed"])["secret"]
    public = t.roll(
        "alice", traits=["Wits", "Occult"], label="read the runes", faces=[9, 2, 3, 4, 5]
    )
    t.roll("alice", traits=["Wits"], visibility="private", label="my secret", faces=[9, 1, 2])
    blind = t.roll("gm", character=str(t.characters["boris"].pk), traits=["Wits"],
                   visibility="blind", label="ambush", faces=[8, 8, 8])  # fmt: skip
    t.post("gm", f"checks/{blind['seq']}/reveal/", expect=200)
    assert dispatch.deliver_due() == 2  # the public roll, and the blind one once revealed
    request, reveal = receiver.requests
    assert b"my secret" not in request["body"] and b"ambush" not in request["body"]
    headers = request["headers"]
    stamp, signature = (
        part.split("=", 1)[1] for part in headers["X-Tablecheck-Signature"].split(",")
    )
    expected = hmac.new(secret.encode(), f"{stamp}.".encode() + request["body"], hashlib.sha256)
    assert hmac.compare_digest(signature, expected.hexdigest())
    assert headers["X-Tablecheck-Event"] == "check.rolled"
    assert headers["X-Tablecheck-Delivery"] == f"{t.campaign.pk}:{public['seq']}"
    event = receiver.events()[0]["event"]
    assert event["seq"] == public["seq"] and event["payload"]["label"] == "read the runes"
    assert b"my secret" not in reveal["body"]
    revealed = receiver.events()[1]
    assert revealed["event"]["type"] == "check.revealed"
    assert revealed["revealed"]["payload"]["label"] == "ambush"
    assert dispatch.deliver_due() == 0  # nothing twice


def test_discord_gets_an_embed_in_the_campaigns_language(table, receiver):
    t = table("storyteller")
    _hook(t, receiver.url, format="discord", language="en")
    russian = Receiver()
    _hook(t, russian.url, format="discord", language="ru")
    t.roll(
        "alice", traits=["Physical", "Lockpicking"], label="the vault", faces=[1, 2, 2, 3, 4, 5, 6]
    )
    dispatch.deliver_due()
    body = receiver.events()[-1]
    (embed,) = body["embeds"]
    assert "Alice's hero" in embed["title"] and "the vault" in embed["title"]
    assert "**failure**" in embed["fields"][0]["value"]  # the session's free botch
    assert body["allowed_mentions"] == {"parse": []}
    with translation.override("ru"):
        word = outcome_name("storyteller", "failure")
    assert word != "failure"
    assert f"**{word}**" in russian.events()[-1]["embeds"][0]["fields"][0]["value"]
    russian.server.shutdown()


def test_a_failing_receiver_is_retried_with_backoff_and_in_order(table, receiver):
    t = table("cofd")
    hook = _hook(t, receiver.url, event_types=["check.rolled"])
    first = t.roll("alice", traits=["Wits"], faces=[9, 2, 3])
    second = t.roll("boris", traits=["Wits"], faces=[8, 8, 1])
    receiver.status = 500
    now = timezone.now()
    assert dispatch.deliver_due(now=now) == 0
    delivery = Delivery.objects.get(webhook_id=hook["id"], seq=first["seq"])
    assert (delivery.attempts, delivery.response_code, delivery.status) == (1, 500, "pending")
    assert delivery.next_attempt_at == now + timedelta(seconds=2)
    assert dispatch.deliver_due(now=now + timedelta(seconds=1)) == 0
    assert len(receiver.requests) == 1, "no retry before the backoff, and the next event waits"
    receiver.status = 204
    assert dispatch.deliver_due(now=now + timedelta(seconds=3)) == 2
    assert [e["event"]["seq"] for e in receiver.events()] == [
        first["seq"],
        first["seq"],
        second["seq"],
    ]
    log = t.get("gm", f"webhooks/{hook['id']}/deliveries/")
    assert [(d["seq"], d["status"], d["attempts"]) for d in log] == [
        (second["seq"], "delivered", 1),
        (first["seq"], "delivered", 2),
    ]


@pytest.mark.parametrize("trouble", ["down", "slow"])
def test_a_dead_receiver_is_given_up_on_and_the_next_events_still_go(table, receiver, trouble):
    t = table("cofd")
    url = f"http://127.0.0.1:{_free_port()}/hook" if trouble == "down" else receiver.url
    if trouble == "slow":
        receiver.hold.clear()  # answers only after the sender's timeout
    dead = _hook(t, url, event_types=["check.rolled"])
    alive = Receiver()
    try:
        _hook(t, alive.url, event_types=["check.rolled"])
        roll = t.roll("alice", traits=["Wits"], faces=[9, 2, 3])
        now = timezone.now()
        for attempt in range(dispatch.MAX_ATTEMPTS):
            dispatch.deliver_due(now=now + timedelta(hours=attempt))
        delivery = Delivery.objects.get(webhook_id=dead["id"], seq=roll["seq"])
        assert delivery.status == "failed" and delivery.attempts == dispatch.MAX_ATTEMPTS
        assert (
            ("refused" in delivery.error.lower())
            if trouble == "down"
            else ("timed out" in delivery.error)
        )
        assert Webhook.objects.get(pk=dead["id"]).delivered_seq == roll["seq"]
        assert [e["event"]["seq"] for e in alive.events()] == [roll["seq"]]
    finally:
        alive.server.shutdown()


@pytest.mark.django_db(transaction=True)
def test_delivery_runs_after_commit_and_never_holds_up_a_roll(table, receiver, settings):
    settings.WEBHOOKS_IN_PROCESS = True
    settings.WEBHOOK_TIMEOUT = 5
    t = table("cofd")
    _hook(t, receiver.url, event_types=["check.rolled"])
    receiver.hold.clear()  # the receiver blocks every request until released
    roll = t.roll("alice", traits=["Wits"], faces=[9, 2, 3])  # returns although the send hangs
    assert roll["seq"] and receiver.requests == []
    receiver.hold.set()
    for _ in range(100):
        if receiver.requests:
            break
        threading.Event().wait(0.05)
    assert [e["event"]["seq"] for e in receiver.events()] == [roll["seq"]]


def test_the_gm_adds_and_removes_a_webhook_on_its_page(table, receiver, users):
    from django.test import Client

    t = table("cofd")
    page = f"/campaigns/{t.campaign.pk}/webhooks/"
    for who, status in (("alice", 403), ("olga", 403), ("stranger", 404)):
        client = Client()
        client.force_login(users[who])
        assert client.get(page).status_code == status
        assert client.post(page, {"url": receiver.url}).status_code == status
    gm = Client()
    gm.force_login(users["gm"])
    shown = gm.post(page, {"url": receiver.url, "format": "discord", "language": "en"}, follow=True)
    hook = Webhook.objects.get(campaign=t.campaign)
    assert hook.secret in shown.content.decode()  # once, right after adding it
    assert hook.secret not in gm.get(page).content.decode()
    refused = gm.post(page, {"url": "gopher://nowhere"})
    assert refused.status_code == 400 and "url" in refused.content.decode()
    gm.post(page, {"delete": hook.pk})
    assert not Webhook.objects.filter(campaign=t.campaign).exists()


def test_a_webhook_without_a_url_is_a_clear_400(table):
    t = table("cofd")
    assert "url" in t.post("gm", "webhooks/", {}, expect=400)
    assert "url" in t.post("gm", "webhooks/", {"format": "json"}, expect=400)


def test_an_address_that_turned_private_is_refused_at_send_time(table, receiver, settings):
    t = table("cofd")
    hook = _hook(t, receiver.url, event_types=["check.rolled"], language="en")  # allowed then
    settings.WEBHOOK_ALLOW_PRIVATE = False  # now the loopback address is off limits
    roll = t.roll("alice", traits=["Wits"], faces=[9, 2, 3])
    assert dispatch.deliver_due() == 0
    assert receiver.requests == []
    delivery = Delivery.objects.get(webhook_id=hook["id"], seq=roll["seq"])
    assert "private network" in delivery.error and delivery.status == "pending"
