"""The Django admin is one more door onto the log: a staff member sees a roll there exactly as
the audit page would show it to them (rolls.reads.visibility.may_see with their membership; a
staff member outside the table sees what an observer sees), and hidden events as sealed."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from campaign import services
from campaign.models import Membership
from eventlog.chain import sealed_payload
from eventlog.models import Event
from rolls.checks import calls, followups
from rolls.checks import services as rolls
from rolls.models import Check, RuleUse, TaskAttempts
from rolls.reads.known import failed_attempts, failed_attempts_of
from rolls.reads.visibility import outsider

pytestmark = pytest.mark.django_db

# Who may see which roll, as the audit page decides it: the GM everything, the roller her own
# private roll (never her own blind one), the other player and an outsider public rolls only.
VIEWERS = ("gm", "alice", "boris", "stranger")
SEES = {
    "public": {"gm", "alice", "boris", "stranger"},
    "private": {"gm", "alice"},
    "blind": {"gm"},
}
LABELS = {"public": "Searching the crypt", "private": "A private whisper", "blind": "A blind hunch"}


def _roll(table, name: str, faces: list[int], **request) -> Check:
    return table.roll("alice", faces, label=LABELS[name], visibility=name, **request)


@pytest.fixture
def checks(table) -> dict[str, Check]:
    made = {
        "public": _roll(table, "public", [8, 2, 3, 4, 5], traits=["Wits", "Occult"]),
        # a failed attempt at a task, turned into a dramatic failure by its roller
        "private": _roll(table, "private", [1, 2, 3], traits=["Wits"]),
        # five successes: the table's only exceptional success, and a failed attempt nobody
        # but the GM knows of
        "blind": _roll(table, "blind", [9, 9, 9, 9, 9], traits=["Wits", "Occult"]),
    }
    _roll(table, "blind", [1, 2, 3], traits=["Wits"], task="Open the door")
    followups.take_dramatic_failure(
        campaign=table.campaign, actor=table.users["alice"], seq=made["private"].seq
    )
    return made


def staff(table, who: str) -> Client:
    user = table.users[who]
    user.is_staff = user.is_superuser = True
    user.save()
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.parametrize("who", VIEWERS)
def test_an_event_s_payload_is_shown_in_full_only_to_who_may_see_it(table, checks, who):
    client = staff(table, who)
    for name, check in checks.items():
        event = Event.objects.get(campaign=table.campaign, seq=check.seq)
        page = client.get(f"/admin/eventlog/event/{event.pk}/change/").content.decode()
        seen = who in SEES[name]
        assert (LABELS[name] in page) is seen, (who, name)
        if name != "public":
            assert (event.payload["salt"] in page) is seen, (who, name)
        if not seen:
            sealed = sealed_payload(event.payload, str(event.character_id))
            assert sealed["sealed"] in page
            assert str(event.character_id) not in page


@pytest.mark.parametrize("who", VIEWERS)
def test_a_check_is_shown_as_a_stub_to_who_may_not_see_it(table, checks, who):
    client = staff(table, who)
    for name, check in checks.items():
        page = client.get(f"/admin/rolls/check/{check.pk}/change/").content.decode()
        assert (LABELS[name] in page) is (who in SEES[name]), (who, name)
        check.refresh_from_db()  # the private roll became a dramatic failure
        shown = f'<div class="readonly">{check.outcome}</div>' in page
        assert shown is (who in SEES[name]), (who, name)
    listing = client.get("/admin/rolls/check/").content.decode()
    assert ("exceptional" in listing) is (who in SEES["blind"]), who


@pytest.mark.parametrize("who", VIEWERS)
def test_no_lookup_on_what_a_hidden_roll_hides(table, checks, who):
    client = staff(table, who)
    for url in (
        "/admin/eventlog/event/?payload__contains=hunch",
        "/admin/eventlog/event/?payload__icontains=hunch",
        "/admin/eventlog/event/?character_id=" + str(table.characters["alice"].pk),
        "/admin/rolls/check/?outcome=exceptional_success",
        "/admin/rolls/check/?label__icontains=hunch",
        "/admin/rolls/check/?amendments__icontains=dramatic",
        "/admin/rolls/taskattempts/?failures=1",
        "/admin/campaign/character/?resources__icontains=beats",
        "/admin/campaign/campaign/?invite_code__startswith=a",
        "/admin/campaign/idempotentrequest/?body__icontains=hunch",
        "/admin/authtoken/tokenproxy/?key__startswith=a",
    ):
        assert client.get(url).status_code == 400, url
    # what a stub shows may still be filtered on
    assert client.get("/admin/rolls/check/?visibility__exact=blind").status_code == 200
    assert client.get("/admin/eventlog/event/?type__exact=check.rolled").status_code == 200


@pytest.mark.parametrize("who", VIEWERS)
def test_rule_state_is_what_the_viewer_s_rolls_did(table, checks, who):
    """The allowances taken, the failed attempts and the resources, as the panels show them."""
    assert RuleUse.objects.filter(check_seq=checks["private"].seq).exists()
    assert TaskAttempts.objects.filter(task="open the door", failures=1).exists()
    client = staff(table, who)
    uses = client.get("/admin/rolls/ruleuse/").content.decode()
    assert ("intentional_dramatic_failure" in uses) is (who in SEES["private"]), who
    # the only failed attempt at a task was blind: nobody but the GM knows of the task
    attempts = client.get("/admin/rolls/taskattempts/").content.decode()
    assert ('<td class="field-known_failures">1</td>' in attempts) is (who in SEES["blind"]), who
    assert ("open the door" in attempts) is (who in SEES["blind"]), who
    marianne = table.characters["alice"]
    page = client.get(f"/admin/campaign/character/{marianne.pk}/change/").content.decode()
    beats = 1 if who in SEES["private"] else 0  # the Beat of the private dramatic failure
    assert f"&quot;beats&quot;: {beats}" in page or f'"beats": {beats}' in page, who


@pytest.mark.parametrize("who", VIEWERS)
def test_an_idempotent_answer_is_never_shown(table, checks, who):
    from campaign.models import IdempotentRequest

    IdempotentRequest.objects.create(
        user=table.users["alice"],
        campaign_id=table.campaign.pk,
        key="k1",
        fingerprint="f" * 64,
        status=201,
        body={"label": LABELS["blind"]},
        created_at=checks["blind"].created_at,
    )
    client = staff(table, who)
    request = IdempotentRequest.objects.get(key="k1")
    page = client.get(f"/admin/campaign/idempotentrequest/{request.pk}/change/")
    assert page.status_code == 200 and LABELS["blind"] not in page.content.decode()


def _chapters_of_hidden_play(table, chapters: int) -> None:
    """Chapters in which alice fails at a task in the open and again blind, fails at another in
    a private roll she turns into a dramatic failure (an allowance taken), and boris fails at a
    task blind; every other chapter the GM resets alice's first task."""
    gm, alice = table.users["gm"], table.users["alice"]
    for n in range(chapters):
        services.end_chapter(campaign=table.campaign, actor=gm)
        services.start_chapter(campaign=table.campaign, actor=gm)
        task = f"Climb wall {n % 3}"
        table.roll("alice", [1, 2, 3], traits=["Wits"], task=task)
        table.roll("alice", [1, 2, 3], traits=["Wits"], task=task, visibility="blind")
        private = table.roll(
            "alice", [1, 2, 3], traits=["Wits"], task=f"Pick lock {n}", visibility="private"
        )
        followups.take_dramatic_failure(campaign=table.campaign, actor=alice, seq=private.seq)
        table.roll("boris", [1, 2, 3], traits=["Wits"], task=f"Hide {n}", visibility="blind")
        if n % 2:
            rolls.reset_task(
                campaign=table.campaign,
                actor=gm,
                character_id=str(table.characters["alice"].pk),
                task=task,
            )


def _calls(table, count: int) -> None:
    """Calls for a check by alice's character, in the open and blind by turns."""
    for n in range(count):
        calls.call_for_check(
            campaign=table.campaign,
            actor=table.users["gm"],
            character_ids=[str(table.characters["alice"].pk)],
            request={"traits": ["Wits"], "visibility": ("public", "blind")[n % 2]},
        )


# The admin's lists of play: each row's decision is made from what the page read in a fixed
# number of statements, never a statement per row.
LISTS = (
    "/admin/rolls/ruleuse/",
    "/admin/rolls/taskattempts/",
    "/admin/eventlog/event/",
    "/admin/rolls/check/",
    "/admin/rolls/checkcall/",
)


@pytest.mark.parametrize("who", VIEWERS)
def test_the_lists_of_play_read_as_much_for_one_hidden_roll_as_for_many(
    table, checks, who, django_assert_num_queries
):
    client = staff(table, who)
    _chapters_of_hidden_play(table, 1)
    _calls(table, 1)
    few = {}
    for url in LISTS:
        with CaptureQueriesContext(connection) as statements:
            assert client.get(url).status_code == 200
        few[url] = len(statements)
    _chapters_of_hidden_play(table, 15)
    _calls(table, 15)
    for url, statements in few.items():
        with django_assert_num_queries(statements):
            assert client.get(url).status_code == 200


@pytest.mark.parametrize("who", VIEWERS)
def test_a_page_of_task_counters_is_known_as_each_counter_alone(table, checks, who):
    _chapters_of_hidden_play(table, 4)
    viewer = Membership.objects.filter(
        campaign=table.campaign, user=table.users[who]
    ).first() or outsider(table.campaign.pk)
    counters = list(TaskAttempts.objects.select_related("campaign"))
    alone = {
        counter.pk: failed_attempts(
            campaign=counter.campaign,
            character_id=counter.character_id,
            task=counter.task,
            viewer=viewer,
        )
        for counter in counters
    }
    assert failed_attempts_of(counters, lambda campaign_id: viewer) == alone
    truth = {counter.pk: counter.failures for counter in counters}
    assert (alone == truth) is (who == "gm"), who  # the hidden attempts count for the GM alone
