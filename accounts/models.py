"""Short-lived, single-use tickets that open a WebSocket without a long-lived secret in its URL."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class SocketTicket(models.Model):
    """Only the ticket's SHA-256 is stored: a leaked table opens no socket."""

    digest = models.CharField(max_length=64, unique=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    expires_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"socket ticket of {self.user_id} until {self.expires_at:%H:%M:%S}"
