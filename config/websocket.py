"""The sockets' protocol: uvicorn's (websockets, sans-I/O) with its compression tuned for the
live feed (`uvicorn … --ws config.websocket:WebSocketProtocol`; every command that serves the
app passes it: Makefile, docker-compose.yml, the tests' and benches' servers).

A socket that catches up is sent the log as it stands: 10,000 events are about 20 MB of JSON,
and compressing them was the largest single cost of a catch-up on the server (issue #17).
uvicorn compresses with zlib at its default level (6) in a 4 KiB window. The frames are
compressed by ISA-L (`isal`, Intel's deflate, the same format: any client inflates it) at its
level 1 in a 16 KiB window: on `bench/log.py`'s GM frames 13-14 ms and 2.38 MB, against zlib's
89-96 ms and 2.80 MB at level 1 (0.28 s and 2.3 MB at uvicorn's level 6); a live event alone
9 µs against 24. A 2 KiB event repeats the one before it at about that distance, which a 4 KiB
window mostly misses. Its compressor holds about 32 KiB for an idle socket and 117 KiB once it
has sent a page, zlib's at level 1 43 and 101 KiB (zlib-ng was left for its 128-164 KiB).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from isal import isal_zlib
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.extensions.base import Extension
from websockets.extensions.permessage_deflate import (
    PerMessageDeflate,
    ServerPerMessageDeflateFactory,
)
from websockets.server import ServerProtocol
from websockets.typing import ExtensionParameter

LEVEL = 1
WINDOW_BITS = 14  # the server's window: 16 KiB
MEM_LEVEL = 6  # ISA-L's buffers (1 made it half as fast; 3 to 9 hold and do the same here)
# What the client compresses with (the few small frames a page sends): uvicorn's own choice.
CLIENT_WINDOW_BITS = 12


class IsalDeflateFactory(ServerPerMessageDeflateFactory):
    """websockets' permessage-deflate, its frames compressed by ISA-L. A client that asks for
    server_no_context_takeover (no browser does) is compressed by websockets' own zlib, which
    makes a compressor per message."""

    def process_request_params(
        self, params: Sequence[ExtensionParameter], accepted_extensions: Sequence[Extension]
    ) -> tuple[list[ExtensionParameter], PerMessageDeflate]:
        response, extension = super().process_request_params(params, accepted_extensions)
        if not extension.local_no_context_takeover:  # one compressor for the socket's life
            extension.encoder = isal_zlib.compressobj(
                wbits=-extension.local_max_window_bits, **(self.compress_settings or {})
            )
        return response, extension


def deflate() -> IsalDeflateFactory:
    """What a socket negotiates its compression with."""
    return IsalDeflateFactory(
        server_max_window_bits=WINDOW_BITS,
        client_max_window_bits=CLIENT_WINDOW_BITS,
        compress_settings={"level": LEVEL, "memLevel": MEM_LEVEL},
    )


class WebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's sans-I/O protocol, negotiating permessage-deflate with the settings above."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.config.ws_per_message_deflate:
            self.conn = ServerProtocol(
                extensions=[deflate()],
                max_size=self.config.ws_max_size,
                logger=self.conn.logger,
            )


# The option that selects it, for the commands written in Python (tests, benches).
UVICORN_WS = ("--ws", f"{__name__}:{WebSocketProtocol.__name__}")
