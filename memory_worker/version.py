"""The package's version: one source, the installed distribution's metadata (pyproject)."""

from __future__ import annotations

from importlib import metadata

try:
    __version__ = metadata.version("memory-worker")
except metadata.PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"
