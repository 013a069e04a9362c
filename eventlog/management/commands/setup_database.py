from __future__ import annotations

import os

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connections

from eventlog.dbroles import grant_app_role


class Command(BaseCommand):
    help = (
        "Migrate as the database owner (DATABASE_OWNER_URL, else DATABASE_URL), then, on "
        "PostgreSQL, create the application's role if needed and grant it only what it needs: "
        "SELECT and INSERT on the event log. Idempotent: run it on every deploy."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--app-role",
            default=os.environ.get("DATABASE_APP_ROLE", ""),
            help="the role the application connects as (default: $DATABASE_APP_ROLE)",
        )

    def handle(self, *args, app_role="", **options):
        alias = "owner" if "owner" in connections.databases else "default"
        call_command("migrate", database=alias, interactive=False, verbosity=options["verbosity"])
        connection = connections[alias]
        if not app_role:
            self.stdout.write("no --app-role/DATABASE_APP_ROLE: the app shares the owner's role")
            return
        if connection.vendor != "postgresql":
            raise CommandError("--app-role needs PostgreSQL")
        password = os.environ.get("DATABASE_APP_PASSWORD") or None
        grant_app_role(connection, role=app_role, password=password)
        self.stdout.write(f"role {app_role}: SELECT/INSERT on the event log, nothing to rewrite it")
