# The application image. docker-compose.yml runs it twice behind nginx: gunicorn for the pages and
# the API (`gunicorn -c config/gunicorn.py`, config.wsgi) and uvicorn for the live feed's sockets
# (config.asgi). Alone (`docker run`), its default command migrates and serves everything, sockets
# included, from uvicorn on one port: simpler, at about twice the serving CPU per request (README,
# "Scaling out").
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app

COPY pyproject.toml README.md ./
COPY config ./config
COPY eventlog ./eventlog
COPY accounts ./accounts
COPY campaign ./campaign
COPY rolls ./rolls
COPY pages ./pages
COPY webhooks ./webhooks
RUN pip install --no-cache-dir .
COPY . .
RUN DEBUG=0 SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput \
    && useradd --system --home /app app && mkdir -p /app/var && chown -R app /app/var
USER app

ENV WEB_WORKERS=2 WEB_THREADS=8 LIVE_WORKERS=1 PORT=8000
EXPOSE 8000
CMD ["sh", "-c", "python manage.py setup_database && exec uvicorn config.asgi:application --ws config.websocket:WebSocketProtocol --host 0.0.0.0 --port ${PORT} --workers ${WEB_WORKERS} --proxy-headers --forwarded-allow-ips='*'"]
