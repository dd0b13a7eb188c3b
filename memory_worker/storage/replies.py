"""Redis error replies, classified: which ones heal by themselves and which never do (§7).

The one place that reads a reply's text. A server says what went wrong in the first word
of its error reply (``OOM``, ``WRONGTYPE``, ``LOADING``…) or, for ``ERR``, in a fixed phrase
("value is not an integer or out of range"). :func:`classify_reply` maps the whole reply
to a :class:`Reply`, from one table (:data:`CODES`, :data:`PHRASES`); the store's edge
(:mod:`memory_worker.storage.faults`) turns that into a typed error, and everything else
branches on the types.

- **transient** — heals without anyone acting, so a write retries it in place: a
  server still loading its data (``LOADING``), a cluster reshaping or failing over
  (``TRYAGAIN``, ``CLUSTERDOWN``, ``MASTERDOWN``, ``MOVED``/``ASK`` that the cluster client
  follows), a replica during a failover (``READONLY``), a script running long (``BUSY``), a
  script cache flushed (``NOSCRIPT``: the next call loads it again);
- **refused** — the store refuses writes until its operator acts: out of memory under
  ``noeviction`` (``OOM``), a failed snapshot with ``stop-writes-on-bgsave-error``
  (``MISCONF``), too few replicas for ``min-replicas-to-write`` (``NOREPLICAS``), this user's
  ACL (``NOPERM``; Valkey's "ACL failure in script" for a command a script may not run). The
  store's fault, never the run's;
- **corrupt** — a stored value is not what the code wrote: a key of the wrong type
  (``WRONGTYPE``), a counter that is not an integer or that ``INCR`` cannot raise, a score or
  field that is not a number. Retrying gives the same answer; only that chat's data is bad;
- **script** — a Lua script raised an error of its own (``user_script:<line>: …``), or
  would not compile: a bug, or data it cannot read;
- **unknown** — any other error reply. It is not retried: a reply nobody here has seen is
  deterministic until shown otherwise.

Replies come in three shapes (each in the test table, as real servers sent them): a plain
command's (``WRONGTYPE Operation against a key…``); a command inside a script, on Redis 7
and Valkey (the same reply, then `` script: <sha>, on @user_script:<line>.``); and on Redis
6, a script's wrapper (``ERR Error running script (call to f_<sha>): @user_script:<line>:
WRONGTYPE Operation…``). A command's own reply inside a script classifies as that reply:
an ``OOM`` a script met is ``OOM``, not a script error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum


class ReplyClass(StrEnum):
    TRANSIENT = "transient"
    REFUSED = "refused"
    CORRUPT = "corrupt"
    SCRIPT = "script"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Reply:
    """What an error reply means: its class and a short, log-safe code (never its text)."""

    kind: ReplyClass
    code: str


#: An error reply's first word → what it means.
CODES: dict[str, Reply] = {
    "LOADING": Reply(ReplyClass.TRANSIENT, "loading"),
    "TRYAGAIN": Reply(ReplyClass.TRANSIENT, "tryagain"),
    "CLUSTERDOWN": Reply(ReplyClass.TRANSIENT, "clusterdown"),
    "MASTERDOWN": Reply(ReplyClass.TRANSIENT, "masterdown"),
    "MOVED": Reply(ReplyClass.TRANSIENT, "moved"),
    "ASK": Reply(ReplyClass.TRANSIENT, "ask"),
    "READONLY": Reply(ReplyClass.TRANSIENT, "readonly"),
    "BUSY": Reply(ReplyClass.TRANSIENT, "busy"),
    "NOSCRIPT": Reply(ReplyClass.TRANSIENT, "noscript"),
    "OOM": Reply(ReplyClass.REFUSED, "oom"),
    "MISCONF": Reply(ReplyClass.REFUSED, "misconf"),
    "NOREPLICAS": Reply(ReplyClass.REFUSED, "noreplicas"),
    "NOPERM": Reply(ReplyClass.REFUSED, "noperm"),
    "WRONGTYPE": Reply(ReplyClass.CORRUPT, "wrongtype"),
}

#: ``ERR`` replies by their phrase (the start of the text after ``ERR``).
PHRASES: tuple[tuple[str, Reply], ...] = (
    ("value is not an integer or out of range", Reply(ReplyClass.CORRUPT, "not_integer")),
    ("hash value is not an integer", Reply(ReplyClass.CORRUPT, "not_integer")),
    ("increment or decrement would overflow", Reply(ReplyClass.CORRUPT, "overflow")),
    ("value is not a valid float", Reply(ReplyClass.CORRUPT, "not_float")),
    ("hash value is not a float", Reply(ReplyClass.CORRUPT, "not_float")),
    ("increment would produce NaN or Infinity", Reply(ReplyClass.CORRUPT, "not_float")),
    ("Error compiling script", Reply(ReplyClass.SCRIPT, "script")),
    # Valkey: a command inside a script that this user's ACL denies (Redis 7 says ``NOPERM``)
    ("ACL failure in script", Reply(ReplyClass.REFUSED, "noperm")),
)

SCRIPT_ERROR = Reply(ReplyClass.SCRIPT, "script")
UNKNOWN = Reply(ReplyClass.UNKNOWN, "unknown")

#: Redis 6's wrapper of an error raised in a script (the reply inside follows it).
_REDIS6_WRAPPER = re.compile(
    r"^(?:ERR )?Error running script \(call to [^)]*\): @user_script:\d+: "
)
#: Redis 7 / Valkey: where a command's reply inside a script ends (`` script: …``).
_SCRIPT_SUFFIX = re.compile(r" script: (?:[0-9a-f]{40}, )?on @user_script:\d+\.?$")
#: A script's own runtime error (its chunk name and line first).
_SCRIPT_RAISED = re.compile(r"^(?:ERR )?user_script:\d+: ")


def classify_reply(reply: str) -> Reply:
    """What the error ``reply`` (the server's whole reply: its code word first) means."""
    text = _SCRIPT_SUFFIX.sub("", _REDIS6_WRAPPER.sub("", reply.strip(), count=1), count=1)
    if _SCRIPT_RAISED.match(text):
        return SCRIPT_ERROR
    word, _, rest = text.partition(" ")
    word = word.lstrip("-")
    if word in CODES:
        return CODES[word]
    if word == "ERR":
        text = rest
    for phrase, meaning in PHRASES:
        if text.startswith(phrase):
            return meaning
    return UNKNOWN
