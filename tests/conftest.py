"""Shared fixtures. Tests run on SQLite by default; DATABASE_URL/REDIS_URL switch to the real
services, and tests marked `postgres` or `redis` fail (never skip) when those are not configured."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import connection
from django.utils import translation

from campaign import services
from eventlog import append_only
from tests.workers import key_prefix


def pytest_configure(config: pytest.Config) -> None:
    # Hashing passwords at production strength would dominate the suite's run time.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # Throttle counters per test process: a Redis cache would be shared by the xdist workers,
    # whose users have the same ids in their own databases. Servers the tests start use Redis.
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    # Channel groups and presence are by campaign id, which each worker's database gives out
    # anew: on a shared Redis each worker's (this process's and its browser server's, from
    # tests/browser/server_settings.py) are apart, or one worker's pages hear another's rolls.
    layer = settings.CHANNEL_LAYERS["default"]
    if layer["BACKEND"].startswith("channels_redis"):
        layer["CONFIG"]["prefix"] = key_prefix()


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    """Throttle counters live in the cache, and the live feed keeps the rosters it read: each
    test starts with none."""
    from rolls.live import broadcast

    cache.clear()
    broadcast.forget()


def _is_transactional(request: pytest.FixtureRequest) -> bool:
    marker = request.node.get_closest_marker("django_db")
    return bool(
        (marker and marker.kwargs.get("transaction"))
        or "transactional_db" in request.fixturenames
        or "live_server" in request.fixturenames
    )


@pytest.fixture(autouse=True)
def _require_services(request: pytest.FixtureRequest) -> None:
    if (
        request.node.get_closest_marker("postgres")
        and "postgres" not in settings.DATABASES["default"]["ENGINE"]
    ):
        pytest.fail("this test needs PostgreSQL: set DATABASE_URL=postgres://…")
    if request.node.get_closest_marker("redis") and not settings.REDIS_URL:
        pytest.fail("this test needs Redis: set REDIS_URL=redis://…")


@pytest.fixture(autouse=True)
def _append_only_triggers(request: pytest.FixtureRequest):
    """Keep the event log's triggers in place for every test, yet let Django empty the table
    after transactional tests (its flush would otherwise be refused, as it should be)."""
    uses_db = request.node.get_closest_marker("django_db") or "db" in request.fixturenames
    if not (uses_db or _is_transactional(request)):
        yield
        return
    transactional = _is_transactional(request)
    request.getfixturevalue("transactional_db" if transactional else "db")
    append_only.install(connection)
    yield
    if transactional:
        append_only.drop(connection)


@pytest.fixture(autouse=True)
def _english_outside_requests():
    """Services called directly answer in English (the site's default is Russian); requests
    and sockets choose their own language."""
    with translation.override("en"):
        yield


@pytest.fixture
def users(db):
    User = get_user_model()
    return {
        name: User.objects.create_user(username=name, password=f"{name}-password")
        for name in ("gm", "alice", "boris", "olga", "stranger")
    }


@pytest.fixture
def make_campaign(users):
    """A campaign with GM `gm`, players `alice` and `boris`, observer `olga`."""

    def make(system: str = "cofd", options: dict | None = None, name: str = "Test table"):
        campaign = services.create_campaign(
            name=name, system=system, created_by=users["gm"], options=options
        )
        for username in ("alice", "boris", "olga"):
            services.join_campaign(invite_code=campaign.invite_code, user=users[username])
        services.change_role(
            campaign=campaign, actor=users["gm"], user_id=users["olga"].pk, role="observer"
        )
        campaign.refresh_from_db()
        return campaign

    return make
