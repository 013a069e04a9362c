# The API tests' table, and the live feed's servers, table and clients.
from tests.api.conftest import build_world  # noqa: F401
from tests.live.conftest import (  # noqa: F401
    feeds,
    live_server_process,
    make_table,
    server,
    table,
)
