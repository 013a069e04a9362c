"""WSGI entry point: the pages, the REST API and /health/ under gunicorn (config/gunicorn.py).

In production the live feed's sockets are served by `config.asgi` under uvicorn, and a reverse
proxy puts both behind one port (/ws/ to uvicorn, the rest here: deploy/nginx.conf). WSGI costs
about half the CPU per request of Django's ASGI handler, which runs every sync view through a
thread hand-off (bench/serving.py measures both stacks).

Two things uvicorn did for the ASGI app are done here:
- a committed event is rendered and sent to the channel layer by a publishing loop in a thread of
  this process (rolls/live/broadcast.py's `serving`), so a request neither renders the broadcast
  nor opens the layer's connections on a fresh event loop each time;
- behind the proxy, the client's address comes from X-Forwarded-For when the peer is trusted
  (FORWARDED_ALLOW_IPS, as uvicorn's --forwarded-allow-ips): sign-in lockouts count per client,
  not per proxy.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Iterable
from typing import Any

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_application = get_wsgi_application()

from config.sharing import warn_if_sqlite_is_shared  # noqa: E402
from rolls.live.broadcast import serving  # noqa: E402

warn_if_sqlite_is_shared()

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


async def _no_request(scope: Any, receive: Any, send: Any) -> None:
    return None


def start_publishing_loop() -> asyncio.AbstractEventLoop:
    """An event loop in a daemon thread that publishes this process's committed events.

    Started after gunicorn forks (config/gunicorn.py keeps preload_app off): a loop started
    before the fork would look alive in the children and never run."""
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, name="live-publish", daemon=True).start()
    # `serving` binds the live feed's publisher to the loop that runs the wrapped application.
    asyncio.run_coroutine_threadsafe(serving(_no_request)({}, None, None), loop).result(10)
    return loop


def trusted_peers() -> tuple[bool, frozenset[str]]:
    """(trust every peer, trusted addresses) from FORWARDED_ALLOW_IPS (default: 127.0.0.1)."""
    names = {
        name.strip()
        for name in os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1").split(",")
        if name.strip()
    }
    return "*" in names, frozenset(names)


def forwarded_for(application: WsgiApp) -> WsgiApp:
    """REMOTE_ADDR from X-Forwarded-For when the peer is a trusted proxy: the nearest address
    that is not itself trusted (uvicorn's rule; every address trusted: the first)."""
    trust_all, trusted = trusted_peers()

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        chain = environ.get("HTTP_X_FORWARDED_FOR")
        if chain and (trust_all or environ.get("REMOTE_ADDR") in trusted):
            hops = [hop.strip() for hop in chain.split(",") if hop.strip()]
            untrusted = [] if trust_all else [hop for hop in hops if hop not in trusted]
            if hops:
                environ["REMOTE_ADDR"] = untrusted[-1] if untrusted else hops[0]
        return application(environ, start_response)

    return app


start_publishing_loop()
application = forwarded_for(django_application)
