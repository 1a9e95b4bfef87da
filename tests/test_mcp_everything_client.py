"""The MCP client capabilities against `@modelcontextprotocol/server-everything` (npm), which
shows the tools that use them only to a client that declares them: sampling answered by the
session's model (the scripted server) after approval in the REPL or by a rule, its form
asked in the terminal, roots, progress of a long-running operation, and its logs. Skipped
where .ci/run could not install it (no npm)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import RunCli
from tests.scripted_server import Reply, ScriptedServer
from tests.test_mcp import events_of, toml_str, tool_messages, write_config
from tests.test_mcp_client_features import customs
from tests.test_mcp_everything import EVERYTHING, call, everything, pytestmark  # noqa: F401
from tests.test_repl import APPROVAL, CTRL_D, StartChat, chat  # noqa: F401 (the fixture)
from tests.test_repl_screens import StartTerminal, term, turn  # noqa: F401 (the fixture)

EVERYTHING_SYSTEM = "You are a helpful test server."
# The form of trigger-elicitation-request after `name`, in its order: each kept by Enter
# (its default, or left out).
FORM_REST = [
    "check",
    "firstLine",
    "email",
    "homepage",
    "birthdate",
    "integer",
    "number",
    "untitledSingleSelectEnum",
    "untitledMultipleSelectEnum",
    "titledSingleSelectEnum",
    "titledMultipleSelectEnum",
    "legacyTitledEnum",
]


def test_the_tools_that_need_client_capabilities_are_offered(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, workspace: Path
) -> None:
    everything(cli_home)
    server.enqueue(Reply.tool_calls([call("c1", "get-roots-list")]), Reply.text(["Done."]))
    result = run_cli(["run", "roots", "--allow", "mcp__ev__*"], server=server, timeout=120)

    assert result.returncode == 0, result.stderr
    offered = {t["function"]["name"] for t in server.requests[0].json["tools"]}
    for tool in ("trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"):
        assert f"mcp__ev__{tool}" in offered
    [roots] = tool_messages(server, 1)
    assert workspace.as_uri() in roots["content"]


def test_sampling_allowed_by_a_rule_is_answered_by_the_session_model(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    everything(cli_home)
    server.enqueue(
        Reply.tool_calls([call("c1", "trigger-sampling-request", prompt="a haiku", maxTokens=40)]),
        Reply.text(["Old pond, a frog."]),  # the sampling request, from the server
        Reply.text(["Done."]),
    )
    result = run_cli(
        ["run", "go", "--allow", "mcp__ev__*", "--allow", "mcp_sampling(ev)"],
        server=server,
        timeout=120,
    )

    assert result.returncode == 0, result.stderr
    sampling = server.requests[1].json
    assert sampling["messages"][0] == {"role": "system", "content": EVERYTHING_SYSTEM}
    assert "a haiku" in sampling["messages"][1]["content"]
    [answer] = tool_messages(server, 2)
    assert "LLM sampling result" in answer["content"] and "Old pond, a frog." in answer["content"]


def test_progress_of_a_long_running_operation_is_in_the_event_stream(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    everything(cli_home)
    server.enqueue(
        Reply.tool_calls([call("c1", "trigger-long-running-operation", duration=1.5, steps=3)]),
        Reply.text(["Done."]),
    )
    result = run_cli(
        ["run", "go", "-o", "jsonl", "--allow", "mcp__ev__*"], server=server, timeout=120
    )

    assert result.returncode == 0, result.stderr
    progress = [(p["progress"], p["total"]) for p in customs(result.stdout, "progress")]
    assert progress == [(1, 3), (2, 3), (3, 3)]


def test_its_logs_are_shown_at_the_configured_level(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    write_config(
        cli_home,
        f"[mcp.servers.ev]\ncommand = {toml_str(EVERYTHING)}\n"
        'trusted = true\nlog_level = "debug"\n',
    )
    server.enqueue(
        Reply.tool_calls([call("c1", "toggle-simulated-logging")]), Reply.text(["Done."])
    )
    result = run_cli(
        ["run", "go", "-o", "jsonl", "--allow", "mcp__ev__*"], server=server, timeout=120
    )

    assert result.returncode == 0, result.stderr
    logs = [e["value"] for e in events_of(result.stdout) if e.get("name") == "mcp_log"]
    assert any("message" in log["message"] and log["server"] == "ev" for log in logs), logs
    assert "agentcli: MCP server ev [" in result.stderr


def test_logs_between_turns_are_drawn_above_the_prompt_not_into_it(
    term: StartTerminal,  # noqa: F811
    server: ScriptedServer,
    cli_home: Path,
) -> None:
    """server-everything's simulated logging goes on every 5 seconds after its turn: each
    message is a line above the prompt, which is drawn again with what was being typed."""
    write_config(
        cli_home,
        f"[mcp.servers.ev]\ncommand = {toml_str(EVERYTHING)}\n"
        'trusted = true\nlog_level = "debug"\n',
    )
    server.enqueue(
        Reply.tool_calls([call("c1", "toggle-simulated-logging")]), Reply.text(["Started."])
    )
    terminal = term("chat", "--allow", "mcp__ev__*", columns=120)  # a log line in one row
    turn(terminal, "start logging")
    after_turn = len(terminal.lines())
    terminal.send("half typed")
    terminal.wait_for(
        lambda: any("MCP server ev [" in line for line in terminal.lines()[after_turn - 1 :]),
        timeout=15,
    )
    terminal.settle()
    lines = terminal.lines()
    assert lines[-1] == "› half typed"  # the prompt, below the news, with the draft
    assert all(line.startswith("  MCP server ev [") for line in lines[after_turn - 1 : -1]), lines
    terminal.send("\x15" + CTRL_D)  # Ctrl-U clears the draft; Ctrl-D leaves
    assert terminal.finish() == 0


def test_repl_answers_its_form_and_approves_its_sampling(
    chat: StartChat,  # noqa: F811
    server: ScriptedServer,
    cli_home: Path,
) -> None:
    everything(cli_home)
    server.enqueue(
        Reply.tool_calls([call("c1", "trigger-elicitation-request")]),
        Reply.tool_calls([call("c2", "trigger-sampling-request", prompt="a colour")]),
        Reply.text(["Vermilion"]),
        Reply.text(["All done."]),
    )
    session = chat("--allow", "mcp__ev__*")
    session.submit("ask me")
    session.expect("MCP server ev asks you:", timeout=60)
    session.expect(APPROVAL)
    session.send("y")
    session.expect("name:")
    session.send("Ada Lovelace\r")
    for name in FORM_REST:
        session.expect(f"{name}:")
        session.send("\r")
    session.expect("asks to use the model (sampling):", timeout=30)
    session.expect(APPROVAL)
    session.send("y")
    session.expect("All done.", timeout=30)
    session.prompt()
    session.send(CTRL_D)
    assert session.exit_status() == 0
    [form] = tool_messages(server, 1)
    assert "User provided the requested information" in form["content"]
    assert "- Name: Ada Lovelace" in form["content"]
    assert "- Favorite Integer: 42" in form["content"]  # its default
    assert "Vermilion" in tool_messages(server, 3)[-1]["content"]
