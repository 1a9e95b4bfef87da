"""End-to-end, in a pseudo-terminal at 40 and 120 columns against the scripted server: what
the REPL says about where it stands — the context meter in the toolbar, `/context`, the
notice before a compaction, `/status` — and what it does with the workspace: `/diff`,
`/init`, and the `/resume` picker."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from agentcli.agent.compaction import text_tokens
from tests import test_repl
from tests.scripted_server import Reply, ScriptedServer
from tests.test_repl import FOOTER, StartChat, lines_of, messages, write_call

chat = test_repl.chat  # the fixture: `agentcli chat` in a pseudo-terminal

WIDTHS = [40, 120]
TOOLBAR_START = "approvals: "  # the segment that always stays, at any width
TOOLBAR_METER = "ctx"  # kept before the model's name, the tokens and /help
SHOW_CURSOR = "\x1b[?25h"  # prompt-toolkit's last write of each redraw


def configure(cli_home: Path, text: str) -> None:
    config = cli_home / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(text, encoding="utf-8")


def toolbars(screen: str) -> list[str]:
    return [line for line in lines_of(screen) if line.lstrip().startswith(TOOLBAR_START)]


# --- the context meter --------------------------------------------------------------


@pytest.mark.parametrize("columns", WIDTHS)
def test_toolbar_meter_from_the_reported_usage(
    chat: StartChat, server: ScriptedServer, cli_home: Path, columns: int
) -> None:
    configure(cli_home, '[context.windows]\n"openai:tiny" = 10000\n')
    server.enqueue(Reply.text(["ok"], usage=(1234, 56)))
    session = chat("--model", "openai:tiny", cpr=True, columns=columns)
    session.expect(TOOLBAR_METER)
    first = session.screen()
    mark = session.submit("hi")
    session.expect(FOOTER)
    session.expect("ctx 13%")  # (1,234 in + 56 out) of a 10,000-token window
    session.expect(SHOW_CURSOR)  # the end of that redraw: the whole toolbar is out
    after = session.screen(mark).rpartition(FOOTER)[2]

    before = toolbars(first)[-1]
    # Before any report: the estimate of the system prompt and the tools' schemas.
    estimate = int(re.search(r"ctx (\d+)%", before).group(1))  # type: ignore[union-attr]
    system = messages(server, 0)[0]["content"]
    assert estimate >= 100 * text_tokens(system) // 10_000, before
    [bar] = toolbars(after)[-1:]
    assert "ctx 13%" in bar and "openai:tiny" in bar
    assert len(bar) <= columns, bar  # fitted, not wrapped
    if columns >= 120:
        assert "↑1,234 ↓56 tokens" in bar
    else:
        assert "tokens" not in bar  # left out before the meter


def test_toolbar_says_ctx_unknown_when_the_window_is_not_known(
    chat: StartChat, server: ScriptedServer
) -> None:
    session = chat("--model", "openai:tiny", cpr=True, columns=120)
    session.expect(TOOLBAR_METER)
    [bar] = toolbars(session.screen())[-1:]
    assert "ctx ?" in bar, bar
    screen = session.command("/context", "compaction at")
    text = " ".join(screen.split())
    assert "window not known" in text
    assert "set context.window" in text
    # the number compaction uses is said to be an assumption, not the window
    assert (
        "compaction at 80% of 128,000 (context.window, assumed while the model's window is "
        "not known) = 102,400 estimated tokens" in text
    ), text


@pytest.mark.parametrize("columns", WIDTHS)
def test_context_details_each_part(
    chat: StartChat, server: ScriptedServer, cli_home: Path, columns: int
) -> None:
    configure(cli_home, '[context.windows]\n"openai:tiny" = 10000\n')
    server.enqueue(
        Reply.tool_calls([{"id": "r1", "name": "read_file", "arguments": {"path": "notes.txt"}}]),
        Reply.text(["read it"], usage=(2000, 100)),
    )
    session = chat("--model", "openai:tiny", "--yes", columns=columns)
    session.turn("read the notes")
    screen = session.command("/context", "compaction at")
    text = " ".join(screen.split())  # at 40 columns a line wraps

    system = messages(server, 1)[0]["content"]
    assert f"system prompt {text_tokens(system):,}" in text, text
    assert "2,100 of 10,000 tokens (21%), as the provider last reported" in text
    for part in ("tool schemas", "messages", "tool results"):
        assert re.search(part + r" [1-9][\d,]*", text), (part, text)
    assert "window 10,000" in text and 'context.windows."openai:tiny"' in text
    assert "compaction at 80% of 10,000 = 8,000 estimated tokens" in text


@pytest.mark.parametrize("columns", WIDTHS)
def test_compaction_is_announced_before_it_happens(
    chat: StartChat, server: ScriptedServer, cli_home: Path, columns: int
) -> None:
    configure(cli_home, "[context]\nwindow = 2000\nkeep_turns = 1\n")
    long = " ".join(["long words"] * 100)
    server.enqueue(
        Reply.text(["first answer " + long]),
        Reply.text(["SUMMARY OF THE FIRST TURN"]),
        Reply.text(["second answer"]),
    )
    session = chat(columns=columns)
    session.turn("first question " + long)
    mark = session.submit("second question")
    session.expect("second answer")
    session.expect(FOOTER)
    session.prompt()
    screen = " ".join(session.screen(mark).split())  # a line is broken between words at 40

    notice = re.search(r"context (\d+)% full: compacting older turns…", screen)
    assert notice, screen
    assert int(notice.group(1)) > 80  # the threshold it passed
    assert screen.index(notice.group(0)) < screen.index("compacted:")
    assert screen.index("compacted:") < screen.index("second answer")
    assert len(server.requests) == 3
    assert messages(server, 1)[0]["content"].startswith("You condense a conversation")


@pytest.mark.parametrize("columns", WIDTHS)
def test_status_says_where_the_chat_stands(
    chat: StartChat, server: ScriptedServer, cli_home: Path, workspace: Path, columns: int
) -> None:
    configure(cli_home, "[context]\nwindow = 10000\n")
    server.enqueue(Reply.text(["ok"], usage=(1234, 56)))
    session = chat("--model", "openai:tiny", columns=columns)
    session.turn("hi")
    screen = session.command("/status", "session ")
    text = " ".join(screen.split())

    assert "model openai:tiny" in text
    assert "provider openai (openai) at " + server.base_url in text
    assert f"workspace {workspace}" in text
    assert "approvals ask: medium and high risk calls ask first" in text
    assert re.search(r"sandbox (bubblewrap|landlock|seatbelt|none available|off)", text), text
    if re.search(r"sandbox (bubblewrap|landlock)", text):
        assert "by risk: low → read-only, medium → workspace-write" in text  # words, not 1, 2
    for line in screen.splitlines():  # wrapped between words, under the value
        assert len(line) <= columns or max(map(len, line.split())) > columns - 14, line
    assert "context 13% full (1,290 of 10,000 tokens)" in text
    session_dir = cli_home / "agentcli" / "data" / "sessions"
    [path] = [p for p in session_dir.glob("*.jsonl")]
    assert f"session {path.stem}" in text


# --- the /resume picker ---------------------------------------------------------------

DOWN = "\x1b[B"


@pytest.mark.parametrize("columns", WIDTHS)
def test_resume_picker_lists_recent_first_and_resumes_the_chosen(
    chat: StartChat, server: ScriptedServer, columns: int
) -> None:
    server.enqueue(*(Reply.text([answer]) for answer in ("A.", "B.", "C.")))
    session = chat("--model", "openai:tiny", columns=columns)
    session.turn("older question about apples")
    session.command("/clear", "new conversation")
    session.turn("newer question about bananas")
    session.command("/clear", "new conversation")  # the current one: empty, not offered

    mark = session.submit("/resume")
    session.expect("Enter resumes")
    listing = session.screen(mark)
    session.send(DOWN)
    session.send("\r")
    session.expect("resumed session")
    session.prompt()
    screen = session.turn("and now?")

    rows = [line for line in lines_of(listing) if "openai:tiny" in line]
    assert len(rows) == 2, listing
    assert "bananas" in rows[0] or "newer" in rows[0], rows  # the latest first
    assert "apples" in rows[1] or "older" in rows[1], rows
    assert all(row.endswith("just now") for row in rows), rows
    assert all(len(row) <= columns for row in rows), rows
    assert "C." in screen
    users = [m["content"] for m in messages(server, 2) if m["role"] == "user"]
    assert users == ["older question about apples", "and now?"]


def test_resume_picker_esc_cancels(chat: StartChat, server: ScriptedServer) -> None:
    server.enqueue(Reply.text(["A."]), Reply.text(["B."]))
    session = chat()
    session.turn("the only question")
    session.command("/clear", "new conversation")
    mark = session.submit("/resume")
    session.expect("Enter resumes")
    session.send("\x1b")
    session.expect("(cancelled)")
    session.prompt()
    session.turn("a fresh start")
    assert "resumed" not in session.screen(mark)
    users = [m["content"] for m in messages(server, 1) if m["role"] == "user"]
    assert users == ["a fresh start"]


# --- /diff --------------------------------------------------------------------------


def shell_call(call_id: str, command: str) -> dict[str, object]:
    return {"id": call_id, "name": "run_shell", "arguments": {"command": command}}


@pytest.mark.parametrize("columns", WIDTHS)
def test_diff_shows_what_the_session_wrote(
    chat: StartChat, server: ScriptedServer, workspace: Path, columns: int
) -> None:
    server.enqueue(
        Reply.tool_calls([write_call("w1", "notes.txt", "first note\nchanged note\n")]),
        Reply.tool_calls([write_call("w2", "notes.txt", "first note\nchanged again\n")]),
        Reply.tool_calls([write_call("w3", "new.txt", "brand new\n")]),
        Reply.text(["Done."]),
    )
    session = chat("--yes", columns=columns)
    assert "changed nothing" in session.command("/diff", "changed nothing")
    session.turn("change the notes twice and add a file")
    screen = lines_of(session.command("/diff", "not a git repository"))

    # Against the content before the session's first change, not the last write.
    assert "--- a/notes.txt" in screen and "+++ b/notes.txt" in screen
    assert "-second note" in screen and "+changed again" in screen
    assert "+changed note" not in screen
    assert "--- /dev/null" in screen and "+++ b/new.txt" in screen and "+brand new" in screen
    assert "(not a git repository: changes made by commands are not shown)" in screen


def test_diff_adds_git_diff_for_changes_made_by_commands(
    chat: StartChat, server: ScriptedServer, workspace: Path
) -> None:
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "start"]):
        subprocess.run([*git, *args], cwd=workspace, check=True, capture_output=True)
    server.enqueue(
        Reply.tool_calls([write_call("w1", "notes.txt", "first note\nchanged note\n")]),
        Reply.tool_calls([shell_call("s1", "echo appended-by-shell >> README.md")]),
        Reply.text(["Done."]),
    )
    session = chat("--yes")
    session.turn("change the notes and the readme")
    screen = lines_of(session.command("/diff", "as git diff sees it"))

    mine = screen.index("changed by this session's file tools:")
    git_part = screen.index("also changed, as git diff sees it (commands, or you):")
    assert mine < git_part
    assert "+changed note" in screen[mine:git_part]
    assert "+appended-by-shell" in screen[git_part:]
    assert "+++ b/README.md" in screen[git_part:]
    assert "+++ b/notes.txt" not in screen[git_part:]  # said once, as the session's own


# --- /init --------------------------------------------------------------------------


@pytest.mark.parametrize("columns", WIDTHS)
def test_init_writes_an_agents_md_skeleton_after_asking(
    chat: StartChat, server: ScriptedServer, workspace: Path, columns: int
) -> None:
    (workspace / "pyproject.toml").write_text('[project]\nname = "demo-proj"\n', encoding="utf-8")
    (workspace / "src" / "demo").mkdir(parents=True)
    (workspace / "src" / "demo" / "core.py").write_text("X = 1\n", encoding="utf-8")
    (workspace / "src" / "demo" / "cli.py").write_text("Y = 2\n", encoding="utf-8")
    (workspace / "tests").mkdir()
    (workspace / "tests" / "test_core.py").write_text("def test(): pass\n", encoding="utf-8")
    target = workspace / "AGENTS.md"
    session = chat(columns=columns)

    mark = session.submit("/init")
    session.expect("write AGENTS.md? [y/N]")
    shown = session.screen(mark)
    assert not target.exists()  # asked first
    session.send("y\r")
    session.expect("wrote AGENTS.md")
    session.prompt()

    written = target.read_text(encoding="utf-8")
    assert written.startswith("# demo-proj\n")
    assert "- Languages: Python (3 files)" in written
    assert "- Build files: pyproject.toml" in written
    assert "- Test: `python -m pytest`" in written
    assert "- `src/` (2 files)" in written and "- `tests/` (1 file)" in written
    assert "- `README.md`" in written
    assert "Python (3 files)" in shown  # the skeleton was shown before the question
    diff = lines_of(session.command("/diff", "not a git repository"))
    assert "+# demo-proj" in diff and "--- /dev/null" in diff  # /init's write is the session's

    # Once it exists: replaced only when the question says so and the answer is yes.
    target.write_text("# my own instructions\n", encoding="utf-8")
    session.submit("/init")
    session.expect("AGENTS.md exists already")
    session.expect("replace AGENTS.md? [y/N]")
    session.send("n\r")
    session.expect("AGENTS.md not written")
    session.prompt()
    assert target.read_text(encoding="utf-8") == "# my own instructions\n"
    assert server.requests == []  # nothing was asked of the model
