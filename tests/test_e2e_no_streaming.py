"""Servers that cannot stream a step (llama-cpp-python's server with tools, proxies that
refuse `stream: true`): agentcli asks that step again without streaming, turns the whole
answer into the same events, and keeps asking that model without streaming. A stream that
broke after the answer began stays an error: nothing is sent twice."""

from __future__ import annotations

import json

import pytest

from tests.conftest import README_LINES, RunCli, assert_one_error, error_lines, numbered
from tests.scripted_server import Chunk, Reply, ScriptedServer

NOTICE = "without streaming"


def notices(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if NOTICE in line]


def streamed(server: ScriptedServer) -> list[bool]:
    """Whether each chat request asked for a stream."""
    return [request.json["stream"] for request in server.requests]


@pytest.mark.parametrize("ending", ["clean", "abort"])
def test_a_stream_that_ends_after_the_role_chunk_is_asked_again_without_streaming(
    run_cli: RunCli, server: ScriptedServer, ending: str
) -> None:
    server.enqueue(Reply.role_only(ending=ending), Reply.completion("Hello there, my friend!"))
    result = run_cli(["run", "Say hello in five words."], server=server)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Hello there, my friend!\n"
    assert error_lines(result.stderr) == []
    [notice] = notices(result.stderr)
    assert notice.startswith("agentcli: warning: openai: the stream")
    assert streamed(server) == [True, False]
    first, second = (request.json for request in server.requests)
    assert "stream_options" in first and "stream_options" not in second
    assert second["messages"] == first["messages"]
    assert second["tools"] == first["tools"] and second["tool_choice"] == "auto"
    assert server.requests[1].headers["accept"] == "application/json"


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (400, "Streaming is not supported when tools are given"),
        (500, "Automatic streaming tool choice is not supported"),
    ],
)
def test_an_error_that_names_streaming_is_asked_again_without_streaming(
    run_cli: RunCli, server: ScriptedServer, status: int, message: str
) -> None:
    server.enqueue(Reply.error(status, message), Reply.completion("Fine."))
    result = run_cli(["run", "hi"], server=server)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Fine.\n"
    [notice] = notices(result.stderr)
    assert message in notice and f"HTTP {status}" in notice
    assert streamed(server) == [True, False]  # a 500 naming streaming is not retried as is


def test_an_error_inside_the_stream_that_names_streaming(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    error = {"message": "Automatic streaming tool choice is not supported", "type": "server_error"}
    server.enqueue(Reply.stream_error([], error), Reply.completion("Fine."))
    result = run_cli(["run", "hi"], server=server)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Fine.\n"
    assert streamed(server) == [True, False]


def test_the_whole_answer_becomes_the_same_events_and_the_choice_sticks(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    call = {"name": "read_file", "arguments": {"path": "README.md"}, "id": "call_r"}
    server.enqueue(
        Reply.role_only(),
        Reply.completion("Reading it.", tool_calls=[call], usage=(12, 7)),
        Reply.completion("It is a demo project.", usage=(30, 4)),
    )
    result = run_cli(["run", "--output", "jsonl", "what is in README.md?"], server=server)

    assert result.returncode == 0, result.stderr
    assert streamed(server) == [True, False, False]  # the second step asks without streaming
    assert len(notices(result.stderr)) == 1
    events = [json.loads(line) for line in result.stdout.splitlines()]
    kinds = [event["type"] for event in events]
    warnings = [e for e in events if e["type"] == "CUSTOM" and e["name"] == "warning"]
    assert [w["value"]["code"] for w in warnings] == ["no_streaming"]
    assert kinds.index("CUSTOM") < kinds.index("TEXT_MESSAGE_START")
    start = next(e for e in events if e["type"] == "TOOL_CALL_START")
    assert (start["toolCallId"], start["toolCallName"]) == ("call_r", "read_file")
    args = "".join(e["delta"] for e in events if e["type"] == "TOOL_CALL_ARGS")
    assert json.loads(args) == {"path": "README.md"}
    assert kinds.count("TOOL_CALL_END") == 1
    texts = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert texts == "Reading it.It is a demo project."
    usage = [e["value"] for e in events if e["type"] == "CUSTOM" and e["name"] == "usage"]
    assert [(u["inputTokens"], u["outputTokens"]) for u in usage] == [(12, 7), (30, 4)]
    # The tool ran, and its result went back in the third request.
    tool_message = server.requests[2].json["messages"][-1]
    assert tool_message["role"] == "tool" and tool_message["tool_call_id"] == "call_r"
    assert numbered(README_LINES) in tool_message["content"]


def test_the_finish_reason_of_the_whole_answer_counts(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    server.enqueue(Reply.role_only(), Reply.completion("Cut short", finish_reason="length"))
    result = run_cli(["run", "--output", "json", "hi"], server=server)

    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["text"] == "Cut short"
    assert (doc["usage"]["inputTokens"], doc["usage"]["outputTokens"]) == (10, 5)
    assert "output token limit" in result.stderr


def test_when_asking_without_streaming_fails_too_it_is_one_error(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    server.enqueue(Reply.role_only(), Reply.error(400, "the prompt is too long"))
    result = run_cli(["run", "hi"], server=server)

    assert result.returncode == 1
    line = assert_one_error(result, "the prompt is too long", NOTICE)
    assert "the stream ended before the answer began" in line
    assert result.stdout == ""
    assert notices(result.stderr) == [line]  # no warning: nothing switched
    assert streamed(server) == [True, False]


def test_a_stream_broken_after_a_tool_call_began_stays_an_error(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    head = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "read_file", "arguments": ""},
    }
    server.enqueue(
        Reply(
            kind="stream",
            steps=(Chunk({"role": "assistant", "tool_calls": [head]}),),
            ending="abort",
        ),
        Reply.completion("asked twice"),
    )
    result = run_cli(["run", "hi"], server=server)

    assert result.returncode == 1
    assert_one_error(result, "stream")
    assert notices(result.stderr) == []
    assert streamed(server) == [True]


def test_an_error_that_does_not_name_streaming_is_not_asked_again(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    server.enqueue(Reply.error(400, "unknown model"), Reply.completion("asked twice"))
    result = run_cli(["run", "hi"], server=server)

    assert result.returncode == 1
    assert_one_error(result, "unknown model")
    assert streamed(server) == [True]


def test_a_call_without_text_goes_back_with_empty_content(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    # llama-cpp-python's server refuses `"content": null` in the history (HTTP 500).
    call = {"name": "read_file", "arguments": {"path": "README.md"}, "id": "call_q"}
    server.enqueue(Reply.tool_calls([call]), Reply.text(["Done."]))
    result = run_cli(["run", "read README.md"], server=server)

    assert result.returncode == 0, result.stderr
    assistant = server.requests[1].json["messages"][-2]
    assert assistant["role"] == "assistant" and assistant["tool_calls"]
    assert assistant["content"] == ""
