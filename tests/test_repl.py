"""End-to-end: `agentcli chat` on a pseudo-terminal against the scripted server — what the
screen shows and what the server receives: streamed Markdown, the footer and the toolbar,
approvals, Ctrl-C and Esc during a turn, slash commands, `@path`, `!command`, history and
the keys that leave."""

from __future__ import annotations

import io
import re
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pexpect
import psutil
import pytest

from tests.conftest import AGENTCLI, NOTES_LINES, build_env
from tests.scripted_server import Reply, ScriptedServer
from tests.terminal_screen import kill_child
from tests.test_e2e_process import sleeper_token

ANSI = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07]*\x07|[@-Z\\-_])")
SGR = re.compile(r"\x1b\[([0-9;]*)m")
PROMPT = "›"
FOOTER = "out ·"  # the dim line after every turn: ↑ N in · ↓ N out · 0.1s
APPROVAL = "choose ["
CPR_REQUEST = "\x1b[6n"
TIMEOUT = 10
ROWS, COLUMNS = 40, 120
COMMANDS = (
    "help",
    "exit",
    "clear",
    "model",
    "tools",
    "policy",
    "usage",
    "sessions",
    "resume",
    "compact",
    "context",
    "status",
    "diff",
    "rewind",
    "init",
    "approvals",
    "skills",
    "hooks",
    "add-dir",
    "mcp",
)
INTERRUPTED_MARK = "[interrupted by the user]"
UP = "\x1b[A"
CTRL_A, CTRL_C, CTRL_D, CTRL_R = "\x01", "\x03", "\x04", "\x12"
ESC = "\x1b"


def plain(text: str) -> str:
    """Terminal output as text: escapes gone, CR LF as LF."""
    return ANSI.sub("", text).replace("\r\n", "\n").replace("\r", "\n")


def lines_of(text: str) -> list[str]:
    return [line.strip() for line in plain(text).splitlines()]


def colour_codes(raw: str) -> list[str]:
    """SGR sequences that set a foreground or background colour (30-38, 40-48, 90-107)."""
    found = []
    for match in SGR.finditer(raw):
        params = [int(p) for p in match.group(1).split(";") if p.isdigit()]
        if any(30 <= p <= 38 or 40 <= p <= 48 or 90 <= p <= 107 for p in params):
            found.append(match.group(0))
    return found


class Chat:
    """One `agentcli chat` in a pseudo-terminal, with the whole transcript kept."""

    def __init__(self, child: pexpect.spawn, log: io.StringIO) -> None:
        self.child = child
        self.log = log
        self.extra_pids: list[int] = []  # processes the test learnt of, killed at teardown

    # --- reading the screen

    def mark(self) -> int:
        return len(self.log.getvalue())

    def raw(self, since: int = 0) -> str:
        return self.log.getvalue()[since:]

    def screen(self, since: int = 0) -> str:
        return plain(self.raw(since))

    def expect(self, text: str | list[str], timeout: float = TIMEOUT) -> int:
        """Waits for `text` (or the first of several: returns which) in the output, answering
        cursor-position requests meanwhile (prompt-toolkit only draws the bottom toolbar once
        it knows where the cursor is)."""
        texts = [text] if isinstance(text, str) else list(text)
        while True:
            try:
                index = self.child.expect_exact([*texts, CPR_REQUEST], timeout=timeout)
            except (pexpect.TIMEOUT, pexpect.EOF) as error:
                kind = "timed out" if isinstance(error, pexpect.TIMEOUT) else "program ended"
                tail = self.screen()[-2500:]
                raise AssertionError(
                    f"{kind} waiting for {text!r}; screen ends with:\n{tail}"
                ) from None
            if index < len(texts):
                return index
            self.child.send(f"\x1b[{ROWS // 2};1R")

    def prompt(self, timeout: float = TIMEOUT) -> None:
        self.expect(PROMPT, timeout)

    def interrupt(self) -> float:
        """Ctrl-C during a turn, to the next prompt: how long that took, in seconds."""
        self.send(CTRL_C)
        sent = time.monotonic()
        self.expect("interrupted")
        self.prompt()
        return time.monotonic() - sent

    # --- typing

    def send(self, keys: str) -> None:
        self.child.send(keys)

    def submit(self, text: str) -> int:
        """Types a line and Enter; returns the transcript mark from before it."""
        mark = self.mark()
        self.child.send(text + "\r")
        return mark

    def turn(self, text: str) -> str:
        """A message to the model, to the footer and the next prompt: that turn's screen."""
        mark = self.submit(text)
        self.expect(FOOTER)
        self.prompt()
        return self.screen(mark)

    def command(self, text: str, marker: str) -> str:
        """A slash or `!` command, up to `marker` and the next prompt: its screen."""
        mark = self.submit(text)
        self.expect(marker)
        self.prompt()
        return self.screen(mark)

    # --- the end

    def exit_status(self, timeout: float = TIMEOUT) -> int | None:
        try:
            self.child.expect(pexpect.EOF, timeout=timeout)
        except pexpect.TIMEOUT:
            tail = self.screen()[-2500:]
            raise AssertionError(f"still running; screen ends with:\n{tail}") from None
        self.child.close()
        return self.child.exitstatus

    def close(self) -> None:
        """Kills what is left: the program, every descendant, every process adopted."""
        kill_child(self.child, self.extra_pids)


StartChat = Callable[..., Chat]


@pytest.fixture
def chat(server: ScriptedServer, workspace: Path, cli_home: Path) -> Iterator[StartChat]:
    """chat(*args, env=None, cpr=False, columns=COLUMNS, command=("chat",)) -> a Chat at
    its first prompt (`command=()`: bare `agentcli`).

    `cpr=True` leaves PROMPT_TOOLKIT_NO_CPR unset, so prompt-toolkit asks where the cursor
    is (Chat.expect answers) and draws the bottom toolbar. Everything started is killed at
    teardown, whatever the test's outcome."""
    started: list[Chat] = []

    def start(
        *args: str,
        env: Mapping[str, str | None] | None = None,
        cpr: bool = False,
        columns: int = COLUMNS,
        command: tuple[str, ...] = ("chat",),
    ) -> Chat:
        extra: dict[str, str | None] = {"TERM": "xterm"}
        if not cpr:
            extra["PROMPT_TOOLKIT_NO_CPR"] = "1"
        extra.update(env or {})
        log = io.StringIO()
        child = pexpect.spawn(
            str(AGENTCLI),
            [*command, *args],
            env=build_env(cli_home, server, extra),
            cwd=str(workspace),
            dimensions=(ROWS, columns),
            encoding="utf-8",
            codec_errors="replace",
            timeout=TIMEOUT,
        )
        child.logfile_read = log
        session = Chat(child, log)
        started.append(session)
        session.prompt()
        return session

    yield start
    for session in started:
        session.close()
    for session in started:
        assert "Traceback" not in session.screen(), session.screen()[-2500:]


def messages(server: ScriptedServer, index: int) -> list[dict[str, Any]]:
    return server.requests[index].json["messages"]


def last_user(server: ScriptedServer, index: int) -> str:
    users = [m for m in messages(server, index) if m["role"] == "user"]
    return users[-1]["content"]


def roles(server: ScriptedServer, index: int) -> list[str]:
    return [m["role"] for m in messages(server, index)]


def write_call(call_id: str, path: str, content: str) -> dict[str, Any]:
    return {"id": call_id, "name": "write_file", "arguments": {"path": path, "content": content}}


def words(count: int) -> list[str]:
    return [f"word{i} " for i in range(count)]


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def pid_of(argv: list[str], timeout: float = TIMEOUT) -> int:
    """The process running exactly `argv`, once it appears."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for proc in psutil.process_iter(["cmdline"]):
            if proc.info["cmdline"] == argv:
                return proc.pid
        time.sleep(0.02)
    raise AssertionError(f"no process {' '.join(argv)} within {timeout}s")


def wait_for_file(path: Path, timeout: float = TIMEOUT) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and (text := path.read_text().strip()):
            return text
        time.sleep(0.02)
    raise AssertionError(f"{path} was not written within {timeout}s")


# --- the answer ---------------------------------------------------------------------


def test_streamed_markdown_answer_spinner_and_footer(
    chat: StartChat, server: ScriptedServer
) -> None:
    # An empty first piece, then a pause: the spinner shows until the text comes.
    server.enqueue(
        Reply.text(
            ["", "# Heading\n\n", "Some **bold** ", "text and `code`.\n"],
            usage=(1234, 56),
            delay=0.15,
        )
    )
    session = chat()
    banner = session.screen()
    screen = session.turn("hello there")
    session.send(CTRL_D)
    assert session.exit_status() == 0

    assert "agentcli" in banner and "/help" in banner
    assert "thinking" in screen
    assert screen.index("thinking") < screen.index("Heading")
    assert "Heading" in screen
    assert "# Heading" not in screen  # rendered, not shown as source
    assert "Some bold text and code." in screen
    assert "**" not in screen and "`" not in screen
    assert re.search(r"↑ 1,234 in · ↓ 56 out · \d+\.\ds", screen), screen
    assert "interrupted" not in screen

    assert len(server.requests) == 1
    assert roles(server, 0) == ["system", "user"]
    assert last_user(server, 0) == "hello there"


def test_toolbar_shows_model_workspace_and_tokens(
    chat: StartChat, server: ScriptedServer, workspace: Path
) -> None:
    server.enqueue(Reply.text(["ok"], usage=(1234, 56)))
    session = chat("--model", "openai:tiny", cpr=True, columns=220)
    session.expect("tokens · /help")  # the toolbar is drawn once the cursor is known
    first = session.screen()
    mark = session.submit("hi")
    session.expect(FOOTER)
    session.expect("tokens · /help")  # the next prompt's toolbar
    second = session.screen(mark).rpartition(FOOTER)[2]
    session.send(CTRL_D)
    assert session.exit_status() == 0

    toolbar = next(line for line in lines_of(first) if "tokens · /help" in line)
    assert "openai:tiny" in toolbar
    assert str(workspace) in toolbar
    assert "↑0 ↓0 tokens" in toolbar
    assert "↑1,234 ↓56 tokens" in second


# --- approvals ----------------------------------------------------------------------


def test_write_file_approved_with_y(
    chat: StartChat, server: ScriptedServer, workspace: Path
) -> None:
    server.enqueue(
        Reply.tool_calls([write_call("w1", "notes.txt", "first note\nchanged note\n")]),
        Reply.text(["Done."]),
    )
    session = chat()
    mark = session.submit("change the notes")
    session.expect(APPROVAL)
    asking = session.screen(mark)
    assert (workspace / "notes.txt").read_text() == "first note\nsecond note\n"  # not yet
    session.send("y")
    session.expect(FOOTER)
    session.prompt()
    screen = session.screen(mark)

    assert "● Allow write_file? medium risk" in asking
    assert "waiting for approval" not in asking  # one call, one block
    assert "● write_file" not in asking  # no call line besides the block
    assert "notes.txt" in asking
    assert "-second note" in lines_of(asking)
    assert "+changed note" in lines_of(asking)
    assert "✓ write_file: replaced" in screen
    assert "Done." in screen
    assert (workspace / "notes.txt").read_text() == "first note\nchanged note\n"

    assert len(server.requests) == 2
    assert roles(server, 1) == ["system", "user", "assistant", "tool"]
    call, result = messages(server, 1)[2:]
    assert [c["id"] for c in call["tool_calls"]] == ["w1"]
    assert result["tool_call_id"] == "w1"
    assert "replaced notes.txt" in result["content"]


def test_write_file_denied_with_n(chat: StartChat, server: ScriptedServer, workspace: Path) -> None:
    server.enqueue(
        Reply.tool_calls([write_call("w1", "notes.txt", "overwritten\n")]),
        Reply.text(["Understood."]),
    )
    session = chat()
    mark = session.submit("overwrite the notes")
    session.expect(APPROVAL)
    session.send("n")
    session.expect("reason for the model")
    session.send("keep my notes\r")
    session.expect(FOOTER)
    session.prompt()
    screen = session.screen(mark)

    assert "-second note" in lines_of(screen)
    assert "+overwritten" in lines_of(screen)
    assert "✗ write_file denied" in screen
    assert (workspace / "notes.txt").read_text() == "\n".join(NOTES_LINES) + "\n"

    assert len(server.requests) == 2
    [result] = [m for m in messages(server, 1) if m["role"] == "tool"]
    assert result["tool_call_id"] == "w1"
    assert "denied" in result["content"].lower()
    assert "keep my notes" in result["content"]


# --- interrupts ---------------------------------------------------------------------


def test_ctrl_c_kills_a_running_command_and_the_next_message_works(
    chat: StartChat, server: ScriptedServer, workspace: Path
) -> None:
    token = sleeper_token().removeprefix("300.")  # two sleeps: 300.TOKEN and 301.TOKEN
    command = f"echo live-output; sleep 300.{token} & exec sleep 301.{token}"
    server.enqueue(
        Reply.tool_calls([{"id": "s1", "name": "run_shell", "arguments": {"command": command}}])
    )
    session = chat("--yes")
    mark = session.submit("run the long thing")
    shell_pid = pid_of(["sleep", f"301.{token}"])
    background_pid = pid_of(["sleep", f"300.{token}"])
    session.extra_pids += [shell_pid, background_pid]
    assert not gone(shell_pid) and not gone(background_pid)
    session.expect("live-output")  # the running command's output, live

    took = session.interrupt()
    screen = session.screen(mark)

    assert took < 1.0, f"the prompt came back {took:.2f}s after Ctrl-C"
    deadline = time.monotonic() + 1.0
    while not (gone(shell_pid) and gone(background_pid)) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert gone(shell_pid), "the command's shell (exec sleep 301) survived Ctrl-C"
    assert gone(background_pid), "the command's background child (sleep 300) survived Ctrl-C"
    assert "run_shell" in screen and "sleep 300" in screen
    assert re.search(r"out · \d+\.\ds · interrupted", screen), screen

    server.enqueue(Reply.text(["Back again."]))
    screen = session.turn("are you there?")
    assert "Back again." in screen
    assert len(server.requests) == 2
    sent_back = messages(server, 1)
    assert [m["role"] for m in sent_back] == ["system", "user", "assistant", "tool", "user"]
    call, result, user = sent_back[2:]
    assert [c["id"] for c in call["tool_calls"]] == ["s1"]
    assert result["tool_call_id"] == "s1"
    assert "interrupted" in result["content"].lower()
    assert user["content"] == "are you there?"


@pytest.mark.parametrize("key", [CTRL_C, ESC], ids=["ctrl-c", "esc"])
def test_key_while_streaming_stops_the_answer(
    chat: StartChat, server: ScriptedServer, key: str
) -> None:
    server.enqueue(Reply.text(words(300), delay=0.03))  # about 9 s if not stopped
    session = chat()
    mark = session.submit("tell me a long story")
    session.expect("word10 ")
    session.send(key)
    sent = time.monotonic()
    session.expect("interrupted")
    session.prompt()
    took = time.monotonic() - sent
    screen = session.screen(mark)

    assert took < 1.0, f"the prompt came back {took:.2f}s after the key"
    assert re.search(r"out · \d+\.\ds · interrupted", screen), screen
    assert "word299" not in screen

    server.enqueue(Reply.text(["Short one."]))
    screen = session.turn("shorter please")
    assert "Short one." in screen
    assert len(server.requests) == 2
    assert roles(server, 1) == ["system", "user", "assistant", "user"]
    partial = messages(server, 1)[2]["content"]
    assert partial.startswith("word0 word1 word2 ")
    assert "word10 " in partial and "word299" not in partial
    assert partial.endswith(INTERRUPTED_MARK)
    assert last_user(server, 1) == "shorter please"


def test_ctrl_c_while_waiting_for_the_model(chat: StartChat, server: ScriptedServer) -> None:
    server.enqueue(Reply.hang(30))  # headers, then nothing: the spinner keeps turning
    session = chat()
    mark = session.submit("are you slow?")
    assert server.wait_for_requests(1, TIMEOUT)
    session.expect("thinking")
    took = session.interrupt()
    assert took < 1.0, f"the prompt came back {took:.2f}s after Ctrl-C"
    assert re.search(r"out · \d+\.\ds · interrupted", session.screen(mark))

    server.enqueue(Reply.text(["Here now."]))
    assert "Here now." in session.turn("hello again")
    users = [m["content"] for m in messages(server, 1) if m["role"] == "user"]
    assert users == ["are you slow?", "hello again"]


def test_ctrl_c_at_the_approval_prompt_denies_and_cancels(
    chat: StartChat, server: ScriptedServer, workspace: Path
) -> None:
    server.enqueue(Reply.tool_calls([write_call("w1", "notes.txt", "overwritten\n")]))
    session = chat()
    mark = session.submit("overwrite the notes")
    session.expect(APPROVAL)
    took = session.interrupt()
    screen = session.screen(mark)

    assert took < 1.0, f"the prompt came back {took:.2f}s after Ctrl-C"
    assert "✗ write_file notes.txt · denied (cancelled)" in plain(screen), screen
    assert (workspace / "notes.txt").read_text() == "\n".join(NOTES_LINES) + "\n"
    assert len(server.requests) == 1

    server.enqueue(Reply.text(["Fine."]))
    assert "Fine." in session.turn("never mind")
    sent_back = messages(server, 1)
    assert [m["role"] for m in sent_back] == ["system", "user", "assistant", "tool", "user"]
    assert sent_back[3]["tool_call_id"] == "w1"
    assert sent_back[4]["content"] == "never mind"


def test_ctrl_c_after_the_approval_prompt_was_answered_kills_the_tool(
    chat: StartChat, server: ScriptedServer, workspace: Path
) -> None:
    token = sleeper_token()
    command = f"echo started-now; exec sleep {token}"
    server.enqueue(
        Reply.tool_calls([{"id": "s1", "name": "run_shell", "arguments": {"command": command}}])
    )
    session = chat()
    mark = session.submit("run it after asking")
    session.expect(APPROVAL)
    session.send("y")
    shell_pid = pid_of(["sleep", token])
    session.extra_pids.append(shell_pid)
    session.expect("started-now")

    took = session.interrupt()

    assert took < 1.0, f"the prompt came back {took:.2f}s after Ctrl-C"
    deadline = time.monotonic() + 1.0
    while not gone(shell_pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert gone(shell_pid), "the approved command survived Ctrl-C"
    assert re.search(r"out · \d+\.\ds · interrupted", session.screen(mark))
    server.enqueue(Reply.text(["Still here."]))
    assert "Still here." in session.turn("hello")


# --- slash commands -----------------------------------------------------------------


def test_help_lists_every_command_and_completes_names(chat: StartChat) -> None:
    session = chat()
    session.send("/he")
    session.expect("list the commands")  # the completion menu, with each one-line help
    session.send("\t")
    mark = session.submit("")
    session.expect("Alt+Enter")
    session.prompt()
    screen = session.screen(mark)
    session.send(CTRL_D)
    assert session.exit_status() == 0

    assert f"{PROMPT} /help\n" in screen, screen  # Tab completed /he
    shown = lines_of(screen.rpartition(f"{PROMPT} /help\n")[2])
    for name in COMMANDS:
        [line] = [line for line in shown if line.startswith(f"/{name} ")]
        assert len(line.split(maxsplit=1)) == 2, f"/{name} has no help text: {line!r}"


def test_tools_lists_each_tool_with_its_risk(chat: StartChat) -> None:
    from agentcli.assembly import builtin_tools

    session = chat()
    shown = lines_of(session.command("/tools", "run_shell"))
    tools = list(builtin_tools())
    assert {"read_file", "write_file", "run_shell"} <= {tool.name for tool in tools}
    for tool in tools:
        [line] = [line for line in shown if line.split()[:1] == [tool.name]]
        assert tool.source in line
        assert tool.risk_summary in line, line


def test_usage_and_model(chat: StartChat, server: ScriptedServer) -> None:
    server.enqueue(Reply.text(["one"], usage=(1234, 56)), Reply.text(["two"]))
    session = chat("--model", "openai:first")
    session.turn("first question")

    assert "1,234 tokens in, 56 out, 1,290 in all" in session.command("/usage", "in all")
    assert "model: openai:other" in session.command("/model openai:other", "model:")
    session.turn("second question")

    assert server.requests[0].json["model"] == "first"
    assert server.requests[1].json["model"] == "other"
    # the conversation goes on with the new model
    assert [m["content"] for m in messages(server, 1) if m["role"] == "user"] == [
        "first question",
        "second question",
    ]


def test_clear_sessions_and_resume(chat: StartChat, server: ScriptedServer) -> None:
    server.enqueue(Reply.text(["A."]), Reply.text(["B."]), Reply.text(["C."]))
    session = chat()
    session.turn("first question")
    listing = lines_of(session.command("/sessions", "first question"))
    [row] = [line for line in listing if line.endswith("first question")]
    first_id = row.split()[0]

    cleared = session.command("/clear", "new conversation")
    assert "new conversation" in cleared
    session.turn("second question")
    assert roles(server, 1) == ["system", "user"]
    assert last_user(server, 1) == "second question"

    assert first_id in session.command(f"/resume {first_id}", "resumed session")
    session.turn("third question")
    users = [m["content"] for m in messages(server, 2) if m["role"] == "user"]
    assert users == ["first question", "third question"]


def test_policy_remembers_a_session_choice_and_revokes_it(
    chat: StartChat, server: ScriptedServer
) -> None:
    for number in (1, 2, 3):
        server.enqueue(
            Reply.tool_calls([write_call(f"w{number}", "draft.txt", f"draft {number}\n")]),
            Reply.text([f"wrote {number}"]),
        )
    session = chat()
    mark = session.submit("write a draft")
    session.expect(APPROVAL)
    # Medium risk's "once per session" is its own key; y is this write alone.
    assert "y  yes, this write only" in session.screen(mark)
    assert "s  yes, and allow write_file for this session" in session.screen(mark)
    session.send("s")
    session.expect(FOOTER)
    session.prompt()
    assert "✓ write_file" in session.screen(mark)

    policy = lines_of(session.command("/policy", "this session"))
    assert "[1] this session: allow write_file" in policy

    remembered = session.turn("write another")  # the remembered choice: no question
    assert APPROVAL not in remembered and "✓ write_file" in remembered

    assert "revoked write_file" in session.command("/policy revoke 1", "revoked")
    after = session.command("/policy", "nothing remembered")
    assert "this session: allow" not in after

    mark = session.submit("and once more")
    session.expect(APPROVAL)  # asked again
    session.send("y")
    session.expect(FOOTER)
    session.prompt()
    assert "✓ write_file" in session.screen(mark)
    assert len(server.requests) == 6


def test_unknown_command_and_bad_arguments(chat: StartChat, server: ScriptedServer) -> None:
    session = chat()
    # (the marker is the answer: "compact" alone also matches the typed command's echo)
    assert "nothing to compact" in session.command("/compact", "nothing to compact")
    assert "unknown command /frobnicate" in session.command("/frobnicate", "unknown command")
    # No earlier session with a turn: nothing for the picker to offer.
    assert "no other saved session" in session.command("/resume", "no other saved session")
    assert "/policy revoke N" in session.command("/policy revoke 9", "revoke N")
    session.send(CTRL_D)
    assert session.exit_status() == 0
    assert server.requests == []  # none of these talked to the model


def test_compact_on_a_short_conversation_has_nothing_to_compact(
    chat: StartChat, server: ScriptedServer
) -> None:
    # One short question and answer: far below the context window and within the turns
    # kept verbatim (context.keep_turns = 2), so there is nothing to summarise. A reply is
    # queued anyway so that a summary request, if one is made, fails the test fast.
    server.enqueue(Reply.text(["Hi."]), Reply.text(["SUMMARY OF ONE LINE"]))
    session = chat()
    session.turn("hello")
    mark = session.submit("/compact")
    session.expect(["nothing to compact", "compacted:", "error:"])
    session.prompt()
    screen = session.screen(mark)
    assert "nothing to compact" in screen, screen
    assert len(server.requests) == 1, "/compact asked the model to summarise: " + repr(
        messages(server, 1)[-1]["content"][:300]
    )


# --- @path and !command -------------------------------------------------------------


def test_mention_attaches_the_file_with_completion(chat: StartChat, server: ScriptedServer) -> None:
    server.enqueue(Reply.text(["Two notes."]))
    session = chat()
    session.send("summarise @no")
    session.expect("notes.txt")  # the completion menu
    session.send("\t")
    screen = session.turn("")

    assert "attached notes.txt" in screen
    content = last_user(server, 0)
    assert content.startswith("summarise @notes.txt")
    assert '<file path="notes.txt">' in content
    assert "\n".join(NOTES_LINES) in content


def test_bang_command_runs_at_once_and_becomes_context(
    chat: StartChat, server: ScriptedServer
) -> None:
    server.enqueue(Reply.text(["It said hi."]))
    session = chat()  # no --yes: the user's own command needs no approval
    screen = session.command("!echo hi", "exit code")
    assert "hi" in lines_of(screen)
    assert "exit code 0" in lines_of(screen)
    assert APPROVAL not in screen
    assert server.requests == []  # shown now, sent with the next message

    session.turn("what did it print?")
    content = last_user(server, 0)
    assert "echo hi" in content
    assert "hi\n" in content
    assert content.rstrip().endswith("what did it print?")


# --- input --------------------------------------------------------------------------


def test_history_survives_a_restart(
    chat: StartChat, server: ScriptedServer, cli_home: Path
) -> None:
    server.enqueue(*(Reply.text(["ok"]) for _ in range(3)))
    first = chat()
    first.turn("remember this line")
    first.send(CTRL_D)
    assert first.exit_status() == 0
    history = cli_home / "agentcli" / "data" / "history"
    assert history.is_file()
    assert "remember this line" in history.read_text(encoding="utf-8")

    second = chat()
    second.send(UP)
    second.expect("remember this line")
    second.turn("")
    assert last_user(server, 1) == "remember this line"

    second.send(CTRL_R + "remem")
    second.expect("reverse-i-search")
    second.send("\r")  # ends the search with the line found
    second.turn("")
    assert last_user(server, 2) == "remember this line"
    assert roles(server, 1) == ["system", "user"]  # a new session: history is not context


def test_newlines_alt_enter_esc_enter_and_paste(chat: StartChat, server: ScriptedServer) -> None:
    server.enqueue(*(Reply.text(["ok"]) for _ in range(3)))
    session = chat()
    session.send("line one\x1b\r")  # Alt+Enter
    session.turn("line two")
    session.send("line three" + ESC)
    time.sleep(0.2)  # Esc, then Enter a moment later
    session.send("\r")
    session.turn("line four")
    session.send("\x1b[200~pasted one\npasted two\x1b[201~")  # a bracketed paste
    session.expect("pasted two")
    session.turn("")

    assert len(server.requests) == 3
    assert roles(server, 0) == ["system", "user"]
    assert last_user(server, 0) == "line one\nline two"
    assert last_user(server, 1) == "line three\nline four"
    assert last_user(server, 2) == "pasted one\npasted two"


@pytest.mark.parametrize(
    ("vi_mode", "keys"),
    [(False, "abc" + CTRL_A + "X"), (True, "abc" + ESC + "0iX")],
    ids=["emacs", "vi"],
)
def test_editing_keys(
    chat: StartChat, server: ScriptedServer, cli_home: Path, vi_mode: bool, keys: str
) -> None:
    if vi_mode:
        (cli_home / "agentcli").mkdir(exist_ok=True)
        (cli_home / "agentcli" / "config.toml").write_text("[repl]\nvi_mode = true\n")
    server.enqueue(Reply.text(["ok"]))
    session = chat()
    session.send(keys)
    session.turn("")
    assert last_user(server, 0) == "Xabc"


# --- leaving ------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["ctrl-d", "/exit", "ctrl-c twice"])
def test_leaving_exits_with_0(chat: StartChat, server: ScriptedServer, how: str) -> None:
    session = chat()
    if how == "ctrl-d":
        session.send(CTRL_D)
    elif how == "/exit":
        session.submit("/exit")
    else:
        mark = session.mark()
        session.send(CTRL_C)
        session.expect("Ctrl-C again")
        session.prompt()
        hint = session.screen(mark)
        assert "Ctrl-D" in hint and "/exit" in hint
        assert session.child.isalive()
        session.send(CTRL_C)
    assert session.exit_status() == 0
    assert server.requests == []


def test_ctrl_c_more_than_two_seconds_apart_does_not_exit(chat: StartChat) -> None:
    session = chat()
    session.send(CTRL_C)
    session.expect("Ctrl-C again")
    session.prompt()
    time.sleep(2.3)
    mark = session.mark()
    session.send(CTRL_C)
    session.expect("Ctrl-C again")  # only the hint again
    session.prompt()
    assert session.child.isalive()
    assert "Ctrl-C again" in session.screen(mark)
    session.send(CTRL_D)
    assert session.exit_status() == 0


# --- colour -------------------------------------------------------------------------


@pytest.mark.parametrize("no_color", [False, True], ids=["colour", "NO_COLOR"])
def test_no_color_and_tool_states(
    chat: StartChat, server: ScriptedServer, workspace: Path, no_color: bool
) -> None:
    (workspace / "long.txt").write_text("".join(f"row {i}\n" for i in range(30)))
    server.enqueue(
        Reply.tool_calls(
            [
                {"id": "r1", "name": "read_file", "arguments": {"path": "long.txt"}},
                {"id": "r2", "name": "read_file", "arguments": {"path": "missing.txt"}},
            ]
        ),
        Reply.text(["# Result\n\n", "Some **bold** and `code`.\n\n", "- an item\n"], delay=0.05),
    )
    session = chat(env={"NO_COLOR": "1"} if no_color else None)
    mark = session.submit("read them")
    session.expect(FOOTER)
    session.prompt()
    raw = session.raw(mark)
    screen = plain(raw)

    # the read that worked folds into the step's summary line (test_repl_folds.py);
    # the one that failed is news: its call, with its arguments, and its state
    assert "✓ Read 1 file (ctrl+o to expand · /expand 1)" in screen, screen
    assert 'read_file path="long.txt"' not in screen and "row 29" not in screen
    assert 'read_file path="missing.txt"' in screen
    assert "✗ read_file failed" in screen
    assert "Some bold and code." in screen
    if no_color:
        assert colour_codes(raw) == [], screen
    else:
        assert colour_codes(raw), "no colour at all without NO_COLOR: the check would be void"


def test_a_bang_line_completes_a_name_as_bash_reads_it(
    chat: StartChat, server: ScriptedServer, workspace: Path
) -> None:
    """A cloned repository's file name went into a `!` line raw: `notes\\ntouch PWNED;.txt`
    ran `touch PWNED`, `notes$(touch PWNED).txt` too. A name with a control character is
    not offered; one with shell syntax is quoted."""
    (workspace / "notes\ntouch PWNED;.txt").write_text("x")
    (workspace / "notes$(touch PWNED2).txt").write_text("x")
    session = chat()
    session.send("!cat @notes$")
    session.expect("notes")  # the completion menu: the one name it may offer
    session.send("\t")
    session.command("", "exit code")
    assert not (workspace / "PWNED").exists() and not (workspace / "PWNED2").exists()
