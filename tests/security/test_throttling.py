"""Guessing passwords stops well before the 30th try, on the token endpoint and on the login
form, per account and per address; writes per user are throttled far above a real table's pace;
weak passwords are refused."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient


def _token_try(password: str, username: str = "alice", address: str = "10.0.0.1"):
    return APIClient().post(
        "/api/auth/token/",
        {"username": username, "password": password},
        format="json",
        REMOTE_ADDR=address,
    )


def test_the_token_endpoint_locks_an_account_before_the_30th_wrong_password(users):
    answers = [_token_try(f"guess-{n}").status_code for n in range(30)]
    assert 429 in answers
    first = answers.index(429)
    assert first < 29 and set(answers[:first]) == {400}
    locked = _token_try("alice-password", address="10.0.0.2")  # the right one, from elsewhere
    assert locked.status_code == 429
    assert int(locked["Retry-After"]) > 0
    assert locked.json()["code"] == "throttled"


def test_one_address_is_locked_whatever_accounts_it_tries(users):
    answers = [
        _token_try("wrong", username=f"user{n}", address="10.0.0.3").status_code for n in range(30)
    ]
    assert 429 in answers and answers.index(429) < 29
    assert _token_try("alice-password", address="10.0.0.3").status_code == 429
    assert _token_try("alice-password", address="10.0.0.4").status_code == 200


def test_the_login_form_locks_too(users):
    client = Client(REMOTE_ADDR="10.0.0.5")
    answers = [
        client.post("/accounts/login/", {"username": "bob", "password": f"x{n}"}).status_code
        for n in range(30)
    ]
    assert 429 in answers and answers.index(429) < 29
    get_user_model().objects.create_user("bob", password="a fine passphrase")
    locked = client.post("/accounts/login/", {"username": "bob", "password": "a fine passphrase"})
    assert locked.status_code == 429 and "Retry-After" in locked
    assert "_auth_user_id" not in client.session


def test_a_success_before_the_limit_starts_the_account_count_again(users):
    for round in range(3):  # 15 typos for alice in all, from three places, each time she got in
        address = f"10.0.1.{round}"
        for n in range(5):
            assert _token_try(f"typo-{n}", address=address).status_code == 400
        assert _token_try("alice-password", address=address).status_code == 200


@pytest.mark.parametrize(
    "password", ["12345678", "password", "alice-signs-up", "        ", "short", "aaaabbbb"]
)
def test_weak_passwords_are_refused_at_sign_up(db, password):
    answer = Client().post(
        "/accounts/signup/",
        {"username": "alice-signs-up", "password1": password, "password2": password},
    )
    assert answer.status_code == 200  # the form again, with the reason
    assert not get_user_model().objects.filter(username="alice-signs-up").exists()


def test_a_good_password_is_accepted_at_sign_up(db):
    answer = Client().post(
        "/accounts/signup/",
        {"username": "carol", "password1": "violet lantern 42", "password2": "violet lantern 42"},
    )
    assert answer.status_code == 302


def test_writes_past_the_rate_are_429_with_retry_after(build_world, settings):
    settings.WRITE_RATE = "5/min"
    world = build_world("cofd")
    client = world.client("alice")
    roll = {"character": str(world.characters["alice"].pk), "traits": ["Wits"]}
    answers = [client.post(world.url("checks/"), roll, format="json") for _ in range(7)]
    assert [a.status_code for a in answers[:5]] == [201] * 5
    assert answers[6].status_code == 429 and int(answers[6]["Retry-After"]) > 0
    assert answers[6].json()["code"] == "throttled"
    # Another user is not held back by alice's pace; reads and odds are never throttled.
    boris = {"character": str(world.characters["boris"].pk), "traits": ["Wits"]}
    assert world.client("boris").post(world.url("checks/"), boris, format="json").status_code == 201
    assert client.get(world.url("checks/")).status_code == 200
    assert client.post(world.url("checks/odds/"), roll, format="json").status_code == 200
