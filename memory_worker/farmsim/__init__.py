"""A farm simulator: a loopback Discovery job API for tests and the demo (§3, §12).

Clearly a simulator: a deterministic rule-based extractor stands in for the
model; the embedder is the real multilingual e5-small model run locally
(``embedder="hashed"``, or ``MEMORY_FARMSIM_EMBEDDER=hashed``, swaps in a
bag-of-words stand-in for tests that need exact similarities); and every
failure a GPU farm produces can be injected per service.

    from memory_worker.farmsim import FarmSimulator, Fault, FaultKind

    async with FarmSimulator() as sim:
        sim.set_fault("*", Fault(kind=FaultKind.JOB_FAILED, code="UPSTREAM_ERROR"))

Modules: ``server`` (the HTTP server and its routes), ``jobs`` (a job's life and the
envelopes that report it), ``faults`` (what can go wrong, and for how long),
``backends`` (the OpenAI-style chat and embedder behind the farm), ``extractor`` (the
rule-based extractor), ``adversary`` (the same model playing an adversary: its facts
reworded, re-scoped, translated and split, the ``adversarial`` fault), ``embedder`` (the
real e5 model or a hashed stand-in).
"""

from memory_worker.farmsim.faults import Fault, FaultKind
from memory_worker.farmsim.jobs import EnvelopeStyle, JobState
from memory_worker.farmsim.server import DIRECT_SERVICE, FarmSimulator

__all__ = [
    "DIRECT_SERVICE",
    "EnvelopeStyle",
    "FarmSimulator",
    "Fault",
    "FaultKind",
    "JobState",
]
