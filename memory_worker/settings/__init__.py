"""Settings (§13): every knob in one pydantic-settings model, checked before anything runs.

- :mod:`~memory_worker.settings.model`: :class:`Settings` — every setting with its default,
  bounds and env name (``MEMORY_…``); ``get_settings()``, the process's, read once; ``load_settings()`` (checked, one-line errors).
- :mod:`~memory_worker.settings.memory_use`: how the bot uses memory (the prompt context's
  ranking and budget, exports), a base of :class:`Settings`.
- :mod:`~memory_worker.settings.runs`, :mod:`~memory_worker.settings.recall`,
  :mod:`~memory_worker.settings.memory_use`,
  :mod:`~memory_worker.settings.console`, :mod:`~memory_worker.settings.gateway`,
  :mod:`~memory_worker.settings.breakers`: groups of fields declared in bases of
  :class:`Settings`, each read together by one part (a run's lease, caps and retention,
  recall's ranking, the bot's use of memory, the console, the gateway, the breakers).
- :mod:`~memory_worker.settings.types`: the field types that mask themselves (Redis URLs,
  tokens, the DSN), so no output can print a secret: masking is by type, not by name.
- :mod:`~memory_worker.settings.recall`: :class:`RecallSettings`, the base holding how recall
  ranks (the fusion of the cosine and BM25, the time boost; §16).
- :mod:`~memory_worker.settings.checks`: what pydantic cannot say alone — settings that
  contradict each other, a prompt version with no prompt — and the one-line error.

Import from here: ``from memory_worker.settings import Settings, get_settings``.
"""

from memory_worker.settings.model import Settings, env_name, get_settings, load_settings

__all__ = ["Settings", "env_name", "get_settings", "load_settings"]
