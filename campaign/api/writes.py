"""The API's write views: each waits for a writer slot of its campaign (eventlog/writers.py), and
a write sent with an `Idempotency-Key` header happens at most once (campaign/idempotency.py): its
retries get the first answer again, marked `Idempotent-Replayed: true`."""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from campaign import idempotency
from eventlog.writers import writer_slot

HEADER, META_KEY = idempotency.HEADER, idempotency.META_KEY


class _Replay(Exception):
    def __init__(self, answer: idempotency.Answer) -> None:
        self.answer = answer


class WriteView(APIView):
    _key: str | None = None
    _fingerprint = ""
    _scope: idempotency.Scope | None = None

    def dispatch(self, request, *args: Any, **kwargs: Any):
        if request.method in SAFE_METHODS:
            return super().dispatch(request, *args, **kwargs)
        with writer_slot(kwargs.get("campaign_id")):
            self._key = request.META.get(META_KEY)
            if self._key is None:
                return super().dispatch(request, *args, **kwargs)
            body = idempotency.canonical_json(request.body)
            self._fingerprint = idempotency.fingerprint(request.method, request.path, body)
            return idempotency.once(lambda: self._dispatch_once(request, *args, **kwargs))

    def _dispatch_once(self, request, *args: Any, **kwargs: Any):
        self._scope = None
        response = super().dispatch(request, *args, **kwargs)
        if self._scope is not None:  # not replayed, not refused before the handler ran
            # Rendered here, once: the answer kept for the key is the text sent. A 204 sends no
            # text, which is no JSON: it is kept as its body, null (and replayed as no text).
            sent = response.render().content if 200 <= response.status_code < 300 else b""
            text = sent.decode() or None
            answer = idempotency.Answer(response.status_code, response.data, text)
            idempotency.record(self._scope, answer)
        return response

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)  # authenticated and allowed: whose key is it?
        if self._key is None or request.method in SAFE_METHODS:
            return
        scope = idempotency.Scope(
            user_id=request.user.pk,
            campaign_id=kwargs.get("campaign_id") or 0,
            key=idempotency.check_key(HEADER, self._key),
            fingerprint=self._fingerprint,
        )
        answer = idempotency.earlier_answer(scope, HEADER, request.user)
        if answer is not None:
            raise _Replay(answer)
        self._scope = scope

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, _Replay):
            return Response(
                exc.answer.body, status=exc.answer.status, headers={"Idempotent-Replayed": "true"}
            )
        return super().handle_exception(exc)
