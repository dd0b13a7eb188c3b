"""One farm fault, the typed error a chat call must raise for it, and the check itself.

The Discovery and the direct OpenAI-compatible client suites pin the same contract on their
own tables: a fault injected on the simulator reaches the caller as exactly one
:class:`~llm_client.LLMError` type whose message holds a given text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest
from _pytest.mark.structures import ParameterSet

from llm_client import LLMError
from llm_client._transport.base import ChatTransport
from memory_worker.farmsim import FarmSimulator, Fault


@dataclass(frozen=True)
class FaultCase:
    """``fault`` on the service makes a chat call raise exactly ``error_type`` naming ``text``."""

    fault: Fault
    error_type: type[LLMError]
    text: str

    async def check(
        self,
        sim: FarmSimulator,
        service: str,
        client: ChatTransport,
        request: Mapping[str, Any],
    ) -> None:
        sim.set_fault(service, self.fault)
        with pytest.raises(self.error_type) as info:
            await client.chat(request)
        assert type(info.value) is self.error_type
        assert self.text in str(info.value)


def fault_case(fault: Fault, error_type: type[LLMError], text: str, *, id: str) -> ParameterSet:
    """A table row: the case under its test id."""
    return pytest.param(FaultCase(fault, error_type, text), id=id)
