"""The browser tests' server: the production settings, with static files collected into a
temporary directory (STATIC_ROOT is fixed in config/settings.py) and served by WhiteNoise."""

import os

from config.settings import *  # noqa: F403
from tests.workers import key_prefix

STATIC_ROOT = os.environ["TABLECHECK_STATIC_ROOT"]

# The test process hashes passwords with MD5 for speed (tests/conftest.py); so does its server.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# The xdist workers' servers share one Redis: each worker's keeps keys of its own.
if CACHES["default"]["BACKEND"].endswith("RedisCache"):  # noqa: F405
    CACHES["default"]["KEY_PREFIX"] = key_prefix()  # noqa: F405
if CHANNEL_LAYERS["default"]["BACKEND"].startswith("channels_redis"):  # noqa: F405
    CHANNEL_LAYERS["default"]["CONFIG"]["prefix"] = key_prefix()  # noqa: F405
