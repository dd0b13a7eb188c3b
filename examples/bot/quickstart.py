import asyncio

from memory_worker import MemoryQueue


async def main() -> None:
    queue = await MemoryQueue.connect(embedded=True)  # REDIS_URL, else var/'s Valkey
    result = await queue.enqueue(
        {
            "chat_id": 42,
            "range_start": "2026-11-02T18:00:00Z",
            "range_end": "2026-11-02T19:00:00Z",
            "messages": [
                {
                    "message_id": 1,
                    "user_id": 7,
                    "sender_name": "Alice",
                    "text": "I live in Lisbon and I really love green tea.",
                    "sent_at": "2026-11-02T18:05:00Z",
                }
            ],
        }
    )
    print(result.status.value)  # enqueued | duplicate | queue_full | daily_cap
    if result.run_id is not None:
        run = await queue.get_run(result.run_id)
        print(run.status.value, run.attempts)  # "queued 0" until a worker takes it
    for card in await queue.visible_cards(42, user_id=7):  # once `memory-worker run` did
        print(card.fact_text)
    await queue.close()


asyncio.run(main())
