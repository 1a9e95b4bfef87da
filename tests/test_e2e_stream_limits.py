"""End-to-end: bounded streams. A model that never ends a tool call's arguments, or an
answer, is read up to `limits.tool_arguments` / `limits.text_message`; then the step ends
with a clear error to the model and the user, in bounded memory, and nothing hangs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RunCli, assert_one_error, build_env
from tests.scripted_server import Reply, ScriptedServer
from tests.sse_server import Raw
from tests.test_e2e_session_faults import peak_memory_mb
from tests.test_e2e_sessions import jsonl_events, only_session, records, warning_lines
from tests.test_mcp import write_config

PIECE = "x" * 1000


def chunk(delta: dict[str, Any]) -> Raw:
    body = {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
    }
    return Raw(f"data: {json.dumps(body)}\n\n")


def endless_call() -> Iterator[Raw]:
    """A write_file call whose `content` never ends."""
    opening = '{"path": "a.txt", "content": "'
    start = {
        "index": 0,
        "id": "call_w",
        "type": "function",
        "function": {"name": "write_file", "arguments": opening},
    }
    yield chunk({"role": "assistant", "tool_calls": [start]})
    while True:
        yield chunk({"tool_calls": [{"index": 0, "function": {"arguments": PIECE}}]})


def endless_text() -> Iterator[Raw]:
    yield chunk({"role": "assistant", "content": "Once upon a time "})
    while True:
        yield chunk({"content": PIECE})


def endless(steps: Iterator[Raw]) -> Reply:
    return Reply(kind="stream", steps=steps, ending="abort")  # type: ignore[arg-type]


def test_a_tool_call_that_never_ends_is_cut_and_the_model_is_told(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    write_config(cli_home, "[limits]\ntool_arguments = 50000\n")
    server.enqueue(endless(endless_call()), Reply.text(["I will write it in parts."]))
    result = run_cli(["run", "--yes", "-o", "jsonl", "write a big file"], server=server)

    assert result.returncode == 0, result.stderr
    events = jsonl_events(result.stdout)
    arguments = "".join(e["delta"] for e in events if e["type"] == "TOOL_CALL_ARGS")
    assert len(arguments) == 50_000
    assert any(e["type"] == "TOOL_CALL_END" and e["toolCallId"] == "call_w" for e in events)
    [warning] = warning_lines(result.stderr)
    assert "limits.tool_arguments (50,000 characters)" in warning, warning
    [tool] = [m for m in server.requests[1].json["messages"] if m["role"] == "tool"]
    assert "passed limits.tool_arguments" in tool["content"] and "did not run" in tool["content"]
    assert not (workspace / "a.txt").exists()
    assert events[-1]["type"] == "RUN_FINISHED"


def test_an_answer_that_never_ends_is_cut_and_the_run_says_why(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    write_config(cli_home, "[limits]\ntext_message = 50000\n")
    server.enqueue(endless(endless_text()), Reply.text(["Sorry."]))
    result = run_cli(["run", "tell a story"], server=server)

    assert result.returncode == 1
    assert_one_error(result, "limits.text_message (50,000 characters)", "stopped reading")
    assert result.stdout.startswith("Once upon a time xxx")
    assert 50_000 <= len(result.stdout) < 51_000, len(result.stdout)
    stored = [r["m"] for r in records(only_session(cli_home)) if r.get("t") == "message"]
    assert stored[-1]["content"].endswith("the answer passed limits.text_message]")

    again = run_cli(["run", "--continue", "shorter, please"], server=server)
    assert again.returncode == 0, again.stderr
    history = server.requests[1].json["messages"]
    assert history[2]["content"].endswith("the answer passed limits.text_message]")


@pytest.mark.parametrize(("value", "needle"), [("10", "at least 1000"), ('"big"', "integer")])
def test_a_bad_limit_is_one_config_error(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, value: str, needle: str
) -> None:
    write_config(cli_home, f"[limits]\ntool_arguments = {value}\n")
    result = run_cli(["run", "hi"], server=server)
    assert result.returncode == 2
    assert_one_error(result, "limits.tool_arguments", needle)


def test_with_the_defaults_a_call_that_never_ends_stays_in_bounded_memory(
    server: ScriptedServer, workspace: Path, cli_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before the limit: 148 MB after 70 s and growing, until --timeout. Now the
    2,000,000-character default ends the step, and the run ends by itself."""
    monkeypatch.chdir(workspace)
    env = build_env(cli_home, server)
    server.enqueue(Reply.text(["ok"]))
    baseline, _ = peak_memory_mb(["run", "hi"], env)
    server.enqueue(endless(endless_call()), Reply.text(["ok"]))
    peak, out = peak_memory_mb(["run", "--yes", "write"], env)
    assert out.startswith("ok"), out
    assert peak - baseline < 40, (peak, baseline)  # a few copies of 2 MB, not a stream
