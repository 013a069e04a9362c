"""The deployment files and the README stay true to the code."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

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
    assert set(services) == {"db", "redis", "web"}
    assert all("healthcheck" in service for service in services.values())
    web = services["web"]
    assert web["environment"]["DATABASE_URL"].startswith("postgres://")
    assert web["environment"]["REDIS_URL"].startswith("redis://")
    assert web["depends_on"]["db"]["condition"] == "service_healthy"
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "migrate --noinput" in dockerfile and "--workers ${WEB_WORKERS}" in dockerfile
    env_example = (ROOT / ".env.example").read_text()
    assert "SECRET_KEY=" in env_example and "POSTGRES_PASSWORD=" in env_example
