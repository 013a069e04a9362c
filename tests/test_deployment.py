"""The deployment files and the README stay true to the code."""

from __future__ import annotations

import ipaddress
import json
import os
import re
import runpy
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import websockets.sync.client
import yaml

from config.proxies import forwarded_for
from config.websocket import UVICORN_WS
from tests.fresh_process import python_output

ROOT = Path(__file__).resolve().parent.parent


def test_every_environment_variable_the_settings_read_is_documented():
    settings = (ROOT / "config" / "settings.py").read_text()
    used = set(re.findall(r'env\.\w+\("([A-Z_]+)"', settings)) | set(
        re.findall(r'Env\(\)\.\w+\("([A-Z_]+)"', settings)
    )
    readme = (ROOT / "README.md").read_text()
    missing = sorted(name for name in used if f"`{name}`" not in readme)
    assert used and missing == []


def test_compose_runs_postgres_redis_and_a_multi_worker_web_service_with_healthchecks():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert set(services) == {"db", "redis", "migrate", "web", "live", "proxy"}
    assert all("healthcheck" in services[name] for name in ("db", "redis", "web", "live", "proxy"))
    # Migrations run once as the tables' owner; the web service connects as the app's role.
    migrate, web = services["migrate"], services["web"]
    assert migrate["command"] == ["python", "manage.py", "setup_database"]
    assert migrate["environment"]["DATABASE_APP_ROLE"] == "tablecheck_app"
    assert web["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert web["environment"]["DATABASE_URL"].startswith("postgres://tablecheck_app:")
    assert web["environment"]["REDIS_URL"].startswith("redis://")
    assert web["depends_on"]["db"]["condition"] == "service_healthy"
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "setup_database" in dockerfile and "--workers ${WEB_WORKERS}" in dockerfile
    env_example = (ROOT / ".env.example").read_text()
    assert "SECRET_KEY=" in env_example and "POSTGRES_PASSWORD=" in env_example


# --- the serving stack: gunicorn for the pages and the API, uvicorn for the sockets, one port ---


def compose_services() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]


def test_compose_serves_the_api_from_gunicorn_and_the_sockets_from_uvicorn_behind_one_proxy():
    services = compose_services()
    web, live, proxy = services["web"], services["live"], services["proxy"]
    assert web["command"] == ["gunicorn", "-c", "config/gunicorn.py"]
    assert (
        "uvicorn config.asgi:application --ws config.websocket:WebSocketProtocol"
        in (live["command"][-1])
    )
    assert "--workers ${LIVE_WORKERS:-1}" in live["command"][-1]
    # Both run the same application as the same role, behind the proxy only.
    assert live["environment"] == web["environment"]
    assert live["depends_on"] == web["depends_on"]
    assert "ports" not in web and "ports" not in live
    # .env (shared with db and migrate) holds the owner's password: blanked for the app.
    assert web["environment"]["POSTGRES_PASSWORD"] == ""
    assert proxy["ports"] == ["${WEB_PORT:-8000}:8000"]
    assert "./deploy/nginx.conf:/etc/nginx/conf.d/default.conf:ro" in proxy["volumes"]
    assert {name: rule["condition"] for name, rule in proxy["depends_on"].items()} == {
        "web": "service_healthy",
        "live": "service_healthy",
    }
    # The health checks ask for /health/ as `localhost`, which the example's ALLOWED_HOSTS keeps
    # (any other host name is answered 400, and the service would never be healthy).
    for service in (web, live, proxy):
        probe = " ".join(service["healthcheck"]["test"])
        assert "/health/" in probe and "localhost" in probe
    env_example = (ROOT / ".env.example").read_text()
    allowed = re.search(r"^ALLOWED_HOSTS=(.*)$", env_example, re.M).group(1).split(",")
    assert "localhost" in allowed


def nginx_locations() -> dict[str, str]:
    """location → the upstream it passes to, from deploy/nginx.conf."""
    text = (ROOT / "deploy" / "nginx.conf").read_text()
    return dict(re.findall(r"location (\S+) \{[^}]*?proxy_pass http://(\w+);", text))


def test_the_proxy_sends_sockets_to_live_and_everything_else_to_web():
    text = (ROOT / "deploy" / "nginx.conf").read_text()
    assert nginx_locations() == {"/ws/": "live", "/": "web"}
    upstreams = dict(re.findall(r"upstream (\w+) \{\s*server (\S+?);", text))
    services = compose_services()
    port = services["web"]["environment"]["PORT"]
    assert upstreams == {"web": f"web:{port}", "live": "live:8000"}
    assert "--port 8000" in services["live"]["command"][-1]
    assert "listen 8000;" in text
    # The socket's upgrade, and the host and scheme its origin check compares, reach uvicorn.
    ws = text[text.index("location /ws/") :]
    for header in ("Upgrade $http_upgrade", "Connection $connection_upgrade", "Host $http_host"):
        assert f"proxy_set_header {header};" in ws
    # The app is sent one address, the client's; a header from the internet is not believed.
    assert text.count("proxy_set_header X-Forwarded-For $remote_addr;") == 2
    assert "real_ip_header X-Forwarded-For;" in text
    trusted = re.findall(r"set_real_ip_from (\S+);", text)
    assert trusted and all(
        ipaddress.ip_network(network).is_private or ipaddress.ip_network(network).is_loopback
        for network in trusted
    )


def gunicorn_settings(**environ: str) -> dict:
    saved = dict(os.environ)
    os.environ.update(environ)
    try:
        return runpy.run_path(str(ROOT / "config" / "gunicorn.py"))
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_gunicorn_runs_threads_within_each_process_pool_and_never_preloads():
    defaults = gunicorn_settings()
    assert defaults["wsgi_app"] == "config.wsgi:application"
    assert defaults["worker_class"] == "gthread"
    # A thread per pooled connection, one left for the process's live-feed publisher.
    pool = int(re.search(r'"DB_POOL_MAX_SIZE", default=(\d+)', SETTINGS).group(1))
    assert defaults["threads"] < pool
    # The publishing loop is started in each worker after the fork (config/wsgi.py).
    assert defaults["preload_app"] is False
    sized = gunicorn_settings(WEB_WORKERS="3", WEB_THREADS="4", PORT="9001")
    assert (sized["workers"], sized["threads"], sized["bind"]) == (3, 4, "0.0.0.0:9001")


SETTINGS = (ROOT / "config" / "settings.py").read_text()
DEPLOYMENT_FILES = ("docker-compose.yml", "Dockerfile", "config/gunicorn.py", "config/proxies.py")


def test_every_variable_of_the_deployment_files_is_documented():
    used: set[str] = set()
    for name in DEPLOYMENT_FILES:
        text = (ROOT / name).read_text()
        used |= set(re.findall(r"\$\{([A-Z_]+)", text))
        used |= set(re.findall(r'os\.environ\.get\("([A-Z_]+)"', text))
        for line in re.findall(r"^ENV (.+)$", text, re.M):
            used |= set(re.findall(r"(\w+)=", line))
    readme = (ROOT / "README.md").read_text()
    used -= {"PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PIP_DISABLE_PIP_VERSION_CHECK"}
    missing = sorted(name for name in used if name.isupper() and f"`{name}`" not in readme)
    assert {"WEB_WORKERS", "WEB_THREADS", "LIVE_WORKERS", "FORWARDED_ALLOW_IPS"} <= used
    assert missing == []


def echo_address(environ: dict, start_response) -> list[bytes]:
    start_response("200 OK", [])
    return [environ["REMOTE_ADDR"].encode()]


def address_behind(setting: str, peer: str, chain: str | None) -> str:
    environ = {"REMOTE_ADDR": peer}
    if chain is not None:
        environ["HTTP_X_FORWARDED_FOR"] = chain
    return b"".join(forwarded_for(echo_address, setting)(environ, lambda *a: None)).decode()


def test_the_wsgi_server_takes_the_clients_address_from_a_trusted_proxy_only():
    # The proxy on loopback appends the peer it saw: that is the client.
    assert address_behind("127.0.0.1", "127.0.0.1", "198.51.100.7") == "198.51.100.7"
    assert address_behind("127.0.0.1", "127.0.0.1", "10.9.9.9, 198.51.100.7") == "198.51.100.7"
    # Anyone else's header is ignored: a client cannot pick the address its lockout counts on.
    assert address_behind("127.0.0.1", "203.0.113.5", "198.51.100.7") == "203.0.113.5"
    assert address_behind("127.0.0.1", "127.0.0.1", None) == "127.0.0.1"
    # Every peer trusted (compose: only the proxy reaches gunicorn): the first address.
    assert address_behind("*", "172.18.0.5", "198.51.100.7, 172.18.0.4") == "198.51.100.7"
    # Two trusted proxies in a row: the nearest untrusted hop.
    chain = "1.2.3.4, 198.51.100.7, 10.0.0.2"
    assert address_behind("10.0.0.2,10.0.0.3", "10.0.0.3", chain) == "198.51.100.7"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(url: str, processes: list[subprocess.Popen], logs: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if any(process.poll() is not None for process in processes):
            raise AssertionError(f"a server exited:\n{read_logs(logs)}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"{url} did not answer:\n{read_logs(logs)}")


def read_logs(folder: Path) -> str:
    return "\n".join(f"--- {p.name}\n{p.read_text()[-3000:]}" for p in sorted(folder.glob("*.log")))


def nginx_serving(folder: Path, port: int, web: int, live: int) -> list[str]:
    """nginx in the foreground on `port` with deploy/nginx.conf, upstreams on loopback."""
    site = (ROOT / "deploy" / "nginx.conf").read_text()
    site = site.replace("server web:8000;", f"server 127.0.0.1:{web};")
    site = site.replace("server live:8000;", f"server 127.0.0.1:{live};")
    site = site.replace("listen 8000;", f"listen 127.0.0.1:{port};")
    temp = " ".join(
        f"{kind}_temp_path {folder / kind};" for kind in ("client_body", "proxy", "fastcgi")
    )
    main = folder / "nginx.conf"
    main.write_text(
        f"daemon off; pid {folder / 'nginx.pid'}; error_log {folder / 'nginx.log'} warn;\n"
        f"events {{}}\nhttp {{ access_log off; {temp} uwsgi_temp_path {folder / 'uwsgi'}; "
        f"scgi_temp_path {folder / 'scgi'};\n{site}\n}}\n"
    )
    return [NGINX, "-p", str(folder), "-c", str(main)]


NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


@pytest.mark.redis
@pytest.mark.slow
def test_one_port_serves_a_roll_from_gunicorn_to_a_socket_on_uvicorn(tmp_path):
    """The production topology on loopback: nginx (deploy/nginx.conf), gunicorn with
    config/gunicorn.py and uvicorn; a check POSTed to the one port reaches a socket opened on it,
    published by the gunicorn process through Redis."""
    from django.conf import settings

    if not Path(NGINX).exists():
        pytest.fail("this test needs nginx: `make proxy` (apt-get install nginx-light)")
    env = {
        **os.environ,
        "VAR_DIR": str(tmp_path / "var"),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "REDIS_URL": settings.REDIS_URL,
        "DEBUG": "0",
        "LOG_LEVEL": "WARNING",
        "WEB_WORKERS": "1",
        "WEB_THREADS": "2",
        "FORWARDED_ALLOW_IPS": "127.0.0.1",
        "PYTHONWARNINGS": "ignore:No directory at:UserWarning",
    }
    prepared = subprocess.run(
        [sys.executable, "bench/serving.py", "--prepare", "1"],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    table = json.loads(prepared.stdout.strip().splitlines()[-1])[0]
    front, web, live = free_port(), free_port(), free_port()
    gunicorn_log = tmp_path / "gunicorn-access.log"
    commands = {
        "gunicorn": [sys.executable, "-m", "gunicorn", "-c", "config/gunicorn.py",
                     "--bind", f"127.0.0.1:{web}", "--access-logfile", str(gunicorn_log)],
        "uvicorn": [sys.executable, "-m", "uvicorn", "config.asgi:application", *UVICORN_WS,
                    "--port", str(live), "--log-level", "warning"],
        "nginx": nginx_serving(tmp_path, front, web, live),
    }  # fmt: skip
    processes = []
    try:
        for name, command in commands.items():
            with (tmp_path / f"{name}.log").open("ab") as log:
                processes.append(
                    subprocess.Popen(command, env=env, cwd=ROOT, stdout=log, stderr=log)
                )
        wait_for(f"http://127.0.0.1:{front}/health/", processes, tmp_path)
        # The front answers once gunicorn does; uvicorn may still be starting (nginx: 502).
        wait_for(f"http://127.0.0.1:{live}/health/", processes, tmp_path)
        headers = {"Authorization": f"Token {table['token']}"}
        url = f"ws://127.0.0.1:{front}/ws/campaigns/{table['campaign']}/"
        with websockets.sync.client.connect(url, additional_headers=headers) as feed:
            assert json.loads(feed.recv(timeout=10))["type"] == "caught_up"
            answer = httpx.post(
                f"http://127.0.0.1:{front}/api/campaigns/{table['campaign']}/checks/",
                json={"character": table["character"], "traits": ["Wits", "Occult"]},
                headers=headers,
                timeout=30,
            )
            assert answer.status_code == 201, answer.text
            frames = []
            while not any(frame.get("type") == "event" for frame in frames):
                frames.append(json.loads(feed.recv(timeout=10)))
        event = next(frame["event"] for frame in frames if frame.get("type") == "event")
        assert event["seq"] == answer.json()["seq"]
        # gunicorn logs a request once its answer is written: the client, and the frame, can be
        # there first (CI on 2026-12-06 read the log before the line).
        deadline = time.monotonic() + 10
        served_by_gunicorn = gunicorn_log.read_text()
        while "POST /api/campaigns/" not in served_by_gunicorn and time.monotonic() < deadline:
            time.sleep(0.05)
            served_by_gunicorn = gunicorn_log.read_text()
        assert "POST /api/campaigns/" in served_by_gunicorn
        assert "/ws/" not in served_by_gunicorn
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def test_a_wsgi_process_publishes_the_live_feed_from_an_event_loop_of_its_own(tmp_path):
    """Without it each request would render the broadcast itself, and open the channel layer's
    connections on a new event loop every time (config/wsgi.py)."""
    probe = (
        "import asyncio, threading, config.wsgi\n"
        "from rolls.live.broadcast import _Publisher\n"
        "names = [thread.name for thread in threading.enumerate()]\n"
        "loop = _Publisher.loop\n"
        "print('live-publish' in names, loop is not None and loop.is_running())"
    )
    assert _probe(probe, tmp_path) == ["True", "True"]


def _probe(code: str, tmp_path: Path) -> list[str]:
    """What ``code`` prints, run in a fresh interpreter on a database of its own (a server
    process's start, seen from inside)."""
    return python_output(code, tmp_path).split()


@pytest.mark.parametrize("entry", ["config.wsgi", "config.asgi"])
def test_a_serving_process_starts_with_its_long_lived_objects_out_of_the_collectors_way(
    tmp_path, entry
):
    """A full collection walked the ~100k objects a process starts with (modules, URL patterns,
    serializers' fields) in the middle of some request, a pause of 70-90 ms here: each server
    imports what the first request would and freezes them (config/startup.py)."""
    probe = (
        f"import gc, sys, {entry}\n"
        "print(gc.get_freeze_count() > 50_000, 'rolls.api.views' in sys.modules,"
        " len(gc.get_objects(generation=2)) < 10_000)"
    )
    assert _probe(probe, tmp_path) == ["True", "True", "True"]
