from django.apps import AppConfig


class EventlogConfig(AppConfig):
    name = "eventlog"
    verbose_name = "Event log"
