import asyncio

from memory_worker import MemoryQueue


async def main() -> None:
    queue = await MemoryQueue.connect()
    for card, score in await queue.recall(42, "What does Alice drink?", k=5, user_id=7):
        print(f"{score:.2f}  {card.fact_text}")  # 0.87  Alice loves green tea.
    await queue.close()


asyncio.run(main())
