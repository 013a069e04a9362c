"""The web pages through Django's test client: who may open what, and what each of them shows."""

from __future__ import annotations

import json
import re

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import Client

from campaign import services
from campaign.models import Campaign, Membership
from eventlog.models import Event

pytestmark = pytest.mark.django_db

PAGES = ["", "gm/", "play/", "audit/"]


def table_data(response) -> dict:
    match = re.search(
        r'<script id="table-data" type="application/json">(.*?)</script>',
        response.content.decode(),
        re.S,
    )
    assert match, "the page carries its first state"
    return json.loads(match.group(1))


# --- who may open what -----------------------------------------------------------------------


@pytest.mark.parametrize("page", PAGES)
def test_anonymous_visitors_are_sent_to_sign_in(table, page):
    response = table.client(None).get(table.url(page))
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")


@pytest.mark.parametrize("page", PAGES)
def test_non_members_get_404(table, page):
    assert table.client("stranger").get(table.url(page)).status_code == 404


def test_a_campaign_that_does_not_exist_is_404_too(table):
    assert table.client("gm").get("/campaigns/999999/play/").status_code == 404


def test_players_cannot_open_the_gm_dashboard(table):
    response = table.client("alice").get(table.url("gm/"))
    assert response.status_code == 403
    assert b"Campaign setup" not in response.content


def test_the_campaign_link_leads_each_member_to_their_page(table):
    assert table.client("gm").get(table.url(""))["Location"] == table.url("gm/")
    assert table.client("alice").get(table.url(""))["Location"] == table.url("play/")
    assert table.client("olga").get(table.url(""))["Location"] == table.url("play/")


def test_home_needs_sign_in_and_lists_my_campaigns(table, users):
    assert table.client(None).get("/")["Location"].startswith("/accounts/login/")
    page = table.client("alice").get("/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Test table" in page
    assert table.url("play/") in page
    assert table.url("gm/") not in page
    assert "Test table" not in table.client("stranger").get("/").content.decode()


# --- the GM dashboard and the player page ----------------------------------------------------


def test_the_gm_dashboard_shows_the_setup_the_invite_and_the_table(table):
    table.roll("alice", [8, 8, 2, 3, 4], traits=["Wits", "Occult"], label="Searching")
    response = table.client("gm").get(table.url("gm/"), HTTP_ACCEPT_LANGUAGE="en")
    assert response.status_code == 200
    page = response.content.decode()
    # Rule options, each with a one-line explanation.
    assert "Dramatic failure for a Beat" in page
    assert "turn a failure into a dramatic failure and earn a Beat" in page
    assert 'name="modifier_cap"' in page
    # The invite link.
    assert f"/join/{table.campaign.invite_code}/" in page
    # The roll form's system fields, and the feed's first state.
    assert 'name="rote"' in page and 'name="again"' in page
    data = table_data(response)
    assert data["me"]["role"] == "gm"
    assert [check["label"] for check in data["checks"]] == ["Searching"]
    assert {c["name"] for c in data["characters"]} == {"Marianne", "Theo"}
    assert data["campaign"]["session"]["number"] == 1


def test_the_player_page_never_carries_a_blind_roll_of_someone_else(table):
    table.roll("alice", [8, 2, 3, 4, 5], traits=["Wits", "Occult"], label="The secret sigil",
               visibility="blind")  # fmt: skip
    table.roll("alice", [9, 2, 3], traits=["Wits"], label="In the open")
    boris = table.client("boris").get(table.url("play/"))
    assert b"The secret sigil" not in boris.content
    checks = table_data(boris)["checks"]
    assert [c.get("label") for c in checks] == [None, "In the open"]
    assert checks[0]["redacted"] is True and "data" not in checks[0]
    gm = table.client("gm").get(table.url("gm/"))
    assert b"The secret sigil" in gm.content


def test_observers_watch_without_a_roll_form(table):
    page = table.client("olga").get(table.url("play/")).content.decode()
    assert 'id="feed"' in page
    assert 'id="composer"' not in page


def test_pages_set_the_csrf_cookie_their_scripts_send(table):
    response = table.client("alice").get(table.url("play/"))
    assert "csrftoken" in response.cookies


def test_the_pages_speak_russian_by_default_and_english_on_request(table):
    client = table.client("alice")
    russian = client.get(table.url("play/")).content.decode()
    assert '<html lang="ru">' in russian
    assert "Живая лента" in russian and "Бросок" in russian
    client.post("/i18n/setlang/", {"language": "en", "next": table.url("play/")})
    english = client.get(table.url("play/")).content.decode()
    assert '<html lang="en">' in english
    assert "Live feed" in english


def test_outcome_words_reach_the_scripts_in_the_system_s_own_language(table):
    client = table.client("alice")
    strings = re.search(
        r'<script id="ui-strings" type="application/json">(.*?)</script>',
        client.get(table.url("play/")).content.decode(),
        re.S,
    )
    words = json.loads(strings.group(1))
    assert words["outcomes"]["d6pool"]["wrong_way"] == "не туда!"
    assert words["outcomes"]["cofd"]["dramatic_failure"] == "драматический провал"
    assert words["outcomes"]["storyteller"]["botch"] == "провал (ботч)"
    assert words["outcomes"]["cofd"]["exceptional_success"] == "исключительный успех"


# --- creating a campaign, accounts, invites --------------------------------------------------


def test_a_gm_creates_a_campaign_from_the_home_page(users):
    client = Client()
    client.force_login(users["stranger"])
    response = client.post("/", {"name": "Ceres", "system": "age"})
    campaign = Campaign.objects.get(name="Ceres")
    assert response["Location"] == f"/campaigns/{campaign.pk}/gm/"
    assert Membership.objects.get(campaign=campaign, user=users["stranger"]).role == "gm"
    assert client.get(response["Location"]).status_code == 200


def test_the_home_page_refuses_an_unknown_system(users):
    client = Client()
    client.force_login(users["stranger"])
    response = client.post("/", {"name": "X", "system": "monopoly"})
    assert response.status_code == 200
    assert not Campaign.objects.filter(name="X").exists()


def test_sign_in_and_out_from_the_pages(users):
    client = Client()
    assert client.get("/accounts/login/").status_code == 200
    response = client.post(
        "/accounts/login/", {"username": "alice", "password": "alice-password", "next": "/"}
    )
    assert response["Location"] == "/"
    assert client.get("/").status_code == 200
    wrong = Client().post("/accounts/login/", {"username": "alice", "password": "nope"})
    assert wrong.status_code == 200 and 'role="alert"' in wrong.content.decode()
    assert client.post("/accounts/logout/").status_code == 200
    assert client.get("/").status_code == 302


def test_join_by_invite_sign_up_then_land_on_the_player_page(table):
    join = f"/join/{table.campaign.invite_code}/"
    client = Client()
    anonymous = client.get(join, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Test table" in anonymous
    assert f"/accounts/signup/?next={join}" in anonymous
    response = client.post(
        "/accounts/signup/",
        {"username": "newbie", "password1": "a-long-passphrase", "password2": "a-long-passphrase",
         "next": join},
    )  # fmt: skip
    assert response["Location"] == join
    assert b"Join the table" in client.get(join, HTTP_ACCEPT_LANGUAGE="en").content
    response = client.post(join)
    assert response["Location"] == table.url("play/")
    newbie = get_user_model().objects.get(username="newbie")
    assert Membership.objects.get(campaign=table.campaign, user=newbie).role == "player"
    assert client.get(table.url("play/")).status_code == 200
    # Once in, the link just leads to the campaign.
    assert client.get(join)["Location"] == table.url("")


def test_a_renewed_or_unknown_invite_is_404(table):
    assert table.client("stranger").get("/join/not-a-code/").status_code == 404
    old = table.campaign.invite_code
    services.regenerate_invite(campaign=table.campaign, actor=table.users["gm"])
    assert table.client("stranger").get(f"/join/{old}/").status_code == 404
    assert Client().get(f"/join/{old}/").status_code == 404


def test_sign_up_refuses_a_taken_name(users):
    response = Client().post(
        "/accounts/signup/", {"username": "alice", "password1": "x-long-pass", "password2": "x"}
    )
    assert response.status_code == 200
    assert get_user_model().objects.filter(username="alice").count() == 1


def test_sign_up_ignores_a_next_link_to_another_site(db):
    response = Client().post(
        "/accounts/signup/",
        {"username": "newbie", "password1": "a-long-passphrase", "password2": "a-long-passphrase",
         "next": "https://evil.example/"},
    )  # fmt: skip
    assert response["Location"] == "/"


# --- the admin -------------------------------------------------------------------------------


def test_every_model_is_in_the_admin_and_the_event_log_is_read_only(table, users):
    from django.apps import apps

    for app in ("campaign", "eventlog", "rolls"):
        for model in apps.get_app_config(app).get_models():
            assert admin.site.is_registered(model), model
    gm = users["gm"]
    gm.is_staff = gm.is_superuser = True
    gm.save()
    client = Client()
    client.force_login(gm)
    event = Event.objects.filter(campaign=table.campaign).first()
    assert client.get("/admin/eventlog/event/").status_code == 200
    change = client.get(f"/admin/eventlog/event/{event.pk}/change/")
    assert change.status_code == 200 and b'name="_save"' not in change.content
    assert client.post(f"/admin/eventlog/event/{event.pk}/change/", {}).status_code == 403
    assert client.get("/admin/eventlog/event/add/").status_code == 403
    assert client.post(f"/admin/eventlog/event/{event.pk}/delete/", {"post": "yes"}).status_code \
        == 403  # fmt: skip
    assert Event.objects.filter(pk=event.pk).exists()


@pytest.mark.parametrize(("who", "page"), [("gm", "gm/"), ("alice", "play/"), ("gm", "audit/")])
def test_no_template_comment_reaches_a_page(table, who, page):
    """Django's {# #} comment ends on its own line: one that runs on shows the table its text
    (the roll form showed a developer's note to every player)."""
    html = table.client(who).get(table.url(page)).content.decode()
    assert "{#" not in html and "#}" not in html


def test_every_template_comment_closes_on_its_line():
    from pathlib import Path

    from django.conf import settings

    templates = Path(settings.BASE_DIR) / "templates"
    open_comments = [
        f"{path.relative_to(templates)}:{number}"
        for path in templates.rglob("*.html")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "{#" in line and "#}" not in line[line.index("{#") :]
    ]
    assert not open_comments, "use {% comment %} for a comment of several lines"
