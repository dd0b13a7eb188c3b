"""One memory run turned into memory (§10): filter, batch, extract, validate, embed, write.

- :mod:`~memory_worker.consolidation.consolidate`: one run end to end — ``plan_run``
  (pure) and the steps around the farm calls, ending in one atomic card write.
- :mod:`~memory_worker.consolidation.routed`: the production chat call, embedders and
  ``RunProcessor``, served by the routed walker.
- :mod:`~memory_worker.consolidation.context`: the existing cards a run shows the
  extractor, and the farm usage a run counts.
- :mod:`~memory_worker.consolidation.model_calls`: the chat-call and embedder protocols,
  and texts embedded in checked chunks.
- :mod:`~memory_worker.consolidation.batching`: token budgets per extraction call and
  continuation cursors.
- :mod:`~memory_worker.consolidation.noise`: which messages never reach the extractor.
- :mod:`~memory_worker.consolidation.prompt`: the extraction and merge requests (prompt
  texts in ``prompts/``).
- :mod:`~memory_worker.consolidation.extraction`: the model's answers decoded tolerantly;
  :mod:`~memory_worker.consolidation.json_text` scans cut-off JSON.
- :mod:`~memory_worker.consolidation.validation`: which proposals may become memory (pure).
- :mod:`~memory_worker.consolidation.kept`: a run's validated extraction kept between its
  attempts (§7) — the record, its bytes and what invalidates it (pure).
"""
