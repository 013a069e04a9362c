from __future__ import annotations

import time

from django.core.management.base import BaseCommand
from django.db import transaction

from campaign.models import Campaign, Event
from eventlog import projections
from eventlog.progress import Progress
from eventlog.stream import lock_stream


class Command(BaseCommand):
    help = "Rebuild every read model from the event log (per campaign, under its stream lock)."

    def add_arguments(self, parser):
        parser.add_argument("--campaign", type=int, action="append", help="only these campaigns")

    def handle(self, *args, campaign=None, **options):
        campaigns = Campaign.objects.order_by("pk")
        if campaign:
            campaigns = campaigns.filter(pk__in=campaign)
        total = Event.objects.filter(campaign__in=campaigns).count()
        progress = Progress(total, "rebuild", stream=self.stderr._out)
        started = time.perf_counter()
        for item in campaigns:
            with transaction.atomic():
                locked = lock_stream(item.pk)
                events = Event.objects.filter(campaign=locked).order_by("seq").iterator(2000)
                projections.rebuild(locked, _counted(events, progress))
        progress.close()
        elapsed = time.perf_counter() - started
        self.stdout.write(
            self.style.SUCCESS(
                f"rebuilt {campaigns.count()} campaign(s) from {total:,} events "
                f"in {elapsed:.2f}s ({total / max(elapsed, 1e-9):,.0f} events/s)"
            )
        )


def _counted(events, progress: Progress):
    for event in events:
        yield event
        progress.advance()
