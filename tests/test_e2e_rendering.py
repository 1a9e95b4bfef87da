"""What a person reads: result previews that show what changed, counts in words (`1 line`),
one timing per result, text meant for the model kept from the terminal, and plain
terminals (TERM=dumb, NO_COLOR) that get no escape sequences but keep Markdown's markers —
in `agentcli run` (pipes and a pseudo-terminal) and in `agentcli chat` at 40 and 120
columns, against the scripted server."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pexpect
import pytest

from tests.conftest import AGENTCLI, RunCli, build_env
from tests.scripted_server import Reply, ScriptedServer
from tests.sse_server import Gate
from tests.test_repl import FOOTER, StartChat, chat, lines_of, plain  # noqa: F401 - the fixture

SCHEMA_HINT = "Expected parameters (JSON Schema)"
TIMING = re.compile(r"\(\d+ ms\)|\(\d+\.\ds\)|\d\.\d\ds")
ANSWER = [
    "# Heading\n\n",
    "A paragraph long enough to wrap at forty columns, so that the width is seen.\n\n",
    "> a quoted line\n\n",
    "- item one\n- item two\n",
]


def call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": arguments}


def edit_adding_a_line() -> dict[str, Any]:
    change = {"path": "notes.txt", "old_text": "first note\n", "new_text": "first note\nadded\n"}
    return call("e1", "edit_file", change)


def tool_contents(server: ScriptedServer, index: int) -> list[str]:
    messages = server.requests[index].json["messages"]
    return [m["content"] for m in messages if m["role"] == "tool"]


def line_with(text: str, needle: str) -> str:
    [line] = [line for line in text.splitlines() if needle in line]
    return line


def written_lines(raw: str) -> list[str]:
    """The lines of output written without cursor movement (a dumb terminal)."""
    assert "\x1b" not in raw
    return [line.rstrip() for line in raw.replace("\r\n", "\n").replace("\r", "").split("\n")]


def between(lines: list[str], first: str, second: str) -> list[str]:
    """The lines strictly between the first line holding `first` and the next holding
    `second`."""
    start = next(i for i, line in enumerate(lines) if first in line)
    end = next(i for i, line in enumerate(lines) if i > start and second in line)
    return lines[start + 1 : end]


# --- run, in pipes ------------------------------------------------------------------


@pytest.mark.parametrize(
    "plain_env", [{"NO_COLOR": "1"}, {"TERM": "dumb"}], ids=["NO_COLOR", "dumb"]
)
def test_results_show_changed_lines_counts_in_words_and_one_timing(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, plain_env: dict[str, str]
) -> None:
    (workspace / "one.txt").write_text("only line\n")
    server.enqueue(
        Reply.tool_calls([edit_adding_a_line()]),
        Reply.tool_calls([call("s1", "run_shell", {"command": "echo one"})]),
        Reply.tool_calls([call("r1", "read_file", {"path": "one.txt"})]),
        Reply.text(["Done."]),
    )
    result = run_cli(["run", "--yes", "edit it"], server=server, env=plain_env)

    assert result.returncode == 0, result.stderr
    assert "\x1b[" not in result.stdout + result.stderr
    edit = line_with(result.stderr, "✓ edit_file")
    assert "edit_file: 1 line changed" in edit, edit
    assert "    +added" in result.stderr.splitlines()  # the changed line, not only the header
    assert "+++" not in result.stderr and "@@" not in result.stderr
    shell = line_with(result.stderr, "✓ run_shell")
    assert "run_shell: exit 0, 1 line" in shell, shell
    read = line_with(result.stderr, "✓ read_file")
    assert "read_file: 1 line (" in read, read
    for line in (edit, shell, read):
        assert len(TIMING.findall(line)) == 1, line  # one timing, not two
    assert (workspace / "notes.txt").read_text() == "first note\nadded\nsecond note\n"


@pytest.mark.parametrize(
    ("arguments", "problem", "for_the_model"),
    [
        ({}, "missing 'path'", "'path' is a required property"),
        ('{"path": "notes.txt"', "arguments not valid JSON", "Send one JSON object"),
        ({"path": 5}, "'path' is not a string", "5 is not of type 'string'"),
    ],
    ids=["missing", "not-json", "wrong-type"],
)
def test_an_invalid_call_is_one_short_line_for_the_user_and_all_of_it_for_the_model(
    run_cli: RunCli, server: ScriptedServer, arguments: Any, problem: str, for_the_model: str
) -> None:
    server.enqueue(
        Reply.tool_calls([call("bad", "read_file", arguments)]),
        Reply.text(["Retried."]),
    )
    result = run_cli(["run", "read the notes"], server=server)

    assert result.returncode == 0, result.stderr
    shown = TIMING.sub("", line_with(result.stderr, "✗ read_file")).strip()
    assert shown == (
        f"✗ read_file: the model's call was invalid ({problem}); it was told and may retry"
    ), shown
    assert SCHEMA_HINT not in result.stderr and "JSON object" not in result.stderr
    [content] = tool_contents(server, 1)  # what the model was told, in the next request
    assert for_the_model in content and SCHEMA_HINT in content, content


def test_machine_output_keeps_the_full_text(run_cli: RunCli, server: ScriptedServer) -> None:
    server.enqueue(Reply.tool_calls([call("bad", "read_file", {})]), Reply.text(["ok"]))
    result = run_cli(["run", "-o", "json", "read"], server=server)

    assert result.returncode == 0, result.stderr
    [entry] = json.loads(result.stdout)["toolCalls"]
    assert SCHEMA_HINT in entry["result"] and entry["errorKind"] == "invalid"


# --- run, on a pseudo-terminal ------------------------------------------------------


def run_on_terminal(
    server: ScriptedServer, workspace: Path, home: Path, columns: int, env: dict[str, str]
) -> str:
    log = io.StringIO()
    child = pexpect.spawn(
        str(AGENTCLI),
        ["run", "--yes", "go"],
        env=build_env(home, server, env),
        cwd=str(workspace),
        dimensions=(40, columns),
        encoding="utf-8",
        codec_errors="replace",
        timeout=20,
    )
    child.logfile_read = log
    try:
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, plain(log.getvalue())
    return log.getvalue()


@pytest.mark.parametrize("columns", [40, 120])
def test_run_on_a_dumb_terminal_writes_no_escapes_and_keeps_markers(
    server: ScriptedServer, workspace: Path, cli_home: Path, columns: int
) -> None:
    server.enqueue(
        Reply.tool_calls([edit_adding_a_line()], text_before=["Let me edit.\n"]),
        Reply.text(ANSWER),
    )
    raw = run_on_terminal(server, workspace, cli_home, columns, {"TERM": "dumb"})

    assert "\x1b" not in raw, raw[:500]
    lines = [line.rstrip() for line in raw.replace("\r\n", "\n").split("\n")]
    assert "# Heading" in lines
    assert "> a quoted line" in lines
    assert any(line.strip() == "• item one" for line in lines), lines
    paragraph = [line for line in lines if "paragraph" in line or "columns" in line]
    assert paragraph and all(len(line) <= columns for line in paragraph), paragraph
    assert (len(paragraph) > 1) == (columns == 40)  # wrapped at the real width, not Rich's 80


@pytest.mark.parametrize("columns", [40, 120])
def test_blocks_are_separated_by_one_blank_line_in_run(
    server: ScriptedServer, workspace: Path, cli_home: Path, columns: int
) -> None:
    server.enqueue(
        Reply.tool_calls([edit_adding_a_line()], text_before=["Let me edit.\n"]),
        Reply.text(["Done."]),
    )
    # A dumb terminal gets no cursor movement, so what was written is what is seen.
    raw = run_on_terminal(server, workspace, cli_home, columns, {"TERM": "dumb"})
    lines = written_lines(raw)

    assert between(lines, "Let me edit.", "edit_file") == [""], lines
    assert between(lines, "new_text=", "✓ edit_file") == [""], lines  # the call may wrap
    assert between(lines, "+added", "Done.") == [""], lines


# --- chat ---------------------------------------------------------------------------


@pytest.mark.parametrize("columns", [40, 120])
@pytest.mark.parametrize(
    "plain_env", [{"NO_COLOR": "1"}, {"TERM": "dumb"}], ids=["NO_COLOR", "dumb"]
)
def test_chat_on_plain_terminals(
    chat: StartChat,  # noqa: F811 - the fixture imported above
    server: ScriptedServer,
    columns: int,
    plain_env: dict[str, str],
) -> None:
    server.enqueue(
        Reply.tool_calls([edit_adding_a_line()], text_before=["Let me edit.\n"]),
        Reply.text(ANSWER),
    )
    session = chat("--yes", env=plain_env, columns=columns)
    mark = session.submit("edit the notes")
    session.expect(FOOTER)
    session.prompt()
    screen = plain(session.raw(mark))
    lines = [line.rstrip() for line in screen.split("\n")]

    assert "# Heading" in lines
    assert "> a quoted line" in lines
    assert any(line.strip() == "• item one" for line in lines), lines
    assert "✓ edit_file: 1 line changed" in screen
    assert "+added" in lines_of(screen)
    if plain_env.get("TERM") == "dumb":
        lines = written_lines(session.raw())  # not an escape, not even the prompt's
        # blocks: the answer, the call, its result, the next answer
        assert between(lines, "Let me edit.", "● edit_file") == [""], lines
        assert between(lines, "new_text=", "✓ edit_file") == [""], lines  # (it may wrap)
        assert between(lines, "+added", "# Heading") == [""], lines

    shown = session.command("/model nope:x", "error:")
    assert "/model 'nope:x'" in shown and "--model" not in shown, shown


# --- a resize during a stream -------------------------------------------------------


class Tmux:
    """A tmux server of its own (a real terminal that re-wraps lines on a resize, as most
    do), killed at the end."""

    def __init__(self, socket: Path, env: dict[str, str]) -> None:
        self.socket, self.env = socket, env

    def __call__(self, *args: str) -> str:
        command = ["tmux", "-S", str(self.socket), "-f", os.devnull, *args]
        done = subprocess.run(command, capture_output=True, text=True, env=self.env, timeout=10)
        return done.stdout

    def screen(self, history: bool = False) -> str:
        return self("capture-pane", "-p", "-J", *(("-S", "-") if history else ()))

    def wait_for(self, text: str, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.screen():
            assert time.monotonic() < deadline, f"no {text!r} on:\n{self.screen()}"
            time.sleep(0.05)


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (a re-wrapping terminal)")
@pytest.mark.parametrize(("before", "after"), [(120, 40), (40, 120)])
def test_a_resize_during_a_stream_leaves_no_stray_lines(
    server: ScriptedServer, workspace: Path, cli_home: Path, tmp_path: Path, before, after
) -> None:
    words = [f"w{number:03d} " for number in range(150)]
    server.enqueue(Reply.text(["Alpha " * 10 + "\n\n", *words, "\n\nEND\n"], delay=0.03))
    tmux = Tmux(tmp_path / "tmux.sock", build_env(cli_home, server, {"TERM": "xterm-256color"}))
    # Earlier output fills the screen: the answer streams at its bottom, as after a few turns.
    command = f"seq 60; {shlex.join([str(AGENTCLI), 'run', 'go'])}; sleep 60"
    try:
        tmux("new-session", "-d", "-x", str(before), "-y", "40", "-c", str(workspace), command)
        tmux.wait_for("w040")
        tmux("resize-window", "-x", str(after), "-y", "40")
        assert "END" not in tmux.screen()  # resized while the answer was still coming
        tmux.wait_for("END")
        visible, history = tmux.screen(), tmux.screen(history=True)
    finally:
        tmux("kill-server")

    for text in (visible, history):
        assert text.count("w000") == 1, text  # the live region left no copy behind
        assert text.count("w149") == 1, text
    assert "w000 w001" in visible
    alpha = [line.strip() for line in history.splitlines() if line.startswith("Alpha")]
    assert " ".join(alpha) == " ".join(["Alpha"] * 10), alpha  # printed before: once


# Blocks still open when the pane narrows: every row long enough to re-wrap at 60 columns.
OPEN_BLOCKS = {
    "quote": [
        "> q1 the quoted first line, long enough to wrap at sixty columns for sure\n",
        "> q2 the second quoted line\n",
        "> q3 the third quoted line\n",
    ],
    "list": [
        "- l1 the first item of the list, long enough to wrap at sixty columns too\n",
        "- l2 the second item\n",
        "- l3 the third item\n",
    ],
    "table": [
        "| c1 | c2 |\n",
        "|---|---|\n",
        "| t1 alpha beta gamma delta epsilon | t1b zeta eta theta iota kappa lambda |\n",
        "| t2 x | t2b y |\n",
    ],
}
TAILS = {"quote": "> q4 tail\n", "list": "- l4 tail\n", "table": "| t4 tail | t4b |\n"}
# Above the block, as many rows as the block gains by re-wrapping (a table's rule and its
# first row: two): the re-wrap pushes the block's top exactly to the pane's first row.
INTROS = {"quote": "Intro.\n\n", "list": "Intro.\n\n", "table": "Intro.  \nIntro two.\n\n"}
needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (re-wraps)")
both_colour_modes = pytest.mark.parametrize("colour", [True, False], ids=["colour", "NO_COLOR"])


def tmux_run(tmp_path: Path, env: dict[str, str], workspace: Path, columns: int) -> Tmux:
    """`agentcli run go` as the first thing in a fresh pane: its output starts on row 1."""
    tmux = Tmux(tmp_path / "tmux.sock", env)
    command = f"{shlex.join([str(AGENTCLI), 'run', 'go'])}; sleep 60"
    tmux("new-session", "-d", "-x", str(columns), "-y", "24", "-c", str(workspace), command)
    return tmux


def narrowed_mid_block(
    server: ScriptedServer,
    tmp_path: Path,
    cli_home: Path,
    workspace: Path,
    pieces: list[str],
    tail: str,
    colour: bool,
) -> str:
    """Streams `pieces` to a fresh 80-column pane, holds the stream there (the last piece's
    block still open), narrows the pane to 60 columns, then lets `tail` and `END` come;
    the pane's whole history then."""
    extra = {"TERM": "xterm-256color", **({} if colour else {"NO_COLOR": "1"})}
    env = build_env(cli_home, server, extra)
    gate = Gate()
    head = Reply.text(pieces, finish_reason=None, usage=None, done=False)
    rest = Reply.text([tail, "\nEND\n"])  # (its role chunk: said again)
    server.enqueue(Reply(kind="stream", steps=(*head.steps, gate, *rest.steps)))
    tmux = tmux_run(tmp_path, env, workspace, 80)
    try:
        tmux.wait_for(pieces[-1].split()[1])  # the open block drawn, the stream held
        tmux("resize-window", "-x", "60", "-y", "24")
        while tmux("display", "-p", "#{pane_width}").strip() != "60":
            time.sleep(0.05)
        gate.set()
        tmux.wait_for("END")
        return tmux.screen(history=True)
    finally:
        gate.set()
        tmux("kill-server")


def shown_once(history: str, markers: list[str]) -> None:
    for marker in markers:
        found = re.findall(rf"(?<!\w){re.escape(marker)}(?!\w)", history)
        assert len(found) == 1, f"{marker!r} not once in:\n{history}"


@needs_tmux
@both_colour_modes
@pytest.mark.parametrize("kind", sorted(OPEN_BLOCKS))
def test_a_resize_inside_an_open_block_leaves_no_old_rendering(
    server: ScriptedServer, workspace: Path, cli_home: Path, tmp_path: Path, kind, colour
) -> None:
    """80 → 60 columns while a quote, a list or a table streams near the pane's top:
    tmux re-wraps the region's rows, pushing them up to the first row, where erasing them
    must not be a whole-screen clear (tmux keeps a copy of that in its history); what the
    pane holds then, history included, is each line of the answer once."""
    pieces = OPEN_BLOCKS[kind]
    history = narrowed_mid_block(
        server, tmp_path, cli_home, workspace, [INTROS[kind], *pieces], TAILS[kind], colour
    )
    markers = re.findall(r"\b[qlt]\db?\b", "".join([*pieces, TAILS[kind]]))
    shown_once(history, ["Intro.", *markers, "END"])
    lines = history.splitlines()
    intro = max(i for i, line in enumerate(lines) if line.startswith("Intro"))
    assert lines[intro + 1] == "", history  # one blank line: no cell of the region is left
    assert all(len(line) <= 60 for line in history.splitlines()[1:]), history  # all redrawn


# Open blocks taller than half the 24-row pane, near its top: each row wraps at 60 columns.
LONG = "long enough to wrap at sixty columns when the pane narrows"
TALL_BLOCKS = {
    "quote": ([f"> q{n:02d} the quoted line {LONG}\n" for n in range(14)], "> q99 tail\n"),
    "list": ([f"- l{n:02d} the item {LONG}\n" for n in range(14)], "- l99 tail\n"),
    "numbered": ([f"{n + 1}. n{n:02d} the item {LONG}\n" for n in range(14)], "15. n99 tail\n"),
    "table": (
        ["| c1 | c2 |\n", "|---|---|\n"]
        + [f"| t{n:02d} the cell {LONG} | t{n:02d}b |\n" for n in range(13)]
        + ["| t13 | t13b |\n"],
        "| t99 | t99b |\n",
    ),
}


@needs_tmux
@both_colour_modes
@pytest.mark.parametrize("kind", sorted(TALL_BLOCKS))
def test_narrowing_inside_a_tall_open_block_leaves_no_copy_in_the_history(
    server: ScriptedServer, workspace: Path, cli_home: Path, tmp_path: Path, kind, colour
) -> None:
    """80 → 60 columns while a block taller than half the pane streams from its top rows:
    the re-wrap pushes rows above the pane's first row, into tmux's history, where nothing
    can erase them; so no row of the region may be there to be pushed — the history holds
    each line of the answer once."""
    pieces, tail = TALL_BLOCKS[kind]
    history = narrowed_mid_block(
        server, tmp_path, cli_home, workspace, ["Intro.\n\n", *pieces], tail, colour
    )
    markers = re.findall(r"\b[qlnt]\d\db?\b", "".join([*pieces, tail]))
    shown_once(history, ["Intro.", *markers, "END"])


@needs_tmux
@pytest.mark.parametrize("colour", [True, False], ids=["colour", "NO_COLOR"])
def test_a_run_starting_on_the_first_row_draws_its_first_block_once(
    server: ScriptedServer, workspace: Path, cli_home: Path, tmp_path: Path, colour
) -> None:
    """The first block streamed on row 1 of a fresh pane, redrawn at every piece: erasing
    it is never a clear from the top-left corner (which tmux keeps a copy of)."""
    words = [f"w{number:02d} " for number in range(8)]
    server.enqueue(Reply.text([*words, "\n\nEND\n"], delay=0.02))
    extra = {"TERM": "xterm-256color", "AGENTCLI_REDRAW_SECONDS": "0"}
    if not colour:
        extra["NO_COLOR"] = "1"
    tmux = tmux_run(tmp_path, build_env(cli_home, server, extra), workspace, 80)
    try:
        tmux.wait_for("END")
        history = tmux.screen(history=True)
    finally:
        tmux("kill-server")
    assert history.count("w00") == 1, history
    assert history.splitlines()[0].split() == [word.strip() for word in words], history


def test_chat_previews_a_commands_output_not_its_header(
    chat: StartChat,  # noqa: F811 - the fixture imported above
    server: ScriptedServer,
) -> None:
    server.enqueue(
        Reply.tool_calls([call("s1", "run_shell", {"command": "echo hello-out"})]),
        Reply.tool_calls([call("s2", "run_shell", {"command": "ls no-such-dir"})]),
        Reply.text(["ok"]),
    )
    session = chat("--yes", env={"NO_COLOR": "1"})
    lines = lines_of(session.turn("run them"))
    # The read-only command is folded in the REPL; opened, it shows its preview.
    assert any(line.startswith("✓ Ran 1 read-only command") for line in lines), lines
    failed_lines = lines
    lines = expanded = lines_of(session.command("/expand 1", "hello-out"))

    ok = lines.index(next(line for line in lines if line.startswith("✓ run_shell")))
    assert lines[ok].startswith("✓ run_shell: exit 0, 1 line"), lines[ok]  # (· sandbox …)
    assert len(TIMING.findall(lines[ok])) == 1, lines[ok]
    assert lines[ok + 1] == "hello-out"  # the output, not `$ echo` and `exit code 0 · …`
    lines = failed_lines  # a failed command is never folded
    failed = lines.index(next(line for line in lines if line.startswith("✗ run_shell")))
    assert lines[failed].startswith("✗ run_shell failed: exit 2, 1 line"), lines[failed]
    assert "no-such-dir" in lines[failed + 1]  # why it failed, under the line
    headers = [line for line in [*lines, *expanded] if line.startswith(("exit code", "$ "))]
    assert not headers, headers
