"""What the typed Discovery client costs over the bare wire protocol.

Starts the farm simulator on loopback and, in the same run, measures the wall
time per completed job of

- ``DiscoveryClient.chat`` (encode, submit, poll, decode envelope and completion,
  typed errors, logs), and
- a bare httpx baseline: build the submit JSON, one submit, one poll round trip,
  no decoding beyond reading the job id.

The two alternate job by job (after a warm-up) so drift on a busy machine hits
both equally. Prints both medians and the ratio; the target is ≤ 1.3×.

    python bench/client_overhead.py [--jobs 300] [--warmup 30]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import logging
import statistics
import sys
import time
import uuid
from typing import Any

import httpx
import orjson

from llm_client import ClientConfig, DiscoveryClient
from memory_worker.farmsim import FarmSimulator

TARGET_RATIO = 1.3
SERVICE = "llm-openai"
ENDPOINT = "chat_completions"
REQUEST: dict[str, Any] = {
    "model": "bench",
    "messages": [
        {"role": "system", "content": "You extract durable facts."},
        {"role": "user", "content": "Alice: I moved to Lisbon last spring."},
    ],
}


async def bare_job(http: httpx.AsyncClient, base_url: str) -> None:
    """The protocol's minimum: submit the job, read its id, poll it once."""
    key = f"bench-{uuid.uuid4().hex}"
    inner = orjson.dumps({**REQUEST, "stream": False})
    submit = {
        "invocation": {
            "service_name": SERVICE,
            "endpoint_name": ENDPOINT,
            "headers": {"X-Request-Id": key, "X-AIFarm-Workload": "memory"},
            "body": base64.b64encode(inner).decode(),
            "content_type": "application/json",
            "timeout_ms": 720_000,
        },
        "idempotency_key": key,
        "priority": 10,
    }
    answer = await http.post(f"{base_url}/v1/jobs/blocking", content=orjson.dumps(submit))
    data = orjson.loads(answer.content)
    job_id = data.get("id") or data["job"]["job_id"]
    await http.get(f"{base_url}/v1/jobs/{job_id}")


async def measure(jobs: int, warmup: int) -> tuple[float, float]:
    async with FarmSimulator() as sim:
        config = ClientConfig(base_url=sim.base_url)
        async with (
            DiscoveryClient(config, service=SERVICE, endpoint=ENDPOINT) as client,
            httpx.AsyncClient(timeout=config.request_timeout) as http,
        ):
            for _ in range(warmup):
                await client.chat(REQUEST)
                await bare_job(http, sim.base_url)
            client_times: list[float] = []
            bare_times: list[float] = []
            for _ in range(jobs):
                started = time.perf_counter()
                await client.chat(REQUEST)
                client_times.append(time.perf_counter() - started)
                started = time.perf_counter()
                await bare_job(http, sim.base_url)
                bare_times.append(time.perf_counter() - started)
            polls = sim.stats()[SERVICE]["polls"]
    expected_polls = 2 * (jobs + warmup)
    if polls != expected_polls:
        print(f"note: {polls} polls for {expected_polls // 2} client + bare jobs each")
    return statistics.median(client_times), statistics.median(bare_times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=30)
    args = parser.parse_args()
    # Production log level: the client's per-job debug events are filtered out.
    logging.getLogger("llm_client").setLevel(logging.INFO)
    client_median, bare_median = asyncio.run(measure(args.jobs, args.warmup))
    ratio = client_median / bare_median
    print(f"DiscoveryClient.chat      median {client_median * 1000:7.3f} ms/job")
    print(f"bare httpx submit + poll  median {bare_median * 1000:7.3f} ms/job")
    print(f"ratio {ratio:.2f}x (target <= {TARGET_RATIO}x), {args.jobs} jobs each")
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
