"""The pages' plain form posts write at most once: a second submission of the same form (a
double click, a browser's retry after a lost answer) writes nothing and lands where the first
one did (pages/once.py, through campaign/idempotency.py)."""

from __future__ import annotations

import re
import threading

import pytest
from django.db import connection
from django.test import Client

from campaign.models import Campaign, Membership
from webhooks.models import Webhook

TOKEN = re.compile(r'name="form_token" value="([0-9a-f]{32})"')


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _token(client: Client, path: str) -> str:
    page = client.get(path)
    assert page.status_code == 200
    return TOKEN.search(page.content.decode())[1]


@pytest.mark.django_db
def test_every_rendering_of_a_form_carries_a_fresh_token(users):
    client = _client(users["gm"])
    assert _token(client, "/") != _token(client, "/")


@pytest.mark.django_db
def test_a_double_submitted_new_campaign_creates_one(users):
    client = _client(users["gm"])
    form = {"name": "Night table", "system": "cofd", "form_token": _token(client, "/")}
    first, again = client.post("/", form), client.post("/", form)
    assert first.status_code == again.status_code == 302
    assert first["Location"] == again["Location"]
    assert Campaign.objects.filter(name="Night table").count() == 1


@pytest.mark.django_db
def test_the_same_token_with_other_fields_is_refused_and_writes_nothing(users):
    client = _client(users["gm"])
    token = _token(client, "/")
    client.post("/", {"name": "Night table", "system": "cofd", "form_token": token})
    refused = client.post("/", {"name": "Day table", "system": "cofd", "form_token": token})
    assert refused.status_code == 422
    assert not Campaign.objects.filter(name="Day table").exists()


@pytest.mark.django_db
def test_a_refused_form_is_not_kept_so_its_corrected_retry_writes(users):
    client = _client(users["gm"])
    token = _token(client, "/")
    refused = client.post("/", {"name": "x" * 101, "system": "cofd", "form_token": token})
    assert refused.status_code == 200 and b"form_token" in refused.content  # the form again
    assert client.post("/", {"name": "Fixed", "system": "cofd", "form_token": token}).status_code
    assert Campaign.objects.filter(name="Fixed").count() == 1


@pytest.mark.django_db
def test_a_token_is_the_users_own(users):
    """Another user's form token is no key to their answer."""
    gm, alice = _client(users["gm"]), _client(users["alice"])
    form = {"name": "Night table", "system": "cofd", "form_token": _token(gm, "/")}
    gm.post("/", form)
    alice.post("/", form)
    assert Campaign.objects.filter(name="Night table").count() == 2


@pytest.mark.django_db
def test_a_forms_bad_token_is_a_400(users):
    client = _client(users["gm"])
    answer = client.post("/", {"name": "T", "system": "cofd", "form_token": "x" * 300})
    assert answer.status_code == 400 and b"form_token" in answer.content
    assert not Campaign.objects.filter(name="T").exists()


@pytest.mark.django_db
def test_joining_twice_with_one_form_joins_once(make_campaign, users):
    campaign = make_campaign()
    newcomer = users["stranger"]
    client = _client(newcomer)
    path = f"/join/{campaign.invite_code}/"
    form = {"form_token": _token(client, path)}
    first, again = client.post(path, form, follow=True), client.post(path, form, follow=True)
    play = f"/campaigns/{campaign.pk}/play/"
    assert first.redirect_chain[-1][0] == again.redirect_chain[-1][0] == play
    assert Membership.objects.filter(campaign=campaign, user=newcomer).count() == 1


@pytest.mark.django_db
def test_a_webhook_added_twice_is_added_once_and_its_secret_shown_again(
    make_campaign, users, settings
):
    settings.WEBHOOK_ALLOW_PRIVATE = True
    settings.WEBHOOKS_IN_PROCESS = False
    campaign = make_campaign()
    gm = _client(users["gm"])
    page = f"/campaigns/{campaign.pk}/webhooks/"
    form = {"url": "http://127.0.0.1:9/hook", "format": "json", "form_token": _token(gm, page)}
    gm.post(page, form)  # its answer lost (the browser retries): the secret not seen yet
    retried = gm.post(page, form, follow=True)
    hook = Webhook.objects.get(campaign=campaign)
    assert hook.secret in retried.content.decode()
    removal = {"delete": str(hook.pk), "form_token": _token(gm, page)}
    assert gm.post(page, removal).status_code == gm.post(page, removal).status_code == 302
    assert not Webhook.objects.filter(campaign=campaign).exists()


@pytest.mark.django_db(transaction=True)
def test_two_submissions_at_the_same_moment_create_one_campaign(users):
    """A real double click: both posts in flight at once."""
    client = _client(users["gm"])
    form = {"name": "Race table", "system": "cofd", "form_token": _token(client, "/")}
    start, answers = threading.Barrier(2), []

    def submit() -> None:
        try:
            start.wait()
            answers.append(client.post("/", form))
        finally:
            connection.close()

    threads = [threading.Thread(target=submit) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [answer.status_code for answer in answers] == [302, 302]
    assert answers[0]["Location"] == answers[1]["Location"]
    assert Campaign.objects.filter(name="Race table").count() == 1


@pytest.mark.django_db
def test_a_form_token_is_not_a_rest_key_of_the_same_text(users):
    """Form tokens are keys of their own channel (as the socket's are): a REST write whose
    Idempotency-Key happens to read "form:<token>" is its own write, not refused as the
    form's key reused."""
    from rest_framework.test import APIClient

    client = _client(users["gm"])
    token = _token(client, "/")
    client.post("/", {"name": "Night table", "system": "cofd", "form_token": token})
    api = APIClient()
    api.force_authenticate(users["gm"])
    made = api.post(
        "/api/campaigns/",
        {"name": "Day table", "system": "cofd"},
        format="json",
        HTTP_IDEMPOTENCY_KEY=f"form:{token}",
    )
    assert made.status_code == 201, made.content
    assert Campaign.objects.filter(name__in=["Night table", "Day table"]).count() == 2


@pytest.mark.django_db
def test_the_longest_form_token_fits_the_stored_key(users):
    """The channel's prefix counts in the stored key's 255 characters: the longest token the
    form takes is stored whole (it was stored 5 characters too long for the column)."""
    from campaign.models import IdempotentRequest

    client = _client(users["gm"])
    longest = "t" * (255 - len("form\x1f"))
    made = client.post("/", {"name": "Long", "system": "cofd", "form_token": longest})
    assert made.status_code == 302
    assert all(len(key) <= 255 for key in IdempotentRequest.objects.values_list("key", flat=True))
    refused = client.post("/", {"name": "Longer", "system": "cofd", "form_token": longest + "t"})
    assert refused.status_code == 400 and b"form_token" in refused.content
