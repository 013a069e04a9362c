"""Browser tests: Debian's Chromium driven by Playwright against a real ASGI server.

The server is uvicorn in a subprocess, on a free loopback port, serving the test database that
pytest-django created (SQLite file or PostgreSQL, whatever DATABASE_URL says), with DEBUG off and
the static files collected and served by the app as in production. Tests use `transactional_db`
so what they create is committed and visible to the server. Chromium must be installed
(`apt-get install -y chromium`); without it these tests fail, they never skip.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection

from config.websocket import UVICORN_WS

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PASSWORD = "browser-test-pass"


def database_url(db: dict[str, Any]) -> str:
    """The URL (for django-environ) of the database this test process uses."""
    engine = db["ENGINE"]
    if engine.endswith("sqlite3"):
        return f"sqlite:///{Path(db['NAME']).resolve()}"
    if "postgresql" in engine:
        auth = db.get("USER") or ""
        if db.get("PASSWORD"):
            auth += f":{db['PASSWORD']}"
        host = db.get("HOST") or "127.0.0.1"
        port = db.get("PORT") or 5432
        return f"postgres://{auth}{'@' if auth else ''}{host}:{port}/{db['NAME']}"
    raise RuntimeError(f"no server URL for database engine {engine}")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Server:
    """uvicorn serving the test database; `stop()` and `start()` again for a restart."""

    env: dict[str, str]
    port: int = field(default_factory=free_port)
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.log = open(self.env["TABLECHECK_SERVER_LOG"], "ab")  # noqa: SIM115
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "config.asgi:application",
                *UVICORN_WS,
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--timeout-graceful-shutdown",
                "2",
                "--no-access-log",
            ],
            cwd=ROOT,
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 45
        answer = "no answer"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.process = None
                self.log.close()
                raise RuntimeError(f"the server exited; see {self.env['TABLECHECK_SERVER_LOG']}")
            try:
                response = httpx.get(f"{self.url}/health/", timeout=1)
            except httpx.HTTPError as error:
                answer = str(error)
            else:
                if response.status_code == 200:
                    return
                answer = response.text
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(
            f"the server did not come up ({answer}); see {self.env['TABLECHECK_SERVER_LOG']}"
        )

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None
        self.log.close()


@pytest.fixture(scope="session")
def chromium_path() -> str:
    if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
        pytest.fail(
            f"Chromium is not installed at {CHROMIUM}: browser tests need Debian's chromium "
            "(apt-get install -y chromium) or CHROMIUM_PATH=/path/to/chromium",
            pytrace=False,
        )
    return CHROMIUM


@pytest.fixture(scope="module", autouse=True)
def _django_beside_playwright() -> Iterator[None]:
    """Playwright's sync API keeps an event loop running in this thread while it is open, and
    Django refuses database calls when it sees one. The test's own calls are plain synchronous
    code, so allow them — for this module only (the browser closes with the module)."""
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    yield
    if previous is None:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    else:
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture(scope="module")
def browser(chromium_path: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


@pytest.fixture(scope="module")
def server(
    django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """The app under uvicorn against the test database, static files collected (DEBUG off)."""
    with django_db_blocker.unblock():
        url = database_url(connection.settings_dict)
    workdir = tmp_path_factory.mktemp("server")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.browser.server_settings",
        "TABLECHECK_STATIC_ROOT": str(workdir / "static"),
        "TABLECHECK_SERVER_LOG": str(workdir / "server.log"),
        "DATABASE_URL": url,
        "DEBUG": "0",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "CONN_MAX_AGE": "0",
        "LOG_LEVEL": "WARNING",
        "VAR_DIR": str(settings.VAR_DIR),  # the same generated SECRET_KEY
    }
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"],
        cwd=ROOT,
        env=env,
        check=True,
    )
    instance = Server(env)
    instance.start()
    yield instance
    instance.stop()
    shutil.rmtree(workdir / "static", ignore_errors=True)


@pytest.fixture
def accounts(transactional_db: None) -> dict[str, Any]:
    """gm, alice and boris (the server hashes passwords as this process does)."""
    User = get_user_model()
    return {
        name: User.objects.create_user(username=name, password=PASSWORD)
        for name in ("gm", "alice", "boris")
    }


@pytest.fixture
def open_page(browser: Any, server: Server) -> Iterator[Any]:
    """open_page(username, path) -> a signed-in page in its own browser context. A script error
    or a Content-Security-Policy violation on any page fails the test."""
    contexts = []
    errors: list[str] = []

    def open_(username: str, path: str, language: str = "en") -> Any:
        context = browser.new_context(
            viewport={"width": 1280, "height": 900}, locale=language, base_url=server.url
        )
        context.set_default_timeout(10_000)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(f"{username}: {error}"))
        # What the Content-Security-Policy refuses (an inline style, a script) is a bug too.
        page.on(
            "console",
            lambda message: (
                "Content Security Policy" in message.text
                and errors.append(f"{username}: {message.text}")
            ),
        )
        page.goto(f"/accounts/login/?next={path}")
        page.fill("#id_username", username)
        page.fill("#id_password", PASSWORD)
        page.click("main button[type=submit]")
        page.wait_for_url(f"**{path}")
        return page

    yield open_
    for context in contexts:
        context.close()
    assert not errors, "script errors on the pages:\n" + "\n".join(errors)
