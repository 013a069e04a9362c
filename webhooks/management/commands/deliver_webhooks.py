import time

from django.core.management.base import BaseCommand

from webhooks.dispatch import deliver_due


class Command(BaseCommand):
    help = "Send public events to the campaigns' webhooks (a loop; --once for one pass)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--once", action="store_true")
        parser.add_argument("--interval", type=float, default=2.0)

    def handle(self, *args, once: bool, interval: float, **options) -> None:
        while True:
            delivered = deliver_due()
            if once:
                self.stdout.write(f"delivered {delivered} event(s)")
                return
            time.sleep(interval)
