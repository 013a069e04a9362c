"""Revoking a user's access: the API token goes, and open sockets are told to close.

It happens at logout, at a password change, when the user asks (API and home page), and when
staff deactivate the account (`deactivate_user`). The live feed connects to `access_revoked` to
close the user's sockets (in every process); a browser whose own session is still valid
reconnects with it at once (a deactivated account's session is not: Django's ModelBackend
refuses it).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.contrib.auth.signals import user_logged_out
from django.db import transaction
from django.db.models.signals import pre_save
from django.dispatch import Signal, receiver
from rest_framework.authtoken.models import Token

from accounts.models import SocketTicket

# Sent after the revocation commits, with user_id.
access_revoked = Signal()


def revoke_access(*, user: AbstractBaseUser) -> None:
    user_id = user.pk
    with transaction.atomic():
        Token.objects.filter(user_id=user_id).delete()
        SocketTicket.objects.filter(user_id=user_id).delete()
        transaction.on_commit(lambda: access_revoked.send(sender=None, user_id=user_id))


def deactivate_user(*, user: AbstractBaseUser) -> None:
    """The account can no longer sign in, and what it is signed in with stops working now: its
    API token and socket tickets are deleted and its open sockets close. Whoever deactivates an
    account calls this (the admin's form and its action do); the user row need not be saved
    before, nor again after."""
    with transaction.atomic():
        type(user).objects.filter(pk=user.pk).update(is_active=False)
        user.is_active = False
        revoke_access(user=user)


@receiver(user_logged_out)
def _on_logout(sender: Any, request: Any, user: AbstractBaseUser | None, **kwargs: Any) -> None:
    if user is not None:
        revoke_access(user=user)


@receiver(pre_save, sender=get_user_model())
def _on_password_change(sender: Any, instance: AbstractBaseUser, **kwargs: Any) -> None:
    if instance.pk is None:
        return
    stored = sender.objects.filter(pk=instance.pk).values_list("password", flat=True).first()
    if stored is not None and stored != instance.password:
        revoke_access(user=instance)
