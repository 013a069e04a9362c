# The live feed's kit: a table, private Redis servers and WebSocket clients.
from tests.live.conftest import feeds, private_redis, table  # noqa: F401
