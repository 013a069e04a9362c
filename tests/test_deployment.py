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
    assert set(services) == {"db", "redis", "migrate", "web"}
    assert all("healthcheck" in services[name] for name in ("db", "redis", "web"))
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
