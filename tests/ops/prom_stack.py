"""Real Prometheus and Alertmanager (Debian's packages) for end-to-end alerting tests.

Each runs as a subprocess on 127.0.0.1 with a free port and storage in a temporary directory. The configs are
rendered from the committed files (deploy/prometheus/rules, deploy/alertmanager/alertmanager.yml) with only
the timing shortened and the webhook URL pointed at the test, so the expressions under test are the shipped
ones.
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread
from typing import Any

import yaml

from testkit.process import free_port, http_status
from tests.ops.tools import DEPLOY, RULES_FILE


def wait_until(condition: Callable[[], Any], timeout_s: float, what: str, interval_s: float = 0.5) -> Any:
    """Poll until `condition()` is truthy and return it; fail naming `what` on timeout."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        result = condition()
        if result:
            return result
        time.sleep(interval_s)
    raise AssertionError(f"timed out after {timeout_s:.0f}s waiting for {what}")


def render_rules(target: Path, for_duration: str) -> Path:
    """The shipped rules with every alert's `for:` shortened; expressions untouched."""
    rules = yaml.safe_load(RULES_FILE.read_text())
    for group in rules["groups"]:
        for rule in group["rules"]:
            if "alert" in rule:
                rule["for"] = for_duration
    target.write_text(yaml.safe_dump(rules, sort_keys=False))
    return target


def render_alertmanager_config(target: Path, webhook_url: str) -> Path:
    """The example Alertmanager config with every webhook sent to the test and no grouping delay."""
    config = yaml.safe_load((DEPLOY / "alertmanager" / "alertmanager.yml").read_text())
    for receiver in config["receivers"]:
        for webhook in receiver.get("webhook_configs", []):
            webhook["url"] = webhook_url
    for route in [config["route"], *config["route"].get("routes", [])]:
        route.update({"group_wait": "1s", "group_interval": "1s"})
    target.write_text(yaml.safe_dump(config, sort_keys=False))
    return target


@dataclass
class WebhookReceiver:
    """A tiny HTTP server standing in for a pager: records every Alertmanager notification."""

    notifications: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        received = self.notifications

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                received.append(json.loads(body))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/ragpulse"
        Thread(target=self.server.serve_forever, daemon=True).start()

    def alert_names(self) -> set[str]:
        return {alert["labels"]["alertname"] for note in self.notifications for alert in note["alerts"]}

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Server:
    """A Prometheus-ecosystem server as a subprocess; stopped with SIGTERM, then SIGKILL."""

    def __init__(self, argv: list[str], port: int, log: Path, ready_path: str) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.log = log
        with log.open("ab") as out:
            self.process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
        wait_until(lambda: self._ready(ready_path), 60, f"{argv[0]} on {self.url}")

    def _ready(self, path: str) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"exited with {self.process.returncode}:\n{self.log.read_text()[-3000:]}")
        return http_status(self.url + path) == 200

    def get(self, path: str, **params: str) -> Any:
        url = f"{self.url}{path}?{urllib.parse.urlencode(params)}" if params else self.url + path
        with urllib.request.urlopen(url, timeout=10) as response:
            return json.load(response)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


def start_alertmanager(binary: str, workdir: Path, webhook_url: str) -> Server:
    port = free_port()
    config = render_alertmanager_config(workdir / "alertmanager.yml", webhook_url)
    argv = [
        binary,
        f"--config.file={config}",
        f"--storage.path={workdir / 'alertmanager-data'}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--cluster.listen-address=",  # no HA gossip: it would listen on every interface
    ]
    return Server(argv, port, workdir / "alertmanager.log", "/-/ready")


def start_prometheus(
    binary: str, workdir: Path, scrape_target: str, alertmanager: str, rules: Path
) -> Server:
    port = free_port()
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(rules)],
        "alerting": {"alertmanagers": [{"static_configs": [{"targets": [alertmanager]}]}]},
        "scrape_configs": [{"job_name": "ragpulse", "static_configs": [{"targets": [scrape_target]}]}],
    }
    config_file = workdir / "prometheus.yml"
    config_file.write_text(yaml.safe_dump(config))
    argv = [
        binary,
        f"--config.file={config_file}",
        f"--storage.tsdb.path={workdir / 'prometheus-data'}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--enable-feature=exemplar-storage",
    ]
    return Server(argv, port, workdir / "prometheus.log", "/-/ready")
