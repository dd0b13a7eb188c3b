"""memory-worker: durable consolidation of a chat bot's long-term memory."""

__version__ = "0.1.0"
