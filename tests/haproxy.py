"""A real deployment for the tests (issue 43): HAProxy in front of N `agentcli serve`
replicas that share their threads through one store. HAProxy runs in the foreground as a
child process (no daemon) on a free loopback port, round-robin and NOT sticky; each answer
names the replica that served it in an `X-Replica` header, so a test can show runs hopping."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import httpx
import pytest

from tests.agui_helpers import TOKEN, free_port, wait_ready

HAPROXY = "/usr/sbin/haproxy"
REPLICA_HEADER = "x-replica"

# SSE needs long server/tunnel timeouts (a run streams for as long as the model talks) and
# no buffering (HAProxy forwards HTTP bodies as they come unless told to buffer). A failed
# connect is retried on another replica (`option redispatch`): a killed replica costs the
# next request nothing once its health check (every 300 ms, 2 failures) marks it down.
# The check says HTTP/1.1 with a Host: on loopback, agentcli serve checks the Host header.
CONFIG = """\
global
    maxconn 4096

defaults
    mode http
    timeout connect 2s
    timeout client 1h
    timeout server 1h
    timeout tunnel 1h
    timeout http-request 30s
    retries 3
    option redispatch 1
    no option http-buffer-request

frontend agui
    bind 127.0.0.1:{port}
    default_backend replicas

backend replicas
    balance roundrobin
    option httpchk
    http-check send meth GET uri /health ver HTTP/1.1 hdr Host 127.0.0.1
    http-check expect status 200
    default-server inter 300ms fall 2 rise 1
    http-response set-header X-Replica %[srv_name]
{servers}
"""


def haproxy_binary() -> str:
    found = shutil.which("haproxy") or (HAPROXY if Path(HAPROXY).exists() else None)
    if found is None:
        pytest.skip("HAProxy is not installed (apt-get install haproxy)")
    return found


def haproxy_config(port: int, backends: Sequence[int]) -> str:
    servers = "\n".join(
        f"    server r{i} 127.0.0.1:{backend} check" for i, backend in enumerate(backends)
    )
    return CONFIG.format(port=port, servers=servers)


def _accepts(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", port)) == 0


class HAProxy:
    """One foreground HAProxy over the given backend ports; `url` is its front door."""

    def __init__(self, directory: Path, backends: Sequence[int]) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.config = directory / "haproxy.cfg"
        self.config.write_text(haproxy_config(self.port, backends))
        binary = haproxy_binary()
        check = subprocess.run(
            [binary, "-c", "-q", "-f", str(self.config)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert check.returncode == 0, check.stderr  # our config must be valid as written
        # -db: stay in the foreground, never daemonize; stopped with the test.
        self.process = subprocess.Popen(
            [binary, "-db", "-f", str(self.config)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._wait_listening()

    def _wait_listening(self, deadline: float = 20) -> None:
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            if self.process.poll() is not None:
                raise AssertionError(f"haproxy exited: {self.process.stderr.read()}")  # type: ignore[union-attr]
            if _accepts(self.port):
                return
            time.sleep(0.05)
        raise AssertionError("haproxy did not listen")

    def wait_backends_up(self, count: int, deadline: float = 30) -> None:
        """Until `count` distinct replicas have answered /health through HAProxy."""
        seen: set[str] = set()
        end = time.monotonic() + deadline
        while time.monotonic() < end and len(seen) < count:
            try:
                answer = httpx.get(self.url + "health", timeout=2)
                if answer.status_code == 200 and REPLICA_HEADER in answer.headers:
                    seen.add(answer.headers[REPLICA_HEADER])
            except httpx.HTTPError:
                pass
            if len(seen) < count:
                time.sleep(0.05)
        assert len(seen) >= count, f"only {sorted(seen)} answered through haproxy"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        if self.process.stderr is not None:
            self.process.stderr.close()


@pytest.fixture
def haproxy(tmp_path: Path) -> Iterator[Callable[[Sequence[int]], HAProxy]]:
    """haproxy(backend_ports) -> a running HAProxy in front of them; stopped at teardown."""
    started: list[HAProxy] = []

    def start(backends: Sequence[int]) -> HAProxy:
        directory = tmp_path / f"haproxy{len(started)}"
        directory.mkdir()
        started.append(HAProxy(directory, backends))
        return started[-1]

    yield start
    for proxy in started:
        proxy.stop()


class Replica:
    """One `agentcli serve` process: its port, URL and process (for kill -9)."""

    def __init__(self, name: str, port: int, process: subprocess.Popen[str]) -> None:
        self.name, self.port, self.process = name, port, process
        self.url = f"http://127.0.0.1:{port}/"


def start_replicas(
    start_cli: Callable[..., subprocess.Popen[str]],
    server: object,
    count: int,
    store: str,
    *,
    env: dict[str, str] | None = None,
    flags: Sequence[str] = (),
    homes: Path | None = None,
    config: str = "",
) -> list[Replica]:
    """`count` installed `agentcli serve --store STORE` processes on free ports, each ready
    (its /health polled, with a deadline). start_cli kills them at teardown. The password,
    if any, is in env (PGPASSWORD), never in argv. With `homes`, each replica has a home
    of its own under it (no sessions directory shared: only the store is), its
    configuration file holding `config`."""
    replicas = []
    for index in range(count):
        port = free_port()
        args = ["serve", "--port", str(port), "--token-env", "AGUI_TOKEN", "--store", store]
        own: dict[str, str] = {}
        if homes is not None:
            home = homes / f"r{index}"
            (home / "agentcli").mkdir(parents=True)
            (home / "agentcli" / "config.toml").write_text(config)
            own = {"HOME": str(home), "AGENTCLI_HOME": str(home / "agentcli")}
        process = start_cli(
            [*args, *flags], server=server, env={"AGUI_TOKEN": TOKEN, **own, **(env or {})}
        )
        replicas.append(Replica(f"r{index}", port, process))
    for replica in replicas:  # started together, waited for together: startup overlaps
        wait_ready(replica.process, replica.url, deadline=60)
    return replicas
