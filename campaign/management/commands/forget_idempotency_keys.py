from django.conf import settings
from django.core.management.base import BaseCommand

from campaign.idempotency import forget_old_keys


class Command(BaseCommand):
    help = "Delete Idempotency-Keys older than IDEMPOTENCY_KEY_HOURS (they are ignored anyway)."

    def handle(self, *args, **options):
        deleted = forget_old_keys()
        self.stdout.write(
            f"forgot {deleted} key(s) older than {settings.IDEMPOTENCY_KEY_HOURS} hours"
        )
