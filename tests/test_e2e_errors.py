"""End-to-end: how `agentcli run` fails — retries, HTTP errors, broken streams, limits,
signals and usage errors — always one `agentcli: error:` line and a documented exit code."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import (
    RunCli,
    StartCli,
    assert_one_error,
    error_lines,
)
from tests.scripted_server import Reply, ScriptedServer

FAST_RETRY = {"retry-after-ms": "20"}


# --- retries ---


@pytest.mark.parametrize("status", [408, 409, 429, 502])
def test_retryable_status_then_success(
    run_cli: RunCli, server: ScriptedServer, status: int
) -> None:
    server.enqueue(Reply.error(status, headers=FAST_RETRY), Reply.text(["recovered"]))
    result = run_cli(["run", "hi"], server=server)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "recovered\n"
    assert error_lines(result.stderr) == []
    assert "retry" in result.stderr.lower()
    assert len(server.requests) == 2
    assert server.requests[1].json == server.requests[0].json  # the same request again


def test_retry_after_seconds_is_honoured(run_cli: RunCli, server: ScriptedServer) -> None:
    server.enqueue(Reply.error(429, headers={"Retry-After": "1"}), Reply.text(["later"]))
    result = run_cli(["run", "hi"], server=server)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "later\n"
    assert len(server.requests) == 2
    waited = server.requests[1].time - server.requests[0].time
    assert 1.0 <= waited < 5.0, waited


def test_retry_after_ms_is_honoured(run_cli: RunCli, server: ScriptedServer) -> None:
    # A hint far below our own backoff (0.5 s and up) must be used as given.
    server.enqueue(
        Reply.error(503, headers={"retry-after-ms": "50"}),
        Reply.error(503, headers={"retry-after-ms": "50"}),
        Reply.text(["ok"]),
    )
    result = run_cli(["run", "hi"], server=server)

    assert result.returncode == 0, result.stderr
    assert len(server.requests) == 3
    assert server.requests[2].time - server.requests[0].time < 0.9


def test_connection_dropped_before_the_first_byte_is_retried(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    # 200 headers, then the connection drops before any event: nothing reached the user.
    server.enqueue(Reply.hang(0), Reply.text(["second try"]))
    result = run_cli(["run", "hi"], server=server)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "second try\n"
    assert error_lines(result.stderr) == []
    assert "retry" in result.stderr.lower()
    assert len(server.requests) == 2


@pytest.mark.parametrize("status", [500, 503])
def test_server_error_every_time_gives_up_after_three_retries(
    run_cli: RunCli, server: ScriptedServer, status: int
) -> None:
    server.enqueue(*(Reply.error(status, "overloaded", headers=FAST_RETRY) for _ in range(4)))
    server.enqueue(Reply.text(["a fifth attempt would succeed"]))
    result = run_cli(["run", "hi"], server=server)

    assert result.returncode == 1
    assert_one_error(result, str(status))
    assert result.stdout == ""
    assert len(server.requests) == 4
    assert server.pending == 1


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_other_4xx_are_not_retried(run_cli: RunCli, server: ScriptedServer, status: int) -> None:
    server.enqueue(
        Reply.error(status, f"scripted refusal {status}", headers=FAST_RETRY),
        Reply.text(["a retry would succeed"]),
    )
    result = run_cli(["run", "-m", "openai:missing-model", "hi"], server=server)

    assert result.returncode == 1
    line = assert_one_error(result, str(status))
    assert result.stdout == ""
    assert len(server.requests) == 1
    assert server.pending == 1
    if status in (401, 403):
        assert "OPENAI_API_KEY" in line
    if status == 404:
        assert "missing-model" in line


def test_401_with_a_key_says_it_was_refused(run_cli: RunCli, server: ScriptedServer) -> None:
    server.enqueue(Reply.error(401, "Incorrect API key provided"))
    result = run_cli(["run", "hi"], server=server, env={"OPENAI_API_KEY": "sk-wrong"})

    assert result.returncode == 1
    line = assert_one_error(result, "OPENAI_API_KEY", "Incorrect API key provided")
    assert "sk-wrong" not in line
    assert server.requests[0].headers.get("authorization") == "Bearer sk-wrong"


def _closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_connection_refused(run_cli: RunCli) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    started = time.monotonic()
    result = run_cli(["run", "hi"], env={"OPENAI_BASE_URL": url})
    elapsed = time.monotonic() - started

    assert result.returncode == 1
    line = assert_one_error(result, f"cannot connect to {url}: connection refused (4 attempts)")
    assert "OPENAI_BASE_URL" in line  # what to check, said once
    assert "retry" in result.stderr.lower()  # a refused connection is retried
    assert result.stderr.count("connection refused") == 2  # the first retry and the error
    assert all(len(line) <= 145 for line in result.stderr.splitlines()), result.stderr
    assert result.stdout == ""
    assert elapsed < 15


@pytest.mark.parametrize(
    ("args", "env", "needle"),
    [
        (["--base-url", "127.0.0.1:9", "hi"], {}, "--base-url needs a scheme: http://127.0.0.1:9"),
        (
            ["run", "hi"],
            {"OPENAI_BASE_URL": "localhost:11434/v1"},
            "OPENAI_BASE_URL needs a scheme: http://localhost:11434/v1",
        ),
        (
            ["models", "--base-url", "127.0.0.1:9"],
            {},
            "--base-url needs a scheme: http://127.0.0.1:9",
        ),
        (
            ["run", "--base-url", "ftp://127.0.0.1/v1", "hi"],
            {},
            "--base-url must start with http:// or https://",
        ),
    ],
    ids=["flag", "env", "models-flag", "other-scheme"],
)
def test_a_base_url_without_a_scheme_is_a_usage_error(
    run_cli: RunCli, args: list[str], env: dict[str, str], needle: str
) -> None:
    result = run_cli(args, env=env)

    assert result.returncode == 2
    assert_one_error(result, needle)
    assert "internal error" not in result.stderr


def test_a_configured_base_url_without_a_scheme_names_the_file(
    run_cli: RunCli, cli_home: Path
) -> None:
    config = cli_home / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[providers.openai]\nbase_url = "127.0.0.1:9/v1"\n', encoding="utf-8")

    result = run_cli(["run", "hi"])

    assert result.returncode == 2
    assert_one_error(
        result, "providers.openai.base_url needs a scheme: http://127.0.0.1:9/v1", str(config)
    )


# --- broken streams ---


@pytest.mark.parametrize("partial", [None, 'data: {"id": "chatcmpl-x", "cho'])
def test_stream_cut_keeps_the_partial_text(
    run_cli: RunCli, server: ScriptedServer, partial: str | None
) -> None:
    server.enqueue(
        Reply.cut(["Partial ", "answer"], partial=partial),
        Reply.text(["a retry would print this"]),
    )
    result = run_cli(["run", "hi"], server=server)

    assert result.returncode == 1
    assert result.stdout.startswith("Partial answer")
    assert "a retry" not in result.stdout
    assert_one_error(result)
    assert len(server.requests) == 1


def test_stream_ends_without_finish_or_done(run_cli: RunCli, server: ScriptedServer) -> None:
    # A clean end of body that never said the answer was complete is a cut too.
    server.enqueue(Reply.text(["Half an ", "answer"], finish_reason=None, done=False))
    result = run_cli(["run", "hi"], server=server)

    assert result.returncode == 1
    assert result.stdout.startswith("Half an answer")
    assert_one_error(result)


def _piece(text: str) -> str:
    return json.dumps({"choices": [{"index": 0, "delta": {"content": text}}]})


_SERVER_ERROR = json.dumps({"error": {"message": "the model exploded", "type": "server_error"}})
ERRORS_AFTER_TEXT = {
    # an error event after two pieces, each event its own chunk
    "own-chunks": Reply.stream_error(
        ["Some ", "text"], {"message": "the model exploded", "type": "invalid_request_error"}
    ),
    # the same in one chunk, read at once: the events of one read are handled together,
    # and those before a (retryable) error still reach the user first, so the answer has
    # begun and the error is not retried over it
    "one-read": Reply.raw(
        [f"data: {_piece('Some ')}\n\ndata: {_piece('text')}\n\ndata: {_SERVER_ERROR}\n"]
    ),
}


@pytest.mark.parametrize("reply", list(ERRORS_AFTER_TEXT))
def test_error_event_inside_the_stream(run_cli: RunCli, server: ScriptedServer, reply: str) -> None:
    server.enqueue(ERRORS_AFTER_TEXT[reply], Reply.text(["a retry would print this"]))
    result = run_cli(["run", "hi"], server=server)

    assert result.returncode == 1
    assert_one_error(result, "the model exploded")
    assert result.stdout.startswith("Some text")
    assert "a retry" not in result.stdout
    assert len(server.requests) == 1


# --- limits and signals ---


def test_timeout_flag(run_cli: RunCli, server: ScriptedServer) -> None:
    server.enqueue(Reply.hang(10))
    started = time.monotonic()
    result = run_cli(["run", "--timeout", "1", "hi"], server=server)
    elapsed = time.monotonic() - started

    assert result.returncode == 3
    assert_one_error(result, "timeout")
    assert elapsed < 5, elapsed
    assert len(server.requests) == 1


def _interrupt(process: subprocess.Popen[str]) -> tuple[str, str, float]:
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    try:
        out, err = process.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        pytest.fail("agentcli did not stop within 5 s of SIGINT")
    return out, err, time.monotonic() - sent


def test_sigint_while_waiting_for_the_model(start_cli: StartCli, server: ScriptedServer) -> None:
    server.enqueue(Reply.hang(10))
    process = start_cli(["run", "hi"], server=server)
    assert server.wait_for_requests(1, timeout=10), "the request never arrived"
    out, err, elapsed = _interrupt(process)

    assert process.returncode == 130, err
    assert elapsed < 3, elapsed
    assert "Traceback" not in err
    assert out == ""


def test_sigint_mid_answer_keeps_the_text(start_cli: StartCli, server: ScriptedServer) -> None:
    server.enqueue(Reply.text(["First part. ", "never sent"], delay=5))
    process = start_cli(["run", "hi"], server=server)
    assert process.stdout is not None
    assert process.stdout.read(len("First part.")) == "First part."
    out, err, elapsed = _interrupt(process)

    assert process.returncode == 130, err
    assert elapsed < 3, elapsed
    assert "Traceback" not in err
    assert "never sent" not in out


@pytest.mark.parametrize("output", ["text", "json", "jsonl"])
def test_stdout_closed_by_the_reader(
    start_cli: StartCli, server: ScriptedServer, output: str
) -> None:
    # `agentcli run ... | head -0`: the reader is gone before the first byte is written.
    server.enqueue(Reply.text(["line one\n", "line two\n"], delay=0.2))
    process = start_cli(["run", "--output", output, "hi"], server=server)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()
    process.stdout = None  # so communicate() only reads stderr
    try:
        _, err = process.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        pytest.fail("agentcli hung after its stdout was closed")

    assert "Traceback" not in err, err
    # A documented code (not Python's 120 for a failed flush at exit), or a quiet death by
    # SIGPIPE, the Unix convention for a writer whose reader went away.
    assert process.returncode in (0, 1, -signal.SIGPIPE), (process.returncode, err)
    assert len(error_lines(err)) <= 1, err
    # nothing but agentcli's own one-line messages
    assert all(line.startswith("agentcli:") for line in err.splitlines() if line.strip()), err


@pytest.mark.parametrize(
    "line",
    ["data: not json", 'data: {"choices": 5}', 'data: {"choices": [{"index": 0, "delta": "x"}]}'],
    ids=["not-json", "choices-not-a-list", "delta-not-an-object"],
)
def test_malformed_stream_event(run_cli: RunCli, server: ScriptedServer, line: str) -> None:
    server.enqueue(Reply.raw([line, ""]), Reply.text(["a retry would print this"]))
    result = run_cli(["run", "hi"], server=server)

    assert result.returncode == 1
    assert_one_error(result)
    assert result.stdout == ""


# --- usage errors ---


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", "--bogus", "hi"], "--bogus"),
        (["run", "--yes", "--deny", "hi"], "--deny"),
        (["run", "--output", "xml", "hi"], "xml"),
        (["run", "--cwd", "/nonexistent", "hi"], "/nonexistent"),
        (["run", "--max-steps", "0", "hi"], "--max-steps"),
        (["run", "--max-steps", "many", "hi"], "--max-steps"),
        (["run", "--model", "foo:bar", "hi"], "foo"),
        (["run", "--timeout", "0", "hi"], "--timeout"),
        (["frobnicate", "now"], "'frobnicate' is not a command"),  # one word is a prompt
    ],
    ids=[
        "unknown-flag",
        "yes-and-deny",
        "output-xml",
        "cwd-missing",
        "max-steps-0",
        "max-steps-nan",
        "unknown-provider",
        "timeout-0",
        "unknown-command",
    ],
)
def test_usage_errors(
    run_cli: RunCli, server: ScriptedServer, args: list[str], needle: str
) -> None:
    result = run_cli(args, server=server)

    assert result.returncode == 2
    assert_one_error(result, needle)
    assert result.stdout == ""
    assert server.requests == []


def test_no_model_configured(run_cli: RunCli, cli_home: Path) -> None:
    # The embedded local model, when installed, would be picked: rule it out here.
    config = cli_home / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[providers.local]\nauto = false\n")
    result = run_cli(["run", "hi"])

    assert result.returncode == 2
    assert_one_error(result, "model")
    assert result.stdout == ""


# --- version and help ---


VERSION = re.compile(r"agentcli \d+\.\d+\.\d+\S*\n")


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(run_cli: RunCli, flag: str) -> None:
    result = run_cli([flag])

    assert result.returncode == 0
    assert VERSION.fullmatch(result.stdout), result.stdout
    assert result.stderr == ""


def test_python_dash_m_version(run_cli: RunCli) -> None:
    module = run_cli(["--version"], executable=[sys.executable, "-m", "agentcli"])
    script = run_cli(["--version"])

    assert module.returncode == 0, module.stderr
    assert VERSION.fullmatch(module.stdout), module.stdout
    assert module.stdout == script.stdout


@pytest.mark.parametrize("args", [["--help"], ["-h"], ["run", "--help"], ["chat", "--help"]])
def test_help(run_cli: RunCli, args: list[str]) -> None:
    result = run_cli(args)

    assert result.returncode == 0, result.stderr
    assert "Usage" in result.stdout
    assert error_lines(result.stderr) == []
    if args[0] == "run":
        for option in ("--model", "--max-steps", "--timeout", "--output", "--yes", "--deny"):
            assert option in result.stdout
