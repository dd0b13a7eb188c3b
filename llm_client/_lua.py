"""Where a Lua script's text comes from: each package keeps its scripts in its own ``lua/``
folder, next to the code that registers them (``llm_client/_breaker/lua`` for the breakers,
``memory_worker/runs/lua``, ``memory_worker/cards/lua``, and the arq worker's in
``memory_worker/lua``). One loader for both packages, as ``redis_text`` is one bytes → str.
"""

from __future__ import annotations

from functools import cache
from importlib import resources


@cache
def lua_text(package: str, *names: str) -> str:
    """``lua/<name>.lua`` of ``package`` (dotted), each of ``names`` in order, joined.

    Several names make one script from shared fragments, e.g.
    ``lua_text(__package__, "retired_summary", "prune_retired_messages")``. Read once a process.
    """
    folder = resources.files(package).joinpath("lua")
    return "".join(folder.joinpath(f"{name}.lua").read_text(encoding="utf-8") for name in names)
