"""The Russian text is complete: every message translated, the compiled catalogue up to date, and
every word the pages' scripts show differs from the English unless it is meant to be the same."""

from __future__ import annotations

import gettext
import re
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.utils import translation

from pages.templatetags.tablecheck import ui_strings

LOCALE = Path(settings.BASE_DIR) / "locale" / "ru" / "LC_MESSAGES"
# The rules' own messages (sheets, the roll box, the engines) have a catalogue of their own.
CATALOGUES = [
    LOCALE,
    Path(settings.BASE_DIR) / "rolls" / "systems" / "locale" / "ru" / "LC_MESSAGES",
]
SAME_IN_BOTH = {
    "Nice!/Damnit! (2d10)",
    "+1, +3, +6 …",
    "+1, +2, +3 …",
    "{n}+",
    "{who}: {outcome}",
    "success",  # tone names, not words
    "good",
    "great",
    "mixed",
    "bad",
    "awful",
}


def entries(locale: Path = LOCALE) -> list[dict[str, Any]]:
    text = (locale / "django.po").read_text(encoding="utf-8")
    found = []
    for block in text.split("\n\n")[1:]:
        lines = block.strip().splitlines()
        fuzzy = any(line.startswith("#,") and "fuzzy" in line for line in lines)
        body = "\n".join(line for line in lines if not line.startswith("#"))

        def field(name: str, body: str = body) -> str | None:
            match = re.search(rf'^{re.escape(name)} ((?:".*"\n?)+)', body, re.M)
            if not match:
                return None
            return "".join(
                bytes(part, "utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8")
                for part in re.findall(r'"((?:[^"\\]|\\.)*)"', match.group(1))
            )

        found.append(
            {
                "fuzzy": fuzzy,
                "context": field("msgctxt"),
                "id": field("msgid"),
                "plural": field("msgid_plural"),
                "str": field("msgstr"),
                "forms": [field(f"msgstr[{i}]") for i in range(4)],
            }
        )
    return found


@pytest.mark.parametrize("locale", CATALOGUES, ids=["pages", "rules"])
def test_every_message_is_translated_and_none_is_fuzzy(locale):
    problems = []
    for entry in entries(locale):
        if entry["fuzzy"]:
            problems.append(f"fuzzy: {entry['id']!r}")
        if entry["plural"] is None and not entry["str"]:
            problems.append(f"untranslated: {entry['id']!r}")
        if entry["plural"] is not None and not all(entry["forms"]):
            problems.append(f"a plural form is missing: {entry['id']!r}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("locale", CATALOGUES, ids=["pages", "rules"])
def test_the_compiled_catalogue_matches_the_source(locale):
    with (locale / "django.mo").open("rb") as handle:
        catalogue = gettext.GNUTranslations(handle)
    stale = []
    for entry in entries(locale):
        if entry["plural"] is not None:
            continue
        key = entry["id"] if entry["context"] is None else f"{entry['context']}\x04{entry['id']}"
        if catalogue._catalog.get(key) != entry["str"]:
            stale.append(entry["id"])
    assert not stale, f"run `manage.py compilemessages --ignore=.venv`: {stale[:5]}"


def _flatten(value: Any, path: str = "") -> dict[str, str]:
    if isinstance(value, dict):
        out: dict[str, str] = {}
        for key, item in value.items():
            out.update(_flatten(item, f"{path}.{key}"))
        return out
    if isinstance(value, list):
        out = {}
        for index, item in enumerate(value):
            out.update(_flatten(item, f"{path}[{index}]"))
        return out
    return {path: value} if isinstance(value, str) else {}


def test_every_word_of_the_scripts_has_its_russian():
    with translation.override("en"):
        english = _flatten(ui_strings())
    with translation.override("ru"):
        russian = _flatten(ui_strings())
    untranslated = [
        f"{path}: {text!r}"
        for path, text in english.items()
        if russian[path] == text
        and text not in SAME_IN_BOTH
        and not path.startswith((".trait", ".server_labels"))  # keys, not words
    ]
    assert not untranslated, "\n".join(untranslated)


def test_every_text_the_pages_scripts_get_is_used_by_them():
    """No dead UI text: each key of ui_strings()["t"] appears in static/js, literally or through
    one of the key patterns the scripts build (``bd_<label>``, ``<period>_started``, plurals…)."""
    js_dir = Path(settings.BASE_DIR) / "static" / "js"
    scripts = "\n".join(path.read_text() for path in js_dir.glob("*.js"))
    built = re.compile(
        r"^(bd_\w+|again_\d+|conn_\w+|(session|chapter|scene)_(started|ended|n)"
        r"|(start|end)_(session|chapter|scene)|\w+_(one|few|many|other)"
        r"|dramatic_failure_hint_\w+"  # by the offer's `limit`, which the server names
        r"|again_none|desperate|chance_die|rote"  # terms the server names (`roll_terms`)
        r"|this_(chapter|scene))$"  # the period of an allowance (`flags` of GET state/)
    )
    unused = [
        key
        for key in ui_strings()["t"]
        if not re.search(rf"[\"'`]{re.escape(key)}[\"'`]", scripts) and not built.match(key)
    ]
    assert unused == []
