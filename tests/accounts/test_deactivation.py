"""Deactivating an account in the admin (unticking *active*, or the action) ends what it is
signed in with at once: its API token is refused and stays dead if the account is reactivated,
and its open live connections close (4401)."""

from __future__ import annotations

import asyncio

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.accounts.conftest import admin_post, staff_client
from tests.live.conftest import WAIT, in_db, open_feed
from tests.live.test_live_auth import close_code
from tests.security.test_live_security import _closed_with

CHANGELIST = "/admin/auth/user/"


def _unticked(client: Client, user) -> dict:
    """The user's change form as the staff member submits it: everything as it was, but
    *active* unticked."""
    form = client.get(f"{CHANGELIST}{user.pk}/change/").context["adminform"].form
    data: dict = {}
    for name, field in form.fields.items():
        value = form[name].value()
        if name == "is_active" or value in (None, False, "", []):
            continue
        if hasattr(field.widget, "widgets"):  # a date and a time
            parts = field.widget.decompress(value)
            data.update({f"{name}_{i}": part for i, part in enumerate(parts) if part})
        else:
            data[name] = value
    return data


def _untick_active(client: Client, user) -> None:
    answer = client.post(f"{CHANGELIST}{user.pk}/change/", _unticked(client, user))
    assert answer.status_code == 302, answer.context["adminform"].form.errors


def _token_client(user) -> tuple[APIClient, str]:
    key = Token.objects.get_or_create(user=user)[0].key
    client = APIClient(HTTP_ACCEPT_LANGUAGE="en")
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/campaigns/").status_code == 200
    return client, key


@pytest.mark.django_db
def test_a_deactivated_account_s_token_is_refused_and_stays_dead_after_reactivation(users):
    alice = users["alice"]
    api, _key = _token_client(alice)
    _untick_active(staff_client(), alice)
    assert api.get("/api/campaigns/").status_code == 401
    alice.refresh_from_db()
    alice.is_active = True  # a staff member changes their mind: a leaked token stays dead
    alice.save()
    answer = api.get("/api/campaigns/")
    assert answer.status_code == 401 and answer.json()["detail"] == "Invalid token."


@pytest.mark.django_db
def test_the_admin_action_deactivates_each_selected_account(users):
    tokens = {name: _token_client(users[name])[0] for name in ("alice", "boris", "olga")}
    answer = staff_client().post(
        CHANGELIST,
        {
            "action": "deactivate_selected",
            "_selected_action": [users["alice"].pk, users["boris"].pk],
        },
        follow=True,
    )
    assert "2 users deactivated." in answer.content.decode()
    active = dict(get_user_model().objects.values_list("username", "is_active"))
    assert (active["alice"], active["boris"], active["olga"]) == (False, False, True)
    users["alice"].is_active = users["boris"].is_active = True
    get_user_model().objects.filter(username__in=["alice", "boris"]).update(is_active=True)
    assert [tokens[n].get("/api/campaigns/").status_code for n in tokens] == [401, 401, 200]


@pytest.mark.django_db(transaction=True)
async def test_deactivating_closes_the_account_s_open_sockets(admin_server, table):
    root = await in_db(staff_client)
    form = await in_db(_unticked, root, table.users["alice"])
    alice = await open_feed(admin_server.url(table.id), table.tokens["alice"])
    boris = await open_feed(admin_server.url(table.id), table.tokens["boris"])
    change = f"{CHANGELIST}{table.users['alice'].pk}/change/"
    saved = await admin_post(admin_server, root, change, form)
    assert saved.status_code == 302, saved.text[:2000]
    assert await asyncio.wait_for(_closed_with(alice), WAIT) == 4401
    assert await close_code(admin_server.url(table.id), token=table.tokens["alice"]) == 4401
    assert (await boris.command("ping"))["type"] == "pong"  # nobody else is disturbed
    await boris.close()
