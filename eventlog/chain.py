"""The hash chain of the event log, in plain Python so that a standalone verifier can use it.

Each event's hash is SHA-256 over a canonical JSON of the event's document (`HASHED_FIELDS`) and
the previous event's hash; the first event of a campaign chains to GENESIS. Changing, removing or
reordering any event changes every hash after it. `event_document` is the one place that turns an
event's stored values into that document (the server's append, its stored-log check and exports
all call it); `document_hash` is the one place that hashes it.

An event that not everyone may see (visibility other than ``public``) is *sealed*: its payload
carries a secret random ``salt``, and its hashed document holds, instead of the payload and the
character, only ``{"sealed": sha256(canonical({"payload", "character"}))}`` plus the few payload
keys that must stay public (``SEALED_PUBLIC_KEYS``: the commitment to the next roll's key). A
redacted copy (what a player sees of a blind roll) is exactly that hashed document: its place
in the chain is checked, and nothing about its content can be guessed from its hash, since every
guess would need the salt (docs/verification.md §3).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from functools import cache
from typing import Any
from uuid import UUID

GENESIS = "0" * 64
_CHAIN_HASH = re.compile("[0-9a-f]{64}")
SALT_BYTES = 16
# Payload keys a sealed event shows to everyone: the key commitment chains the next roll to it.
SEALED_PUBLIC_KEYS = ("next_key",)
HASHED_FIELDS = (
    "campaign",
    "seq",
    "type",
    "payload",
    "actor",
    "created_at",
    "visibility",
    "session",
    "scene",
    "chapter",
    "character",
    "prev_hash",
)


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class CanonicalEncoder(json.JSONEncoder):
    """Stores a payload as the hash covers it (keys sorted, no spaces), so that a database that
    keeps JSON as text (SQLite) hands the chain check the very bytes it hashes."""

    def __init__(self, **options: Any) -> None:
        options.update(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        super().__init__(**options)


def is_chain_hash(value: Any) -> bool:
    """64 lowercase hex digits: what a hash of the chain looks like."""
    return isinstance(value, str) and _CHAIN_HASH.fullmatch(value) is not None


def is_sealed(visibility: Any) -> bool:
    return visibility != "public"


def sealed_payload(payload: Any, character: str | None) -> dict[str, Any]:
    """What a sealed event's hashed document holds in place of its payload and character."""
    digest = hashlib.sha256(
        canonical_json({"payload": payload, "character": character}).encode()
    ).hexdigest()
    public = {key: payload[key] for key in SEALED_PUBLIC_KEYS if key in payload}
    return {"sealed": digest, **public}


def hashed_document(document: Mapping[str, Any]) -> dict[str, Any]:
    """What an event's hash covers: its `HASHED_FIELDS`, sealed when it is hidden. A redacted
    copy (``"redacted": true``) already is its sealed document and is taken as it is."""
    body = {name: document[name] for name in HASHED_FIELDS}
    if is_sealed(body["visibility"]) and not document.get("redacted"):
        body["payload"] = sealed_payload(body["payload"], body["character"])
        body["character"] = None
    return body


def timestamp(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def _text(value: UUID | str | None) -> str | None:
    return None if value is None else str(value)


def event_document(
    campaign: int,
    seq: int,
    type: str,
    payload: Any,
    actor: int | None,
    created_at: datetime,
    visibility: str,
    session: UUID | str | None,
    scene: UUID | str | None,
    chapter: UUID | str | None,
    character: UUID | str | None,
    prev_hash: str,
    hash: str | None = None,
) -> dict[str, Any]:
    """An event's stored values as the plain document that is hashed, exported and verified
    (ids as text, the time in ISO 8601 UTC with microseconds); ``hash`` is added when given."""
    document = {
        "campaign": campaign,
        "seq": seq,
        "type": type,
        "payload": payload,
        "actor": actor,
        "created_at": timestamp(created_at),
        "visibility": visibility,
        "session": _text(session),
        "scene": _text(scene),
        "chapter": _text(chapter),
        "character": _text(character),
        "prev_hash": prev_hash,
    }
    if hash is not None:
        document["hash"] = hash
    return document


UNPARSED = object()  # `stored_text_hash`'s caller has not decoded the text


def stored_text_hash(
    *,
    campaign: int,
    seq: int,
    type: str,
    text: str,
    actor: int | None,
    created_at: str,
    visibility: str,
    session: str | None,
    scene: str | None,
    chapter: str | None,
    character: str | None,
    prev_hash: str,
    parsed: Any = UNPARSED,
) -> str:
    """`document_hash` of an event whose payload is at hand as its stored canonical JSON
    ``text`` (ids and ``created_at`` as the document's text): the document's text is assembled
    around it, keys in sorted order, and hashed once, with no JSON encoding — the rebuild's and
    the verifier's fast path. Equal to `document_hash` whenever the text is canonical (callers
    compare, and go the long way when it is not). A sealed event's digest is taken over the text
    the same way (``parsed``: the text decoded, if the caller has it); "" when a sealed payload is
    not a JSON object (the long way says what is wrong)."""
    if visibility != "public":  # sealed (`is_sealed`): sealed_payload, on the text
        inner = f'{{"character":{_quoted(character)},"payload":{text}}}'
        digest = hashlib.sha256(inner.encode()).hexdigest()
        if parsed is UNPARSED:
            try:
                parsed = json.loads(text)
            except ValueError:
                return ""
        if not isinstance(parsed, dict):
            return ""
        text, character = _sealed_text(digest, parsed), None
    # The ids quoted here, not by `_quoted`: a call per id was a tenth of a rebuild's hashing.
    session = "null" if session is None else '"' + session + '"'
    scene = "null" if scene is None else '"' + scene + '"'
    chapter = "null" if chapter is None else '"' + chapter + '"'
    character = "null" if character is None else '"' + character + '"'
    document = (
        f'{{"actor":{"null" if actor is None else int(actor)},"campaign":{campaign},'
        f'"chapter":{chapter},"character":{character},'
        f'"created_at":"{created_at}","payload":{text},'
        f'"prev_hash":"{prev_hash}","scene":{scene},"seq":{seq},'
        f'"session":{session},"type":{json_text(type)},'
        f'"visibility":{json_text(visibility)}}}'
    )
    return hashlib.sha256(document.encode()).hexdigest()


def _sealed_text(digest: str, payload: dict[str, Any]) -> str:
    """`canonical_json` of a sealed event's hashed payload: the digest and the public keys. A
    key commitment that is a chain-like hash needs no escaping and is written as it is (the
    case of every sealed roll; a rebuild hashes a million of them)."""
    public = {key: payload[key] for key in SEALED_PUBLIC_KEYS if key in payload}
    if not public:
        return f'{{"sealed":"{digest}"}}'
    if len(public) == 1 and is_chain_hash(public.get("next_key")):
        return f'{{"next_key":"{public["next_key"]}","sealed":"{digest}"}}'
    return canonical_json({"sealed": digest, **public})


def _quoted(value: str | None) -> str:
    return "null" if value is None else f'"{value}"'


@cache
def json_text(value: str) -> str:
    """A string as canonical JSON (event types and visibilities: a handful of values)."""
    return json.dumps(value, ensure_ascii=False)


def document_hash(document: Mapping[str, Any]) -> str:
    """The chain hash of an event document (only `HASHED_FIELDS` count, sealed when the event is
    hidden: `hashed_document`; raises KeyError when one is missing)."""
    return hashlib.sha256(canonical_json(hashed_document(document)).encode()).hexdigest()
