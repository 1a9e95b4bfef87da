"""The MCP client capabilities (agentcli.mcp.client_features) against a server written with
the official SDK (tests/fixtures/mcp/client_features_server.py), driven through the
installed `agentcli run` and the REPL on a pseudo-terminal against the scripted model
server, which also answers the sampling requests: roots, sampling (approved, allowed by a
rule, declined headless), elicitation (a form in the terminal, declined headless), progress
on the tool line, server logs at a level, trusted servers' instructions, clientInfo."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from agentcli.mcp.forms import FormError, defaults_only, fields_of
from tests.conftest import RunCli
from tests.scripted_server import Reply, ScriptedServer
from tests.test_e2e_sessions import only_session
from tests.test_mcp import events_of, toml_str, tool_messages, write_config
from tests.test_repl import APPROVAL, CTRL_D, StartChat, chat  # noqa: F401 (the fixture)
from tests.test_repl_screens import StartTerminal, term  # noqa: F401 (the fixture)

pytest.importorskip("mcp")
SERVER = Path(__file__).parent / "fixtures" / "mcp" / "client_features_server.py"
SAMPLING_SYSTEM = "You are a test server's helper."


def features_server(cli_home: Path, extra: str = "trusted = true\n") -> None:
    write_config(
        cli_home,
        f"[mcp.servers.f]\ncommand = {toml_str(sys.executable)}\n"
        f"args = [{toml_str(str(SERVER))}]\n{extra}",
    )


def call(call_id: str, tool: str, **arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "name": f"mcp__f__{tool}", "arguments": arguments}


def customs(stdout: str, name: str) -> list[dict[str, Any]]:
    return [e["value"] for e in events_of(stdout) if e["type"] == "CUSTOM" and e["name"] == name]


# --- the form's fields, from the requested schema


def test_a_schema_becomes_fields_and_typed_answers_are_checked() -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name"},
            "count": {"type": "integer", "minimum": 1, "maximum": 9, "default": 3},
            "ok": {"type": "boolean"},
            "pet": {"type": "string", "enum": ["p1", "p2"], "enumNames": ["Cats", "Dogs"]},
            "hero": {"type": "string", "oneOf": [{"const": "h1", "title": "Superman"}]},
            "tools": {
                "type": "array",
                "items": {"type": "string", "enum": ["saw", "drill", "file"]},
                "maxItems": 2,
            },
        },
        "required": ["name"],
    }
    name, count, ok, pet, hero, tools = fields_of(schema)
    assert (name.kind, name.required, count.required) == ("string", True, False)
    assert count.parse("7") == 7
    with pytest.raises(ValueError, match="between 1 and 9"):
        count.parse("10")
    with pytest.raises(ValueError, match="whole number"):
        count.parse("2.5")
    assert ok.parse("y") is True and ok.parse("no") is False
    assert pet.parse("2") == "p2" and pet.parse("Cats") == "p1"
    assert hero.parse("Superman") == "h1"
    assert tools.parse("1, drill") == ["saw", "drill"]
    with pytest.raises(ValueError, match="choose 0-2"):
        tools.parse("1,2,3")
    assert defaults_only(fields_of(schema)) is None  # `name` has no default: nothing to send
    schema["required"] = ["count"]
    assert defaults_only(fields_of(schema)) == {"count": 3}
    with pytest.raises(FormError):
        fields_of({"type": "object", "properties": {"where": {"type": "object"}}})


def test_new_roots_are_announced_with_list_changed_and_listed_again(tmp_path: Path) -> None:
    """A session that binds other places (the REPL's next agent, say) tells the server."""
    import asyncio

    from agentcli.mcp.client_features import ClientHost
    from agentcli.mcp.config import parse_server
    from agentcli.mcp.server import McpServer
    from agentcli.tools.base import ToolContext
    from agentcli.workspace.root import Workspace

    other = tmp_path / "other"
    other.mkdir()

    async def scenario() -> list[str]:
        host = ClientHost(roots=(str(tmp_path),))
        config = parse_server("f", {"command": sys.executable, "args": [str(SERVER)]})
        source = McpServer(config, tmp_path, asyncio.Lock(), tmp_path, None, host)
        await source.start()
        tools = {tool.remote_name: tool for tool in source.tools()}
        context = ToolContext(Workspace(tmp_path))

        async def ask(name: str) -> str:
            return (await source.call(tools[name], {}, context)).content

        try:
            seen = [await ask("roots"), await ask("roots_changed")]
            lent = {"emit": None, "person": None, "policy": None, "provider": lambda: None}
            host.bind(**lent, roots=(str(tmp_path),))  # the same places: nothing to say
            host.bind(**lent, roots=(str(tmp_path), str(other)))
            for _ in range(50):
                if "1 times" in await ask("roots_changed"):
                    break
                await asyncio.sleep(0.1)
            return [*seen, await ask("roots_changed"), await ask("roots")]
        finally:
            await source.close()

    before, unchanged, changed, after = asyncio.run(scenario())
    assert before == tmp_path.as_uri() and unchanged == "roots changed 0 times"
    assert changed == "roots changed 1 times"
    assert after.splitlines() == [tmp_path.as_uri(), other.as_uri()]


def test_the_servers_max_tokens_caps_the_request_on_each_wire() -> None:
    from agentcli.conversation.messages import Message
    from agentcli.providers.anthropic import AnthropicProvider
    from agentcli.providers.base import ModelRequest
    from agentcli.providers.openai import OpenAIProvider

    capped = ModelRequest(system="", messages=[Message.user("hi")], max_tokens=50)
    plain = ModelRequest(system="", messages=[Message.user("hi")])
    official, local = OpenAIProvider("m"), OpenAIProvider("m", base_url="http://127.0.0.1:9/v1")
    assert official._body(capped)["max_completion_tokens"] == 50
    assert local._body(capped)["max_tokens"] == 50
    assert "max_tokens" not in local._body(plain)
    anthropic = AnthropicProvider("m", max_tokens=4096)
    assert anthropic._body(capped)["max_tokens"] == 50
    assert anthropic._body(plain)["max_tokens"] == 4096


# --- headless: `agentcli run` with no terminal


def test_roots_client_info_and_a_trusted_servers_instructions(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, workspace: Path, tmp_path: Path
) -> None:
    features_server(cli_home)
    extra = tmp_path / "extra place"
    extra.mkdir()
    server.enqueue(
        Reply.tool_calls([call("c1", "roots"), call("c2", "whoami")]), Reply.text(["Done."])
    )
    result = run_cli(
        ["run", "roots?", "--add-dir", f"{extra}:ro", "--allow", "mcp__f__*"],
        server=server,
        timeout=60,
    )

    assert result.returncode == 0, result.stderr
    roots, whoami = tool_messages(server, 1)
    assert roots["content"].splitlines() == [workspace.as_uri(), extra.resolve().as_uri()]
    import agentcli

    assert whoami["content"].startswith(f"agentcli {agentcli.__version__}: ")
    assert {"elicitation", "roots", "sampling"} <= set(whoami["content"].split(": ")[1].split(", "))
    system = server.requests[0].json["messages"][0]["content"]  # a trusted server's
    assert "### MCP server f (its tools are mcp__f__*)\nCall the roots tool before" in system


def test_sampling_allowed_by_a_rule_runs_one_step_of_the_session_model_without_tools(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    features_server(cli_home)
    server.enqueue(
        Reply.tool_calls([call("c1", "ask_model", prompt="name a colour")]),
        Reply.text(["Teal", "."]),  # the sampling request
        Reply.text(["The server heard teal."]),
    )
    result = run_cli(
        ["run", "go", "-o", "jsonl", "--allow", "mcp_sampling(f)", "--allow", "mcp__f__*"],
        server=server,
        timeout=60,
    )

    assert result.returncode == 0, result.stderr
    sampling = server.requests[1].json
    assert sampling["messages"][0] == {"role": "system", "content": SAMPLING_SYSTEM}
    assert sampling["messages"][1:] == [{"role": "user", "content": "name a colour"}]
    assert not sampling.get("tools")
    assert sampling["max_tokens"] == 50  # the server's maxTokens, as the request's cap
    [answer] = tool_messages(server, 2)
    assert "the model said: Teal." in answer["content"]
    [record] = customs(result.stdout, "mcp_request")
    assert record == {
        "server": "f",
        "kind": "sampling",
        "outcome": "accept",
        "by": "rule",
        "rule": "mcp_sampling(f)",
        "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},  # the scripted
    }
    notice = "answered MCP server f's sampling request (allowed by the rule mcp_sampling(f)"
    assert f"{notice}, 15 tokens)" in result.stderr


def test_without_a_terminal_its_questions_and_sampling_are_declined_saying_why(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    features_server(cli_home)
    server.enqueue(
        Reply.tool_calls([call("c1", "ask_model", prompt="a colour"), call("c2", "order_box")]),
        Reply.text(["Declined, then."]),
    )
    result = run_cli(["run", "go", "--allow", "mcp__f__*"], server=server, timeout=60)

    assert result.returncode == 0, result.stderr
    assert len(server.requests) == 2  # no sampling step reached the model
    sampling, form = tool_messages(server, 1)
    said = "no terminal to ask the user; allow it with --allow 'mcp_sampling(f)'"
    assert f"declined MCP server f's request to use the model: {said}" in sampling["content"]
    assert f"declined MCP server f's sampling request: {said}" in result.stderr
    assert "no order: the user chose decline" in form["content"]
    said = "agentcli declined MCP server f's request for input: no terminal to ask the user"
    assert said in form["content"]


def test_yes_declines_sampling_and_a_form_it_cannot_answer_and_sends_one_it_can(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    features_server(cli_home)
    calls = [call("c1", "ask_model", prompt="a colour"), call("c2", "order_box")]
    server.enqueue(Reply.tool_calls([*calls, call("c3", "pick_size")]), Reply.text(["Some of it."]))
    result = run_cli(["run", "go", "--yes", "-o", "jsonl"], server=server, timeout=60)

    assert result.returncode == 0, result.stderr
    sampling, form, sized = tool_messages(server, 1)
    assert "and --yes approves tool calls, not sampling" in sampling["content"]
    assert "no order: the user chose decline" in form["content"]
    assert "--yes approves tool calls but cannot answer a server's questions" in form["content"]
    # the defaults answer every field; the declines are said too: the protocol does not
    # say which of the calls running then a request came from, so each is told
    assert sized["content"].startswith("size 2 (wrapped: False)\n[agentcli declined")
    records = {
        r["kind"] + ":" + r["outcome"]: r["by"] for r in customs(result.stdout, "mcp_request")
    }
    assert records == {
        "sampling:decline": "flag",
        "elicitation:decline": "flag",
        "elicitation:accept": "flag",
    }
    assert "answered MCP server f's request for input (--yes sent the form's defaults)" in (
        result.stderr
    )


def test_a_deny_rule_declines_sampling_whatever_allows_it(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    features_server(cli_home)
    server.enqueue(
        Reply.tool_calls([call("c1", "ask_model", prompt="a colour")]), Reply.text(["No."])
    )
    flags = ["--allow", "mcp__f__*", "--allow", "mcp_sampling(f)", "--forbid", "mcp_sampling(*)"]
    result = run_cli(["run", "go", *flags], server=server, timeout=60)

    assert result.returncode == 0, result.stderr
    [answer] = tool_messages(server, 1)
    assert (
        "declined MCP server f's request to use the model: the rule mcp_sampling(*) "
        in (answer["content"])
    )


def test_progress_reaches_the_event_stream_and_logs_are_shown_from_their_level(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    features_server(cli_home)
    server.enqueue(
        Reply.tool_calls([call("c1", "slow", steps=3), call("c2", "chatty")]),
        Reply.text(["Done."]),
    )
    result = run_cli(
        ["run", "go", "-o", "jsonl", "--allow", "mcp__f__*"], server=server, timeout=60
    )

    assert result.returncode == 0, result.stderr
    progress = [p for p in customs(result.stdout, "progress") if p["toolCallId"] == "c1"]
    assert [(p["progress"], p["total"], p["message"]) for p in progress] == [
        (1, 3, "step 1"),
        (2, 3, "step 2"),
        (3, 3, "step 3"),
    ]
    assert progress[-1]["lines"] == ["step 3 · 3/3 (100%)"]
    logs = customs(result.stdout, "mcp_log")
    assert [log["level"] for log in logs] == ["warning", "error"]  # the default: warning
    assert "MCP server f [warning boxes]: warning message from chatty" in result.stderr
    assert "info message" not in result.stderr
    recorded = only_session(cli_home).read_text(encoding="utf-8")
    assert recorded.count('"name": "mcp_log"') == 2 or recorded.count('"name":"mcp_log"') == 2


def test_log_level_is_per_server_and_an_untrusted_servers_instructions_stay_out(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    features_server(cli_home, 'log_level = "debug"\n')  # and not trusted
    server.enqueue(Reply.tool_calls([call("c1", "chatty")]), Reply.text(["Done."]))
    result = run_cli(
        ["run", "go", "-o", "jsonl", "--allow", "mcp__f__*"], server=server, timeout=60
    )
    assert result.returncode == 0, result.stderr
    levels = [log["level"] for log in customs(result.stdout, "mcp_log")]
    assert levels == ["debug", "info", "warning", "error"]
    system = server.requests[0].json["messages"][0]["content"]
    assert "Call the roots tool" not in system and "MCP server" not in system


def test_a_bad_log_level_is_one_clear_error(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    features_server(cli_home, 'log_level = "loud"\n')
    result = run_cli(["run", "go"], server=server, timeout=30)
    assert result.returncode == 2
    assert "mcp.servers.f.log_level: must be one of debug, info" in result.stderr


# --- a person at the terminal: the REPL on a pseudo-terminal


def test_repl_asks_the_form_in_the_terminal_and_sends_the_answers(
    chat: StartChat,  # noqa: F811
    server: ScriptedServer,
    cli_home: Path,
) -> None:
    features_server(cli_home)
    server.enqueue(Reply.tool_calls([call("c1", "order_box")]), Reply.text(["Ordered."]))
    session = chat("--allow", "mcp__f__*")
    session.submit("order a box")
    session.expect("MCP server f asks you:")
    session.expect("choose [")
    session.send("y")
    session.expect("colour:")
    session.send("\r")  # required: asked again
    session.expect("required: type an answer")
    session.send("green\r")
    session.expect("count:")
    session.send("12\r")
    session.expect("answer between 1 and 9")
    session.send("4\r")
    session.expect("gift:")
    session.send("\r")  # its default
    session.expect("Ordered.")
    session.prompt()
    session.send(CTRL_D)
    assert session.exit_status() == 0
    [answer] = tool_messages(server, 1)
    assert "ordered 4 green boxes (gift: False)" in answer["content"]


def test_repl_shows_a_sampling_request_and_runs_it_once_approved(
    chat: StartChat,  # noqa: F811
    server: ScriptedServer,
    cli_home: Path,
) -> None:
    features_server(cli_home)
    server.enqueue(
        Reply.tool_calls([call("c1", "ask_model", prompt="name a \x1b[31mcolour")]),
        Reply.text(["Ochre"]),
        Reply.tool_calls([call("c2", "ask_model", prompt="again")]),
        Reply.text(["Umber"]),
        Reply.text(["Both heard."]),
    )
    session = chat("--allow", "mcp__f__*")
    mark = session.submit("ask twice")
    session.expect("asks to use the model (sampling):")
    session.expect(APPROVAL)
    shown = session.screen(mark)
    assert f"system: {SAMPLING_SYSTEM}" in shown
    assert "user: name a ␛[31mcolour" in shown  # the server's escape, shown, not obeyed
    session.send("s")  # and for f's later requests this session: not asked again
    session.expect("Both heard.")
    session.prompt()
    assert session.screen(mark).count("asks to use the model") == 1
    session.send(CTRL_D)
    assert session.exit_status() == 0
    assert "the model said: Ochre" in tool_messages(server, 2)[0]["content"]
    assert "the model said: Umber" in tool_messages(server, 4)[-1]["content"]


def test_repl_declines_a_request_that_comes_between_turns(
    chat: StartChat,  # noqa: F811
    server: ScriptedServer,
    cli_home: Path,
) -> None:
    """The prompt owns the terminal between turns: a server's question then is declined,
    not drawn into the prompt (the server logs what it got)."""
    features_server(cli_home)
    server.enqueue(Reply.tool_calls([call("c1", "ask_later", seconds=1)]), Reply.text(["Later."]))
    session = chat("--allow", "mcp__f__*")
    mark = session.submit("ask me later")
    session.expect("Later.")
    session.prompt()
    session.expect(
        "declined MCP server f's request for input: it came between turns, when agentcli "
        "asks nobody",
        timeout=15,
    )
    session.expect("MCP server f [error]: later answer: decline")
    assert "A question between turns?" not in session.screen(mark)
    session.send(CTRL_D)
    assert session.exit_status() == 0


def test_run_on_a_terminal_shows_progress_on_its_live_line(
    term: StartTerminal,  # noqa: F811
    server: ScriptedServer,
    cli_home: Path,
) -> None:
    features_server(cli_home)
    server.enqueue(Reply.tool_calls([call("c1", "slow", steps=3)]), Reply.text(["Slow done."]))
    terminal = term("run", "go slowly", "--allow", "mcp__f__*")
    terminal.wait_for("│ step 2 · 2/3 (67%)", timeout=30)
    assert terminal.finish() == 0
    shown = terminal.text()
    assert "step 2 · 2/3" not in shown  # the live line gave way to the result
    assert "Slow done." in shown


def test_repl_shows_progress_on_the_tool_line(
    chat: StartChat,  # noqa: F811
    server: ScriptedServer,
    cli_home: Path,
) -> None:
    features_server(cli_home)
    server.enqueue(Reply.tool_calls([call("c1", "slow", steps=3)]), Reply.text(["Slow done."]))
    session = chat("--allow", "mcp__f__*")
    session.submit("go slowly")
    session.expect("mcp__f__slow: step 2 · 2/3 (67%)")
    session.expect("Slow done.")
    session.prompt()
    session.send(CTRL_D)
    assert session.exit_status() == 0
