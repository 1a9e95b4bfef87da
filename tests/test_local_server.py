"""agentcli against an OpenAI-compatible server someone else wrote: llama.cpp's own
(`llama-server`'s code, which xllamacpp ships prebuilt and starts in a process of its
own here), serving the embedded SmolLM2 GGUF on loopback.

It streams text and, when the request has tools, either text or tool calls whose
arguments its grammar keeps to the tool's schema (a 135M model chooses which). Servers
that cannot stream a step at all (llama-cpp-python's, some proxies) are the scripted
server's part: tests/test_e2e_no_streaming.py. Marked `local_model` and skipped, with the
reason, when the runtime or the model is not installed."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from jsonschema import Draft202012Validator

from agentcli.assembly import builtin_tools
from agentcli.providers.local.models import install_command, local_available, resolve_model_file
from tests.conftest import AGENTCLI, README_LINES, assert_no_traceback, build_env, error_lines

MODEL = "smollm2"  # the alias it serves the model under
NOTICE = "without streaming"

# llama.cpp's server in a process of its own, on the port given, until SIGTERM.
SERVER = r"""
import signal, sys, threading
import xllamacpp
params = xllamacpp.CommonParams()
params.model.path, alias, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
params.model_alias = {alias}
params.port = port
params.hostnames = ["127.0.0.1"]
params.n_ctx = 4096
params.cpuparams.n_threads = params.cpuparams_batch.n_threads = 2
params.verbosity = 0
params.n_predict = 64  # every answer bounded: a CPU test, not a story
stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *args: stop.set())
server = xllamacpp.Server(params)
print(server.listening_address, flush=True)
stop.wait()
"""


def _missing() -> str | None:
    """Why the real server cannot run here, or None. Checked without importing anything."""
    if importlib.util.find_spec("xllamacpp") is None:
        return f"xllamacpp is not installed: {install_command()}"
    if not local_available("smollm2"):
        return f"the SmolLM2 model is not installed: {install_command()}"
    return None


pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(_missing() is not None, reason=str(_missing())),
]


@dataclass
class LlamaServer:
    process: subprocess.Popen[bytes]
    base_url: str
    log: Path

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def llama_server(log: Path) -> Iterator[LlamaServer]:
    """Starts the server on a free loopback port, waits until it lists its model, and
    stops it (SIGTERM, then SIGKILL) at the end."""
    gguf, _ = resolve_model_file("smollm2")
    port = _free_port()
    command = [sys.executable, "-c", SERVER, str(gguf), MODEL, str(port)]
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    server = LlamaServer(process, f"http://127.0.0.1:{port}/v1", log)
    try:
        deadline = time.monotonic() + 120
        while not _answers(server):
            assert process.poll() is None, f"the server exited:\n{server.log_tail()}"
            assert time.monotonic() < deadline, f"no answer in 120 s:\n{server.log_tail()}"
            time.sleep(0.2)
        yield server
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


def _answers(server: LlamaServer) -> bool:
    try:
        return httpx.get(f"{server.base_url}/models", timeout=2, trust_env=False).is_success
    except httpx.HTTPError:
        return False


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with llama_server(log) as running:
        yield running


def run_agentcli(
    args: list[str], workspace: Path, home: Path, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(AGENTCLI), *args],
        cwd=workspace,
        env=build_env(home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert_no_traceback(result)
    return result


def test_models_lists_what_the_server_serves(
    server: LlamaServer, workspace: Path, cli_home: Path
) -> None:
    result = run_agentcli(["models", "--base-url", server.base_url], workspace, cli_home)

    assert result.returncode == 0, result.stderr
    assert f"openai:{MODEL}" in result.stdout.split()


def test_a_plain_answer_streams(server: LlamaServer, workspace: Path, cli_home: Path) -> None:
    started = time.monotonic()
    result = run_agentcli(
        [
            "run",
            "--base-url",
            server.base_url,
            "--model",
            f"openai:{MODEL}",
            "--output",
            "jsonl",
            "--max-steps",
            "1",
            "Say hello in five words.",
        ],
        workspace,
        cli_home,
    )
    elapsed = time.monotonic() - started

    assert result.returncode == 0, result.stderr + server.log_tail()
    events = [json.loads(line) for line in result.stdout.splitlines()]
    deltas = [e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert "".join(deltas).strip()
    assert len(deltas) > 1  # it streamed, token by token
    assert NOTICE not in result.stderr
    assert error_lines(result.stderr) == []
    print(f"plain answer through llama.cpp's server: {elapsed:.2f} s")


def test_with_tools_it_streams_text_or_calls_the_tools_accept(
    server: LlamaServer, workspace: Path, cli_home: Path
) -> None:
    result = run_agentcli(
        [
            "run",
            "--base-url",
            server.base_url,
            "--model",
            f"openai:{MODEL}",
            "--output",
            "jsonl",
            "--yes",
            "--max-steps",
            "1",
            "Read the file README.md.",
        ],
        workspace,
        cli_home,
        timeout=900,  # the tools make a long prompt: minutes on a busy CPU
    )

    # A call (then the step limit, 3) is as good an ending as an answer (0).
    assert result.returncode in (0, 3), result.stderr + server.log_tail()
    assert NOTICE not in result.stderr  # it streams steps with tools too
    events = [json.loads(line) for line in result.stdout.splitlines()]
    names = {e["toolCallId"]: e["toolCallName"] for e in events if e["type"] == "TOOL_CALL_START"}
    texts = [e for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert names or texts, "neither a call nor text"
    schemas = {tool.name: tool.spec()["parameters"] for tool in builtin_tools()}
    for call_id, name in names.items():  # the server's grammar keeps calls to the schema
        args = "".join(
            e["delta"]
            for e in events
            if e["type"] == "TOOL_CALL_ARGS" and e["toolCallId"] == call_id
        )
        arguments = json.loads(args or "{}")
        Draft202012Validator(schemas[name]).validate(arguments)
        if name == "read_file" and arguments.get("path") == "README.md":
            results = [
                e["content"]
                for e in events
                if e.get("toolCallId") == call_id and e["type"] == "TOOL_CALL_RESULT"
            ]
            assert README_LINES[0] in results[0]


def test_the_server_killed_mid_answer(tmp_path: Path, workspace: Path, cli_home: Path) -> None:
    with llama_server(tmp_path / "server.log") as doomed:
        process = subprocess.Popen(
            [
                str(AGENTCLI),
                "run",
                "--base-url",
                doomed.base_url,
                "--model",
                f"openai:{MODEL}",
                "Write a long story about a dragon who learns to cook, in twenty paragraphs.",
            ],
            cwd=workspace,
            env=build_env(cli_home),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert process.stdout is not None
            first = process.stdout.read(1)  # the answer has begun
            assert first, process.stderr.read() if process.stderr else ""
            doomed.process.send_signal(signal.SIGKILL)
            rest, stderr = process.communicate(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()

    assert process.returncode == 1, stderr
    assert "Traceback" not in stderr
    [line] = error_lines(stderr)
    assert "in the middle of the answer" in line
    assert (first + rest).strip()  # the text that arrived is kept
    assert NOTICE not in stderr  # not asked again
