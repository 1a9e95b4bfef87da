"""End-to-end: the approval prompt on a pseudo-terminal, at 40 and 120 columns, against the
scripted server — one compact block per call that shows what it approves (a new file's
content to its last line, an overwrite's - and + lines), choices that say what they grant,
reasons in plain words, and a denial said once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentcli.sandbox.mechanisms import detect
from agentcli.ui.approval_block import wrap
from agentcli.ui.reasons import plain_reason
from tests.conftest import NOTES_LINES, RunCli
from tests.scripted_server import Reply, ScriptedServer
from tests.test_repl import (  # noqa: F401 - chat is the fixture
    APPROVAL,
    FOOTER,
    Chat,
    StartChat,
    chat,
    colour_codes,
    lines_of,
    messages,
    plain,
    write_call,
)

HEADING = "● Allow "
WIDTHS = [40, 120]
SCRIPT = [f"echo step {number}" for number in range(1, 31)] + ["rm -rf ~"]


def shell_call(call_id: str, command: str) -> dict[str, Any]:
    return {"id": call_id, "name": "run_shell", "arguments": {"command": command}}


def ask(
    start: StartChat, server: ScriptedServer, calls: list[Any], columns: int
) -> tuple[Chat, int]:
    """A chat whose model makes `calls`, at its approval prompt; the mark before the turn."""
    server.enqueue(Reply.tool_calls(calls), Reply.text(["ok"]))
    session = start(columns=columns)
    mark = session.submit("go")
    session.expect(APPROVAL)
    return session, mark


def deny(session: Chat, reason: str = "") -> None:
    """Answers the open prompt with n (and a reason), to the next prompt."""
    session.send("n")
    session.expect("reason for the model")
    session.send(reason + "\r")
    session.expect(FOOTER)
    session.prompt()


def block_of(screen: str) -> list[str]:
    """The last approval block's lines as drawn (not stripped), heading to last choice."""
    lines = plain(screen).splitlines()
    start = max(i for i, line in enumerate(lines) if line.startswith(HEADING))
    end = next(i for i in range(start, len(lines)) if APPROVAL in lines[i])
    return lines[start:end]


def unwrapped(lines: list[str]) -> str:
    """The block's text with its own line breaks undone (to read a label whole)."""
    return " ".join(" ".join(line.split()) for line in lines)


@pytest.mark.parametrize("columns", WIDTHS)
def test_a_new_file_is_shown_to_its_last_line_before_the_answer(
    chat: StartChat,  # noqa: F811 - the fixture imported above
    server: ScriptedServer,
    workspace: Path,
    columns: int,
) -> None:
    content = "\n".join(SCRIPT) + "\n"
    session, mark = ask(chat, server, [write_call("w1", "setup.sh", content)], columns)
    block = block_of(session.screen(mark))

    assert not (workspace / "setup.sh").exists()  # nothing written before the answer
    shown = [line.strip() for line in block]
    assert "+rm -rf ~" in shown  # the dangerous last line, before anyone answers
    assert "+echo step 1" in shown
    assert "new file setup.sh (31 lines, " in unwrapped(block)
    assert "… 16 more lines (v shows them)" in unwrapped(block)  # of 32: heading, 31 lines
    assert "+echo step 15" not in shown  # the middle is a key away
    assert all(len(line) <= columns for line in block), block

    # v pages through the whole content, then the same choices come back
    mark = session.mark()
    session.child.setwinsize(12, columns)  # a small window: pages of 10 lines
    session.send("v")  # counted as the block counts: the file's 31 lines, not the heading
    for page in ("lines 1-9 of 31", "lines 10-19 of 31", "lines 20-29 of 31"):
        session.expect(page)
        session.send(" ")
    session.expect("(all 31 lines shown)")
    session.expect(APPROVAL)
    paged = lines_of(session.screen(mark))
    assert all(f"+{line}" in paged for line in SCRIPT), paged

    session.send("v")  # again, stopped on the second page: it says where it stopped
    session.expect("lines 1-9 of 31")
    session.send(" ")
    session.expect("lines 10-19 of 31")
    session.send("q")
    session.expect("(stopped after line 19 of 31)")
    session.expect(APPROVAL)
    deny(session)
    assert not (workspace / "setup.sh").exists()


@pytest.mark.parametrize("columns", WIDTHS)
def test_an_overwrite_shows_the_removed_and_added_lines(
    chat: StartChat,  # noqa: F811 - the fixture imported above
    server: ScriptedServer,
    workspace: Path,
    columns: int,
) -> None:
    new = f"{NOTES_LINES[0]}\nchanged note\n"
    session, mark = ask(chat, server, [write_call("w1", "notes.txt", new)], columns)
    block = block_of(session.screen(mark))
    deny(session)

    shown = [line.strip() for line in block]
    assert f"-{NOTES_LINES[1]}" in shown and "+changed note" in shown
    assert NOTES_LINES[0] in shown  # unchanged context, without a marker
    assert all(len(line) <= columns for line in block), block


@pytest.mark.parametrize("columns", WIDTHS)
def test_one_block_whose_labels_say_what_they_grant(
    chat: StartChat,  # noqa: F811 - the fixture imported above
    server: ScriptedServer,
    workspace: Path,
    columns: int,
) -> None:
    loop = shell_call("s1", "for f in a b; do touch $f.txt; done")
    session, mark = ask(chat, server, [loop], columns)
    screen = session.screen(mark)
    block = block_of(screen)
    text = unwrapped(block)
    deny(session)
    after = session.screen(mark)

    assert all(len(line) <= columns for line in block), block
    assert text.count("run_shell") == 1  # the call once: no call line, no "waiting" line
    assert "waiting for approval" not in screen and "wants to run" not in screen
    assert "Allow run_shell? high risk" in text
    assert "$ for f in a b; do touch $f.txt; done" in text
    # the classifier's "control flow", said in plain words
    assert "why: it has if/for/while/case logic, which can run any command" in text
    assert "control flow" not in text
    # not a plain command: no rule can describe it, so it is decided for this call only
    assert "y yes, this call only" in text
    assert "n no (you may tell the model why)" in text
    assert "this session" not in text
    folded = plain(after)
    assert "✗ run_shell for f in a b" in folded and "· denied" in folded  # one line now
    assert not (workspace / "a.txt").exists()


def test_a_medium_session_choice_says_it_holds_for_the_session(
    chat: StartChat,  # noqa: F811 - the fixture imported above
    server: ScriptedServer,
    workspace: Path,
) -> None:
    server.enqueue(
        Reply.tool_calls([write_call("w1", "one.txt", "1\n")]),
        Reply.tool_calls([write_call("w2", "two.txt", "2\n")]),
        Reply.text(["ok"]),
    )
    session = chat(columns=40)
    mark = session.submit("write two files")
    session.expect(APPROVAL)
    text = unwrapped(block_of(session.screen(mark)))
    session.send("s")
    session.expect(FOOTER)
    session.prompt()
    screen = session.screen(mark)

    assert "y yes, this write only" in text  # y means this call alone, for every tool
    assert "s yes, and allow write_file for this session" in text
    assert "p yes, and always allow write_file in this project (saved)" in text
    assert "d no, and refuse write_file for this session" in text
    # folded, at 40 columns the answer on a row of its own, whole: the rule it added
    assert "✓ write_file one.txt" in plain(screen), screen
    assert "    allowed write_file for this session" in plain(screen).splitlines(), screen
    assert screen.count(HEADING) == 1  # as the label said: the second write was not asked
    assert (workspace / "two.txt").read_text() == "2\n"


def test_a_high_yes_holds_for_this_call_only(
    chat: StartChat,  # noqa: F811 - the fixture imported above
    server: ScriptedServer,
    workspace: Path,
) -> None:
    server.enqueue(
        Reply.tool_calls([shell_call("s1", "touch a.txt")]),
        Reply.tool_calls([shell_call("s2", "touch b.txt")]),
        Reply.text(["ok"]),
    )
    session = chat()
    mark = session.submit("touch two")
    session.expect(APPROVAL)
    text = unwrapped(block_of(session.screen(mark)))
    session.send("y")
    mark = session.mark()
    session.expect(HEADING)  # asked again, as "this call only" said
    session.expect(APPROVAL)
    session.send("y")
    session.expect(FOOTER)
    session.prompt()

    assert "y yes, this call only" in text
    assert "s yes, and allow run_shell(touch *) for this session" in text
    assert "✓ run_shell touch b.txt · allowed once" in plain(session.screen(mark))
    assert (workspace / "a.txt").exists() and (workspace / "b.txt").exists()


def test_the_block_has_no_colour_under_no_color_or_a_dumb_terminal(
    chat: StartChat,  # noqa: F811 - the fixture imported above
    server: ScriptedServer,
) -> None:
    def overwrite() -> None:
        server.enqueue(
            Reply.tool_calls([write_call("w1", "notes.txt", "replaced\n")]), Reply.text(["ok"])
        )

    overwrite()
    coloured = chat()
    mark = coloured.submit("overwrite")
    coloured.expect(APPROVAL)
    raw = coloured.raw(mark)
    assert "\x1b[32m+replaced" in raw and f"\x1b[31m-{NOTES_LINES[0]}" in raw
    deny(coloured)

    for env in ({"NO_COLOR": "1"}, {"TERM": "dumb"}):
        overwrite()
        session = chat(env=env)
        mark = session.submit("overwrite")
        session.expect(APPROVAL)
        raw = session.raw(mark)
        block = raw[raw.index(HEADING) : raw.index(APPROVAL)]
        assert colour_codes(block) == [], (env, block)
        shown = lines_of(block)
        assert "+replaced" in shown and f"-{NOTES_LINES[0]}" in shown  # plain markers
        deny(session)


def test_a_denial_is_said_once(
    chat: StartChat,  # noqa: F811 - the fixture imported above
    server: ScriptedServer,
) -> None:
    server.enqueue(
        Reply.tool_calls([write_call("w1", "notes.txt", "gone\n")]), Reply.text(["fine"])
    )
    session = chat()
    mark = session.submit("overwrite")
    session.expect(APPROVAL)
    deny(session, "keep it")
    screen = session.screen(mark)

    assert "✗ write_file denied: the user denied it; the user said: keep it" in screen
    assert "denied: denied" not in screen
    [result] = [m for m in messages(server, 1) if m["role"] == "tool"]
    assert result["content"].startswith("denied: the user denied it")


def test_a_rule_denial_is_said_once_and_json_keeps_the_policy_words(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    server.enqueue(
        Reply.tool_calls([shell_call("s1", "touch x.txt")]),
        Reply.text(["ok"]),
        Reply.tool_calls([shell_call("s2", "for f in a; do touch $f; done")]),
        Reply.text(["ok"]),
    )
    text = run_cli(["run", "--forbid", "run_shell(touch *)", "touch it"], server=server)
    as_json = run_cli(["run", "-o", "json", "--deny", "loop"], server=server)

    assert text.returncode == 4, text.stderr
    assert "denied: denied" not in text.stderr
    assert "denied: the rule run_shell(touch *) denies it" in text.stderr
    [result] = [m for m in messages(server, 1) if m["role"] == "tool"]
    assert "denied: denied" not in result["content"]
    [call] = json.loads(as_json.stdout)["toolCalls"]
    assert "control flow" in call["approval"]["reason"]  # the machine-readable words stay


# --- the approval mode in the REPL --------------------------------------------------

TOOLBAR = "approvals: "
SHIFT_TAB = "\x1b[Z"


@pytest.mark.parametrize("columns", WIDTHS)
def test_the_mode_is_in_the_toolbar_and_switches_what_the_next_call_does(
    chat: StartChat,  # noqa: F811 - the fixture imported above
    server: ScriptedServer,
    workspace: Path,
    columns: int,
) -> None:
    session = chat(cpr=True, columns=columns)
    # at 40 columns the toolbar leaves out the less needed parts; the mode always stays
    sandbox = " · sandbox on" if columns >= 80 else ""
    session.expect(f"{TOOLBAR}ask{sandbox}")  # the toolbar, once the cursor is known

    said = session.command("/approvals yes", "Shift+Tab cycles")
    assert "approvals: yes (auto-approve): calls that would ask run without asking" in said
    session.expect(f"{TOOLBAR}yes (auto-approve)")
    server.enqueue(Reply.tool_calls([write_call("w1", "yes.txt", "1\n")]), Reply.text(["ok"]))
    screen = session.turn("write it")
    assert HEADING not in screen  # auto-approved: not asked
    assert (workspace / "yes.txt").read_text() == "1\n"

    session.send(SHIFT_TAB)  # yes → deny (the toolbar redraws only the changed cells)
    said = session.command("/approvals", "Shift+Tab cycles")
    assert "approvals: deny: calls that would ask are refused" in said
    session.expect(f"{TOOLBAR}deny{sandbox}")  # the next prompt's toolbar, whole
    server.enqueue(Reply.tool_calls([write_call("w2", "deny.txt", "2\n")]), Reply.text(["ok"]))
    screen = session.turn("write another")
    assert HEADING not in screen and "✗ write_file denied" in screen
    assert not (workspace / "deny.txt").exists()

    session.send(SHIFT_TAB)  # deny → ask
    server.enqueue(Reply.tool_calls([write_call("w3", "ask.txt", "3\n")]), Reply.text(["ok"]))
    mark = session.submit("and one more")
    session.expect(HEADING)  # asked again
    session.expect(APPROVAL)
    deny(session)
    assert not (workspace / "ask.txt").exists()
    assert "✗ write_file denied" in session.screen(mark)

    bad = session.command("/approvals always", "no approval mode")
    assert "no approval mode 'always'; /approvals [ask|yes|deny]" in bad
    session.expect(f"{TOOLBAR}ask{sandbox}")


@pytest.mark.skipif(detect().backend is None, reason="no sandbox on this host")
def test_auto_approve_in_the_repl_never_leaves_the_sandbox(
    chat: StartChat,  # noqa: F811 - the fixture imported above
    server: ScriptedServer,
) -> None:
    """Switching to auto-approve grants what --yes grants: a call that asks to run outside
    the sandbox is refused, not run."""
    leave = {"command": "echo left", "sandbox": "none", "justification": "x"}
    server.enqueue(
        Reply.tool_calls([{"id": "s1", "name": "run_shell", "arguments": leave}]),
        Reply.text(["ok"]),
    )
    session = chat()
    session.command("/approvals yes", "Shift+Tab cycles")
    screen = session.turn("leave the sandbox")
    assert HEADING not in screen
    assert "✗ run_shell denied" in screen
    [result] = [m for m in messages(server, 1) if m["role"] == "tool"]
    assert "never leaves the sandbox" in result["content"]


# --- the block's own text -------------------------------------------------------------


@pytest.mark.parametrize("width", [20, 40, 120])
def test_wrapping_keeps_every_word_whole_within_the_width(width: int) -> None:
    words = ["yes,", "and", "allow", "run_shell(git push *),", "write_file(src/*)", "x" * 50]
    lines = wrap(words, width, "  y  ", "     ")
    assert all(len(line) <= width for line in lines), lines
    joined = " ".join(line.strip() for line in lines)
    fitting = [w for w in words if len(w) <= width - 5]
    assert all(w in joined for w in fitting)  # a word that fits a line is never broken
    assert "".join(joined.split()).removeprefix("y") == "".join(" ".join(words).split())


def test_jargon_reasons_read_as_plain_words() -> None:
    assert plain_reason("control flow").startswith("it has if/for/while/case logic")
    assert plain_reason("it uses `c_style_for_statement`") == (
        "it uses a shell form (c_style_for_statement) the checker does not know"
    )
    assert plain_reason("read-only (ls, cat)") == "it only reads (ls, cat)"
    assert plain_reason("writes a file inside the workspace") == (
        "writes a file inside the workspace"  # already plain: kept
    )
