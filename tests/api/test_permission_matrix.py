"""Who may do what over the REST API: every endpoint and method, for every kind of visitor.

Visitors: anonymous; `stranger` (signed in, not a member); `olga` (observer); `alice` (player,
owner of the character each case acts on); `boris` (another player: alice's character is not his);
`gm`. Each case runs against its own campaign with an open session and chapter, a character each for
alice and boris, and checks of every visibility, built through the services.

What the stack does (asserted below, the same for every endpoint):
- anonymous: 401 with `WWW-Authenticate: Token` and only `{"detail": …, "code":
  "not_authenticated"}` (token authentication comes first, so DRF names the scheme to use); the
  schema, the docs and the token endpoint are open by design;
- stranger: 404, the very same answer as for a campaign that does not exist;
- refusals (403 role/character) append nothing and return only `{field: [message], "code": …}`.

The second half checks what the reads (checks, events with and without filters, the rule-state
panel, the JSON and CSV exports) show of hidden rolls, in the bodies themselves.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import transaction
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.response import Response

from campaign import services
from campaign.models import Campaign, Character, Membership, Role
from rolls.checks import calls as roll_calls
from rolls.models import Check, CheckCall, TaskAttempts
from tests.api.conftest import ROLES, TRAITS, World, assert_refusal, dump

ANONYMOUS_STATUS = 401
WRITE_METHODS = {"POST", "PATCH", "PUT", "DELETE"}

Expect = dict[str, int]


def everyone(status: int) -> Expect:
    return dict.fromkeys(ROLES, status)


def members(status: int) -> Expect:
    """Any signed-in member may; strangers learn nothing."""
    return {"anonymous": ANONYMOUS_STATUS, "stranger": 404, **dict.fromkeys(ROLES[2:], status)}


def gm_only(status: int) -> Expect:
    return {**members(403), "gm": status}


def owner_or_gm(status: int) -> Expect:
    """Acting for alice's character: alice (its owner) and the GM may; boris and olga may not."""
    return {**members(403), "alice": status, "gm": status}


def players_and_gm(status: int) -> Expect:
    return {**members(status), "olga": 403}


def signed_in(status: int) -> Expect:
    return {**everyone(status), "anonymous": ANONYMOUS_STATUS}


@dataclass(frozen=True)
class Case:
    id: str
    method: str
    name: str  # URL name in config/api_urls.py
    path: Callable[[World, str], str]
    expect: Expect
    body: Callable[[World, str], Any] | None = None
    world: str = "cofd"  # which table (see WORLDS)
    prepare: Callable[[World], None] | None = None
    appends: Callable[[str], bool] | None = None  # default: a write that succeeds appends
    verify: Callable[[World, str, Response], None] | None = None
    campaign_scoped: bool = True


def alice_char(w: World) -> str:
    return str(w.characters["alice"].pk)


def roll_body(w: World, who: str) -> dict[str, Any]:
    return {"character": alice_char(w), "traits": TRAITS[w.system], "visibility": "public"}


# --- the tables the cases run against -------------------------------------------------------


def _manual_failure(w: World) -> None:
    """alice rolls her five dice at the table and gets no 8+: a failure at picking the lock."""
    w.checks["alice_failure"] = w.roll(
        "alice", faces=[1, 2, 3, 4, 5], task="pick the lock", visibility="public"
    )


def _manual_nice(w: World) -> None:
    w.checks["alice_nice"] = w.roll("alice", faces=[6, 7], visibility="public")


WORLDS: dict[str, tuple[str, dict | None, Callable[[World], None] | None]] = {
    "cofd": ("cofd", None, None),
    "cofd_manual": ("cofd", {"manual_dice": True}, _manual_failure),
    "age": ("age", None, None),
    "nice_manual": ("nice_damnit", {"manual_dice": True}, _manual_nice),
}


def _end(service: Callable[..., Any]) -> Callable[[World], None]:
    def prepare(w: World) -> None:
        service(campaign=w.campaign, actor=w.users["gm"])
        w.campaign.refresh_from_db()

    return prepare


def _start_scene(w: World) -> None:
    services.start_scene(campaign=w.campaign, actor=w.users["gm"], title="The cellar")
    w.campaign.refresh_from_db()


def _favourite(w: World) -> None:
    w.extra["favourite"] = services.add_favourite(
        campaign=w.campaign,
        actor=w.users["alice"],
        character=w.characters["alice"],
        name="Look",
        text="Wits + Occult",
    )["id"]


def _other_member(w: World, who: str) -> int:
    """Someone to remove who is not the visitor: alice, or boris when alice is asking."""
    return w.users["boris" if who == "alice" else "alice"].pk


# --- what a success must have done ----------------------------------------------------------


def _lists_campaign_only_for_members(w: World, who: str, r: Response) -> None:
    ids = {c["id"] for c in r.json()}
    assert (w.cid in ids) == (who != "stranger")


def _invite_code_only_for_gm(w: World, who: str, r: Response) -> None:
    role = Membership.objects.get(campaign=w.campaign, user=w.users[who]).role
    assert r.json()["my_role"] == role
    assert (r.json()["invite_code"] is not None) == (who == "gm")


def _renamed(w: World, who: str, r: Response) -> None:
    assert Campaign.objects.get(pk=w.cid).name == "Renamed table" == r.json()["name"]


def _options_changed(w: World, who: str, r: Response) -> None:
    assert Campaign.objects.get(pk=w.cid).options["beat_on_dramatic_failure"] is True


def _invite_renewed(w: World, who: str, r: Response) -> None:
    assert r.json()["invite_code"] == Campaign.objects.get(pk=w.cid).invite_code
    assert r.json()["invite_code"] != w.extra["invite_code"]


def _joined(w: World, who: str, r: Response) -> None:
    # A stranger joins as a player; a member's role is left as it was (olga stays an observer).
    role = Membership.objects.get(campaign=w.campaign, user=w.users[who]).role
    assert r.json()["my_role"] == role
    assert role == {"stranger": Role.PLAYER, "olga": Role.OBSERVER, "gm": Role.GM}.get(who, role)


def _alice_observer(w: World, who: str, r: Response) -> None:
    assert Membership.objects.get(campaign=w.campaign, user=w.users["alice"]).role == "observer"


def _left(w: World, who: str, r: Response) -> None:
    assert not Membership.objects.filter(campaign=w.campaign, user=w.users[who]).exists()


def _removed(w: World, who: str, r: Response) -> None:
    removed = _other_member(w, who)
    assert not Membership.objects.filter(campaign=w.campaign, user_id=removed).exists()


def _own_character(w: World, who: str, r: Response) -> None:
    character = Character.objects.get(pk=r.json()["id"])
    assert character.owner_id == (None if who == "gm" else w.users[who].pk)


def _character_renamed(w: World, who: str, r: Response) -> None:
    assert Character.objects.get(pk=w.characters["alice"].pk).name == "Marianne"


def _rolled_for_alice(w: World, who: str, r: Response) -> None:
    check = Check.objects.get(campaign=w.campaign, seq=r.json()["seq"])
    assert (str(check.character_id), check.actor_id) == (alice_char(w), w.users[who].pk)
    assert r.json()["data"]["rolls"][0]["faces"]  # the roller sees the dice of a public roll


def _odds(w: World, who: str, r: Response) -> None:
    assert r.json()["check"]["pool"] == 5  # Wits 3 + Occult 2
    assert sum(r.json()["odds"]["outcomes"].values()) == pytest.approx(1)


def _revealed(w: World, who: str, r: Response) -> None:
    assert Check.objects.get(campaign=w.campaign, seq=w.checks["alice_private"]).revealed


def _dramatic(w: World, who: str, r: Response) -> None:
    assert r.json()["outcome"] == "dramatic_failure"
    assert Character.objects.get(pk=w.characters["alice"].pk).resources["beats"] == 1


def _fortune(w: World, who: str, r: Response) -> None:
    assert Character.objects.get(pk=w.characters["alice"].pk).resources["fortune"] == 15 - 6


def _extra_nice(w: World, who: str, r: Response) -> None:
    assert r.json()["data"]["rolls"][0]["result"]["extra_nice"] == 1


def _task_reset(w: World, who: str, r: Response) -> None:
    assert not TaskAttempts.objects.filter(campaign=w.campaign).exists()


def _willpower_restored(w: World, who: str, r: Response) -> None:
    assert Character.objects.get(pk=w.characters["alice"].pk).resources["willpower"] >= 2


def _called(w: World, who: str, r: Response) -> None:
    assert r.json()["characters"] == [alice_char(w)]


def _call_closed(w: World, who: str, r: Response) -> None:
    assert CheckCall.objects.get(pk=w.extra["call_id"]).closed


def _calls_for_me(w: World, who: str, r: Response) -> None:
    # The GM sees every open call; a player only those addressed to their characters.
    assert [c["id"] for c in r.json()] == ([w.extra["call_id"]] if who in ("alice", "gm") else [])


def _export_as_the_feed(w: World, who: str, r: Response) -> None:
    """The whole chain up to the head; what the visitor may not see is redacted, as in the feed."""
    body = r.json()
    assert [e["seq"] for e in body["events"]] == list(range(1, w.campaign.head_seq + 1))
    hidden = {w.checks[name] for name in HIDDEN[who]}
    assert {e["seq"] for e in body["events"] if e.get("redacted")} == hidden


def _csv_rows_as_the_feed(w: World, who: str, r: Response) -> None:
    rows = list(csv.reader(io.StringIO(r.content.decode())))[1:]
    visible = {seq for name, seq in w.checks.items() if name not in HIDDEN[who]}
    assert {int(row[0]) for row in rows} == visible


def _report_as_the_feed(w: World, who: str, r: Response) -> None:
    """The luck report counts exactly the rolls the feed shows this visitor."""
    visible = [seq for name, seq in w.checks.items() if name not in HIDDEN[who]]
    rolls = Check.objects.filter(campaign=w.campaign, seq__in=visible)
    assert r.json()["rolls"] == sum(len(c.event.payload["rolls"]) for c in rolls)


def _chronicle_as_the_feed(w: World, who: str, r: Response) -> None:
    """A hidden roll is a stub in the chronicle: its faces and label are not there."""
    hidden = {w.checks[name] for name in HIDDEN[who]}
    for check in Check.objects.filter(campaign=w.campaign, seq__in=hidden):
        for entry in r.json()["entries"]:
            if entry["seq"] == check.seq:
                assert entry["kind"] == "hidden" and entry["rolls"] == []


def _a_webhook(w: World) -> None:
    from webhooks.services import create_webhook

    hook = create_webhook(campaign=w.campaign, actor=w.users["gm"], url=PUBLIC_HOOK)
    w.extra["webhook_id"] = hook.pk


PUBLIC_HOOK = "https://93.184.215.14/hook"  # an address literal: no DNS lookup in a test

C = "/api/campaigns/{cid}/"

# fmt: off
CASES: list[Case] = [
    # Open by design: the API description, and signing in.
    Case("schema", "GET", "api-schema", lambda w, who: "/api/schema/", everyone(200),
         campaign_scoped=False),
    Case("docs", "GET", "api-docs", lambda w, who: "/api/docs/", everyone(200),
         campaign_scoped=False),
    Case("token", "POST", "api-token", lambda w, who: "/api/auth/token/",
         {**everyone(200), "anonymous": 400}, campaign_scoped=False,
         body=lambda w, who: {"username": who, "password": f"{who}-password"},
         appends=lambda who: False),
    Case("token.revoke", "DELETE", "api-token", lambda w, who: "/api/auth/token/",
         signed_in(204), campaign_scoped=False, appends=lambda who: False),
    Case("socket-ticket", "POST", "api-socket-ticket", lambda w, who: "/api/auth/socket-ticket/",
         signed_in(201), campaign_scoped=False, appends=lambda who: False),
    Case("rules", "GET", "api-rules", lambda w, who: "/api/rules/", signed_in(200),
         campaign_scoped=False),
    Case("sheet_templates", "GET", "api-sheet-templates", lambda w, who: "/api/sheet-templates/",
         signed_in(200), campaign_scoped=False),
    Case("campaigns.list", "GET", "api-campaigns", lambda w, who: "/api/campaigns/",
         signed_in(200), campaign_scoped=False, verify=_lists_campaign_only_for_members),
    Case("campaigns.create", "POST", "api-campaigns", lambda w, who: "/api/campaigns/",
         signed_in(201), campaign_scoped=False, appends=lambda who: False,
         body=lambda w, who: {"name": "My own table", "system": "age"}),
    Case("join", "POST", "api-join", lambda w, who: "/api/join/", signed_in(200),
         campaign_scoped=False, body=lambda w, who: {"invite_code": w.campaign.invite_code},
         appends=lambda who: who == "stranger", verify=_joined),
    Case("join.unknown_code", "POST", "api-join", lambda w, who: "/api/join/", signed_in(404),
         campaign_scoped=False, body=lambda w, who: {"invite_code": "no-such-code"}),
    # The campaign itself.
    Case("campaign.get", "GET", "api-campaign", lambda w, who: w.url(), members(200),
         verify=_invite_code_only_for_gm),
    Case("campaign.rename", "PATCH", "api-campaign", lambda w, who: w.url(), gm_only(200),
         body=lambda w, who: {"name": "Renamed table"}, verify=_renamed),
    Case("campaign.options", "PATCH", "api-campaign", lambda w, who: w.url(), gm_only(200),
         body=lambda w, who: {"options": {"beat_on_dramatic_failure": True}},
         verify=_options_changed),
    Case("invite.renew", "POST", "api-invite", lambda w, who: w.url("invite/"), gm_only(200),
         appends=lambda who: False, verify=_invite_renewed),
    Case("members.list", "GET", "api-members", lambda w, who: w.url("members/"), members(200)),
    Case("member.role", "PATCH", "api-member",
         lambda w, who: w.url(f"members/{w.users['alice'].pk}/"), gm_only(200),
         body=lambda w, who: {"role": "observer"}, verify=_alice_observer),
    # Leaving is every member's own right; the last GM may not leave the table without a GM.
    Case("member.leave", "DELETE", "api-member",
         lambda w, who: w.url(f"members/{w.users.get(who, w.users['alice']).pk}/"),
         {**members(204), "gm": 409}, verify=_left),
    Case("member.remove", "DELETE", "api-member",
         lambda w, who: w.url(f"members/{_other_member(w, who)}/"), gm_only(204), verify=_removed),
    # Characters.
    Case("characters.list", "GET", "api-characters", lambda w, who: w.url("characters/"),
         members(200)),
    Case("characters.create", "POST", "api-characters", lambda w, who: w.url("characters/"),
         players_and_gm(201), verify=_own_character,
         body=lambda w, who: {"name": "Newcomer", "traits": {"attributes": {"Wits": 2}}}),
    Case("character.get", "GET", "api-character",
         lambda w, who: w.url(f"characters/{alice_char(w)}/"), members(200)),
    Case("character.rename", "PATCH", "api-character",
         lambda w, who: w.url(f"characters/{alice_char(w)}/"), owner_or_gm(200),
         body=lambda w, who: {"name": "Marianne"}, verify=_character_renamed),
    Case("sheet_template", "GET", "api-sheet-template", lambda w, who: w.url("sheet-template/"),
         members(200)),
    Case("favourites.list", "GET", "api-favourites",
         lambda w, who: w.url(f"characters/{alice_char(w)}/favourites/"), members(200)),
    Case("favourites.add", "POST", "api-favourites",
         lambda w, who: w.url(f"characters/{alice_char(w)}/favourites/"), owner_or_gm(201),
         body=lambda w, who: {"name": "Look", "text": "Wits + Occult"}),
    Case("favourite.remove", "DELETE", "api-favourite",
         lambda w, who: w.url(f"characters/{alice_char(w)}/favourites/{w.extra['favourite']}/"),
         owner_or_gm(204), prepare=_favourite),
    # Sessions, chapters, scenes: the GM runs the table.
    Case("sessions.list", "GET", "api-sessions", lambda w, who: w.url("sessions/"), members(200)),
    Case("sessions.start", "POST", "api-sessions", lambda w, who: w.url("sessions/"),
         gm_only(201), prepare=_end(services.end_session), body=lambda w, who: {"title": "Two"}),
    Case("sessions.end", "POST", "api-session-end", lambda w, who: w.url("sessions/end/"),
         gm_only(200)),
    Case("chapters.list", "GET", "api-chapters", lambda w, who: w.url("chapters/"), members(200)),
    Case("chapters.start", "POST", "api-chapters", lambda w, who: w.url("chapters/"),
         gm_only(201), prepare=_end(services.end_chapter), body=lambda w, who: {"title": "Two"}),
    Case("chapters.end", "POST", "api-chapter-end", lambda w, who: w.url("chapters/end/"),
         gm_only(200)),
    Case("scenes.list", "GET", "api-scenes", lambda w, who: w.url("scenes/"), members(200)),
    Case("scenes.start", "POST", "api-scenes", lambda w, who: w.url("scenes/"), gm_only(201),
         body=lambda w, who: {"title": "The cellar"}),
    Case("scenes.end", "POST", "api-scene-end", lambda w, who: w.url("scenes/end/"),
         gm_only(200), prepare=_start_scene),
    # Checks.
    Case("checks.list", "GET", "api-checks", lambda w, who: w.url("checks/"), members(200)),
    Case("checks.roll", "POST", "api-checks", lambda w, who: w.url("checks/"),
         owner_or_gm(201), body=roll_body, verify=_rolled_for_alice),
    Case("checks.odds", "POST", "api-odds", lambda w, who: w.url("checks/odds/"),
         owner_or_gm(200), body=roll_body, appends=lambda who: False, verify=_odds),
    Case("checks.parse", "POST", "api-parse", lambda w, who: w.url("checks/parse/"),
         owner_or_gm(200), appends=lambda who: False,
         body=lambda w, who: {"text": "Wits + Occult 8again", "character": alice_char(w)}),
    Case("check.again", "POST", "api-again",
         lambda w, who: w.url(f"checks/{w.checks['alice_public']}/again/"),
         {**members(403), "alice": 201}, body=lambda w, who: {}),
    Case("check.get", "GET", "api-check",
         lambda w, who: w.url(f"checks/{w.checks['alice_public']}/"), members(200)),
    Case("check.dramatic_failure", "POST", "api-dramatic-failure",
         lambda w, who: w.url(f"checks/{w.checks['alice_failure']}/dramatic-failure/"),
         owner_or_gm(200), world="cofd_manual", verify=_dramatic),
    Case("check.fortune", "POST", "api-fortune",
         lambda w, who: w.url(f"checks/{w.checks['alice_public']}/fortune/"),
         owner_or_gm(200), world="age", body=lambda w, who: {"die": 0, "value": 6},
         verify=_fortune),
    Case("check.extra_nice", "POST", "api-extra-nice",
         lambda w, who: w.url(f"checks/{w.checks['alice_nice']}/extra-nice/"),
         owner_or_gm(200), world="nice_manual", body=lambda w, who: {"count": 1},
         verify=_extra_nice),
    Case("check.reveal", "POST", "api-reveal",
         lambda w, who: w.url(f"checks/{w.checks['alice_private']}/reveal/"), gm_only(200),
         verify=_revealed),
    Case("task.reset", "POST", "api-task-reset", lambda w, who: w.url("tasks/reset/"),
         gm_only(204), world="cofd_manual", verify=_task_reset,
         body=lambda w, who: {"character": alice_char(w), "task": "pick the lock"}),
    Case("willpower.restore", "POST", "api-willpower",
         lambda w, who: w.url(f"characters/{alice_char(w)}/willpower/"), gm_only(200),
         world="cofd_manual", verify=_willpower_restored, body=lambda w, who: {"amount": 2}),
    # Calls for a check.
    Case("calls.list", "GET", "api-calls", lambda w, who: w.url("calls/"), members(200),
         verify=_calls_for_me),
    Case("calls.create", "POST", "api-calls", lambda w, who: w.url("calls/"), gm_only(201),
         verify=_called,
         body=lambda w, who: {"characters": [alice_char(w)], "request": {"traits": ["Wits"]}}),
    Case("call.close", "POST", "api-call-close",
         lambda w, who: w.url(f"calls/{w.extra['call_id']}/close/"), gm_only(204),
         verify=_call_closed),
    # The log and the panels.
    Case("events.list", "GET", "api-events", lambda w, who: w.url("events/"), members(200)),
    Case("state", "GET", "api-state", lambda w, who: w.url("state/"), members(200)),
    # Exports: every member, with what they may not see redacted (GM: everything).
    Case("export", "GET", "api-export", lambda w, who: w.url("export/"), members(200),
         verify=_export_as_the_feed),
    Case("export.csv", "GET", "api-export-csv", lambda w, who: w.url("export.csv"), members(200),
         verify=_csv_rows_as_the_feed),
    # After the session: the luck report and the chronicle, as the feed shows each visitor.
    Case("report", "GET", "api-luck-report", lambda w, who: w.url("report/"), members(200),
         verify=_report_as_the_feed),
    Case("report.session", "GET", "api-session-luck-report",
         lambda w, who: w.url("sessions/1/report/"), members(200), verify=_report_as_the_feed),
    Case("chronicle", "GET", "api-chronicle", lambda w, who: w.url("sessions/1/chronicle/"),
         members(200), verify=_chronicle_as_the_feed),
    # Webhooks: the GM's plumbing, not events of play (nothing is appended).
    Case("webhooks.list", "GET", "api-webhooks", lambda w, who: w.url("webhooks/"), gm_only(200)),
    Case("webhooks.create", "POST", "api-webhooks", lambda w, who: w.url("webhooks/"),
         gm_only(201), body=lambda w, who: {"url": PUBLIC_HOOK}, appends=lambda who: False),
    Case("webhook.delete", "DELETE", "api-webhook",
         lambda w, who: w.url(f"webhooks/{w.extra['webhook_id']}/"), gm_only(204),
         prepare=_a_webhook, appends=lambda who: False),
    Case("webhook.deliveries", "GET", "api-webhook-deliveries",
         lambda w, who: w.url(f"webhooks/{w.extra['webhook_id']}/deliveries/"), gm_only(200),
         prepare=_a_webhook),
]
# fmt: on


def _send(client, method: str, path: str, body: Any) -> Response:
    call = getattr(client, method.lower())
    return call(path, body, format="json") if body is not None else call(path)


def _table(build_world, world: str) -> World:
    system, options, after = WORLDS[world]
    w = build_world(system, options=options)
    call = roll_calls.call_for_check(
        campaign=w.campaign,
        actor=w.users["gm"],
        character_ids=[alice_char(w)],
        request={"traits": TRAITS[system][:1]},
    )
    w.extra["call_id"] = str(call.pk)
    w.extra["invite_code"] = w.campaign.invite_code
    if after is not None:
        after(w)
    w.campaign.refresh_from_db()
    return w


def _visit(w: World, case: Case, who: str) -> None:
    """One visitor's request, and what they must (and must not) get from it."""
    if case.prepare:
        case.prepare(w)
    path = case.path(w, who)
    body = case.body(w, who) if case.body else None
    before = w.head()

    response = _send(w.client(who), case.method, path, body)

    expected = case.expect[who]
    assert response.status_code == expected, (case.method, path, dump(response)[:300])
    after = w.head()
    if response.status_code >= 400:
        assert after == before, "a refused request must append nothing"
    elif case.method in WRITE_METHODS:
        appends = case.appends(who) if case.appends else True
        assert (after != before) == appends, ("appended?", before, after)

    if who == "anonymous" and expected == ANONYMOUS_STATUS:
        # No credentials: DRF's own answer, naming the scheme that signs in, and no data.
        assert response["WWW-Authenticate"] == "Token"
        assert response.json() == {"detail": response.json()["detail"], "code": "not_authenticated"}
    elif who == "stranger" and case.campaign_scoped:
        # Exactly what a campaign that does not exist answers: its existence is not confirmed.
        assert_refusal(response, 404, "campaign")
        ghost = _send(w.client(who), case.method, path.replace(f"/{w.cid}/", "/987654/"), body)
        assert (ghost.status_code, ghost.json()) == (response.status_code, response.json())
    elif response.status_code in (403, 404, 409) and case.campaign_scoped:
        assert_refusal(response, response.status_code)
    elif response.status_code < 300 and case.verify:
        case.verify(w, who, response)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_permission_matrix(build_world, case: Case) -> None:
    """Each visitor in turn against the same table, each visit rolled back before the next."""
    w = _table(build_world, case.world)
    for who in ROLES[1:]:
        w.client(who)  # the tokens outlive the rollbacks below
    problems = []
    for who in ROLES:
        try:
            with transaction.atomic():
                _visit(w, case, who)
                transaction.set_rollback(True)
        except Exception as error:  # report every visitor's result, not only the first
            problems.append(f"{who}: {type(error).__name__}: {error}")
        w.campaign.refresh_from_db()
    assert not problems, "\n".join(problems)


# --- the matrix covers the URLconf ----------------------------------------------------------


def _api_patterns(patterns: list, prefix: str = "") -> Iterator[tuple[str, URLPattern]]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _api_patterns(pattern.url_patterns, prefix + str(pattern.pattern))
        elif (prefix + str(pattern.pattern)).startswith("api/"):
            yield prefix + str(pattern.pattern), pattern


def _methods(pattern: URLPattern) -> set[str]:
    view = getattr(pattern.callback, "cls", None) or getattr(pattern.callback, "view_class", None)
    if view is None:  # a plain function view: which methods it answers cannot be read off it
        return {"ANY"}
    return {
        method.upper()
        for method in view.http_method_names
        if method not in ("options", "head") and hasattr(view, method)
    }


def test_the_matrix_covers_every_api_endpoint_and_method() -> None:
    covered = {(case.name, case.method) for case in CASES}
    served: set[tuple[str, str]] = set()
    unnamed = []
    for route, pattern in _api_patterns(get_resolver().url_patterns):
        if not pattern.name:
            unnamed.append(route)
        served |= {(pattern.name or route, method) for method in _methods(pattern)}
    assert not unnamed, f"name these API routes so the matrix can refer to them: {unnamed}"
    missing = sorted(served - covered)
    assert not missing, f"add these endpoints to CASES in {__name__}: {missing}"
    assert not covered - served, f"CASES name endpoints that no longer exist: {covered - served}"
    assert len(served) >= 40  # the walk found the API (a broken walk would find nothing)


def test_options_requests_do_not_confirm_a_campaign_exists(world: World) -> None:
    stranger = world.client("stranger")
    for tail in ("", "checks/", "events/", f"checks/{world.checks['alice_public']}/"):
        real = stranger.options(world.url(tail))
        ghost = stranger.options(world.url(tail).replace(f"/{world.cid}/", "/987654/"))
        assert (real.status_code, real.json()) == (ghost.status_code, ghost.json())
        assert str(world.cid) not in dump(real)


# --- hidden rolls in what the reads return ----------------------------------------------------

# Which checks of the world each reader may see the dice of, before any reveal.
HIDDEN = {
    "gm": set(),
    "alice": {"boris_private", "alice_blind", "gm_blind_for_alice"},
    "boris": {"alice_private", "alice_blind", "gm_blind_for_alice"},
    "olga": {"alice_private", "alice_blind", "boris_private", "gm_blind_for_alice"},
}
# A stub's hash and its sealed payload ({"sealed", "next_key"}) cover a secret salt (rolls.chain):
# they place the event in the chain and say nothing about its content.
EXPORT_STUB_KEYS = {
    "campaign", "seq", "type", "created_at", "actor", "visibility", "prev_hash", "hash", "redacted",
    "payload", "session", "scene", "chapter", "character",
}  # fmt: skip
STUB_KEYS = {
    "seq", "kind", "system", "visibility", "revealed", "actor_id", "actor", "created_at",
    "redacted", "type", "hash", "prev_hash",
}  # fmt: skip


def _read_views(w: World) -> dict[str, str]:
    alice_character = alice_char(w)
    session = Check.objects.get(campaign=w.campaign, seq=w.checks["alice_public"]).session_id
    chapter = Check.objects.get(campaign=w.campaign, seq=w.checks["alice_public"]).chapter_id
    return {
        "checks": w.url("checks/"),
        "checks.after": w.url(f"checks/?after={w.checks['alice_public']}&limit=50"),
        "events": w.url("events/"),
        "events.type": w.url("events/?type=check.rolled"),
        "events.character": w.url(f"events/?character={alice_character}"),
        "events.session": w.url(f"events/?session={session}"),
        "events.chapter": w.url(f"events/?chapter={chapter}&type=check.rolled&type=check.revealed"),
        "events.after": w.url(f"events/?after={w.checks['alice_public']}&limit=3"),
    }


def _entries(body: Any) -> dict[int, dict]:
    return {entry["seq"]: entry for entry in body}


def _assert_shows(w: World, reader: str, hidden: set[str]) -> None:
    """Every read a member has shows the hidden checks as stubs and the others in full."""
    client = w.client(reader)
    bodies = {}
    for view, url in _read_views(w).items():
        response = client.get(url)
        assert response.status_code == 200, (view, dump(response))
        bodies[view] = response
    for name, check_seq in w.checks.items():
        entries = {"checks/<seq>": client.get(w.url(f"checks/{check_seq}/")).json()}
        for view, response in bodies.items():
            found = _entries(response.json()).get(check_seq)
            if found is not None:
                entries[view] = found
        assert {"checks/<seq>", "checks", "events", "events.type"} <= set(entries)
        for view, entry in entries.items():
            where = (reader, name, view)
            if name in hidden:
                assert entry["redacted"] is True, where
                assert set(entry) <= STUB_KEYS, (where, set(entry) - STUB_KEYS)
            else:
                assert entry["redacted"] is False, where
                rolls = (entry.get("data") or entry.get("payload"))["rolls"]
                assert rolls[0]["faces"] and "outcome" in rolls[0]["result"], where
    # Nothing of a hidden roll anywhere in the whole bodies: count the dice that are shown.
    visible = len(w.checks) - len(hidden)
    for view in ("checks", "events", "events.type"):
        text = dump(bodies[view])
        assert text.count('"faces"') == text.count('"breakdown"') == visible, (reader, view)
    for name in hidden:
        event = w.campaign.events.get(seq=w.checks[name])
        assert event.payload["salt"] not in dump(bodies["events"]), (reader, name)
        assert event.payload["dice_key"]["key"] not in dump(bodies["events"]), (reader, name)
    # The exports: the JSON keeps a hidden roll's place in the chain only; the CSV leaves it out.
    exported = _entries(client.get(w.url("export/")).json()["events"])
    for name, check_seq in w.checks.items():
        entry = exported[check_seq]
        if name in hidden:
            assert entry["redacted"] is True and set(entry) <= EXPORT_STUB_KEYS, (reader, name)
            assert set(entry["payload"]) == {"sealed", "next_key"}, (reader, name)
            assert entry["character"] is None, (reader, name)
        else:
            assert entry["payload"]["rolls"][0]["faces"], (reader, name)
    rows = list(csv.reader(io.StringIO(client.get(w.url("export.csv")).content.decode())))
    assert {int(row[0]) for row in rows[1:]} == {
        seq for name, seq in w.checks.items() if name not in hidden
    }


@pytest.mark.parametrize("reader", ["gm", "alice", "boris", "olga"])
def test_reads_show_hidden_rolls_only_to_whom_they_belong(world: World, reader: str) -> None:
    _assert_shows(world, reader, HIDDEN[reader])


def test_a_reveal_shows_a_hidden_roll_to_everyone(world: World) -> None:
    gm = world.client("gm")
    for name in ("alice_blind", "boris_private", "gm_blind_for_alice"):
        response = gm.post(world.url(f"checks/{world.checks[name]}/reveal/"))
        assert response.status_code == 200, dump(response)
        assert response.json()["revealed"] is True
    for reader in ("alice", "boris", "olga"):
        still_hidden = {"alice_private"} if reader != "alice" else set()
        _assert_shows(world, reader, still_hidden)
    # A revealed roll cannot be revealed twice (and a public one never needs it).
    again = gm.post(world.url(f"checks/{world.checks['alice_blind']}/reveal/"))
    assert again.status_code == 409
    assert gm.post(world.url(f"checks/{world.checks['alice_public']}/reveal/")).status_code == 409


def test_hidden_follow_ups_stay_hidden_and_the_state_panel_does_not_tell(build_world) -> None:
    """boris fails a private roll and takes a dramatic failure on it: the follow-up event is as
    hidden as the roll, and alice's rule-state panel does not show that the allowance was used."""
    w = build_world("cofd", options={"manual_dice": True})
    seq = w.roll("boris", faces=[1, 2, 3, 4, 5], visibility="private")
    response = w.client("boris").post(w.url(f"checks/{seq}/dramatic-failure/"))
    assert response.status_code == 200, dump(response)
    followup = response.json()["data"]["followups"][0]["seq"]

    events = _entries(w.client("alice").get(w.url("events/")).json())
    assert events[seq]["redacted"] is True and events[followup]["redacted"] is True
    for view in ("events/", "checks/"):
        assert '"outcome": "dramatic_failure"' not in dump(w.client("alice").get(w.url(view)))
        assert '"outcome": "dramatic_failure"' in dump(w.client("gm").get(w.url(view)))

    def used(reader: str) -> bool:
        state = w.client(reader).get(w.url("state/")).json()
        (boris_row,) = [c for c in state["characters"] if c["owner_id"] == w.users["boris"].pk]
        return boris_row["dramatic_failure_used"]

    assert used("gm") and used("boris")
    assert not used("alice") and not used("olga")
    w.client("gm").post(w.url(f"checks/{seq}/reveal/"))
    assert used("alice") and used("olga")
    events = _entries(w.client("alice").get(w.url("events/")).json())
    assert events[followup]["redacted"] is False
    assert events[followup]["payload"]["result"]["outcome"] == "dramatic_failure"


def test_beats_from_a_hidden_roll_do_not_show_before_the_reveal(build_world) -> None:
    w = build_world("cofd", options={"manual_dice": True})
    seq = w.roll("boris", faces=[1, 2, 3, 4, 5], visibility="private")
    assert w.client("boris").post(w.url(f"checks/{seq}/dramatic-failure/")).status_code == 200
    boris_id = str(w.characters["boris"].pk)
    state = w.client("alice").get(w.url("state/")).json()
    (row,) = [c for c in state["characters"] if c["id"] == boris_id]
    sheet = w.client("alice").get(w.url(f"characters/{boris_id}/")).json()
    assert row["resources"].get("beats", 0) == 0 and sheet["resources"].get("beats", 0) == 0


def test_the_check_a_reader_may_not_see_answers_like_one_they_may(world: World) -> None:
    """A stub keeps the seq (feeds stay gapless) and says who rolled, never what."""
    body = world.client("boris").get(world.url(f"checks/{world.checks['alice_blind']}/")).json()
    assert body["seq"] == world.checks["alice_blind"]
    assert body["actor_id"] == world.users["alice"].pk
    assert body["redacted"] is True
    assert not {"outcome", "data", "character", "label", "task"} & set(body)
    assert json.dumps(body).count("faces") == 0
