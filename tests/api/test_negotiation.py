"""The API's content negotiation (config/negotiation.py) answers as DRF's own does, for any
Accept header and format a client sends: it only remembers the answer."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer, TemplateHTMLRenderer
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from config.negotiation import RememberedNegotiation

MEDIA = [
    "*/*",
    "application/json",
    "application/json; indent=4",
    "text/html",
    "text/html;q=0.9",
    "application/*",
    "text/*;q=0.5",
    "application/xml",
    "image/png",
    "application/json;q=0",
]
ACCEPT = st.one_of(
    st.lists(st.sampled_from(MEDIA), min_size=1, max_size=4).map(", ".join),
    st.text(max_size=20),
    st.lists(st.sampled_from(MEDIA), min_size=40, max_size=80).map(",".join),  # not remembered
)
RENDERERS = st.sampled_from(
    [
        (JSONRenderer, BrowsableAPIRenderer),
        (JSONRenderer,),
        (BrowsableAPIRenderer, JSONRenderer),
        (TemplateHTMLRenderer, JSONRenderer),
    ]
)


def _answer(negotiation, accept: str, wanted: str | None, classes, suffix: str | None):
    query = {} if wanted is None else {"format": wanted}
    request = Request(APIRequestFactory().get("/", query, HTTP_ACCEPT=accept))
    try:
        renderer, media_type = negotiation.select_renderer(
            request, [cls() for cls in classes], suffix
        )
    except Exception as error:  # the refusal itself is compared
        return type(error)
    return type(renderer), media_type


@settings(max_examples=400, deadline=None)
@given(
    accept=ACCEPT,
    wanted=st.sampled_from([None, "json", "api", "xml", ""]),
    suffix=st.sampled_from([None, None, "json", "html"]),
    classes=RENDERERS,
)
def test_the_remembered_answer_is_drfs_answer(accept, wanted, suffix, classes):
    for _ in range(2):  # the first answer worked out, the second remembered
        assert _answer(RememberedNegotiation(), accept, wanted, classes, suffix) == _answer(
            DefaultContentNegotiation(), accept, wanted, classes, suffix
        )


@pytest.mark.django_db
def test_the_api_answers_json_by_default_and_the_browsable_page_to_a_browser(client):
    """Through the whole stack: a script's request gets JSON, a browser's gets the HTML page,
    an Accept the API cannot answer gets 406."""
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user("n", password="pw-123456-long")
    client.force_login(user)
    assert client.get("/api/campaigns/").headers["Content-Type"] == "application/json"
    page = client.get("/api/campaigns/", HTTP_ACCEPT="text/html,application/xhtml+xml,*/*;q=0.8")
    assert page.headers["Content-Type"].startswith("text/html")
    assert client.get("/api/campaigns/", HTTP_ACCEPT="image/png").status_code == 406
