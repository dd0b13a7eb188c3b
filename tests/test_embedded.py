"""§2 embedded Valkey: starts, persists with AOF across a restart, is reused."""

from __future__ import annotations

from pathlib import Path

import redis as sync_redis

from memory_worker.embedded import EmbeddedValkey


def test_embedded_valkey_persists_and_is_reused(tmp_path: Path) -> None:
    first = EmbeddedValkey(tmp_path / "valkey").ensure()
    try:
        assert first.owned
        client = sync_redis.Redis.from_url(first.url)
        client.set("k", "v")
        client.close()
        again = EmbeddedValkey(tmp_path / "valkey").ensure()
        assert not again.owned  # reused, not a second server
        assert again.port == first.port
    finally:
        first.stop()
    restarted = EmbeddedValkey(tmp_path / "valkey").ensure()
    try:
        assert restarted.owned
        client = sync_redis.Redis.from_url(restarted.url)
        assert client.get("k") == b"v"  # survived the restart through the AOF
        client.close()
    finally:
        restarted.stop()
