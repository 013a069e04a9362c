"""The derived faces are fair: uniform per die size, and reproducible by the documented recipe."""

from __future__ import annotations

import hashlib
import hmac
from collections import Counter

import pytest
from scipy.stats import chisquare

from eventlog.models import Event
from rolls.systems import KeyedDice, roll_key

SEED = bytes(range(32))  # fixed, so the test is deterministic
DRAWS_PER_SIDE = 3_000  # expected count of each face


def faces_like_the_server(sides: int, per_event: int = 5) -> list[int]:
    """Draws as events make them: a fresh key per roll, a fresh source per seq, a few faces."""
    faces: list[int] = []
    seq = 0
    while len(faces) < DRAWS_PER_SIDE * sides:
        seq += 1
        dice = KeyedDice(roll_key(SEED, seq), 42, seq, "00ff")
        faces += [dice.roll(sides) for _ in range(per_event)]
    return faces


@pytest.mark.parametrize("sides", [2, 3, 6, 7, 10, 20, 300])
def test_derived_faces_are_uniform(sides):
    counts = Counter(faces_like_the_server(sides))
    assert set(counts) == set(range(1, sides + 1)), "every face occurs, nothing else does"
    observed = [counts[face] for face in range(1, sides + 1)]
    assert chisquare(observed).pvalue > 0.001


def test_a_logged_roll_reproduces_by_the_recipe_in_docs_verification(play):
    """Recompute a real roll's faces by hand from what its event discloses: hashlib only."""
    campaign = play("d6pool")
    event = Event.objects.get(campaign=campaign, type="check.rolled", payload__label="in the open")
    payload = event.payload
    key = bytes.fromhex(payload["dice_key"]["key"])
    previous = (
        Event.objects.filter(campaign=campaign, seq__lt=event.seq, type="check.rolled")
        .order_by("-seq")
        .first()
    )
    started = Event.objects.get(campaign=campaign, type="session.started")
    commitment = previous.payload["next_key"] if previous else started.payload["key_commitment"]
    assert hashlib.sha256(key).hexdigest() == commitment  # committed before the roll
    message = f"{campaign.pk}|{event.seq}|{payload['client_seed'] or ''}".encode()
    stream = hashlib.shake_256(hmac.new(key, message, hashlib.sha256).digest()).digest(256)
    faces = [b % 6 + 1 for b in stream if b < 252][: len(payload["rolls"][0]["faces"])]
    assert faces == payload["rolls"][0]["faces"]
