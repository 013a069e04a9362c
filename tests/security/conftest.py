# The API tests' table, and the live feed's servers, table and clients.
from tests.api.conftest import build_world  # noqa: F401
from tests.live.conftest import feeds, live_server_process, server, table  # noqa: F401
