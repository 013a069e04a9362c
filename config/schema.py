"""The OpenAPI schema's parts that no single view declares: every status code an operation can
answer besides its success, and the one shape of an error body (config/apierrors.py,
campaign/api/errors.py): ``{"code": …, "detail"?: …, "<field>": ["message"], …}``.

Which codes an operation can answer follows from what runs before and around its view, the same
for every view, so it is decided here once:
- 400 everywhere: the middleware refuses a NUL in any query; bodies and query parameters are
  validated; a write's ``Idempotency-Key`` is checked.
- 401 with ``WWW-Authenticate: Token`` everywhere: a bad or revoked token is refused on any
  operation, and operations that need a signed-in user refuse a request without credentials.
- 403 for operations that need a signed-in user (a CSRF failure with the session cookie) and
  for campaign operations (the member's role may not allow it).
- 404 for operations with path parameters (a campaign you are not a member of is a 404).
- 409 for writes in a campaign (the rules refuse: an allowance used, no open session…).
- 413, 415 for operations that read a body; 429 for writes (WRITE_RATE) and sign-in (lockout).
- 503 everywhere: the database is busy or unreachable (config/outage.py).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from rest_framework.permissions import AllowAny

ERROR_REF = {"$ref": "#/components/schemas/Error"}

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": (
        "An error: `code` names the kind (invalid, permission_denied, not_found, conflict, "
        "too_large, throttled, busy, unavailable…); every other key but `detail`, `at` and "
        "`suggestions` is a field of the request (dotted for nested fields: `traits.skills`, "
        "`modifiers.0`) with its messages, in the request's language."
    ),
    "properties": {
        "code": {"type": "string"},
        "detail": {"type": "string", "description": "a message not about one field"},
        "at": {
            "type": "object",
            "description": "roll box errors: where in the line (start, end, word)",
            "additionalProperties": True,
        },
        "field": {"type": "string", "nullable": True, "description": "roll box errors"},
        "suggestions": {"type": "array", "items": {}, "description": "roll box errors"},
        "seq": {"type": "integer", "description": "history_changed: the event the client saw"},
        "hash": {"type": "string", "description": "history_changed: the hash the client saw"},
        "head": {"type": "integer", "description": "history_changed: the log's head now"},
    },
    "required": ["code"],
    "additionalProperties": {"type": "array", "items": {"type": "string"}},
}

DESCRIPTIONS = {
    "400": "Invalid request: the body names the fields and why",
    "401": "Not signed in (no credentials, or a bad or revoked token); see WWW-Authenticate",
    "403": "Not allowed (the role, the character's owner), or the session's CSRF token missing",
    "404": "No such object, or a campaign you are not a member of",
    "409": "The rules or the table's state refuse it now",
    "413": "The body is larger than MAX_BODY_BYTES",
    "415": "The body is not JSON",
    "429": "Too many writes or sign-in failures; see Retry-After",
    "503": "The database is busy or unavailable; retry (with the same Idempotency-Key)",
}

WRITES = ("POST", "PUT", "PATCH", "DELETE")

# Schemas the views build from the validating code's own tables (a check request per system, the
# rule options per system), added to the components by the hook below.
COMPONENTS: dict[str, dict[str, Any]] = {}


def component(name: str, schema: dict[str, Any]) -> dict[str, str]:
    """Register ``schema`` as the component ``name``; returns the reference to it."""
    COMPONENTS[name] = schema
    return {"$ref": f"#/components/schemas/{name}"}


def json_body(schema: dict[str, Any]) -> dict[str, Any]:
    """An ``extend_schema(request=…)`` value: a JSON body of this (raw) schema."""
    return {"application/json": schema}


class AutoSchema(SpectacularAutoSchema):
    def error_statuses(self) -> list[str]:
        codes = ["400", "401", "503"]
        public = any(isinstance(p, AllowAny) for p in self.view.get_permissions())
        in_campaign = "{campaign_id}" in self.path
        if not public or in_campaign:
            codes.append("403")
        if "{" in self.path or self.path.endswith("/join/"):
            codes.append("404")
        if self.method in WRITES:
            codes += ["413", "415"]
            if not public:
                codes.append("429")
            if in_campaign or self.path.endswith("/join/"):
                codes.append("409")
        if public and self.method == "POST":  # sign-in: django-axes' lockout
            codes.append("429")
        codes += getattr(self.view, "error_statuses", ())  # what a view answers besides
        return sorted(set(codes))

    def _get_request_body(self, direction="request"):
        body = super()._get_request_body(direction)
        if body and self.method == "POST" and isinstance(self.get_request_serializer(), dict):
            body["required"] = True  # a raw schema (json_body): the view reads a JSON object
        return body

    def _get_response_bodies(self, direction="response") -> dict[str, Any]:
        responses = super()._get_response_bodies(direction)
        for code in self.error_statuses():
            responses.setdefault(
                code,
                {
                    "description": DESCRIPTIONS[code],
                    "content": {"application/json": {"schema": ERROR_REF}},
                },
            )
        return responses


def add_error_component(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Postprocessing hook: the Error component the responses refer to, and request bodies that
    refuse unknown keys say so (every body is read by a serializer or a key table that refuses
    them: campaign.api.views.body, rolls.checks.requests.refuse_unknown_fields)."""
    components = result.setdefault("components", {}).setdefault("schemas", {})
    components["Error"] = ERROR_SCHEMA
    components.update(COMPONENTS)
    for name, schema in components.items():
        if name.endswith("Request") and schema.get("type") == "object":
            schema.setdefault("additionalProperties", False)
        if name.endswith("Request"):
            _body_limits(schema)
    for path in result.get("paths", {}).values():
        for operation in path.values():
            for media in operation.get("requestBody", {}).get("content", {}).values():
                _body_limits(media.get("schema", {}))
    return result


def _body_limits(schema: Any, most: int | None = None) -> None:
    """What campaign/limits.py refuses in any body, said in the schema: text without NUL and of
    at most MAX_STRING characters, integers within ±MAX_INT, lists of at most MAX_ITEMS (``most``:
    MAX_FACES for the faces of physical dice)."""
    from campaign.limits import FACES, MAX_FACES, MAX_INT, MAX_ITEMS, MAX_STRING

    most = MAX_ITEMS if most is None else most
    if isinstance(schema, list):
        for item in schema:
            _body_limits(item, most)
        return
    if not isinstance(schema, dict):
        return
    kind = schema.get("type")
    if kind == "string" and "enum" not in schema and "format" not in schema:
        schema.setdefault("pattern", "^[^\\u0000]*$")
        schema["maxLength"] = min(schema.get("maxLength", MAX_STRING), MAX_STRING)
    elif kind == "integer":
        schema["minimum"] = max(schema.get("minimum", -MAX_INT), -MAX_INT)
        schema["maximum"] = min(schema.get("maximum", MAX_INT), MAX_INT)
    elif kind == "array":
        schema["maxItems"] = min(schema.get("maxItems", most), most)
    for name, child in schema.get("properties", {}).items():
        _body_limits(child, MAX_FACES if name in FACES else MAX_ITEMS)
    for key in ("items", "additionalProperties", "oneOf", "anyOf", "allOf"):
        _body_limits(schema.get(key), most)
