"""End-to-end: `agentcli run --model anthropic:...` against the scripted Anthropic Messages
server — the OpenAI scenarios again (text, tool use, retries, broken streams, usage, json and
jsonl output) plus what only Anthropic has (thinking, provider-executed server tools), and
weak-model behaviour (bad calls go back to the model, bounded) on both providers."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from ag_ui.core import (
    CustomEvent,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunFinishedEvent,
    TextMessageContentEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from tests.conftest import (
    NOTES_LINES,
    README_LINES,
    RunCli,
    assert_one_error,
    error_lines,
    numbered,
)
from tests.scripted_anthropic import AReply, ScriptedAnthropic
from tests.scripted_server import Reply, ScriptedServer
from tests.test_e2e_agui import check_run_structure, check_text_messages, parse_and_validate

MODEL = "claude-scripted"
KEY = "sk-ant-scripted-key-7f3a"
ANSI = re.compile(r"\x1b")
SCHEMA_HINT = "Expected parameters (JSON Schema)"


@pytest.fixture
def anthropic() -> Iterator[ScriptedAnthropic]:
    with ScriptedAnthropic() as srv:
        yield srv
    assert srv.errors == [], "unexpected exceptions inside the scripted server"


def anthropic_env(srv: ScriptedAnthropic, **extra: str | None) -> dict[str, str | None]:
    return {"ANTHROPIC_BASE_URL": srv.base_url, "ANTHROPIC_API_KEY": KEY, **extra}


ARun = Callable[..., Any]


@pytest.fixture
def arun(run_cli: RunCli, anthropic: ScriptedAnthropic) -> ARun:
    """arun(*args, env=None, **kw): `agentcli run --model anthropic:MODEL *args` against the
    scripted server, with ANTHROPIC_API_KEY set."""

    def run(*args: str, env: Mapping[str, str | None] | None = None, **kw: Any) -> Any:
        command = ["run", "--model", f"anthropic:{MODEL}", *args]
        return run_cli(command, env={**anthropic_env(anthropic), **(env or {})}, **kw)

    return run


def write_user_config(cli_home: Path, text: str) -> Path:
    path = cli_home / "agentcli" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# --- reading what the client sent ---


def body(srv: ScriptedAnthropic, index: int) -> dict[str, Any]:
    return srv.requests[index].json


def wire_messages(srv: ScriptedAnthropic, index: int) -> list[dict[str, Any]]:
    return body(srv, index)["messages"]


def blocks_of(message: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [b for b in message["content"] if b["type"] == kind]


def last_assistant(srv: ScriptedAnthropic, index: int) -> dict[str, Any]:
    assistants = [m for m in wire_messages(srv, index) if m["role"] == "assistant"]
    assert assistants, wire_messages(srv, index)
    return assistants[-1]


def tool_results(srv: ScriptedAnthropic, index: int) -> list[dict[str, Any]]:
    """The tool_result blocks of the last user message of request `index`."""
    last = wire_messages(srv, index)[-1]
    assert last["role"] == "user", last
    return blocks_of(last, "tool_result")


def result_text(block: dict[str, Any]) -> str:
    content = block["content"]
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content)


def read_use(path: str, call_id: str | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {"name": "read_file", "input": {"path": path}}
    if call_id:
        call["id"] = call_id
    return call


# --- text and the request ---


@pytest.mark.parametrize(
    ("pieces", "expected"),
    [
        (["Hel", "lo, ", "wor", "ld!"], "Hello, world!\n"),
        (["Line one\n", "Line ", "two\n"], "Line one\nLine two\n"),
    ],
    ids=["plain", "lines"],
)
def test_streamed_text_and_request_shape(
    arun: ARun, anthropic: ScriptedAnthropic, pieces: list[str], expected: str
) -> None:
    anthropic.enqueue(AReply.text(pieces))
    extra = "Always answer in French. Marker-91c2."
    result = arun("--system", extra, "Say hello", env={"TERM": "xterm-256color"})

    assert result.returncode == 0, result.stderr
    assert result.stdout == expected
    assert not ANSI.search(result.stdout)
    assert error_lines(result.stderr) == []

    [request] = anthropic.requests
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == KEY
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.headers["content-type"].startswith("application/json")
    assert "authorization" not in request.headers
    assert KEY not in result.stdout + result.stderr

    sent = request.json
    assert sent["model"] == MODEL
    assert isinstance(sent["max_tokens"], int) and sent["max_tokens"] > 0
    assert sent["stream"] is True
    # `system` is top level, a string (or text blocks), never a message
    assert isinstance(sent["system"], str | list)
    assert extra in json.dumps(sent["system"])
    roles = [m["role"] for m in sent["messages"]]
    assert roles == ["user"]
    assert "Say hello" in json.dumps(sent["messages"][0]["content"])
    assert extra not in json.dumps(sent["messages"])
    # tools: name, description, input_schema (never OpenAI's function wrapper)
    tools = sent["tools"]
    assert tools, sent
    for tool in tools:
        assert {"name", "description", "input_schema"} <= tool.keys(), tool
        assert tool["input_schema"]["type"] == "object"
        assert "function" not in tool and "parameters" not in tool
    names = {t["name"] for t in tools}
    assert {"read_file", "run_shell", "edit_file"} <= names
    if "tool_choice" in sent:
        assert sent["tool_choice"]["type"] in ("auto", "any", "tool", "none")


def test_read_file_tool_use_round_trip(arun: ARun, anthropic: ScriptedAnthropic) -> None:
    anthropic.enqueue(
        AReply.tool_use(
            [read_use("README.md", "toolu_readme")], text_before=["Let me ", "look."], fragment=3
        ),
        AReply.text(["The README has ", "3 lines."]),
    )
    result = arun("What is in the README?")

    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Let me look.")
    assert result.stdout.rstrip("\n").endswith("The README has 3 lines.")
    assert "alpha line" not in result.stdout
    assert "read_file" in result.stderr and "README.md" in result.stderr
    assert error_lines(result.stderr) == []

    assert len(anthropic.requests) == 2
    second = wire_messages(anthropic, 1)
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert second[0] == wire_messages(anthropic, 0)[0]
    assistant = second[1]
    assert blocks_of(assistant, "text") == [{"type": "text", "text": "Let me look."}]
    [use] = blocks_of(assistant, "tool_use")
    assert use == {
        "type": "tool_use",
        "id": "toolu_readme",
        "name": "read_file",
        "input": {"path": "README.md"},
    }
    assert [b["type"] for b in assistant["content"]] == ["text", "tool_use"]
    [tool_result] = tool_results(anthropic, 1)
    assert tool_result["tool_use_id"] == "toolu_readme"
    assert tool_result["is_error"] is False
    assert numbered(README_LINES) in result_text(tool_result)
    assert body(anthropic, 1)["tools"] == body(anthropic, 0)["tools"]
    assert body(anthropic, 1)["system"] == body(anthropic, 0)["system"]


def test_parallel_tool_use_results_in_one_user_message(
    arun: ARun, anthropic: ScriptedAnthropic
) -> None:
    anthropic.enqueue(
        AReply.tool_use([read_use("README.md", "toolu_a"), read_use("notes.txt", "toolu_b")]),
        AReply.text("Both read."),
    )
    result = arun("Read both files")

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Both read.\n"
    second = wire_messages(anthropic, 1)
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    uses = blocks_of(second[1], "tool_use")
    assert [(u["id"], u["input"]) for u in uses] == [
        ("toolu_a", {"path": "README.md"}),
        ("toolu_b", {"path": "notes.txt"}),
    ]
    results = tool_results(anthropic, 1)
    assert second[2]["content"] == results  # nothing but the results, in one message
    assert [r["tool_use_id"] for r in results] == ["toolu_a", "toolu_b"]
    assert [r["is_error"] for r in results] == [False, False]
    assert numbered(README_LINES) in result_text(results[0])
    assert numbered(NOTES_LINES) in result_text(results[1])


def test_failing_call_is_an_error_result(arun: ARun, anthropic: ScriptedAnthropic) -> None:
    anthropic.enqueue(
        AReply.tool_use([read_use("missing.txt", "toolu_miss"), read_use("notes.txt", "toolu_ok")]),
        AReply.text("One failed."),
    )
    result = arun("Read them")

    assert result.returncode == 0, result.stderr
    assert result.stdout == "One failed.\n"
    missing, ok = tool_results(anthropic, 1)
    assert missing["tool_use_id"] == "toolu_miss"
    assert missing["is_error"] is True
    assert "missing.txt" in result_text(missing)
    assert ok["is_error"] is False
    assert numbered(NOTES_LINES) in result_text(ok)


def test_ping_and_unknown_events_are_ignored(arun: ARun, anthropic: ScriptedAnthropic) -> None:
    anthropic.enqueue(
        AReply.tool_use([read_use("README.md", "toolu_p")], ping=True, unknown_events=True),
        AReply.text(["Quiet ", "pings."], ping=True, unknown_events=True),
    )
    result = arun("go")

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Quiet pings.\n"
    assert error_lines(result.stderr) == []
    assert "warning" not in result.stderr.lower()
    assert "scripted_future_event" not in result.stdout + result.stderr
    [tool_result] = tool_results(anthropic, 1)
    assert tool_result["is_error"] is False
    assert len(anthropic.requests) == 2


# --- retries and failures ---


def test_error_event_before_any_output_is_retried(arun: ARun, anthropic: ScriptedAnthropic) -> None:
    anthropic.enqueue(AReply.stream_error([], "overloaded_error"), AReply.text("recovered"))
    result = arun("hi")

    assert result.returncode == 0, result.stderr
    assert result.stdout == "recovered\n"
    assert error_lines(result.stderr) == []
    assert "retry" in result.stderr.lower()
    assert len(anthropic.requests) == 2
    assert anthropic.requests[1].json == anthropic.requests[0].json


def test_error_event_after_output_fails_keeping_the_text(
    arun: ARun, anthropic: ScriptedAnthropic
) -> None:
    anthropic.enqueue(
        AReply.stream_error(["Some ", "text"], "overloaded_error", "Overloaded right now"),
        AReply.text("a retry would print this"),
    )
    result = arun("hi")

    assert result.returncode == 1
    assert result.stdout.startswith("Some text")
    assert "a retry" not in result.stdout
    assert_one_error(result, "Overloaded right now")
    assert len(anthropic.requests) == 1
    assert anthropic.pending == 1


@pytest.mark.parametrize(
    ("status", "type_", "headers", "min_wait"),
    [
        (529, "overloaded_error", {}, 0.0),
        (429, "rate_limit_error", {"retry-after": "1"}, 1.0),
    ],
    ids=["529-overloaded", "429-retry-after"],
)
def test_overloaded_and_rate_limited_are_retried(
    arun: ARun,
    anthropic: ScriptedAnthropic,
    status: int,
    type_: str,
    headers: dict[str, str],
    min_wait: float,
) -> None:
    anthropic.enqueue(AReply.error(status, type_, "busy", headers), AReply.text("later"))
    result = arun("hi")

    assert result.returncode == 0, result.stderr
    assert result.stdout == "later\n"
    assert error_lines(result.stderr) == []
    assert "retry" in result.stderr.lower()
    assert len(anthropic.requests) == 2
    waited = anthropic.requests[1].time - anthropic.requests[0].time
    assert min_wait <= waited < 5.0, waited


def test_401_names_the_key_variable(arun: ARun, anthropic: ScriptedAnthropic) -> None:
    anthropic.enqueue(
        AReply.error(401, "authentication_error", "invalid x-api-key"),
        AReply.text("a retry would succeed"),
    )
    result = arun("hi")

    assert result.returncode == 1
    line = assert_one_error(result, "ANTHROPIC_API_KEY", "invalid x-api-key")
    assert KEY not in line
    assert result.stdout == ""
    assert len(anthropic.requests) == 1
    assert anthropic.pending == 1


@pytest.mark.parametrize(
    "partial", [None, 'event: content_block_delta\ndata: {"type":"content_block_de']
)
def test_stream_cut_keeps_the_partial_text(
    arun: ARun, anthropic: ScriptedAnthropic, partial: str | None
) -> None:
    anthropic.enqueue(
        AReply.cut(["Partial ", "answer"], partial=partial), AReply.text("a retry would print")
    )
    result = arun("hi")

    assert result.returncode == 1
    assert result.stdout.startswith("Partial answer")
    assert "a retry" not in result.stdout
    assert_one_error(result)
    assert len(anthropic.requests) == 1


def test_max_tokens_stop_finishes_with_a_warning(arun: ARun, anthropic: ScriptedAnthropic) -> None:
    anthropic.enqueue(AReply.max_tokens(["The answer is cut sh"]))
    result = arun("hi")

    assert result.returncode == 0, result.stderr
    assert result.stdout == "The answer is cut sh\n"
    assert error_lines(result.stderr) == []
    warnings = [line for line in result.stderr.splitlines() if "token limit" in line]
    assert len(warnings) == 1, result.stderr
    assert "warning" in warnings[0].lower()
    assert len(anthropic.requests) == 1


# --- usage ---


def test_usage_in_output_json(arun: ARun, anthropic: ScriptedAnthropic) -> None:
    # message_start says output_tokens 1, message_delta the cumulative total: 7 then 4.
    anthropic.enqueue(
        AReply.tool_use([read_use("README.md", "toolu_u")], usage=(12, 7)),
        AReply.text(["The answer", " is 42."], usage=(30, 4)),
    )
    result = arun("--output", "json", "go")

    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["text"] == "The answer is 42."
    assert doc["status"] == "finished"
    assert doc["exitCode"] == 0
    assert doc["steps"] == 2
    assert MODEL in doc["model"]
    assert doc["usage"]["inputTokens"] == 42
    assert doc["usage"]["outputTokens"] == 11
    assert doc["usage"]["totalTokens"] == 53
    [call] = doc["toolCalls"]
    assert call["id"] == "toolu_u"
    assert call["name"] == "read_file"
    assert call["arguments"] == {"path": "README.md"}
    assert numbered(README_LINES) in call["result"]
    assert call["approval"]["decision"] == "allow"


# --- thinking ---


def test_thinking_streams_as_reasoning_events_and_goes_back_signed(
    arun: ARun, anthropic: ScriptedAnthropic
) -> None:
    anthropic.enqueue(
        AReply.tool_use(
            [read_use("README.md", "toolu_t")],
            thinking=["I should ", "read the README."],
            signature="sig-Zm9vYmFy",
        ),
        AReply.thinking("It has three lines.", "sig-second", then=AReply.text("Three lines.")),
    )
    result = arun("--output", "jsonl", "How long is the README?")

    assert result.returncode == 0, result.stderr
    events = parse_and_validate(result.stdout)
    check_run_structure(events, RunFinishedEvent)
    models = [model for _, model in events]
    reasoning = [
        m
        for m in models
        if isinstance(
            m,
            ReasoningStartEvent
            | ReasoningMessageStartEvent
            | ReasoningMessageContentEvent
            | ReasoningMessageEndEvent
            | ReasoningEndEvent,
        )
    ]
    kinds = [type(m) for m in reasoning]
    one = [
        ReasoningStartEvent,
        ReasoningMessageStartEvent,
        ReasoningMessageContentEvent,
        ReasoningMessageContentEvent,
        ReasoningMessageEndEvent,
        ReasoningEndEvent,
    ]
    two = [one[0], one[1], one[2], one[4], one[5]]
    assert kinds == one + two
    first_ids = {m.message_id for m in reasoning[:6]}
    assert len(first_ids) == 1
    assert {m.message_id for m in reasoning[6:]} != first_ids
    deltas = [m.delta for m in reasoning if isinstance(m, ReasoningMessageContentEvent)]
    assert deltas == ["I should ", "read the README.", "It has three lines."]
    # the first thinking ends before the call starts; the second before the final text
    first_call = next(i for i, m in enumerate(models) if isinstance(m, ToolCallStartEvent))
    first_end = next(i for i, m in enumerate(models) if m is reasoning[5])
    assert first_end < first_call
    second_end = next(i for i, m in enumerate(models) if m is reasoning[-1])
    first_text = next(i for i, m in enumerate(models) if isinstance(m, TextMessageContentEvent))
    assert second_end < first_text
    # thinking is never text
    assert list(check_text_messages(models).values()) == ["Three lines."]

    # passed back unchanged, signature included, before the tool_use block
    assistant = wire_messages(anthropic, 1)[1]
    assert assistant["role"] == "assistant"
    assert assistant["content"][0] == {
        "type": "thinking",
        "thinking": "I should read the README.",
        "signature": "sig-Zm9vYmFy",
    }
    assert [b["type"] for b in assistant["content"]] == ["thinking", "tool_use"]


def test_thinking_in_text_mode_goes_to_stderr(arun: ARun, anthropic: ScriptedAnthropic) -> None:
    anthropic.enqueue(AReply.text(["The answer."], thinking=["Pondering ", "deeply."]))
    result = arun("hi")

    assert result.returncode == 0, result.stderr
    assert result.stdout == "The answer.\n"
    assert "Pondering deeply." in result.stderr
    assert error_lines(result.stderr) == []


# --- provider-executed server tools ---

SEARCH_RESULTS = [
    {
        "type": "web_search_result",
        "url": "https://example.com/weather",
        "title": "Weather today",
        "encrypted_content": "RW5jcnlwdGVkLWNvbnRlbnQ=",
        "page_age": "1 hour ago",
    }
]


def _search_reply(calls: Sequence[dict[str, Any]] = ()) -> AReply:
    return AReply.server_tool(
        "web_search",
        {"query": "weather in Paris"},
        SEARCH_RESULTS,
        id="srvtoolu_search",
        text=["It is sunny."],
        calls=calls,
    )


def test_web_search_is_shown_not_executed_and_passed_back(
    arun: ARun, anthropic: ScriptedAnthropic, cli_home: Path
) -> None:
    write_user_config(cli_home, "[providers.anthropic]\nweb_search = true\n")
    anthropic.enqueue(
        _search_reply(calls=[read_use("README.md", "toolu_after")]),
        AReply.text("Done."),
    )
    result = arun("--output", "jsonl", "weather?")

    assert result.returncode == 0, result.stderr
    server_tools = [t for t in body(anthropic, 0)["tools"] if "type" in t]
    assert server_tools == [{"type": "web_search_20250305", "name": "web_search", "max_uses": 5}]

    events = parse_and_validate(result.stdout)
    check_run_structure(events, RunFinishedEvent)
    models = [model for _, model in events]
    start = [m for m in models if isinstance(m, ToolCallStartEvent)]
    assert [m.tool_call_id for m in start] == ["srvtoolu_search", "toolu_after"]
    assert start[0].tool_call_name == "web_search"
    [raw_start] = [
        raw
        for raw, _ in events
        if raw["type"] == "TOOL_CALL_START" and raw["toolCallId"] == "srvtoolu_search"
    ]
    assert raw_start["metadata"]["executedBy"] == "provider"
    args = "".join(
        m.delta
        for m in models
        if isinstance(m, ToolCallArgsEvent) and m.tool_call_id == "srvtoolu_search"
    )
    assert json.loads(args) == {"query": "weather in Paris"}
    ends = [m.tool_call_id for m in models if isinstance(m, ToolCallEndEvent)]
    assert "srvtoolu_search" in ends
    results = [
        (raw, m)
        for raw, m in events
        if isinstance(m, ToolCallResultEvent) and m.tool_call_id == "srvtoolu_search"
    ]
    assert len(results) == 1
    raw_result = results[0][0]
    assert raw_result["metadata"]["executedBy"] == "provider"
    assert "example.com/weather" in raw_result["content"]
    # nobody approved or ran it here: the only approval is for the client-side call
    approvals = [m.value for m in models if isinstance(m, CustomEvent) and m.name == "approval"]
    assert [a["toolCallId"] for a in approvals] == ["toolu_after"]

    # the next request repeats the server blocks verbatim; only the client call has a result
    assistant = wire_messages(anthropic, 1)[1]
    types = [b["type"] for b in assistant["content"]]
    assert types == ["server_tool_use", "web_search_tool_result", "text", "tool_use"]
    assert assistant["content"][0] == {
        "type": "server_tool_use",
        "id": "srvtoolu_search",
        "name": "web_search",
        "input": {"query": "weather in Paris"},
    }
    assert assistant["content"][1] == {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_search",
        "content": SEARCH_RESULTS,
    }
    assert [r["tool_use_id"] for r in tool_results(anthropic, 1)] == ["toolu_after"]


def test_tool_names_stay_unique_with_web_search(
    arun: ARun, anthropic: ScriptedAnthropic, cli_home: Path
) -> None:
    # The API refuses a request whose tools share a name: the provider's web_search must
    # not sit next to a client tool of the same name.
    write_user_config(cli_home, "[providers.anthropic]\nweb_search = true\n")
    anthropic.enqueue(AReply.text("ok"))
    result = arun("hi")

    assert result.returncode == 0, result.stderr
    names = [t["name"] for t in body(anthropic, 0)["tools"]]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    assert duplicates == [], body(anthropic, 0)["tools"]


def test_web_search_alone_ends_the_run(
    arun: ARun, anthropic: ScriptedAnthropic, cli_home: Path
) -> None:
    write_user_config(cli_home, "[providers.anthropic]\nweb_search = true\n")
    anthropic.enqueue(_search_reply(), AReply.text("never requested"))
    result = arun("weather?")

    assert result.returncode == 0, result.stderr
    assert result.stdout.rstrip("\n").endswith("It is sunny.")
    assert "web_search" in result.stderr  # shown as activity
    assert "approval" not in result.stderr
    assert len(anthropic.requests) == 1
    assert anthropic.pending == 1


# --- choosing the provider ---


def test_missing_key_with_the_default_base_url(run_cli: RunCli) -> None:
    result = run_cli(["run", "--model", "anthropic:x", "hi"])

    assert result.returncode == 2
    assert_one_error(result, "ANTHROPIC_API_KEY")
    assert result.stdout == ""


def test_key_alone_picks_anthropic(run_cli: RunCli, anthropic: ScriptedAnthropic) -> None:
    anthropic.enqueue(AReply.text("from anthropic"))
    result = run_cli(["run", "hi"], env=anthropic_env(anthropic))

    assert result.returncode == 0, result.stderr
    assert result.stdout == "from anthropic\n"
    [request] = anthropic.requests
    assert request.json["model"].startswith("claude")
    assert request.headers["x-api-key"] == KEY


def test_key_alone_picks_anthropic_in_settings(tmp_path: Path) -> None:
    # No base URL anywhere: only the key decides (the request would go to the official URL).
    from agentcli.assembly import resolve_settings

    settings = resolve_settings(
        model=None,
        base_url=None,
        cwd=str(tmp_path),
        system=None,
        max_steps=None,
        timeout=None,
        output="text",
        yes=False,
        deny=False,
        debug=False,
        env={"ANTHROPIC_API_KEY": KEY},
    )
    assert settings.provider.type == "anthropic"
    assert settings.api_key == KEY


# --- weak models, on both providers ---


@dataclass
class Harness:
    """One provider's scripted server behind the same few verbs."""

    name: str
    call: Callable[..., Any]  # call(name, arguments: dict | str, id) -> a reply
    text: Callable[[str], Any]
    run: Callable[..., Any]  # run(*args) -> CompletedProcess
    server: ScriptedServer | ScriptedAnthropic

    def results(self, index: int) -> list[tuple[str, str, bool | None]]:
        """(call id, content, is_error or None) of the tool results in request `index`."""
        body = self.server.requests[index].json
        if self.name == "openai":
            trailing = []  # the tool messages after the last assistant message
            for message in reversed(body["messages"]):
                if message["role"] != "tool":
                    break
                trailing.insert(0, (message["tool_call_id"], message["content"], None))
            return trailing
        last = body["messages"][-1]
        return [
            (b["tool_use_id"], result_text(b), b["is_error"])
            for b in last["content"]
            if b["type"] == "tool_result"
        ]

    def last_results(self) -> list[tuple[str, str, bool | None]]:
        return self.results(len(self.server.requests) - 1)


@pytest.fixture(params=["openai", "anthropic"])
def weak(request: pytest.FixtureRequest, run_cli: RunCli) -> Iterator[Harness]:
    harness: Harness
    if request.param == "openai":
        with ScriptedServer() as srv:
            harness = Harness(
                "openai",
                lambda name, arguments, id: Reply.tool_calls(
                    [{"name": name, "arguments": arguments, "id": id}]
                ),
                lambda text: Reply.text([text]),
                lambda *args: run_cli(["run", *args], server=srv),
                srv,
            )
            yield harness
    else:
        with ScriptedAnthropic() as asrv:
            harness = Harness(
                "anthropic",
                lambda name, arguments, id: AReply.tool_use(
                    [{"name": name, "input": arguments, "id": id}]
                ),
                lambda text: AReply.text([text]),
                lambda *args: run_cli(
                    ["run", "--model", f"anthropic:{MODEL}", *args], env=anthropic_env(asrv)
                ),
                asrv,
            )
            yield harness
    assert harness.server.errors == [], "unexpected exceptions inside the scripted server"


BAD_CALLS = {
    "invalid-json": ("read_file", '{"path": "README.md"', ("not valid JSON",)),
    "unknown-tool": ("frobnicate", {"level": 3}, ("frobnicate", "read_file")),
    "schema-violation": ("read_file", {"path": 5}, ("path", "string")),
}


@pytest.mark.parametrize("kind", list(BAD_CALLS))
def test_bad_call_goes_back_to_the_model_which_retries(weak: Harness, kind: str) -> None:
    name, arguments, needles = BAD_CALLS[kind]
    weak.server.enqueue(
        weak.call(name, arguments, "call_bad"),
        weak.call("read_file", {"path": "README.md"}, "call_good"),
        weak.text("Got it on the second try."),
    )
    result = weak.run("read the README")

    assert result.returncode == 0, result.stderr
    assert result.stdout.rstrip("\n").endswith("Got it on the second try.")
    assert error_lines(result.stderr) == []
    assert len(weak.server.requests) == 3
    [(call_id, content, is_error)] = weak.results(1)
    assert call_id == "call_bad"
    for needle in needles:
        assert needle in content, content
    assert "alpha line" not in content  # the tool did not run
    if kind != "unknown-tool":
        assert SCHEMA_HINT in content, content
        schema = json.loads(content.split(SCHEMA_HINT + ": ", 1)[1].split("\n")[0])
        assert schema["properties"]["path"]["type"] == "string"
    if is_error is not None:
        assert is_error is True
    [(call_id, content, is_error)] = weak.results(2)
    assert call_id == "call_good"
    assert numbered(README_LINES) in content
    assert is_error in (None, False)


def test_three_invalid_calls_in_a_row_stop_the_run(weak: Harness) -> None:
    weak.server.enqueue(
        weak.call("read_file", '{"path": ', "call_1"),
        weak.call("read_file", {"path": 5}, "call_2"),
        weak.call("read_file", {}, "call_3"),
        weak.text("never requested"),
    )
    result = weak.run("read the README")

    assert result.returncode == 1
    line = assert_one_error(result, "invalid calls")
    assert "read_file" in line
    assert len(weak.server.requests) == 3  # no request after the third bad call
    assert weak.server.pending == 1
    assert "never requested" not in result.stdout


def test_a_valid_call_resets_the_invalid_streak(weak: Harness) -> None:
    weak.server.enqueue(
        weak.call("read_file", {"path": 5}, "call_1"),
        weak.call("read_file", {}, "call_2"),
        weak.call("read_file", {"path": "notes.txt"}, "call_3"),
        weak.call("read_file", '{"path"', "call_4"),
        weak.call("read_file", {"path": []}, "call_5"),
        weak.text("Finally."),
    )
    result = weak.run("read")

    assert result.returncode == 0, result.stderr
    assert result.stdout.rstrip("\n").endswith("Finally.")
    assert len(weak.server.requests) == 6
    assert numbered(NOTES_LINES) in weak.results(3)[0][1]
