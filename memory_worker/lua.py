"""Where a Lua script's text comes from: each package keeps its scripts in its own ``lua/``
folder, next to the code that calls them (``run_store/lua``, ``cards/lua``; the arq worker's in
the top package's ``lua``).
"""

from __future__ import annotations

from importlib import resources


def lua_text(package: str, name: str) -> str:
    """The text of ``lua/<name>.lua`` inside ``package`` (a dotted package name)."""
    return resources.files(package).joinpath("lua", f"{name}.lua").read_text(encoding="utf-8")
