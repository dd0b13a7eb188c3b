"""What every fault-matrix scenario gets: isolated settings, a Redis client, a farm simulator."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_worker.farmsim import FarmSimulator
from memory_worker.settings import Settings


@dataclass
class FaultContext:
    #: Settings on the shared test server with a key prefix of this test's own.
    settings: Settings
    #: A client on that server (keys under the prefix are deleted afterwards).
    redis: Any
    redis_url: str
    #: A healthy farm simulator on a free loopback port.
    sim: FarmSimulator
    tmp_path: Path


Scenario = Callable[[FaultContext], Awaitable[None]]
