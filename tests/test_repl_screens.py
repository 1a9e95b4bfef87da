"""The REPL judged by what a terminal shows: the installed `agentcli chat` (and `run`) on a
pseudo-terminal, read through pyte (tests/terminal_screen.py), against the scripted model
server — a stopped call, type-ahead, the model picker, leaving and resuming, approval
blocks, the toolbar and the banner at 40 columns."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Mapping
from importlib.metadata import version
from pathlib import Path

import pytest

from tests.conftest import build_env
from tests.scripted_server import Reply, ScriptedServer
from tests.terminal_screen import ROWS, Terminal, row_text

CTRL_C, CTRL_D = "\x03", "\x04"
APPROVAL = "choose ["
FOOTER = re.compile(r"↑ [\d,]+ in · ↓ [\d,]+ out · \d+\.\ds")
SLOW_OUTPUT = "for i in 1 2 3; do echo line$i; sleep 0.2; done; sleep 30"

StartTerminal = Callable[..., Terminal]


def call(call_id: str, name: str, arguments: dict) -> dict:
    return {"id": call_id, "name": name, "arguments": arguments}


@pytest.fixture
def term(server: ScriptedServer, workspace: Path, cli_home: Path) -> Iterator[StartTerminal]:
    """term(*args, columns=80, rows=40, env=None, cpr=False) -> `agentcli ARGS` on a pyte
    terminal (`chat` waits for its first prompt). `cpr=True` lets prompt-toolkit ask where
    the cursor is, which it needs to draw the bottom toolbar (pyte answers)."""
    started: list[Terminal] = []

    def start(
        *args: str,
        columns: int = 80,
        rows: int = ROWS,
        env: Mapping[str, str] | None = None,
        cpr: bool = False,
    ) -> Terminal:
        extra = {"TERM": "xterm-256color", **(env or {})}
        if not cpr:
            extra["PROMPT_TOOLKIT_NO_CPR"] = "1"
        terminal = Terminal(
            args or ("chat",),
            env=build_env(cli_home, server, extra),
            cwd=workspace,
            columns=columns,
            rows=rows,
        )
        started.append(terminal)
        if (args or ("chat",))[0] == "chat":
            terminal.wait_prompt()
        return terminal

    yield start
    for terminal in started:
        terminal.close()


def turn(terminal: Terminal, text: str) -> list[str]:
    """A message, to its footer and the next prompt: the lines from the message on."""
    marks = len(terminal.lines())

    def after() -> list[str]:
        lines = terminal.lines()
        starts = [i for i, line in enumerate(lines) if line.startswith(f"› {text}")]
        return lines[max(starts) :] if starts and max(starts) >= marks - 1 else []

    terminal.send(text + "\r")
    terminal.wait_for(lambda: terminal.at_prompt() and any(FOOTER.search(line) for line in after()))
    return after()


def index_of(lines: list[str], needle: str, start: int = 0) -> int:
    return next(i for i in range(start, len(lines)) if needle in lines[i])


# --- a stopped call ------------------------------------------------------------------


@pytest.mark.parametrize("approve", [True, False], ids=["asked", "--yes"])
def test_a_stopped_command_stays_on_screen_with_its_output(
    term: StartTerminal, server: ScriptedServer, approve: bool
) -> None:
    server.enqueue(
        Reply.tool_calls([call("c1", "run_shell", {"command": SLOW_OUTPUT})]),
        Reply.text(["unused"]),
    )
    terminal = term("chat") if approve else term("chat", "--yes")
    terminal.send("go\r")
    if approve:
        terminal.wait_for(APPROVAL)
        terminal.send("y")
    terminal.wait_for("line3")
    terminal.send(CTRL_C)
    terminal.wait_for(FOOTER)
    terminal.wait_prompt()

    lines = terminal.lines()
    call_at = index_of(lines, "· allowed once" if approve else "● run_shell")  # folded when asked
    shown = lines[call_at:]
    assert "    line1" in shown and "    line2" in shown, shown  # what it printed, kept
    stopped = index_of(shown, "✗ run_shell stopped: interrupted")
    assert stopped > shown.index("    line2"), shown
    assert "interrupted" in shown[stopped + 1], shown  # then the footer says so too


def test_run_stopped_on_a_terminal_ends_its_last_line(
    term: StartTerminal, server: ScriptedServer
) -> None:
    server.enqueue(Reply.tool_calls([call("c1", "run_shell", {"command": SLOW_OUTPUT})]))
    terminal = term("run", "--yes", "go")
    terminal.wait_for("line3")
    time.sleep(0.1)
    terminal.send(CTRL_C)
    assert terminal.finish() == 130

    lines = terminal.lines()
    assert lines[-1].startswith("  ✗ run_shell stopped: interrupted"), lines
    assert "    line2" in lines, lines
    assert terminal.screen.cursor.x == 0  # the shell's prompt starts a line of its own


# --- type-ahead ----------------------------------------------------------------------

SLOW_ANSWER = [f"word{number} " for number in range(40)]
# Four paragraphs of ten words: blocks printed one by one while the answer streams.
SLOW_BLOCKS = [f"word{n}" + ("\n\n" if n % 10 == 9 else " ") for n in range(40)]


def test_a_line_typed_during_an_answer_is_queued_and_sent_next(
    term: StartTerminal, server: ScriptedServer
) -> None:
    server.enqueue(Reply.text(SLOW_BLOCKS, delay=0.05), Reply.text(["Second answer."]))
    terminal = term("chat")
    terminal.send("first\r")
    terminal.wait_for("word5")
    terminal.send("and then this\r")
    terminal.wait_for("queued: and then this")
    terminal.send("a draft")  # no Enter: it waits in the next prompt
    terminal.wait_for("Second answer.")
    terminal.wait_for(lambda: terminal.cursor_line() == "› a draft")

    lines = terminal.lines()
    answer, last = index_of(lines, "word0"), index_of(lines, "word39")
    assert index_of(lines, "queued: and then this") > last  # by the prompt, not in the answer
    assert index_of(lines, "› and then this") > last  # shown as sent, after the answer
    assert " ".join(lines[answer : last + 1]).split() == [word.strip() for word in SLOW_BLOCKS], (
        lines
    )  # the answer's blocks are whole and together: nothing went between them
    second = server.requests[1].json["messages"]
    assert second[-1] == {"role": "user", "content": "and then this"}
    assert len(server.requests) == 2  # the draft is not sent


def test_after_a_stopped_turn_the_queued_line_waits_in_the_prompt(
    term: StartTerminal, server: ScriptedServer
) -> None:
    server.enqueue(Reply.text(SLOW_ANSWER, delay=0.1))
    terminal = term("chat")
    terminal.send("first\r")
    terminal.wait_for("word3")
    terminal.send("next question\r")
    terminal.wait_for("queued: next question")
    terminal.send(CTRL_C)
    terminal.wait_for(lambda: terminal.cursor_line() == "› next question")
    assert len(server.requests) == 1  # not sent: the turn was stopped


# --- /model --------------------------------------------------------------------------


def test_model_alone_lists_the_servers_models_in_a_picker_and_switches(
    term: StartTerminal, server: ScriptedServer
) -> None:
    server.models = ["first-model", "scripted-model", "third-model"]
    server.enqueue(Reply.text(["From the third."]))
    terminal = term("chat", "--model", "openai:scripted-model")
    terminal.send("/model\r")
    terminal.wait_for("Enter switches")
    shown = terminal.text()
    assert "› openai:scripted-model · in use" in shown, shown  # starts on the model in use
    assert "  openai:first-model" in shown and "  openai:third-model" in shown, shown
    # a model listed without a description is its name alone, not `name ·`
    assert not any(line.rstrip().endswith("·") for line in shown.splitlines()), shown
    terminal.send("j")  # down
    terminal.wait_for("› openai:third-model")
    terminal.send("\r")
    terminal.wait_for("model: openai:third-model")
    terminal.wait_prompt()
    assert "Enter switches" not in terminal.text()  # the picker took itself off the screen

    turn(terminal, "hello")
    assert server.requests[-1].json["model"] == "third-model"


def test_a_slip_of_a_command_name_gets_the_command_it_was_meant_to_be(
    term: StartTerminal,
) -> None:
    terminal = term("chat")
    terminal.send("/modle\r")
    terminal.wait_for("unknown command /modle; did you mean /model?")
    terminal.wait_prompt()
    terminal.send("/zzzz\r")
    terminal.wait_for("unknown command /zzzz; /help lists them")


def test_model_alone_says_why_when_nothing_is_listed(
    term: StartTerminal, server: ScriptedServer, tmp_path: Path
) -> None:
    server.models = []
    # As on a machine without the embedded model (the suite's has it): its runtime absent.
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(
        "import importlib.util\n"
        "_find = importlib.util.find_spec\n"
        "importlib.util.find_spec = lambda name, *a: None if name == 'xllamacpp' "
        "else _find(name, *a)\n"
    )
    terminal = term("chat", "--model", "openai:scripted-model", env={"PYTHONPATH": str(hooks)})
    terminal.send("/model\r")
    terminal.wait_for("no provider listed any model")
    terminal.wait_prompt()
    assert "model: openai:scripted-model;" in terminal.text()


# --- leaving and coming back ---------------------------------------------------------

RESUME = re.compile(r"resume with: agentcli --resume (\S+)")


def first_session(term: StartTerminal, server: ScriptedServer) -> str:
    """A conversation of two turns (one with a tool call), left with Ctrl-D: its id, as
    the exit line gives it."""
    server.enqueue(
        Reply.tool_calls([call("r1", "read_file", {"path": "notes.txt"})]),
        Reply.text(["The notes hold two lines.\n\nFirst note, then second note."]),
        Reply.text(["Yes: nothing else is in the file."]),
    )
    terminal = term("chat")
    turn(terminal, "what is in notes.txt?")
    turn(terminal, "is that all?")
    terminal.send(CTRL_D)
    assert terminal.finish() == 0
    found = RESUME.search(terminal.lines()[-1])
    assert found, terminal.lines()[-3:]  # the last thing said before the shell's prompt
    return found.group(1)


def assert_replayed(lines: list[str]) -> None:
    start = index_of(lines, "› what is in notes.txt?")
    assert lines[start + 1].startswith("  ● read_file path="), lines
    assert lines[start + 2 : start + 4] == [
        "  The notes hold two lines.",
        "  First note, then second note.",
    ], lines
    assert lines[start + 4] == "› is that all?", lines
    assert lines[start + 5] == "  Yes: nothing else is in the file.", lines


def test_leaving_says_how_to_resume_and_resuming_shows_the_conversation(
    term: StartTerminal, server: ScriptedServer
) -> None:
    session_id = first_session(term, server)
    server.enqueue(Reply.text(["Still here."]))
    terminal = term("--resume", session_id)
    terminal.wait_prompt()
    lines = terminal.lines()
    assert f"  continuing session {session_id} (2 earlier turns)" in lines
    assert_replayed(lines)
    turn(terminal, "and now?")
    users = [m["content"] for m in server.requests[-1].json["messages"] if m["role"] == "user"]
    assert users == ["what is in notes.txt?", "is that all?", "and now?"]


def test_resume_in_chat_replays_the_conversation(
    term: StartTerminal, server: ScriptedServer
) -> None:
    session_id = first_session(term, server)
    terminal = term("chat")
    terminal.send(f"/resume {session_id}\r")
    terminal.wait_for(f"resumed session {session_id} (2 turns)")
    terminal.wait_prompt()
    assert_replayed(terminal.lines())


def test_leaving_an_empty_conversation_says_nothing_of_resuming(term: StartTerminal) -> None:
    terminal = term("chat")
    terminal.send(CTRL_D)
    assert terminal.finish() == 0
    assert "resume with" not in terminal.text()


# --- approval blocks -----------------------------------------------------------------


def asking(terminal: Terminal) -> bool:
    """The cursor is on a menu's `choose [...]` row: its key is being read."""
    row = terminal.screen.buffer[terminal.screen.cursor.y]
    return APPROVAL in row_text(row, terminal.columns)


def approval_block(terminal: Terminal) -> list[str]:
    lines = terminal.lines()
    start = max(i for i, line in enumerate(lines) if line.startswith("● Allow "))
    return lines[start:]


@pytest.mark.parametrize("columns", [40, 100])
def test_approval_arguments_are_labelled_fields(
    term: StartTerminal, server: ScriptedServer, columns: int
) -> None:
    edit = {"path": "notes.txt", "old_text": "first note\n", "new_text": "first\n"}
    command = {
        "command": "git fetch origin",
        "sandbox": "network",
        "justification": "to see the remote branches",
    }
    server.enqueue(
        Reply.tool_calls([call("e1", "edit_file", edit)]),
        Reply.tool_calls([call("s1", "run_shell", command)]),
        Reply.text(["done"]),
    )
    terminal = term("chat", columns=columns)
    terminal.send("go\r")
    terminal.wait_for(APPROVAL)
    block = approval_block(terminal)
    assert block[1] == "  path: notes.txt", block
    assert not [line for line in block if "{" in line], block  # no JSON
    terminal.send("y")
    terminal.wait_for(lambda: "Allow run_shell?" in terminal.text() and asking(terminal))
    block = approval_block(terminal)
    assert all(len(line) <= columns for line in block), block
    whole = joined(block)
    start = whole.index("  $ git fetch origin")
    assert whole[start + 1 : start + 3] == [
        "  sandbox: network",
        "  justification: to see the remote branches",
    ], block


def joined(block: list[str]) -> list[str]:
    """The block's lines with each `↪` continuation put back on the line it continues."""
    out: list[str] = []
    for line in block:
        if line.startswith("  ↪") and out:
            out[-1] += line.removeprefix("  ↪")
        else:
            out.append(line)
    return out


# --- @path ---------------------------------------------------------------------------


def test_a_mention_of_a_missing_file_is_said_and_a_handle_is_not(
    term: StartTerminal, server: ScriptedServer, workspace: Path
) -> None:
    (workspace / "src").mkdir()
    server.enqueue(Reply.text(["ok"]))
    terminal = term("chat")
    lines = turn(terminal, "ask @alice about @missing.txt, @src and @notes.txt")

    notes = lines[1 : index_of(lines, "ok")]
    assert "  @missing.txt: no such file in the workspace; not attached" in notes, notes
    assert "  @src is a directory; not attached (name a file in it)" in notes, notes
    assert any(line.startswith("  attached notes.txt (") for line in notes), notes
    assert not [line for line in notes if "alice" in line], notes  # a handle: said nothing
    sent = server.requests[0].json["messages"][-1]["content"]
    assert sent.startswith("ask @alice about @missing.txt, @src and @notes.txt")
    assert sent.count("<file path=") == 1


# --- the banner and the toolbar at 40 columns ----------------------------------------


def test_the_banner_at_40_columns_breaks_between_its_parts_never_inside_the_path(
    term: StartTerminal, workspace: Path
) -> None:
    terminal = term("chat", "--model", "openai:scripted-model", columns=40)
    lines = terminal.lines()
    assert all(len(line) <= 40 for line in lines), lines
    assert lines[0] == f"agentcli {version('agentcli')} · openai:scripted-model", lines
    path = lines[1].strip()
    assert path.startswith("…") and str(workspace).endswith(path[1:]), lines  # its end, whole
    assert lines[2:4] == ["  /help for commands · Ctrl-C cancels", "  Ctrl-D exits"], lines


def test_y_approves_this_edit_only_and_s_the_session(
    term: StartTerminal, server: ScriptedServer, workspace: Path
) -> None:
    def edit(call_id: str, old: str, new: str) -> dict:
        return call(call_id, "edit_file", {"path": "notes.txt", "old_text": old, "new_text": new})

    server.enqueue(
        Reply.tool_calls([edit("e1", "first note", "1st note")]),
        Reply.tool_calls([edit("e2", "second note", "2nd note")]),
        Reply.tool_calls([edit("e3", "1st note", "first note again")]),
        Reply.text(["done"]),
    )
    terminal = term("chat")
    terminal.send("edit\r")
    terminal.wait_for(APPROVAL)
    block = approval_block(terminal)
    assert "  y  yes, this edit only" in block, block
    assert "  s  yes, and allow edit_file for this session" in block, block
    terminal.send("y")
    terminal.wait_for("✓ edit_file notes.txt · allowed once")  # the menu folded, said
    terminal.wait_for(lambda: asking(terminal))  # the next edit asks
    terminal.send("s")
    terminal.wait_for(FOOTER)
    terminal.wait_prompt()
    folded = [line for line in terminal.lines() if "✓ edit_file notes.txt · " in line]
    assert len(folded) == 2, folded  # the third was not asked: s holds
    assert "· allowed edit_file for this session" in folded[1], folded
    assert (workspace / "notes.txt").read_text() == "first note again\n2nd note\n"


# --- tool lines and the toolbar ------------------------------------------------------

TIMING = re.compile(r" \((\d+ ms|\d+\.\ds)\)| \d+\.\ds")


def shown_turn(lines: list[str]) -> list[str]:
    """A turn's lines without its timings (which differ from run to run)."""
    return [TIMING.sub("", line) for line in lines]


def test_tool_lines_look_the_same_however_the_call_was_streamed(
    term: StartTerminal, server: ScriptedServer
) -> None:
    read = [call("r1", "read_file", {"path": "notes.txt"})]
    terminal = term("chat", "--yes")
    screens = []
    for number, (style, fragment) in enumerate([("whole", 8), ("canonical", 1), ("canonical", 5)]):
        server.enqueue(
            Reply.tool_calls(
                read, style=style, fragment=fragment, text_before=["Let ", "me read.\n"]
            ),
            Reply.text(["It holds ", "two notes."]),
        )
        lines = turn(terminal, f"read {number}")
        folded = index_of(lines, "✓ Read 1 file")  # numbered by the turn
        lines[folded] = lines[folded].replace(f"/expand {number + 1}", "/expand N")
        screens.append(shown_turn([*lines[1:], *expanded(terminal)]))
    assert screens[0] == screens[1] == screens[2], screens
    first = screens[0]
    assert first[0] == "Let me read.", first
    assert "  ✓ Read 1 file (ctrl+o to expand · /expand N)" in first, first
    assert index_of(first, '● read_file path="notes.txt"') < index_of(first, "✓ read_file")
    assert "It holds two notes." in first


def expanded(terminal: Terminal) -> list[str]:
    """Ctrl-O pressed at the prompt: the lines it shows, the last folded item."""
    marks = terminal.text().count("] ✓ ")
    terminal.send("\x0f")
    terminal.wait_for(lambda: terminal.text().count("] ✓ ") > marks and terminal.at_prompt())
    lines = terminal.lines()
    start = max(i for i, line in enumerate(lines) if "] ✓ " in line)
    return lines[start + 1 : -1]  # below its [N] title, to the prompt


@pytest.mark.parametrize("columns", [40, 120])
def test_the_toolbar_fits_one_line_and_leaves_no_copies_behind(
    term: StartTerminal, server: ScriptedServer, columns: int
) -> None:
    server.enqueue(Reply.text(["One."]), Reply.text(["Two."]))
    terminal = term("chat", "--model", "openai:scripted-model", columns=columns, cpr=True)
    terminal.wait_for("approvals: ask")
    for text, answer in (("first", "One."), ("second", "Two.")):
        terminal.send(text + "\r")
        terminal.wait_for(answer)
    terminal.wait_for(lambda: "approvals: ask" in terminal.lines()[-1] and terminal.at_prompt())
    lines = terminal.lines()
    bar = lines[-1]
    assert len(bar) <= columns and bar.startswith(" approvals: ask"), bar
    assert "openai:scripted-model" in bar, bar
    assert ("tokens" in bar) == (columns >= 120), bar  # left out first when narrow
    assert sum("approvals: ask" in line for line in lines) == 1, lines  # drawn once, at the end
