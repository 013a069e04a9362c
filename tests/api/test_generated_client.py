"""A Python client generated from /api/schema/ (openapi-python-client) plays a whole session
against a live server: a mismatch between the schema and the server breaks this test.

The client is generated in the test run, from the schema the running server serves, into a
temporary directory: a GM creates a campaign, a player joins by the invite code, the GM writes
her character's sheet, opens a session and a chapter; she rolls public, private and blind checks,
the GM switches the table to physical dice and she takes a dramatic failure of a failed roll, the
GM calls for a check and she answers it, the GM reveals the blind roll; the GM exports the log
and the standalone verifier (python -m rolls.trust.verify) checks it. Every answer is parsed by the
generated models, so an undocumented status or a response that breaks its schema fails here.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import PBKDF2PasswordHasher

from tests.live.conftest import FAILURE, SHEET, Server

pytestmark = [pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "tablecheck_client"


def generate_client(server: Server, directory: Path) -> Any:
    """Generate the client from the live server's schema; returns the imported package."""
    schema = httpx.get(f"http://127.0.0.1:{server.port}/api/schema/?format=json", timeout=30)
    assert schema.status_code == 200, schema.text[:300]
    (directory / "schema.json").write_text(schema.text)
    (directory / "config.yaml").write_text(
        f"package_name_override: {PACKAGE}\nproject_name_override: tablecheck-client\n"
        "post_hooks: []\n"
    )
    generated = subprocess.run(
        [
            *(sys.executable, "-m", "openapi_python_client", "generate"),
            *("--path", str(directory / "schema.json")),
            *("--output-path", str(directory / PACKAGE)),
            *("--meta", "none", "--config", str(directory / "config.yaml")),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert generated.returncode == 0, generated.stdout + generated.stderr
    # Warnings mean parts of the schema the generator could not turn into code.
    assert "Warning" not in generated.stdout, generated.stdout
    sys.path.insert(0, str(directory))
    try:
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(f"{PACKAGE}.")]:
            del sys.modules[name]
        return importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(directory))


def api(name: str) -> Any:
    group, _, operation = name.partition(".")
    return importlib.import_module(f"{PACKAGE}.api.{group}.{operation}")


def models() -> Any:
    return importlib.import_module(f"{PACKAGE}.models")


def ok(answer: Any, model: type) -> Any:
    """The parsed answer, which must be the documented success model (not an Error)."""
    assert isinstance(answer, model), answer
    return answer


@pytest.mark.django_db(transaction=True)
def test_a_generated_client_plays_a_session(server: Server, tmp_path: Path) -> None:
    client_package = generate_client(server, tmp_path)
    m = models()
    base_url = f"http://127.0.0.1:{server.port}"
    User = get_user_model()
    for name in ("gm", "alice"):
        # The server hashes as production does (the tests' own process uses a fast hasher).
        password = PBKDF2PasswordHasher().encode(f"{name}-secret-password", f"salt{name}")
        User.objects.create(username=name, password=password)

    anonymous = client_package.Client(base_url=base_url, raise_on_unexpected_status=True)

    def sign_in(name: str) -> Any:
        token = ok(
            api("auth.auth_token_create").sync(
                client=anonymous,
                body=m.CredentialsRequest(username=name, password=f"{name}-secret-password"),
            ),
            m.Token,
        )
        return client_package.AuthenticatedClient(
            base_url=base_url, token=token.token, prefix="Token", raise_on_unexpected_status=True
        )

    gm, alice = sign_in("gm"), sign_in("alice")

    # A wrong password is a documented refusal: the Error model, with its code.
    refused = api("auth.auth_token_create").sync(
        client=anonymous, body=m.CredentialsRequest(username="gm", password="wrong-password")
    )
    assert isinstance(refused, m.Error) and refused.code == "invalid_credentials"

    # The GM's campaign, and the player joins with its invite code.
    campaign = ok(
        api("campaigns.campaigns_create").sync(
            client=gm,
            body=m.CofdCampaignCreateRequest(
                name="Client table",
                system=m.CofdCampaignCreateRequestSystem.COFD,
                options=m.CofdOptions(
                    intentional_dramatic_failure=m.CofdOptionsIntentionalDramaticFailure.UNLIMITED
                ),
            ),
        ),
        m.Campaign,
    )
    cid = campaign.id
    assert campaign.invite_code
    joined = ok(
        api("join.join_create").sync(
            client=alice, body=m.JoinRequest(invite_code=campaign.invite_code)
        ),
        m.Campaign,
    )
    assert joined.id == cid and joined.my_role == "player"
    members = ok(api("campaigns.campaigns_members_list").sync(cid, client=gm), list)
    alice_id = next(member.user_id for member in members if member.username == "alice")

    # Her character, written by the GM; a session and a chapter.
    character = ok(
        api("campaigns.campaigns_characters_create").sync(
            cid,
            client=gm,
            body=m.CharacterCreateRequest(
                name="Alice's hero",
                traits=m.CharacterCreateRequestTraits.from_dict(SHEET),
                owner_id=alice_id,
            ),
        ),
        m.Character,
    )
    ok(
        api("campaigns.sessions_start").sync(cid, client=gm, body=m.TitleRequest(title="One")),
        m.Period,
    )
    ok(
        api("campaigns.chapters_start").sync(cid, client=gm, body=m.TitleRequest(title="I")),
        m.Period,
    )

    # Public, private and blind checks, with their odds first.
    def roll(**fields: Any) -> Any:
        body = m.CofdCheckRequest(character=character.id, traits=["Wits", "Occult"], **fields)
        return ok(
            api("campaigns.campaigns_checks_create").sync(cid, client=alice, body=body), m.Check
        )

    odds = api("campaigns.campaigns_checks_odds_create").sync(
        cid, client=alice, body=m.CofdCheckRequest(character=character.id, traits=["Wits"])
    )
    assert odds is not None and odds.to_dict()["system"] == "cofd"
    public = roll(visibility=m.CofdCheckRequestVisibility.PUBLIC, label="Search the study")
    private = roll(visibility=m.CofdCheckRequestVisibility.PRIVATE)
    blind = roll(visibility=m.CofdCheckRequestVisibility.BLIND)
    assert public.outcome and not public.redacted
    assert private.visibility == "private"
    assert blind.redacted  # she rolled it and sees only that it happened
    again = ok(
        api("campaigns.campaigns_checks_again_create").sync(
            cid, public.seq, client=alice, body=m.AgainRequest()
        ),
        m.Check,
    )
    assert again.seq > blind.seq

    # Physical dice: a failure she turns into a dramatic failure (a follow-up).
    ok(
        api("campaigns.campaigns_partial_update").sync(
            cid,
            client=gm,
            body=m.CampaignsPartialUpdateBody(options=m.CofdOptions(manual_dice=True)),
        ),
        m.Campaign,
    )
    failed = roll(faces=FAILURE, visibility=m.CofdCheckRequestVisibility.PUBLIC)
    assert failed.outcome == "failure", failed
    dramatic = ok(
        api("campaigns.campaigns_checks_dramatic_failure_create").sync(
            cid, failed.seq, client=alice
        ),
        m.Check,
    )
    assert dramatic.outcome == "dramatic_failure", dramatic.to_dict()
    # The same follow-up again is a documented conflict.
    twice = api("campaigns.campaigns_checks_dramatic_failure_create").sync(
        cid, failed.seq, client=alice
    )
    assert isinstance(twice, m.Error) and twice.code == "conflict"

    # The GM calls for a check; she answers it with her faces.
    call = ok(
        api("campaigns.campaigns_calls_create").sync(
            cid,
            client=gm,
            body=m.CampaignsCallsCreateBody(
                characters=[character.id], request=m.CofdCallRequest(traits=["Wits"])
            ),
        ),
        m.Call,
    )
    calls = ok(api("campaigns.campaigns_calls_list").sync(cid, client=alice), list)
    assert [c.id for c in calls] == [call.id]
    # The call fixes the check: the answer names only the character and the faces.
    body = m.CofdCheckRequest(character=character.id, call=call.id, faces=[8, 9, 2])
    answer = ok(
        api("campaigns.campaigns_checks_create").sync(cid, client=alice, body=body), m.Check
    )
    assert answer.outcome == "success", answer.to_dict()

    # The GM reveals the blind roll: now she sees it.
    revealed = ok(
        api("campaigns.campaigns_checks_reveal_create").sync(cid, blind.seq, client=gm), m.Check
    )
    assert revealed.revealed
    seen = ok(
        api("campaigns.campaigns_checks_retrieve").sync(cid, blind.seq, client=alice), m.Check
    )
    assert not seen.redacted and seen.outcome

    # Her feed, the event log and the end of the session.
    checks = ok(api("campaigns.campaigns_checks_list").sync(cid, client=alice), list)
    assert [c.seq for c in checks] == sorted(c.seq for c in checks) and len(checks) == 6
    events = ok(api("campaigns.campaigns_events_list").sync(cid, client=alice), list)
    assert events and all(e.to_dict()["hash"] for e in events)
    ok(api("campaigns.chapters_end").sync(cid, client=gm), m.Period)
    ok(api("campaigns.sessions_end").sync(cid, client=gm), m.Period)

    # The GM's export, checked by the standalone verifier.
    export = api("campaigns.campaigns_export_retrieve").sync(cid, client=gm)
    assert export is not None
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export.to_dict()))
    verified = subprocess.run(
        [sys.executable, "-m", "rolls.trust.verify", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
