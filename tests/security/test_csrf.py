"""Every form a browser posts carries Django's CSRF token and is refused without it: signing up,
signing in (login CSRF: another site must not sign a visitor in as its own account), signing out,
the language switch and the pages' own writes; the pages' scripts send the token as
X-CSRFToken, and a session without it writes nothing over the API."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

pytestmark = pytest.mark.django_db

HIDDEN_TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def browser() -> Client:
    return Client(enforce_csrf_checks=True)


def form_token(client: Client, path: str) -> str:
    page = client.get(path)
    assert page.status_code == 200
    return HIDDEN_TOKEN.search(page.content.decode())[1]


def test_signup_is_refused_without_the_form_s_csrf_token():
    client = browser()
    passphrase = "a-long-passphrase"
    fields = {"username": "newbie", "password1": passphrase, "password2": passphrase}
    assert client.post("/accounts/signup/", fields).status_code == 403
    assert not get_user_model().objects.filter(username="newbie").exists()
    token = form_token(client, "/accounts/signup/")
    assert client.post("/accounts/signup/", {**fields, "csrfmiddlewaretoken": token}).status_code \
        == 302  # fmt: skip
    assert get_user_model().objects.filter(username="newbie").exists()


def test_sign_in_is_refused_without_the_form_s_csrf_token(users):
    client = browser()
    credentials = {"username": "alice", "password": "alice-password"}
    refused = client.post("/accounts/login/", credentials)
    assert refused.status_code == 403 and "_auth_user_id" not in client.session
    token = form_token(client, "/accounts/login/")
    anonymous_secret = client.cookies["csrftoken"].value
    signed_in = client.post("/accounts/login/", {**credentials, "csrfmiddlewaretoken": token})
    assert signed_in.status_code == 302
    assert client.session["_auth_user_id"] == str(users["alice"].pk)
    # signing in rotates the secret: what a page read before the sign-in no longer works
    assert client.cookies["csrftoken"].value != anonymous_secret


def test_another_site_s_token_does_not_sign_in(users):
    """A token is bound to its cookie: a page elsewhere cannot bring one of its own."""
    other = browser()
    foreign = form_token(other, "/accounts/login/")
    client = browser()
    client.get("/accounts/login/")
    credentials = {"username": "alice", "password": "alice-password"}
    refused = client.post("/accounts/login/", {**credentials, "csrfmiddlewaretoken": foreign})
    assert refused.status_code == 403 and "_auth_user_id" not in client.session


def test_sign_out_and_the_language_switch_need_the_token(users):
    client = browser()
    client.force_login(users["alice"])
    assert client.post("/i18n/setlang/", {"language": "en"}).status_code == 403
    assert client.post("/accounts/logout/").status_code == 403
    assert "_auth_user_id" in client.session
    token = form_token(client, "/")
    assert client.post("/accounts/logout/", {"csrfmiddlewaretoken": token}).status_code == 200
    assert "_auth_user_id" not in client.session


def test_a_page_s_own_writes_need_the_token(users):
    client = browser()
    client.force_login(users["gm"])
    assert client.post("/", {"name": "Night table", "system": "cofd"}).status_code == 403
    assert client.post("/accounts/revoke-tokens/").status_code == 403


def test_the_session_writes_over_the_api_only_with_the_header(make_campaign, users):
    """The pages' fetches: a session cookie alone (another site's form or fetch) writes nothing."""
    campaign = make_campaign()
    client = browser()
    client.force_login(users["gm"])
    url = f"/api/campaigns/{campaign.pk}/sessions/"
    refused = client.post(url, {"title": "Friday"}, content_type="application/json")
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]
    token = form_token(client, "/")
    started = client.post(
        url, {"title": "Friday"}, content_type="application/json", HTTP_X_CSRFTOKEN=token
    )
    assert started.status_code == 201, started.content
