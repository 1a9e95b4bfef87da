"""`agentcli mcp serve` from outside: the installed executable, driven by the `mcp` SDK's
client over stdio and streamable HTTP, by agentcli itself (`mcp add` of `agentcli mcp
serve`, then a scripted model's run) and by the MCP inspector's CLI when it is installed
(.ci/run installs it when npm exists and names it in AGENTCLI_TEST_MCP_INSPECTOR)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest

import agentcli
from tests.agui_helpers import free_port, wait_ready
from tests.conftest import AGENTCLI, NOTES_LINES, OUTSIDE_LINES, RunCli, StartCli, build_env
from tests.scripted_server import Reply, ScriptedServer
from tests.test_mcp import tool_messages

mcp = pytest.importorskip("mcp")
types = pytest.importorskip("mcp_types")

INSPECTOR = os.environ.get("AGENTCLI_TEST_MCP_INSPECTOR", "")
Elicit = Callable[[Any, Any], Awaitable[Any]]


@asynccontextmanager
async def lent(
    cli_home: Path,
    workspace: Path,
    *flags: str,
    elicit: Elicit | None = None,
    env: dict[str, str] | None = None,
) -> AsyncIterator[Any]:
    """A client session with `agentcli mcp serve FLAGS` on stdio, in the workspace."""
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=str(AGENTCLI),
        args=["mcp", "serve", *flags],
        env=build_env(cli_home, extra=env),
        cwd=str(workspace),
    )
    async with (
        stdio_client(params) as (read, write),
        mcp.ClientSession(read, write, elicitation_callback=elicit) as session,
    ):
        await session.initialize()
        yield session


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def run(body: Callable[[], Awaitable[None]]) -> None:
    async def bounded() -> None:
        with anyio.fail_after(120):  # a bound for a hang, never a measure of speed
            await body()

    anyio.run(bounded)


def test_the_tools_are_listed_with_annotations_from_their_risks(
    cli_home: Path, workspace: Path
) -> None:
    async def body() -> None:
        async with lent(cli_home, workspace) as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            read = tools["read_file"].annotations
            assert read.read_only_hint is True and read.destructive_hint is False
            assert read.open_world_hint is False
            for name in ("write_file", "edit_file", "run_shell", "run_python"):
                hints = tools[name].annotations
                assert hints.read_only_hint is False and hints.destructive_hint is True, name
            fetch = tools["fetch_url"].annotations
            assert fetch.read_only_hint is True and fetch.open_world_hint is True
            assert tools["run_shell"].annotations.open_world_hint is False  # no --allow-network
            assert "ask_user" not in tools  # the client's agent asks its own user
            assert "agentcli risk: low" in tools["read_file"].description
            assert tools["read_file"].input_schema["required"] == ["path"]

    run(body)


def test_read_file_and_run_shell_answer_with_text_and_structured_content(
    cli_home: Path, workspace: Path
) -> None:
    async def body() -> None:
        async with lent(cli_home, workspace) as session:
            read = await session.call_tool("read_file", {"path": "notes.txt"})
            assert not read.is_error
            assert all(line in text_of(read) for line in NOTES_LINES)
            shell = await session.call_tool("run_shell", {"command": "echo hi; ls"})
            assert not shell.is_error, text_of(shell)
            data = shell.structured_content
            assert data["exitCode"] == 0 and data["timedOut"] is False
            assert data["output"].splitlines() == ["hi", "README.md", "notes.txt"]
            assert "exit code 0" in text_of(shell)  # text content always
            failed = await session.call_tool("run_shell", {"command": "ls no-such-file"})
            assert failed.is_error and failed.structured_content["exitCode"] == 2
            assert "no-such-file" in failed.structured_content["output"]
            wrong = await session.call_tool("read_file", {"paht": "notes.txt"})
            assert wrong.is_error and "invalid arguments for read_file" in text_of(wrong)

    run(body)


def test_the_boundary_holds_for_a_client(cli_home: Path, workspace: Path) -> None:
    outside = workspace.parent / "outside.txt"

    async def body() -> None:
        async with lent(cli_home, workspace, "--yes") as session:
            read = await session.call_tool("read_file", {"path": str(outside)})
            assert read.is_error and "outside the workspace" in text_of(read)
            assert OUTSIDE_LINES[0] not in text_of(read)
            # --yes does not reach beyond the boundary; the sandbox keeps the command in too
            shell = await session.call_tool("run_shell", {"command": f"cat {outside}"})
            assert OUTSIDE_LINES[0] not in text_of(shell)
            assert OUTSIDE_LINES[0] not in json.dumps(shell.structured_content)

    run(body)


def test_beyond_the_boundary_even_an_accepting_client_is_not_asked(
    cli_home: Path, workspace: Path
) -> None:
    """Only a person may let a tool beyond the boundary; a client's answer may be a
    program's."""
    outside = workspace.parent / "outside.txt"
    asked: list[Any] = []

    async def body() -> None:
        elicit = answering("accept", asked=asked)
        async with lent(cli_home, workspace, elicit=elicit) as session:
            read = await session.call_tool("read_file", {"path": str(outside)})
            assert read.is_error and "--add-dir" in text_of(read), text_of(read)
            assert OUTSIDE_LINES[0] not in text_of(read)

    run(body)
    assert asked == []


def test_a_call_that_would_ask_is_refused_without_elicitation_saying_which_flag(
    cli_home: Path, workspace: Path
) -> None:
    async def body() -> None:
        async with lent(cli_home, workspace) as session:
            result = await session.call_tool("write_file", {"path": "new.txt", "content": "x"})
            assert result.is_error
            assert "offers no elicitation" in text_of(result) and "--yes" in text_of(result)
            assert "--allow RULE" in text_of(result)

    run(body)
    assert not (workspace / "new.txt").exists()


def test_a_call_that_would_ask_runs_under_yes(cli_home: Path, workspace: Path) -> None:
    async def body() -> None:
        async with lent(cli_home, workspace, "--yes") as session:
            result = await session.call_tool("write_file", {"path": "new.txt", "content": "x"})
            assert not result.is_error, text_of(result)

    run(body)
    assert (workspace / "new.txt").read_text() == "x"


def test_an_allow_rule_and_a_forbid_rule_decide_as_in_a_run(
    cli_home: Path, workspace: Path
) -> None:
    async def body() -> None:
        flags = ("--allow", "write_file", "--forbid", "run_shell(rm *)", "--yes")
        async with lent(cli_home, workspace, *flags) as session:
            wrote = await session.call_tool("write_file", {"path": "a.txt", "content": "a"})
            assert not wrote.is_error, text_of(wrote)
            removed = await session.call_tool("run_shell", {"command": "rm notes.txt"})
            assert removed.is_error and "denied" in text_of(removed)

    run(body)
    assert (workspace / "a.txt").exists() and (workspace / "notes.txt").exists()


def answering(action: str, choice: str | None = None, asked: list[Any] | None = None) -> Elicit:
    async def elicit(context: Any, params: Any) -> Any:
        if asked is not None:
            asked.append(params)
        content = {"choice": choice or params.requested_schema["properties"]["choice"]["default"]}
        return types.ElicitResult(action=action, content=content if action == "accept" else None)

    return elicit


def test_a_medium_call_is_asked_by_elicitation_and_runs_when_accepted(
    cli_home: Path, workspace: Path
) -> None:
    asked: list[Any] = []

    async def body() -> None:
        async with lent(cli_home, workspace, elicit=answering("accept", asked=asked)) as session:
            result = await session.call_tool("write_file", {"path": "new.txt", "content": "x"})
            assert not result.is_error, text_of(result)

    run(body)
    assert (workspace / "new.txt").read_text() == "x"
    [question] = asked
    assert "write_file" in question.message and "medium risk" in question.message
    offered = [c["const"] for c in question.requested_schema["properties"]["choice"]["oneOf"]]
    assert offered == ["once", "session", "deny"]  # never "project": no rules written


def test_a_high_call_declined_by_the_client_is_denied(cli_home: Path, workspace: Path) -> None:
    asked: list[Any] = []

    async def body() -> None:
        elicit = answering("decline", asked=asked)
        async with lent(cli_home, workspace, elicit=elicit) as session:
            result = await session.call_tool("run_shell", {"command": "rm notes.txt"})
            assert result.is_error and "declined" in text_of(result)

    run(body)
    assert (workspace / "notes.txt").exists()
    assert asked and "rm notes.txt" in asked[0].message and "high risk" in asked[0].message


def test_deny_refuses_without_asking_the_client(cli_home: Path, workspace: Path) -> None:
    asked: list[Any] = []

    async def body() -> None:
        elicit = answering("accept", asked=asked)
        async with lent(cli_home, workspace, "--deny", elicit=elicit) as session:
            result = await session.call_tool("write_file", {"path": "new.txt", "content": "x"})
            assert result.is_error and "--deny" in text_of(result)

    run(body)
    assert asked == [] and not (workspace / "new.txt").exists()


def sleepers(marker: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        if process.info["cmdline"] == ["sleep", marker]:
            found.append(process)
    return found


def test_a_cancelled_call_stops_its_command_and_progress_came_first(
    cli_home: Path, workspace: Path
) -> None:
    marker = str(900000 + os.getpid() % 10000)  # this test's sleep, told from any other
    progress: list[str | None] = []

    async def body() -> None:
        async with lent(cli_home, workspace) as session:
            started = anyio.Event()

            async def on_progress(amount: float, total: float | None, message: str | None) -> None:
                progress.append(message)
                started.set()

            async with anyio.create_task_group() as group:

                async def call() -> None:
                    await session.call_tool(
                        "run_shell",
                        {"command": f"echo started; sleep {marker}"},
                        progress_callback=on_progress,
                    )

                group.start_soon(call)
                await started.wait()  # the command printed: it is running
                assert sleepers(marker), "the command's sleep is not running"
                group.cancel_scope.cancel()  # the SDK sends notifications/cancelled
            # The server stays usable; the command is gone (its process group killed).
            with anyio.fail_after(30):
                while sleepers(marker):
                    await anyio.sleep(0.05)
            again = await session.call_tool("read_file", {"path": "notes.txt"})
            assert not again.is_error

    run(body)
    assert progress and "started" in (progress[0] or "")


def test_api_keys_never_reach_a_command(cli_home: Path, workspace: Path) -> None:
    async def body() -> None:
        keys = {"OPENAI_API_KEY": "sk-served-secret", "ANTHROPIC_API_KEY": "sk-ant-secret"}
        async with lent(cli_home, workspace, "--yes", env=keys) as session:
            result = await session.call_tool("run_shell", {"command": "env"})
            assert not result.is_error, text_of(result)
            assert "PATH=" in result.structured_content["output"]
            assert "secret" not in text_of(result)

    run(body)


# --- streamable HTTP on loopback


@pytest.fixture
def http_serve(start_cli: StartCli) -> Callable[..., tuple[str, subprocess.Popen[str]]]:
    def start(*flags: str) -> tuple[str, subprocess.Popen[str]]:
        port = free_port()
        process = start_cli(
            ["mcp", "serve", "--http", str(port), "--token-env", "MCP_TOKEN", *flags],
            env={"MCP_TOKEN": "served-token"},
        )
        wait_ready(process, f"http://127.0.0.1:{port}/", any_answer=True)
        return f"http://127.0.0.1:{port}/mcp", process

    return start


@asynccontextmanager
async def over_http(url: str, token: str, elicit: Elicit | None = None) -> AsyncIterator[Any]:
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with (
        create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        mcp.ClientSession(read, write, elicitation_callback=elicit) as session,
    ):
        await session.initialize()
        yield session


def test_streamable_http_lends_the_tools_to_a_client_with_the_token(
    http_serve: Callable[..., tuple[str, subprocess.Popen[str]]], workspace: Path
) -> None:
    url, process = http_serve()
    asked: list[Any] = []

    async def body() -> None:
        async with over_http(url, "served-token", answering("accept", asked=asked)) as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert tools["read_file"].annotations.read_only_hint is True
            read = await session.call_tool("read_file", {"path": "README.md"})
            assert "Demo project" in text_of(read)
            wrote = await session.call_tool("write_file", {"path": "h.txt", "content": "h"})
            assert not wrote.is_error, text_of(wrote)

    run(body)
    assert (workspace / "h.txt").read_text() == "h" and len(asked) == 1
    process.send_signal(signal.SIGTERM)  # uvicorn stops, then ends as the signal says
    assert process.wait(timeout=30) in (0, -signal.SIGTERM)


def test_streamable_http_refuses_a_wrong_token_a_foreign_host_and_origin(
    http_serve: Callable[..., tuple[str, subprocess.Popen[str]]],
) -> None:
    import httpx

    url, _ = http_serve()
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    plain = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    auth = {**plain, "Authorization": "Bearer served-token"}
    assert httpx.post(url, json=body, headers=plain).status_code == 401
    wrong = {**plain, "Authorization": "Bearer nope"}
    assert httpx.post(url, json=body, headers=wrong).status_code == 401
    rebound = httpx.post(url, json=body, headers={**auth, "Host": "evil.example"})
    assert rebound.status_code == 403 and "not this server's" in rebound.json()["error"]
    page = httpx.post(url, json=body, headers={**auth, "Origin": "https://evil.example"})
    assert page.status_code == 403 and "Origin" in page.json()["error"]


def test_http_without_token_env_prints_a_token_on_stderr_and_nothing_on_stdout(
    start_cli: StartCli,
) -> None:
    port = free_port()
    process = start_cli(["mcp", "serve", "--http", str(port)])
    wait_ready(process, f"http://127.0.0.1:{port}/", any_answer=True)
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=30)
    assert out == ""
    [line] = [line for line in err.splitlines() if line.startswith("agentcli: token: ")]
    assert len(line.split()[2]) >= 24


def test_bad_flags_are_one_line_and_exit_2(run_cli: RunCli) -> None:
    for args, needle in (
        (["--http", "70000"], "between 1 and 65535"),
        (["--token-env", "X"], "--token-env is for --http"),
        (["--http", "8000", "--token-env", "EMPTY_TOKEN_VAR"], "is empty"),
        (["--yes", "--deny"], "contradict"),
    ):
        result = run_cli(["mcp", "serve", *args])
        assert result.returncode == 2, (args, result.stderr)
        assert needle in result.stderr and result.stdout == ""


def test_a_port_in_use_is_one_line_and_exit_2(run_cli: RunCli, cli_home: Path) -> None:
    import socket

    from tests.conftest import assert_one_error

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_cli(["mcp", "serve", "--http", str(port)])
    assert result.returncode == 2 and result.stdout == ""
    assert_one_error(result, f"--http {port}", "cannot listen")
    assert not list((cli_home / "agentcli").rglob("*.jsonl"))  # nothing was started


# --- agentcli as the client, and the inspector


def test_agentcli_itself_uses_a_served_agentcli(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    # The outer agentcli runs the server in its sandbox, which sees the workspace and the
    # system: agentcli's own install is a place it is given to read.
    install = [f"{Path(agentcli.__file__).parents[1]}:ro", f"{sys.prefix}:ro"]
    dirs = [word for place in install for word in ("--dir", place)]
    added = run_cli(["mcp", "add", "lent", *dirs, "--", str(AGENTCLI), "mcp", "serve"])
    assert added.returncode == 0, added.stderr
    call = {"id": "call_1", "name": "mcp__lent__read_file", "arguments": {"path": "notes.txt"}}
    server.enqueue(Reply.tool_calls([call]), Reply.text(["Read."]))
    result = run_cli(["run", "--yes", "read notes.txt"], server=server, timeout=120)
    assert result.returncode == 0, result.stderr
    [message] = tool_messages(server, 1)
    assert all(line in message["content"] for line in NOTES_LINES), message["content"]


@pytest.mark.skipif(
    not INSPECTOR or not Path(INSPECTOR).exists(),
    reason="the MCP inspector is not installed (.ci/run installs it when npm exists)",
)
def test_the_mcp_inspector_cli_lists_and_calls_the_tools(cli_home: Path, workspace: Path) -> None:
    def inspect(*args: str) -> Any:
        command = [INSPECTOR, "--cli", str(AGENTCLI), "mcp", "serve", *args]
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            env=build_env(cli_home, extra={"PATH": os.environ["PATH"]}),
            cwd=workspace,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    listed = inspect("--method", "tools/list")
    names = {tool["name"]: tool for tool in listed["tools"]}
    assert names["read_file"]["annotations"]["readOnlyHint"] is True
    called = inspect(
        "--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "path=notes.txt"
    )
    assert NOTES_LINES[0] in called["content"][0]["text"]


def test_configured_tools_are_lent_only_with_the_flag(cli_home: Path, workspace: Path) -> None:
    from tests.test_mcp import TIME_SERVER, time_server, write_config

    if not TIME_SERVER.exists():
        pytest.skip("mcp-server-time not installed")
    write_config(cli_home, time_server('sandbox = "none"'))

    async def body() -> None:
        async with lent(cli_home, workspace) as session:
            names = {tool.name for tool in (await session.list_tools()).tools}
            assert "read_file" in names and not any(n.startswith("mcp__") for n in names)
        async with lent(cli_home, workspace, "--with-configured", "--yes") as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            now = tools["mcp__time__get_current_time"]
            assert now.annotations.open_world_hint is True  # another server's reach is unseen
            result = await session.call_tool(now.name, {"timezone": "UTC"})
            assert not result.is_error and "UTC" in text_of(result), text_of(result)

    run(body)


def test_stdout_carries_the_protocol_alone(cli_home: Path, workspace: Path) -> None:
    """Raw JSON-RPC lines in; every line out is one JSON-RPC message, whatever the tools
    and the configuration's warnings print."""
    import selectors

    from tests.test_mcp import write_config

    write_config(cli_home, "[no_such_table]\nkey = 1\n")  # a warning, said on stderr
    hello = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    }
    command = {"command": "echo printed; ls"}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "run_shell", "arguments": command},
        },
    ]
    process = subprocess.Popen(
        [str(AGENTCLI), "mcp", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=build_env(cli_home),
        cwd=workspace,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("".join(json.dumps(line) + "\n" for line in lines))
    process.stdin.flush()
    answers: list[dict[str, Any]] = []
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while not any(answer.get("id") == 2 for answer in answers):
            assert selector.select(timeout=60), "no answer from mcp serve"
            line = process.stdout.readline()
            assert line, process.stderr.read() if process.stderr else ""
            answers.append(json.loads(line))  # a line that is not JSON fails here
    process.stdin.close()  # the client is done: the server ends
    rest = process.stdout.read()
    err = process.stderr.read() if process.stderr is not None else ""
    assert process.wait(timeout=60) == 0, err
    process.stdout.close()
    if process.stderr is not None:
        process.stderr.close()
    answers += [json.loads(line) for line in rest.splitlines()]
    assert all(answer["jsonrpc"] == "2.0" for answer in answers)
    call = next(answer for answer in answers if answer.get("id") == 2)
    assert call["result"]["structuredContent"]["output"].startswith("printed\n")
    assert "no_such_table" in err  # the warning went to stderr


def test_a_line_that_is_not_json_rpc_is_answered_and_said_once(
    cli_home: Path, workspace: Path
) -> None:
    """JSON-RPC 2.0: a line that is not JSON gets a parse error, JSON that is not a message
    an invalid request, both with a null id; good lines around them are still answered.
    Stdin stays open until the three answers are read (a client hangs up only after)."""
    import threading

    ping = '{"jsonrpc":"2.0","id":7,"method":"ping"}'
    server = subprocess.Popen(
        [str(AGENTCLI), "mcp", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=build_env(cli_home),
        cwd=workspace,
    )
    watchdog = threading.Timer(60, server.kill)  # a hang fails the test, never stalls it
    watchdog.start()
    try:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(f'not json\n{ping}\n{{"a": 1}}\n')
        server.stdin.flush()
        replies = [json.loads(server.stdout.readline()) for _ in range(3)]
        _, stderr = server.communicate(input=None)
    finally:
        watchdog.cancel()
        server.kill()
    by_id = sorted(replies, key=lambda reply: reply.get("id") is not None)
    assert [reply.get("id") for reply in by_id] == [None, None, 7]
    codes = sorted(reply["error"]["code"] for reply in by_id[:2])
    assert codes == [-32700, -32600]
    assert by_id[2]["result"] == {}
    assert stderr.count("not a JSON-RPC message") == 1
    assert server.returncode == 0


def piped(cli_home: Path, workspace: Path, lines: list[dict[str, Any]], *flags: str) -> Any:
    """`agentcli mcp serve` as a script drives it: every request written, stdin closed at
    once (as `printf ... | agentcli mcp serve` does), then what it wrote until it ended."""
    result = subprocess.run(
        [str(AGENTCLI), "mcp", "serve", *flags],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        env=build_env(cli_home),
        cwd=workspace,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return {answer.get("id"): answer for answer in map(json.loads, result.stdout.splitlines())}


def hello_lines(capabilities: dict[str, Any]) -> list[dict[str, Any]]:
    hello = {
        "protocolVersion": "2025-06-18",
        "capabilities": capabilities,
        "clientInfo": {"name": "script", "version": "1"},
    }
    return [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]


def call_line(request_id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def test_requests_in_flight_when_stdin_ends_are_answered_before_the_server_ends(
    cli_home: Path, workspace: Path
) -> None:
    """The SDK ends the session at the end of stdin: a call still running was answered
    "Connection closed". Here a slow command and a quick listing both answer."""
    (workspace / "here.txt").write_text("x")
    lines = [
        *hello_lines({}),
        call_line(2, "run_shell", {"command": "sleep 1; echo slow"}),
        call_line(3, "list_directory", {"path": "."}),
    ]
    answers = piped(cli_home, workspace, lines, "--yes")
    assert answers[2]["result"]["structuredContent"]["output"] == "slow\n", answers[2]
    assert "here.txt" in answers[3]["result"]["content"][0]["text"], answers[3]


def test_what_the_server_asks_after_stdin_ended_is_denied_not_waited_for(
    cli_home: Path, workspace: Path
) -> None:
    """A client that offered elicitation and closed stdin cannot answer it: the call it
    would allow is denied, saying why, and the server ends."""
    lines = [
        *hello_lines({"elicitation": {}}),
        call_line(2, "write_file", {"path": "new.txt", "content": "hi"}),
    ]
    answers = piped(cli_home, workspace, lines)
    text = answers[2]["result"]["content"][0]["text"]
    assert text.startswith("denied: ") and "the client closed stdin" in text, text
    assert "offers no elicitation" not in text  # it did offer it: it could not answer
    assert not (workspace / "new.txt").exists()


@pytest.mark.parametrize("request_id", [{"a": 1}, [1], None, True])
def test_a_cancel_naming_no_request_is_ignored_and_the_server_answers_on(
    cli_home: Path, workspace: Path, request_id: Any
) -> None:
    """notifications/cancelled whose requestId is no JSON-RPC id (an object, a list) named
    nothing to cancel: it ended the server with an internal error."""
    cancel = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": request_id},
    }
    lines = [*hello_lines({}), cancel, {"jsonrpc": "2.0", "id": 2, "method": "ping"}]
    answers = piped(cli_home, workspace, lines)
    assert answers[2] == {"jsonrpc": "2.0", "id": 2, "result": {}}, answers
