"""End-to-end: sessions — the append-only session file, `--continue` / `--resume`, recovery
after `kill -9` (while streaming and while a tool runs), a cut-off last line, the `sessions`
commands, and compaction near the context window."""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import subprocess
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from agentcli.process.tree import MARKER_VARIABLE
from tests.conftest import RunCli, StartCli, assert_one_error, error_lines
from tests.scripted_server import Reply, ScriptedServer

WARNING_PREFIX = "agentcli: warning:"
SUMMARY_SYSTEM_START = "You condense a conversation"


# --- helpers ---


def sessions_dir(cli_home: Path) -> Path:
    return cli_home / "agentcli" / "data" / "sessions"


def session_files(cli_home: Path) -> list[Path]:
    directory = sessions_dir(cli_home)
    return sorted(directory.glob("*.jsonl")) if directory.exists() else []


def only_session(cli_home: Path) -> Path:
    files = session_files(cli_home)
    assert len(files) == 1, files
    return files[0]


def records(path: Path) -> list[dict[str, Any]]:
    """Every line of a session file, parsed: each one must be intact JSON."""
    lines = path.read_text(encoding="utf-8").splitlines()
    parsed = []
    for number, line in enumerate(lines, start=1):
        try:
            parsed.append(json.loads(line))
        except ValueError:
            pytest.fail(f"{path.name} line {number} is not intact JSON: {line!r}")
    return parsed


def stored_messages(path: Path) -> list[dict[str, Any]]:
    """The messages as recorded; a tool result stored once, in its TOOL_CALL_RESULT event
    (`contentInEvent`), with that content."""
    results: dict[str, str] = {}
    found = []
    for record in records(path):
        event = record.get("e", {}) if record.get("t") == "event" else {}
        if event.get("type") == "TOOL_CALL_RESULT":
            results[event["toolCallId"]] = event["content"]
        if record.get("t") == "message":
            message = dict(record["m"])
            if message.pop("contentInEvent", False):
                message["content"] = results[message["toolCallId"]]
            found.append(message)
    return found


def messages(server: ScriptedServer, index: int) -> list[dict[str, Any]]:
    return server.requests[index].json["messages"]


def shape(msgs: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    """(role, content) of each message after the system message."""
    assert msgs[0]["role"] == "system", msgs
    return [(m["role"], m.get("content")) for m in msgs[1:]]


def warning_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith(WARNING_PREFIX)]


def jsonl_events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def assert_valid_history(msgs: list[dict[str, Any]]) -> None:
    """What a provider accepts: one system message first, every tool call answered by
    exactly one tool message right after its assistant message, no stray tool message,
    and the conversation ends with the user's turn."""
    assert msgs[0]["role"] == "system", msgs
    assert all(m["role"] != "system" for m in msgs[1:]), msgs
    position = 1
    while position < len(msgs):
        message = msgs[position]
        position += 1
        assert message["role"] in ("user", "assistant"), (position - 1, msgs)
        calls = message.get("tool_calls") or []
        if message["role"] != "assistant" or not calls:
            continue
        expected = [c["id"] for c in calls]
        answered = []
        while position < len(msgs) and msgs[position]["role"] == "tool":
            answered.append(msgs[position]["tool_call_id"])
            position += 1
        assert sorted(answered) == sorted(expected), (expected, answered, msgs)
    assert msgs[-1]["role"] == "user", msgs


def read_stdout_until(process: subprocess.Popen[str], needle: str, timeout: float = 10) -> str:
    """Reads the process's stdout (raw, unbuffered) until `needle` shows up."""
    assert process.stdout is not None
    fd = process.stdout.fileno()
    seen = b""
    deadline = time.monotonic() + timeout
    while needle.encode() not in seen:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            pytest.fail(f"{needle!r} never reached stdout; got {seen!r}")
        ready, _, _ = select.select([fd], [], [], remaining)
        if ready:
            chunk = os.read(fd, 4096)
            if not chunk:
                pytest.fail(f"stdout ended before {needle!r}; got {seen!r}")
            seen += chunk
    return seen.decode()


def wait_for_file(path: Path, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            pytest.fail(f"{path} never appeared")
        time.sleep(0.02)


def kill_hard(process: subprocess.Popen[str]) -> None:
    process.kill()  # SIGKILL: no handler, no cleanup
    process.wait(timeout=5)


def common_prefix(first: str, second: str) -> str:
    length = 0
    while length < min(len(first), len(second)) and first[length] == second[length]:
        length += 1
    return first[:length]


def shortest_unique_prefix(session_id: str, others: list[str]) -> str:
    for length in range(1, len(session_id) + 1):
        prefix = session_id[:length]
        if not any(other.startswith(prefix) for other in others):
            return prefix
    raise AssertionError(f"{session_id} is a prefix of another id")


# --- the session file ---


def test_a_run_is_one_session_file_whose_id_is_the_thread_id(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, workspace: Path
) -> None:
    server.enqueue(Reply.text(["The ", "answer."]))
    result = run_cli(["run", "--output", "jsonl", "What is it?"], server=server)

    assert result.returncode == 0, result.stderr
    path = only_session(cli_home)
    lines = records(path)
    header = lines[0]
    assert header["t"] == "session"
    assert header["id"] == path.stem
    assert header["workspace"] == str(workspace.resolve())
    assert header["created"]
    assert header["model"].endswith(server.requests[0].json["model"])
    assert all(r.get("t") != "session" for r in lines[1:])

    events = jsonl_events(result.stdout)
    [started] = [e for e in events if e["type"] == "RUN_STARTED"]
    assert started["threadId"] == path.stem
    [finished] = [e for e in events if e["type"] == "RUN_FINISHED"]
    assert finished["threadId"] == path.stem

    assert [(m["role"], m["content"]) for m in stored_messages(path)] == [
        ("user", "What is it?"),
        ("assistant", "The answer."),
    ]
    # The events are in the file too, in the order they happened.
    stored_types = [r["e"]["type"] for r in lines if r.get("t") == "event"]
    assert stored_types == [e["type"] for e in events]

    # A run without --continue starts a session of its own.
    server.enqueue(Reply.text(["Other."]))
    again = run_cli(["run", "Another question"], server=server)
    assert again.returncode == 0, again.stderr
    assert len(session_files(cli_home)) == 2
    assert shape(messages(server, 1)) == [("user", "Another question")]


# --- --continue and --resume ---


def test_continue_sends_the_earlier_turns(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    server.enqueue(Reply.text(["First answer."]), Reply.text(["Second answer."]))
    first = run_cli(["run", "first prompt"], server=server)
    assert first.returncode == 0, first.stderr
    path = only_session(cli_home)

    second = run_cli(["run", "--continue", "--output", "jsonl", "second prompt"], server=server)

    assert second.returncode == 0, second.stderr
    assert shape(messages(server, 1)) == [
        ("user", "first prompt"),
        ("assistant", "First answer."),
        ("user", "second prompt"),
    ]
    assert messages(server, 1)[0] == messages(server, 0)[0]  # same system message
    assert only_session(cli_home) == path  # appended to, not a new session
    [started] = [e for e in jsonl_events(second.stdout) if e["type"] == "RUN_STARTED"]
    assert started["threadId"] == path.stem
    assert [(m["role"], m["content"]) for m in stored_messages(path)] == [
        ("user", "first prompt"),
        ("assistant", "First answer."),
        ("user", "second prompt"),
        ("assistant", "Second answer."),
    ]


def test_resume_by_prefix_picks_that_session_not_the_latest(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    server.enqueue(Reply.text(["Answer A."]), Reply.text(["Answer B."]), Reply.text(["Again A."]))
    assert run_cli(["run", "prompt A"], server=server).returncode == 0
    [path_a] = session_files(cli_home)
    time.sleep(0.05)  # distinct modification times: B is the latest
    assert run_cli(["run", "prompt B"], server=server).returncode == 0
    [path_b] = [p for p in session_files(cli_home) if p != path_a]

    prefix = shortest_unique_prefix(path_a.stem, [path_b.stem])
    result = run_cli(["run", "--resume", prefix, "--output", "jsonl", "more A"], server=server)

    assert result.returncode == 0, result.stderr
    assert shape(messages(server, 2)) == [
        ("user", "prompt A"),
        ("assistant", "Answer A."),
        ("user", "more A"),
    ]
    [started] = [e for e in jsonl_events(result.stdout) if e["type"] == "RUN_STARTED"]
    assert started["threadId"] == path_a.stem
    assert [m["content"] for m in stored_messages(path_a)][-2:] == ["more A", "Again A."]
    assert [m["content"] for m in stored_messages(path_b)] == ["prompt B", "Answer B."]


def test_chat_continue_with_piped_stdin(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    server.enqueue(Reply.text(["Noted."]), Reply.text(["It was 42."]))
    assert run_cli(["run", "Remember 42"], server=server).returncode == 0

    result = run_cli(["chat", "--continue"], server=server, input="What was it?\n")

    assert result.returncode == 0, result.stderr
    assert result.stdout == "It was 42.\n"
    assert shape(messages(server, 1)) == [
        ("user", "Remember 42"),
        ("assistant", "Noted."),
        ("user", "What was it?"),
    ]
    assert len(session_files(cli_home)) == 1


def test_continue_only_looks_at_this_workspace(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    server.enqueue(Reply.text(["Elsewhere."]), Reply.text(["never requested"]))
    assert run_cli(["run", "in the other workspace"], server=server, cwd=other).returncode == 0

    result = run_cli(["run", "--continue", "go on"], server=server)

    assert result.returncode == 2
    assert_one_error(result, "continue")
    assert result.stdout == ""
    assert len(server.requests) == 1
    assert len(session_files(cli_home)) == 1  # no new session for a failed --continue


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", "--continue", "go on"], "continue"),
        (["run", "--resume", "nope", "go on"], "nope"),
        (["run", "--continue", "--resume", "X", "go on"], "--resume"),
    ],
    ids=["continue-nothing", "resume-unknown", "both"],
)
def test_continue_and_resume_usage_errors(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, args: list[str], needle: str
) -> None:
    server.enqueue(Reply.text(["never requested"]))
    result = run_cli(args, server=server)

    assert result.returncode == 2
    assert_one_error(result, needle)
    assert result.stdout == ""
    assert server.requests == []
    assert session_files(cli_home) == []


# --- kill -9 ---


@pytest.mark.parametrize("moment", ["after-first-text", "before-any-text"])
def test_kill_9_while_streaming_then_continue(
    start_cli: StartCli,
    run_cli: RunCli,
    server: ScriptedServer,
    cli_home: Path,
    moment: str,
) -> None:
    if moment == "after-first-text":
        first = Reply.text(["Partial answer", " never sent"], delay=20)
    else:
        first = Reply.hang(20)
    server.enqueue(first, Reply.text(["Recovered."]))
    process = start_cli(["run", "tell me a story"], server=server)
    if moment == "after-first-text":
        read_stdout_until(process, "Partial answer")
    else:
        assert server.wait_for_requests(1, timeout=10)
        time.sleep(0.2)  # let it settle into reading the (silent) response
    kill_hard(process)

    path = only_session(cli_home)
    before = records(path)  # every line written before the kill is intact
    assert before[0]["t"] == "session"

    result = run_cli(["run", "--continue", "next"], server=server)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Recovered.\n"
    assert warning_lines(result.stderr) == []
    sent = messages(server, 1)
    assert_valid_history(sent)
    assert sent[1] == {"role": "user", "content": "tell me a story"}
    assert sent[-1] == {"role": "user", "content": "next"}
    middle = sent[2:-1]
    assert all(m["role"] == "assistant" and not m.get("tool_calls") for m in middle), sent
    assert len(middle) <= 1, sent
    if moment == "after-first-text":
        assert len(middle) == 1, sent
        assert "Partial answer" in middle[0]["content"]
        assert "never sent" not in middle[0]["content"]
    # The file still holds everything from before the kill, and the new turn after it.
    after = records(path)
    assert after[: len(before)] == before
    contents = [m["content"] for m in stored_messages(path)]
    assert contents[0] == "tell me a story"
    assert contents[-2:] == ["next", "Recovered."]


def _processes_with_marker_in(directory: Path) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter():
        try:
            if MARKER_VARIABLE in proc.environ() and Path(proc.cwd()) == directory:
                found.append(proc)
        except psutil.Error:
            continue
    return found


def test_kill_9_during_a_tool_then_continue(
    start_cli: StartCli,
    run_cli: RunCli,
    server: ScriptedServer,
    cli_home: Path,
    workspace: Path,
) -> None:
    call = {
        "id": "call_sleep",
        "name": "run_shell",
        "arguments": {"command": "touch started; sleep 30"},
    }
    server.enqueue(Reply.tool_calls([call]), Reply.text(["Recovered."]))
    process = start_cli(["run", "--yes", "sleep a while"], server=server)
    orphans: list[psutil.Process] = []
    try:
        wait_for_file(workspace / "started")
        with contextlib.suppress(psutil.Error):
            orphans += psutil.Process(process.pid).children(recursive=True)
        kill_hard(process)
        orphans += _processes_with_marker_in(workspace.resolve())

        path = only_session(cli_home)
        records(path)  # intact
        result = run_cli(["run", "--continue", "next"], server=server)

        assert result.returncode == 0, result.stderr
        assert result.stdout == "Recovered.\n"
        assert len(server.requests) == 2
        sent = messages(server, 1)
        assert_valid_history(sent)
        assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "user"]
        assert sent[1]["content"] == "sleep a while"
        [stored_call] = sent[2]["tool_calls"]
        assert stored_call["id"] == "call_sleep"
        assert stored_call["function"]["name"] == "run_shell"
        assert json.loads(stored_call["function"]["arguments"]) == call["arguments"]
        assert sent[3]["tool_call_id"] == "call_sleep"
        assert "interrupted" in sent[3]["content"].lower()
        assert sent[4] == {"role": "user", "content": "next"}

        stored = stored_messages(path)
        assert [m["role"] for m in stored] == ["user", "assistant", "tool", "user", "assistant"]
        assert stored[2]["toolCallId"] == "call_sleep"
        assert "interrupted" in stored[2]["content"].lower()
    finally:
        for orphan in orphans:
            with contextlib.suppress(psutil.Error):
                orphan.kill()
        psutil.wait_procs(orphans, timeout=5)


# --- a cut-off last line ---


def test_truncated_last_line_is_skipped_with_one_warning(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    server.enqueue(Reply.text(["Intact answer."]), Reply.text(["Still fine."]))
    assert run_cli(["run", "intact prompt"], server=server).returncode == 0
    path = only_session(cli_home)
    full = json.dumps({"t": "message", "m": {"id": "msg_x", "role": "user", "content": "lost"}})
    with path.open("a", encoding="utf-8") as stream:
        stream.write(full[: len(full) // 2])  # as a kill in the middle of a write leaves it

    show = run_cli(["sessions", "show", path.stem], server=server)

    assert show.returncode == 0, show.stderr
    assert "intact prompt" in show.stdout
    assert "Intact answer." in show.stdout
    [warning] = warning_lines(show.stderr)
    assert path.stem in warning
    assert error_lines(show.stderr) == []

    result = run_cli(["run", "--continue", "after the cut"], server=server)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Still fine.\n"
    [warning] = warning_lines(result.stderr)
    assert path.stem in warning
    sent = messages(server, 1)
    assert_valid_history(sent)
    assert shape(sent) == [
        ("user", "intact prompt"),
        ("assistant", "Intact answer."),
        ("user", "after the cut"),
    ]

    # What the continued run wrote is not lost to the damaged line before it.
    export = run_cli(["sessions", "export", path.stem, "--format", "json"])
    assert export.returncode == 0, export.stderr
    document = json.loads(export.stdout)
    assert [(m["role"], m["content"]) for m in document["messages"]] == [
        ("user", "intact prompt"),
        ("assistant", "Intact answer."),
        ("user", "after the cut"),
        ("assistant", "Still fine."),
    ]


# --- sessions list | show | export | rm ---


def test_sessions_commands(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    server.enqueue(
        Reply.text(["Alpha answer."], usage=(100, 20)),
        Reply.text(["Alpha again answer."], usage=(7, 3)),
        Reply.text(["Beta answer."], usage=(1, 2)),
    )
    assert run_cli(["run", "alpha   prompt\nwith a newline"], server=server).returncode == 0
    assert run_cli(["run", "--continue", "alpha again"], server=server).returncode == 0
    assert run_cli(["run", "beta prompt"], server=server, cwd=other).returncode == 0
    [alpha] = [p.stem for p in session_files(cli_home) if len(stored_messages(p)) == 4]
    [beta] = [p.stem for p in session_files(cli_home) if p.stem != alpha]

    # list --json
    listed = run_cli(["sessions", "list", "--json"])
    assert listed.returncode == 0, listed.stderr
    rows = {row["id"]: row for row in json.loads(listed.stdout)}
    assert set(rows) == {alpha, beta}
    for row in rows.values():
        assert {"id", "started", "workspace", "first_prompt", "turns", "tokens"} <= row.keys()
        assert re.match(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}", row["started"]), row
    assert rows[alpha]["workspace"] == str(workspace.resolve())
    assert rows[alpha]["first_prompt"] == "alpha prompt with a newline"
    assert rows[alpha]["turns"] == 2
    assert rows[alpha]["tokens"] == 130
    assert rows[beta]["workspace"] == str(other.resolve())
    assert rows[beta]["first_prompt"] == "beta prompt"
    assert rows[beta]["turns"] == 1
    assert rows[beta]["tokens"] == 3

    # list (table)
    table = run_cli(["sessions", "list"])
    assert table.returncode == 0, table.stderr
    header, *body = table.stdout.splitlines()
    for column in ("id", "started", "turns", "tokens", "workspace", "first prompt"):
        assert column in header
    assert len(body) == 2
    [alpha_line] = [line for line in body if alpha in line]
    assert "alpha prompt with a newline" in alpha_line
    assert str(workspace.resolve()) in alpha_line
    assert re.search(r"\b2\s+130\b", alpha_line), alpha_line
    [beta_line] = [line for line in body if beta in line]
    assert "beta prompt" in beta_line
    assert re.search(r"\b1\s+3\b", beta_line), beta_line

    # show: a readable transcript
    show = run_cli(["sessions", "show", alpha])
    assert show.returncode == 0, show.stderr
    for text in ("alpha   prompt", "Alpha answer.", "alpha again", "Alpha again answer."):
        assert text in show.stdout
    assert show.stdout.index("Alpha answer.") < show.stdout.index("alpha again")
    assert "Beta answer." not in show.stdout
    assert '{"t":' not in show.stdout  # not the raw file

    # export json: header, messages and events
    exported = run_cli(["sessions", "export", alpha, "--format", "json"])
    assert exported.returncode == 0, exported.stderr
    document = json.loads(exported.stdout)
    assert document["session"]["id"] == alpha
    assert [(m["role"], m["content"]) for m in document["messages"]] == [
        ("user", "alpha   prompt\nwith a newline"),
        ("assistant", "Alpha answer."),
        ("user", "alpha again"),
        ("assistant", "Alpha again answer."),
    ]
    started = [e for e in document["events"] if e["type"] == "RUN_STARTED"]
    assert [e["threadId"] for e in started] == [alpha, alpha]
    assert sum(1 for e in document["events"] if e["type"] == "RUN_FINISHED") == 2

    # export markdown
    markdown = run_cli(["sessions", "export", alpha, "--format", "markdown"])
    assert markdown.returncode == 0, markdown.stderr
    assert markdown.stdout.startswith("# ")
    assert alpha in markdown.stdout
    for text in ("alpha again", "Alpha answer.", "Alpha again answer."):
        assert text in markdown.stdout

    bad_format = run_cli(["sessions", "export", alpha, "--format", "xml"])
    assert bad_format.returncode == 2
    assert_one_error(bad_format, "xml")

    # an ambiguous prefix is refused, and removes nothing
    common = common_prefix(alpha, beta)
    assert common  # same day
    for command in (["show", common], ["rm", common]):
        ambiguous = run_cli(["sessions", *command])
        assert ambiguous.returncode == 2, command
        assert_one_error(ambiguous, common)
        assert ambiguous.stdout == ""
    assert len(session_files(cli_home)) == 2

    # rm by unique prefix
    prefix = shortest_unique_prefix(beta, [alpha])
    removed = run_cli(["sessions", "rm", prefix])
    assert removed.returncode == 0, removed.stderr
    assert beta in removed.stdout
    assert [p.stem for p in session_files(cli_home)] == [alpha]
    after = run_cli(["sessions", "list", "--json"])
    assert [row["id"] for row in json.loads(after.stdout)] == [alpha]
    gone = run_cli(["sessions", "show", beta])
    assert gone.returncode == 2
    assert_one_error(gone, beta)


# --- compaction ---


def test_compaction_near_the_context_window(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, workspace: Path
) -> None:
    config = cli_home / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[context]\nwindow = 300\nkeep_turns = 1\n", encoding="utf-8")
    (workspace / "AGENTS.md").write_text("Project rule: marker-agents-5c1.\n", encoding="utf-8")
    prompts = [" ".join([f"PROMPT-{n}"] + [f"long words of turn {n}"] * 40) for n in (1, 2, 3)]
    answers = [" ".join([f"ANSWER-{n}"] + [f"long answer text {n}"] * 30) for n in (1, 2, 3)]
    summaries = ["SUMMARY-ONE: the user asked about turn one.", "SUMMARY-TWO: turns one, two."]
    server.enqueue(
        Reply.text([answers[0]]),
        Reply.text([summaries[0]]),
        Reply.text([answers[1]]),
        Reply.text([summaries[1]]),
        Reply.text([answers[2]]),
    )

    first = run_cli(["run", "--output", "jsonl", prompts[0]], server=server)
    assert first.returncode == 0, first.stderr
    # Nothing older than the latest turn yet: nothing to summarise.
    assert len(server.requests) == 1
    assert not [e for e in jsonl_events(first.stdout) if e.get("name") == "compaction"]
    base_system = messages(server, 0)[0]["content"]
    assert "marker-agents-5c1" in base_system

    second = run_cli(["run", "--continue", "--output", "jsonl", prompts[1]], server=server)

    assert second.returncode == 0, second.stderr
    assert len(server.requests) == 3
    summary_request = messages(server, 1)
    assert summary_request[0]["role"] == "system"
    assert summary_request[0]["content"].startswith(SUMMARY_SYSTEM_START)
    summarised = json.dumps(summary_request[1:])
    assert "PROMPT-1" in summarised and "ANSWER-1" in summarised
    assert "PROMPT-2" not in summarised
    main = messages(server, 2)
    system = main[0]["content"]
    assert system.startswith(base_system)  # agentcli's and the project's instructions verbatim
    assert summaries[0] in system
    assert "PROMPT-1" not in json.dumps(main) and "ANSWER-1" not in json.dumps(main)
    assert main[-1] == {"role": "user", "content": prompts[1]}
    events = jsonl_events(second.stdout)
    compactions = [e for e in events if e["type"] == "CUSTOM" and e["name"] == "compaction"]
    assert len(compactions) == 1
    deltas = "".join(e.get("delta", "") for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert summaries[0] not in deltas  # the summary is not shown as the answer
    assert answers[1] in deltas

    third = run_cli(["run", "--continue", "--output", "jsonl", prompts[2]], server=server)

    assert third.returncode == 0, third.stderr
    assert len(server.requests) == 5
    assert messages(server, 3)[0]["content"].startswith(SUMMARY_SYSTEM_START)
    resummarised = json.dumps(messages(server, 3)[1:])
    assert summaries[0] in resummarised  # the earlier summary is carried forward
    assert "PROMPT-2" in resummarised and "ANSWER-2" in resummarised
    main = messages(server, 4)
    assert main[0]["content"].startswith(base_system)
    assert summaries[1] in main[0]["content"]
    sent = json.dumps(main[1:])
    for old in ("PROMPT-1", "ANSWER-1", "PROMPT-2", "ANSWER-2"):
        assert old not in sent
    assert main[-1] == {"role": "user", "content": prompts[2]}
    assert [e for e in jsonl_events(third.stdout) if e.get("name") == "compaction"]

    # The session file keeps every message; only what is sent shrank.
    path = only_session(cli_home)
    assert [m["content"] for m in stored_messages(path)] == [
        prompts[0],
        answers[0],
        prompts[1],
        answers[1],
        prompts[2],
        answers[2],
    ]


def test_sessions_list_keeps_summaries_and_reads_only_changed_files(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path
) -> None:
    server.enqueue(Reply.text(["One."]), Reply.text(["Two."]), Reply.text(["Three."]))
    assert run_cli(["run", "first prompt"], server=server).returncode == 0
    assert run_cli(["run", "second prompt"], server=server).returncode == 0
    listed = run_cli(["sessions", "list", "--json"])
    assert listed.returncode == 0, listed.stderr
    cache_path = session_files(cli_home)[0].parent / "summaries.json"
    cache = json.loads(cache_path.read_text())
    assert len(cache["sessions"]) == 2

    # an unchanged file is not read again: a doctored summary shows through
    [name] = [
        n for n, e in cache["sessions"].items() if e["summary"]["first_prompt"] == "first prompt"
    ]
    cache["sessions"][name]["summary"]["first_prompt"] = "from the cache"
    cache_path.write_text(json.dumps(cache))
    prompts = {
        row["first_prompt"] for row in json.loads(run_cli(["sessions", "list", "--json"]).stdout)
    }
    assert prompts == {"from the cache", "second prompt"}

    # a file that changed is read again; a damaged cache is rebuilt; a removed one dropped
    session = cache_path.parent / name
    os.utime(session, ns=(time.time_ns(), time.time_ns() + 10**9))
    prompts = {
        row["first_prompt"] for row in json.loads(run_cli(["sessions", "list", "--json"]).stdout)
    }
    assert prompts == {"first prompt", "second prompt"}
    cache_path.write_text("{not json")
    session.unlink()
    rows = json.loads(run_cli(["sessions", "list", "--json"]).stdout)
    assert [row["first_prompt"] for row in rows] == ["second prompt"]
    assert list(json.loads(cache_path.read_text())["sessions"]) == [
        p.name for p in session_files(cli_home)
    ]
