"""The demo table that `make run` loads once: a GM, two players, one campaign per game system.

The demo accounts are ordinary users (no staff, no superuser) with passwords generated for this
install, kept in var/demo-logins (0600) so that `make run` can print them every time. An admin is
made only when asked for, with `manage.py createsuperuser`.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import translation
from django.utils.translation import gettext_lazy as _

from campaign import services
from campaign.models import Campaign

DEMO_USERNAMES = ("gm", "alice", "boris")
# What earlier versions set and published: an install still using one gets a new password.
PUBLISHED_PASSWORDS = {name: f"{name}-demo-pass" for name in DEMO_USERNAMES}

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


def _logins_file() -> Path:
    return Path(settings.VAR_DIR) / "demo-logins"


def _saved_passwords() -> dict[str, str]:
    path = _logins_file()
    if not path.exists():
        return {}
    pairs = (line.split(" ", 1) for line in path.read_text().splitlines() if " " in line)
    return {name: password for name, password in pairs if name in DEMO_USERNAMES}


def _save_passwords(passwords: dict[str, str]) -> None:
    path = _logins_file()
    path.touch(mode=0o600)
    path.chmod(0o600)
    path.write_text("".join(f"{name} {password}\n" for name, password in passwords.items()))


@transaction.atomic
def load_demo() -> list[str]:
    """Create the demo users and campaigns unless they exist; return lines to print. Names and
    titles are written in the site's language (LANGUAGE_CODE): a Russian site gets a Russian
    demo."""
    with translation.override(settings.LANGUAGE_CODE):
        return _load_demo()


def _load_demo() -> list[str]:
    User = get_user_model()
    passwords = _saved_passwords()
    users = {}
    for username in DEMO_USERNAMES:
        user, created = User.objects.get_or_create(username=username)
        stale = user.check_password(PUBLISHED_PASSWORDS[username])
        if created or stale or username not in passwords:
            passwords[username] = secrets.token_urlsafe(9)
            user.set_password(passwords[username])
        if stale:  # an install from before: the published password also made the GM an admin
            user.is_staff = user.is_superuser = False
        user.save()
        users[username] = user
    _save_passwords(passwords)
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
    lines += [f"  login {name!r:8} password {passwords[name]!r}" for name in DEMO_USERNAMES]
    return lines
