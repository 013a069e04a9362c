"""Benchmark: the table pages with a long session (1,000 rolls) beside a short one (5 rolls).

    .venv/bin/python bench/feed.py [--rolls 1000] [--baseline 5] [--repeat 8]

Starts the real app under uvicorn (SQLite under var/bench/, DEBUG off, static files collected),
with two CofD campaigns that differ only in how many rolls their open session holds. In Debian's
Chromium, for each campaign it measures
  - page ready: from navigation to a live feed with its cards drawn (GM dashboard), and
  - a roll's appearance: from a player's page sending the roll to its card in the GM's feed,
  - the longest main-thread task on the GM page while the rolls arrive,
alternating the campaigns so that neither gets a warmer machine. Figures are medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "var" / "bench"
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
PASSWORD = "bench-feed-pass"
SHEET = {
    "attributes": {"Wits": 3, "Dexterity": 2, "Strength": 2},
    "skills": {"Occult": 2, "Athletics": 1, "Brawl": 3},
}
ROLLS = [["Wits", "Occult"], ["Dexterity", "Athletics"], ["Strength", "Brawl"]]


def prepare(database_url: str, counts: list[int]) -> None:
    """Runs in a child process with Django set up: the users and one campaign per count."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from campaign import services
    from rolls.checks import services as roll_services

    call_command("migrate", verbosity=0)
    User = get_user_model()
    gm = User.objects.create_user("gm", password=PASSWORD)
    alice = User.objects.create_user("alice", password=PASSWORD)
    out = {}
    for count in counts:
        campaign = services.create_campaign(name=f"Rolls {count}", system="cofd", created_by=gm)
        services.join_campaign(invite_code=campaign.invite_code, user=alice)
        character = services.create_character(
            campaign=campaign, actor=gm, name="Marianne", traits=SHEET, owner_id=alice.pk
        )
        services.start_session(campaign=campaign, actor=gm, title="Friday")
        for n in range(count):
            roll_services.check_roll(
                campaign=campaign,
                actor=alice,
                request={"character": character.id, "traits": ROLLS[n % 3], "label": f"#{n}"},
            )
        out[count] = {"campaign": campaign.pk, "character": str(character.id)}
    print(json.dumps(out))


def serve(env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    sys.path.insert(0, str(ROOT))
    from tests.browser.conftest import Server

    server = Server(env)
    server.start()
    return server, server.url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rolls", type=int, default=1000)
    parser.add_argument("--baseline", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=8)
    args = parser.parse_args()
    BENCH.mkdir(parents=True, exist_ok=True)
    db = BENCH / "feed.sqlite3"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="bench-feed-"))
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{db}",
        "DJANGO_SETTINGS_MODULE": "tests.browser.server_settings",
        "TABLECHECK_STATIC_ROOT": str(workdir / "static"),
        "TABLECHECK_SERVER_LOG": str(workdir / "server.log"),
        "DEBUG": "0",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "LOG_LEVEL": "WARNING",
        "PYTHONPATH": str(ROOT),
    }
    env.pop("REDIS_URL", None)
    started = time.monotonic()
    made = subprocess.run(
        [sys.executable, __file__, "--prepare", str(args.rolls), str(args.baseline)],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    tables = {int(k): v for k, v in json.loads(made.stdout.strip().splitlines()[-1]).items()}
    print(f"prepared {args.rolls} + {args.baseline} rolls in {time.monotonic() - started:.0f} s")
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"],
        cwd=ROOT,
        env=env,
        check=True,
    )
    server, url = serve(env)
    try:
        results = measure(url, tables, args)
    finally:
        server.stop()
    report(results, args)


def measure(url: str, tables: dict[int, dict], args: argparse.Namespace) -> dict:
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(ROOT))
    from tests.browser.conftest import CHROMIUM_ARGS

    results = {n: {"ready": [], "appear": [], "longtask": []} for n in tables}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        sessions = {name: signed_in(browser, url, name) for name in ("gm", "alice")}
        players = {}
        for n, table in tables.items():
            page = sessions["alice"].new_page()
            page.goto(f"{url}/campaigns/{table['campaign']}/play/")
            page.wait_for_selector("#conn[data-state=live]")
            players[n] = page
        for round_ in range(args.repeat + 1):  # the first round warms up and is not counted
            for n, table in tables.items():
                gm = sessions["gm"].new_page()
                start = time.perf_counter()
                gm.goto(f"{url}/campaigns/{table['campaign']}/gm/")
                gm.wait_for_selector("#conn[data-state=live]")
                gm.wait_for_selector("#feed article.roll")
                ready = time.perf_counter() - start
                watch(gm)
                sent = players[n].evaluate(ROLL, table["character"])
                # A function, not an expression: the page's CSP forbids eval.
                arrived = gm.wait_for_function("() => window.__arrived", timeout=60_000)
                arrived = arrived.json_value()
                longest = gm.evaluate("window.__longest")
                if round_:
                    results[n]["ready"].append(ready * 1000)
                    results[n]["appear"].append(arrived - sent)
                    results[n]["longtask"].append(longest)
                gm.close()
        browser.close()
    return results


def signed_in(browser, url: str, username: str):
    context = browser.new_context(viewport={"width": 1440, "height": 900}, base_url=url)
    page = context.new_page()
    page.goto("/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_load_state()
    page.close()
    return context


# The GM page notes when a new card appears, and its longest task meanwhile.
WATCH = """() => {
  window.__arrived = 0;
  window.__longest = 0;
  const feed = document.getElementById("feed");
  const seen = new Set([...feed.querySelectorAll("article.roll")].map((a) => a.dataset.seq));
  new MutationObserver(() => {
    for (const a of feed.querySelectorAll("article.roll")) {
      if (!seen.has(a.dataset.seq) && !window.__arrived) window.__arrived = Date.now();
    }
  }).observe(feed, { childList: true });
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__longest = Math.max(window.__longest, e.duration);
  }).observe({ type: "longtask" });
}"""


def watch(page) -> None:
    page.evaluate(WATCH)


ROLL = """async (character) => {
  const csrf = document.cookie.match(/csrftoken=([^;]+)/)[1];
  const sent = Date.now();
  const api = JSON.parse(document.getElementById("table-data").textContent).api;
  const response = await fetch(api + "checks/", {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-CSRFToken": csrf },
    body: JSON.stringify({ character, traits: ["Wits", "Occult"], label: "bench" }),
  });
  if (!response.ok) throw new Error(await response.text());
  return sent;
}"""


def report(results: dict, args: argparse.Namespace) -> None:
    med = {n: {k: statistics.median(v) for k, v in r.items()} for n, r in results.items()}
    print(f"GM dashboard in Chromium, medians of {args.repeat} rounds:")
    print(f"{'':<34}{args.baseline:>10} rolls{args.rolls:>10} rolls{'ratio':>8}")
    for key, label in (
        ("ready", "page ready (ms)"),
        ("appear", "a roll appears on the GM page (ms)"),
        ("longtask", "longest task while it arrives (ms)"),
    ):
        a, b = med[args.baseline][key], med[args.rolls][key]
        ratio = f"{b / a:.2f}" if a else "—"
        print(f"{label:<34}{a:>16.0f}{b:>16.0f}{ratio:>8}")
    sys.path.insert(0, str(Path(__file__).parent))
    from summary import record

    record(
        f"feed: page ready, {args.rolls} rolls in the session",
        med[args.rolls]["ready"],
        "ms",
        med[args.baseline]["ready"],
        f"baseline: {args.baseline} rolls",
    )
    record(
        f"feed: a roll appears on another page, {args.rolls} rolls",
        med[args.rolls]["appear"],
        "ms",
        med[args.baseline]["appear"],
        f"baseline: {args.baseline} rolls",
    )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--prepare":
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        prepare(os.environ["DATABASE_URL"], [int(n) for n in sys.argv[2:]])
    else:
        main()
