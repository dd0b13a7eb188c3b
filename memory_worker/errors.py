"""memory-worker's own error tree (the farm's live in ``llm_client._errors``).

A bot catches a family: what it sent was wrong (``InvalidInput``), what it named is not
there (``NotFound``), the memory refuses it now (``Conflict``), a service it needs cannot
answer now (``Unavailable``), the deployment cannot work as configured
(``ConfigurationError``), Redis failed (``StoreError``). ``RunControl`` is the worker's own
control flow: a bot never sees one. Each family keeps its members' standard bases
(``ValueError``, ``LookupError``, ``KeyError``, ``RuntimeError``), so older ``except`` clauses
still catch what they caught.

::

    MemoryWorkerError
    ├── InvalidInput (ValueError)  the caller's input is wrong; nothing was read or written
    │   ├── InvalidRunRequest      a run request failed validation; nothing was stored
    │   ├── InvalidQuery           a memory call's argument has the wrong type or is out of bounds
    │   │   ├── InvalidId              a chat/thread/user id (or ``k``) is not an int (bool, float, str)
    │   │   ├── EmbeddingSizeMismatch  similar_cards' vector is not of the chat's dimension
    │   │   ├── InvalidCardRef         a card reference is not ``<chat id>:<card id>``
    │   │   ├── InvalidCorrection      a retraction's or correction's actor, reason or fact is
    │   │   │                          empty, too long or holds a secret
    │   │   └── QueryTooLarge          a recall text or ``k`` over its bound (MEMORY_RECALL_MAX_QUERY_CHARS,
    │   │                              MEMORY_QUERY_MAX_K)
    │   ├── ForgetInputError       a forget request names no chat, an unknown chat, or a user without one
    │   └── InvalidExport          an import file is not a whole, valid export (one line says where);
    │       │                      nothing was written
    │       └── ImportTooLarge         the file is over MEMORY_IMPORT_MAX_BYTES
    ├── NotFound (LookupError)     what the call names is not there
    │   ├── RunNotFound (KeyError) no run with that id
    │   └── CardNotFound           no card under that reference (``<chat>:<card>``)
    ├── Conflict                   valid, but the memory's state refuses it now; nothing was written
    │   ├── CardNotLive            a correction names a card that is no longer live (superseded,
    │   │                          retracted, …): correct the card that replaced it
    │   ├── ImportConflict         the target chat holds other memory under the file's card ids, a
    │   │   │                      live card of the same fact, or vectors of another model
    │   │   └── ExportPredatesForget   the chat was forgotten (in part) after the file was exported
    │   ├── ForgetPending          a chat's forget has not completed: its memory is not exported
    │   ├── VectorSpaceMismatch    a query's embedding model is not the one of the chat's vectors
    │   └── QueueClosed (RuntimeError)  a call on a MemoryQueue or SyncMemoryQueue after close()
    │                              (or one still in flight when the sync client closed)
    ├── Unavailable                a service the call needs cannot answer now; ask again later
    │   └── EmbeddingUnavailable   the embedding route failed correct (recall and context answer
    │                              from the words alone instead, marked degraded); the
    │                              ``llm_client`` error (or the embedder's) is its ``__cause__``
    ├── ConfigurationError         the deployment cannot work as configured
    │   ├── SettingsError (ValueError)  a setting is invalid, out of bounds or contradicts another
    │   │   └── SettingsRefused        the same where arq's command line builds WorkerSettings: a
    │   │                              click exception too, shown as memory-worker's one line, exit 2
    │   ├── RedisUrlError (ValueError)  REDIS_URL / MEMORY_CARDS_URL could not be understood
    │   ├── RedisNotConfigured     MemoryQueue.connect got no Redis URL and was not asked for the
    │   │                          embedded server
    │   ├── EmbeddedValkeyError (RuntimeError)  the embedded Valkey could not be started or reached
    │   ├── RoutesIncomplete (ValueError)  the routes file leaves out the route every run needs
    │   │                          (memory_extraction): a worker refuses to start on it
    │   ├── RoutesInvalid          the routes file cannot be loaded (the bot's recall met it); the
    │   │                          ``llm_client.RoutesError`` is its ``__cause__``
    │   ├── ConsoleExposedError    the console would be served off loopback with no token (§15)
    │   └── RedisSetupError        the Redis server cannot safely hold the queue (checked at start)
    │       ├── EvictionPolicyError    maxmemory-policy may evict keys (allkeys-*): runs would vanish
    │       ├── ScriptPermissionError  the Redis user may not run Lua scripts (EVALSHA / SCRIPT LOAD)
    │       ├── KeyPermissionError     the Redis user may not read or write the deployment's keys
    │       └── CommandPermissionError the Redis user may not run a command the worker needs (INFO)
    ├── StoreError                 Redis failed or answered something unexpected
    │   ├── StoreUnreachable       a bot's call could not reach Redis, or it did not answer in time
    │   │                          (a lost connection, a timeout, a server loading or failing over):
    │   │                          redis-py's error is its ``__cause__``; asking again may work
    │   ├── StoreClientError       the Redis client failed without a Redis error (a failover's
    │   │                          slot with no node, a lost connection leaked as AttributeError)
    │   ├── StoredRunUnreadable    a claimed run's stored request no longer validates (its
    │   │                          fields and error kinds only: never the stored values); the
    │   │                          run can never heal, so it retires at once
    │   ├── StoreReplyError        Redis (or its client) answered with an error no retry heals;
    │   │   │                      ``code`` says which (log-safe: never the reply's text)
    │   │   ├── StoreWriteRefused  the store refuses writes until its operator acts (OOM,
    │   │   │                      MISCONF, NOREPLICAS, NOPERM): the store's fault, not the run's
    │   │   ├── StoreDataCorrupt   a stored value is not what the code wrote (a key of the
    │   │   │   │                  wrong type, a counter INCR cannot raise): names the chat and
    │   │   │   │                  the key's role, never the value
    │   │   │   └── ChatKeyCorrupt a chat's memory key holds the wrong type: refused before the
    │   │   │                      script's first write (the chat and the key's role, no value)
    │   │   └── StoreScriptError   a Lua script raised an error of its own, or would not compile
    │   └── SocketNotPrivate       the embedded server's socket directory is not this user's
    │                              own 0700 one: nothing is sent to it (also a redis ConnectionError)
    └── RunControl                 the worker's own control flow: a bot never sees one
        ├── LeaseLost              the worker no longer holds the run's lease (it was reclaimed)
        │   └── RunCancelled       an operator cancelled the run: its card write was refused, or
        │                          a checkpoint found it cancelled; the worker drops it
        ├── TickTimeout            a tick outlived its budget: its run fails as task_timeout
        ├── ForgottenWrite         a run's card write was refused: the chat was forgotten after its claim
        ├── ConsolidationError     the run's data could not be turned into memory (not the farm's fault)
        ├── NotAJsonJob (ValueError)  an arq job payload that is not a JSON object (a pickle): never run
        └── DeliveryFailed         a channel did not accept an admin page (the outbox retries it)

``EmbeddedValkeyError`` is a configuration error, not a ``StoreError``: every store error is
weather to the worker (its run is released), and a server that cannot start is not.

One class of ``llm_client``'s tree is raised here, because only the consolidation knows
the call was an embedding: ``EmbedderTimeout`` (an ``LLMError`` whose reason, provider
timeout, the classifier trusts; the run is released). It is defined in this module.
"""

from __future__ import annotations

import sys
from typing import IO, TYPE_CHECKING, Any, ClassVar

from redis.exceptions import ConnectionError as RedisConnectionError

from llm_client import FailureReason, LLMError

if TYPE_CHECKING:
    from click import ClickException as _CommandLineError
else:
    try:  # arq's command line is click's; a bot's install has neither (memory-worker[worker])
        from click import ClickException as _CommandLineError
    except ImportError:
        _CommandLineError = Exception


class MemoryWorkerError(Exception):
    """Base of memory-worker's own errors."""


# --- the families a bot catches ------------------------------------------------------------


class InvalidInput(MemoryWorkerError, ValueError):
    """The caller's input is wrong (a run request, a memory call's argument, a forget, an
    import file); nothing was read or written."""


class NotFound(MemoryWorkerError, LookupError):
    """What the call names (a run, a card) is not there."""


class Conflict(MemoryWorkerError):
    """The request is valid, but the memory's state refuses it now (a card no longer live, a
    forget not completed, another model's vectors, an import over other memory) — or the
    queue's own state does (closed); nothing was written."""


class Unavailable(MemoryWorkerError):
    """A service the call needs cannot answer now (the farm's embedding route); asking again
    later may work. ``__cause__`` holds the service's own error. (A read — ``recall``,
    ``context`` — does not raise it: it answers from the words alone, marked degraded.)"""


class ConfigurationError(MemoryWorkerError):
    """The deployment cannot work as configured: settings, a Redis URL or server, the routes
    file, the console's exposure. Nothing was done; fix the configuration."""


class RunControl(MemoryWorkerError):
    """The worker's own control flow (a lost lease, a tick over budget, a forgotten chat's
    write, a payload refused): decided inside the worker, never raised to a bot."""


class SettingsError(ConfigurationError, ValueError):
    """The settings cannot work: ``problems`` holds one line per bad or contradictory setting.

    Each problem names its environment variable(s); a secret setting's value never
    appears (see :mod:`memory_worker.settings.checks`).
    """

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("invalid settings: " + "; ".join(problems))


class SettingsRefused(SettingsError, _CommandLineError):
    """Bad settings where ``arq memory_worker.worker.WorkerSettings`` is built: a
    :class:`SettingsError` to a caller, and to arq's command line (click) a failure it shows
    as ``memory-worker``'s one line, ``error: invalid settings: …``, exiting 2 — not a
    traceback."""

    exit_code: ClassVar[int] = 2  # memory-worker's status for every failure

    def __init__(self, problems: list[str]) -> None:
        SettingsError.__init__(self, problems)
        self.line = "invalid settings: " + "; ".join(problems)
        _CommandLineError.__init__(self, self.line)

    def show(self, file: IO[Any] | None = None) -> None:
        stream = sys.stderr if file is None else file
        stream.write("error: " + " ".join(self.line.split()) + "\n")
        stream.flush()


class InvalidRunRequest(InvalidInput):
    """A run request failed validation; ``problems`` lists each one. Nothing was stored."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("invalid run request: " + "; ".join(problems))


class RunNotFound(NotFound, KeyError):
    """No run with that id."""

    def __str__(self) -> str:
        return f"run not found: {self.args[0] if self.args else '?'}"


class LeaseLost(RunControl):
    """The worker's lease on the run expired and the run was reclaimed elsewhere."""


class RunCancelled(LeaseLost):
    """An operator cancelled the run (``runs cancel``, the console; §13) while a worker held it.

    Raised at the worker's checkpoints (a lease renewal, the checks before the embedding and
    the card write) and by the card write itself, which refuses atomically: the worker drops
    the run and nothing of it is written.
    """

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        super().__init__(f"run {run_id} was cancelled by an operator")


class StoreError(MemoryWorkerError):
    """Redis failed or answered something unexpected."""


class StoredRunUnreadable(StoreError):
    """A run's stored request no longer validates (a hand-edited or corrupted run hash).

    ``problems`` name each field and what is wrong with it, never the stored value: the
    values are chat text, and this error reaches the run's error log and the worker's log.
    Such a run can never heal: the worker that claims it retires it at once (§7).
    """

    def __init__(self, run_id: str, problems: list[str]) -> None:
        self.run_id = run_id
        self.problems = problems
        super().__init__(f"stored run {run_id} is unreadable: " + "; ".join(problems))


class StoreUnreachable(StoreError):
    """A bot's call could not reach Redis, or Redis did not answer in time: a refused or lost
    connection, a timeout, a server still loading or failing over. Raised at the bot's API
    edge (:mod:`memory_worker.api.edge`) with redis-py's error as its ``__cause__``; ``kind``
    names that error's type (log-safe). Asking again may work."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        super().__init__(f"Redis could not be reached or did not answer in time ({kind})")


class StoreClientError(StoreError):
    """The Redis client failed without raising a ``RedisError``: its cluster tree
    (``RedisClusterException``, ``SlotNotCoveredError``) or a programming-error type it leaks
    while a connection or the slot map changes under a command (``'NoneType' object has no
    attribute 'name'`` during a failover). Raised by :func:`memory_worker.storage.connections.store_edge`,
    chained to the client's error; ``kind`` names its type (log-safe)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        super().__init__(f"the Redis client failed ({kind})")


class StoreReplyError(StoreError):
    """Redis (or its client) answered a command with an error no retry heals (§7 "Store
    faults"): a write is not retried on it. ``code`` names the answer (``oom``, ``wrongtype``,
    ``overflow``…: :mod:`memory_worker.storage.replies`), log-safe; the text is never kept.
    Raised by :func:`memory_worker.storage.faults.store_answer`, chained to the client's
    error."""

    def __init__(self, code: str, detail: str | None = None) -> None:
        self.code = code
        super().__init__(detail or f"Redis answered with an error no retry heals ({code})")


class StoreWriteRefused(StoreReplyError):
    """The store refuses writes until its operator acts: out of memory under ``noeviction``
    (``oom``), a failed snapshot (``misconf``), too few replicas (``noreplicas``), this user's
    ACL (``noperm``). The store's fault, never the run's: the run is released, uncharged."""

    def __init__(self, code: str) -> None:
        super().__init__(code, f"the store refuses writes ({code})")


class StoreDataCorrupt(StoreReplyError):
    """A stored value is not what the code wrote: a key of the wrong type (``wrongtype``), a
    counter that is not an integer or that ``INCR`` cannot raise (``not_integer``,
    ``overflow``), a number that is not one (``not_float``). Retrying gives the same answer;
    the run fails. ``chat_id`` and ``problems`` (each a key's role and what is wrong with it,
    e.g. ``seq holds a counter INCR cannot raise``) say where, once known; never a value."""

    def __init__(
        self, code: str, *, chat_id: int | None = None, problems: tuple[str, ...] = ()
    ) -> None:
        self.chat_id = chat_id
        self.problems = problems
        where = "" if chat_id is None else f"chat {chat_id}: "
        found = ": " + "; ".join(problems) if problems else ""
        super().__init__(code, f"{where}stored data is not what the code wrote ({code}){found}")

    def located(self, chat_id: int, problems: tuple[str, ...]) -> StoreDataCorrupt:
        """This answer, naming the chat and its misshapen keys (chained to this one)."""
        located = StoreDataCorrupt(self.code, chat_id=chat_id, problems=problems)
        located.__cause__ = self
        return located


class StoreScriptError(StoreReplyError):
    """A Lua script raised an error of its own (``user_script:<line>: …``) or would not
    compile: a bug, or data the script cannot read. The run fails."""

    def __init__(self, code: str = "script") -> None:
        super().__init__(code, "a store script raised an error of its own")


class RedisSetupError(ConfigurationError):
    """The Redis server (or the user we log in as) cannot safely hold the queue."""


class EvictionPolicyError(RedisSetupError):
    """``maxmemory-policy`` lets Redis evict any key (``allkeys-*``): stored runs would vanish."""

    def __init__(self, policy: str) -> None:
        self.policy = policy
        super().__init__(
            f"Redis maxmemory-policy is {policy!r}, which evicts stored runs under memory "
            "pressure; set maxmemory-policy to noeviction (CONFIG SET maxmemory-policy "
            "noeviction, and in redis.conf)"
        )


class ScriptPermissionError(RedisSetupError):
    """The Redis user may not run Lua scripts, so no run can be enqueued or claimed."""

    def __init__(self, command: str) -> None:
        self.command = command
        super().__init__(
            f"the Redis user may not run Lua scripts ({command} refused with NOPERM); "
            "grant +eval +evalsha +script|load (e.g. ACL SETUSER <user> +@scripting)"
        )


class KeyPermissionError(RedisSetupError):
    """The Redis user's ACL does not cover the keys this deployment reads and writes."""

    def __init__(self, patterns: list[str]) -> None:
        self.patterns = patterns
        grant = " ".join(f"~{p}" for p in patterns)
        super().__init__(
            f"the Redis user may not use the keys memory-worker needs (NOPERM on {grant}); "
            f"grant them (e.g. ACL SETUSER <user> {grant})"
        )


class CommandPermissionError(RedisSetupError):
    """The Redis user may not run a command a worker needs at start (arq reads ``INFO``)."""

    def __init__(self, command: str) -> None:
        self.command = command
        super().__init__(
            f"the Redis user may not run {command} (refused), which a worker needs at start "
            f"(arq reads the server's INFO and DBSIZE); grant it (e.g. ACL SETUSER <user> "
            f"+{command.lower()}) or un-rename it"
        )


class ConsolidationError(RunControl):
    """The run's data could not be turned into memory (a bug or bad data, not an outage)."""


class VectorSpaceMismatch(Conflict):
    """A query was embedded by another model (or dimension) than the chat's vectors (§16).

    Comparing the two would rank by noise, so nothing is compared; the chat
    needs re-embedding with the route's model (or the route its old model).
    """

    def __init__(
        self, chat_id: int, *, chat_model: str | None, query_model: str, dimension: int
    ) -> None:
        self.chat_id = chat_id
        self.chat_model = chat_model
        self.query_model = query_model
        self.dimension = dimension
        super().__init__(
            f"chat {chat_id} holds {dimension}-d vectors of {chat_model or 'an unrecorded model'}; "
            f"the embedding route answered with {query_model}"
        )


class ForgottenWrite(RunControl):
    """A run's card write was refused: the chat was forgotten (in part) after the run's claim.

    The run was claimed under an older forget epoch (§14), so its output may hold
    forgotten text; the run is released and re-extracted from what remains.
    """

    def __init__(self, chat_id: int, run_epoch: int) -> None:
        self.chat_id = chat_id
        self.run_epoch = run_epoch
        super().__init__(f"chat {chat_id} was forgotten after this run's claim (epoch {run_epoch})")


class ForgetInputError(InvalidInput):
    """A forget request names no chat, an unknown chat, or a user without a chat."""


class ForgetPending(Conflict):
    """A forget of the chat raised its epoch and has not completed (it is running, or its
    process died): the memory may be half forgotten, so it is not exported, nor a fact
    remembered in the scope being forgotten. Forgetting the chat (or user) again completes
    it."""

    def __init__(self, chat_id: int, *, refused: str = "its memory is not exported") -> None:
        self.chat_id = chat_id
        super().__init__(
            f"a forget of chat {chat_id} has not completed: {refused} "
            "(wait for it, or run the forget again)"
        )


class CardNotFound(NotFound):
    """No card under that reference (``<chat id>:<card id>``)."""

    def __init__(self, ref: str) -> None:
        self.ref = ref
        super().__init__(f"no card {ref}")

    def __str__(self) -> str:
        return str(self.args[0])


class CardNotLive(Conflict):
    """A correction names a card that is no longer live: the card that replaced it (or none,
    when it was retracted or expired) is what to correct."""

    def __init__(self, ref: str, status: str) -> None:
        self.ref = ref
        self.status = status
        super().__init__(f"card {ref} is {status}, not live: only a live card is corrected")


class InvalidExport(InvalidInput):
    """An import file is not a whole, valid export; ``where`` names the line. Nothing was
    written."""

    def __init__(self, where: str, problem: str) -> None:
        self.where = where
        self.problem = problem
        super().__init__(f"{where}: {problem}; nothing was imported")


class ImportTooLarge(InvalidExport):
    """An import file is over ``MEMORY_IMPORT_MAX_BYTES``: refused before anything is written."""

    def __init__(self, where: str, limit: int) -> None:
        super().__init__(where, f"the file is over {limit} bytes (MEMORY_IMPORT_MAX_BYTES)")


class ImportConflict(Conflict):
    """The target chat holds other memory under the file's card ids, a live card of the same
    fact, or vectors of another model or dimension: nothing was written (a write racing the
    import past its first chunk: the chunks before it stay, whole; the message says so)."""


class ExportPredatesForget(ImportConflict):
    """The chat was forgotten — a user in it, or all of it (§14) — after the file was exported
    (the file's forget epoch is older than the chat's): importing it would bring back what was
    forgotten. Nothing was written (a forget that began during the import: the chunks written
    before it stay, and the forget's own plan removes what it covers)."""

    def __init__(
        self, chat_id: int, file_epoch: int, chat_epoch: int | None, *, written: int = 0
    ) -> None:
        self.chat_id = chat_id
        self.file_epoch = file_epoch
        self.chat_epoch = chat_epoch
        done = f"{written} chunk(s) were written before it" if written else "nothing was imported"
        when = (
            f"after this file was exported (forget epoch {chat_epoch}, the file's {file_epoch})"
            if chat_epoch is not None
            else "while this file was being imported"
        )
        super().__init__(f"chat {chat_id} was forgotten (in part) {when}: export it again; {done}")


class ChatKeyCorrupt(StoreDataCorrupt):
    """A key of a chat's memory holds a value of the wrong type: a script refused before its
    first write. Names the chat and the key's role, never a value. Corrupt data like any
    other (§7): never retried."""

    def __init__(self, chat_id: int, role: str) -> None:
        StoreReplyError.__init__(
            self,
            "wrongtype",
            f"chat {chat_id}'s {role} key holds a value of the wrong type; nothing was written",
        )
        self.chat_id = chat_id
        self.role = role
        self.problems = (f"{role} holds a value of the wrong type",)


class RedisNotConfigured(ConfigurationError):
    """Raised by ``MemoryQueue.connect`` given no Redis URL (argument or ``REDIS_URL``) and not
    ``embedded=True``: a library inside a bot never starts a server behind the bot's back."""

    def __init__(self) -> None:
        super().__init__(
            "no Redis to connect to: pass MemoryQueue.connect(redis_url=...) or set REDIS_URL "
            "to the workers' server; MemoryQueue.connect(embedded=True) uses the embedded "
            "Valkey of MEMORY_DATA_DIR instead (only the processes sharing that data directory "
            "see its runs)"
        )


class InvalidQuery(InvalidInput):
    """Raised when a memory call (similar_cards, recall, forget, …) gets an argument of the wrong
    type or out of bounds; nothing was read or written."""


class InvalidId(InvalidQuery):
    """Raised when an id (chat, thread, user) or a count ``k`` is not an int — bools, floats
    and strings included — or an id is beyond 64 bits, signed."""

    def __init__(self, name: str, value: object) -> None:
        self.name = name
        if isinstance(value, int) and not isinstance(value, bool):
            super().__init__(f"{name} must be a signed 64-bit int, got {value}")
        else:
            super().__init__(f"{name} must be an int, got {type(value).__name__}")


class EmbeddingSizeMismatch(InvalidQuery):
    """Raised by ``similar_cards`` when the query vector's length is not the chat's dimension
    (or, for a chat without vectors, ``MEMORY_EMBEDDING_DIMENSION``)."""

    def __init__(self, chat_id: int, *, expected: int, got: int) -> None:
        self.chat_id = chat_id
        self.expected = expected
        self.got = got
        super().__init__(f"chat {chat_id} holds {expected}-d vectors; the query has {got} values")


class QueryTooLarge(InvalidQuery):
    """Raised when a recall text is longer than ``MEMORY_RECALL_MAX_QUERY_CHARS`` or ``k`` is
    above ``MEMORY_QUERY_MAX_K``."""

    def __init__(self, what: str, size: int, limit: int) -> None:
        self.what = what
        self.size = size
        self.limit = limit
        super().__init__(f"{what} is {size}, over the limit of {limit}")


class InvalidCardRef(InvalidQuery):
    """A card reference is not ``<chat id>:<card id>`` (card ids count per chat)."""

    def __init__(self, ref: object) -> None:
        shown = ref if isinstance(ref, str) and len(ref) <= 40 else type(ref).__name__
        super().__init__(
            f"a card reference is '<chat id>:<card id>' (e.g. '-100123:7'), got {shown!r}"
        )


class InvalidCorrection(InvalidQuery):
    """A retraction's, correction's or remembered fact's actor, reason or fact text is empty,
    too long or holds a secret (or a remembered fact's ``valid_from`` is not an aware time
    up to now); nothing was written."""


class ConsoleExposedError(ConfigurationError):
    """The console would be served off loopback with no token: anyone reaching the address
    could read every chat's memory. Raised before anything listens (§15)."""


class RoutesIncomplete(ConfigurationError, ValueError):
    """A routes file without an enabled ``memory_extraction`` target: every run would be
    released forever (RouteUnavailable), so a worker refuses to start on it (one line)."""


class RedisUrlError(ConfigurationError, ValueError):
    """REDIS_URL could not be understood."""


class EmbeddedValkeyError(ConfigurationError, RuntimeError):
    """The embedded Valkey could not be started or reached."""


class NotAJsonJob(RunControl, ValueError):
    """A job payload that is not a JSON object (e.g. a pickle): refused, never run."""


class TickTimeout(RunControl):
    """A tick outlived its budget (``MEMORY_TICK_TIMEOUT_SECONDS``): the run fails as task_timeout."""


class DeliveryFailed(RunControl):
    """A channel did not accept a page (retried by the outbox)."""

    def __init__(
        self,
        channel: str,
        *,
        status: int | None = None,
        kind: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.channel = channel
        self.status = status
        self.kind = kind
        #: Seconds the channel asked us to wait (Telegram 429 ``parameters.retry_after``).
        self.retry_after = retry_after
        detail = f"status {status}" if status is not None else (kind or "error")
        super().__init__(f"page delivery to {channel} failed: {detail}")


class EmbedderTimeout(LLMError):
    """An embedding call timed out (§7): the embedder is a side service, so the
    run is released (attempt refunded) rather than failed; its next attempt takes the
    extraction this one kept. Raised by the consolidation around every embedding call, chained to the
    walker's error; the run's own deadline (``DeadlineExceeded``) is not one of these."""

    reason = FailureReason.PROVIDER_TIMEOUT

    def __init__(self, message: str) -> None:
        super().__init__(message, code="embedding_timeout")


class SocketNotPrivate(StoreError, RedisConnectionError):
    """The socket's directory is not this user's own 0700 directory: nothing is sent to it."""


# --- at the bot's API edge -----------------------------------------------------------------


class EmbeddingUnavailable(Unavailable):
    """The embedding route could not embed for a bot's call: the farm is down or its breakers
    open, no target is routed, the call ran out of time, the embedder raised. ``correct``
    raises it (nothing written); ``recall`` and ``context`` answer from the words alone
    instead and carry it as their result's ``degraded_error``. ``__cause__`` is the
    embedder's own error (``llm_client``'s, as a rule); ``kind`` names its type and
    ``reason`` its retry reason (log-safe), never the text that was to be embedded."""

    def __init__(self, call: str, chat_id: int, *, kind: str, reason: str | None) -> None:
        self.call = call
        self.chat_id = chat_id
        self.kind = kind
        self.reason = reason
        why = f"{kind}, {reason}" if reason else kind
        super().__init__(f"{call} for chat {chat_id}: the embedding route is unavailable ({why})")


class QueueClosed(Conflict, RuntimeError):
    """A call on a :class:`~memory_worker.MemoryQueue` or
    :class:`~memory_worker.SyncMemoryQueue` after its ``close()``; or, on the sync client, a
    call still in flight when ``close()`` ended its grace (cancelled: its one script may
    have run or not, never half). Connect again."""

    def __init__(self, call: str) -> None:
        self.call = call
        super().__init__(f"{call}: the memory queue is closed (connect again)")


class RoutesInvalid(ConfigurationError):
    """The routes file (``MEMORY_ROUTES_FILE``) cannot be loaded where a bot's call needs the
    embedding route; ``__cause__`` is ``llm_client.RoutesError``, whose message says what."""
