from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from rolls.trust.stored_log import verify_campaigns


class Command(BaseCommand):
    help = (
        "Verify every campaign's event log: gapless seq, hash chain, roll keys against their "
        "commitments, every server roll's faces against its key and client seed, every outcome "
        "against its faces. Re-hashes the whole chain, then carries the stored proof on from its "
        "checkpoint. Names each bad event and what does not match."
    )

    def add_arguments(self, parser):
        parser.add_argument("--campaign", type=int, action="append", help="only these campaigns")
        parser.add_argument(
            "--fresh",
            action="store_true",
            help="ignore the stored checkpoints and prove every event again (and forget that "
            "the log changed under an earlier verification)",
        )

    def handle(self, *args, campaign=None, fresh=False, **options):
        report = verify_campaigns(
            campaign_ids=campaign, progress_stream=self.stderr._out, fresh=fresh
        )
        for line in report.lines:
            self.stdout.write(line)
        if report.problems:
            raise CommandError(
                f"{report.failed_campaigns} campaign(s) failed verification "
                f"({len(report.problems)} problem(s))"
            )
        self.stdout.write(self.style.SUCCESS(f"OK: {report.events:,} events verify"))
