"""One round trip for a script call and the riders it takes along.

A run's completion is its last write; what its breakers still carry (``llm_client``'s
:class:`~llm_client.Rider`: closed breakers' plain successes) goes in the same round trip,
first: one non-transactional pipeline of ``EVALSHA`` calls. Each script still touches the keys
of one hash tag; the pipeline only shares the network trip (and the server's wake-up).

A rider never changes the call's result. It is tried once: a rider whose answer is an error,
or whose round trip fails, is reported lost (:meth:`~llm_client.Rider.landed`). ``NOSCRIPT``
(the server has not seen the script yet, or restarted) ran nothing, so that call alone is sent
again through its script object, which loads it. A rider on another client (another server)
is sent alone first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from redis.exceptions import NoScriptError

from llm_client import Rider


async def call_with_riders(
    redis: Any, riders: Sequence[Rider], script: Any, *, keys: list[str], args: list[Any]
) -> Any:
    """``script(keys, args)`` on ``redis`` with ``riders`` sent before it in the same round
    trip; the script's answer (or its error, raised) — never a rider's."""
    mine = [rider for rider in riders if rider.client is redis]
    for rider in riders:
        if rider.client is not redis:
            await _alone(rider)
    if not mine:
        return await script(keys=keys, args=args)
    pipe = redis.pipeline(transaction=False)
    for rider in mine:
        pipe.evalsha(rider.script.sha, len(rider.keys), *rider.keys, *rider.args)
    pipe.evalsha(script.sha, len(keys), *keys, *args)
    try:
        answers = await pipe.execute(raise_on_error=False)
    except BaseException as exc:  # nothing is known of the riders: they are lost
        for rider in mine:
            rider.landed(exc)
        raise
    for rider, answer in zip(mine, answers, strict=False):
        if isinstance(answer, NoScriptError):
            await _alone(rider)
        else:
            rider.landed(answer if isinstance(answer, BaseException) else None)
    answer = answers[-1]
    if isinstance(answer, NoScriptError):
        return await script(keys=keys, args=args)
    if isinstance(answer, BaseException):
        raise answer
    return answer


async def _alone(rider: Rider) -> None:
    try:
        await rider.script(keys=rider.keys, args=rider.args)
    except Exception as exc:
        rider.landed(exc)
    else:
        rider.landed()
