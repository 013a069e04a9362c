"""The sockets' protocol: uvicorn's (websockets, sans-I/O) with its compression tuned for the
live feed (`uvicorn … --ws config.websocket:WebSocketProtocol`; every command that serves the
app passes it: Makefile, docker-compose.yml, the tests' and benches' servers).

A socket that catches up is sent the log as it stands: 10,000 events are about 20 MB of JSON,
and compressing them was the largest single cost of a catch-up on the server (issue #17).
uvicorn compresses at zlib's default level (6) in a 4 KiB window; level 1 in a 16 KiB window
takes less than half its CPU for about a fifth more bytes (`bench/log.py`'s frames: 0.28 s and
2.3 MB against 0.12 s and 2.8 MB; a 2 KiB event repeats the one before it at about that
distance, which a 4 KiB window mostly misses). zlib touches the larger window only as a socket
sends that much, so an idle socket costs what it did.
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.extensions.permessage_deflate import ServerPerMessageDeflateFactory
from websockets.server import ServerProtocol

LEVEL = 1
WINDOW_BITS = 14  # the server's window: 16 KiB
MEM_LEVEL = 6  # zlib's hash table: 32 KiB (its default, 8, is 128 KiB and no faster here)
# What the client compresses with (the few small frames a page sends): uvicorn's own choice.
CLIENT_WINDOW_BITS = 12


class WebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's sans-I/O protocol, negotiating permessage-deflate with the settings above."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.config.ws_per_message_deflate:
            self.conn = ServerProtocol(
                extensions=[
                    ServerPerMessageDeflateFactory(
                        server_max_window_bits=WINDOW_BITS,
                        client_max_window_bits=CLIENT_WINDOW_BITS,
                        compress_settings={"level": LEVEL, "memLevel": MEM_LEVEL},
                    )
                ],
                max_size=self.config.ws_max_size,
                logger=self.conn.logger,
            )


# The option that selects it, for the commands written in Python (tests, benches).
UVICORN_WS = ("--ws", f"{__name__}:{WebSocketProtocol.__name__}")
