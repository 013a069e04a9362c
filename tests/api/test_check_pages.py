"""GET …/checks/ pages through the log both ways: `after` (oldest first, for a client catching
up) and `before` (the page just below a seq, for a feed's "Show older rolls"), each as the
reader may see it."""

from __future__ import annotations

from tests.api.conftest import World, assert_refusal


def seqs(response) -> list[int]:
    assert response.status_code == 200, response.content
    return [check["seq"] for check in response.json()]


def test_before_gives_the_page_just_below_oldest_first(world: World) -> None:
    gm = world.client("gm")
    everything = seqs(gm.get(world.url("checks/")))
    assert len(everything) == 5
    newest = everything[-1]
    assert seqs(gm.get(world.url(f"checks/?before={newest}&limit=2"))) == everything[-3:-1]
    assert seqs(gm.get(world.url(f"checks/?before={everything[0]}"))) == []
    assert seqs(gm.get(world.url(f"checks/?after={everything[0]}&limit=2"))) == everything[1:3]


def test_before_shows_a_player_only_what_they_may_see(world: World) -> None:
    blind = world.checks["alice_blind"]
    page = world.client("boris").get(world.url(f"checks/?before={blind + 1}"))
    assert page.status_code == 200
    hidden = next(check for check in page.json() if check["seq"] == blind)
    assert hidden["redacted"] is True and "data" not in hidden


def test_before_must_be_a_number(world: World) -> None:
    assert_refusal(world.client("gm").get(world.url("checks/?before=soon")), 400, "before")
