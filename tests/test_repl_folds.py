"""The folded transcript, judged on pyte screens of the installed `agentcli chat`: an
answered approval becomes one line (the menu gone from the screen and the scrollback),
Ctrl-O and `/expand N` show it again, a step's read-only calls are one summary line, and the
scripted fix task (search → read → edit → test → answer) fits in 25 rows at 100 columns.
`agentcli run -o text` in a pipe shows every call as before."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentcli.policy.engine import Prompt
from agentcli.risk import ApprovalRequest, Assessment, Risk
from agentcli.ui.approval_fold import cells, folded_line
from tests.conftest import RunCli
from tests.scripted_server import Reply, ScriptedServer
from tests.terminal_screen import Terminal
from tests.test_repl_screens import (  # noqa: F401 - term is the fixture
    FOOTER,
    StartTerminal,
    asking,
    call,
    index_of,
    term,
)

CTRL_O = "\x0f"
MENU = "choose ["
CALC = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a + b\n"
TEST_CALC = (
    "from calc import add, sub\n\n"
    "assert add(2, 3) == 5\n"
    'assert sub(5, 3) == 2, "sub(5, 3) should be 2"\n'
    'print("2 passed")\n'
)
FIXED = {
    "path": "calc.py",
    "old_text": "def sub(a, b):\n    return a + b",
    "new_text": "def sub(a, b):\n    return a - b",
}
ANSWER = (
    "Fixed: `sub` in calc.py added its arguments instead of subtracting them.\n\n"
    "The test passes now."
)


def fix_task(server: ScriptedServer, workspace: Path) -> None:
    """The newcomer's fix: search, read, edit (asks), test (asks), answer."""
    (workspace / "calc.py").write_text(CALC)
    (workspace / "test_calc.py").write_text(TEST_CALC)
    server.enqueue(
        Reply.tool_calls(
            [call("s1", "search_content", {"pattern": "def sub"})],
            text_before=["Let me find `sub`.\n"],
        ),
        Reply.tool_calls([call("r1", "read_file", {"path": "calc.py"})]),
        Reply.tool_calls([call("e1", "edit_file", FIXED)]),
        Reply.tool_calls([call("t1", "run_shell", {"command": "python3 test_calc.py"})]),
        Reply.text([ANSWER]),
    )


MENU_TEXT = ("● Allow ", MENU, "yes, this edit only", "yes, this call only", "no (you may")


def answer_each(terminal: Terminal, keys: str) -> None:
    """Answers the turn's approvals one by one with `keys`, to its footer and the prompt."""
    for number, key in enumerate(keys, start=1):
        terminal.wait_for(lambda n=number: terminal.raw.count(MENU.encode()) >= n)
        terminal.wait_for(lambda: asking(terminal))  # the key is read now
        terminal.send(key)
    terminal.wait_for(lambda: terminal.at_prompt() and bool(FOOTER.search(terminal.text())))


def no_menu(lines: list[str]) -> None:
    """No trace of an answered menu: not on the screen, not in the scrollback pyte keeps."""
    left = [line for line in lines if any(text in line for text in MENU_TEXT)]
    assert not left, "\n".join(lines)


def transcript(lines: list[str], prompt: str) -> list[str]:
    """The turn's rows: from its prompt line to the footer under it."""
    start = index_of(lines, f"› {prompt}")
    end = next(i for i in range(start, len(lines)) if FOOTER.search(lines[i]))
    return lines[start : end + 1]


# --- the fix task ----------------------------------------------------------------------


def fixed_at_100(start: StartTerminal, server: ScriptedServer, workspace: Path) -> Terminal:
    """The fix task in a 100-column REPL, both approvals answered `y`."""
    fix_task(server, workspace)
    terminal = start("chat", columns=100)
    terminal.send("fix the bug in sub\r")
    answer_each(terminal, "yy")
    return terminal


def test_the_fix_task_at_100_columns_fits_in_25_rows_with_each_menu_folded(
    term: StartTerminal,  # noqa: F811 - the fixture imported above
    server: ScriptedServer,
    workspace: Path,
) -> None:
    terminal = fixed_at_100(term, server, workspace)

    lines = terminal.lines()
    shown = transcript(lines, "fix the bug in sub")
    assert len(shown) <= 25, "\n".join(shown)
    no_menu(lines)
    assert "  ✓ Searched for 1 pattern (ctrl+o to expand · /expand 1)" in shown, shown
    assert "  ✓ Read 1 file (ctrl+o to expand · /expand 2)" in shown, shown
    edit = index_of(shown, "  ✓ edit_file calc.py · allowed once (ctrl+o to expand · /expand 3)")
    assert shown[edit + 1].startswith("  ✓ edit_file: "), shown  # its result, right under it
    assert (
        "  ✓ run_shell python3 test_calc.py · allowed once (ctrl+o to expand · /expand 4)" in shown
    )
    assert "    2 passed" in shown, shown  # what the test printed stays
    assert not [line for line in shown if "search_content" in line or "read_file" in line], shown
    assert "The test passes now." in shown
    assert (workspace / "calc.py").read_text().endswith("return a - b\n")


def test_the_fix_task_on_a_short_screen_leaves_no_menu_in_the_scrollback(
    term: StartTerminal,  # noqa: F811 - the fixture imported above
    server: ScriptedServer,
    workspace: Path,
) -> None:
    """24 rows: each block is drawn at the foot of the screen, scrolling the transcript
    into pyte's history; the erased block is in neither."""
    fix_task(server, workspace)
    terminal = term("chat", columns=100, rows=24)
    terminal.send("fix the bug in sub\r")
    answer_each(terminal, "yy")

    lines = terminal.lines()
    assert terminal.screen.history.top, "nothing scrolled: the test would prove nothing"
    no_menu(lines)
    assert sum("· allowed once" in line for line in lines) == 2, lines


# --- Ctrl-O and /expand ----------------------------------------------------------------


def test_ctrl_o_shows_the_last_folded_item_and_expand_n_any(
    term: StartTerminal,  # noqa: F811 - the fixture imported above
    server: ScriptedServer,
    workspace: Path,
) -> None:
    terminal = fixed_at_100(term, server, workspace)

    terminal.send(CTRL_O)  # the last: the test command
    terminal.wait_for("[4] ✓ run_shell python3 test_calc.py · allowed once")
    terminal.wait_prompt()
    lines = terminal.lines()
    assert lines[index_of(lines, "[4] ✓ run_shell") + 1] == "  $ python3 test_calc.py", lines

    command(terminal, "/expand 3")  # the edit's diff, back
    lines = terminal.lines()
    start = index_of(lines, "[3] ✓ edit_file calc.py · allowed once")
    shown = lines[start : index_of(lines, "›", start + 1)]
    assert "  path: calc.py" in shown, shown
    assert "  -    return a + b" in shown and "  +    return a - b" in shown, shown
    no_menu(lines)  # shown again as what was answered, not as a question

    command(terminal, "/expand 2")  # a folded read: the call and what it returned
    lines = terminal.lines()
    start = index_of(lines, "[2] ✓ Read 1 file")
    assert lines[start + 1] == '● read_file path="calc.py"', lines[start:]
    assert lines[start + 2].startswith("  ✓ read_file: "), lines[start:]

    command(terminal, "/expand 99")
    lines = terminal.lines()
    said = lines[index_of(lines, "› /expand 99") + 1 :]
    assert said == ["no folded item 99: /expand takes a number, 1-4", "›"], said


def command(terminal: Terminal, text: str) -> None:
    """A slash command typed, to the prompt after what it says."""
    marks = terminal.text().count(f"› {text}")
    terminal.send(text + "\r")
    terminal.wait_for(lambda: terminal.text().count(f"› {text}") > marks and terminal.at_prompt())


# --- a denial, and a subject from outside ------------------------------------------------


@pytest.mark.parametrize("columns", [40, 100])
def test_a_denied_command_folds_to_one_line_with_the_reason_under_it(
    term: StartTerminal,  # noqa: F811 - the fixture imported above
    server: ScriptedServer,
    workspace: Path,
    columns: int,
) -> None:
    command = "rm -rf x \x1b[2J\x1b]0;owned\x07 " + "y" * 150  # erase, a title, too long
    server.enqueue(
        Reply.tool_calls([call("d1", "run_shell", {"command": command})]),
        Reply.text(["Understood."]),
    )
    (workspace / "x").mkdir()
    terminal = term("chat", columns=columns)
    terminal.send("clean up\r")
    terminal.wait_for(lambda: asking(terminal))
    terminal.send("n")
    terminal.wait_for("reason for the model")
    terminal.send("keep x\r")
    terminal.wait_for("Understood.")
    terminal.wait_prompt()

    lines = terminal.lines()
    no_menu(lines)
    assert "reason for the model" not in terminal.text()  # its line went with the menu
    [folded] = [i for i, line in enumerate(lines) if line.startswith("  ✗ run_shell rm -rf x ␛[2J")]
    assert lines[folded].endswith(
        "· denied" if columns == 40 else "· denied (ctrl+o to expand · /expand 1)"
    )
    assert len(lines[folded]) < columns and "…" in lines[folded], lines[folded]  # one row, cut
    assert lines[folded + 1] == "    told the model: keep x", lines
    assert (workspace / "x").is_dir()
    tool = server.requests[1].json["messages"][-1]
    assert "keep x" in tool["content"], tool


# --- a pipe is as before ---------------------------------------------------------------

# Recorded from `agentcli run` before the folds (main at issue 41's item 3): the pipe's
# stdout and stderr, byte for byte once the times and the sandbox's name are masked.
PIPE_BEFORE = Path(__file__).parent / "fixtures" / "fix_task_pipe.txt"
_TIMES = re.compile(r"\((?:\d+ ms|\d+(?:\.\d+)? s)\)")
_SANDBOX = re.compile(r" · sandbox [\w-]+")


def masked(result: object) -> str:
    """stdout and stderr as one text, what changes from run to run (times, the sandbox
    this machine has) replaced by fixed words."""
    out = f"--- stdout\n{result.stdout}--- stderr\n{result.stderr}"  # type: ignore[attr-defined]
    return _SANDBOX.sub(" · sandbox SANDBOX", _TIMES.sub("(TIME)", out))


def test_run_in_a_pipe_is_byte_for_byte_as_before_the_folds(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    fix_task(server, workspace)
    result = run_cli(["run", "--yes", "-o", "text", "fix the bug in sub"], server=server)

    assert result.returncode == 0, result.stderr
    assert masked(result) == PIPE_BEFORE.read_text(encoding="utf-8")
    assert "Searched for" not in result.stderr and "/expand" not in result.stderr


# --- the folded line at every width ----------------------------------------------------


def shell_prompt(command: str) -> Prompt:
    assessment = Assessment(Risk.HIGH, "`touch` writes files")
    request = ApprovalRequest("run_shell", {"command": command}, assessment)
    return Prompt(request, ["run_shell(touch *)"], [])


@pytest.mark.parametrize(
    ("outcome", "said"),
    [
        ("once", "· allowed once"),
        ("session", "· allowed run_shell(touch *) for this session"),
        ("project", "· always allowed run_shell(touch *) in this project"),
        ("deny", "· denied"),
        ("deny_session", "· refused run_shell(touch *) for this session"),
        ("cancelled", "· denied (cancelled)"),
    ],
)
def test_the_folded_line_names_what_the_key_granted(outcome: str, said: str) -> None:
    line = folded_line(shell_prompt("touch a.txt"), outcome, 7, 120, color=False)
    assert line == f"  {'✓' if 'allowed' in said else '✗'} run_shell touch a.txt {said}" + (
        " (ctrl+o to expand · /expand 7)"
    )


@pytest.mark.parametrize("width", range(16, 121, 8))
def test_the_folded_line_keeps_within_the_width_and_the_answer_whole_where_it_can(
    width: int,
) -> None:
    rows = folded_line(shell_prompt("touch " + "a" * 80), "session", 12, width, False)
    assert all(cells(row) < width for row in rows.split("\n")), rows
    if width >= 56:  # room for `    allowed run_shell(touch *) for this session`
        assert "allowed run_shell(touch *) for this session" in rows, rows
