"""Over real sockets: a check's frame carries the follow-ups its reader may apply (the owner's
has them, another player's has none), and every refusal about a hidden roll is the same error
frame whatever the roll holds, as over REST."""

from __future__ import annotations

import pytest
from django.conf import settings as _settings
from django.utils import translation as _translation

from rolls.reads.visibility import HIDDEN_ROLL
from tests.live.conftest import SUCCESS

# The one refusal about a hidden roll, in the language a request without preferences gets.
with _translation.override(_settings.LANGUAGE_CODE):
    HIDDEN_TEXT = str(HIDDEN_ROLL)

pytestmark = pytest.mark.django_db(transaction=True)

HIDDEN = {
    "type": "error",
    "field": "check",
    "message": HIDDEN_TEXT,
    "code": "permission_denied",
}


async def test_frames_offer_follow_ups_to_whom_may_apply_them(server, table, feeds):
    alice = await feeds.open(server.url(table.id), table.tokens["alice"])
    boris = await feeds.open(server.url(table.id), table.tokens["boris"])
    gm = await feeds.open(server.url(table.id), table.tokens["gm"])
    seq = (await alice.command("roll", request=table.roll("alice")))["data"]["seq"]
    kinds = {}
    for name, feed in (("alice", alice), ("boris", boris), ("gm", gm)):
        [event] = [e for e in await feed.through(seq) if e["seq"] == seq]
        kinds[name] = [offer["kind"] for offer in event["follow_ups"]]
        assert [len(chain) for chain in event["dice_marks"][0]] == [1] * 5, name
    assert kinds == {"alice": ["dramatic_failure"], "boris": [], "gm": ["dramatic_failure"]}


async def test_refusals_about_hidden_rolls_are_one_error_frame(server, table, feeds):
    alice = await feeds.open(server.url(table.id), table.tokens["alice"])
    gm = await feeds.open(server.url(table.id), table.tokens["gm"])
    failed = (await alice.command("roll", request=table.roll("alice", "blind")))["data"]["seq"]
    succeeded = (await alice.command("roll", request=table.roll("alice", "blind", faces=SUCCESS)))[
        "data"
    ]["seq"]
    boris_private = (await gm.command("roll", request=table.roll("boris", "private")))["data"][
        "seq"
    ]
    answers = []
    for seq in (failed, succeeded, boris_private):
        for command, fields in (
            ("dramatic_failure", {}),
            ("fortune", {"die": 2, "value": 6}),
            ("extra_nice", {"count": 5}),
        ):
            answer = await alice.command(command, seq=seq, **fields)
            answer.pop("ref")
            answers.append(answer)
    assert answers == [HIDDEN] * len(answers)
    taken = await gm.command("dramatic_failure", seq=failed)
    assert taken["type"] == "result", taken
