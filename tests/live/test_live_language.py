"""Error frames speak the language of the page that opened the socket (its language cookie,
else Accept-Language), like the REST API."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

CYRILLIC = re.compile("[\u0400-\u04ff]")


@pytest.mark.parametrize(
    "headers",
    [{"Accept-Language": "ru"}, {"Cookie": "django_language=ru", "Accept-Language": "en"}],
    ids=["accept-language", "cookie"],
)
async def test_error_frames_in_russian(server, table, feeds, headers):
    alice = await feeds.open(server.url(table.id), table.tokens["alice"], headers=headers)
    await alice.send('{"type": "shout", "ref": "x"}')
    unknown = await alice.until(lambda frame: frame["type"] == "error")
    assert unknown["field"] == "type" and CYRILLIC.search(unknown["message"]), unknown
    refused = await alice.command("reveal", seq=1)
    assert refused["field"] == "role" and CYRILLIC.search(refused["message"]), refused
    sheet = await alice.command("roll", request={"traits": ["Telepathy"]})
    assert sheet["type"] == "error" and CYRILLIC.search(sheet["message"]), sheet


async def test_error_frames_in_english_when_asked(server, table, feeds):
    alice = await feeds.open(
        server.url(table.id), table.tokens["alice"], headers={"Accept-Language": "en"}
    )
    refused = await alice.command("reveal", seq=1)
    assert refused["message"] == "only a game master of this campaign may do this"
