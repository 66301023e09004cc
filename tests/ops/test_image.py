"""What the container image runs, started: the wheel built exactly as deploy/Dockerfile builds it.

The image's build stage copies the repository filtered by deploy/Dockerfile.dockerignore and runs one
`pip wheel` command; its runtime stage installs that wheel into a fresh virtualenv. These tests do the
same outside a container (none is needed): they filter a copy of the repository by the same ignore rules,
run the build stage's RUN command read from the Dockerfile, install the wheel into a clean venv, and start
`ragpulse` from that venv with the working directory outside the repository, so a package, module or
data file the wheel lacks fails here as it would in the image (`No module named 'ragpulse_sdk'` did).
Where podman runs, the last test builds the image itself and starts it, as compose and Kubernetes do.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import tomllib
import venv
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpanExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter

from collector.commands.demo_corpus import TOPICS
from testkit.process import free_port, http_status
from testkit.rag_traces import topic_attributes
from testkit.scrape import scrape
from tests.ops.tools import DEPLOY, REPO, require_binary

pytestmark = pytest.mark.timeout(600)

DOCKERFILE = DEPLOY / "Dockerfile"
DOCKERIGNORE = DEPLOY / "Dockerfile.dockerignore"


# --- the build context, as docker/buildah filter it ------------------------------------------------------


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    """A .dockerignore pattern (Go filepath.Match plus `**`, as moby's patternmatcher reads it) as a regex
    over a path relative to the context root."""
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        elif pattern[i] == "[":
            end = pattern.index("]", i + 1)
            out, i = out + "[" + pattern[i + 1 : end].replace("!", "^", 1) + "]", end + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out)


def _ignore_rules(text: str) -> list[tuple[bool, re.Pattern[str]]]:
    """(is_exception, regex) per rule, in order: the last rule matching a path decides."""
    rules = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        exception = line.startswith("!")
        pattern = os.path.normpath(line.removeprefix("!").strip()).lstrip("/")
        rules.append((exception, _pattern_regex(pattern)))
    return rules


def _ignored(relative: str, rules: list[tuple[bool, re.Pattern[str]]]) -> bool:
    """Docker's rule: a pattern excludes a path if it matches the path or any directory above it."""
    parts = relative.split("/")
    candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    ignored = False
    for exception, regex in rules:
        if any(regex.fullmatch(candidate) for candidate in candidates):
            ignored = not exception
    return ignored


def _copy_context(destination: Path) -> None:
    rules = _ignore_rules(DOCKERIGNORE.read_text())
    prune = not any(exception for exception, _ in rules)  # no `!` rule can bring back a pruned folder
    for root, dirs, files in os.walk(REPO):
        relative_root = Path(root).relative_to(REPO)
        if prune:
            dirs[:] = [d for d in dirs if not _ignored((relative_root / d).as_posix(), rules)]
        for name in files:
            relative = (relative_root / name).as_posix()
            if not _ignored(relative, rules):
                (destination / relative).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(REPO / relative, destination / relative)


def _build_stage_command() -> list[str]:
    """The RUN command of the Dockerfile's build stage (the stage named `build`)."""
    stage = DOCKERFILE.read_text().split(" AS build", 1)[1].split("\nFROM ", 1)[0]
    (command,) = [line.removeprefix("RUN ") for line in stage.splitlines() if line.startswith("RUN ")]
    return shlex.split(command)


# --- the installed wheel -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Installed:
    wheel: Path
    context: Path
    bin: Path
    workdir: Path  # outside the repository: nothing can be imported from the source tree

    def env(self) -> dict[str, str]:
        env = {
            k: v for k, v in os.environ.items() if not k.startswith(("RAGPULSE_", "PYTHON", "VIRTUAL_ENV"))
        }
        return {**env, "PATH": f"{self.bin}{os.pathsep}{env.get('PATH', '')}", "HOME": str(self.workdir)}


def _check(argv: list[str], cwd: Path | None = None, timeout: float = 600) -> str:
    result = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
    assert result.returncode == 0, f"{shlex.join(argv)}:\n{result.stdout[-3000:]}{result.stderr[-3000:]}"
    return result.stdout


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The wheel built from the filtered tree by the build stage's command, installed into a clean venv
    (built once per test session; pip fetches the build backend and the dependencies from PyPI)."""
    base = tmp_path_factory.mktemp("image")
    context, environment, workdir = base / "context", base / "venv", base / "work"
    context.mkdir()
    workdir.mkdir()
    _copy_context(context)
    venv.EnvBuilder(with_pip=True, clear=True).create(environment)
    python = environment / "bin" / "python"
    command = _build_stage_command()
    assert command[0] == "python3", command
    _check([str(python), *command[1:]], cwd=context)
    (wheel,) = (context / "dist").glob("ragpulse-*.whl")
    _check([str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q", str(wheel)], workdir)
    return Installed(wheel, context, environment / "bin", workdir)


def test_the_context_leaves_out_what_is_never_built() -> None:
    rules = _ignore_rules(DOCKERIGNORE.read_text())
    for path in [".git/HEAD", ".venv/bin/python", "deploy/tools/bin/helm", "collector/__pycache__/cli.pyc"]:
        assert _ignored(path, rules), path
    for path in [
        "pyproject.toml",
        "README.md",
        "LICENSE",
        "collector/commands/cli.py",
        "ragpulse_sdk/record.py",
    ]:
        assert not _ignored(path, rules), path
    assert _ignored("a/b/node_modules/x.js", rules) and not _ignored("collector/page/static/page.js", rules)


def test_the_wheel_ships_every_module_and_data_file_the_runtime_needs(installed: Installed) -> None:
    """Every first-party top-level module the shipped code imports ships, and so does every file of the
    shipped packages (templates, static files, the judges' data, the grounding model)."""
    with zipfile.ZipFile(installed.wheel) as archive:
        names = set(archive.namelist())
        sources = {n: archive.read(n) for n in names if n.endswith(".py")}
    shipped = {name.split("/")[0] for name in names if not name.startswith("ragpulse-")}
    first_party = {p.stem for p in REPO.iterdir() if (p / "__init__.py").exists() or p.suffix == ".py"}
    imported: dict[str, str] = {}
    for name, source in sources.items():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                imported.update({alias.name.split(".")[0]: name for alias in node.names})
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported[node.module.split(".")[0]] = name
    missing = {module: by for module, by in imported.items() if module in first_party - shipped}
    assert not missing, f"imported but not in the wheel: {missing}"
    for package in shipped & first_party:
        files = [
            p.relative_to(installed.context).as_posix()
            for p in (installed.context / package).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts
        ]
        assert files and set(files) <= names, sorted(set(files) - names)
    assert not shipped & {"tests", "testkit", "test-artifacts"}, shipped
    assert "ragpulse-0.1.0.dist-info/licenses/LICENSE" in names


def test_check_config_runs_from_the_installed_wheel(installed: Installed) -> None:
    script = "import collector, ragpulse_sdk; print(collector.__file__)"
    where = subprocess.run(
        [str(installed.bin / "python"), "-c", script],
        cwd=installed.workdir,
        env=installed.env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(installed.bin.parent), where.stdout
    result = subprocess.run(
        ["ragpulse", "check-config"],
        cwd=installed.workdir,
        env=installed.env(),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stdout + result.stderr


def _send_one_trace(exporter: SpanExporter) -> None:
    """One grounded RAG answer, as an app instrumented with the OpenTelemetry SDK sends it."""
    provider = TracerProvider(resource=Resource.create({"service.name": "image-check"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with provider.get_tracer("image").start_as_current_span("answer") as span:
        span.set_attributes(topic_attributes(TOPICS[0], grounded=True))
    provider.shutdown()


def _wait_until_scored(metrics_port: int, traces: int) -> float:
    """The mean faithfulness once `traces` are scored (after their quiet period; the test's timeout bounds
    the wait)."""
    while scrape(metrics_port).value("ragpulse_evaluation_score_count", metric="faithfulness") < traces:
        time.sleep(0.2)
    return scrape(metrics_port).mean_score("faithfulness")


def test_run_from_the_installed_wheel_scores_a_trace(installed: Installed) -> None:
    otlp, metrics = free_port(), free_port()
    log = installed.workdir / f"run-{otlp}.log"
    ports = ["--otlp-port", str(otlp), "--otlp-grpc-port", "0", "--metrics-port", str(metrics)]
    with log.open("wb") as out:
        process = subprocess.Popen(
            ["ragpulse", "run", *ports, "--quiet-period", "0.5", "--quiet"],
            cwd=installed.workdir,
            env=installed.env(),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        while http_status(f"http://127.0.0.1:{metrics}/readyz") != 200:
            assert process.poll() is None, log.read_text(errors="replace")[-4000:]
            time.sleep(0.2)
        _send_one_trace(OTLPSpanExporter(endpoint=f"http://127.0.0.1:{otlp}/v1/traces"))
        assert _wait_until_scored(metrics, 1) > 0.5
    finally:
        process.terminate()
        code = process.wait(60)
    assert code == 0, log.read_text(errors="replace")[-4000:]


# --- the image itself, where a container engine runs --------------------------------------------------------

# This machine's limits: the process lacks CAP_SYS_RESOURCE, so podman's default rlimits (nofile 1048576)
# cannot be set, and crun refuses its hybrid cgroups; runc with rlimits below the hard limits runs.
PODMAN_RUN = ["--runtime", "runc", "--ulimit", "nofile=1024:4096", "--ulimit", "nproc=1024:4096"]
STAND_IN_BASE = "localhost/ragpulse-test-base:bookworm"


def _base_image(podman: str, installed: Installed, tmp: Path) -> tuple[str, str]:
    """(base image, build network). python:3.11-slim where a registry serves it. Where none is reachable,
    a stand-in: Debian bookworm's own Python 3.11 (debootstrap, kept between sessions) with a wheelhouse
    of the build backend and every dependency, so the unchanged Dockerfile builds with no network."""
    pulled = subprocess.run([podman, "pull", "-q", "docker.io/library/python:3.11-slim"], capture_output=True)
    if pulled.returncode == 0:
        return "docker.io/library/python:3.11-slim", "host"
    if subprocess.run([podman, "image", "exists", STAND_IN_BASE]).returncode != 0:
        if os.geteuid() != 0:
            pytest.skip(
                f"python:3.11-slim cannot be pulled ({pulled.stderr.decode()[-200:]}), no root for a base"
            )
        debootstrap = require_binary("debootstrap", "apt-get install debootstrap")
        packages = "python3,python3-venv,python3-pip"
        _check([debootstrap, "--variant=minbase", f"--include={packages}", "bookworm", str(tmp / "root")])
        tar = subprocess.Popen(["tar", "-C", str(tmp / "root"), "-c", "."], stdout=subprocess.PIPE)
        imported = subprocess.run(
            [podman, "import", "-", STAND_IN_BASE], stdin=tar.stdout, capture_output=True
        )
        assert tar.wait() == 0 and imported.returncode == 0, imported.stderr
        shutil.rmtree(tmp / "root")
    backend = tomllib.loads((REPO / "pyproject.toml").read_text())["build-system"]["requires"]
    wheelhouse = tmp / "offline" / "wheelhouse"
    _check(
        [sys.executable, "-m", "pip", "download", "-q", "-d", str(wheelhouse), *backend, str(installed.wheel)]
    )
    (wheelhouse / installed.wheel.name).unlink()
    (tmp / "offline" / "Containerfile").write_text(
        f"FROM {STAND_IN_BASE}\nCOPY wheelhouse /wheelhouse\nENV PIP_NO_INDEX=1 PIP_FIND_LINKS=/wheelhouse\n"
    )
    _check([podman, "build", "-q", *PODMAN_RUN, "-t", f"{STAND_IN_BASE}-offline", str(tmp / "offline")])
    return f"{STAND_IN_BASE}-offline", "none"


def test_the_image_builds_starts_and_scores_a_trace(installed: Installed, tmp_path: Path) -> None:
    podman = require_binary("podman", "apt-get install podman runc (scripts/setup.sh)")
    base, network = _base_image(podman, installed, tmp_path)
    image = "localhost/ragpulse:test"
    # --layers=false: no intermediate image is kept; the image itself is removed at the end.
    build = [podman, "build", "--format", "docker", "--layers=false", *PODMAN_RUN, "--network", network]
    _check([*build, "--build-arg", f"PYTHON_IMAGE={base}", "-f", str(DOCKERFILE), "-t", image, str(REPO)])
    config = json.loads(_check([podman, "image", "inspect", image]))[0]["Config"]
    exposed = {"4317/tcp", "4318/tcp", "9464/tcp"}
    assert config["User"] == "10001:10001" and set(config["ExposedPorts"]) == exposed
    _check([podman, "run", "--rm", *PODMAN_RUN, image, "check-config"], timeout=120)

    http, grpc, metrics = free_port(), free_port(), free_port()
    published = [f"127.0.0.1:{http}:4318", f"127.0.0.1:{grpc}:4317", f"127.0.0.1:{metrics}:9464"]
    run = [podman, "run", "-d", *PODMAN_RUN, *(a for p in published for a in ("-p", p)), image]
    container = _check([*run, "run", "--quiet-period", "0.5", "--quiet"], timeout=120).strip()
    try:
        while http_status(f"http://127.0.0.1:{metrics}/readyz") != 200:
            state = _check([podman, "inspect", "-f", "{{.State.Running}}", container])
            assert state.strip() == "true", _check([podman, "logs", container])
            time.sleep(0.5)
        # Both receivers answer through the published ports: they bind 0.0.0.0 inside the container.
        _send_one_trace(OTLPSpanExporter(endpoint=f"http://127.0.0.1:{http}/v1/traces"))
        _send_one_trace(GrpcSpanExporter(endpoint=f"127.0.0.1:{grpc}", insecure=True))
        assert _wait_until_scored(metrics, 2) > 0.5
        _check([podman, "healthcheck", "run", container])
        _check([podman, "stop", "-t", "60", container], timeout=120)
        assert _check([podman, "inspect", "-f", "{{.State.ExitCode}}", container]).strip() == "0"
    finally:
        subprocess.run([podman, "rm", "-f", container], capture_output=True)
        subprocess.run([podman, "rmi", image], capture_output=True)
