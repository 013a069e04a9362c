"""Property-based fuzzing of the REST API from its own OpenAPI schema: no request, valid or not,
makes the server answer 5xx.

Schemathesis reads /api/schema/ (drf-spectacular) from the app in-process (WSGI, so each request
runs on the test's own database connection, inside its transaction) and generates requests for
every operation. They are sent as the GM of a real table — an open session and chapter, alice's
and boris's characters, checks of every visibility, an open call — and the path parameters are
pointed at those objects, so the generated bodies and queries reach the services instead of
stopping at a 404. Each example runs in a savepoint that is rolled back, so every one meets the
same table. Only the no-5xx check is asserted: the schema's other mismatches are reported, not
gated on here.
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
from schemathesis.checks import not_a_server_error

from rolls.checks import calls as roll_calls
from tests.api.conftest import TRAITS, World

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
    """Aim the generated ids at the table's objects; values of the wrong type are left alone."""
    characters = [str(c.pk) for c in world.characters.values()]
    real = {
        "campaign_id": [world.cid],
        "seq": sorted(world.checks.values()),
        "character_id": characters,
        "user_id": [world.users[name].pk for name in ("alice", "boris", "olga", "gm")],
        "call_id": [world.extra["call_id"]],
    }
    for name, generated in list((case.path_parameters or {}).items()):
        if name in real:
            case.path_parameters[name] = _real(real[name], generated)
    _aim(case.body, characters, real["call_id"])


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
    point_at_the_table(case, table)
    with transaction.atomic():
        response = case.call(headers={"Authorization": f"Token {table.tokens['gm']}"})
        transaction.set_rollback(True)
    case.validate_response(response, checks=[not_a_server_error])
