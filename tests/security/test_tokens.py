"""API tokens can be revoked, and are: by the owner (API and home page), at sign-out and at a
password change. Socket tickets open one socket, once, for a minute."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework import authentication as drf
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request
from rest_framework.test import APIClient, APIRequestFactory

from accounts.authentication import TokenAuthentication
from accounts.models import SocketTicket
from accounts.tickets import spend_ticket
from campaign.services import create_campaign


def _with_token(users, name: str = "alice") -> tuple[APIClient, str]:
    key = Token.objects.create(user=users[name]).key
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/campaigns/").status_code == 200
    return client, key


def _refused(client: APIClient) -> bool:
    answer = client.get("/api/campaigns/")
    return answer.status_code == 401 and answer["WWW-Authenticate"] == "Token"


def test_a_password_change_revokes_the_token(users):
    client, _ = _with_token(users)
    page = Client()
    page.force_login(users["alice"])
    changed = page.post(
        "/accounts/password_change/",
        {
            "old_password": "alice-password",
            "new_password1": "a brand new passphrase",
            "new_password2": "a brand new passphrase",
        },
    )
    assert changed.status_code == 302
    assert _refused(client)


def test_set_password_anywhere_revokes_too(users):
    client, _ = _with_token(users)
    user = get_user_model().objects.get(username="alice")
    user.set_password("changed by an admin, say")
    user.save()
    assert _refused(client)


def test_saving_a_user_without_a_new_password_keeps_the_token(users):
    client, _ = _with_token(users)
    user = get_user_model().objects.get(username="alice")
    user.first_name = "Alice"
    user.save()
    assert not _refused(client)


def test_signing_out_revokes_the_token(users):
    client, _ = _with_token(users)
    page = Client()
    page.force_login(users["alice"])
    assert page.post("/accounts/logout/").status_code in (200, 302)
    assert _refused(client)


def test_the_owner_revokes_over_the_api_and_on_the_home_page(users):
    client, _ = _with_token(users)
    assert client.delete("/api/auth/token/").status_code == 204
    assert _refused(client)
    client, _ = _with_token(users)
    page = Client()
    page.force_login(users["alice"])
    home = page.get("/")
    assert b'action="/accounts/revoke-tokens/"' in home.content
    assert page.post("/accounts/revoke-tokens/").status_code == 302
    assert _refused(client)
    assert page.get("/").status_code == 200, "the page's own session goes on"


def test_a_new_token_after_revocation_is_a_different_one(users):
    _, old = _with_token(users)
    APIClient(HTTP_AUTHORIZATION=f"Token {old}").delete("/api/auth/token/")
    new = APIClient().post(
        "/api/auth/token/", {"username": "alice", "password": "alice-password"}, format="json"
    )
    assert new.status_code == 200 and new.json()["token"] != old


def test_a_socket_ticket_is_single_use_and_short_lived(users):
    client, _ = _with_token(users)
    answer = client.post("/api/auth/socket-ticket/")
    assert answer.status_code == 201 and 0 < answer.json()["expires_in"] <= 60
    ticket = answer.json()["ticket"]
    assert not SocketTicket.objects.filter(digest=ticket).exists(), "only a digest is stored"
    assert spend_ticket(ticket) == users["alice"]
    assert spend_ticket(ticket) is None, "single use"
    late = client.post("/api/auth/socket-ticket/").json()["ticket"]
    SocketTicket.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    assert spend_ticket(late) is None
    assert spend_ticket("made-up") is None


def test_revocation_voids_unspent_tickets(users):
    client, _ = _with_token(users)
    ticket = client.post("/api/auth/socket-ticket/").json()["ticket"]
    client.delete("/api/auth/token/")
    assert spend_ticket(ticket) is None


def test_a_token_names_its_user_and_nothing_else_gets_in(users):
    create_campaign(name="Boris's table", system="cofd", created_by=users["boris"])
    client, _ = _with_token(users, "boris")
    assert [c["name"] for c in client.get("/api/campaigns/").json()] == ["Boris's table"]
    assert _with_token(users, "alice")[0].get("/api/campaigns/").json() == []
    stranger = APIClient(HTTP_ACCEPT_LANGUAGE="en")
    stranger.credentials(HTTP_AUTHORIZATION="Token " + "0" * 40)
    answer = stranger.get("/api/campaigns/")
    assert answer.status_code == 401 and answer.json()["detail"] == "Invalid token."
    assert answer["WWW-Authenticate"] == "Token"
    users["boris"].is_active = False
    users["boris"].save()
    answer = client.get("/api/campaigns/", HTTP_ACCEPT_LANGUAGE="en")
    assert answer.status_code == 401 and answer.json()["detail"] == "User inactive or deleted."


def test_no_credentials_is_401_naming_the_token_scheme_and_a_session_still_signs_in(users):
    anonymous = APIClient(HTTP_ACCEPT_LANGUAGE="en")
    for path in ("/api/campaigns/", "/api/auth/socket-ticket/"):
        answer = anonymous.post(path) if "ticket" in path else anonymous.get(path)
        assert answer.status_code == 401 and answer["WWW-Authenticate"] == "Token", path
        assert answer.json()["code"] == "not_authenticated"
    # a bad token is refused even where no sign-in is needed, and even beside a valid session
    page = Client(HTTP_AUTHORIZATION="Token " + "0" * 40)
    page.force_login(users["alice"])
    for path in ("/api/rules/", "/api/campaigns/"):
        answer = page.get(path)
        assert answer.status_code == 401 and answer.json()["code"] == "authentication_failed"
    # the pages' own reads: the session cookie alone
    page = Client()
    page.force_login(users["alice"])
    assert page.get("/api/campaigns/").status_code == 200


AUTHORIZATION_WORDS = st.sampled_from(
    ["Token", "token", "TOKEN", "Bearer", "Basic", "Tökén", "", " ", "\t", "\xa0", "\x85"]
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    words=st.lists(
        st.one_of(AUTHORIZATION_WORDS, st.text(st.characters(max_codepoint=255), max_size=45)),
        max_size=4,
    ),
    joiners=st.lists(st.sampled_from([" ", "  ", "\t", "\xa0", ""]), min_size=3, max_size=3),
    real=st.booleans(),
)
def test_any_authorization_header_is_answered_as_drf_answers_it(users, words, joiners, real):
    """The token class reads the header from WSGI's environ, not DRF's `request.headers`: for
    every header (a real key, a wrong one, other schemes, whitespace DRF does not split on) it
    answers as DRF's own class does: the same user, no answer, or the same refusal."""
    token, _ = Token.objects.get_or_create(user=users["alice"])
    if real:
        words = ["Token", token.key, *words][:4]
    header = "".join(word + joiner for word, joiner in zip(words, [*joiners, ""], strict=False))
    request = Request(APIRequestFactory().get("/api/campaigns/", HTTP_AUTHORIZATION=header))
    assert _answer(TokenAuthentication(), request) == _answer(drf.TokenAuthentication(), request)


def _answer(authentication, request) -> object:
    try:
        found = authentication.authenticate(request)
    except AuthenticationFailed as refused:
        return ("refused", str(refused.detail))
    return None if found is None else found[0].pk
