"""The forget trim's block time (§14): the kept rows swapped in, against passing them in ARGV.

After a user forget the zeroed rows are cut off a chat's packed vector string by a
compare-and-set script (``cards/lua/forget_trim.lua``; a cluster has no
``WATCH``/``MULTI``). The kept rows are staged with a plain ``SET`` and the script
``RENAME``s them in. Baseline, measured in the same run: the same compare-and-set with
the kept rows handed to the script in ARGV and ``SET`` inside it — the server copies
the bytes into Lua and back while every other client waits. Figures are the
server's own time per script call (SLOWLOG), median of ``--samples``.

    python bench/forget_trim.py [--samples 7]
"""

from __future__ import annotations

import statistics

from common import fresh_bench, run_bench

from memory_worker.cards.forget import CardForget, TrimCut
from memory_worker.keys import Keys

ROWS = 10_000
#: The baseline: the kept rows through ARGV (the design this replaced on the way to a cluster).
ARGV_SET = """
if (redis.call('GET', KEYS[3]) or '0') ~= ARGV[1] then return 0 end
if redis.call('LLEN', KEYS[5]) ~= tonumber(ARGV[2]) then return 0 end
redis.call('SET', KEYS[1], ARGV[3])
redis.call('SET', KEYS[2], ARGV[4])
redis.call('INCR', KEYS[3])
redis.call('INCR', KEYS[4])
return 1
"""


async def script_ms(redis: object, call: object, samples: int, keys: Keys) -> float:
    times: list[float] = []
    for _ in range(samples):
        await redis.set(keys.chat(1, "vecver"), 1)  # type: ignore[attr-defined]
        await redis.slowlog_reset()  # type: ignore[attr-defined]
        assert await call()  # type: ignore[operator]
        log = await redis.slowlog_get(50)  # type: ignore[attr-defined]
        times += [e["duration"] / 1000 for e in log if e["command"].startswith(b"EVALSHA")]
    return statistics.median(times)


async def main(samples: int) -> None:
    async with fresh_bench() as bench:
        redis, keys = bench.redis, Keys(bench.settings.key_prefix)
        await redis.config_set("slowlog-log-slower-than", 0)
        await redis.rpush(keys.chat(1, "vecids"), *range(ROWS))
        forget = CardForget(redis, keys, chunk=100)
        baseline = redis.register_script(ARGV_SET)
        names = [keys.chat(1, s) for s in ("vec", "vecmask", "vecver", "vecrw", "vecids")]
        print(
            f"{'kept rows':>12} {'ARGV + SET (baseline)':>22} {'staged + RENAME':>16} {'ratio':>7}"
        )
        for dim in (512, 1536, 4096):
            rows, mask = b"\x01" * (ROWS * dim), b"\x01" * ROWS
            cut = TrimCut("1", ROWS, rows, mask)

            async def staged(cut: TrimCut = cut) -> bool:
                return await forget.set_trim(1, cut)

            async def argv(rows: bytes = rows, mask: bytes = mask) -> object:
                return await baseline(keys=names, args=["1", ROWS, rows, mask])

            base_ms = await script_ms(redis, argv, samples, keys)
            ours_ms = await script_ms(redis, staged, samples, keys)
            label = f"{ROWS}x{dim} B"
            print(f"{label:>12} {base_ms:19.2f} ms {ours_ms:13.2f} ms {ours_ms / base_ms:7.3f}")


if __name__ == "__main__":
    run_bench(main, __doc__, samples=7)
