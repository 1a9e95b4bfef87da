"""The local runtime's own HTTP server (llama.cpp's, in agentcli's process) is agentcli's
alone: no TCP port open, a Unix socket in a directory only its user may enter, a key no
other process is given, and no origin a browser page could read it from.

agentcli's Engine is loaded in a process of its own (as a run loads it); another process
then tries it as an attacker on the same machine would. Skipped, with the reason, when
the runtime or the model is not installed."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from tests.test_local_server import _missing

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(_missing() is not None, reason=str(_missing())),
]

# The engine of a run, loaded; it says where it listens, and what it can do, then waits.
HOLDER = r"""
import json, sys
from agentcli.providers.local.engine import Engine
from agentcli.providers.local.models import resolve_model_file, default_model
engine = Engine(resolve_model_file(default_model())[0], n_ctx=512, n_threads=1)
print(json.dumps({
    "address": engine.server.listening_address,
    "tokens": engine.tokenize("hello"),  # agentcli itself still reaches it
}), flush=True)
sys.stdin.read()  # until the test closes stdin
"""


@pytest.fixture(scope="module")
def holder() -> Iterator[dict[str, Any]]:
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        said = json.loads(process.stdout.readline())
        yield {"pid": process.pid, **said}
    finally:
        process.stdin.close()
        process.wait(timeout=60)


def test_agentcli_still_reaches_its_own_server(holder: dict[str, Any]) -> None:
    assert holder["tokens"], holder


def test_no_tcp_port_is_open(holder: dict[str, Any]) -> None:
    listening = [
        c.laddr
        for c in psutil.Process(holder["pid"]).net_connections(kind="inet")
        if c.status == psutil.CONN_LISTEN
    ]
    assert listening == [], f"the model server listens on {listening}"


def _socket_path(holder: dict[str, Any]) -> str:
    address = holder["address"]
    assert address.startswith("unix://"), address
    return address.removeprefix("unix://")


def test_the_socket_is_in_a_directory_of_its_own(holder: dict[str, Any]) -> None:
    directory = Path(_socket_path(holder)).parent
    info = directory.stat()
    assert stat.S_IMODE(info.st_mode) == 0o700 and info.st_uid == os.getuid()


def test_another_process_gets_no_completion_and_no_cors(holder: dict[str, Any]) -> None:
    """Even root, who can enter any directory, is refused: it does not have the key."""
    client = httpx.Client(
        transport=httpx.HTTPTransport(uds=_socket_path(holder)), base_url="http://localhost"
    )
    origin = {"Origin": "http://evil.example"}
    with client:
        for path, body in (
            ("/completion", {"prompt": "hi", "n_predict": 1}),
            ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}]}),
            ("/tokenize", {"content": "hi"}),
            ("/slots/0?action=save", {"filename": "stolen.bin"}),
        ):
            answer = client.post(path, json=body, headers=origin)
            assert answer.status_code == 401, (path, answer.status_code, answer.text[:200])
        guessed = client.post(
            "/completion",
            json={"prompt": "hi", "n_predict": 1},
            headers={**origin, "Authorization": "Bearer guessed"},
        )
        assert guessed.status_code == 401
        for answer in (
            client.options(
                "/completion", headers={**origin, "Access-Control-Request-Method": "POST"}
            ),
            client.post("/completion", json={}, headers=origin),
        ):
            allowed = answer.headers.get("access-control-allow-origin")
            assert allowed not in ("*", "http://evil.example"), answer.headers
            assert answer.headers.get("access-control-allow-credentials") != "true"


def test_the_key_is_in_no_argv_or_environment(holder: dict[str, Any]) -> None:
    """What a process could read of another's: its command line and environment."""
    process = psutil.Process(holder["pid"])
    seen = " ".join(process.cmdline()) + json.dumps(process.environ())
    assert "Bearer" not in seen and "api_key" not in seen.lower()
