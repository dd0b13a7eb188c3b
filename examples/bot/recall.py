import asyncio
from datetime import UTC, datetime, timedelta

from memory_worker import MemoryQueue


async def main() -> None:
    queue = await MemoryQueue.connect(embedded=True)
    for card, score in await queue.recall(42, "What does Alice drink?", k=5, user_id=7):
        print(f"{score:.2f}  {card.fact_text}")  # 0.97  Alice loves green tea.
    last_month = datetime.now(UTC) - timedelta(days=30)
    for hit in await queue.recall(42, "Where did Maria travel?", k=3, since=last_month):
        print(f"{hit.score:.2f}  {hit.card.fact_text}  (said {hit.observed_at:%d %b})")
    await queue.close()


asyncio.run(main())
