"""Skills and custom commands where a person meets them: `agentcli chat` on a pseudo-terminal
judged through pyte (tests/terminal_screen.py), against the scripted model server — `/skills`
with where each came from and why one was skipped, `$name` completed with Tab and attaching
the skill, custom commands in /help, completed with Tab, and run for one turn with their own
model and narrowed tools."""

from __future__ import annotations

from pathlib import Path

from tests.scripted_server import Reply, ScriptedServer
from tests.terminal_screen import Terminal
from tests.test_repl_screens import FOOTER, StartTerminal, index_of, term

__all__ = ["term"]  # the fixture, shared with the other screen tests

TAB = "\t"
SKILL = """---
name: pdf-tools
description: Extracts text and tables from PDF files.
---
# PDF tools

Run scripts/extract.py FILE.
"""
COMMIT = """---
description: Commit the staged work
argument-hint: "[message]"
model: small-model
allowed-tools: Read
---
Commit with the message: $ARGUMENTS
"""


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def send_turn(terminal: Terminal, keys: str) -> list[str]:
    """`keys` and Enter, to the turn's footer and the next prompt: the lines it added."""
    before = len(terminal.lines())
    footers = sum(1 for line in terminal.lines() if FOOTER.search(line))
    terminal.send(keys + "\r")
    terminal.wait_for(
        lambda: (
            terminal.at_prompt()
            and sum(1 for line in terminal.lines() if FOOTER.search(line)) > footers
        )
    )
    return terminal.lines()[before - 1 :]


def last_user(server: ScriptedServer, request: int) -> str:
    messages = server.requests[request].json["messages"]
    return next(m["content"] for m in reversed(messages) if m["role"] == "user")


def tool_result(server: ScriptedServer, request: int) -> str:
    return server.requests[request].json["messages"][-1]["content"]


def test_skills_lists_each_skill_where_it_came_from_and_why_one_was_skipped(
    term: StartTerminal, workspace: Path, cli_home: Path
) -> None:
    write(cli_home / "agentcli" / "skills" / "pdf-tools" / "SKILL.md", SKILL)
    write(
        cli_home / ".claude" / "skills" / "Shouty" / "SKILL.md",
        "---\nname: Shouty\ndescription: d\n---\n",
    )
    write(workspace / ".agents" / "skills" / "house" / "SKILL.md", "---\nname: house\n---\n")
    terminal = term()
    terminal.send("/skills\r")
    terminal.wait_for("not read:")
    lines = terminal.lines()
    start = index_of(lines, "› /skills")
    shown = lines[start + 1 : start + 4]
    assert shown[0].split() == [
        "pdf-tools",
        "~/agentcli/skills",
        *["Extracts", "text", "and", "tables", "from", "PDF", "files."],
    ], shown
    why = "skipped ~/.claude/skills/Shouty/SKILL.md: name 'Shouty' must be lowercase"
    assert shown[1].startswith(f"  {why}"), shown  # one line, wrapped at the terminal's width
    assert "not read: .agents/skills (this workspace is not trusted" in terminal.text()


def test_a_skill_mentioned_with_dollar_is_completed_with_tab_and_attached(
    term: StartTerminal, server: ScriptedServer, cli_home: Path
) -> None:
    write(cli_home / "agentcli" / "skills" / "pdf-tools" / "SKILL.md", SKILL)
    server.enqueue(Reply.text(["Using it."]))
    terminal = term()
    terminal.send("read a.pdf with $pd")
    terminal.wait_for("Extracts text")  # the completion menu, with the description
    terminal.send(TAB)
    terminal.wait_for("› read a.pdf with $pdf-tools")
    lines = send_turn(terminal, "")
    assert any("using skill pdf-tools (~/agentcli/skills)" in line for line in lines), lines
    sent = last_user(server, 0)
    assert sent.startswith('read a.pdf with $pdf-tools\n\n<skill name="pdf-tools"')
    assert "Run scripts/extract.py FILE." in sent


def test_a_custom_command_is_in_help_completed_with_tab_and_runs_for_one_turn(
    term: StartTerminal, server: ScriptedServer, cli_home: Path
) -> None:
    """/git:commit's turn goes to its model and may only read; the next turn is the
    session's own again: its model, and a command that runs."""
    write(cli_home / "agentcli" / "commands" / "git" / "commit.md", COMMIT)
    server.enqueue(
        Reply.tool_calls([{"id": "c1", "name": "run_shell", "arguments": {"command": "pwd"}}]),
        Reply.text(["Not allowed, fine."]),
        Reply.tool_calls([{"id": "c2", "name": "run_shell", "arguments": {"command": "pwd"}}]),
        Reply.text(["Ran it."]),
    )
    terminal = term(columns=100)
    terminal.send("/help\r")
    terminal.wait_for("Alt+Enter")
    assert "  /git:commit  Commit the staged work [message]  (~/agentcli/commands)" in (
        terminal.lines()
    )
    terminal.send("/gi")
    terminal.wait_for("Commit the staged work [message]")  # the completion menu
    terminal.send(TAB)
    terminal.wait_for("› /git:commit")
    lines = send_turn(terminal, " tidy the parser")
    assert any("/git:commit: this turn goes to openai:small-model" in line for line in lines)
    assert server.requests[0].json["model"] == "small-model"
    assert last_user(server, 0) == "Commit with the message: tidy the parser"
    assert "/git:commit lets only its allowed-tools run (read_file)" in tool_result(server, 1)

    send_turn(terminal, "where am I")
    assert server.requests[2].json["model"] == "gpt-4.1-mini"  # the session's, as the banner says
    assert "exit code 0" in tool_result(server, 3)
