"""A first run on a LAN is safe: no admin with a published password, no debug pages, the admin
never shows a token, and the files under var/ are the owner's alone."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from rest_framework.authtoken.models import Token

from campaign.demo import DEMO_USERNAMES, PUBLISHED_PASSWORDS

ROOT = Path(__file__).resolve().parents[2]


def test_the_demo_password_probe_fails_and_no_demo_account_is_staff(db, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    call_command("load_demo")
    User = get_user_model()
    for name in DEMO_USERNAMES:
        user = User.objects.get(username=name)
        assert not (user.is_staff or user.is_superuser)
        assert not user.check_password(PUBLISHED_PASSWORDS[name])
    probe = Client().post(
        "/admin/login/?next=/admin/", {"username": "gm", "password": "gm-demo-pass"}
    )
    assert probe.status_code == 200 and "_auth_user_id" not in probe.client.session
    # The generated password signs in to the table, not to the admin.
    saved = dict(
        line.split(" ", 1) for line in (tmp_path / "demo-logins").read_text().split("\n") if line
    )
    client = Client()
    assert client.login(username="gm", password=saved["gm"])
    assert client.get("/admin/").status_code == 302  # to the admin's login: not staff


def test_an_install_with_the_published_passwords_gets_new_ones(db, settings, tmp_path, capsys):
    settings.VAR_DIR = tmp_path
    User = get_user_model()
    User.objects.create_superuser("gm", password="gm-demo-pass")
    call_command("load_demo")
    gm = User.objects.get(username="gm")
    assert not gm.check_password("gm-demo-pass") and not gm.is_superuser
    printed = capsys.readouterr().out
    saved = (tmp_path / "demo-logins").read_text()
    assert all(
        password in printed for password in (line.split(" ", 1)[1] for line in saved.splitlines())
    )
    assert stat.S_IMODE((tmp_path / "demo-logins").stat().st_mode) == 0o600
    call_command("load_demo")
    assert (tmp_path / "demo-logins").read_text() == saved, "the same passwords on every run"


def test_the_admin_lists_token_holders_but_never_a_token(db):
    User = get_user_model()
    admin = User.objects.create_superuser("root", password="a long admin passphrase")
    alice = User.objects.create_user("alice", password="alice-password")
    key = Token.objects.create(user=alice).key
    client = Client()
    client.force_login(admin)
    listing = client.get("/admin/authtoken/tokenproxy/")
    assert listing.status_code == 200 and b"alice" in listing.content
    assert key.encode() not in listing.content
    for view in ("change", "delete", "history"):  # each would print the key
        assert client.get(f"/admin/authtoken/tokenproxy/{key}/{view}/").status_code == 404


def _settings_in_a_fresh_process(tmp_path: Path, **env: str) -> dict[str, str]:
    """Import the settings as `make run` does (nothing set but what is given)."""
    clean = {
        k: v for k, v in os.environ.items() if k not in ("DEBUG", "DATABASE_URL", "SECURE_COOKIES")
    }
    code = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'config.settings';"
        "django.setup();"
        "from django.conf import settings as s;"
        "print(s.DEBUG, getattr(s, 'SECURE_HSTS_SECONDS', 0), s.DATABASES['default']['NAME'])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**clean, "VAR_DIR": str(tmp_path / "var"), **env},
        capture_output=True,
        text=True,
        check=True,
    )
    debug, hsts, database = result.stdout.split()
    return {"debug": debug, "hsts": hsts, "database": database}


def test_make_run_has_no_debug_and_var_is_private(tmp_path):
    assert "DEBUG=" not in (ROOT / "Makefile").read_text().split("\nrun:")[1].split("\n\n")[0]
    seen = _settings_in_a_fresh_process(tmp_path)
    assert seen["debug"] == "False" and seen["hsts"] == "0"
    var = tmp_path / "var"
    assert stat.S_IMODE(var.stat().st_mode) == 0o700
    assert stat.S_IMODE(Path(seen["database"]).stat().st_mode) == 0o600
    assert stat.S_IMODE((var / "secret_key").stat().st_mode) == 0o600


def test_hsts_comes_with_secure_cookies(tmp_path):
    seen = _settings_in_a_fresh_process(tmp_path, SECURE_COOKIES="1")
    assert int(seen["hsts"]) >= 180 * 24 * 3600


def test_error_pages_show_no_internals(db):
    client = Client()
    page = client.get("/no/such/page/")
    assert page.status_code == 404
    for internal in (b"URLconf", b"settings.py", b"Traceback", b"DEBUG"):
        assert internal not in page.content
