"""A real Prometheus server on loopback (Debian's ``prometheus``), configured from the shipped
files in deploy/prometheus/.

:class:`Prometheus` writes its own configuration into a temporary directory: the shipped
``prometheus.yml`` with its targets replaced by the test's endpoints and its intervals
shortened, and the shipped ``alerts.yml`` with each ``for`` shortened — the expressions
are the shipped ones, untouched. Its TSDB lives in the same directory.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx
import yaml

from tests.support.harness import eventually, free_port
from tests.support.promtool import binary

ROOT = Path(__file__).resolve().parent.parent.parent
SHIPPED = ROOT / "deploy" / "prometheus"


def derived_rules(shorter_for: Mapping[str, str]) -> dict[str, Any]:
    """The shipped rules, each ``for`` replaced by ``shorter_for[alert]`` when given."""
    rules: dict[str, Any] = yaml.safe_load((SHIPPED / "alerts.yml").read_text(encoding="utf-8"))
    for group in rules["groups"]:
        for rule in group["rules"]:
            if rule["alert"] in shorter_for:
                rule["for"] = shorter_for[rule["alert"]]
    return rules


def derived_config(fleet: str, workers: Sequence[str], interval: str) -> dict[str, Any]:
    """The shipped scrape configuration on these ``host:port`` targets, every ``interval``."""
    config: dict[str, Any] = yaml.safe_load(
        (SHIPPED / "prometheus.yml").read_text(encoding="utf-8")
    )
    config["global"] = {"scrape_interval": interval, "evaluation_interval": interval}
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    jobs["memory-worker-fleet"]["static_configs"] = [{"targets": [fleet]}]
    jobs["memory-worker-workers"]["static_configs"] = [{"targets": list(workers)}]
    return config


class Prometheus:
    """``prometheus`` on 127.0.0.1 with a derived configuration; its HTTP API."""

    def __init__(self, tmp: Path) -> None:
        self.dir = tmp / "prometheus"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    async def start(
        self,
        *,
        fleet: str,
        workers: Sequence[str],
        shorter_for: Mapping[str, str],
        interval: str = "1s",
    ) -> None:
        config = derived_config(fleet, workers, interval)
        (self.dir / "alerts.yml").write_text(yaml.safe_dump(derived_rules(shorter_for)))
        (self.dir / "prometheus.yml").write_text(yaml.safe_dump(config))
        self._spawn()

        async def ready() -> bool:
            assert self.proc is not None
            assert self.proc.poll() is None, self.log()
            with contextlib.suppress(httpx.HTTPError):
                async with httpx.AsyncClient(timeout=2) as client:
                    return (await client.get(self.url + "/-/ready")).status_code == 200
            return False

        await eventually(ready, timeout=60, every=0.2)

    def _spawn(self) -> None:
        with open(self.dir / "prometheus.log", "wb") as log:  # the process keeps its own fd
            self.proc = subprocess.Popen(
                [
                    binary("prometheus"),
                    f"--config.file={self.dir / 'prometheus.yml'}",
                    f"--storage.tsdb.path={self.dir / 'data'}",
                    f"--web.listen-address=127.0.0.1:{self.port}",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.dir,
            )

    async def api(self, path: str, **params: str) -> Any:
        async with httpx.AsyncClient(timeout=5) as client:
            answer = await client.get(f"{self.url}/api/v1/{path}", params=params)
        body = answer.json()
        assert body["status"] == "success", body
        return body["data"]

    async def alerts(self, name: str) -> list[dict[str, Any]]:
        """The pending or firing alerts named ``name``."""
        data = await self.api("alerts")
        return [a for a in data["alerts"] if a["labels"].get("alertname") == name]

    async def query(self, expr: str, at: float | None = None) -> list[dict[str, Any]]:
        params = {"query": expr} | ({"time": str(at)} if at is not None else {})
        result: list[dict[str, Any]] = (await self.api("query", **params))["result"]
        return result

    async def targets_up(self) -> int:
        return sum(int(float(s["value"][1])) for s in await self.query("up"))

    def log(self) -> str:
        path = self.dir / "prometheus.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
