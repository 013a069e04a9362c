"""A NUL character in a name or a title is refused by the service itself (400 naming the field),
whoever calls it: PostgreSQL's jsonb cannot hold one, so it would otherwise fail as a 500 when
the event is appended (Hypothesis found it renaming a campaign)."""

from __future__ import annotations

import pytest

from campaign import services
from campaign.errors import InvalidInput


@pytest.mark.django_db
def test_names_and_titles_with_nul_are_refused_and_nothing_is_written(users):
    gm = users["gm"]
    with pytest.raises(InvalidInput) as refused:
        services.create_campaign(name="Bad\x00name", system="cofd", created_by=gm)
    assert refused.value.field == "name"
    campaign = services.create_campaign(name="Good", system="cofd", created_by=gm)
    head = campaign.head_seq
    with pytest.raises(InvalidInput) as refused:
        services.rename_campaign(campaign=campaign, actor=gm, name="a\x00")
    assert refused.value.field == "name"
    with pytest.raises(InvalidInput) as refused:
        services.start_session(campaign=campaign, actor=gm, title="Night\x00")
    assert refused.value.field == "title"
    campaign.refresh_from_db()
    assert campaign.head_seq == head and campaign.name == "Good"
