"""End-to-end: the risk policy in `agentcli run` against the scripted server — flags and
rules without a terminal, then the inline approval prompt on a real pseudo-terminal."""

from __future__ import annotations

import json
import re
import time
import tomllib
from pathlib import Path
from typing import Any

import pexpect
import pytest

from tests.conftest import (
    NOTES_LINES,
    OUTSIDE_LINES,
    README_LINES,
    RunCli,
    numbered,
)
from tests.scripted_server import Reply, ScriptedServer

ANSI = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07]*\x07|[@-Z\\-_])")
PROMPT = "choose ["
HEADING = "● Allow "
TIMEOUT = 10


def shell(command: str, call_id: str) -> dict[str, Any]:
    return {"id": call_id, "name": "run_shell", "arguments": {"command": command}}


def tool_messages(server: ScriptedServer, index: int) -> list[dict[str, Any]]:
    return [m for m in server.requests[index].json["messages"] if m["role"] == "tool"]


def approval_of(doc: dict[str, Any], call_id: str) -> dict[str, Any]:
    [call] = [c for c in doc["toolCalls"] if c["id"] == call_id]
    return call["approval"]


# --- without a terminal: flags and rules ----------------------------------------------


def test_yes_runs_a_high_risk_call(run_cli: RunCli, server: ScriptedServer, workspace: Path):
    server.enqueue(Reply.tool_calls([shell("touch made.txt", "c1")]), Reply.text(["ok"]))
    result = run_cli(["run", "--yes", "--output", "json", "make it"], server=server)

    assert result.returncode == 0, result.stderr
    assert (workspace / "made.txt").exists()
    [tool] = tool_messages(server, 1)
    assert "exit code 0" in tool["content"]
    approval = approval_of(json.loads(result.stdout), "c1")
    assert (approval["risk"], approval["decision"], approval["by"]) == ("high", "allow", "flag")


def test_deny_denies_high_but_low_still_runs(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    server.enqueue(
        Reply.tool_calls(
            [
                shell("touch made.txt", "c1"),
                {"id": "c2", "name": "read_file", "arguments": {"path": "README.md"}},
                shell("cat notes.txt", "c3"),
            ]
        ),
        Reply.text(["ok"]),
    )
    result = run_cli(["run", "--deny", "--output", "json", "go"], server=server)

    assert result.returncode == 4, result.stderr
    assert not (workspace / "made.txt").exists()
    denied, read, cat = tool_messages(server, 1)
    assert "denied" in denied["content"].lower()
    assert numbered(README_LINES) in read["content"]
    assert NOTES_LINES[0] in cat["content"]
    doc = json.loads(result.stdout)
    assert (approval_of(doc, "c1")["decision"], approval_of(doc, "c1")["by"]) == ("deny", "flag")
    assert (approval_of(doc, "c2")["decision"], approval_of(doc, "c2")["by"]) == ("allow", "auto")
    assert (approval_of(doc, "c3")["decision"], approval_of(doc, "c3")["by"]) == ("allow", "auto")
    # --deny is an answer, not a missing terminal: no hint to rerun with --yes
    assert not [line for line in result.stderr.splitlines() if "--yes" in line]


def test_no_terminal_no_flag_denies_at_once_with_one_hint(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    server.enqueue(
        Reply.tool_calls([shell("touch made.txt", "c1"), shell("touch other.txt", "c2")]),
        Reply.text(["ok"]),
    )
    started = time.monotonic()
    result = run_cli(["run", "go"], server=server, timeout=20)

    assert time.monotonic() - started < 10  # never waits for an answer
    assert result.returncode == 4, result.stderr
    assert not (workspace / "made.txt").exists()
    assert not (workspace / "other.txt").exists()
    hints = [
        line
        for line in result.stderr.splitlines()
        if line.startswith("agentcli:") and "--yes" in line
    ]
    assert len(hints) == 1, result.stderr
    for tool in tool_messages(server, 1):
        assert "denied" in tool["content"].lower()


def test_forbid_beats_yes(run_cli: RunCli, server: ScriptedServer, workspace: Path) -> None:
    server.enqueue(
        Reply.tool_calls([shell("touch made.txt", "c1"), shell("touch kept.txt", "c2")]),
        Reply.text(["ok"]),
    )
    args = ["run", "--yes", "--forbid", "run_shell(touch made.txt)", "--output", "json", "go"]
    result = run_cli(args, server=server)

    assert result.returncode == 4, result.stderr
    assert not (workspace / "made.txt").exists()
    assert (workspace / "kept.txt").exists()
    doc = json.loads(result.stdout)
    approval = approval_of(doc, "c1")
    assert (approval["decision"], approval["by"]) == ("deny", "rule")
    assert approval["rule"] == "run_shell(touch made.txt)"
    assert approval_of(doc, "c2")["by"] == "flag"


def test_allow_allows_only_what_matches(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    server.enqueue(
        Reply.tool_calls(
            [
                shell("touch made.txt", "c1"),
                shell("touch other.txt", "c2"),
                shell("touch made.txt && touch sneaky.txt", "c3"),
            ]
        ),
        Reply.text(["ok"]),
    )
    args = ["run", "--allow", "run_shell(touch made.txt)", "--output", "json", "go"]
    result = run_cli(args, server=server)

    assert result.returncode == 4, result.stderr
    assert (workspace / "made.txt").exists()
    assert not (workspace / "other.txt").exists()
    assert not (workspace / "sneaky.txt").exists()
    doc = json.loads(result.stdout)
    assert approval_of(doc, "c1")["by"] == "rule"
    assert approval_of(doc, "c1")["rule"] == "run_shell(touch made.txt)"
    assert approval_of(doc, "c2")["decision"] == "deny"
    assert approval_of(doc, "c3")["decision"] == "deny"


def test_project_deny_rule_applies_even_untrusted(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    config = workspace / ".agentcli" / "config.toml"
    config.parent.mkdir()
    config.write_text('[policy]\ndeny = ["run_shell(touch *)"]\n', encoding="utf-8")
    server.enqueue(Reply.tool_calls([shell("touch made.txt", "c1")]), Reply.text(["ok"]))
    result = run_cli(["run", "--yes", "go"], server=server)

    assert result.returncode == 4, result.stderr
    assert not (workspace / "made.txt").exists()


# --- on a terminal: the approval prompt -----------------------------------------------


class Terminal:
    """agentcli on a real pseudo-terminal; `text` is everything shown, without colours.
    prompt_toolkit redraws the `choose [...]` line, so a new prompt is recognised by its
    heading (`● Allow TOOL?`)."""

    def __init__(self, child: pexpect.spawn) -> None:
        self.child = child
        self.text = ""

    def _collect(self) -> None:
        self.text += ANSI.sub("", self.child.before or "")
        if isinstance(self.child.after, str):
            self.text += ANSI.sub("", self.child.after)

    def wait_prompt(self) -> str:
        """Waits for the next approval prompt; returns what was shown since the last wait."""
        start = len(self.text)
        self.child.expect_exact(HEADING, timeout=TIMEOUT)
        self._collect()
        self.child.expect_exact(PROMPT, timeout=TIMEOUT)
        self._collect()
        return self.text[start:]

    def wait_all(self, *patterns: str) -> None:
        """Waits until every pattern has been shown, in any order."""
        left = list(patterns)
        while left:
            index = self.child.expect(left, timeout=TIMEOUT)
            self._collect()
            left.pop(index)

    def finish(self) -> int:
        """Waits for the end, failing if another approval prompt shows up."""
        index = self.child.expect_exact([pexpect.EOF, HEADING], timeout=TIMEOUT)
        self._collect()
        assert index == 0, f"unexpected approval prompt:\n{self.text}"
        self.child.close()
        return self.child.exitstatus if self.child.exitstatus is not None else -1


@pytest.fixture
def terminal(pty_cli: Any) -> Any:
    def start(*args: str) -> Terminal:
        return Terminal(pty_cli(["run", *args], width=220, timeout=TIMEOUT))

    return start


def session_events(cli_home: Path) -> list[dict[str, Any]]:
    """The events recorded so far in the session file (written line by line as they happen)."""
    events = []
    for path in (cli_home / "agentcli" / "data" / "sessions").glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line still being written
            if isinstance(record, dict) and isinstance(record.get("e"), dict):
                events.append(record["e"])
    return events


def session_approvals(cli_home: Path) -> dict[str, dict[str, Any]]:
    """The CUSTOM approval events recorded in the session file, by toolCallId."""
    return {
        e["value"]["toolCallId"]: e["value"]
        for e in session_events(cli_home)
        if e.get("type") == "CUSTOM" and e.get("name") == "approval"
    }


def finished_calls(cli_home: Path) -> set[str]:
    return {
        e["toolCallId"] for e in session_events(cli_home) if e.get("type") == "TOOL_CALL_RESULT"
    }


def wait_until_finished(term: Terminal, cli_home: Path, ids: set[str]) -> set[str]:
    """Waits (reading the terminal meanwhile) until these calls have their results."""
    deadline = time.monotonic() + TIMEOUT
    while not ids <= (done := finished_calls(cli_home)):
        assert time.monotonic() < deadline, f"{ids - done} did not finish:\n{term.text}"
        term.child.expect([pexpect.TIMEOUT], timeout=0.1)
        term._collect()
    return done


def test_prompt_waits_alone_while_parallel_calls_finish(
    terminal: Any, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    (workspace / "f.txt").write_text("old\n", encoding="utf-8")
    server.enqueue(
        Reply.tool_calls(
            [
                {
                    "id": "w1",
                    "name": "write_file",
                    "arguments": {"path": "f.txt", "content": "new\n"},
                },
                shell("cat notes.txt", "s2"),
                {"id": "r3", "name": "read_file", "arguments": {"path": "f.txt"}},
            ]
        ),
        Reply.text(["done"]),
    )
    term = terminal("update f.txt")
    shown = term.wait_prompt()
    assert "write_file" in shown and "medium" in shown
    # the other two calls finish while the prompt is still open
    done = wait_until_finished(term, cli_home, {"s2", "r3"})
    assert "w1" not in done
    assert len(server.requests) == 1
    assert (workspace / "f.txt").read_text() == "old\n"
    term.child.send("y")
    assert term.finish() == 0, term.text

    assert (workspace / "f.txt").read_text() == "new\n"
    tools = tool_messages(server, 1)
    assert [t["tool_call_id"] for t in tools] == ["w1", "s2", "r3"]
    assert "f.txt" in tools[0]["content"]
    assert NOTES_LINES[0] in tools[1]["content"]
    assert numbered(["old"]) in tools[2]["content"]  # read before the write was approved
    approvals = session_approvals(cli_home)
    assert (approvals["w1"]["decision"], approvals["w1"]["by"]) == ("allow", "user")
    assert approvals["s2"]["by"] == approvals["r3"]["by"] == "auto"


def test_deny_with_a_reason_reaches_the_model(
    terminal: Any, server: ScriptedServer, workspace: Path
) -> None:
    server.enqueue(Reply.tool_calls([shell("touch b.txt", "c1")]), Reply.text(["ok"]))
    term = terminal("make b")
    shown = term.wait_prompt()
    assert "$ touch b.txt" in shown
    assert "high" in shown
    assert "run_shell(touch *)" in shown
    term.child.send("n")
    term.wait_all("reason")
    term.child.send("use the make target\r")
    assert term.finish() == 4, term.text

    assert not (workspace / "b.txt").exists()
    [tool] = tool_messages(server, 1)
    assert "denied" in tool["content"].lower()
    assert "use the make target" in tool["content"]


def test_session_choice_covers_the_next_step(
    terminal: Any, server: ScriptedServer, workspace: Path, cli_home: Path
) -> None:
    server.enqueue(
        Reply.tool_calls([shell("touch a.txt", "c1")]),
        Reply.tool_calls([shell("touch b.txt", "c2")]),
        Reply.text(["ok"]),
    )
    term = terminal("touch both")
    shown = term.wait_prompt()
    assert "s  yes, and allow run_shell(touch *) for this session" in shown
    term.child.send("s")
    assert term.finish() == 0, term.text  # no second prompt

    assert (workspace / "a.txt").exists() and (workspace / "b.txt").exists()
    approvals = session_approvals(cli_home)
    assert approvals["c1"]["by"] == "user"
    assert (approvals["c2"]["by"], approvals["c2"]["rule"]) == ("session", "run_shell(touch *)")


def test_project_choice_writes_the_rule(
    terminal: Any, server: ScriptedServer, workspace: Path
) -> None:
    server.enqueue(Reply.tool_calls([shell("touch p.txt", "c1")]), Reply.text(["ok"]))
    term = terminal("make p")
    term.wait_prompt()
    term.child.send("p")
    assert term.finish() == 0, term.text

    assert (workspace / "p.txt").exists()
    config = workspace / ".agentcli" / "config.toml"
    data = tomllib.loads(config.read_text(encoding="utf-8"))
    assert "run_shell(touch *)" in data["policy"]["allow"]
    assert "run_shell(touch *)" in term.text  # the user is told what was saved


def test_ctrl_c_at_the_prompt_cancels_the_turn(
    terminal: Any, server: ScriptedServer, workspace: Path
) -> None:
    server.enqueue(Reply.tool_calls([shell("touch c.txt", "c1")]), Reply.text(["never"]))
    term = terminal("make c")
    term.wait_prompt()
    started = time.monotonic()
    term.child.sendcontrol("c")
    code = term.finish()

    assert time.monotonic() - started < 5
    assert code == 130, term.text
    assert not (workspace / "c.txt").exists()
    assert len(server.requests) == 1


def test_write_over_an_existing_file_shows_a_diff(
    terminal: Any, server: ScriptedServer, workspace: Path
) -> None:
    new = f"{NOTES_LINES[0]}\nchanged note\n"
    server.enqueue(
        Reply.tool_calls(
            [{"id": "w1", "name": "write_file", "arguments": {"path": "notes.txt", "content": new}}]
        ),
        Reply.text(["ok"]),
    )
    term = terminal("edit notes")
    shown = term.wait_prompt()
    lines = [line.strip() for line in shown.splitlines()]
    assert f"-{NOTES_LINES[1]}" in lines
    assert "+changed note" in lines
    assert NOTES_LINES[0] in lines  # unchanged context
    term.child.send("y")
    assert term.finish() == 0, term.text
    assert (workspace / "notes.txt").read_text() == new


def test_a_command_that_is_not_plain_offers_only_yes_or_no(
    terminal: Any, server: ScriptedServer, workspace: Path
) -> None:
    server.enqueue(Reply.tool_calls([shell("echo $(touch sub.txt)", "c1")]), Reply.text(["ok"]))
    term = terminal("substitute")
    shown = term.wait_prompt()
    assert "for this session" not in shown and "in this project" not in shown
    assert "y  yes, this call only" in shown
    term.wait_all(r"y/n\]")
    term.child.send("s")  # not offered: ignored
    term.child.send("n")
    term.wait_all("reason")
    term.child.send("\r")
    assert term.finish() == 4, term.text
    assert not (workspace / "sub.txt").exists()


# --- security holes, end to end -------------------------------------------------------

LOW_BUT_UNSAFE = {
    "symlink-out": "cat link.txt",
    "brace-expansion": "cat {..,.}/outside.txt",
    "tilde-plus": "cat ~+/../outside.txt",
    "line-continuation": "cat .\\\n./outside.txt",
}


@pytest.mark.parametrize("command", list(LOW_BUT_UNSAFE.values()), ids=list(LOW_BUT_UNSAFE))
def test_no_low_command_reads_outside_the_workspace(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, tmp_path: Path, command: str
) -> None:
    """BUG: each of these is classified read-only, runs without asking, and hands the
    content of tmp/outside.txt (outside the workspace) to the model."""
    (workspace / "link.txt").symlink_to(tmp_path / "outside.txt")
    server.enqueue(Reply.tool_calls([shell(command, "c1")]), Reply.text(["ok"]))
    result = run_cli(["run", "read it"], server=server)

    [tool] = tool_messages(server, 1)
    assert OUTSIDE_LINES[0] not in tool["content"]
    assert result.returncode == 4, result.stderr


def test_no_low_command_writes(run_cli: RunCli, server: ScriptedServer, workspace: Path) -> None:
    """BUG: `sort --outp=FILE` (GNU getopt abbreviates --output) runs without asking."""
    server.enqueue(
        Reply.tool_calls([shell("sort --outp=made.txt README.md", "c1")]), Reply.text(["ok"])
    )
    result = run_cli(["run", "sort it"], server=server)

    assert not (workspace / "made.txt").exists()
    assert result.returncode == 4, result.stderr


def test_a_medium_approval_does_not_cover_a_write_outside_the_workspace(
    terminal: Any, server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    """BUG: "yes" to one write inside the workspace stores the bare rule `write_file` for
    the session, and a later write outside the workspace (high risk) runs without asking."""
    outside = tmp_path / "written-outside.txt"
    server.enqueue(
        Reply.tool_calls(
            [
                {
                    "id": "w1",
                    "name": "write_file",
                    "arguments": {"path": "inside.txt", "content": "1\n"},
                }
            ]
        ),
        Reply.tool_calls(
            [
                {
                    "id": "w2",
                    "name": "write_file",
                    "arguments": {"path": "../written-outside.txt", "content": "2\n"},
                }
            ]
        ),
        Reply.text(["ok"]),
    )
    term = terminal("write two files")
    term.wait_prompt()
    term.child.send("y")
    index = term.child.expect_exact([HEADING, pexpect.EOF], timeout=TIMEOUT)
    if index == 0:  # asked again, as it should: refuse
        term.child.expect_exact(PROMPT, timeout=TIMEOUT)
        term.child.send("n")
        term.wait_all("reason")
        term.child.send("\r")
        term.child.expect_exact(pexpect.EOF, timeout=TIMEOUT)
    assert (workspace / "inside.txt").exists()
    assert not outside.exists(), "the write outside the workspace ran without a prompt"
    assert index == 0
