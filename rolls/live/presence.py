"""Who is connected to a campaign's live feed right now: live state, not events.

Each socket records itself with an expiry that its consumer keeps renewing, so a process that
dies without saying goodbye drops out once its entries expire. With channels_redis the entries
live in Redis beside the layer's own keys, so every server process sees every socket; with the
in-memory layer (one process by definition) they live in the process.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from typing import Any, Protocol

from channels.layers import BaseChannelLayer


class Presence(Protocol):
    async def join(self, campaign_id: int, user_id: int, channel: str, ttl: float) -> None: ...

    async def leave(self, campaign_id: int, channel: str) -> None: ...

    async def online(self, campaign_id: int) -> dict[int, int]:
        """user id -> number of open sockets."""
        ...


class LocalPresence:
    def __init__(self) -> None:
        self._entries: dict[int, dict[str, tuple[int, float]]] = {}

    async def join(self, campaign_id: int, user_id: int, channel: str, ttl: float) -> None:
        self._entries.setdefault(campaign_id, {})[channel] = (user_id, time.monotonic() + ttl)

    async def leave(self, campaign_id: int, channel: str) -> None:
        self._entries.get(campaign_id, {}).pop(channel, None)

    async def online(self, campaign_id: int) -> dict[int, int]:
        now = time.monotonic()
        entries = self._entries.get(campaign_id, {})
        for channel in [c for c, (_, expiry) in entries.items() if expiry < now]:
            del entries[channel]
        return dict(Counter(user_id for user_id, _ in entries.values()))


class RedisPresence:
    """A sorted set per campaign: member "<user id>:<channel>", score = expiry (epoch seconds)."""

    def __init__(self, layer: Any) -> None:
        self.layer = layer

    def _key(self, campaign_id: int) -> str:
        return f"{self.layer.prefix}:presence:{campaign_id}"

    def _connection(self, key: str) -> Any:
        return self.layer.connection(self.layer.consistent_hash(key))

    async def join(self, campaign_id: int, user_id: int, channel: str, ttl: float) -> None:
        key = self._key(campaign_id)
        connection = self._connection(key)
        await connection.zadd(key, {f"{user_id}:{channel}": time.time() + ttl})
        await connection.expire(key, math.ceil(ttl) * 2)

    async def leave(self, campaign_id: int, channel: str) -> None:
        key = self._key(campaign_id)
        connection = self._connection(key)
        # The member name starts with the user id; match on the channel, which is unique.
        for member in await connection.zrange(key, 0, -1):
            if member.decode().split(":", 1)[1] == channel:
                await connection.zrem(key, member)

    async def online(self, campaign_id: int) -> dict[int, int]:
        key = self._key(campaign_id)
        connection = self._connection(key)
        await connection.zremrangebyscore(key, "-inf", time.time())
        members = await connection.zrange(key, 0, -1)
        return dict(Counter(int(member.decode().split(":", 1)[0]) for member in members))


_local = LocalPresence()


def presence_for(layer: BaseChannelLayer) -> Presence:
    from channels_redis.core import RedisChannelLayer

    return RedisPresence(layer) if isinstance(layer, RedisChannelLayer) else _local
