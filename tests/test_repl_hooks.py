"""Hooks where a person meets them: `agentcli chat` on a pseudo-terminal judged through pyte
(tests/terminal_screen.py), against the scripted model server — `/hooks` lists each hook
with its event, matcher and the file it came from, what was skipped and why, and a
project's hooks an untrusted workspace left unread; a Notification hook runs while an
approval waits, beside the question; the session's hooks run around the REPL's turns."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.scripted_server import Reply, ScriptedServer
from tests.test_repl_habits import send_turn, write
from tests.test_repl_screens import APPROVAL, FOOTER, StartTerminal, index_of, term

__all__ = ["term"]  # the fixture, shared with the other screen tests

LOGGER = f"""#!{sys.executable}
import json, sys
event = json.load(sys.stdin)
with open(sys.argv[1], "a") as log:
    log.write(json.dumps(event) + "\\n")
"""


def executable(path: Path, text: str) -> Path:
    write(path, text)
    path.chmod(0o755)
    return path


def test_hooks_lists_each_hook_where_it_came_from_and_what_was_not_read(
    term: StartTerminal, workspace: Path, cli_home: Path
) -> None:
    write(
        cli_home / "agentcli" / "config.toml",
        '[[hooks.PreToolUse]]\nmatcher = "run_shell(git push *)"\ncommand = "guard.sh"\n'
        '[[hooks.Stop]]\ncommand = "notify-send done"\n',
    )
    claude = {
        "hooks": {
            "PostToolUse": [
                {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "fmt.sh"}]}
            ],
            "PermissionRequest": [{"hooks": [{"type": "command", "command": "x"}]}],
        }
    }
    write(cli_home / ".claude" / "settings.json", json.dumps(claude))
    write(workspace / ".claude" / "settings.json", json.dumps(claude))
    write(
        workspace / ".claude" / "settings.local.json",
        json.dumps({**claude, "disableAllHooks": True}),
    )
    terminal = term()
    terminal.send("/hooks\r")
    terminal.wait_for("not read:")
    lines = terminal.lines()
    start = index_of(lines, "› /hooks")
    shown = [line.split() for line in lines[start + 1 : start + 4]]
    assert shown == [
        ["PreToolUse", "run_shell(git", "push", "*)", "guard.sh", "(~/agentcli/config.toml)"],
        ["Stop", "*", "notify-send", "done", "(~/agentcli/config.toml)"],
        ["PostToolUse", "Edit|Write", "fmt.sh", "(~/.claude/settings.json)"],
    ], lines[start:]
    text = " ".join(terminal.text().split())  # lines wrapped at the terminal's width
    assert (
        "skipped ~/.claude/settings.json: PermissionRequest hooks are not run (agentcli has "
        "no PermissionRequest)" in text
    )
    assert "not read: .claude/settings.json (this workspace is not trusted" in text


def test_a_notification_hook_runs_while_an_approval_waits(
    term: StartTerminal, server: ScriptedServer, tmp_path: Path, cli_home: Path
) -> None:
    log = tmp_path / "events.log"
    logger = executable(tmp_path / "hooks" / "log.py", LOGGER)
    events = ("SessionStart", "UserPromptSubmit", "Notification", "PreToolUse", "Stop")
    write(
        cli_home / "agentcli" / "config.toml",
        "".join(
            f'[[hooks.{event}]]\ncommand = "{logger} {log}"\n' for event in (*events, "SessionEnd")
        ),
    )
    server.enqueue(
        Reply.tool_calls(
            [{"id": "c1", "name": "run_shell", "arguments": {"command": "touch made.txt"}}]
        ),
        Reply.text(["Made it."]),
    )
    terminal = term()
    terminal.send("make a file\r")
    terminal.wait_for(APPROVAL)

    def logged() -> list[dict]:
        text = log.read_text() if log.exists() else ""
        return [json.loads(line) for line in text.splitlines(keepends=True) if line[-1:] == "\n"]

    # The question waits; the hook has run beside it.
    terminal.wait_for(lambda: any(e["hook_event_name"] == "Notification" for e in logged()))
    [note] = [e for e in logged() if e["hook_event_name"] == "Notification"]
    assert note["notification_type"] == "permission_prompt"
    assert note["tool_use_id"] == "c1"
    terminal.send("y")
    terminal.wait_for("Made it.")
    terminal.wait_for(lambda: any(e["hook_event_name"] == "Stop" for e in logged()))
    terminal.wait_for(FOOTER)
    terminal.wait_for(terminal.at_prompt)
    assert [e["hook_event_name"] for e in logged()] == [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "Notification",
        "Stop",
    ]
    # A second turn: the session started once.
    server.enqueue(Reply.text(["Again."]))
    send_turn(terminal, "again")
    names = [e["hook_event_name"] for e in logged()]
    assert names.count("Stop") == 2, terminal.text()
    assert names.count("SessionStart") == 1 and names.count("UserPromptSubmit") == 2
    terminal.send("\x04")  # Ctrl-D: the session ends
    assert terminal.finish() == 0
    end = logged()[-1]
    assert (end["hook_event_name"], end["reason"]) == ("SessionEnd", "prompt_input_exit")


HANGS = """#!/bin/sh
echo $$ >> "$1"
sleep 600 &
echo $! >> "$1"
wait
"""


def test_ctrl_c_stops_a_hook_that_hangs_with_the_turn(
    term: StartTerminal, server: ScriptedServer, workspace: Path, tmp_path: Path, cli_home: Path
) -> None:
    from tests.test_e2e_hooks import _alive

    pids = tmp_path / "pids"
    hang = executable(tmp_path / "hooks" / "hang.sh", HANGS)
    write(
        cli_home / "agentcli" / "config.toml", f'[[hooks.PreToolUse]]\ncommand = "{hang} {pids}"\n'
    )
    server.enqueue(
        Reply.tool_calls(
            [{"id": "c1", "name": "run_shell", "arguments": {"command": "touch made.txt"}}]
        ),
    )
    terminal = term("chat", "--yes")
    terminal.send("make a file\r")
    terminal.wait_for(lambda: pids.exists() and len(pids.read_text().split()) == 2)
    terminal.send("\x03")
    terminal.wait_for(FOOTER)
    terminal.wait_for(terminal.at_prompt)
    started = [int(pid) for pid in pids.read_text().split()]
    assert not any(_alive(pid) for pid in started)  # the hook and what it started
    assert not (workspace / "made.txt").exists()
    server.enqueue(Reply.text(["Still here."]))
    assert any("Still here." in line for line in send_turn(terminal, "hello"))


def test_a_blocked_prompt_is_one_line_and_the_next_one_goes(
    term: StartTerminal, server: ScriptedServer, tmp_path: Path, cli_home: Path
) -> None:
    block = executable(
        tmp_path / "hooks" / "secret.sh",
        "#!/bin/sh\nif grep -q password; then echo 'no passwords in prompts' >&2; exit 2; fi\n",
    )
    write(
        cli_home / "agentcli" / "config.toml", f'[[hooks.UserPromptSubmit]]\ncommand = "{block}"\n'
    )
    terminal = term()
    added = send_turn(terminal, "my password is hunter2")
    shown = "".join("".join(added).split())  # however the terminal wraps the line
    assert shown.count("UserPromptSubmithook") == 1
    assert shown.count("blockedtheprompt:nopasswordsinprompts") == 1
    assert not server.requests
    server.enqueue(Reply.text(["Hello."]))
    assert any("Hello." in line for line in send_turn(terminal, "hi"))
    assert [m["content"] for m in server.requests[0].json["messages"][1:]] == ["hi"]
