"""The browser tests' server: the production settings, with static files collected into a
temporary directory (STATIC_ROOT is fixed in config/settings.py) and served by WhiteNoise."""

import os

from config.settings import *  # noqa: F403

STATIC_ROOT = os.environ["TABLECHECK_STATIC_ROOT"]

# The test process hashes passwords with MD5 for speed (tests/conftest.py); so does its server.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
