"""Packaging: everything is in pyproject.toml but the one thing it cannot say.

Folders of the repository that an operator starts from ship inside the package, so
``memory-worker init-config`` can write them from an installed wheel (:data:`SHIPPED`):
``config/`` (the Procfile, example.env and routes files the README shows; the root
``Procfile`` links to ``config/Procfile``) as ``memory_worker.config``, ``deploy/`` (the
Prometheus alert rules and their tests, ``prometheus.yml``, the Grafana dashboard, the
systemd units) as ``memory_worker.deploy``, ``examples/`` as ``memory_worker.examples`` and
``docs/`` as ``memory_worker.docs`` (the console serves those pages).
pyproject's ``packages.find`` cannot add a package that lives outside its folder; this
mapping does. The data files are chosen here too (pyproject.toml's ``package-data`` table
would replace this choice): every file of a folder without Python in it (the ``lua/``
scripts, templates, prompts, ``data/``) and of every shipped folder.

Packages are found as namespace packages, so a data folder without ``__init__.py`` (the
``lua/`` scripts, ``deploy/grafana``) is a package whose files ship, and setuptools has no
"Package would be ignored" warning to print. tests/test_examples.py and tests/test_packaging.py
build the wheel and the sdist and look inside.
"""

from pathlib import Path

from setuptools import find_namespace_packages, setup

#: Package name inside ``memory_worker`` → the repository folder it ships.
SHIPPED = {"config": "config", "deploy": "deploy", "examples": "examples", "docs": "docs"}
NOT_PACKAGES = ["*__pycache__*"]


def shipped_packages() -> dict[str, str]:
    """Every package of the shipped folders (their subfolders too) → its folder."""
    found = {}
    for name, folder in SHIPPED.items():
        found[f"memory_worker.{name}"] = folder
        for sub in find_namespace_packages(where=folder, exclude=NOT_PACKAGES):
            found[f"memory_worker.{name}.{sub}"] = f"{folder}/{sub.replace('.', '/')}"
    return found


def is_data(package: str) -> bool:
    """A folder of the code without Python in it holds data (Lua scripts, templates, prompts)."""
    return not any(Path(*package.split(".")).glob("*.py"))


CODE_PACKAGES = find_namespace_packages(
    include=["memory_worker", "memory_worker.*", "llm_client", "llm_client.*"],
    exclude=NOT_PACKAGES,
)
SHIPPED_PACKAGES = shipped_packages()

setup(
    packages=[*CODE_PACKAGES, *SHIPPED_PACKAGES],
    package_dir={f"memory_worker.{name}": folder for name, folder in SHIPPED.items()},
    package_data={
        "memory_worker": ["py.typed"],
        "llm_client": ["py.typed"],
        # every file of a data folder (a new lua/ beside its code ships without a line here)
        **{package: ["*"] for package in CODE_PACKAGES if is_data(package)},
        # every file of a shipped folder
        **{package: ["*"] for package in SHIPPED_PACKAGES},
    },
)
