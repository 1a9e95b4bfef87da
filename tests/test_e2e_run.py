"""End-to-end: `agentcli run` against the scripted server — prompts, options, requests,
tool calls in every server dialect, the approval policy, step limits and `--output json`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import (
    NOTES_LINES,
    OUTSIDE_LINES,
    README_LINES,
    RunCli,
    StartCli,
    assert_one_error,
    error_lines,
    numbered,
)
from tests.scripted_server import Reply, ScriptedServer

ANSI = re.compile(r"\x1b")  # any escape character: CSI, OSC, ...


def messages(server: ScriptedServer, index: int) -> list[dict[str, Any]]:
    return server.requests[index].json["messages"]


def user_content(server: ScriptedServer, index: int = 0) -> str:
    users = [m for m in messages(server, index) if m["role"] == "user"]
    assert len(users) == 1, messages(server, index)
    return users[0]["content"]


def assistant_calls(server: ScriptedServer, index: int) -> list[dict[str, Any]]:
    """The tool_calls of the (last) assistant message the client sent back in request `index`."""
    assistants = [m for m in messages(server, index) if m["role"] == "assistant"]
    assert assistants, messages(server, index)
    return assistants[-1]["tool_calls"]


def tool_messages(server: ScriptedServer, index: int) -> list[dict[str, Any]]:
    return [m for m in messages(server, index) if m["role"] == "tool"]


def read_call(path: str, call_id: str | None = None, **extra: Any) -> dict[str, Any]:
    call: dict[str, Any] = {"name": "read_file", "arguments": {"path": path, **extra}}
    if call_id is not None:
        call["id"] = call_id
    return call


# --- text ---


@pytest.mark.parametrize(
    ("pieces", "expected"),
    [
        (["Hel", "lo, ", "wor", "ld!"], "Hello, world!\n"),
        (["Line one\n", "Line ", "two\n"], "Line one\nLine two\n"),
        (
            ["# Title\n\n", "Some **bold** ", "and `code`.\n"],
            "# Title\n\nSome **bold** and `code`.\n",
        ),
    ],
    ids=["plain", "lines", "markdown"],
)
def test_text_answer_on_stdout_and_request_shape(
    run_cli: RunCli, server: ScriptedServer, pieces: list[str], expected: str
) -> None:
    server.enqueue(Reply.text(pieces))
    # A colour terminal type must not matter: stdout is a pipe, so the text stays plain.
    result = run_cli(["run", "Say hello"], server=server, env={"TERM": "xterm-256color"})

    assert result.returncode == 0, result.stderr
    assert result.stdout == expected
    assert not ANSI.search(result.stdout)
    assert error_lines(result.stderr) == []
    assert result.stderr.strip() == ""  # no tool activity, nothing to report

    assert len(server.requests) == 1
    request = server.requests[0]
    assert request.path.endswith("/chat/completions")
    body = request.json
    assert isinstance(body["model"], str) and body["model"]
    assert body["stream"] is True
    assert body["stream_options"]["include_usage"] is True
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user"]
    assert body["messages"][0]["content"].strip()
    assert body["messages"][1]["content"] == "Say hello"
    tool_names = [t["function"]["name"] for t in body["tools"] if t.get("type") == "function"]
    assert "read_file" in tool_names
    read_file = next(t["function"] for t in body["tools"] if t["function"]["name"] == "read_file")
    assert "path" in read_file["parameters"]["properties"]


def test_text_is_streamed_as_it_arrives(start_cli: StartCli, server: ScriptedServer) -> None:
    # Each piece is held back by the server; the first must be on stdout before the last is sent.
    server.enqueue(Reply.text(["Hello", " world"], delay=0.4))
    process = start_cli(["run", "hi"], server=server)
    assert process.stdout is not None
    first = process.stdout.read(5)
    still_running = process.poll() is None
    out, err = process.communicate(timeout=15)

    assert first == "Hello"
    assert still_running, "stdout only arrived when the process ended"
    assert first + out == "Hello world\n"
    assert process.returncode == 0, err
    assert "Traceback" not in err


# --- where the prompt comes from ---


def test_stdin_is_context_below_the_argument(run_cli: RunCli, server: ScriptedServer) -> None:
    server.enqueue(Reply.text(["Summary."]))
    result = run_cli(["run", "Summarise this"], server=server, input="line A\nline B\n")

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Summary.\n"
    content = user_content(server)
    assert re.fullmatch(r"Summarise this\s*<stdin>\s*line A\nline B\s*</stdin>\s*", content), (
        content
    )


def test_empty_stdin_adds_no_context(run_cli: RunCli, server: ScriptedServer) -> None:
    server.enqueue(Reply.text(["ok"]))
    result = run_cli(["run", "just this"], server=server, input="")

    assert result.returncode == 0, result.stderr
    assert user_content(server) == "just this"


@pytest.mark.parametrize("args", [["run"], ["run", "-"], ["chat"]], ids=["run", "dash", "chat"])
def test_stdin_alone_is_the_prompt(
    run_cli: RunCli, server: ScriptedServer, args: list[str]
) -> None:
    server.enqueue(Reply.text(["4"]))
    result = run_cli(args, server=server, input="What is 2+2?\n")

    assert result.returncode == 0, result.stderr
    assert result.stdout == "4\n"
    assert user_content(server).strip() == "What is 2+2?"
    assert "<stdin>" not in user_content(server)


@pytest.mark.parametrize(
    ("args", "stdin"),
    [(["run"], ""), (["run"], None), (["run", "-"], ""), (["chat"], ""), (["run"], " \n\n")],
    ids=["run-empty", "run-devnull", "dash-empty", "chat-empty", "run-blank"],
)
def test_no_prompt_is_a_usage_error(
    run_cli: RunCli, server: ScriptedServer, args: list[str], stdin: str | None
) -> None:
    server.enqueue(Reply.text(["should not be asked"]))
    result = run_cli(args, server=server, input=stdin)

    assert result.returncode == 2
    assert_one_error(result, "prompt")
    assert result.stdout == ""
    assert server.requests == []


# --- options ---


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        (["--model", "openai:some-model"], {}, "some-model"),
        ([], {"AGENTCLI_MODEL": "openai:env-model"}, "env-model"),
        (["--model", "openai:llama3.1:8b"], {}, "llama3.1:8b"),
        (["--model", "openai:flag-model"], {"AGENTCLI_MODEL": "openai:env-model"}, "flag-model"),
    ],
    ids=["flag", "env", "colons", "flag-over-env"],
)
def test_model_selection(
    run_cli: RunCli,
    server: ScriptedServer,
    args: list[str],
    env: dict[str, str],
    expected: str,
) -> None:
    server.enqueue(Reply.text(["ok"]))
    result = run_cli(["run", *args, "hi"], server=server, env=env)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "ok\n"
    assert server.requests[0].json["model"] == expected


@pytest.mark.parametrize("env_url", [None, "http://127.0.0.1:9/v1"], ids=["no-env", "over-env"])
def test_base_url_flag(run_cli: RunCli, server: ScriptedServer, env_url: str | None) -> None:
    server.enqueue(Reply.text(["via flag"]))
    result = run_cli(["run", "--base-url", server.base_url, "hi"], env={"OPENAI_BASE_URL": env_url})

    assert result.returncode == 0, result.stderr
    assert result.stdout == "via flag\n"
    assert len(server.requests) == 1


def test_debug_flag_is_accepted(run_cli: RunCli, server: ScriptedServer) -> None:
    server.enqueue(Reply.text(["ok"]))
    result = run_cli(["run", "--debug", "hi"], server=server)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "ok\n"


def test_api_key_is_sent_as_bearer(run_cli: RunCli, server: ScriptedServer) -> None:
    server.enqueue(Reply.text(["ok"]))
    result = run_cli(["run", "hi"], server=server, env={"OPENAI_API_KEY": "sk-test-123"})

    assert result.returncode == 0, result.stderr
    assert server.requests[0].headers.get("authorization") == "Bearer sk-test-123"
    assert "sk-test-123" not in result.stdout + result.stderr


def test_no_api_key_no_authorization_header(run_cli: RunCli, server: ScriptedServer) -> None:
    server.enqueue(Reply.text(["ok"]))
    result = run_cli(["run", "hi"], server=server)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "ok\n"
    assert "authorization" not in server.requests[0].headers


def test_system_text_reaches_the_system_message(run_cli: RunCli, server: ScriptedServer) -> None:
    server.enqueue(Reply.text(["Bonjour"]))
    extra = "Always answer in French. Marker-7f3a."
    result = run_cli(["run", "--system", extra, "hi"], server=server)

    assert result.returncode == 0, result.stderr
    system = [m for m in messages(server, 0) if m["role"] == "system"]
    assert len(system) == 1
    assert extra in system[0]["content"]
    assert extra not in user_content(server)


# --- tool calls ---


def test_read_file_tool_call_round_trip(run_cli: RunCli, server: ScriptedServer) -> None:
    server.enqueue(
        Reply.tool_calls(
            [read_call("README.md", "call_readme")], text_before=["Let me ", "look."], fragment=3
        ),
        Reply.text(["The README has ", "3 lines."]),
    )
    result = run_cli(["run", "What is in the README?"], server=server)

    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Let me look.")
    assert result.stdout.rstrip("\n").endswith("The README has 3 lines.")
    assert "read_file" not in result.stdout
    assert "alpha line" not in result.stdout  # the tool result is for the model, not stdout
    assert not ANSI.search(result.stdout)
    assert "read_file" in result.stderr
    assert "README.md" in result.stderr
    assert error_lines(result.stderr) == []

    assert len(server.requests) == 2
    second = messages(server, 1)
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool"]
    assistant = second[2]
    assert assistant["content"] == "Let me look."
    [call] = assistant["tool_calls"]
    assert call["id"] == "call_readme"
    assert call["type"] == "function"
    assert call["function"]["name"] == "read_file"
    assert json.loads(call["function"]["arguments"]) == {"path": "README.md"}
    tool = second[3]
    assert tool["tool_call_id"] == "call_readme"
    assert numbered(README_LINES) in tool["content"]
    # The request is the same conversation grown by one step.
    assert second[:2] == messages(server, 0)
    assert server.requests[1].json["tools"] == server.requests[0].json["tools"]


def test_cwd_flag_is_the_workspace_root(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    server.enqueue(Reply.tool_calls([read_call("notes.txt", "call_n")]), Reply.text(["ok"]))
    result = run_cli(["run", "--cwd", str(workspace), "read"], server=server, cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    [tool] = tool_messages(server, 1)
    assert numbered(NOTES_LINES) in tool["content"]
    assert str(workspace) in messages(server, 0)[0]["content"]


@pytest.mark.parametrize(
    "style",
    ["canonical", "parallel_interleaved", "ollama_same_index", "no_index", "whole", "args_object"],
)
def test_parallel_calls_in_every_dialect(
    run_cli: RunCli, server: ScriptedServer, style: str
) -> None:
    server.enqueue(
        Reply.tool_calls(
            [read_call("README.md", "call_a"), read_call("notes.txt", "call_b")],
            style=style,  # type: ignore[arg-type]
            fragment=5,
        ),
        Reply.text(["Both read."]),
    )
    result = run_cli(["run", "Read both files"], server=server)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Both read.\n"
    assert len(server.requests) == 2
    calls = assistant_calls(server, 1)
    assert [c["id"] for c in calls] == ["call_a", "call_b"]
    assert [c["function"]["name"] for c in calls] == ["read_file", "read_file"]
    assert [json.loads(c["function"]["arguments"]) for c in calls] == [
        {"path": "README.md"},
        {"path": "notes.txt"},
    ]
    tools = tool_messages(server, 1)
    assert [t["tool_call_id"] for t in tools] == ["call_a", "call_b"]
    assert numbered(README_LINES) in tools[0]["content"]
    assert numbered(NOTES_LINES) in tools[1]["content"]
    roles = [m["role"] for m in messages(server, 1)]
    assert roles == ["system", "user", "assistant", "tool", "tool"]


def test_calls_without_ids_get_consistent_generated_ids(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    server.enqueue(
        Reply.tool_calls([read_call("README.md"), read_call("notes.txt")], style="vllm_no_id"),
        Reply.text(["Done."]),
    )
    result = run_cli(["run", "Read both"], server=server)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Done.\n"
    calls = assistant_calls(server, 1)
    ids = [c["id"] for c in calls]
    assert len(ids) == 2
    assert all(isinstance(i, str) and i for i in ids)
    assert ids[0] != ids[1]
    tools = tool_messages(server, 1)
    assert [t["tool_call_id"] for t in tools] == ids
    assert numbered(README_LINES) in tools[0]["content"]
    assert numbered(NOTES_LINES) in tools[1]["content"]


def test_malformed_json_arguments_are_reported_to_the_model(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    server.enqueue(
        Reply.tool_calls(
            [{"id": "call_bad", "name": "read_file", "arguments": '{"path": "README.md"'}]
        ),
        Reply.text(["Sorry, retrying later."]),
    )
    result = run_cli(["run", "read it"], server=server)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Sorry, retrying later.\n"
    assert len(server.requests) == 2
    [tool] = tool_messages(server, 1)
    assert tool["tool_call_id"] == "call_bad"
    assert "not valid JSON" in tool["content"]
    assert "alpha line" not in tool["content"]  # the tool did not run


def test_unknown_tool_lists_the_available_tools(run_cli: RunCli, server: ScriptedServer) -> None:
    server.enqueue(
        Reply.tool_calls([{"id": "call_x", "name": "frobnicate", "arguments": {"level": 3}}]),
        Reply.text(["I will use read_file instead."]),
    )
    result = run_cli(["run", "go"], server=server)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "I will use read_file instead.\n"
    [tool] = tool_messages(server, 1)
    assert tool["tool_call_id"] == "call_x"
    assert "frobnicate" in tool["content"]
    assert "read_file" in tool["content"]


@pytest.mark.parametrize(
    ("arguments", "needles"),
    [
        ({"path": 5}, ("path", "string")),
        ({}, ("path", "required")),
        ({"path": "README.md", "offset": 0}, ("offset", "minimum")),
    ],
    ids=["wrong-type", "missing", "below-minimum"],
)
def test_schema_violation_names_the_field(
    run_cli: RunCli, server: ScriptedServer, arguments: dict[str, Any], needles: tuple[str, ...]
) -> None:
    server.enqueue(
        Reply.tool_calls([{"id": "call_s", "name": "read_file", "arguments": arguments}]),
        Reply.text(["ok"]),
    )
    result = run_cli(["run", "go"], server=server)

    assert result.returncode == 0, result.stderr
    [tool] = tool_messages(server, 1)
    assert tool["tool_call_id"] == "call_s"
    for needle in needles:
        assert needle in tool["content"], tool["content"]
    assert "alpha line" not in tool["content"]


# --- the approval policy ---


@pytest.mark.parametrize(
    ("flags", "code"),
    [([], 4), (["--yes"], 4), (["-y"], 4), (["--deny"], 4)],
    ids=["no-terminal", "yes", "y", "deny"],
)
def test_path_outside_the_workspace(
    run_cli: RunCli,
    server: ScriptedServer,
    workspace: Path,
    tmp_path: Path,
    flags: list[str],
    code: int,
) -> None:
    server.enqueue(
        Reply.tool_calls([read_call("../outside.txt", "call_out")]),
        Reply.text(["Finished."]),
    )
    args = ["run", *flags, "--cwd", str(workspace), "read the outside file"]
    result = run_cli(args, server=server, cwd=tmp_path)

    assert result.returncode == code, result.stderr
    assert result.stdout == "Finished.\n"
    assert len(server.requests) == 2
    [tool] = tool_messages(server, 1)
    assert tool["tool_call_id"] == "call_out"
    if code == 0:
        assert numbered(OUTSIDE_LINES) in tool["content"]
    else:
        assert "denied" in tool["content"].lower()
        assert OUTSIDE_LINES[0] not in tool["content"]
    # The hint is one line of its own (tool activity lines may repeat the reason), and it
    # names what allows the place — a directory added by a person — not --yes.
    hints = [
        line
        for line in result.stderr.splitlines()
        if line.startswith("agentcli:") and "--add-dir" in line
    ]
    if not flags:
        assert len(hints) == 1, result.stderr
        assert "--yes" not in hints[0]
    if code == 0:
        assert hints == []


@pytest.mark.parametrize("target", ["absolute", "symlink"])
def test_other_ways_out_of_the_workspace_are_denied(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, tmp_path: Path, target: str
) -> None:
    outside = tmp_path / "outside.txt"
    if target == "symlink":
        (workspace / "link.txt").symlink_to(outside)
        path = "link.txt"
    else:
        path = str(outside)
    server.enqueue(Reply.tool_calls([read_call(path, "call_out")]), Reply.text(["Finished."]))
    result = run_cli(["run", "read it"], server=server)

    assert result.returncode == 4, result.stderr
    [tool] = tool_messages(server, 1)
    assert "denied" in tool["content"].lower()
    assert OUTSIDE_LINES[0] not in tool["content"]


def test_chat_with_piped_stdin_runs_tools_like_run(run_cli: RunCli, server: ScriptedServer) -> None:
    server.enqueue(
        Reply.tool_calls([read_call("README.md", "call_1"), read_call("../outside.txt", "call_2")]),
        Reply.text(["Read one of two."]),
    )
    result = run_cli(["chat"], server=server, input="read both files\n")

    assert result.returncode == 4, result.stderr
    assert result.stdout == "Read one of two.\n"
    assert "read_file" in result.stderr
    assert user_content(server).strip() == "read both files"
    tools = tool_messages(server, 1)
    assert numbered(README_LINES) in tools[0]["content"]
    assert "denied" in tools[1]["content"].lower()


def test_denial_does_not_stop_other_calls(run_cli: RunCli, server: ScriptedServer) -> None:
    server.enqueue(
        Reply.tool_calls([read_call("../outside.txt", "call_1"), read_call("README.md", "call_2")]),
        Reply.text(["Partly done."]),
    )
    result = run_cli(["run", "read both"], server=server)

    assert result.returncode == 4, result.stderr
    assert result.stdout == "Partly done.\n"
    tools = tool_messages(server, 1)
    assert [t["tool_call_id"] for t in tools] == ["call_1", "call_2"]
    assert "denied" in tools[0]["content"].lower()
    assert numbered(README_LINES) in tools[1]["content"]


# --- step limit ---


def test_max_steps_reached(run_cli: RunCli, server: ScriptedServer) -> None:
    server.enqueue(
        Reply.tool_calls([read_call("README.md", "call_1")]),
        Reply.text(["never requested"]),
    )
    result = run_cli(["run", "--max-steps", "1", "loop"], server=server)

    assert result.returncode == 3
    assert_one_error(result, "--max-steps")
    assert len(server.requests) == 1
    assert server.pending == 1


def test_default_step_limit_is_20(run_cli: RunCli, server: ScriptedServer) -> None:
    server.enqueue(*(Reply.tool_calls([read_call("README.md")]) for _ in range(21)))
    result = run_cli(["run", "loop forever"], server=server)

    assert result.returncode == 3
    assert_one_error(result, "--max-steps")
    assert len(server.requests) == 20


# --- --output json ---


def test_output_json_summary(run_cli: RunCli, server: ScriptedServer) -> None:
    server.enqueue(
        Reply.tool_calls(
            [read_call("README.md", "call_ok"), read_call("../outside.txt", "call_no")],
            text_before=["Reading."],
            usage=(12, 7),
        ),
        Reply.text(["The answer", " is 42."], usage=(30, 4)),
    )
    result = run_cli(["run", "--output", "json", "-m", "openai:json-model", "go"], server=server)

    assert result.returncode == 4, result.stderr
    doc = json.loads(result.stdout)  # the whole of stdout is one JSON document
    assert isinstance(doc, dict)
    assert doc["text"] == "The answer is 42."
    assert doc["exitCode"] == 4
    assert doc["status"] == "finished"
    assert doc["error"] is None
    assert "json-model" in doc["model"]
    assert doc["steps"] == 2
    usage = doc["usage"]
    assert usage["inputTokens"] == 42
    assert usage["outputTokens"] == 11
    assert usage["totalTokens"] == 53
    assert isinstance(doc["threadId"], str) and doc["threadId"]
    assert isinstance(doc["runId"], str) and doc["runId"]

    documented = {"text", "status", "exitCode", "error", "model", "steps", "usage", "toolCalls"}
    assert documented | {"threadId", "runId"} <= doc.keys()
    calls = doc["toolCalls"]
    assert [c["id"] for c in calls] == ["call_ok", "call_no"]
    for call in calls:
        assert {
            "id",
            "name",
            "arguments",
            "result",
            "error",
            "approval",
            "latencyMs",
        } <= call.keys()
    ok, no = calls
    assert ok["name"] == "read_file"
    assert ok["arguments"] == {"path": "README.md"}
    assert numbered(README_LINES) in ok["result"]
    assert ok["error"] is None
    assert ok["approval"]["decision"] == "allow"
    assert ok["approval"]["by"] == "auto"
    assert ok["approval"]["risk"] == "low"
    assert isinstance(ok["latencyMs"], int) and ok["latencyMs"] >= 0

    assert no["arguments"] == {"path": "../outside.txt"}
    assert no["approval"]["decision"] == "deny"
    assert no["approval"]["by"] == "auto"
    assert no["approval"]["risk"] not in ("low", None)
    assert no["error"]
    assert OUTSIDE_LINES[0] not in (no["result"] or "")

    # json mode keeps stdout for the document only: tool activity is not printed there
    assert result.stdout.strip().startswith("{") and result.stdout.strip().endswith("}")
    assert len(server.requests) == 2


def test_output_json_on_failure(run_cli: RunCli, server: ScriptedServer) -> None:
    server.enqueue(Reply.error(400, "bad request body"))
    result = run_cli(["run", "--output", "json", "go"], server=server)

    assert result.returncode == 1
    doc = json.loads(result.stdout)
    assert doc["exitCode"] == 1
    assert doc["status"] == "error"
    assert "bad request body" in doc["error"]
    assert doc["toolCalls"] == []
    assert_one_error(result, "bad request body")


def test_output_json_usage_error_is_not_json(run_cli: RunCli, server: ScriptedServer) -> None:
    result = run_cli(["run", "--output", "json", "--max-steps", "0", "go"], server=server)

    assert result.returncode == 2
    assert_one_error(result, "--max-steps")
    assert server.requests == []


def test_line_separators_inside_the_json_do_not_cut_an_event(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    """A server sends U+2028, U+2029 and NEL unescaped inside JSON strings (JSON allows
    it); they end no SSE line, so the event stays whole and the text is shown (visibly)."""
    server.enqueue(Reply.text(["one\u2028two", "\u2029three\x85four"]))
    result = run_cli(["run", "go"], server=server)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "one<U+2028>two<U+2029>three<U+0085>four\n", result.stdout


def _user_message(server: ScriptedServer) -> str:
    messages = server.requests[-1].json["messages"]
    return next(m["content"] for m in reversed(messages) if m["role"] == "user")


def test_a_path_mentioned_in_a_run_prompt_attaches_the_file_as_in_chat(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    server.enqueue(Reply.text(["ok"]))
    result = run_cli(["run", "explain @notes.txt"], server=server)
    assert result.returncode == 0, result.stderr
    message = _user_message(server)
    assert message.startswith("explain @notes.txt")
    assert '<file path="notes.txt">\nfirst note\nsecond note\n' in message
    assert "attached notes.txt" in result.stderr


def test_a_mention_that_cannot_attach_is_one_warning_and_piped_text_is_never_searched(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    server.enqueue(Reply.text(["ok"]))
    result = run_cli(["run", "explain @missing.py"], server=server, input="see @notes.txt\n")
    assert result.returncode == 0, result.stderr
    message = _user_message(server)
    assert "<file" not in message  # the piped @notes.txt is context, not a request
    assert message.endswith("<stdin>\nsee @notes.txt\n</stdin>")
    warnings = [line for line in result.stderr.splitlines() if "@missing.py" in line]
    assert warnings == ["agentcli: @missing.py: no such file in the workspace; not attached"]
