"""Transports to the farm (§3): each raises the same typed errors.

- :mod:`~llm_client._transport.base`: what a transport answers, client settings, the
  protocols the walker calls.
- :mod:`~llm_client._transport.discovery`: the Discovery job API (submit, wait for
  capacity, poll); :mod:`~llm_client._transport.envelope` decodes its answers
  (:mod:`~llm_client._transport.error_text`: the text and code of an error value;
  :mod:`~llm_client._transport.retry_after`: the ``Retry-After`` header, RFC 9110's two forms).
- :mod:`~llm_client._transport.openai_compat`: direct OpenAI-compatible chat completions.
- :mod:`~llm_client._transport.local_embed`: the in-process multilingual-e5 embedder.
- :mod:`~llm_client._transport.clients`: route targets → transport clients.
"""
