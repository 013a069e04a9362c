"""The API schema's check request fields say what the rules accept: each system's request keys
are the ones the roll service lets through (one table), and each bounded integer or boolean field
is accepted at its schema's bounds and refused, naming the field, just past them (assembly.py)."""

from __future__ import annotations

from typing import Any

import pytest

from rolls.checks.assembly import RollContext, assemble
from rolls.checks.requests import request_field_schemas, roll_request_keys
from rolls.systems import SYSTEM_IDS
from rolls.systems.errors import RuleError
from rolls.systems.options import default_options

# Keys another module checks (the roller, the services), with the database: not assembly's.
ELSEWHERE = {
    "character",
    "traits",
    "visibility",
    "label",
    "task",
    "faces",
    "call",
    "client_seed",
    "helpers",
    "against",
    "actions",
    "mode",
    "specialty",
    "focus",
    "modifiers",
    "resistance",  # read from the resisting sheet by the service (requests.read_resistance)
}


def _assemble(system: str, **fields: Any) -> None:
    request = {"pool": 10, **fields}  # enough dice for an automatic success
    state = RollContext(life_or_death_allowed=True)
    assemble(system, None, request, default_options(system), state)


def _bounded(system: str) -> list[tuple[str, dict[str, Any]]]:
    fields = request_field_schemas(system)
    keys = sorted(roll_request_keys(system) - ELSEWHERE - {"pool"})
    return [(key, fields[key]) for key in keys]


CASES = [
    pytest.param(system, key, schema, id=f"{system}.{key}")
    for system in SYSTEM_IDS
    for key, schema in _bounded(system)
]


def test_every_key_the_service_takes_has_a_schema() -> None:
    for system in SYSTEM_IDS:
        assert roll_request_keys(system) <= set(request_field_schemas(system)), system


@pytest.mark.parametrize(("system", "key", "schema"), CASES)
def test_a_request_field_is_accepted_within_its_schema_and_refused_past_it(
    system: str, key: str, schema: dict[str, Any]
) -> None:
    if "enum" in schema:
        for value in schema["enum"]:
            _assemble(system, **{key: value})
        with pytest.raises(RuleError) as refused:
            _assemble(system, **{key: 7})
        assert refused.value.field == key
    elif schema.get("type") == "integer":
        for value in (schema["minimum"], schema["maximum"]):
            _assemble(system, **{key: value})
        for value in (schema["minimum"] - 1, schema["maximum"] + 1):
            with pytest.raises(RuleError) as refused:
                _assemble(system, **{key: value})
            assert refused.value.field == key, value
    else:
        assert schema.get("type") == "boolean", (key, schema)
        for value in (True, False):
            _assemble(system, **{key: value})
        with pytest.raises(RuleError) as refused:
            _assemble(system, **{key: "yes"})
        assert refused.value.field == key


@pytest.mark.parametrize("system", SYSTEM_IDS)
def test_the_pool_is_accepted_within_its_schema(system: str) -> None:
    schema = request_field_schemas(system)["pool"]
    for value in (schema["minimum"], schema["maximum"]):
        try:
            _assemble(system, pool=value)
        except RuleError as error:  # the total may pass the engine's own limit, not the field's
            assert error.field != "pool" or "pool" not in str(error.template), error
    with pytest.raises(RuleError) as refused:
        _assemble(system, pool=schema["maximum"] + 1)
    assert refused.value.field == "pool"
