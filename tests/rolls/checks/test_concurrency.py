"""Stateful rules decided under concurrency: fifty requests at once, exactly one allowance."""

from __future__ import annotations

import threading
from collections import Counter

import pytest
from django.db import connection
from rest_framework.test import APIClient

from rolls.models import Check, RuleUse
from rolls.trust.stored_log import verify_campaigns

N = 50


def run_at_once(user, calls: list[tuple[str, dict]]) -> list[int | str]:
    """POST every (path, body) from its own thread, released together; return the statuses.
    Each is sent with its own Idempotency-Key and, like a real client, sent again with it while
    the answer is 503 "busy" (fifty writers on one campaign may outwait DB_LOCK_TIMEOUT_SECONDS
    on a slow machine)."""
    barrier = threading.Barrier(len(calls))
    statuses: list[int | str] = [0] * len(calls)

    def post(index: int, path: str, data: dict) -> None:
        client = APIClient()
        client.force_authenticate(user)
        try:
            barrier.wait()
            response = client.post(path, data, format="json", HTTP_IDEMPOTENCY_KEY=f"k{index}")
            while response.status_code == 503 and response.json()["code"] == "busy":
                response = client.post(path, data, format="json", HTTP_IDEMPOTENCY_KEY=f"k{index}")
            statuses[index] = response.status_code
            if response.status_code == 201:
                statuses[index] = response.json()["outcome"]
        except Exception as error:  # surfaced through the statuses assertion
            statuses[index] = repr(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=post, args=(i, *call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return statuses


@pytest.mark.django_db(transaction=True)
def test_fifty_concurrent_intentional_dramatic_failures_grant_exactly_one_beat(table, users):
    t = table("cofd")
    failures = [t.roll("alice", traits=["Wits"], faces=[2, 3, 4]) for _ in range(N)]
    calls = [(f"{t.url}/checks/{check['seq']}/dramatic-failure/", {}) for check in failures]
    statuses = run_at_once(users["alice"], calls)
    assert Counter(statuses) == {200: 1, 409: N - 1}
    assert t.character("alice").resources["beats"] == 1
    assert Check.objects.filter(campaign=t.campaign, outcome="dramatic_failure").count() == 1
    assert RuleUse.objects.filter(rule="intentional_dramatic_failure").count() == 1
    assert not verify_campaigns().problems


@pytest.mark.django_db(transaction=True)
def test_fifty_concurrent_botches_use_exactly_one_free_botch(table, users):
    t = table("storyteller")
    botch = {"character": str(t.characters["alice"].pk), "traits": ["Mental"], "faces": [1, 3]}
    statuses = run_at_once(users["alice"], [(f"{t.url}/checks/", botch)] * N)
    assert Counter(statuses) == {"failure": 1, "botch": N - 1}
    assert RuleUse.objects.filter(rule="free_botch").count() == 1
    seqs = sorted(Check.objects.filter(campaign=t.campaign).values_list("seq", flat=True))
    assert seqs == list(range(seqs[0], seqs[0] + N)), "no gap, no duplicate"
    assert not verify_campaigns().problems
