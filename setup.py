"""Packaging: everything is in pyproject.toml but the one thing it cannot say.

``config/`` (the Procfile, example.env and routes files the README shows; the root
``Procfile`` links to ``config/Procfile``) ships inside the package as
``memory_worker.config``, so ``memory-worker init-config`` can write them
from an installed wheel. pyproject's ``packages.find`` cannot add a package that lives
outside its folder; this mapping does. ``docs/`` ships the same way as
``memory_worker.docs``: the console serves those pages. tests/test_packaging.py builds the wheel and the
sdist and looks inside.
"""

from setuptools import find_packages, setup

setup(
    packages=[
        *find_packages(include=["memory_worker*", "llm_client*"]),
        "memory_worker.config",
        "memory_worker.docs",
    ],
    package_dir={"memory_worker.config": "config", "memory_worker.docs": "docs"},
)
