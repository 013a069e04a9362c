from django.core.management.base import BaseCommand

from campaign.demo import load_demo


class Command(BaseCommand):
    help = "Create the demo GM, players and one campaign per game system (idempotent)."

    def handle(self, *args, **options):
        for line in load_demo():
            self.stdout.write(line)
