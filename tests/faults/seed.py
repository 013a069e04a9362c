"""Run in a child process against the private cluster (DATABASE_URL): migrate once, then set up
campaigns for a fault test and print their ids and the players' API tokens as JSON.

    python -m tests.faults.seed migrate
    python -m tests.faults.seed table 2     # two CofD campaigns, manual dice, an open session
"""

from __future__ import annotations

import json
import os
import sys

SHEET = {"attributes": {"Wits": 3}, "skills": {"Occult": 2}}


def main(argv: list[str]) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    if argv[0] == "migrate":
        call_command("migrate", verbosity=0)
        return
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from campaign import services

    user_model = get_user_model()
    gm, _ = user_model.objects.get_or_create(username="gm")
    alice, _ = user_model.objects.get_or_create(username="alice")
    tables = []
    for number in range(int(argv[1])):
        campaign = services.create_campaign(
            name=f"Faults {number}", system="cofd", created_by=gm, options={"manual_dice": True}
        )
        services.join_campaign(invite_code=campaign.invite_code, user=alice)
        services.start_session(campaign=campaign, actor=gm)
        hero = services.create_character(campaign=campaign, actor=alice, name="Hero", traits=SHEET)
        tables.append({"id": campaign.pk, "character": str(hero.pk)})
    tokens = {u.username: Token.objects.get_or_create(user=u)[0].key for u in (gm, alice)}
    print(json.dumps({"tables": tables, "tokens": tokens}))


if __name__ == "__main__":
    main(sys.argv[1:])
