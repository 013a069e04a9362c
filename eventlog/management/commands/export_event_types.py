"""Write static/js/events.js from the event vocabulary (eventlog/event_types.py)."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from eventlog.event_types import javascript_module

EVENTS_JS = Path(settings.BASE_DIR) / "static" / "js" / "events.js"


class Command(BaseCommand):
    help = "Write static/js/events.js, the event type names for the pages' scripts."

    def handle(self, *args, **options) -> None:
        EVENTS_JS.write_text(javascript_module(), encoding="utf-8")
        self.stdout.write(f"wrote {EVENTS_JS}")
