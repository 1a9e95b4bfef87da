"""agentcli against an OpenAI-compatible server someone else wrote: llama-cpp-python's own
(`python -m llama_cpp.server`, its `[server]` extra, installed with agentcli[local]),
serving the embedded SmolLM2 GGUF on loopback.

With `--chat_format chatml-function-calling` that server cannot stream a tool call: it sends
the role chunk and ends the stream ("Automatic streaming tool choice is not supported"), so
agentcli asks again without streaming. (Its answers in text come out empty: the grammar of
that format allows nothing but a call or the end after `message:`.) With `--chat_format
chatml` it ignores the tools and streams text, which is how a plain answer is tested here.
Marked `local_model` and skipped, with the reason, when the server or the model is not
installed."""

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

from agentcli.providers.local.models import INSTALL_COMMAND, local_available, resolve_model_file
from agentcli.tools.registry import builtin_tools
from tests.conftest import AGENTCLI, README_LINES, assert_no_traceback, build_env, error_lines

TOOLS_MODEL = "smollm2"  # the alias served with chatml-function-calling
CHAT_MODEL = "smollm2-chat"  # the alias served with plain chatml
SERVER_DEPENDENCIES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context",
                       "pydantic_settings")  # fmt: skip
NOTICE = "without streaming"


def _missing() -> str | None:
    """Why the real server cannot run here, or None. Checked without importing anything."""
    absent = [name for name in SERVER_DEPENDENCIES if importlib.util.find_spec(name) is None]
    if absent:
        return (
            f"llama_cpp.server is not importable (missing {', '.join(absent)}): {INSTALL_COMMAND}"
        )
    if not local_available("smollm2"):
        return f"the SmolLM2 model is not installed: {INSTALL_COMMAND}"
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
def llama_server(log: Path, alias: str, chat_format: str) -> Iterator[LlamaServer]:
    """Starts the server on a free loopback port, waits until it lists its model, and
    stops it (SIGTERM, then SIGKILL) at the end."""
    gguf, _ = resolve_model_file("smollm2")
    port = _free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", alias,
        "--chat_format", chat_format, "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", "4096", "--n_threads", "2",
    ]  # fmt: skip
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    server = LlamaServer(process, f"http://127.0.0.1:{port}/v1", log)
    try:
        deadline = time.monotonic() + 120
        while not _answers(server):
            assert process.poll() is None, f"llama_cpp.server exited:\n{server.log_tail()}"
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
def tools_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with llama_server(log, TOOLS_MODEL, "chatml-function-calling") as running:
        yield running


@pytest.fixture(scope="module")
def chat_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with llama_server(log, CHAT_MODEL, "chatml") as running:
        yield running


def run_agentcli(
    args: list[str], workspace: Path, home: Path, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(AGENTCLI), *args], cwd=workspace, env=build_env(home), stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip
    assert_no_traceback(result)
    return result


def test_models_lists_what_the_server_serves(
    tools_server: LlamaServer, workspace: Path, cli_home: Path
) -> None:
    result = run_agentcli(["models", "--base-url", tools_server.base_url], workspace, cli_home)

    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[0] == f"openai:{TOOLS_MODEL}"


def test_a_plain_answer_streams(chat_server: LlamaServer, workspace: Path, cli_home: Path) -> None:
    server = chat_server
    started = time.monotonic()
    result = run_agentcli(
        ["run", "--base-url", server.base_url, "--model", f"openai:{CHAT_MODEL}", "--output",
         "jsonl", "Say hello in five words."],
        workspace, cli_home,
    )  # fmt: skip
    elapsed = time.monotonic() - started

    assert result.returncode == 0, result.stderr + server.log_tail()
    events = [json.loads(line) for line in result.stdout.splitlines()]
    deltas = [e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert "".join(deltas).strip()
    assert len(deltas) > 1  # it streamed, token by token
    assert NOTICE not in result.stderr
    assert error_lines(result.stderr) == []
    print(f"plain answer through llama_cpp.server: {elapsed:.2f} s")


def test_a_tool_call_is_asked_again_without_streaming(
    tools_server: LlamaServer, workspace: Path, cli_home: Path
) -> None:
    server = tools_server
    result = run_agentcli(
        ["run", "--base-url", server.base_url, "--model", f"openai:{TOOLS_MODEL}", "--output",
         "jsonl", "--yes", "--max-steps", "2", "Read the file README.md."],
        workspace, cli_home, timeout=900,  # the tools make a long prompt: minutes on a busy CPU
    )  # fmt: skip

    # The model may call a tool in every step (that chat format never shows it the
    # results): the step limit (3) is as good an ending as an answer (0).
    assert result.returncode in (0, 3), result.stderr + server.log_tail()
    events = [json.loads(line) for line in result.stdout.splitlines()]
    custom = [e["name"] for e in events if e["type"] == "CUSTOM"]
    assert "retry" not in custom  # asked again on a fresh connection, not the broken one
    assert custom.count("warning") == 1
    notices = [line for line in result.stderr.splitlines() if NOTICE in line]
    assert len(notices) == 1, result.stderr  # the second step asked without streaming at once
    assert "before the answer began" in notices[0]
    names = {e["toolCallId"]: e["toolCallName"] for e in events if e["type"] == "TOOL_CALL_START"}
    assert names, "the model made no tool call"
    schemas = {tool.name: tool.spec()["parameters"] for tool in builtin_tools()}
    for call_id, name in names.items():  # the whole answer became the same calls, valid
        args = "".join(
            e["delta"] for e in events
            if e["type"] == "TOOL_CALL_ARGS" and e["toolCallId"] == call_id
        )  # fmt: skip
        arguments = json.loads(args or "{}")
        Draft202012Validator(schemas[name]).validate(arguments)
        if name == "read_file" and arguments.get("path") == "README.md":
            results = [e["content"] for e in events if e.get("toolCallId") == call_id
                       and e["type"] == "TOOL_CALL_RESULT"]  # fmt: skip
            assert README_LINES[0] in results[0]


def test_the_server_killed_mid_answer(tmp_path: Path, workspace: Path, cli_home: Path) -> None:
    with llama_server(tmp_path / "server.log", CHAT_MODEL, "chatml") as doomed:
        process = subprocess.Popen(
            [str(AGENTCLI), "run", "--base-url", doomed.base_url, "--model", f"openai:{CHAT_MODEL}",
             "Write a long story about a dragon who learns to cook, in twenty paragraphs."],
            cwd=workspace, env=build_env(cli_home), stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
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
