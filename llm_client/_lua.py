"""Where a Lua script's text comes from: each package keeps its scripts in its own ``lua/``
folder, next to the code that registers them (``llm_client/_breaker/lua`` for the breakers,
``memory_worker/runs/lua``, ``memory_worker/cards/lua``, and the arq worker's in
``memory_worker/lua``). One loader for both packages, as ``redis_text`` is one bytes → str.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

#: A call of ``preflight`` (``lua/preflight.lua``), not its definition.
_CALLS_PREFLIGHT = re.compile(r"(?<!function )\bpreflight\s*\(")


@cache
def lua_text(package: str, *names: str) -> str:
    """``lua/<name>.lua`` of ``package`` (dotted), each of ``names`` in order, joined.

    Several names make one script from shared fragments, e.g.
    ``lua_text(__package__, "retired_summary", "prune_retired_messages")``. Read once a process.
    Text that calls ``preflight`` (the ACL check before a script's first write) starts with
    its definition (:data:`PREFLIGHT`).
    """
    folder = resources.files(package).joinpath("lua")
    text = "".join(folder.joinpath(f"{name}.lua").read_text(encoding="utf-8") for name in names)
    return with_preflight(text)


def with_preflight(text: str) -> str:
    """``text`` after the definition of ``preflight`` when it calls it (a script kept inline
    in Python passes through here too)."""
    return PREFLIGHT + text if _CALLS_PREFLIGHT.search(text) else text


#: ``lua/preflight_shapes.lua``: ``preflight_shapes(writes, legacy)``, the second half of the
#: preflight: each declared key's type, each ``INCR`` counter's value (the server's own
#: ``WRONGTYPE`` or integer reply when one is not what the writes can take).
PREFLIGHT_SHAPES = (
    resources.files(__package__).joinpath("lua", "preflight_shapes.lua").read_text("utf-8")
)
#: ``lua/preflight.lua`` after :data:`PREFLIGHT_SHAPES`: ``preflight(writes)`` asks the server,
#: before a script's first write, whether this user may run each write it declares
#: (``NOPERM`` when one is denied), then whether each key can take them.
PREFLIGHT = PREFLIGHT_SHAPES + resources.files(__package__).joinpath(
    "lua", "preflight.lua"
).read_text("utf-8")
