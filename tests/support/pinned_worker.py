"""``python -m tests.support.pinned_worker run …``: the real worker CLI, its own embedder broken.

The pinned worker's end-to-end test needs a worker process whose *local* state fails every
run while the farm and its peers are fine — the case a supervisor never sees, since the
process answers, claims and ticks. With ``PINNED_FAULT=embedder`` in this process's
environment only, its embedding calls raise
:class:`~llm_client.LocalModelUnavailable` (a local model that cannot be loaded) before any
request leaves the process: each run's embedding fails and the run is released, attempt
refunded; the breakers and the farm never see it. Nothing else is changed: the worker, its
watchdog, its pinned monitor and its health server are the real ones.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from llm_client import LocalModelUnavailable
from memory_worker.cli import main
from memory_worker.consolidation.routed import RoutedModels


async def _broken_embedder(self: RoutedModels, texts: Sequence[str], **_: Any) -> Any:
    raise LocalModelUnavailable("this worker's embedding model cannot be loaded (test fault)")


if __name__ == "__main__":
    if os.environ.get("PINNED_FAULT") == "embedder":
        RoutedModels._embed = _broken_embedder  # type: ignore[method-assign]
    main()
