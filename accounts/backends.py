from __future__ import annotations

from typing import Any

from axes.backends import AxesStandaloneBackend


class LockoutBackend(AxesStandaloneBackend):
    """django-axes' lockout check for sign-ins that come with a request (the login form, the
    token endpoint); code in the process that calls authenticate() without one (the test client,
    scripts) is not an attacker at the door and passes through to the next backend."""

    def authenticate(
        self, request: Any, username: str | None = None, password: str | None = None, **kwargs: Any
    ):
        if request is None:
            return None
        return super().authenticate(request, username, password, **kwargs)
