import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memory_worker import MemoryQueue


async def main() -> None:
    queue = await MemoryQueue.connect(embedded=True)
    question = "What should I drink tonight?"
    memory = await queue.context(42, user_id=7, query=question, max_tokens=800)
    prompt = f"{memory.text}\nUser: {question}\nAssistant:"
    print(memory.tokens, "tokens:", memory.text.splitlines()[1])  # the best card's line

    this_year = datetime.now(UTC) - timedelta(days=365)  # only what was said since then
    for card, _score in await queue.recall(
        42, "Where does Alice live?", k=1, user_id=7, since=this_year
    ):
        print(card.ref, card.valid_from.date(), card.fact_text)
        # Alice said the bot got it wrong: a card asserted by the bot replaces it
        fixed = await queue.correct(card.ref, "Alice lives in Porto", actor="bot:chat-42")
        print("corrected:", fixed.fact_text, "replaces", fixed.corrects)

    # "Remember that I'm vegetarian": stored now, with no run and no farm call
    card = await queue.remember(42, "Alice is vegetarian", user_id=7, actor="bot:chat-42")
    print("remembered:", card.ref, card.asserted_by, card.has_embedding)

    export = await queue.export(42, user_id=7)  # her cards, episodes, links: JSON lines
    await asyncio.to_thread(Path("user-7.jsonl").write_bytes, b"".join(export.lines()))
    print("exported", export.counts["cards"], "cards;", len(prompt) > 0)
    await queue.close()


asyncio.run(main())
