"""Exactly-once writes: a key sent with a write (REST `Idempotency-Key`, socket `request_id`) is
recorded with the write's answer in the write's own transaction, so a retry of a committed write
gets the first answer (same status, same body) and a retry of an uncommitted one runs it anew.

Keys are scoped per user and campaign, and per channel: a socket's `request_id` is not the REST
key with the same text (docs/websocket.md). The same key with a different request is refused (422,
code `idempotency_key_reused`). Only successful answers are kept: a refused write changed nothing,
and its retry is simply tried again. Keys older than IDEMPOTENCY_KEY_HOURS are forgotten.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, IntegrityError, connections, transaction
from django.db.models import Field
from django.utils import timezone
from django.utils.translation import gettext as _
from rest_framework.utils.encoders import JSONEncoder

from campaign.errors import DomainError, InvalidInput
from campaign.models import IdempotentRequest
from eventlog import commit, rows

T = TypeVar("T")
MAX_KEY = 255  # characters stored, a channel's prefix included (the column's length)
HEADER = "Idempotency-Key"  # the REST write's key
# The same header as the request's META holds it (WSGI's and Django's ASGI naming): reading it
# there spares `request.headers` building every header's name to find this one (some 330 of a
# check's 51,000 bytecodes, bench/bytecodes.py).
META_KEY = "HTTP_" + HEADER.upper().replace("-", "_")
# A channel's prefix to its keys. REST keys are stored as sent (the token's query reads them:
# accounts/authentication.py); the socket's prefix holds a character that no key may (keys are
# printable, \x1f is not), so no REST key is ever a socket's.
REST = ""
SOCKET = "socket\x1f"
FORM = "form\x1f"  # the pages' form tokens (pages/once.py)


class KeyReused(DomainError):
    status = 422
    code = "idempotency_key_reused"


@dataclass(frozen=True)
class Scope:
    user_id: int
    campaign_id: int  # 0 for writes about no one campaign
    key: str
    fingerprint: str
    channel: str = REST

    @property
    def stored_key(self) -> str:
        return self.channel + self.key


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any
    text: str | None = None  # the body as it was sent (kept as it is: not encoded again)


def fingerprint(*parts: str | bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part if isinstance(part, bytes) else part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def canonical_json(raw: bytes) -> bytes:
    """The same JSON however its keys are ordered or spaced; other bodies as they are."""
    try:
        return json.dumps(json.loads(raw or b"null"), sort_keys=True).encode()
    except ValueError:
        return raw


def check_key(field: str, key: Any, channel: str = REST) -> str:
    longest = MAX_KEY - len(channel)
    if not valid_key(key, longest):
        raise InvalidInput(field, _("must be 1 to {n} printable characters").format(n=longest))
    return key


# Set on a user read with their token: (campaign id, key, the key's row or None), read in the
# same statement (accounts/authentication.py), so the write does not ask again.
_READ_WITH_TOKEN = "_answer_read_with_token"


def valid_key(key: Any, longest: int = MAX_KEY) -> bool:
    return isinstance(key, str) and 0 < len(key) <= longest and key.isprintable()


def answer_columns() -> str:
    """The columns `answer_join` reads (the key's row ``r``)."""
    return rows.columns(IdempotentRequest, "r")


def answer_join(user: str) -> str:
    """The key's recorded row LEFT JOINed to a query's user ``user`` (two parameters: the
    campaign id and the key), for a query that reads the user anyway."""
    return (
        f"LEFT JOIN {IdempotentRequest._meta.db_table} r ON r.user_id = {user}.id "
        "AND r.campaign_id = %s AND r.key = %s"
    )


def remember_answer(user: Any, campaign_id: int, key: str, values: tuple) -> None:
    """Keep what an `answer_join` read for ``user`` (the `answer_columns` values)."""
    setattr(user, _READ_WITH_TOKEN, (campaign_id, key, rows.instance(IdempotentRequest, values)))


def earlier_answer(scope: Scope, field: str, user: Any = None) -> Answer | None:
    """The recorded answer for this key, if any (call inside the write's transaction): read
    with ``user``'s token when it was (`remember_answer`), else in one hand-written query."""
    read = getattr(user, _READ_WITH_TOKEN, None)
    key = scope.stored_key
    if read is not None and read[:2] == (scope.campaign_id, key) and user.pk == scope.user_id:
        row = read[2]
    else:
        meta = IdempotentRequest._meta
        found = rows.fetchone(
            f"SELECT {answer_columns()} FROM {meta.db_table} r "
            "WHERE r.user_id = %s AND r.campaign_id = %s AND r.key = %s",
            (scope.user_id, scope.campaign_id, key),
        )
        row = None if found is None else rows.instance(IdempotentRequest, found)
    if row is None:
        return None
    if row.created_at < _oldest_kept():
        row.delete()
        return None
    if row.fingerprint != scope.fingerprint:
        raise KeyReused(field, _("this key was already used for a different request"))
    return Answer(row.status, None if row.body is None else json.loads(row.body), row.body)


def record(scope: Scope, answer: Answer) -> None:
    """Keep a successful answer, in the caller's transaction. Nothing waits for it, so it goes
    with the COMMIT where the database allows (eventlog/commit.py); if a concurrent request with
    the same key committed first, the unique key refuses it and the whole write is rolled back
    (`once` then runs it again, and finds that request's answer)."""
    if not 200 <= answer.status < 300:
        return
    values = {
        "user_id": scope.user_id,
        "campaign_id": scope.campaign_id,
        "key": scope.stored_key,
        "fingerprint": scope.fingerprint,
        "status": answer.status,
        "created_at": timezone.now(),
        "body": answer,  # last: encoded as the column takes it, not prepared as a field
    }
    fields, sql = _record_statement(tuple(values))
    db = connections[DEFAULT_DB_ALIAS]  # once: each look-up through `connection` costs a µs
    body = _json_text(values.pop("body"))
    params = rows.db_values(fields[:-1], list(values.values()), db)
    commit.write(db, sql, [*params, body], None)


@functools.cache  # the same for every answer kept: built once
def _record_statement(names: tuple[str, ...]) -> tuple[tuple[Field, ...], str]:
    """`record`'s fields, named in ``names``' order, and its INSERT of them."""
    meta = IdempotentRequest._meta
    fields = tuple(meta.get_field(name) for name in names)
    sql = (
        f"INSERT INTO {meta.db_table} ({', '.join(f.column for f in fields)}) "
        f"VALUES ({', '.join(['%s'] * len(fields))})"
    )
    return fields, sql


def _json_text(answer: Answer) -> str:
    """The answer's body as the column keeps it: the text sent, or encoded once as the API
    renders it (UUIDs, times and decimals as DRF's encoder writes them)."""
    return answer.text if answer.text is not None else _encode(answer.body)


_encode = functools.partial(json.dumps, cls=JSONEncoder)


# True while `once` runs an attempt: the write is the whole transaction, and a refusal rolls all
# of it back, so a service inside needs no savepoint of its own (`service_transaction`).
_whole_write: ContextVar[bool] = ContextVar("idempotent_whole_write", default=False)


def once(attempt: Callable[[], T]) -> T:
    """Run `attempt` (which looks up, writes and records) in one transaction. If a concurrent
    request with the same key committed first, everything is rolled back and `attempt` runs again,
    now finding that request's answer (another integrity error meets itself again there)."""
    token = _whole_write.set(True)
    try:
        try:
            with transaction.atomic():
                return attempt()
        except IntegrityError:  # the key's row was refused: a request with it committed first
            with transaction.atomic():
                return attempt()
    finally:
        _whole_write.reset(token)


def service_transaction() -> transaction.Atomic:
    """A service's transaction: its own, or, inside `once`, the key's (no savepoint: two round
    trips fewer, one of them under the stream lock; a refusal still undoes everything, since
    `once` never keeps a transaction whose write was refused)."""
    return transaction.atomic(savepoint=not _whole_write.get())


def forget_old_keys() -> int:
    """Delete keys past their retention (`manage.py forget_idempotency_keys`, e.g. daily)."""
    deleted, _ = IdempotentRequest.objects.filter(created_at__lt=_oldest_kept()).delete()
    return deleted


def _oldest_kept():
    return timezone.now() - timedelta(hours=settings.IDEMPOTENCY_KEY_HOURS)
