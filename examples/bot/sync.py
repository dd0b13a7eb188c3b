from concurrent.futures import ThreadPoolExecutor

from memory_worker import SyncMemoryQueue

questions = ["What does Alice drink?", "Where does Alice live?", "Who rides a bike?"]

# a blocking client for bots that are not async; one per process, shared by every thread
with SyncMemoryQueue.connect(embedded=True) as queue:  # REDIS_URL, else var/'s
    result = queue.enqueue(
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

    def best(question: str) -> str:  # e.g. a Flask view or a pyTelegramBotAPI handler
        hits = queue.recall(42, question, k=1, user_id=7)
        words_only = " (farm down: by its words)" if hits.degraded else ""
        return f"{question} -> {hits[0].card.fact_text if hits else '-'}{words_only}"

    with ThreadPoolExecutor(max_workers=4) as pool:
        for line in pool.map(best, questions):
            print(line)  # What does Alice drink? -> Alice loves green tea.

    memory = queue.context(42, user_id=7, query="What should I drink tonight?")
    print(memory.tokens, "tokens, degraded:", memory.degraded)
