"""The client's address behind a reverse proxy, for the WSGI server (gunicorn leaves REMOTE_ADDR
as the proxy's). uvicorn does the same for the ASGI app with --forwarded-allow-ips."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def trusted_peers(setting: str | None = None) -> tuple[bool, frozenset[str]]:
    """(trust every peer, trusted addresses) from FORWARDED_ALLOW_IPS (default: 127.0.0.1)."""
    value = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1") if setting is None else setting
    names = {name.strip() for name in value.split(",") if name.strip()}
    return "*" in names, frozenset(names)


def forwarded_for(application: WsgiApp, setting: str | None = None) -> WsgiApp:
    """REMOTE_ADDR from X-Forwarded-For when the peer is a trusted proxy: the nearest address that
    is not itself trusted (uvicorn's rule; every address trusted: the first). Sign-in lockouts
    then count per client, not per proxy."""
    trust_all, trusted = trusted_peers(setting)

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        chain = environ.get("HTTP_X_FORWARDED_FOR")
        if chain and (trust_all or environ.get("REMOTE_ADDR") in trusted):
            hops = [hop.strip() for hop in chain.split(",") if hop.strip()]
            untrusted = [] if trust_all else [hop for hop in hops if hop not in trusted]
            if hops:
                environ["REMOTE_ADDR"] = untrusted[-1] if untrusted else hops[0]
        return application(environ, start_response)

    return app
