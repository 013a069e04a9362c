"""gunicorn's settings for the pages, the REST API and /health/ (`gunicorn -c config/gunicorn.py`).

The live feed's sockets are served by uvicorn (config.asgi) beside it; deploy/nginx.conf puts both
behind one port. Sized from the environment (README, "Configuration" and "Scaling out").
"""

import os

wsgi_app = "config.wsgi:application"
bind = f"0.0.0.0:{os.environ.get('PORT', '8000')}"
workers = int(os.environ.get("WEB_WORKERS", "2"))
# gthread: a request per thread. Threads stay within the process's connection pool
# (DB_POOL_MAX_SIZE, 10 by default), leaving one connection to the live feed's publisher.
worker_class = "gthread"
threads = int(os.environ.get("WEB_THREADS", "8"))
# Each worker imports the application after the fork and starts its own publishing loop there
# (config/wsgi.py); a loop started in the master would be dead in the workers.
preload_app = False
# Behind the proxy: trust its X-Forwarded-Proto (config/wsgi.py reads X-Forwarded-For the same way).
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
timeout = 60  # a worker silent this long is restarted (requests are bounded far below it)
graceful_timeout = 30
keepalive = 5
accesslog = None
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "info").lower()
# gunicorn 27's control socket sits in the user's home, shared by every gunicorn of that user;
# nothing here uses it.
control_socket_disable = True
