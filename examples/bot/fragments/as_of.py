from datetime import UTC, datetime

monday = datetime(2026, 11, 16, 9, tzinfo=UTC)
# what the bot knew about Alice on Monday morning, even if corrected or retracted since
then = await queue.context(42, user_id=7, query="Where does Alice live?", as_of=monday)
print(then.text)  # - [2026-10-01 – 2026-11-02] Alice lives in Lisbon.

# what is known now about where Alice lived during October
october = await queue.recall(
    42, "Where does Alice live?", user_id=7,
    since=datetime(2026, 10, 1, tzinfo=UTC), until=datetime(2026, 11, 1, tzinfo=UTC),
)
