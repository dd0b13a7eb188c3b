"""The retired-run summary: what the replay preview reads instead of every retired run.

The console's preview over 5,000 retired runs read each run's record, error log
and messages flag (three commands a run, a JSON decode each: 323–363 ms under
load). The fail, replay and message-retention scripts now keep a summary in
step with the ``runs:retired`` index (``run_store/lua/retired_summary.lua``):

- ``facts`` — one short field per retired run: last failure code and reason,
  chat, prompt version, attempts (:func:`facts_value` / :func:`parse_facts`);
- ``counts`` — retired runs per (code, reason), and of them those whose
  messages aged out;
- ``aged`` — the runs whose messages retention dropped, scored by when.

A preview filtered by code and/or reason only is answered from ``counts``
plus one page of aged-out runs (:meth:`RetiredSummary.counts_preview`); any
other selection reads the index and ``facts`` (two commands, no JSON).

The summary is used only while it covers exactly the retired index (``HLEN
facts == ZCARD retired``): runs retired by an older release, or removed by
something that did not keep the summary, make it fall back to reading every
run until maintenance reconciles it (:meth:`RetiredSummary.reconcile`).
Reads never write, so a dry run stays byte-identical.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from redis.asyncio import Redis

from llm_client import as_text, lua_text
from memory_worker.keys import Keys

#: Aged-out runs a preview lists (the CLI's --json lists every one).
AGED_PAGE = 20
#: Aged-out ids read per round while looking for a filtered page.
_AGED_SCAN = 500
_AGED_SCAN_MAX = 5000
#: Runs summarised per reconcile script call.
RECONCILE_BATCH = 500


def facts_value(
    code: str | None, reason: str | None, chat_id: int, prompt_version: str, attempts: int
) -> str:
    """One retired run's summary field (the format the fail script writes)."""
    return f"{code or ''}\t{reason or ''}\t{chat_id}\t{prompt_version}\t{attempts}"


@dataclass(frozen=True, slots=True)
class Facts:
    """A retired run as the summary holds it."""

    code: str | None
    reason: str | None
    chat_id: int
    prompt_version: str
    attempts: int


def parse_facts(value: str) -> Facts:
    code, reason, chat, version, attempts = [*value.split("\t", 4), "", "", "", ""][:5]
    return Facts(
        code=code or None,
        reason=reason or None,
        chat_id=int(chat or 0),
        prompt_version=version,
        attempts=int(attempts or 0),
    )


@dataclass(frozen=True, slots=True)
class PairCounts:
    """Retired runs per (code, reason), and of them those whose messages aged out."""

    total: dict[tuple[str | None, str | None], int]
    aged: dict[tuple[str | None, str | None], int]


def parse_counts(raw: dict[str, str]) -> PairCounts:
    total: dict[tuple[str | None, str | None], int] = {}
    aged: dict[tuple[str | None, str | None], int] = {}
    for field, value in raw.items():
        kind, _, pair = field.partition("\t")
        code, _, reason = pair.partition("\t")
        if kind in ("n", "aged") and int(value) > 0:
            (total if kind == "n" else aged)[(code or None, reason or None)] = int(value)
    return PairCounts(total, aged)


def _same(value: str | None, wanted: str | None) -> bool:
    return wanted is None or (value or "").casefold() == wanted.casefold()


def count_matches(
    counts: PairCounts, *, code: str | None, reason: str | None
) -> tuple[Counter[str], Counter[str], int]:
    """Replayable runs by code and by reason, and the aged-out count, for a code/reason filter."""
    by_code: Counter[str] = Counter()
    by_reason: Counter[str] = Counter()
    aged = 0
    for (c, r), n in counts.total.items():
        if not (_same(c, code) and _same(r, reason)):
            continue
        old = counts.aged.get((c, r), 0)
        aged += old
        if n - old > 0:
            by_code[c or "-"] += n - old
            by_reason[r or "-"] += n - old
    return by_code, by_reason, aged


@dataclass(frozen=True, slots=True)
class AgedRun:
    """A retired run whose messages retention dropped: it can no longer be replayed."""

    run_id: str
    chat_id: int
    code: str | None
    reason: str | None
    failed_at_ms: int
    #: When its messages were dropped (None: not known, e.g. erased another way).
    aged_at_ms: int | None


_RECONCILE = lua_text("memory_worker.runs", "retired_summary", "reconcile_retired")


class RetiredSummary:
    """Reads (and, from maintenance only, reconciles) the retired-run summary."""

    def __init__(self, redis: Redis, keys: Keys) -> None:
        self.redis = redis
        self.keys = keys
        self._reconcile = redis.register_script(_RECONCILE)

    async def ready(self) -> bool:
        """Whether the summary covers exactly the retired index (else: read every run)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hlen(self.keys.retired_facts)
            pipe.zcard(self.keys.retired)
            facts, retired = await pipe.execute()
        return int(facts) == int(retired)

    async def counts(self) -> PairCounts:
        raw = await self.redis.hgetall(self.keys.retired_counts)  # type: ignore[misc]
        return parse_counts({as_text(k): as_text(v) for k, v in raw.items()})

    async def facts(self, low: str, high: str) -> list[tuple[str, int, Facts | None, int | None]]:
        """Retired runs in a failure window: (id, failed at, facts, aged at), two reads."""
        rows = await self.redis.zrangebyscore(self.keys.retired, low, high, withscores=True)
        if not rows:
            return []
        ids = [as_text(m) for m, _ in rows]
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hmget(self.keys.retired_facts, ids)
            pipe.zmscore(self.keys.retired_aged, ids)
            values, aged = await pipe.execute()
        return [
            (run_id, int(score), None if v is None else parse_facts(as_text(v)), _ms(a))
            for run_id, (_, score), v, a in zip(ids, rows, values, aged, strict=True)
        ]

    async def aged_page(
        self, *, code: str | None, reason: str | None, limit: int = AGED_PAGE
    ) -> list[AgedRun]:
        """The most recently aged-out runs matching a code/reason filter (bounded scan)."""
        found: list[AgedRun] = []
        for start in range(0, _AGED_SCAN_MAX, _AGED_SCAN):
            rows = await self.redis.zrevrange(
                self.keys.retired_aged, start, start + _AGED_SCAN - 1, withscores=True
            )
            if not rows:
                break
            ids = [as_text(m) for m, _ in rows]
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.hmget(self.keys.retired_facts, ids)
                pipe.zmscore(self.keys.retired, ids)
                values, failed = await pipe.execute()
            for run_id, (_, at), value, failed_at in zip(ids, rows, values, failed, strict=True):
                if value is None or failed_at is None:
                    continue
                facts = parse_facts(as_text(value))
                if _same(facts.code, code) and _same(facts.reason, reason):
                    found.append(
                        AgedRun(
                            run_id, facts.chat_id, facts.code, facts.reason, int(failed_at), int(at)
                        )
                    )
                    if len(found) >= limit:
                        return found
        return found

    async def reconcile(
        self,
        read_facts: Callable[[Sequence[str]], Awaitable[list[tuple[str, str, int]]]],
        *,
        now_ms: int,
        retention_ms: int,
        batch: int = RECONCILE_BATCH,
    ) -> tuple[int, int]:
        """Make the summary cover exactly the retired index: (added, removed).

        ``read_facts`` reads runs the slow way: (id, facts value, failed at ms).
        A run found without messages is marked aged at ``failed at + retention``
        (when retention would have dropped them; not later than now). Cheap when
        already in step (two counts compared).
        """
        if await self.ready():
            return 0, 0
        k = self.keys
        retired = {as_text(m) for m in await self.redis.zrange(k.retired, 0, -1)}
        summarised = {as_text(m) for m in await self.redis.hkeys(k.retired_facts)}  # type: ignore[misc]
        added = removed = 0
        extra = sorted(summarised - retired)
        for start in range(0, len(extra), batch):
            removed += int(
                await self._reconcile(
                    keys=[k.retired, *k.retired_summary],
                    args=["remove", now_ms, *extra[start : start + batch]],
                )
            )
        missing = sorted(retired - summarised)
        for start in range(0, len(missing), batch):
            rows = await read_facts(missing[start : start + batch])
            args: list[str | int] = ["add", now_ms]
            for run_id, value, failed_at in rows:
                args += [run_id, value, min(now_ms, failed_at + retention_ms)]
            added += int(
                await self._reconcile(
                    keys=[k.retired, *k.retired_summary, *(k.run(r[0]) for r in rows)], args=args
                )
            )
        return added, removed


def _ms(value: object) -> int | None:
    return None if value is None else int(float(as_text(value)))
