"""Subagents in the REPL, on a real pty: the person asked to approve a subagent's call sees
that the subagent asks, each of its calls is a line under the task call, and Ctrl-C while
its command runs stops it with its parent and leaves a conversation that goes on."""

from __future__ import annotations

from pathlib import Path

from tests.scripted_server import Reply, ScriptedServer
from tests.test_e2e_process import sleeper_token
from tests.test_repl import APPROVAL, FOOTER, StartChat, chat, gone, messages, pid_of
from tests.test_repl_screens import StartTerminal, index_of, term

__all__ = ["chat", "term"]  # the REPL's fixtures, used here


def task(prompt: str) -> Reply:
    return Reply.tool_calls([{"id": "t1", "name": "task", "arguments": {"prompt": prompt}}])


def test_the_subagents_approval_and_calls_are_shown_as_its_own(
    chat: StartChat, server: ScriptedServer, workspace: Path
) -> None:
    write = {"path": "made.txt", "content": "made by the subagent\n"}
    server.enqueue(
        task("Make made.txt."),
        Reply.tool_calls([{"id": "w1", "name": "write_file", "arguments": write}]),
        Reply.text(["made it"]),
        Reply.text(["All done."]),
    )
    session = chat()
    mark = session.submit("make the file")
    session.expect(APPROVAL)
    asking = session.screen(mark)
    assert "● subagent general-purpose: Allow write_file? medium risk" in asking
    session.send("y")
    session.expect(FOOTER)
    session.prompt()
    screen = session.screen(mark)
    assert "↳ general-purpose  ✓ write_file:" in screen
    assert "✓ task: general-purpose answered after 2 steps" in screen
    assert "All done." in screen
    # the subagent's text is the call's result, shown under it as any result's first lines
    assert screen.index("made it") > screen.index("✓ task: general-purpose answered")
    assert (workspace / "made.txt").read_text() == "made by the subagent\n"


def test_ctrl_c_stops_the_subagent_with_its_parent_and_the_repl_goes_on(
    chat: StartChat, server: ScriptedServer, workspace: Path
) -> None:
    token = sleeper_token()
    command = f"echo live-output; exec sleep {token}"
    server.enqueue(
        task("Wait."),
        Reply.tool_calls([{"id": "s1", "name": "run_shell", "arguments": {"command": command}}]),
    )
    session = chat("--yes")
    session.submit("wait for it")
    pid = pid_of(["sleep", token])
    session.extra_pids.append(pid)
    session.interrupt()
    assert gone(pid)
    assert len(server.requests) == 2

    server.enqueue(Reply.text(["Back again."]))
    assert "Back again." in session.turn("are you there?")
    sent = messages(server, 2)
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "user"]
    assert sent[3]["tool_call_id"] == "t1"  # the stopped call is answered, the subagent's
    assert "s1" not in str(sent)  # own conversation is not the parent's


def test_agents_lists_the_subagents_where_each_came_from_and_why_one_was_skipped(
    term: StartTerminal, workspace: Path, cli_home: Path
) -> None:
    agents = cli_home / "agentcli" / "agents"
    agents.mkdir(parents=True)
    (agents / "reader.md").write_text(
        "---\nname: reader\ndescription: Reads files.\ntools: Read\n---\nRead.\n"
    )
    (agents / "broken.md").write_text("---\nname: Broken One\ndescription: d\n---\n")
    (workspace / ".claude" / "agents").mkdir(parents=True)
    (workspace / ".claude" / "agents" / "x.md").write_text("---\ndescription: d\n---\n")
    terminal = term()
    terminal.send("/agents\r")
    terminal.wait_for("not read:")
    lines = terminal.lines()
    start = index_of(lines, "› /agents")
    shown = lines[start + 1 : start + 4]
    assert shown[0].split() == ["reader", "~/agentcli/agents", "Reads", "files."], shown
    assert shown[1].split()[:2] == ["general-purpose", "built"], shown
    assert shown[2].startswith(
        "  skipped ~/agentcli/agents/broken.md: name 'Broken One' must be lowercase"
    ), shown
    assert "not read: .claude/agents (this workspace is not trusted" in terminal.text()
