"""WSGI entry point: the pages, the REST API and /health/ under gunicorn (config/gunicorn.py).

In production the live feed's sockets are served by `config.asgi` under uvicorn, and a reverse
proxy puts both behind one port (/ws/ to uvicorn, the rest here: deploy/nginx.conf). Serving a
request through WSGI costs about half the CPU of Django's ASGI handler, which runs every sync view
through a thread hand-off (bench/serving.py measures both stacks).

Two things uvicorn did for the ASGI app are done here:
- a committed event is rendered and sent to the channel layer by a publishing loop in a thread of
  this process (rolls/live/broadcast.py's `serving`), so a request neither renders the broadcast
  nor opens the layer's connections on a fresh event loop each time; the loop renders an event
  itself when that needs no query (almost always: a check this process wrote), else on its
  thread pool;
- behind the proxy, the client's address comes from X-Forwarded-For when the peer is trusted
  (FORWARDED_ALLOW_IPS, as uvicorn's --forwarded-allow-ips; config/proxies.py).
"""

from __future__ import annotations

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_application = get_wsgi_application()

from config.proxies import forwarded_for  # noqa: E402
from config.sharing import warn_if_sqlite_is_shared  # noqa: E402
from config.startup import settle  # noqa: E402
from rolls.live.broadcast import start_publishing_loop  # noqa: E402

warn_if_sqlite_is_shared()


# After gunicorn forks (config/gunicorn.py keeps preload_app off): a loop started before the
# fork would look alive in the children and never run.
start_publishing_loop()
application = forwarded_for(django_application)
settle()
