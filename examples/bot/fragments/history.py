fixed = await queue.correct("42:7", "Alice lives in Porto", actor="bot", request_id="msg-981")
for event in await queue.history("42:7"):
    print(event.at, event.kind, event.card_id, event.actor, event.run_id or event.request_id)
# 2026-10-01 09:12  created     None  worker  run-5521
# 2026-11-02 18:40  observed    None  worker  run-5830
# 2026-11-20 08:03  corrected   12    bot     msg-981
