"""A model provider's wrong shapes (OpenAI-compatible and Anthropic streams, and OpenAI's
answer without streaming): every value is checked where it enters (issue 40, "validate at
the edge"). A wrong shape is one `agentcli: error:` line naming the field, exit code 1 (a
provider error), never an internal error; what streamed before it stays in the session,
nothing wrong-shaped is recorded, and `--continue` against a good reply sends the model a
valid history. Through the installed CLI against the scripted servers."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import Any

import pytest

from agentcli.agent.session import CUT_MARK
from tests.conftest import RunCli, assert_one_error, error_lines
from tests.scripted_anthropic import AReply, ScriptedAnthropic
from tests.scripted_server import Reply, ScriptedServer
from tests.sse_server import Raw
from tests.test_e2e_agent_shapes import assert_nothing_wrong_recorded
from tests.test_e2e_session_shapes import header, write_session
from tests.test_e2e_sessions import assert_valid_history, warning_lines

NAN, INF = float("nan"), float("inf")
ROLE = {"role": "assistant", "content": ""}


# --- OpenAI-compatible -------------------------------------------------------------------


def chunk(delta: Any, finish: Any = None, **extra: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}


def call(**changes: Any) -> dict[str, Any]:
    function = {"name": "read_file", "arguments": '{"path": "README.md"}'}
    function.update(changes.pop("function", {}))
    return {"index": 0, "id": "call_1", "type": "function", "function": function, **changes}


def oa_stream(*chunks: Any) -> Reply:
    """Each chunk a `data:` event as written (json.dumps writes NaN as `NaN`), or raw."""
    steps = [c if isinstance(c, Raw) else Raw(f"data: {json.dumps(c)}\n\n") for c in chunks]
    return Reply(kind="stream", steps=tuple(steps))


def completion(message: Any, **extra: Any) -> Reply:
    """A whole answer (`stream: false`), after a stream that ended before it began (the
    server could not stream): the path agentcli asks again on."""
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    return Reply(kind="json", body=json.dumps({"choices": [choice], **extra}).encode())


OPENAI = {
    "content-a-number": (
        [oa_stream(chunk(ROLE), chunk({"content": "Hello "}), chunk({"content": 42}))],
        "choices[0].delta.content as the number 42",
    ),
    "content-a-boolean": ([oa_stream(chunk({"content": True}))], "delta.content as a boolean"),
    "content-a-list": ([oa_stream(chunk({"content": ["a", "b"]}))], "delta.content as a list"),
    "content-an-object": ([oa_stream(chunk({"content": {"a": 1}}))], "delta.content as an obj"),
    "delta-a-string": ([oa_stream(chunk("hello"))], "choices[0].delta as a string"),
    "choices-a-string": ([oa_stream({"choices": "abc"})], "choices as a string"),
    "index-a-string": (
        [oa_stream({"choices": [{"index": "0", "delta": {"content": "x"}}]})],
        "choices[0].index as a string",
    ),
    "finish-reason-an-object": (
        [oa_stream(chunk({"content": "x"}), chunk({}, {"why": 1}))],
        "choices[0].finish_reason as an object",
    ),
    "name-a-number": (
        [oa_stream(chunk(ROLE), chunk({"tool_calls": [call(function={"name": 5})]}))],
        "tool_calls[0].function.name as the number 5",
    ),
    "name-an-object": (
        [oa_stream(chunk({"tool_calls": [call(function={"name": {"x": 1}})]}))],
        "tool_calls[0].function.name as an object",
    ),
    "function-a-string": (
        [oa_stream(chunk({"tool_calls": [call() | {"function": "read_file"}]}))],
        "tool_calls[0].function as a string",
    ),
    "tool-calls-an-object": ([oa_stream(chunk({"tool_calls": {"a": 1}}))], ".tool_calls as an"),
    "id-a-list": ([oa_stream(chunk({"tool_calls": [call(id=["a"])]}))], "tool_calls[0].id as"),
    "arguments-with-nan": (
        [oa_stream(chunk({"tool_calls": [call(function={"arguments": {"x": NAN}})]}))],
        "NaN is not JSON",
    ),
    "usage-infinity": (
        [oa_stream(chunk({"content": "x"}, "stop", usage={"prompt_tokens": INF}))],
        "Infinity is not JSON",
    ),
    "usage-minus-infinity": (
        [oa_stream(chunk({"content": "x"}, "stop", usage={"prompt_tokens": -INF}))],
        "-Infinity is not JSON",
    ),
    "usage-words": (
        [
            oa_stream(
                chunk({"content": "x"}, "stop"),
                {"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": "abc"}},
            )
        ],
        "usage.completion_tokens as a string",
    ),
    "usage-negative": (
        [oa_stream(chunk({"content": "x"}, "stop", usage={"prompt_tokens": -5}))],
        "usage.prompt_tokens as the number -5",
    ),
    "usage-huge": (
        [oa_stream(chunk({"content": "x"}, "stop", usage={"prompt_tokens": 2**60}))],
        "usage.prompt_tokens as the number",
    ),
    "usage-a-list": ([oa_stream(chunk({"content": "x"}, "stop", usage=[1]))], "usage as a list"),
    "event-error-with-a-message": (
        [
            oa_stream(
                chunk(ROLE),
                chunk({"content": "hello "}),
                Raw('event: error\ndata: {"message": "upstream model crashed"}\n\n'),
            )
        ],
        "error inside the stream: upstream model crashed",
    ),
    "error-null": (
        [oa_stream(chunk(ROLE), chunk({"content": "hello "}), {"error": None})],
        "ended before the answer was complete",
    ),
    "no-stream-content-a-number": (
        [Reply.role_only(), completion({"role": "assistant", "content": 42})],
        "the openai answer sent choices[0].message.content as the number 42",
    ),
    "no-stream-message-a-string": (
        [Reply.role_only(), completion("hello")],
        "choices[0].message as a string",
    ),
    "no-stream-legacy-name-a-number": (
        [Reply.role_only(), completion({"function_call": {"name": 5, "arguments": "{}"}})],
        "choices[0].message.function_call.name as the number 5",
    ),
    "no-stream-tool-call-name-null-object": (
        [Reply.role_only(), completion({"tool_calls": [call(function={"name": [1]})]})],
        "choices[0].message.tool_calls[0].function.name as a list",
    ),
    "no-stream-nan": (
        [Reply.role_only(), completion({"content": "x"}, usage={"prompt_tokens": NAN})],
        "NaN is not JSON",
    ),
    "retry-after-huge": (
        [Reply.error(429, headers={"retry-after": "1" + "0" * 300})],
        "the server asked to wait more than a day",
    ),
}


def strict_json(text: str) -> Any:
    """JSON as the spec has it: NaN and the infinities are refused."""

    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} in JSON text")

    return json.loads(text, parse_constant=refuse)


def assert_session_is_sound(cli_home: Path) -> None:
    """Every line is JSON (no NaN), every event a valid AG-UI event, every message text."""
    for path in (cli_home / "agentcli" / "sessions").glob("*.jsonl"):
        for line in path.read_text().splitlines():
            strict_json(line)
    assert_nothing_wrong_recorded(cli_home)


def assert_no_internals(stderr: str) -> None:
    assert "internal error" not in stderr, stderr
    assert "object has no attribute" not in stderr, stderr
    assert "unhashable" not in stderr, stderr


@pytest.mark.parametrize("case", sorted(OPENAI))
def test_an_openai_shape_is_one_line_naming_the_field_and_the_session_continues(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, case: str
) -> None:
    replies, needle = OPENAI[case]
    server.enqueue(*replies)
    result = run_cli(["run", "--model", "openai:m", "--deny", "hi"], server=server)
    assert result.returncode == 1, result.stderr
    line = assert_one_error(result, needle)
    assert len(line) < 400, line
    assert_no_internals(result.stderr)
    if case == "content-a-number":  # what streamed before is shown and kept
        assert result.stdout.strip() == "Hello"
    assert_session_is_sound(cli_home)
    server.enqueue(Reply.text(["went on"]))
    again = run_cli(["run", "--continue", "--model", "openai:m", "again"], server=server)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "went on"
    assert not warning_lines(again.stderr), again.stderr
    sent = strict_json(server.requests[-1].body.decode())["messages"]
    assert_valid_history(sent)
    if case == "content-a-number":  # what streamed before the wrong shape, marked as cut
        assert sent[-2] == {
            "role": "assistant",
            "content": f"Hello {CUT_MARK}",
        }


# --- Anthropic ---------------------------------------------------------------------------


def message_start(usage: Any = None) -> dict[str, Any]:
    usage = {"input_tokens": 3, "output_tokens": 1} if usage is None else usage
    message = {"id": "msg_1", "type": "message", "role": "assistant", "content": []}
    return {"type": "message_start", "message": {**message, "usage": usage}}


def block_start(block: Any, index: int = 0) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def delta(value: Any, index: int = 0) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": value}


def text_delta(text: Any, index: int = 0) -> dict[str, Any]:
    return delta({"type": "text_delta", "text": text}, index)


def json_delta(piece: Any, index: int = 0) -> dict[str, Any]:
    return delta({"type": "input_json_delta", "partial_json": piece}, index)


def block_stop(index: int = 0) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def message_delta(stop: Any = "end_turn", usage: Any = None) -> dict[str, Any]:
    usage = {"output_tokens": 2} if usage is None else usage
    return {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": usage}


TEXT = {"type": "text", "text": ""}
TOOL = {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}
STOP = {"type": "message_stop"}


def an_stream(*events: Any) -> AReply:
    """Each event as `event: TYPE` + `data:` (json.dumps writes NaN as `NaN`)."""
    steps = [Raw(f"event: {e.get('type', 'x')}\ndata: {json.dumps(e)}\n\n") for e in events]
    return AReply(kind="stream", steps=tuple(steps), ending="none")


def text_then(*events: Any) -> AReply:
    """A text block that streamed "hello", then `events`."""
    return an_stream(message_start(), block_start(TEXT), text_delta("hello"), *events)


def tool_then(block: dict[str, Any], *events: Any) -> AReply:
    return an_stream(message_start(), block_start(block), *events)


ANTHROPIC = {
    "usage-words": (
        text_then(block_stop(), message_delta(usage={"output_tokens": "abc"}), STOP),
        "usage.output_tokens as a string",
    ),
    "usage-words-at-start": (
        an_stream(message_start({"input_tokens": "abc"})),
        "message.usage.input_tokens as a string",
    ),
    "usage-negative": (
        text_then(block_stop(), message_delta(usage={"output_tokens": -3}), STOP),
        "usage.output_tokens as the number -3",
    ),
    "usage-infinity": (
        text_then(block_stop(), message_delta(usage={"output_tokens": INF}), STOP),
        "Infinity is not JSON",
    ),
    "error-a-string": (
        text_then({"type": "error", "error": "overloaded"}),
        "error inside the stream: overloaded",
    ),
    "stop-reason-an-object": (
        text_then(block_stop(), message_delta(stop={"a": 1}), STOP),
        "delta.stop_reason as an object",
    ),
    "stop-reason-a-list": (
        text_then(block_stop(), message_delta(stop=["x"]), STOP),
        "delta.stop_reason as a list",
    ),
    "tool-name-null": (tool_then({**TOOL, "name": None}), "content_block.name as null"),
    "tool-name-a-number": (tool_then({**TOOL, "name": 7}), "content_block.name as the number 7"),
    "tool-input-a-list": (tool_then({**TOOL, "input": [1]}), "content_block.input as a list"),
    "tool-input-nan": (tool_then({**TOOL, "input": {"x": NAN}}), "NaN is not JSON"),
    "partial-json-a-number": (tool_then(TOOL, json_delta(5)), "delta.partial_json as the num"),
    "block-start-without-block": (
        an_stream(message_start(), {"type": "content_block_start", "index": 0}),
        "content_block_start's content_block as null",
    ),
    "block-started-twice": (
        tool_then(TOOL, json_delta('{"path":"README.md"}'), block_stop(), block_start(TOOL)),
        "started content block 0 twice",
    ),
    "delta-of-a-block-not-started": (
        an_stream(message_start(), text_delta("orphan")),
        "text_delta for content block 0, which was not started",
    ),
    "text-delta-to-a-tool-block": (
        tool_then(TOOL, text_delta("x")),
        "text_delta for content block 0, a tool_use block",
    ),
    "index-a-string": (
        an_stream(message_start(), {**block_start(TEXT), "index": "0"}),
        "content_block_start's index as a string",
    ),
    "citation-missing": (
        text_then(delta({"type": "citations_delta"})),
        "delta.citation as null",
    ),
    "server-result-id-a-list": (
        tool_then({"type": "web_search_tool_result", "tool_use_id": ["x"], "content": []}),
        "content_block.tool_use_id as a list",
    ),
    "server-result-nan": (
        tool_then({"type": "web_search_tool_result", "tool_use_id": "s1", "content": {"a": NAN}}),
        "NaN is not JSON",
    ),
    "answer-not-a-stream": (
        AReply(kind="json", body=json.dumps({"type": "message", "content": []}).encode()),
        "sent `application/json`, not an event stream",
    ),
}


def anthropic_run(run_cli: RunCli, server: ScriptedAnthropic, *args: str) -> Any:
    env = {"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "k"}
    return run_cli(["run", "--model", "anthropic:m", "--deny", *args], env=env)


def assert_valid_anthropic_turns(turns: list[dict[str, Any]]) -> None:
    """Alternating turns of blocks, every tool_use answered, inputs objects."""
    roles = [turn["role"] for turn in turns]
    assert roles[0] == "user" and roles[-1] == "user", roles
    assert all(a != b for a, b in itertools.pairwise(roles)), roles
    blocks = [block for turn in turns for block in turn["content"]]
    assert all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in blocks), turns
    uses = [b["id"] for b in blocks if b["type"] == "tool_use"]
    answered = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
    assert sorted(uses) == sorted(answered), turns
    assert all(isinstance(i, str) for i in uses + answered), turns
    assert all(isinstance(b["input"], dict) for b in blocks if b["type"] == "tool_use"), turns


@pytest.fixture
def anthropic() -> Any:
    with ScriptedAnthropic() as srv:
        yield srv
    assert srv.errors == [], "unexpected exceptions inside the scripted server"


@pytest.mark.parametrize("case", sorted(ANTHROPIC))
def test_an_anthropic_shape_is_one_line_naming_the_field_and_the_session_continues(
    run_cli: RunCli, anthropic: ScriptedAnthropic, cli_home: Path, case: str
) -> None:
    reply, needle = ANTHROPIC[case]
    anthropic.enqueue(reply)
    result = anthropic_run(run_cli, anthropic, "hi")
    assert result.returncode == 1, result.stderr
    line = assert_one_error(result, needle)
    assert len(line) < 400, line
    assert_no_internals(result.stderr)
    assert_session_is_sound(cli_home)
    anthropic.enqueue(AReply.text(["went on"]))
    again = anthropic_run(run_cli, anthropic, "--continue", "again")
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "went on"
    assert not warning_lines(again.stderr), again.stderr
    assert_valid_anthropic_turns(strict_json(anthropic.requests[-1].body.decode())["messages"])


# --- shapes that run: ids made text, blocks passed back unchanged, what is said ---------


def test_a_numeric_tool_call_id_is_kept_as_its_text_openai(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    server.enqueue(
        oa_stream(chunk(ROLE), chunk({"tool_calls": [call(id=12345)]}), chunk({}, "tool_calls"))
    )
    server.enqueue(Reply.text(["read it"]))
    result = run_cli(["run", "--model", "openai:m", "--deny", "hi"], server=server)
    assert result.returncode == 0, result.stderr
    server.enqueue(Reply.text(["went on"]))
    again = run_cli(["run", "--continue", "--model", "openai:m", "again"], server=server)
    assert again.returncode == 0, again.stderr
    assert not warning_lines(again.stderr), again.stderr  # no "toolCallId is not text"
    sent = server.requests[-1].json["messages"]
    assert_valid_history(sent)
    [assistant] = [m for m in sent if m.get("tool_calls")]
    assert assistant["tool_calls"][0]["id"] == "12345"
    [result_message] = [m for m in sent if m["role"] == "tool"]
    assert result_message["tool_call_id"] == "12345"
    assert "interrupted" not in result_message["content"]


def test_a_numeric_tool_use_id_is_kept_as_its_text_anthropic(
    run_cli: RunCli, anthropic: ScriptedAnthropic, cli_home: Path
) -> None:
    anthropic.enqueue(
        tool_then(
            {**TOOL, "id": 123},
            json_delta('{"path": "README.md"}'),
            block_stop(),
            message_delta("tool_use"),
            STOP,
        ),
        AReply.text(["read it"]),
    )
    assert anthropic_run(run_cli, anthropic, "hi").returncode == 0
    anthropic.enqueue(AReply.text(["went on"]))
    again = anthropic_run(run_cli, anthropic, "--continue", "again")
    assert again.returncode == 0, again.stderr
    assert not warning_lines(again.stderr), again.stderr
    turns = anthropic.requests[-1].json["messages"]
    assert_valid_anthropic_turns(turns)
    blocks = [b for t in turns for b in t["content"]]
    assert [b["id"] for b in blocks if b["type"] == "tool_use"] == ["123"]
    [answer] = [b for b in blocks if b["type"] == "tool_result"]
    assert answer["tool_use_id"] == "123" and not answer["is_error"]


def test_a_redacted_thinking_block_goes_back_unchanged(
    run_cli: RunCli, anthropic: ScriptedAnthropic
) -> None:
    redacted = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}
    anthropic.enqueue(
        an_stream(
            message_start(),
            block_start(redacted),
            block_stop(),
            block_start(TEXT, 1),
            text_delta("answer", 1),
            block_stop(1),
            message_delta(),
            STOP,
        )
    )
    assert anthropic_run(run_cli, anthropic, "hi").returncode == 0
    anthropic.enqueue(AReply.text(["went on"]))
    assert anthropic_run(run_cli, anthropic, "--continue", "again").returncode == 0
    assistant = anthropic.requests[-1].json["messages"][1]
    assert assistant["content"] == [redacted, {"type": "text", "text": "answer"}]


def test_an_openai_refusal_is_shown_kept_and_said(run_cli: RunCli, server: ScriptedServer) -> None:
    server.enqueue(
        oa_stream(chunk(ROLE), chunk({"refusal": "I can't help with that"}), chunk({}, "stop"))
    )
    result = run_cli(["run", "--model", "openai:m", "hi"], server=server)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "I can't help with that"
    assert "agentcli: warning: the model refused to answer" in result.stderr.splitlines()
    server.enqueue(Reply.text(["went on"]))
    assert (
        run_cli(["run", "--continue", "--model", "openai:m", "more"], server=server).returncode == 0
    )
    sent = server.requests[-1].json["messages"]
    assert {"role": "assistant", "content": "I can't help with that"} in sent


@pytest.mark.parametrize(
    ("provider", "said", "not_said"),
    [
        ("openai", "the provider's content filter stopped the answer", "token limit"),
        ("anthropic", "fills its context window", "output token limit"),
    ],
)
def test_a_finish_that_cut_the_answer_is_a_warning_naming_why(
    run_cli: RunCli,
    server: ScriptedServer,
    anthropic: ScriptedAnthropic,
    provider: str,
    said: str,
    not_said: str,
) -> None:
    if provider == "openai":
        server.enqueue(Reply.text(["x"], finish_reason="content_filter"))
        result = run_cli(["run", "--model", "openai:m", "hi"], server=server)
    else:
        anthropic.enqueue(AReply.text(["x"], stop_reason="model_context_window_exceeded"))
        result = anthropic_run(run_cli, anthropic, "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "x"
    [warning] = warning_lines(result.stderr)
    assert said in warning and not_said not in warning, warning
    assert not error_lines(result.stderr)


# --- a session an older agentcli left holding NaN ----------------------------------------


def stuck_session(workspace: Path) -> list[bytes]:
    """What the old code recorded of an Anthropic stream that sent NaN and Infinity: the
    blocks kept as they came (json.dumps writes `NaN`), a call whose input held NaN."""
    blocks = [
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": {"a": INF}},
        {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"x": NAN}},
    ]
    arguments = '{"path": "README.md", "x": NaN}'
    call_record = {"id": "toolu_1", "name": "read_file", "arguments": arguments}
    records = [
        header(workspace, model="anthropic:m"),
        {"t": "message", "m": {"id": "u1", "role": "user", "content": "hi"}},
        {
            "t": "message",
            "m": {
                "id": "a1",
                "role": "assistant",
                "content": "",
                "toolCalls": [call_record],
                "extra": {"anthropic_content": blocks},
            },
        },
        {
            "t": "message",
            "m": {"id": "t1", "role": "tool", "toolCallId": "toolu_1", "content": "NaN refused"},
        },
        {"t": "message", "m": {"id": "a2", "role": "assistant", "content": "ok"}},
    ]
    return [json.dumps(record).encode() for record in records]


def test_a_session_holding_nan_continues_with_one_warning(
    run_cli: RunCli, anthropic: ScriptedAnthropic, workspace: Path, cli_home: Path
) -> None:
    lines = stuck_session(workspace)
    assert b"Infinity" in lines[2] and b"NaN" in lines[2]  # as the old code wrote it
    path = write_session(cli_home, lines)
    anthropic.enqueue(AReply.text(["went on"]))
    result = anthropic_run(run_cli, anthropic, "--continue", "again")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "went on"
    assert "Out of range float" not in result.stderr
    [warning] = warning_lines(result.stderr)
    assert str(path) in warning and "NaN or Infinity" in warning, warning
    turns = strict_json(anthropic.requests[-1].body.decode())["messages"]
    assert_valid_anthropic_turns(turns)
    [use] = [b for t in turns for b in t["content"] if b["type"] == "tool_use"]
    assert use == {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}
    assert not any(isinstance(v, float) and not math.isfinite(v) for t in turns for v in t.values())
