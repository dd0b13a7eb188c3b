"""The layout rules (docs/development.md): no import cycle, small modules, short functions.

Imports are read with ``ast`` over ``memory_worker`` and ``llm_client``,
function-local imports included (a cycle hidden inside a function is still a
cycle). An edge goes to the module imported (``from a.b import c`` → ``a.b.c``
when that is a module, else ``a.b``); parent packages' ``__init__`` are not
counted as edges, as import-linter does not.
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


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _edges(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    def resolve(dotted: str) -> str | None:
        while dotted and dotted not in modules:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    deps: set[str] = set()
    for node in ast.walk(parse(path.read_text(encoding="utf-8"))):
        targets: list[str | None] = []
        if isinstance(node, ast.Import):
            targets = [resolve(alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                kept = package[: len(package) - node.level + 1]
                base = ".".join([*kept, base] if base else kept)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                targets.append(full if full in modules else resolve(base))
        deps.update(t for t in targets if t is not None and t != name)
    return deps


def import_cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    modules = _modules()
    graph = {name: _edges(name, path, modules) for name, path in modules.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
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
