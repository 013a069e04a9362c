"""The browser tests' server: the production settings, with static files collected into a
temporary directory (STATIC_ROOT is fixed in config/settings.py) and served by WhiteNoise."""

import os

from config.settings import *  # noqa: F403

STATIC_ROOT = os.environ["TABLECHECK_STATIC_ROOT"]

# The test process hashes passwords with MD5 for speed (tests/conftest.py); so does its server.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# The xdist workers' servers share one Redis, and their test databases give out the same ids:
# each worker's server keeps keys of its own, or one worker's page would count another's writes
# against its user (the throttle's counters are by user id) and hear another's campaign of the
# same id (the channel groups and presence are by campaign id).
_worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
if CACHES["default"]["BACKEND"].endswith("RedisCache"):  # noqa: F405
    CACHES["default"]["KEY_PREFIX"] = f"test-{_worker}"  # noqa: F405
if CHANNEL_LAYERS["default"]["BACKEND"].startswith("channels_redis"):  # noqa: F405
    CHANNEL_LAYERS["default"]["CONFIG"]["prefix"] = f"test-{_worker}"  # noqa: F405
