"""Packaging: everything is in pyproject.toml but the one thing it cannot say.

``examples/`` (the Procfile, example.env and routes files the README shows) ships inside
the package as ``memory_worker.examples``, so ``memory-worker init-config`` can write them
from an installed wheel. pyproject's ``packages.find`` cannot add a package that lives
outside its folder; this mapping does. tests/test_packaging.py builds the wheel and the
sdist and looks inside.
"""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["memory_worker*", "llm_client*"]), "memory_worker.examples"],
    package_dir={"memory_worker.examples": "examples"},
)
