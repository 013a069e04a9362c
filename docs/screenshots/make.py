# ruff: noqa: RUF001 — the Russian names are Cyrillic on purpose
"""Screenshots of the pages for the README, in Russian and in English.

    .venv/bin/python docs/screenshots/make.py              # starts its own server on a temp DB
    .venv/bin/python docs/screenshots/make.py --url http://127.0.0.1:8000   # or uses yours

It signs a GM and two players up through the pages, sets up a table per game system through the
REST API (in each language, with that language's names), rolls with the server's dice, and
photographs the GM dashboard, a player page and the audit at desktop width (plus the player page
at phone width) with Debian's Chromium. The dice are real, so each run looks a little different.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import BrowserContext, sync_playwright

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
from config.websocket import UVICORN_WS  # noqa: E402

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PASSWORD = "screenshot-pass-1"

# Everything a table types in, per language: people, campaigns, characters, labels.
DATA: dict[str, dict[str, Any]] = {
    "ru": {
        "users": {"gm": "Вера", "alice": "Алиса", "boris": "Борис"},
        "cofd": {
            "name": "Невинные из Эшвуда",
            "alice": (
                "Марианна",
                {
                    "attributes": {"Смекалка": 3, "Манипуляция": 3, "Ловкость": 2},
                    "skills": {"Расследование": 3, "Обман": 2, "Атлетика": 1, "Оккультизм": 2},
                    "specialties": {"Расследование": ["Места преступлений"]},
                },
                {"beats": 2, "willpower": 5},
            ),
            "boris": (
                "Тео",
                {
                    "attributes": {"Сила": 3, "Выносливость": 3, "Ловкость": 2},
                    "skills": {"Драка": 3, "Атлетика": 2},
                    "specialties": {"Драка": ["Грязные приёмы"]},
                },
                {"beats": 1, "willpower": 4},
            ),
            "session1": "Пролог",
            "session2": "Пятница, 13-е",
            "chapter": "Склеп под часовней",
            "rolls": {
                "search": ("Осмотр склепа", ["Смекалка", "Расследование"]),
                "door": ("Выбить дверь", ["Сила", "Драка"]),
                "lie": ("Солгать священнику", ["Манипуляция", "Обман"]),
                "watch": ("Сторож прислушивается", None),
                "stairs": ("Сбежать по скользким ступеням", ["Ловкость", "Атлетика"]),
                "call": ("Прочесть надпись на плите", ["Смекалка", "Оккультизм"]),
                "old": ("Найти дорогу к часовне", ["Смекалка", "Расследование"]),
            },
            "specialty": "Места преступлений",
            "modifier": "скользкие ступени",
        },
        "d6pool": {
            "name": "Пыль и револьверы",
            "alice": (
                "Ковбой Джон",
                {"attributes": {"Реакция": 4, "Сила": 3}, "abilities": {"Стрельба": 4}},
                {},
            ),
            "roll": ("Выбить пробку из бутылки", ["Реакция", "Стрельба"]),
        },
        "storyteller": {
            "name": "Чикаго ночью",
            "alice": (
                "Вероника",
                {
                    "attributes": {"Физические": 2, "Ментальные": 3},
                    "abilities": {"Взлом": 4, "Бдительность": 2},
                },
                {"willpower": 5},
            ),
            "roll": ("Вскрыть сейф", ["Ментальные", "Взлом"]),
        },
        "age": {
            "name": "Станция Церера",
            "alice": (
                "Наоми",
                {
                    "abilities": {"Интеллект": 3, "Ловкость": 2},
                    "focuses": {"Интеллект": ["Инженерия"]},
                },
                {"fortune": 15},
            ),
            "roll": ("Запустить реактор", ["Интеллект"], "Инженерия"),
        },
        "nice_damnit": {
            "name": "Фронтир",
            "alice": (
                "Каламити Энн",
                {
                    "areas": {"Огнестрельное оружие": 2},
                    "skills": {"Стрельба навскидку": "pro_1"},
                },
                {},
            ),
            "roll": ("Выхватить револьвер", ["Огнестрельное оружие", "Стрельба навскидку"]),
        },
    },
    "en": {
        "users": {"gm": "Vera", "alice": "Alice", "boris": "Boris"},
        "cofd": {
            "name": "The Innocents of Ashwood",
            "alice": (
                "Marianne",
                {
                    "attributes": {"Wits": 3, "Manipulation": 3, "Dexterity": 2},
                    "skills": {"Investigation": 3, "Subterfuge": 2, "Athletics": 1, "Occult": 2},
                    "specialties": {"Investigation": ["Crime scenes"]},
                },
                {"beats": 2, "willpower": 5},
            ),
            "boris": (
                "Theo",
                {
                    "attributes": {"Strength": 3, "Stamina": 3, "Dexterity": 2},
                    "skills": {"Brawl": 3, "Athletics": 2},
                    "specialties": {"Brawl": ["Dirty fighting"]},
                },
                {"beats": 1, "willpower": 4},
            ),
            "session1": "Prologue",
            "session2": "Friday the 13th",
            "chapter": "The crypt under the chapel",
            "rolls": {
                "search": ("Searching the crypt", ["Wits", "Investigation"]),
                "door": ("Kick the door in", ["Strength", "Brawl"]),
                "lie": ("Lie to the priest", ["Manipulation", "Subterfuge"]),
                "watch": ("The watchman listens", None),
                "stairs": ("Run down the slippery stairs", ["Dexterity", "Athletics"]),
                "call": ("Read the inscription on the slab", ["Wits", "Occult"]),
                "old": ("Find the way to the chapel", ["Wits", "Investigation"]),
            },
            "specialty": "Crime scenes",
            "modifier": "slippery stairs",
        },
        "d6pool": {
            "name": "Dust and Revolvers",
            "alice": (
                "Cowboy John",
                {"attributes": {"Reaction": 4, "Strength": 3}, "abilities": {"Shooting": 4}},
                {},
            ),
            "roll": ("Shoot the cork off the bottle", ["Reaction", "Shooting"]),
        },
        "storyteller": {
            "name": "Chicago by Night",
            "alice": (
                "Veronica",
                {
                    "attributes": {"Physical": 2, "Mental": 3},
                    "abilities": {"Lockpicking": 4, "Alertness": 2},
                },
                {"willpower": 5},
            ),
            "roll": ("Crack the safe", ["Mental", "Lockpicking"]),
        },
        "age": {
            "name": "Ceres Station",
            "alice": (
                "Naomi",
                {
                    "abilities": {"Intelligence": 3, "Dexterity": 2},
                    "focuses": {"Intelligence": ["Engineering"]},
                },
                {"fortune": 15},
            ),
            "roll": ("Restart the reactor", ["Intelligence"], "Engineering"),
        },
        "nice_damnit": {
            "name": "The Frontier",
            "alice": (
                "Calamity Ann",
                {"areas": {"Firearms": 2}, "skills": {"Quick draw": "pro_1"}},
                {},
            ),
            "roll": ("Draw the revolver", ["Firearms", "Quick draw"]),
        },
    },
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def own_server() -> Iterator[str]:
    """A fresh database in a temporary directory, served by uvicorn."""
    with tempfile.TemporaryDirectory() as var:
        env = {**os.environ, "VAR_DIR": var, "DEBUG": "1", "LOG_LEVEL": "WARNING"}
        env.pop("DATABASE_URL", None)
        env.pop("REDIS_URL", None)
        manage = [sys.executable, "manage.py"]
        subprocess.run([*manage, "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True)
        port = free_port()
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "config.asgi:application",
                *UVICORN_WS,
                "--port",
                str(port),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            for _ in range(100):
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"{url}/health/", timeout=1).status_code == 200:
                        break
                time.sleep(0.2)
            yield url
        finally:
            process.terminate()
            process.wait(timeout=10)


class Client:
    """One person in a browser context: signs up (or in) through the pages, then uses the API."""

    def __init__(self, context: BrowserContext, base: str, username: str) -> None:
        self.context, self.base, self.username = context, base, username
        page = context.new_page()
        page.goto(f"{base}/accounts/signup/")
        page.fill("#id_username", username)
        page.fill("#id_password1", PASSWORD)
        page.fill("#id_password2", PASSWORD)
        page.click("main button[type=submit]")
        page.wait_for_load_state()
        if "/signup/" in page.url:  # taken: an earlier run made this account
            page.goto(f"{base}/accounts/login/")
            page.fill("#id_username", username)
            page.fill("#id_password", PASSWORD)
            page.click("main button[type=submit]")
            page.wait_for_load_state()
        page.close()

    def _token(self) -> str:
        cookies = {c["name"]: c["value"] for c in self.context.cookies(self.base)}
        return cookies.get("csrftoken", "")

    def call(self, method: str, path: str, body: Any = None) -> Any:
        response = self.context.request.fetch(
            f"{self.base}/api/{path}",
            method=method,
            data=body,
            headers={"X-CSRFToken": self._token(), "Referer": f"{self.base}/"},
        )
        if not response.ok:
            raise RuntimeError(f"{method} {path}: {response.status} {response.text()}")
        return response.json() if response.body() else None

    def post(self, path: str, body: Any = None) -> Any:
        return self.call("POST", path, body or {})


def table(gm: Client, players: dict[str, Client], system: str, data: dict, users: dict) -> dict:
    campaign = gm.post("campaigns/", {"name": data["name"], "system": system})
    cid = campaign["id"]
    characters = {}
    for who, player in players.items():
        if who not in data:
            continue
        player.post("join/", {"invite_code": campaign["invite_code"]})
        members = {m["username"]: m["user_id"] for m in gm.call("GET", f"campaigns/{cid}/members/")}
        name, traits, resources = data[who]
        characters[who] = gm.post(
            f"campaigns/{cid}/characters/",
            {
                "name": name,
                "traits": traits,
                "resources": resources,
                "owner_id": members[users[who]],
            },
        )
    return {"id": cid, "characters": characters}


def stage(base: str, browser: Any, language: str) -> dict[str, Any]:
    """Set up the tables of one language and roll; return what the photographs need."""
    data = DATA[language]
    users = data["users"]
    contexts = {who: browser.new_context(locale=language, color_scheme="dark") for who in users}
    for context in contexts.values():
        context.add_cookies([{"name": "django_language", "value": language, "url": base}])
    people = {who: Client(contexts[who], base, name) for who, name in users.items()}
    gm, alice, boris = people["gm"], people["alice"], people["boris"]
    players = {"alice": alice, "boris": boris}

    # Four systems, one roll each (for the audit).
    for system in ("d6pool", "storyteller", "age", "nice_damnit"):
        spec = data[system]
        made = table(gm, players, system, spec, users)
        cid = made["id"]
        gm.post(f"campaigns/{cid}/sessions/", {"title": data["cofd"]["session2"]})
        label, traits, *focus = spec["roll"]
        request: dict[str, Any] = {
            "character": made["characters"]["alice"]["id"],
            "traits": traits,
            "label": label,
        }
        if system == "d6pool":
            request["modifiers"] = [{"value": -2, "group": "difficulty", "label": "difficulty"}]
        if system == "storyteller":
            request["difficulty"] = 7
        if system == "age":
            request.update(focus=focus[0], target=13)
        alice.post(f"campaigns/{cid}/checks/", request)

    # The Chronicles of Darkness table: the one the dashboard and the player page show.
    spec = data["cofd"]
    made = table(gm, players, "cofd", spec, users)
    cid, chars = made["id"], made["characters"]
    marianne, theo = chars["alice"]["id"], chars["boris"]["id"]
    rolls = spec["rolls"]
    checks = f"campaigns/{cid}/checks/"
    gm.post(f"campaigns/{cid}/sessions/", {"title": spec["session1"]})
    label, traits = rolls["old"]
    alice.post(checks, {"character": marianne, "traits": traits, "label": label})
    gm.post(f"campaigns/{cid}/sessions/end/")  # session 1 closes: its seed is revealed
    gm.post(f"campaigns/{cid}/sessions/", {"title": spec["session2"]})
    gm.post(f"campaigns/{cid}/chapters/", {"title": spec["chapter"]})

    label, traits = rolls["search"]
    alice.post(
        checks,
        {
            "character": marianne,
            "traits": traits,
            "specialty": spec["specialty"],
            "again": 9,
            "label": label,
        },
    )
    label, traits = rolls["door"]
    boris.post(checks, {"character": theo, "traits": traits, "rote": True, "label": label})
    label, traits = rolls["lie"]
    alice.post(
        checks,
        {"character": marianne, "traits": traits, "label": label, "visibility": "blind"},
    )
    label, _ = rolls["watch"]
    gm.post(checks, {"pool": 4, "label": label, "visibility": "private"})
    # A chance die until it fails (so the page offers the dramatic failure for a Beat).
    label, traits = rolls["stairs"]
    for _ in range(8):
        check = alice.post(
            checks,
            {
                "character": marianne,
                "traits": traits,
                "modifiers": [{"value": -4, "label": spec["modifier"]}],
                "label": label,
            },
        )
        if check["outcome"] == "failure":
            break
    label, traits = rolls["call"]
    gm.post(
        f"campaigns/{cid}/calls/",
        {"characters": [marianne], "request": {"traits": traits, "label": label}},
    )
    return {"cofd": cid, "contexts": contexts}


def shoot(base: str, browser: Any, language: str, staged: dict[str, Any], out: Path) -> None:
    cid = staged["cofd"]
    shots = [
        ("gm", f"/campaigns/{cid}/gm/", f"gm-{language}.png", 1440),
        ("alice", f"/campaigns/{cid}/play/", f"player-{language}.png", 1440),
        ("gm", "/audit/", f"audit-{language}.png", 1440),
        ("alice", f"/campaigns/{cid}/play/", f"player-phone-{language}.png", 390),
    ]
    for who, path, name, width in shots:
        context = staged["contexts"][who]
        page = context.new_page()
        page.set_viewport_size({"width": width, "height": 900 if width > 500 else 844})
        page.goto(base + path)
        page.wait_for_selector(
            "#conn[data-state=live]", timeout=10_000
        ) if "audit" not in path else None
        if name.startswith("player"):
            # A roll being put together: two traits from the sheet, and its odds.
            page.evaluate("localStorage.clear()")
            page.reload()
            page.wait_for_selector("#conn[data-state=live]", timeout=10_000)
            page.locator("#sheets button.trait").nth(0).click()
            page.locator("#sheets button.trait").nth(4).click()
        if width < 500:
            # The phone after Roll: the result under the button, where the thumb is.
            page.locator("#composer-roll").click()
            page.wait_for_selector("#composer-result .last-roll", timeout=10_000)
        page.wait_for_timeout(1200)
        if width > 500:
            page.evaluate("window.scrollTo(0, 0)")
        # The GM's dashboard as it fits a 1440x900 screen; the player's page and the audit whole.
        whole = name.startswith(("player-", "audit")) and width > 500
        page.screenshot(path=str(out / name), full_page=whole)
        page.close()
        print("wrote", out / name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running server (default: start one on a temp database)")
    parser.add_argument("--out", type=Path, default=OUT, help="where to write (default: here)")
    parser.add_argument("--language", choices=["ru", "en"], action="append")
    args = parser.parse_args()
    server = contextlib.nullcontext(args.url) if args.url else own_server()
    with server as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for language in args.language or ["ru", "en"]:
            staged = stage(base, browser, language)
            shoot(base, browser, language, staged, args.out)
            for context in staged["contexts"].values():
                context.close()
        browser.close()


if __name__ == "__main__":
    main()
