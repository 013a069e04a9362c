"""Plain HTML form posts, written at most once (the pages' side of campaign/idempotency.py).

Every form that writes carries a fresh token in a hidden field (`{% form_token %}`, made when
the page is rendered). Its write runs through the idempotency store, keyed by the token for the
user and the campaign, in the write's own transaction: a second submission of the same form (a
double click, a browser's retry after a lost answer) writes nothing and is sent where the first
one went (POST, redirect, GET). The same token with other fields is refused (422), and a write
that failed (the form comes back with its errors) is not kept: it is tried again.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect

from campaign import idempotency
from campaign.errors import DomainError

FIELD = "form_token"
NOT_SIGNED = ("csrfmiddlewaretoken", FIELD)  # what differs between two tabs of one form


def new_token() -> str:
    return uuid.uuid4().hex


def once(
    request: HttpRequest,
    write: Callable[[], HttpResponse],
    *,
    campaign_id: int = 0,
    remember: Callable[[HttpResponse], dict] | None = None,
) -> HttpResponse:
    """Run ``write`` (a form's POST handler, which redirects when it succeeds) at most once per
    form token. ``remember`` adds to what is kept of a success; the answer carries what was
    kept as ``kept`` (a repeat's too), for what is to be shown after the transaction (e.g. a
    secret shown only once: a lost first answer must not lose it)."""
    token = request.POST.get(FIELD)
    if not token or not request.user.is_authenticated:
        return write()  # a form from a page older than the tokens: as before
    try:
        token = idempotency.check_key(FIELD, token, idempotency.FORM)
    except DomainError as error:
        return HttpResponse(f"{FIELD}: {error.message}", status=400, content_type="text/plain")
    fields = {
        name: values for name, values in sorted(request.POST.lists()) if name not in NOT_SIGNED
    }
    scope = idempotency.Scope(
        user_id=request.user.pk,
        campaign_id=campaign_id,
        key=token,
        fingerprint=idempotency.fingerprint("form", request.path, json.dumps(fields)),
        channel=idempotency.FORM,  # not a REST key "form:…", and the prefix counts in its length
    )

    def attempt() -> HttpResponse:
        earlier = idempotency.earlier_answer(scope, FIELD)
        if earlier is not None:
            response = redirect(earlier.body["location"])
            response.kept = earlier.body
            return response
        response = write()
        if isinstance(response, HttpResponseRedirect):  # it succeeded: keep where it went
            kept = {"location": response["Location"], **(remember(response) if remember else {})}
            idempotency.record(scope, idempotency.Answer(200, kept))
            response.kept = kept
        return response

    try:
        return idempotency.once(attempt)
    except idempotency.KeyReused as error:
        return HttpResponse(error.message, status=error.status, content_type="text/plain")
