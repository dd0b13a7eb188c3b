"""Unix sockets in private directories: how every process reaches the embedded Valkey.

The embedded server listens on a unix socket only (no TCP port another local
user could take over once it dies). Clients dial the data
directory's name for it, ``<data_dir>/valkey.sock``:

- when that path fits ``sun_path`` (:data:`SUN_PATH_MAX` bytes) it *is* the
  socket, inside the data directory (mode 0700);
- when it does not (a deep data directory), the socket lives in a short private
  directory under ``/tmp`` (``mkdtemp``: 0700, unguessable) and the data-dir name
  is a symlink to it.

:func:`dial_path` turns the name into the path to connect to, *on every
connect* — so a client follows the server when a restart moved it to a new
directory — and refuses a link whose target directory is not this user's own
and private (a cleaned ``/tmp`` re-created by someone else): the password is
never sent there. :class:`FollowingUnixConnection` is redis-py's unix
connection doing exactly that.
"""

from __future__ import annotations

import asyncio
import os
import stat
import tempfile
from pathlib import Path

from redis.asyncio.connection import UnixDomainSocketConnection

from memory_worker.errors import SocketNotPrivate
from memory_worker.logs import get_logger
from memory_worker.storage.lean_send import LeanSend

log = get_logger(__name__)

#: The longest socket path ``bind``/``connect`` take (``sun_path`` is 108 bytes with its NUL).
SUN_PATH_MAX = 107
#: Where a socket whose data-dir path is too long lives (short on every Linux).
SHORT_ROOT = Path("/tmp")
SHORT_PREFIX = "mw-valkey-"


def fits(path: Path) -> bool:
    """Whether ``path`` can be bound or dialled as a unix socket."""
    return len(os.fsencode(path)) <= SUN_PATH_MAX


def private_dir_problem(directory: Path) -> str | None:
    """Why ``directory`` is not a private directory of this user (None: it is)."""
    try:
        info = os.lstat(directory)
    except FileNotFoundError:
        return "does not exist"
    if not stat.S_ISDIR(info.st_mode):
        return "is not a directory"
    if info.st_uid != os.geteuid():
        return f"belongs to uid {info.st_uid}"
    if info.st_mode & 0o077:
        return f"has mode {stat.S_IMODE(info.st_mode):o}"
    return None


def dial_path(name: Path) -> Path:
    """The path to connect to for the socket named ``name`` (see the module docstring).

    Raises :class:`SocketNotPrivate` for a link into a short socket directory
    (:data:`SHORT_PREFIX`) that is not this user's own private one. (A link of an
    operator's own, to a system Redis's socket, say, is followed as it is.)
    """
    if not name.is_symlink():
        return name
    target = Path(os.readlink(name))
    if not target.is_absolute():
        target = name.parent / target
    if not target.parent.name.startswith(SHORT_PREFIX):
        return target
    problem = private_dir_problem(target.parent)
    if problem is not None:
        log.warning("embedded_socket_refused", directory=str(target.parent), problem=problem)
        raise SocketNotPrivate(f"{target.parent} {problem}: not dialling the embedded Valkey there")
    return target


def short_private_dir(previous: Path | None) -> Path:
    """A short private directory for a socket: ``previous`` while it is still ours, else new."""
    if previous is not None and private_dir_problem(previous) is None:
        return previous
    root = SHORT_ROOT if SHORT_ROOT.is_dir() else Path(tempfile.gettempdir())
    return Path(tempfile.mkdtemp(prefix=SHORT_PREFIX, dir=root))


def point_link(name: Path, target: Path) -> None:
    """Make ``name`` a symlink to ``target`` (replaced in one step: a client never sees none)."""
    temporary = name.with_name(name.name + ".link")
    if temporary.is_symlink() or temporary.exists():
        temporary.unlink()
    temporary.symlink_to(target)
    os.replace(temporary, name)


def linked_dir(name: Path) -> Path | None:
    """The directory a socket link points into (None: ``name`` is no link)."""
    if not name.is_symlink():
        return None
    return Path(os.readlink(name)).parent


class FollowingUnixConnection(LeanSend, UnixDomainSocketConnection):
    """redis-py's unix connection, re-resolving the socket's name (:func:`dial_path`) on
    every connect: it follows the server to a new directory and dials no foreign one
    (and sends without a task per command: :class:`~memory_worker.storage.lean_send.LeanSend`).

    Unlike redis-py's own, its ``_connect`` leaves the handshake (AUTH, SELECT) to
    ``connect()``, which runs it anyway: sent once, and a refused password surfaces as
    an ``AuthenticationError`` rather than a ``ConnectionError`` wrapping it.
    """

    async def _connect(self) -> None:
        path = dial_path(Path(self.path))
        async with asyncio.timeout(self.socket_connect_timeout):
            reader, writer = await asyncio.open_unix_connection(path=str(path))
        self._reader = reader
        self._writer = writer
