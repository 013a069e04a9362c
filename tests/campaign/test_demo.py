from django.core.management import call_command

from campaign.models import Campaign, Character, Membership
from rolls.systems import SYSTEM_IDS


def test_load_demo_creates_one_campaign_per_system_once(db, capsys):
    call_command("load_demo")
    out = capsys.readouterr().out
    assert "login 'gm'" in out and "password" in out
    assert sorted(Campaign.objects.values_list("system", flat=True)) == sorted(SYSTEM_IDS)
    assert Character.objects.count() == 2 * len(SYSTEM_IDS)
    assert Membership.objects.filter(role="gm").count() == len(SYSTEM_IDS)
    call_command("load_demo")
    assert Campaign.objects.count() == len(SYSTEM_IDS), "loading the demo again adds nothing"
    call_command("verify_log")


def test_the_demo_speaks_the_site_s_language(db, settings):
    from campaign.models import Session

    settings.LANGUAGE_CODE = "ru"
    call_command("load_demo")
    names = set(Campaign.objects.values_list("name", flat=True))
    assert "Демо: Невинные из Эшвуда" in names and not any("Demo" in n for n in names)
    assert set(Session.objects.values_list("title", flat=True)) == {"Пятничный вечер"}
