"""A socket write waits for its campaign's turn on the event loop (WRITERS_PER_CAMPAIGN at a
time), and a process keeps no turns for campaigns nobody is writing to."""

from __future__ import annotations

import asyncio

from rolls.live import consumers


def test_a_campaigns_turns_admit_its_writers_a_few_at_a_time_and_are_dropped_after(settings):
    settings.WRITERS_PER_CAMPAIGN = 2
    inside: list[int] = []
    most = 0

    async def write(campaign_id: int) -> None:
        nonlocal most
        async with consumers._writer_turn(campaign_id):
            inside.append(campaign_id)
            most = max(most, inside.count(1))
            await asyncio.sleep(0.01)
            inside.remove(campaign_id)

    async def play() -> None:
        await asyncio.gather(*(write(1) for _ in range(5)), write(2))

    asyncio.run(play())
    assert most == 2  # never more than the campaign's writers at once
    assert consumers._turns == {}
