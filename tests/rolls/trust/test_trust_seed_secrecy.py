"""Nothing ever shows a session's seed: not the log, the feeds, the API, the pages, the WebSocket,
the admin, the read models, the log lines, nor verify_log; not even after the session ends (it
would give every hidden roll's key). Each roll discloses only its own key, to who may see it.

The HTTP scan walks the URLconf and the WebSocket scan the routing table, so endpoints added later
are covered without touching this file.
"""

from __future__ import annotations

import base64
import itertools
import json
import logging
import re
import uuid
from collections.abc import Iterator
from io import StringIO

import pytest
from asgiref.sync import async_to_sync
from asgiref.testing import ApplicationCommunicator
from django.apps import apps
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.core import serializers
from django.core.management import call_command
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve
from django.urls.exceptions import Resolver404
from rest_framework.authtoken.models import Token

from campaign import services
from campaign.models import Campaign, Character, Membership, SessionSecret
from eventlog.models import Event
from rolls.models import Check
from rolls.reads.selectors import events_for


def seed_forms(seed: bytes) -> dict[str, str]:
    """The seed as text might carry it; 16-hex-digit and 12-base64 windows catch half a seed."""
    forms = {
        "hex": seed.hex(),
        "HEX": seed.hex().upper(),
        "base64": base64.b64encode(seed).decode(),
        "base64url": base64.urlsafe_b64encode(seed).decode().rstrip("="),
        "repr": repr(seed)[2:-1],
    }
    for start in range(0, 64 - 16 + 1, 8):
        forms[f"hex[{start}:]"] = seed.hex()[start : start + 16]
    b64 = base64.b64encode(seed).decode()
    for start in range(0, 44 - 12 + 1, 8):
        forms[f"base64[{start}:]"] = b64[start : start + 12]
    return forms


def leaks(text: str, seed: bytes) -> list[str]:
    return [name for name, form in seed_forms(seed).items() if form and form in text]


@pytest.fixture
def table(play, users, caplog) -> tuple[Campaign, bytes]:
    """A played campaign whose session is still open, with the log lines of its play."""
    caplog.set_level(logging.DEBUG)
    campaign = play("cofd", end=False)
    seed = bytes(SessionSecret.objects.get(campaign=campaign).seed)
    assert len(seed) == 32 and Event.objects.filter(campaign=campaign).count() > 15
    return campaign, seed


def test_the_scanner_finds_a_key_where_it_is_shown_and_never_the_seed(table, users):
    """The positive control: the same scan finds a public roll's key in every member's feed, a
    blind roll's only in the GM's; the seed in nobody's, before or after the session ends."""
    campaign, seed = table
    public = Event.objects.get(campaign=campaign, payload__label="in the open")
    blind = Event.objects.get(campaign=campaign, payload__label="the GM's secret")
    services.end_session(campaign=campaign, actor=users["gm"])
    for name in ("gm", "alice", "olga"):
        membership = Membership.objects.get(campaign=campaign, user=users[name])
        feed = json.dumps(events_for(membership=membership, limit=1000))
        assert "hex" in leaks(feed, bytes.fromhex(public.payload["dice_key"]["key"])), name
        assert bool(leaks(feed, bytes.fromhex(blind.payload["dice_key"]["key"]))) == (name == "gm")
        assert leaks(feed, seed) == [], name


def test_no_event_read_model_feed_or_log_line_holds_the_seed(table, users, caplog):
    campaign, seed = table
    for event in Event.objects.filter(campaign=campaign):
        assert leaks(serializers.serialize("json", [event]), seed) == [], event
    for name in ("gm", "alice", "boris", "olga"):
        membership = Membership.objects.get(campaign=campaign, user=users[name])
        assert leaks(json.dumps(events_for(membership=membership, limit=1000)), seed) == [], name
    for model in apps.get_models():
        if model is not SessionSecret:
            rows = serializers.serialize("json", model._default_manager.all())
            assert leaks(rows, seed) == [], model.__name__
    assert str(SessionSecret.objects.get(campaign=campaign)).startswith("secret of session")
    logged = caplog.get_records("setup") + caplog.get_records("call")
    assert leaks("\n".join(record.getMessage() for record in logged), seed) == []
    out, err = StringIO(), StringIO()
    call_command("verify_log", stdout=out, stderr=err)
    assert "server roll(s) follow from keys" in out.getvalue(), "verify_log proved the rolls…"
    assert leaks(out.getvalue() + err.getvalue(), seed) == [], "…and did not print the seed"


def test_no_admin_page_shows_the_seed(table, client):
    campaign, seed = table
    client.force_login(get_user_model().objects.create_superuser("root", password="root-pw"))
    seen: list[str] = []
    for model in admin.site._registry:
        info = model._meta.app_label, model._meta.model_name
        urls = [f"/admin/{info[0]}/{info[1]}/"]
        for pk in model._default_manager.values_list("pk", flat=True)[:5]:
            urls += [f"/admin/{info[0]}/{info[1]}/{pk}/change/"]
        for url in urls:
            response = client.get(url, follow=True)
            assert response.status_code == 200, url
            assert leaks(response.content.decode(), seed) == [], url
            seen.append(url)
    assert SessionSecret in admin.site._registry, "if it is ever unregistered, drop this line"
    secret = SessionSecret.objects.get(campaign=campaign)
    assert f"/admin/campaign/sessionsecret/{secret.pk}/change/" in seen


# --- every GET-able URL of the URLconf, with real ids filled in ------------------------------

_PARAM = re.compile(r"<(?:(?P<converter>[^>:]+):)?(?P<name>[^>]+)>")
_GROUP = re.compile(r"\(\?P<(?P<name>\w+)>[^)]*\)")


def _values(campaign: Campaign, users) -> dict[str, list[str]]:
    check = Check.objects.filter(campaign=campaign).order_by("seq")
    return {
        "campaign": [str(campaign.pk)],
        "seq": [str(seq) for seq in check.values_list("seq", flat=True)[:3]],
        "user": [str(users["gm"].pk), str(users["alice"].pk)],
        "character": [str(c.pk) for c in Character.objects.filter(campaign=campaign)[:1]],
        "code": [campaign.invite_code],
        "format": ["json", "csv", "api"],
        "uuid": [str(uuid.uuid4())],
        "": ["1", "x"],
    }


def _candidates(name: str, converter: str, values: dict[str, list[str]]) -> list[str]:
    for key in ("campaign", "seq", "user", "character", "code", "format"):
        if key in name:
            return values[key]
    if name in ("pk", "id"):
        return values["campaign"]
    return values["uuid"] if converter == "uuid" else values[""]


def _fill(pattern, values: dict[str, list[str]]) -> Iterator[str]:
    """Concrete texts for one URL pattern; regexes that are not a plain path are skipped."""
    if hasattr(pattern, "_route"):
        text, params = (
            str(pattern),
            [(m["name"], m["converter"] or "str") for m in _PARAM.finditer(str(pattern))],
        )
        parts = _PARAM.split(text)[::3]
    else:
        text = pattern.regex.pattern.lstrip("^").replace("\\Z", "").rstrip("$")
        text = text.replace("/?", "/").replace("\\.", ".")
        params = [(m["name"], "str") for m in _GROUP.finditer(text)]
        parts = _GROUP.split(text)[::2]
        if any(c in "".join(parts) for c in "()[]*+?\\|{}"):
            return
    options = [_candidates(name, converter, values) for name, converter in params]
    for chosen in itertools.islice(itertools.product(*options), 12):
        yield "".join(
            itertools.chain.from_iterable(itertools.zip_longest(parts, chosen, fillvalue=""))
        )


def _paths(patterns, prefix: str, values: dict[str, list[str]]) -> Iterator[str]:
    for entry in patterns:
        for text in _fill(entry.pattern, values):
            if isinstance(entry, URLResolver):
                yield from _paths(entry.url_patterns, prefix + text, values)
            elif isinstance(entry, URLPattern):
                yield prefix + text


def get_paths(campaign: Campaign, users) -> list[str]:
    paths = []
    for path in dict.fromkeys(_paths(get_resolver().url_patterns, "/", _values(campaign, users))):
        try:
            resolve(path)
        except Resolver404:
            continue
        if not path.startswith("/admin/"):  # the admin has its own test, as a superuser
            paths.append(path)
    return paths


def test_no_page_or_api_response_shows_the_seed(table, users, caplog):
    campaign, seed = table
    commitment = Event.objects.get(campaign=campaign, type="session.started").payload[
        "key_commitment"
    ]
    paths = get_paths(campaign, users)
    assert "/health/" in paths, "the URLconf walk works"
    shown_commitment = []
    for name in ("gm", "alice"):
        client = Client()
        client.force_login(users[name])
        for path in paths:
            response = client.get(path)
            body = b"".join(response.streaming_content) if response.streaming else response.content
            text = body.decode("utf-8", "replace")
            assert leaks(text, seed) == [], f"{name} GET {path} ({response.status_code})"
            if commitment in text:
                shown_commitment.append(path)
    assert leaks(caplog.text, seed) == []
    if len(paths) > 10:  # once the API exists, the scan must have reached the session's data
        assert shown_commitment, "no response showed the session at all: the scan saw nothing"


# --- the WebSocket -----------------------------------------------------------------------------


def websocket_paths(campaign: Campaign) -> list[str]:
    try:
        from rolls.live.routing import websocket_urlpatterns
    except ImportError:
        return []
    values = {key: [str(campaign.pk)] for key in ("campaign", "")} | {"uuid": [str(uuid.uuid4())]}
    return [
        "/" + text
        for entry in websocket_urlpatterns
        if isinstance(entry, URLPattern) and str(entry.pattern)
        for text in _fill(entry.pattern, values)
    ]


async def _frames(path: str, token: str) -> list[str]:
    """Connect as a browser would and read what arrives until the socket is quiet.

    (Plain ASGI messages: channels.testing needs daphne, which is not installed.)"""
    from config.asgi import application

    scope = {
        "type": "websocket",
        "path": path,
        "query_string": b"after=0",  # and the whole log as backlog
        "headers": [(b"host", b"localhost"), (b"authorization", f"Token {token}".encode())],
        "subprotocols": [],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    socket = ApplicationCommunicator(application, scope)
    await socket.send_input({"type": "websocket.connect"})
    frames: list[str] = []
    try:
        while True:
            # A loaded machine may take a while to accept; after that, quiet means done.
            message = await socket.receive_output(timeout=1 if frames else 15)
            if message["type"] == "websocket.close":
                break
            frames.append(message.get("text") or "")
    except TimeoutError:
        pass  # quiet: the backlog is through (and asgiref has cancelled the consumer)
    return frames


@pytest.mark.django_db(transaction=True)
def test_no_websocket_frame_shows_the_seed(play, users):
    campaign = play("cofd", end=False)
    seed = bytes(SessionSecret.objects.get(campaign=campaign).seed)
    paths = websocket_paths(campaign)
    if not paths:
        pytest.skip("no WebSocket routes (rolls.live.routing.websocket_urlpatterns) yet")
    for name in ("gm", "alice"):
        token = Token.objects.create(user=users[name]).key
        frames = [frame for path in paths for frame in async_to_sync(_frames)(path, token)]
        assert any('"check.rolled"' in frame for frame in frames), f"{name}: no backlog arrived"
        assert leaks("\n".join(frames), seed) == [], name


def test_the_sql_debug_log_stays_off(make_campaign, users):
    """With settings.DEBUG, Django's SQL logger would print the INSERT of the seed (as X'…').
    The project's logging keeps django.db.* at INFO, even with LOG_LEVEL=DEBUG; keep it so."""
    from django.db import connection

    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    sql_logger = logging.getLogger("django.db.backends")
    sql_logger.addHandler(handler)
    connection.force_debug_cursor = True  # what DEBUG=True does
    try:
        services.start_session(campaign=make_campaign("cofd"), actor=users["gm"])
    finally:
        connection.force_debug_cursor = False
        sql_logger.removeHandler(handler)
    assert sql_logger.getEffectiveLevel() > logging.DEBUG
    seed = bytes(SessionSecret.objects.get().seed)
    assert leaks("\n".join(record.getMessage() for record in records), seed) == []
