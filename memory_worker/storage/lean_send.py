"""redis-py's command send without a task per command.

redis-py 5 sends every command (and pipeline) through
``asyncio.wait_for(self._send_packed_command(...), socket_timeout)``: on Python
3.11 ``wait_for`` wraps the write in a new task, so each command pays a task's
creation, an extra turn of the event loop and a timer — a quarter of the client's
CPU per round trip on a loopback GET (measured: 103 → 77 µs; a run sends about a
dozen). Yet the write itself never waits: the bytes go to the transport's buffer,
and ``drain()`` only blocks once that buffer is past its high-water mark.

:class:`LeanSend` writes at once and puts the socket timeout only on a drain that
can block (bytes left unsent), so a paused or black-holed Redis still fails the
send with redis-py's ``TimeoutError("Timeout writing to socket")`` within the
socket timeout, and every error closes the connection exactly as redis-py does.

The pool's check of a connection it hands out (``can_read_destructive``: are there
bytes nobody asked for, or is the socket closed?) is, in redis-py 5's hiredis parser,
a read under ``asyncio.timeout(0)`` on every checkout — a timer, a cancel and a turn
of the loop per command, ~4 % of a run's CPU. :class:`LeanHiredisParser` looks at
the stream instead and reads only when there is something to read: unsolicited bytes
or an end of stream (so a stale reply or a closed socket still makes the pool
reconnect, as redis-py's check does).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from redis._parsers.hiredis import NOT_ENOUGH_DATA, _AsyncHiredisParser
from redis._parsers.socket import SERVER_CLOSED_CONNECTION_ERROR
from redis.asyncio.connection import AbstractConnection, Connection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError


class LeanHiredisParser(_AsyncHiredisParser):
    """redis-py's hiredis parser whose checkout check reads only when there is something
    to read (see the module doc)."""

    async def can_read_destructive(self) -> bool:
        reader = self._reader
        if not self._connected or reader is None:
            raise RedisConnectionError(SERVER_CLOSED_CONNECTION_ERROR)
        if reader.gets() is not NOT_ENOUGH_DATA:  # a whole reply nobody read
            return True
        stream = self._stream
        if stream is None:
            raise RedisConnectionError(SERVER_CLOSED_CONNECTION_ERROR)
        if getattr(stream, "_buffer", b"") or stream.at_eof() or stream.exception() is not None:
            # bytes nobody asked for, or the server hung up: redis-py's read says which
            return bool(await self.read_from_socket())
        return False


class LeanSend(AbstractConnection):
    """A connection mixin: :meth:`send_packed_command` without ``wait_for``'s task, and
    the pool's checkout check without a timer (:class:`LeanHiredisParser`)."""

    def set_parser(self, parser_class: type[Any]) -> None:
        if parser_class is _AsyncHiredisParser:
            parser_class = LeanHiredisParser
        super().set_parser(parser_class)

    async def send_packed_command(
        self, command: bytes | str | Iterable[bytes], check_health: bool = True
    ) -> None:
        if not self.is_connected:
            await self.connect()  # type: ignore[no-untyped-call]
        elif check_health:
            await self.check_health()  # type: ignore[no-untyped-call]
        if isinstance(command, str):
            command = command.encode()
        if isinstance(command, bytes):
            command = [command]
        writer = self._writer
        assert writer is not None  # connected above
        try:
            writer.writelines(command)
            if writer.transport.get_write_buffer_size() and self.socket_timeout:
                # bytes the socket did not take: the drain may block, bounded as redis-py's
                await asyncio.wait_for(writer.drain(), self.socket_timeout)
            else:
                await writer.drain()  # returns at once unless the connection was lost
        except TimeoutError:
            await self.disconnect(nowait=True)
            raise RedisTimeoutError("Timeout writing to socket") from None
        except OSError as e:
            await self.disconnect(nowait=True)
            err_no, errmsg = ("UNKNOWN", e.args[0]) if len(e.args) == 1 else e.args[:2]
            raise RedisConnectionError(f"Error {err_no} while writing to socket. {errmsg}.") from e
        except BaseException:
            # a send cut short (a cancel) leaves a half-written command: the connection goes
            await self.disconnect(nowait=True)
            raise


class LeanConnection(LeanSend, Connection):
    """redis-py's TCP connection with :class:`LeanSend`."""
