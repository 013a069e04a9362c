"""SQLite under contention: a write that cannot get the file's write lock in time is answered
503 JSON "busy" with Retry-After (never an HTML 500), and a second server process on the same file
without Redis is warned about at start."""

from __future__ import annotations

import sqlite3

import pytest
from django.db import connection
from rest_framework.test import APIClient

from tests.live.conftest import Server

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def sqlite_only() -> None:
    if connection.vendor != "sqlite":
        pytest.skip("about SQLite's one write lock; PostgreSQL's lock waits: tests/faults")


def test_a_write_that_cannot_get_sqlites_lock_is_a_json_busy(sqlite_only, make_campaign, users):
    campaign = make_campaign("cofd")
    client = APIClient()
    client.force_authenticate(users["gm"])
    connection.ensure_connection()
    connection.cursor().execute("PRAGMA busy_timeout = 100")  # the test client keeps it
    holder = sqlite3.connect(connection.settings_dict["NAME"], isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process mid-write
    try:
        response = client.post(
            f"/api/campaigns/{campaign.pk}/scenes/", {}, format="json", HTTP_ACCEPT_LANGUAGE="en"
        )
        russian = client.post(
            f"/api/campaigns/{campaign.pk}/scenes/", {}, format="json", HTTP_ACCEPT_LANGUAGE="ru"
        )
        health = client.get("/health/")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert response.status_code == 503
    assert response["Content-Type"] == "application/json"
    assert response.json() == {
        "code": "busy",
        "detail": "this campaign is busy; try the same request again in a moment",
    }
    assert response["Retry-After"] == "1"
    # The page shows the server's words: in the reader's language.
    assert russian.json() == {
        "code": "busy",
        "detail": "кампания занята; повторите тот же запрос через мгновение",
    }
    assert health.status_code == 200, "reads (and /health/) are not blocked by a writer"
    again = client.post(f"/api/campaigns/{campaign.pk}/scenes/", {}, format="json")
    assert again.status_code in (201, 409)  # through again (409: the rules, not the lock)


def test_a_second_process_on_one_sqlite_file_without_redis_is_warned_about(sqlite_only, tmp_path):
    first = Server(log=tmp_path / "first.log").start()
    second = Server(log=tmp_path / "second.log").start()
    try:
        warned = second.log.read_text()
    finally:
        second.stop()
        first.stop()
    assert "without Redis" in warned and str(first.process.pid) in warned
