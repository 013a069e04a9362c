# The live feed's servers, table and clients (a deactivated account's sockets close).
from tests.live.conftest import (  # noqa: F401
    feeds,
    live_server_process,
    make_table,
    server,
    table,
)
