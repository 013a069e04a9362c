from django.apps import AppConfig


class RollsConfig(AppConfig):
    name = "rolls"
    verbose_name = "Rolls"

    def ready(self) -> None:
        import rolls.live.broadcast  # noqa: F401  (publishes committed events live)
        from rolls.checks import projectors, replayers  # noqa: F401  (registers them)
