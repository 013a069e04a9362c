"""The demo table that `make run` loads once: a GM, two players, one campaign per game system."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import translation
from django.utils.translation import gettext_lazy as _

from campaign import services
from campaign.models import Campaign

DEMO_USERS = {"gm": "gm-demo-pass", "alice": "alice-demo-pass", "boris": "boris-demo-pass"}

# (campaign name, system, {player: (character name, traits, resources)})
DEMO_CAMPAIGNS = [
    (
        _("Demo: Dust and Revolvers"),
        "d6pool",
        {
            "alice": (
                "Cowboy John",
                {
                    "attributes": {"Reaction": 4, "Strength": 3},
                    "abilities": {"Shooting": 4, "Riding": 2},
                },
                {},
            ),
            "boris": (
                "Doc Hollis",
                {
                    "attributes": {"Reaction": 2, "Wits": 4},
                    "abilities": {"Medicine": 3, "Gambling": 3},
                },
                {},
            ),
        },
    ),
    (
        _("Demo: Chicago by Night"),
        "storyteller",
        {
            "alice": (
                "Veronica",
                {
                    "attributes": {"Physical": 2, "Social": 3, "Mental": 3},
                    "abilities": {"Lockpicking": 4, "Alertness": 2},
                },
                {"willpower": 5},
            ),
            "boris": (
                "Hall",
                {
                    "attributes": {"Physical": 3, "Social": 1, "Mental": 2},
                    "abilities": {"Brawl": 4, "Dodge": 3},
                },
                {"willpower": 4},
            ),
        },
    ),
    (
        _("Demo: The Frontier"),
        "nice_damnit",
        {
            "alice": (
                "Calamity Ann",
                {
                    "areas": {"Firearms": 2, "Riding": 1},
                    "skills": {"Quick draw": "pro_1", "Shooting from horseback": "perk"},
                },
                {},
            ),
            "boris": (
                "Silent Pete",
                {"areas": {"Athletics": 2, "Survival": 3}, "skills": {"Tracking": "novice_2"}},
                {},
            ),
        },
    ),
    (
        _("Demo: Ceres Station"),
        "age",
        {
            "alice": (
                "Naomi",
                {
                    "abilities": {"Dexterity": 3, "Intelligence": 3, "Communication": 1},
                    "focuses": {"Dexterity": ["Acrobatics"], "Intelligence": ["Engineering"]},
                },
                {"fortune": 15},
            ),
            "boris": (
                "Amos",
                {
                    "abilities": {"Fighting": 3, "Strength": 2, "Constitution": 2},
                    "focuses": {"Fighting": ["Brawling"]},
                },
                {"fortune": 12},
            ),
        },
    ),
    (
        _("Demo: Innocents of Ashwood"),
        "cofd",
        {
            "alice": (
                "Marianne",
                {
                    "attributes": {"Manipulation": 3, "Wits": 3, "Dexterity": 2},
                    "skills": {"Subterfuge": 2, "Investigation": 3, "Athletics": 1},
                    "specialties": {"Investigation": ["Crime scenes"]},
                },
                {"beats": 0, "willpower": 5},
            ),
            "boris": (
                "Theo",
                {
                    "attributes": {"Strength": 3, "Stamina": 3, "Dexterity": 2},
                    "skills": {"Brawl": 3, "Athletics": 2},
                    "specialties": {},
                },
                {"beats": 0, "willpower": 4},
            ),
        },
    ),
]


@transaction.atomic
def load_demo() -> list[str]:
    """Create the demo users and campaigns unless they exist; return lines to print. Names and
    titles are written in the site's language (LANGUAGE_CODE): a Russian site gets a Russian
    demo."""
    with translation.override(settings.LANGUAGE_CODE):
        return _load_demo()


def _load_demo() -> list[str]:
    User = get_user_model()
    users = {}
    for username, password in DEMO_USERS.items():
        user, created = User.objects.get_or_create(username=username)
        if created:
            user.set_password(password)
            user.is_staff = user.is_superuser = username == "gm"
            user.save()
        users[username] = user
    created_campaigns = 0
    for lazy_name, system, characters in DEMO_CAMPAIGNS:
        name = str(lazy_name)
        if Campaign.objects.filter(name=name).exists():
            continue
        created_campaigns += 1
        campaign = services.create_campaign(name=name, system=system, created_by=users["gm"])
        for username, (character_name, traits, resources) in characters.items():
            services.join_campaign(invite_code=campaign.invite_code, user=users[username])
            services.create_character(
                campaign=campaign,
                actor=users["gm"],
                name=character_name,
                traits=traits,
                resources=resources,
                owner_id=users[username].pk,
            )
        services.start_session(campaign=campaign, actor=users["gm"], title=str(_("Friday night")))
        services.start_chapter(campaign=campaign, actor=users["gm"], title=str(_("Chapter one")))
    lines = [f"demo campaigns created: {created_campaigns} (of {len(DEMO_CAMPAIGNS)})"]
    lines += [f"  login {u!r:8} password {p!r}" for u, p in DEMO_USERS.items()]
    return lines
