"""Property-based fuzzing of the REST API from its own OpenAPI schema with every check
schemathesis has (the pytest equivalent of `schemathesis run --checks all`): no 5xx, every status
code and content type documented, every answer matching its schema, schema-valid requests
accepted and schema-invalid ones refused, unsupported methods answered 405, and no operation that
ignores a missing or wrong credential.

Schemathesis reads /api/schema/ (drf-spectacular) from the app in-process (WSGI, so each request
runs on the test's own database connection, inside its transaction) and generates requests for
every operation. They are sent as the GM of a real table — an open session and chapter, alice's
and boris's characters, checks of every visibility, an open call — and the path parameters are
pointed at those objects, so the generated bodies and queries reach the services instead of
stopping at a 404. Each example runs in a savepoint that is rolled back, so every one meets the
same table.

What a schema cannot know is which names and ids exist: a generated request that is valid by the
schema (positive) gets the table's real ones — ids of its objects, trait names of its sheets, a
line of the roll box, a public webhook URL, a user's credentials — and keeps only the check keys
of the table's game system (the schema offers every system's; the campaign's decides). Requests
generated to be invalid (negative) keep whatever they were given besides the ids in their path.
A fixed seed (derandomize) and 20 examples per operation keep the run the same on every run.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable
from typing import Any

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, transaction
from hypothesis import HealthCheck, settings
from schemathesis.core.parameters import ParameterLocation
from schemathesis.specs.openapi.checks import ignored_auth, negative_data_rejection

from rolls.checks import calls as roll_calls
from rolls.checks.requests import roll_request_keys
from tests.api.conftest import SHEETS, TRAITS, World

CONFIG = schemathesis.config.SchemathesisConfig.from_dict(
    {
        "generation": {
            "mode": "all",  # valid requests and invalid ones
            "max-examples": 20,
            "deterministic": True,  # the same examples on every run: a stable gate
            "database": "none",
        },
        # The coverage phase enumerates boundary values per field; over the ~40 operations it
        # would take minutes. The examples and fuzzing phases stay on.
        "phases": {"coverage": {"enabled": False}, "stateful": {"enabled": False}},
    }
)


class InProcessWSGI:
    """Django's WSGI handler for in-process calls inside a test transaction.

    The real handler closes "old" database connections when a request starts and finishes; in a
    test that would close the connection holding the test's transaction (Django's test client
    disconnects that handler for the same reason)."""

    def __init__(self) -> None:
        self.handler = WSGIHandler()

    def __call__(self, environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        request_started.disconnect(close_old_connections)
        request_finished.disconnect(close_old_connections)
        try:
            response = self.handler(environ, start_response)
            try:
                return [b"".join(response)]
            finally:
                response.close()
        finally:
            request_started.connect(close_old_connections)
            request_finished.connect(close_old_connections)


APP = InProcessWSGI()
# Generating the schema needs no database; loading it here gives one test per operation, which
# pytest-xdist can spread over its workers.
schema = schemathesis.openapi.from_wsgi("/api/schema/", APP, config=CONFIG)


@pytest.fixture
def table(build_world) -> World:
    world = build_world("cofd")
    call = roll_calls.call_for_check(
        campaign=world.campaign,
        actor=world.users["gm"],
        character_ids=[str(world.characters["alice"].pk)],
        request={"traits": ["Wits"]},
    )
    world.extra["call_id"] = str(call.pk)
    world.client("gm")  # creates the GM's token
    return world


def _real(values: list[Any], generated: Any) -> Any:
    """One of the table's real objects, chosen by the generated value (so it still varies)."""
    return values[zlib.crc32(repr(generated).encode()) % len(values)]


def point_at_the_table(case: schemathesis.Case, world: World) -> None:
    """Aim the generated ids at the table's objects; values of the wrong type are left alone.
    A positive case's body gets the table's names too (see the module's docstring)."""
    characters = [str(c.pk) for c in world.characters.values()]
    real = {
        "campaign_id": [world.cid],
        "seq": sorted(world.checks.values()),
        "character_id": characters,
        "user_id": [world.users[name].pk for name in ("alice", "boris", "olga", "gm")],
        "call_id": [world.extra["call_id"]],
    }
    for name, generated in list((case.path_parameters or {}).items()):
        # An id of the type the path takes is aimed; one a negative case mutated into another
        # type (a string for an integer id) stays, so the case stays invalid.
        if name in real and type(generated) is type(real[name][0]):
            case.path_parameters[name] = _real(real[name], generated)
    _aim(case.body, characters, real["call_id"])
    if case.meta is not None and case.meta.generation.mode.is_positive:
        _name_things(case, world)


def _name_things(case: schemathesis.Case, world: World) -> None:
    body = case.body
    if not isinstance(body, dict):
        return
    path = case.operation.path
    system = world.system
    if path.endswith(("/checks/", "/checks/odds/")):
        _keep_system_keys(body, roll_request_keys(system))
        body.pop("faces", None)  # the table rolls on the server
        body.pop("call", None)  # a call fixes the check: answered in its own test
        body.pop("helpers", None)
        body.pop("specialty", None)
        body.pop("focus", None)
        body.pop("actions", None)  # storyteller only
        body.pop("against", None)
        body.pop("willpower", None)  # the sheets have no Willpower to spend
        if not body.get("traits") and body.get("pool") is None:
            body["traits"] = TRAITS[system][:1]
        body["character"] = str(world.characters["alice"].pk)
        _within_the_dice_limit(body)
    elif path.endswith("/calls/") and isinstance(body.get("request"), dict):
        request = body["request"]
        _keep_system_keys(request, roll_request_keys(system))
        for key in ("specialty", "focus", "helpers", "actions", "against", "faces", "call"):
            request.pop(key, None)
        if not request.get("traits") and request.get("pool") is None:
            request["traits"] = TRAITS[system][:1]
        _within_the_dice_limit(request)
    elif path.endswith("/checks/parse/"):
        body["text"] = "Wits + Occult"
        body.pop("target", None)
        body.pop("characters", None)  # instead of character: a GM's group (test_rollbox.py)
        body["character"] = str(world.characters["alice"].pk)
    elif path.endswith("/favourites/"):
        body["text"] = "Wits + Occult"
    elif path.endswith("/webhooks/"):
        body["url"] = "https://example.com/hook"
    elif path.endswith("/auth/token/"):
        body.update(username="gm", password="gm-password")
    elif path.endswith("/join/"):
        body["invite_code"] = world.campaign.invite_code
    elif path.endswith("/tasks/reset/"):
        body["character"] = str(world.characters["alice"].pk)
    elif "/characters/" in path and case.method in ("POST", "PATCH") and path.endswith("}/"):
        _sheet(body, system)
        if body.get("owner_id") is not None:
            body["owner_id"] = world.users["alice"].pk
    elif path.endswith("/characters/") and case.method == "POST":
        _sheet(body, system)
        body.pop("owner_id", None)
    elif path.endswith("/checks/{seq}/again/"):
        body.pop("faces", None)
    if path.endswith("/campaigns/{campaign_id}/") and isinstance(body.get("options"), dict):
        options = body["options"]
        from rolls.systems.options import option_table

        table = option_table(system)
        for key in list(options):
            if key not in table:
                del options[key]


def _within_the_dice_limit(body: dict[str, Any]) -> None:
    """The assembled pool (traits + pool + modifiers) is capped at MAX_DICE (assembly.py): a sum
    of fields the schema cannot state, so a positive case's numbers are scaled into it."""
    if isinstance(body.get("pool"), int):
        body["pool"] = max(-10, min(10, body["pool"]))
    for index, modifier in enumerate(body.get("modifiers") or []):
        if isinstance(modifier, int):
            body["modifiers"][index] = max(-10, min(10, modifier))
        elif isinstance(modifier, dict) and isinstance(modifier.get("value"), int):
            modifier["value"] = max(-10, min(10, modifier["value"]))
    if isinstance(body.get("modifiers"), list):
        del body["modifiers"][4:]


def _keep_system_keys(body: dict[str, Any], allowed: set[str]) -> None:
    for key in list(body):
        if key not in allowed:
            del body[key]


def _sheet(body: dict[str, Any], system: str) -> None:
    if "traits" in body:
        body["traits"] = SHEETS[system]
    body.pop("resources", None)


def _aim(body: Any, characters: list[str], calls: list[str]) -> None:
    if not isinstance(body, dict):
        return
    if isinstance(body.get("character"), str):
        body["character"] = _real(characters, body["character"])
    if isinstance(body.get("call"), str):
        body["call"] = _real(calls, body["call"])
    if isinstance(body.get("characters"), list):
        body["characters"] = [_real(characters, value) for value in body["characters"]]
    traits = body.get("traits")
    if isinstance(traits, list) and all(isinstance(name, str) for name in traits):
        body["traits"] = [_real(TRAITS["cofd"], name) for name in traits]
    _aim(body.get("request"), characters, calls)  # a call for a check carries a roll request


@schema.parametrize()
@settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_no_request_makes_the_server_fail(case: schemathesis.Case, table: World) -> None:
    # A path generated invalid (an id below its minimum) is aimed at the table like any other:
    # what is left invalid of the case may then be only an unknown query parameter, which every
    # view ignores, so the check that such a case is refused no longer applies to it (the
    # events' `type` enum brought one, 2026-12-07). Every other check does.
    excluded = [ignored_auth]
    if case.meta is not None and case.meta.is_negative_at(ParameterLocation.PATH):
        excluded.append(negative_data_rejection)
    point_at_the_table(case, table)
    headers = {"Authorization": f"Token {table.tokens['gm']}"}
    with transaction.atomic():
        response = case.call(headers=headers)
        # Every built-in check (the configuration enables them all); those that send requests
        # of their own (without the credential, with methods the path lacks) run inside the
        # savepoint too.
        try:
            case.validate_response(response, headers=headers, excluded_checks=excluded)
            if response.status_code != 404:  # the path names something that exists
                refuses_a_wrong_token(case)
        finally:
            transaction.set_rollback(True)


def refuses_a_wrong_token(case: schemathesis.Case) -> None:
    """What schemathesis' ignored_auth checks, without its one false alarm here: it spoils the
    session cookie while the valid token still stands (either signs in, as the schema says)."""
    if case.operation.path in ("/api/auth/token/",) and case.method == "POST":
        return
    if case.operation.path in ("/api/schema/", "/api/docs/"):
        return
    for header in ({}, {"Authorization": "Token not-a-token"}):
        response = case.call(headers=header)
        assert response.status_code == 401, (case.method, case.path, response.status_code)
        assert response.headers["www-authenticate"] == ["Token"], (case.method, case.path)
