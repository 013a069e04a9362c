"""The OpenAPI schema is generated without a warning (drf-spectacular drops what it warns about:
a parameter it cannot describe is left out of the schema, and of the clients made from it), and
it lists what the server accepts where it can: the events' `type` filter, the event vocabulary."""

from __future__ import annotations

import io
import json

from django.core.management import call_command

from eventlog.event_types import ALL_TYPES


def test_the_schema_generates_valid_and_without_warnings(db) -> None:
    out = io.StringIO()
    call_command(
        "spectacular", "--validate", "--fail-on-warn", "--format", "openapi-json", stdout=out
    )
    schema = json.loads(out.getvalue())
    events = next(
        operation["get"] for path, operation in schema["paths"].items() if path.endswith("/events/")
    )
    (types,) = [p for p in events["parameters"] if p["name"] == "type"]
    assert types["schema"]["type"] == "array"
    assert sorted(types["schema"]["items"]["enum"]) == sorted(ALL_TYPES)
