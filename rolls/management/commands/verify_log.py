from __future__ import annotations

import os

from django.core.management.base import BaseCommand, CommandError

from rolls.trust.stored_log import verify_campaigns


class Command(BaseCommand):
    help = (
        "Verify every campaign's event log: gapless seq, hash chain, roll keys against their "
        "commitments, every server roll's faces against its key and client seed, every outcome "
        "against its faces. Carries the stored proof on from its checkpoint (the events since the "
        "last verification); --rehash re-hashes the chain below it first, --fresh proves it all "
        "again. Names each bad event and what does not match."
    )

    def add_arguments(self, parser):
        parser.add_argument("--campaign", type=int, action="append", help="only these campaigns")
        parser.add_argument(
            "--rehash",
            action="store_true",
            help="re-hash the whole chain below the checkpoint first (the fast chain check): "
            "catches an event edited in place without re-hashing, which only the table's owner "
            "can do; run it now and then, e.g. nightly",
        )
        parser.add_argument(
            "--fresh",
            action="store_true",
            help="ignore the stored checkpoints and prove every event again (and forget that "
            "the log changed under an earlier verification)",
        )
        parser.add_argument(
            "--workers",
            type=int,
            default=os.cpu_count() or 1,
            help="processes for a long proof, per session (default: one per CPU; 1: one pass)",
        )

    def handle(self, *args, campaign=None, rehash=False, fresh=False, workers=1, **options):
        report = verify_campaigns(
            campaign_ids=campaign,
            progress_stream=self.stderr._out,
            rehash=rehash,
            fresh=fresh,
            workers=workers,
        )
        for line in report.lines:
            self.stdout.write(line)
        if report.problems:
            raise CommandError(
                f"{report.failed_campaigns} campaign(s) failed verification "
                f"({len(report.problems)} problem(s))"
            )
        self.stdout.write(self.style.SUCCESS(f"OK: {report.events:,} events verify"))
