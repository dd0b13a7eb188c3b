"""The retry classifier (§4): failure reasons and the rules that map an error onto one.

- :mod:`~llm_client._retry.reasons`: ``FailureReason``, the vocabulary.
- :mod:`~llm_client._retry.classify`: ``retryable_reason`` — a typed error's own reason
  first, then the phrase tables (data, one row per phrase).
"""
