"""The derived faces are fair: uniform per die size, and reproducible by the documented recipe."""

from __future__ import annotations

import hashlib
import hmac
from collections import Counter

import pytest
from scipy.stats import chisquare

from campaign.models import Event, SessionSecret
from rolls.systems import HmacDice

SEED = bytes(range(32))  # fixed, so the test is deterministic
DRAWS_PER_SIDE = 3_000  # expected count of each face


def faces_like_the_server(sides: int, per_event: int = 5) -> list[int]:
    """Draws as events make them: a fresh source per seq, a few faces each."""
    faces: list[int] = []
    seq = 0
    while len(faces) < DRAWS_PER_SIDE * sides:
        seq += 1
        dice = HmacDice(SEED, "42", seq)
        faces += [dice.roll(sides) for _ in range(per_event)]
    return faces


@pytest.mark.parametrize("sides", [2, 3, 6, 7, 10, 20])
def test_derived_faces_are_uniform(sides):
    counts = Counter(faces_like_the_server(sides))
    assert set(counts) == set(range(1, sides + 1)), "every face occurs, nothing else does"
    observed = [counts[face] for face in range(1, sides + 1)]
    assert chisquare(observed).pvalue > 0.001


def test_rejected_attempts_consume_a_counter(monkeypatch):
    """A verifier must count rejected attempts too; 2**64 - 1 is above a d3's limit."""
    attempts: list[int] = []
    values = iter([2**64 - 1, 5])

    def attempt(self, counter: int) -> int:
        attempts.append(counter)
        return next(values)

    monkeypatch.setattr(HmacDice, "_attempt", attempt)
    dice = HmacDice(SEED, "42", 1)
    assert dice.roll(3) == 5 % 3 + 1
    assert attempts == [0, 1] and dice.counter == 2


def test_a_logged_roll_reproduces_by_the_recipe_in_docs_verification(play):
    """Recompute a real roll's faces by hand, with hmac and the message format only."""
    campaign = play("d6pool")
    event = Event.objects.get(campaign=campaign, type="check.rolled", payload__label="in the open")
    seed = bytes(SessionSecret.objects.get(session_id=event.session_id).seed)
    ended = Event.objects.get(campaign=campaign, type="session.ended")
    assert ended.payload["seed"] == seed.hex()
    faces, counter = [], 0
    while len(faces) < len(event.payload["rolls"][0]["faces"]):
        message = f"{campaign.pk}|{event.seq}|{counter}".encode()
        x = int.from_bytes(hmac.new(seed, message, hashlib.sha256).digest()[:8], "big")
        counter += 1
        if x < 2**64 - 2**64 % 6:
            faces.append(x % 6 + 1)
    assert faces == event.payload["rolls"][0]["faces"]
