"""The layout rules (docs/development.md): floors, no import cycle, one face per package.

Imports are read with ``ast`` over ``memory_worker`` and ``llm_client``, function-local
and ``TYPE_CHECKING`` imports included (a cycle hidden inside a function, or in a type
annotation, is still a cycle). An edge goes to the module imported (``from a.b import c``
→ ``a.b.c`` when that is a module, else ``a.b``); parent packages' ``__init__`` are not
counted as edges, as import-linter does not.

A *room* is a folder of ``memory_worker`` (``cards/``), one of its top-level modules
(``wiring.py``), the package face (``__init__``) or the whole of ``llm_client``. Every room
stands on a floor (``FLOORS``, the layer order of docs/architecture.md, "Floors"); an
import may go to a room on the same floor or lower, never higher, and the rooms' graph
has no cycle. There is no size cap: ``python -m tests.support.sizes`` reports sizes.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path


def parse(text: str) -> ast.Module:
    """``ast.parse``, retried on CPython 3.11's spurious "AST constructor recursion depth
    mismatch" SystemError (gh-106905: the AST state is shared across threads, and a thread
    of an earlier test — an executor importing a module — can race the conversion)."""
    for _ in range(4):
        try:
            return ast.parse(text)
        except SystemError:
            continue
    return ast.parse(text)


ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("memory_worker", "llm_client")


def _modules(root: Path = ROOT) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> list[tuple[int, str]]:
    """``(line, imported module)`` for every import of one module, wherever it stands."""

    def resolve(dotted: str) -> str | None:
        while dotted and dotted not in modules:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: list[tuple[int, str]] = []
    for node in ast.walk(parse(path.read_text(encoding="utf-8"))):
        targets: list[str | None] = []
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        if isinstance(node, ast.Import):
            targets = [resolve(alias.name) for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                kept = package[: len(package) - node.level + 1]
                base = ".".join([*kept, base] if base else kept)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                targets.append(full if full in modules else resolve(base))
        found += [(node.lineno, t) for t in targets if t is not None and t != name]
    return found


def _edges(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    return {target for _, target in _imports(name, path, modules)}


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return cycles


def import_cycles() -> list[list[str]]:
    """Module-level import cycles of both packages."""
    modules = _modules()
    return strongly_connected({name: _edges(name, path, modules) for name, path in modules.items()})


def test_no_import_cycle() -> None:
    assert import_cycles() == []


def test_the_cycle_finder_finds_a_cycle(tmp_path: Path) -> None:
    first = ast.parse("def f():\n    from memory_worker import b\n")
    assert isinstance(first.body[0], ast.FunctionDef)  # function-local imports are walked
    modules = {"memory_worker.a": tmp_path / "a.py", "memory_worker.b": tmp_path / "b.py"}
    modules["memory_worker.a"].write_text("def f():\n    from memory_worker import b\n")
    modules["memory_worker.b"].write_text("from memory_worker.a import f\n")
    assert _edges("memory_worker.a", modules["memory_worker.a"], modules) == {"memory_worker.b"}
    assert _edges("memory_worker.b", modules["memory_worker.b"], modules) == {"memory_worker.a"}


# The layer order, ground first (docs/architecture.md, "Floors"). A new folder or top-level
# module of memory_worker must be placed here before it can be imported by anything.
FLOORS: dict[str, int] = {
    "llm_client": 0,
    # ground: what everybody needs, standing only on llm_client
    "errors.py": 1,
    "keys.py": 1,
    "version.py": 1,
    "deadlines.py": 1,
    "settings/": 1,
    "privacy/": 1,
    "logs.py": 1,
    "models.py": 1,
    # Redis: URLs, clients, checks, health
    "storage/": 2,
    # the stores
    "runs/": 3,
    "cards/": 3,
    "recall.py": 3,
    # one run's processing, and the admin pages
    "pipeline/": 4,
    "consolidation/": 4,
    "paging/": 4,
    # jobs that span stores and the farm
    "upkeep/": 5,
    # the composition root
    "wiring.py": 6,
    # what a process reports
    "ops/": 7,
    # the bot's library and the arq worker
    "api/": 8,
    "worker/": 8,
    # what an operator or a test drives
    "console/": 9,
    "cli/": 9,
    "demo/": 9,
    "farmsim/": 9,
    "server.py": 9,
    "__main__.py": 9,
    "__init__": 9,
}


def room(module: str, root: Path = ROOT) -> str:
    """The room a module stands in: ``cards/``, ``wiring.py``, ``__init__`` or ``llm_client``."""
    parts = module.split(".")
    if parts[0] == "llm_client":
        return "llm_client"
    if len(parts) == 1:
        return "__init__"
    if (root / parts[0] / parts[1]).is_dir():
        return f"{parts[1]}/"
    return f"{parts[1]}.py"


def room_imports(root: Path = ROOT) -> dict[tuple[str, str], list[str]]:
    """Every import between two rooms: ``(importer room, imported room)`` →
    ``["importer.py:line → imported.module", …]``."""
    modules = _modules(root)
    found: dict[tuple[str, str], list[str]] = {}
    for name, path in modules.items():
        for line, target in _imports(name, path, modules):
            pair = (room(name, root), room(target, root))
            if pair[0] != pair[1]:
                where = f"{path.relative_to(root).as_posix()}:{line} → {target}"
                found.setdefault(pair, []).append(where)
    return found


def upward_imports(imports: dict[tuple[str, str], list[str]]) -> dict[tuple[str, str], list[str]]:
    """The room pairs whose importer stands on a lower floor than what it imports."""
    return {pair: where for pair, where in imports.items() if FLOORS[pair[0]] < FLOORS[pair[1]]}


def folder_cycles(imports: dict[tuple[str, str], list[str]]) -> list[list[str]]:
    graph: dict[str, set[str]] = {}
    for importer, imported in imports:
        graph.setdefault(importer, set()).add(imported)
    return strongly_connected(graph)


def test_every_room_has_a_floor() -> None:
    rooms = {r for pair in room_imports() for r in pair} | {room(m) for m in _modules()}
    assert sorted(rooms - set(FLOORS)) == []


def test_no_import_goes_up_a_floor() -> None:
    """Every import, top-level, function-local or type-only, goes to the same floor or
    lower (``FLOORS``)."""
    assert upward_imports(room_imports()) == {}


def test_no_cycle_between_folders() -> None:
    cycles = folder_cycles(room_imports())
    assert cycles == [], {
        " ".join(cycle): sorted(
            where
            for (a, b), lines in room_imports().items()
            if a in cycle and b in cycle
            for where in lines
        )[:40]
        for cycle in cycles
    }


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "llm_client").mkdir(exist_ok=True)
    (root / "llm_client" / "__init__.py").touch()
    return root


def test_the_floor_checks_find_an_upward_import_and_a_folder_cycle(tmp_path: Path) -> None:
    """An import inside a function that goes up a floor, and a cycle between two folders
    closed by a type-only import, are both found."""
    root = _package(
        tmp_path,
        {
            "memory_worker/__init__.py": "",
            "memory_worker/storage/__init__.py": "",
            "memory_worker/storage/a.py": "def f():\n    from memory_worker.wiring import x\n",
            "memory_worker/wiring.py": "x = 1\n",
            "memory_worker/runs/__init__.py": "",
            "memory_worker/runs/r.py": "from memory_worker.cards.c import y\n",
            "memory_worker/cards/__init__.py": "",
            "memory_worker/cards/c.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from memory_worker.runs.r import z\ny = 1\n"
            ),
        },
    )
    imports = room_imports(root)
    assert upward_imports(imports) == {
        ("storage/", "wiring.py"): ["memory_worker/storage/a.py:2 → memory_worker.wiring"]
    }
    assert folder_cycles(imports) == [["cards/", "runs/"]]


#: The stores and event logs: built in the composition root only (``memory_worker/wiring.py``),
#: so that no call site can forget a setting one of them reads.
STORES = (
    "RunStore",
    "CardStore",
    "BreakerStore",
    "RedisEventLog",
    "TickQueue",
    "ReplayStore",
    "Forgetter",
)


def stores_built_outside_the_root(root: Path = ROOT) -> list[str]:
    """Calls of a store's class anywhere in ``memory_worker`` but ``wiring.py``: ``file:line``."""
    found: list[str] = []
    for path in sorted((root / "memory_worker").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel == "memory_worker/wiring.py":
            continue
        for node in ast.walk(parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                f = node.func
                name = (
                    f.id
                    if isinstance(f, ast.Name)
                    else f.attr
                    if isinstance(f, ast.Attribute)
                    else ""
                )
                if name in STORES:
                    found.append(f"{rel}:{node.lineno} {name}")
    return found


def test_every_store_is_built_in_the_root() -> None:
    assert stores_built_outside_the_root() == []


def test_the_root_check_finds_a_store_built_elsewhere(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "memory_worker/__init__.py": "",
            "memory_worker/wiring.py": "def run_store(r, s):\n    return RunStore(r, s)\n",
            "memory_worker/console/data.py": (
                "async def audit(r, k):\n    await llm_client.RedisEventLog(r, k).emit(1)\n"
            ),
        },
    )
    assert stores_built_outside_the_root(root) == ["memory_worker/console/data.py:2 RedisEventLog"]


#: Classes that existed only to let one concept span two files (a mixin reaching back into
#: its subclass, a Protocol standing for the one class that calls a helper).
STITCHES = ("MemoryOps", "_Queue", "WalkHost")


def stitched_classes(root: Path = ROOT) -> list[str]:
    """Classes named in ``STITCHES``, and any ``Protocol`` of the console (whose handlers are
    the ``Console``'s methods): ``file:line name``."""
    found: list[str] = []
    for path in _modules(root).values():
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = {
                b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases
            }
            if node.name in STITCHES or (
                rel.startswith("memory_worker/console/") and "Protocol" in bases
            ):
                found.append(f"{rel}:{node.lineno} {node.name}")
    return found


def test_no_class_is_stitched_across_files() -> None:
    """One class per concept: a Protocol only where a second real implementation exists."""
    assert stitched_classes() == []


def test_the_stitch_check_finds_a_stitch(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "memory_worker/__init__.py": "",
            "memory_worker/api/ops.py": "class MemoryOps:\n    pass\n",
            "memory_worker/console/__init__.py": "",
            "memory_worker/console/x.py": (
                "from typing import Protocol\nclass Console(Protocol):\n    pass\n"
            ),
        },
    )
    assert stitched_classes(root) == [
        "memory_worker/api/ops.py:1 MemoryOps",
        "memory_worker/console/x.py:2 Console",
    ]


def test_the_module_map_names_every_module_and_package() -> None:
    """The module map (docs/architecture.md) matches the layout. Every top-level module
    and every subpackage of both packages is named in it (a subpackage's own modules
    are described by its ``__init__`` docstring)."""
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = page.split("## Module map", 1)[1].split("\n## ", 1)[0]
    missing = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).iterdir()):
            if path.is_dir() and (path / "__init__.py").exists():
                name = f"{path.name}/"
            elif path.suffix == ".py" and not path.name.startswith("__"):
                name = path.name
            else:
                continue
            if f"`{name}`" not in section:
                missing.append(f"{package}/{name}")
    assert not missing, f"modules not in the module map (docs/architecture.md): {missing}"


def deep_llm_client_imports() -> list[str]:
    """``memory_worker`` imports of anything behind ``llm_client``'s face (file:line name)."""
    found: list[str] = []
    for path in sorted((ROOT / "memory_worker").rglob("*.py")):
        for node in ast.walk(parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            found += [
                f"{path.relative_to(ROOT)}:{node.lineno} {name}"
                for name in names
                if name.startswith("llm_client.")
            ]
    return found


def test_memory_worker_imports_llm_client_only_through_its_face() -> None:
    """``from llm_client import X`` only: the modules behind the face are private."""
    assert deep_llm_client_imports() == []


def face_names_taken_from_behind_the_face() -> list[str]:
    """``tests/`` and ``bench/`` imports of a name ``llm_client`` exports, taken from a private
    module instead of the face (file:line name). Names the face does not export may still be
    reached behind it: tests of the private parts need them."""
    import llm_client

    face = set(llm_client.__all__)
    found: list[str] = []
    for folder in ("tests", "bench"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(parse(path.read_text(encoding="utf-8"))):
                if (
                    isinstance(node, ast.ImportFrom)
                    and node.level == 0
                    and (node.module or "").startswith("llm_client._")
                ):
                    found += [
                        f"{path.relative_to(ROOT)}:{node.lineno} {alias.name}"
                        for alias in node.names
                        if alias.name in face
                    ]
    return found


def test_tests_and_benches_take_face_names_from_the_face() -> None:
    assert face_names_taken_from_behind_the_face() == []


#: Test folders that are not a room of the package: whole-system stories, the fault matrix's
#: rows, and what the tests share.
TEST_FOLDERS_BEYOND_THE_PACKAGE = {"e2e", "faults", "support", "data"}
#: Tests of the whole project, at the top of ``tests/``.
TOP_LEVEL_TESTS = {
    "test_structure.py", "test_docs.py", "test_suite_groups.py", "test_demo.py",
    "test_wiring.py", "test_examples.py", "test_packaging.py", "test_systemd.py",
}  # fmt: skip


def test_tests_mirror_the_package() -> None:
    """``tests/cards/`` tests ``memory_worker/cards/``, ``tests/llm_client/`` the client: a test
    file sits in the folder of the room it tests, not in one flat list."""
    rooms = {p.name for p in (ROOT / "memory_worker").iterdir() if p.is_dir()} | {"llm_client"}
    tests = ROOT / "tests"
    folders = {p.name for p in tests.iterdir() if p.is_dir() and not p.name.startswith((".", "__"))}
    assert folders - rooms - TEST_FOLDERS_BEYOND_THE_PACKAGE == set()
    flat = {p.name for p in tests.glob("test_*.py")}
    assert flat <= TOP_LEVEL_TESTS, sorted(flat - TOP_LEVEL_TESTS)


def test_the_face_exports_what_its_docstring_lists() -> None:
    import llm_client

    doc = llm_client.__doc__ or ""
    assert sorted(n for n in llm_client.__all__ if f"``{n}``" not in doc) == []
    assert all(hasattr(llm_client, n) for n in llm_client.__all__)


def test_every_subpackage_docstring_names_its_modules() -> None:
    """A concept folder's ``__init__`` docstring says what each of its modules holds."""
    missing: list[str] = []
    for package in PACKAGES:
        for init in sorted((ROOT / package).rglob("__init__.py")):
            if init.parent == ROOT / package:
                continue
            doc = ast.get_docstring(parse(init.read_text(encoding="utf-8"))) or ""
            for module in sorted(init.parent.glob("*.py")):
                stem = module.stem
                if stem.startswith("__"):
                    continue
                if not re.search(rf"[`.]{stem}(\.py)?`", doc):
                    missing.append(module.relative_to(ROOT).as_posix())
    assert missing == []


def test_every_exception_belongs_to_a_drawn_tree() -> None:
    """Every exception class the packages define is in one of the two documented trees:
    a subclass of ``MemoryWorkerError`` or ``LLMError``, defined in its tree's module
    (``memory_worker/errors.py``, ``llm_client/_errors.py``) and drawn in its docstring."""
    import importlib
    import inspect
    import pkgutil

    import llm_client
    import memory_worker
    from llm_client import _errors as llm_errors
    from memory_worker import errors as mw_errors

    homes = {mw_errors.__name__, llm_errors.__name__}
    drawn = (mw_errors.__doc__ or "") + (llm_errors.__doc__ or "")
    problems: list[str] = []
    for package in (memory_worker, llm_client):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if info.name.endswith("__main__"):
                continue
            module = importlib.import_module(info.name)
            for name, cls in vars(module).items():
                if not (inspect.isclass(cls) and issubclass(cls, BaseException)):
                    continue
                if cls.__module__ != module.__name__:
                    continue
                if not issubclass(cls, mw_errors.MemoryWorkerError | llm_errors.LLMError):
                    problems.append(f"{info.name}.{name}: outside both trees")
                elif module.__name__ not in homes:
                    problems.append(f"{info.name}.{name}: defined outside its tree's module")
                elif not re.search(rf"\b{name}\b", drawn):
                    problems.append(f"{info.name}.{name}: not drawn in its tree")
    assert problems == []


def test_memory_worker_errors_hang_in_families_a_bot_can_catch() -> None:
    """``MemoryWorkerError``'s children are the families only (no flat tree), and the face
    exports each family, so a bot catches "bad input" or "not found" as one type."""
    import memory_worker
    from memory_worker import errors

    families = {
        "InvalidInput",
        "NotFound",
        "Conflict",
        "Unavailable",
        "ConfigurationError",
        "StoreError",
        "RunControl",
    }
    children = {c.__name__ for c in errors.MemoryWorkerError.__subclasses__()}
    assert children == families
    assert sorted(families - set(memory_worker.__all__)) == []


def test_the_library_logs_only_through_its_stdlib_loggers() -> None:
    """Every module logs through ``get_logger`` (stdlib records, no global set-up): a bare
    ``structlog.get_logger`` writes to stdout inside a bot and skips the CLI's masking."""
    offenders = [
        path.relative_to(ROOT).as_posix()
        for path in _modules().values()
        if "structlog.get_logger(" in path.read_text(encoding="utf-8")
        and path.relative_to(ROOT).as_posix() != "llm_client/_log.py"
    ]
    assert offenders == []
