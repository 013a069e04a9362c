"""One roll, every door: who rolled it (a player, or the GM for the player's character) by its
visibility by revealed or not by who looks (the owner, another player, an observer, a late joiner, a
removed member, the GM) by every channel that shows a roll or what it changed (REST list and detail,
events and their character and type filters, the rule-state panel, the sheets, odds, the JSON
export, the CSV, the audit page and its filter, the pages' first paint, the socket's frames, the
follow-ups offered and the errors of follow-ups). Each channel must show the roll exactly when
the one visibility decision says so, and what it did (a Beat, a failed attempt) only then too."""

from __future__ import annotations

import csv
import io
import json
import re
from types import SimpleNamespace
from typing import Any

import pytest
from django.conf import settings as _settings
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import translation as _translation

from campaign import services
from campaign.models import Membership
from eventlog.models import Event
from rolls.live.broadcast import group_all, group_gm, group_user, messages_for
from rolls.live.consumers import LiveFeedConsumer
from rolls.reads.selectors import events_for
from rolls.reads.visibility import HIDDEN_ROLL
from tests.api.conftest import World, dump

# The one refusal about a hidden roll, in the language a request without preferences gets.
with _translation.override(_settings.LANGUAGE_CODE):
    HIDDEN_TEXT = str(HIDDEN_ROLL)

pytestmark = pytest.mark.django_db

SECRET = "SECRET-label-7f3a"
TASK = "the vault door"
FAILURE = [1, 2, 3, 4, 5]
VIEWERS = ("gm", "alice", "boris", "olga", "late", "removed")
HIDDEN_REFUSAL = {
    "check": [HIDDEN_TEXT],
    "code": "permission_denied",
}
CASES = [
    (roller, visibility, revealed)
    for roller in ("alice", "gm")
    for visibility in ("public", "private", "blind")
    for revealed in (False, True)
    if not (visibility == "public" and revealed)
]


def may_see(viewer: str, visibility: str, revealed: bool) -> bool:
    """The rule, restated from the README for the test: GMs see everything; everyone sees public
    and revealed rolls; a private roll is for its roller and its character's owner (alice here,
    whoever rolled it); a blind one for GMs only."""
    if viewer == "gm" or visibility == "public" or revealed:
        return True
    return visibility == "private" and viewer == "alice"


def _page_data(client: Client, url: str) -> dict[str, Any]:
    html = client.get(url).content.decode()
    match = re.search(r'<script id="table-data" type="application/json">(.*?)</script>', html, re.S)
    assert match, html[:300]
    return json.loads(match.group(1))


def _socket_view(w: World, seq: int, viewer: str) -> dict[str, Any]:
    """The event frame a viewer's socket delivers for ``seq``: the first message in its groups
    that the consumer uses as is, or what it reads from the log instead."""
    membership = Membership.objects.get(campaign=w.campaign, user=w.users[viewer])
    is_gm = membership.role == "gm"
    mine = {group_all(w.cid), group_gm(w.cid) if is_gm else group_user(w.cid, membership.user_id)}
    socket = SimpleNamespace(_is_gm=is_gm, user=w.users[viewer])
    event = Event.objects.get(campaign=w.campaign, seq=seq)
    for group, message in messages_for(event):
        if group in mine:
            if LiveFeedConsumer._renders_for_me(socket, message):
                return json.loads(message["text"])["event"]
            break
    [shown] = events_for(membership=membership, after=seq - 1, until=seq)
    return shown


def _beats(rows: list[dict[str, Any]], w: World) -> int:
    (row,) = [r for r in rows if str(r["id"]) == str(w.characters["alice"].pk)]
    return row["resources"].get("beats", 0)


@pytest.mark.parametrize(("roller", "visibility", "revealed"), CASES)
def test_every_channel_shows_a_roll_as_the_visibility_rule_says(
    build_world, roller: str, visibility: str, revealed: bool
) -> None:
    w = build_world(
        "cofd",
        options={"manual_dice": True, "intentional_dramatic_failure": "unlimited"},
        rolls=False,
    )
    User = get_user_model()
    w.users["late"] = w.users["stranger"]
    w.users["removed"] = User.objects.create_user("remy", password="x")
    services.join_campaign(invite_code=w.campaign.invite_code, user=w.users["removed"])
    hero = str(w.characters["alice"].pk)
    seq = w.roll(
        roller,
        faces=FAILURE,
        visibility=visibility,
        character=hero,
        label=SECRET,
        task=TASK,
    )
    services.leave_campaign(campaign=w.campaign, actor=w.users["gm"], user_id=w.users["removed"].pk)
    w.campaign.refresh_from_db()  # removing a member renews the invite code
    services.join_campaign(invite_code=w.campaign.invite_code, user=w.users["late"])
    if revealed:
        assert w.client("gm").post(w.url(f"checks/{seq}/reveal/")).status_code == 200

    # Follow-ups offered now: only to who controls the character and may see the roll.
    for viewer in VIEWERS:
        if viewer == "removed":
            continue
        seen = may_see(viewer, visibility, revealed)
        expected = set()
        if seen and viewer in ("gm", "alice"):
            expected.add("dramatic_failure")
        if viewer == "gm" and visibility != "public" and not revealed:
            expected.add("reveal")
        detail = w.client(viewer).get(w.url(f"checks/{seq}/")).json()
        assert {o["kind"] for o in detail.get("follow_ups", [])} == expected, viewer
        state = w.client(viewer).get(w.url("state/")).json()
        assert {o["kind"] for o in state["follow_ups"].get(str(seq), [])} == expected, viewer
        frame = _socket_view(w, seq, viewer)
        assert {o["kind"] for o in frame.get("follow_ups", [])} == expected, viewer

    # The GM takes the dramatic failure: alice's character earns a Beat, known as the roll is.
    assert w.client("gm").post(w.url(f"checks/{seq}/dramatic-failure/")).status_code == 200
    followup_seq = seq + (4 if revealed else 3)
    assert Event.objects.get(campaign=w.campaign, seq=followup_seq).type.endswith("taken")

    for viewer in VIEWERS:
        client = w.client(viewer)
        if viewer == "removed":
            tails = ("checks/", f"checks/{seq}/", "events/", "events/?type=check.rolled")
            for tail in (*tails, "state/", "characters/"):
                assert client.get(w.url(tail)).status_code == 404, tail
            web = Client()
            web.force_login(w.users[viewer])
            for page in ("play/", "audit/"):
                assert web.get(f"/campaigns/{w.cid}/{page}").status_code == 404, page
            continue
        seen = may_see(viewer, visibility, revealed)
        where = f"{viewer} / {roller} {visibility}{' revealed' if revealed else ''}"

        listed = {c["seq"]: c for c in client.get(w.url("checks/")).json()}
        assert listed[seq]["redacted"] is not seen, where
        assert (SECRET in dump(client.get(w.url("checks/")))) is seen, where
        detail = client.get(w.url(f"checks/{seq}/")).json()
        assert detail["redacted"] is not seen, where
        assert ("dice_marks" in detail) is seen, where

        events = {e["seq"]: e for e in client.get(w.url("events/")).json()}
        assert events[seq]["redacted"] is not seen and events[followup_seq]["redacted"] is not seen
        assert (SECRET in dump(client.get(w.url("events/")))) is seen, where
        filtered = client.get(w.url(f"events/?character={hero}")).json()
        assert (seq in {e["seq"] for e in filtered}) is seen, where
        assert not [e for e in filtered if e["redacted"]], where
        by_type = client.get(w.url("events/?type=check.rolled"))
        typed = {e["seq"]: e for e in by_type.json()}
        assert typed == {n: e for n, e in events.items() if e["type"] == "check.rolled"}, where
        assert (SECRET in dump(by_type)) is seen, where

        state = client.get(w.url("state/")).json()
        assert _beats(state["characters"], w) == (1 if seen else 0), where
        assert _beats(client.get(w.url("characters/")).json(), w) == (1 if seen else 0), where
        if viewer in ("gm", "alice"):
            odds = client.post(
                w.url("checks/odds/"),
                {"character": hero, "traits": ["Wits", "Occult"], "task": TASK},
                format="json",
            ).json()
            assert odds["rules"]["attempt"] == (2 if seen else 1), where

        export = {e["seq"]: e for e in client.get(w.url("export/")).json()["events"]}
        assert export[seq].get("redacted", False) is not seen, where
        assert (SECRET in dump(client.get(w.url("export/")))) is seen, where
        rows = list(csv.reader(io.StringIO(client.get(w.url("export.csv")).content.decode())))
        assert (str(seq) in {row[0] for row in rows[1:]}) is seen, where

        web = Client()
        web.force_login(w.users[viewer])
        audit = web.get(f"/campaigns/{w.cid}/audit/").content.decode()
        assert (SECRET in audit) is seen, where
        by_character = web.get(f"/campaigns/{w.cid}/audit/?character={hero}").content.decode()
        assert (f'data-key="{w.cid}-{seq}"' in by_character) is seen, where
        page = "gm/" if viewer == "gm" else "play/"
        first = _page_data(web, f"/campaigns/{w.cid}/{page}")
        painted = {c["seq"]: c for c in first["checks"]}
        assert painted[seq]["redacted"] is not seen, where
        assert (SECRET in json.dumps(first)) is seen, where
        assert _beats(first["characters"], w) == (1 if seen else 0), where
        assert _beats(first["state"]["characters"], w) == (1 if seen else 0), where

        for number in (seq, followup_seq):
            frame = _socket_view(w, number, viewer)
            assert frame["redacted"] is not seen, (where, number)
            assert (SECRET in json.dumps(frame)) is (seen and number == seq), (where, number)

        if not seen:  # the error of a follow-up says nothing of the roll
            refused = client.post(w.url(f"checks/{seq}/dramatic-failure/"))
            if viewer == "olga":  # observers are refused for what they are, whatever the roll
                assert refused.status_code == 403 and "check" not in refused.json(), where
            else:
                assert refused.json() == HIDDEN_REFUSAL, where
