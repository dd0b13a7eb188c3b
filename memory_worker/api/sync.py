"""The blocking bot API (§13): :class:`SyncMemoryQueue`, for bots that are not async.

::

    from memory_worker import SyncMemoryQueue

    with SyncMemoryQueue.connect(embedded=True) as q:      # or redis_url=…, REDIS_URL
        q.enqueue({"chat_id": 42, ...})
        for card, score in q.recall(42, "what does Alice drink?", user_id=7):
            ...

It holds one :class:`~memory_worker.MemoryQueue` on an event loop of its own, run by a
daemon thread it starts in :meth:`SyncMemoryQueue.connect`; each call submits the async
call to that loop and blocks its caller until the answer (or the error: the same
``memory_worker`` types) comes back. Any number of threads may call it at once — their
calls run concurrently on the one loop, over the one connection pool.

Its methods are generated from :class:`~memory_worker.MemoryQueue`'s public methods
(:func:`memory_worker.api.edge.public_methods`): each has the async method's name,
signature and docstring, so a method added there is here too, and a test holds the two to
the same names and signatures.

``close()`` (or leaving the ``with`` block) refuses new calls at once
(:class:`~memory_worker.errors.QueueClosed`), waits up to ``close_grace_seconds`` for the
calls in flight, cancels what is still running (those calls raise ``QueueClosed``; each
write is one script, so it happened whole or not at all), closes the async queue and stops
the thread. Closing again does nothing.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import threading
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from memory_worker.api.edge import public_methods
from memory_worker.api.queue import MemoryQueue
from memory_worker.errors import QueueClosed

if TYPE_CHECKING:
    from types import TracebackType

    from memory_worker.settings import Settings

#: Seconds ``close()`` waits for the async queue's own close before it stops the loop.
_CLOSE_TIMEOUT = 10.0


class _LoopThread:
    """An event loop run forever by a daemon thread; coroutines submitted from any thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="memory-worker-sync", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def is_current(self) -> bool:
        return threading.current_thread() is self._thread

    def submit(self, coro: Coroutine[Any, Any, Any]) -> concurrent.futures.Future[Any]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def stop(self) -> None:
        """Stop the loop, join the thread, close the loop (its remaining tasks cancelled)."""
        if self._thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join()
        if not self.loop.is_closed():
            pending = asyncio.all_tasks(self.loop)
            for task in pending:
                task.cancel()
            if pending:
                self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()


class SyncMemoryQueue:
    """:class:`~memory_worker.MemoryQueue`'s blocking twin: the same methods, each blocking
    until its answer, safe to call from several threads; a context manager. Build it with
    :meth:`connect` (see the module)."""

    #: Seconds ``close()`` waits for the calls in flight before it cancels them.
    close_grace_seconds: float = 5.0

    def __init__(self, queue: MemoryQueue, runner: _LoopThread) -> None:
        """Use :meth:`connect`. ``queue`` was connected on ``runner``'s loop."""
        self._queue = queue
        self._runner = runner
        self._lock = threading.Lock()
        self._inflight: set[concurrent.futures.Future[Any]] = set()
        self._closed = False

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called: every call after it raises
        :class:`~memory_worker.errors.QueueClosed`."""
        return self._closed

    @property
    def settings(self) -> Settings:
        """The settings the queue was connected with."""
        return self._queue.settings

    def close(self) -> None:
        """Refuse new calls, let the calls in flight finish for up to
        ``close_grace_seconds`` (then cancel them: they raise ``QueueClosed``), close the
        queue and stop its thread. Closing again does nothing."""
        if self._runner.is_current():  # it would wait for itself
            raise RuntimeError("SyncMemoryQueue.close() called from its own loop thread")
        with self._lock:
            if self._closed:
                return
            self._closed = True
            inflight = set(self._inflight)
        _, running = concurrent.futures.wait(inflight, timeout=self.close_grace_seconds)
        for future in running:
            future.cancel()
        try:
            self._runner.submit(self._queue.close()).result(timeout=_CLOSE_TIMEOUT)
        except concurrent.futures.TimeoutError:
            pass  # the loop's stop below cancels what is left of it
        finally:
            self._runner.stop()

    def __enter__(self) -> SyncMemoryQueue:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run the queue's method ``name`` on the loop; block until it answers."""
        if self._runner.is_current():  # it would wait for itself
            raise RuntimeError(f"SyncMemoryQueue.{name}() called from its own loop thread")
        with self._lock:
            if self._closed:
                raise QueueClosed(name)
            future = self._runner.submit(_invoke(self._queue, name, args, kwargs))
            self._inflight.add(future)
        try:
            return future.result()
        except concurrent.futures.CancelledError:
            if self._closed:
                raise QueueClosed(name) from None
            raise
        except BaseException:
            future.cancel()  # the caller is interrupted (KeyboardInterrupt): stop the call
            raise
        finally:
            with self._lock:
                self._inflight.discard(future)

    if TYPE_CHECKING:
        # The generated methods (below the class) are MemoryQueue's, blocking: typed loosely.
        @classmethod
        def connect(
            cls,
            redis_url: str | None = None,
            *,
            embedded: bool = False,
            settings: Settings | None = None,
        ) -> SyncMemoryQueue: ...

        def __getattr__(self, name: str) -> Callable[..., Any]: ...


async def _invoke(
    queue: MemoryQueue, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    answer = getattr(queue, name)(*args, **kwargs)
    return await answer if inspect.isawaitable(answer) else answer


def _blocking(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    """A blocking method of :class:`SyncMemoryQueue` standing for ``MemoryQueue.<name>``."""

    def call(self: SyncMemoryQueue, *args: Any, **kwargs: Any) -> Any:
        return self._call(name, args, kwargs)

    call.__name__ = name
    call.__qualname__ = f"SyncMemoryQueue.{name}"
    call.__doc__ = method.__doc__
    call.__signature__ = inspect.signature(method)  # type: ignore[attr-defined]
    return call


def _connect(cls: type[SyncMemoryQueue], *args: Any, **kwargs: Any) -> SyncMemoryQueue:
    runner = _LoopThread()
    try:
        queue = runner.submit(MemoryQueue.connect(*args, **kwargs)).result()
    except BaseException:
        runner.stop()
        raise
    return cls(queue, runner)


def _install() -> None:
    """Give :class:`SyncMemoryQueue` every public method of :class:`MemoryQueue`."""
    for name, method in public_methods(MemoryQueue).items():
        if inspect.isasyncgenfunction(method):  # its answer would be a generator of our loop
            raise TypeError(f"MemoryQueue.{name} is an async generator: answer a list instead")
        if name == "close":
            continue  # its own: it stops the thread too
        if name == "connect":
            connect = _connect
            connect.__name__ = "connect"
            connect.__qualname__ = "SyncMemoryQueue.connect"
            connect.__doc__ = (
                "Connect as :meth:`MemoryQueue.connect <memory_worker.MemoryQueue.connect>` "
                "does (the same arguments), on a loop thread of the queue's own.\n\n"
                + (method.__doc__ or "")
            )
            signature = inspect.signature(method)
            connect.__signature__ = signature.replace(  # type: ignore[attr-defined]
                return_annotation="SyncMemoryQueue"
            )
            setattr(SyncMemoryQueue, name, classmethod(connect))
            continue
        setattr(SyncMemoryQueue, name, _blocking(name, method))


_install()
