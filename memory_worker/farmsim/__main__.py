"""Run the farm simulator standalone: ``python -m memory_worker.farmsim``.

Prints its base URL (the only line on stdout; logs go to stderr) and serves
until Ctrl-C or SIGTERM (or ``--for-seconds`` elapse). ``--fault KIND[:SERVICE]``
starts it with a fault; faults and scripts are changed through the ``/_sim/...``
admin endpoints. ``memory-worker farmsim`` is the same server.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
from collections.abc import Sequence

from memory_worker import logs
from memory_worker.farmsim.faults import Fault, parse_fault_spec
from memory_worker.farmsim.server import FarmSimulator


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m memory_worker.farmsim",
        description="Farm simulator: a loopback Discovery job API with fault injection.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=50051)
    parser.add_argument("--queued-seconds", type=float, default=0.0)
    parser.add_argument("--run-seconds", type=float, default=0.0)
    parser.add_argument("--submit-block-seconds", type=float, default=0.0)
    parser.add_argument("--log-level", default="INFO")
    parser.add_argument(
        "--embedder",
        choices=["local", "hashed"],
        default=None,
        help="local: the real multilingual e5-small model; hashed: bag of words "
        "(default: MEMORY_FARMSIM_EMBEDDER, else local)",
    )
    parser.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="KIND[:SERVICE]",
        help="start with this fault (repeatable; no service: every service)",
    )
    parser.add_argument(
        "--for-seconds",
        type=float,
        default=None,
        help="stop after this many seconds (default: serve until Ctrl-C)",
    )
    return parser.parse_args(argv)


async def serve(args: argparse.Namespace, *, faults: Sequence[tuple[str, Fault]] = ()) -> None:
    sim = FarmSimulator(
        host=args.host,
        port=args.port,
        queued_seconds=args.queued_seconds,
        run_seconds=args.run_seconds,
        submit_block_seconds=args.submit_block_seconds,
        embedder=args.embedder,
    )
    # Ctrl-C and SIGTERM stop it even when the shell that started it in the background set
    # SIGINT to "ignored" (inherited across exec; Python then never raises KeyboardInterrupt)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    for service, fault in [*faults, *(parse_fault_spec(s) for s in args.fault)]:
        sim.set_fault(service, fault)
    async with sim:
        print(sim.base_url, flush=True)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), args.for_seconds)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    logs.configure(level=args.log_level)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args))


if __name__ == "__main__":
    main()
