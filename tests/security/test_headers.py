"""Security headers on every page, and pages that need no inline script or style to work."""

from __future__ import annotations

import re
from pathlib import Path

from django.test import Client

ROOT = Path(__file__).resolve().parents[2]


def test_pages_carry_a_strict_content_security_policy(db, users):
    client = Client()
    client.force_login(users["alice"])
    for path in ("/", "/accounts/login/", "/audit/"):
        response = client.get(path)
        policy = response["Content-Security-Policy"]
        directives = dict(part.strip().split(" ", 1) for part in policy.split(";") if part.strip())
        assert directives["script-src"] == "'self'"
        assert directives["style-src"] == "'self'"
        assert directives["frame-ancestors"] == "'none'"
        assert "unsafe" not in policy
        assert response["X-Frame-Options"] == "DENY"
        assert response["X-Content-Type-Options"] == "nosniff"


def test_hsts_is_sent_over_https_when_configured(db, settings):
    settings.SECURE_HSTS_SECONDS = 3600
    response = Client().get("/accounts/login/", secure=True)
    assert response["Strict-Transport-Security"].startswith("max-age=3600")


def test_templates_have_no_inline_script_style_or_handlers():
    for template in (ROOT / "templates").rglob("*.html"):
        text = template.read_text()
        for tag in re.findall(r"<script\b[^>]*>", text):
            assert "src=" in tag or 'type="application/json"' in tag, (template, tag)
        assert "<style" not in text, template
        assert not re.search(r"\sstyle=", text), template
        assert not re.search(r"\son[a-z]+=", text), template
