"""Hooks from outside: the installed CLI against the scripted model server, with real hook
programs (shell and Python) read from `[hooks]` in the configuration and from Claude Code's
`.claude/settings.json` — blocking `run_shell(rm *)`, rewriting arguments, adding context,
logging every event with the JSON it got; a Claude Code script working unchanged; a hook
that hangs (its timeout stops its whole group, one line); a hook's allow that beats no
deny and no ask; hooks that never see an API key; what each decided in `--output jsonl`
and in the session file."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from agentcli.agent.hook_runner import shown_command
from tests.conftest import RunCli, assert_one_error, tool_results
from tests.scripted_server import Reply, ScriptedServer


def shell(command: str, call_id: str) -> dict[str, Any]:
    return {"id": call_id, "name": "run_shell", "arguments": {"command": command}}


def script(folder: Path, name: str, text: str) -> Path:
    """An executable hook program."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    path.chmod(0o755)
    return path


def configure(cli_home: Path, toml: str) -> None:
    path = cli_home / "agentcli" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(toml, encoding="utf-8")


def hook_events(stdout: str) -> list[dict[str, Any]]:
    events = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    return [e["value"] for e in events if e.get("type") == "CUSTOM" and e.get("name") == "hook"]


GUARD_SH = """#!/bin/sh
# Refuses what it is shown: exit 2, the reason on stderr (Claude Code's contract).
cat > /dev/null
echo "no deleting in this repository" >&2
exit 2
"""

LOGGER_PY = f"""#!{sys.executable}
import json, os, sys
event = json.load(sys.stdin)
with open(sys.argv[1], "a") as log:  # hooks get no variable a user did not pass
    log.write(json.dumps(event) + "\\n")
"""


def test_a_shell_hook_blocks_rm_and_the_model_gets_its_reason(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    guard = script(tmp_path / "hooks", "guard.sh", GUARD_SH)
    configure(
        tmp_path / "home",
        f'[[hooks.PreToolUse]]\nmatcher = "run_shell(rm *)"\ncommand = "{guard}"\n',
    )
    (workspace / "keep.txt").write_text("x")
    server.enqueue(
        Reply.tool_calls(
            [
                shell("rm keep.txt", "c1"),
                shell("bash -c 'rm keep.txt'", "c2"),  # inside a wrapper: matched too
                shell("touch made.txt", "c3"),
            ]
        ),
        Reply.text(["ok"]),
    )
    result = run_cli(["run", "--yes", "go"], server=server)
    assert result.returncode == 4, result.stderr  # a call was refused, by a hook as by a rule
    assert (workspace / "keep.txt").exists()
    assert (workspace / "made.txt").exists()  # the hook's matcher left it alone
    results = tool_results(server)
    for call in ("c1", "c2"):
        assert results[call] == (
            f"denied: the PreToolUse hook `{shown_command(str(guard))}` refused it: no deleting "
            "in this repository"
        )


REWRITE_PY = f"""#!{sys.executable}
import json, sys
event = json.load(sys.stdin)
command = event["tool_input"]["command"].replace("first.txt", "second.txt")
print(json.dumps({{"hookSpecificOutput": {{"hookEventName": "PreToolUse",
    "permissionDecision": "allow", "updatedInput": {{"command": command}}}}}}))
"""


def test_a_python_hook_rewrites_the_arguments_and_the_policy_decides_what_runs(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    rewrite = script(tmp_path / "hooks", "rewrite.py", REWRITE_PY)
    configure(tmp_path / "home", f'[[hooks.PreToolUse]]\nmatcher = "Bash"\ncommand = "{rewrite}"\n')
    server.enqueue(
        Reply.tool_calls([shell("touch first.txt", "c1")]),
        Reply.text(["ok"]),
    )
    # Without --yes and without a terminal: the rewritten call is asked, so refused.
    refused = run_cli(["run", "--output", "json", "go"], server=server)
    assert refused.returncode == 4, refused.stderr
    assert not (workspace / "first.txt").exists() and not (workspace / "second.txt").exists()
    server.enqueue(Reply.tool_calls([shell("touch first.txt", "c1")]), Reply.text(["ok"]))
    result = run_cli(["run", "--yes", "--output", "jsonl", "go"], server=server)
    assert result.returncode == 0, result.stderr
    assert (workspace / "second.txt").exists()
    assert not (workspace / "first.txt").exists()
    [decided] = hook_events(result.stdout)
    assert decided["hookEvent"] == "PreToolUse" and decided["outcome"] == "allow"
    assert decided["changedInput"] is True and decided["toolCallId"] == "c1"


def test_changed_arguments_the_schema_refuses_do_not_run(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    bad = script(
        tmp_path / "hooks",
        "bad.sh",
        '#!/bin/sh\necho \'{"hookSpecificOutput": {"updatedInput": {"cmd": "touch x"}}}\'\n',
    )
    configure(tmp_path / "home", f'[[hooks.PreToolUse]]\ncommand = "{bad}"\n')
    server.enqueue(Reply.tool_calls([shell("touch made.txt", "c1")]), Reply.text(["ok"]))
    assert run_cli(["run", "--yes", "go"], server=server).returncode == 4  # the call refused
    assert not (workspace / "made.txt").exists()
    assert "changed the arguments into ones the tool refuses" in tool_results(server)["c1"]


def test_hook_context_reaches_the_model_and_every_event_is_logged(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, tmp_path: Path, cli_home: Path
) -> None:
    logger = script(tmp_path / "hooks", "log.py", LOGGER_PY)
    context = script(tmp_path / "hooks", "context.sh", "#!/bin/sh\necho 'The build uses make.'\n")
    start = script(
        tmp_path / "hooks",
        "start.sh",
        '#!/bin/sh\necho \'{"hookSpecificOutput": {"hookEventName": "SessionStart", '
        '"additionalContext": "Today is release day."}}\'\n',
    )
    events = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"]
    log = tmp_path / "events.log"
    toml = "".join(f'[[hooks.{e}]]\ncommand = "{logger} {log}"\n' for e in [*events, "SessionEnd"])
    toml += f'[[hooks.UserPromptSubmit]]\ncommand = "{context}"\n'
    toml += f'[[hooks.SessionStart]]\nmatcher = "startup"\ncommand = "{start}"\n'
    configure(cli_home, toml)
    server.enqueue(Reply.tool_calls([shell("echo hi", "c1")]), Reply.text(["done"]))
    result = run_cli(["run", "--output", "jsonl", "say hi"], server=server)
    assert result.returncode == 0, result.stderr

    first = server.requests[0].json["messages"]
    assert "Today is release day." in first[0]["content"]  # the system prompt
    assert first[-1]["content"] == "say hi\n\nThe build uses make."
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert [e["hook_event_name"] for e in logged] == [*events, "SessionEnd"]
    session_ids = {e["session_id"] for e in logged}
    assert len(session_ids) == 1
    assert {e["cwd"] for e in logged} == {str(workspace)}
    by_event = {e["hook_event_name"]: e for e in logged}
    assert by_event["SessionStart"]["source"] == "startup"
    assert by_event["UserPromptSubmit"]["prompt"] == "say hi"
    assert by_event["PreToolUse"]["tool_name"] == "run_shell"
    assert by_event["PreToolUse"]["tool_input"] == {"command": "echo hi"}
    assert by_event["PreToolUse"]["tool_use_id"] == "c1"
    assert "hi" in by_event["PostToolUse"]["tool_response"]["content"]
    assert by_event["Stop"]["stop_hook_active"] is False
    assert by_event["Stop"]["last_assistant_message"] == "done"
    transcript = Path(by_event["Stop"]["transcript_path"])

    # What each decided: in --output jsonl, and in the session file.
    decided = hook_events(result.stdout)
    assert [d["hookEvent"] for d in decided] == [
        "SessionStart",
        "SessionStart",
        "UserPromptSubmit",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
        "SessionEnd",
    ]
    assert all(d["outcome"] == "ok" for d in decided)
    assert [d.get("addedContext") for d in decided[:4]] == [None, True, None, True]
    recorded = [json.loads(line) for line in transcript.read_text().splitlines()]
    names = [
        r["e"]["value"]["hookEvent"]
        for r in recorded
        if r.get("t") == "event" and r["e"].get("name") == "hook"
    ]
    assert names == [d["hookEvent"] for d in decided]


STOP_ONCE = """#!/bin/sh
# Sends the model on once: Claude Code's stop_hook_active says it already did.
if grep -q '"stop_hook_active": true'; then exit 0; fi
echo '{"decision": "block", "reason": "Run the tests before you stop."}'
"""


def test_a_stop_hook_sends_the_model_on_once(
    run_cli: RunCli, server: ScriptedServer, tmp_path: Path, cli_home: Path
) -> None:
    stop = script(tmp_path / "hooks", "stop.sh", STOP_ONCE)
    configure(cli_home, f'[[hooks.Stop]]\ncommand = "{stop}"\n')
    server.enqueue(Reply.text(["finished"]), Reply.text(["tests pass"]))
    result = run_cli(["run", "--output", "json", "go"], server=server)
    assert result.returncode == 0, result.stderr
    assert len(server.requests) == 2
    sent = server.requests[1].json["messages"][-1]
    assert sent["role"] == "user"
    assert "Run the tests before you stop." in sent["content"]
    assert json.loads(result.stdout)["text"] == "tests pass"


def test_a_prompt_hook_can_block_the_prompt(
    run_cli: RunCli, server: ScriptedServer, tmp_path: Path, cli_home: Path
) -> None:
    block = script(
        tmp_path / "hooks",
        "secret.sh",
        "#!/bin/sh\nif grep -q password; then echo 'no passwords in prompts' >&2; exit 2; fi\n",
    )
    configure(cli_home, f'[[hooks.UserPromptSubmit]]\ncommand = "{block}"\n')
    result = run_cli(["run", "my password is hunter2"], server=server)
    assert result.returncode == 4, result.stderr
    assert not server.requests  # nothing went to the model
    assert "blocked the prompt: no passwords in prompts" in result.stderr


CLAUDE_GUARD = """#!/usr/bin/env python3
# A Claude Code hook as its documentation shows one, unchanged.
import json, re, sys
data = json.load(sys.stdin)
command = data.get("tool_input", {}).get("command", "")
if data.get("hook_event_name") == "PreToolUse" and re.search(r"\\brm\\s+-rf\\b", command):
    print(json.dumps({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "rm -rf is blocked by the team's guard",
        }
    }))
sys.exit(0)
"""


def test_a_claude_code_project_hook_works_unchanged_once_trusted(
    run_cli: RunCli, server: ScriptedServer, workspace: Path
) -> None:
    hooks = workspace / ".claude" / "hooks"
    script(hooks, "guard.py", CLAUDE_GUARD.replace("/usr/bin/env python3", sys.executable))
    settings = {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [
                        {
                            "type": "command",
                            "command": '"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.py',
                            "timeout": 30,
                        }
                    ],
                }
            ],
            "SubagentStop": [{"hooks": [{"type": "command", "command": "true"}]}],
        }
    }
    (workspace / ".claude" / "settings.json").write_text(json.dumps(settings))
    (workspace / "src").mkdir()
    calls = Reply.tool_calls([shell("rm -rf src", "c1")])

    # Not trusted: the project's hooks do not run (the call is only --yes'd).
    server.enqueue(calls, Reply.text(["ok"]))
    assert run_cli(["run", "--yes", "go"], server=server).returncode == 0
    assert not (workspace / "src").exists()

    (workspace / "src").mkdir()
    assert run_cli(["trust"]).returncode == 0
    server.enqueue(calls, Reply.text(["ok"]))
    assert run_cli(["run", "--yes", "go"], server=server).returncode == 4  # rm -rf refused
    assert (workspace / "src").exists()
    assert "rm -rf is blocked by the team's guard" in tool_results(server)["c1"]


ALLOW_ALL = """#!/bin/sh
echo '{"hookSpecificOutput": {"permissionDecision": "allow", "permissionDecisionReason": "ok"}}'
"""


def test_a_hooks_allow_beats_no_deny_and_no_ask(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, tmp_path: Path, cli_home: Path
) -> None:
    allow = script(tmp_path / "hooks", "allow.sh", ALLOW_ALL)
    configure(cli_home, f'[[hooks.PreToolUse]]\ncommand = "{allow}"\n')
    server.enqueue(Reply.tool_calls([shell("touch made.txt", "c1")]), Reply.text(["ok"]))
    args = ["run", "--yes", "--forbid", "run_shell(touch *)", "go"]
    assert run_cli(args, server=server).returncode == 4
    assert not (workspace / "made.txt").exists()
    assert "the rule run_shell(touch *) denies it" in tool_results(server)["c1"]

    # Nor does it answer an ask: without a terminal, the call is refused as without it.
    server.enqueue(Reply.tool_calls([shell("touch made.txt", "c1")]), Reply.text(["ok"]))
    result = run_cli(["run", "go"], server=server)
    assert result.returncode == 4, result.stderr
    assert not (workspace / "made.txt").exists()


def test_a_hook_that_asks_is_asked_as_an_ask_rule(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, tmp_path: Path, cli_home: Path
) -> None:
    ask = script(
        tmp_path / "hooks",
        "ask.sh",
        '#!/bin/sh\necho \'{"hookSpecificOutput": {"permissionDecision": "ask", '
        '"permissionDecisionReason": "reads outside the usual"}}\'\n',
    )
    configure(cli_home, f'[[hooks.PreToolUse]]\nmatcher = "run_shell(cat *)"\ncommand = "{ask}"\n')
    server.enqueue(Reply.tool_calls([shell("cat README.md", "c1")]), Reply.text(["ok"]))
    assert run_cli(["run", "go"], server=server).returncode == 4  # no terminal: refused
    assert "reads outside the usual" in tool_results(server)["c1"]
    server.enqueue(Reply.tool_calls([shell("cat README.md", "c1")]), Reply.text(["ok"]))
    assert run_cli(["run", "--yes", "go"], server=server).returncode == 0


HANGS = """#!/bin/sh
echo $$ >> "$1"
sleep 600 &
echo $! >> "$1"
wait
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie is not alive
        return stat.read().split(")")[-1].split()[0] != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_a_hook_that_hangs_is_stopped_at_its_timeout_with_one_line(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, tmp_path: Path, cli_home: Path
) -> None:
    hang = script(tmp_path / "hooks", "hang.sh", HANGS)
    pids = tmp_path / "pids"
    configure(
        cli_home,
        f'[[hooks.PostToolUse]]\ncommand = "{hang} {pids}"\ntimeout = 0.5\n'
        f'[[hooks.PreToolUse]]\nmatcher = "run_shell(touch *)"\ncommand = "{hang} {pids}"\n'
        "timeout = 0.5\n",
    )
    server.enqueue(
        Reply.tool_calls([shell("echo hi", "c1"), shell("touch made.txt", "c2")]),
        Reply.text(["ok"]),
    )
    result = run_cli(["run", "go"], server=server)
    assert result.returncode == 4, result.stderr  # the hung guard refused c2
    warnings = [line for line in result.stderr.splitlines() if line.startswith("agentcli:")]
    [warning] = warnings
    shown = shown_command(f"{hang} {pids}")
    assert warning == (
        f"agentcli: warning: the PostToolUse hook `{shown}` timed out after 0.5s and was "
        "stopped; going on"
    )
    results = tool_results(server)
    assert results["c1"].endswith("output:\nhi\n")  # the result stands
    # A PreToolUse hook that failed refuses its call: a guard that could not look.
    assert (
        f"denied: the PreToolUse hook `{shown}` timed out after 0.5s and was stopped, and a "
        "call its guard could not check does not run"
    ) in results["c2"]
    assert not (workspace / "made.txt").exists()
    started = [int(p) for p in pids.read_text().split()]
    assert started and not any(_alive(pid) for pid in started)  # the group, sleep too


def test_a_hook_that_fails_or_answers_bad_json_is_one_line(
    run_cli: RunCli, server: ScriptedServer, tmp_path: Path, cli_home: Path
) -> None:
    bad = script(tmp_path, "bad.sh", "#!/bin/sh\necho {")
    configure(
        cli_home,
        '[[hooks.PostToolUse]]\ncommand = "no-such-hook-program"\n'
        f'[[hooks.PostToolUse]]\ncommand = "{bad}"\n',
    )
    server.enqueue(Reply.tool_calls([shell("echo hi", "c1")]), Reply.text(["ok"]))
    result = run_cli(["run", "go"], server=server)
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("agentcli:")]
    assert len(lines) == 2, result.stderr
    assert "`no-such-hook-program` exited with 127" in lines[0]
    assert "its output is not valid JSON" in lines[1]
    assert tool_results(server)["c1"].endswith("output:\nhi\n")


ENV_DUMP = f"""#!{sys.executable}
import json, os, sys
sys.stdin.read()
with open(os.environ.get("CLAUDE_PROJECT_DIR", ".") + "/../env.json", "w") as out:
    json.dump(dict(os.environ), out)
"""


def test_hooks_never_see_api_keys(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, tmp_path: Path, cli_home: Path
) -> None:
    dump = script(tmp_path / "hooks", "env.py", ENV_DUMP)
    configure(cli_home, f'[[hooks.UserPromptSubmit]]\ncommand = "{dump}"\n')
    server.enqueue(Reply.text(["ok"]))
    env = {"OPENAI_API_KEY": "sk-test-1", "ANTHROPIC_API_KEY": "sk-ant-2", "DEPLOY_TOKEN": "t3"}
    assert run_cli(["run", "go"], server=server, env=env).returncode == 0
    seen = json.loads((tmp_path / "env.json").read_text())
    assert not {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "DEPLOY_TOKEN"} & set(seen)
    assert "sk-" not in json.dumps(seen)
    assert seen["CLAUDE_PROJECT_DIR"] == str(workspace)


@pytest.mark.parametrize(
    ("toml", "needle"),
    [
        ('[hooks.PreToolUse]\ncommand = "x"\n', "[[hooks.PreToolUse]]"),
        ('[[hooks.BeforeTool]]\ncommand = "x"\n', "unknown hook event 'BeforeTool'"),
        ('[[hooks.PreToolUse]]\nmatcher = "run_shell()"\ncommand = "x"\n', "a hook's matcher"),
        ('[[hooks.PreToolUse]]\ncommand = "x"\ntimeout = -1\n', "timeout must be"),
        ('[[hooks.Stop]]\nhooks = [{ type = "prompt", prompt = "x" }]\n', "type 'prompt'"),
    ],
)
def test_a_hook_agentcli_cannot_read_stops_the_run_with_one_line(
    run_cli: RunCli, server: ScriptedServer, cli_home: Path, toml: str, needle: str
) -> None:
    configure(cli_home, toml)
    result = run_cli(["run", "go"], server=server)
    assert result.returncode == 2
    assert_one_error(result, needle, "config.toml")
    assert not server.requests


def test_a_pre_compact_hook_runs_before_the_conversation_is_summarised(
    run_cli: RunCli, tmp_path: Path, cli_home: Path
) -> None:
    from tests.test_e2e_compaction_fit import Summariser

    logger = script(tmp_path / "hooks", "log.py", LOGGER_PY)
    log = tmp_path / "events.log"
    with Summariser() as server:
        big = "\n".join(f"def f{i}(x): return x * {i}" for i in range(1_500))
        assert run_cli(["run", "-"], input=big, server=server).returncode == 0
        configure(
            cli_home,
            "[context]\nwindow = 4000\nkeep_turns = 1\n"
            f'[[hooks.PreCompact]]\nmatcher = "auto"\ncommand = "{logger} {log}"\n'
            f'[[hooks.PreCompact]]\nmatcher = "manual"\ncommand = "{logger} {log}.manual"\n',
        )
        result = run_cli(["run", "--continue", "-o", "jsonl", "and now?"], server=server)
    assert result.returncode == 0, result.stderr
    [event] = [json.loads(line) for line in log.read_text().splitlines()]
    assert (event["hook_event_name"], event["trigger"]) == ("PreCompact", "auto")
    assert not Path(f"{log}.manual").exists()  # its matcher names the other trigger
    events = [json.loads(line) for line in result.stdout.splitlines()]
    names = [e.get("name") for e in events if e.get("type") == "CUSTOM"]
    assert names.index("hook") < names.index("compacting") < names.index("compaction")


def test_a_projects_hooks_run_only_once_the_workspace_is_trusted(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, tmp_path: Path
) -> None:
    guard = script(tmp_path / "hooks", "guard.sh", GUARD_SH)
    project = workspace / ".agentcli" / "config.toml"
    project.parent.mkdir()
    project.write_text(
        f'[[hooks.PreToolUse]]\nmatcher = "run_shell(touch *)"\ncommand = "{guard}"\n'
    )
    calls = Reply.tool_calls([shell("touch made.txt", "c1")])
    server.enqueue(calls, Reply.text(["ok"]))
    untrusted = run_cli(["run", "--yes", "go"], server=server)
    assert untrusted.returncode == 0, untrusted.stderr
    assert "hooks.PreToolUse" in untrusted.stderr  # said once: the keys it ignored
    assert (workspace / "made.txt").exists()
    (workspace / "made.txt").unlink()
    assert run_cli(["trust"]).returncode == 0
    server.enqueue(calls, Reply.text(["ok"]))
    assert run_cli(["run", "--yes", "go"], server=server).returncode == 4  # refused by the hook
    assert not (workspace / "made.txt").exists()
    assert "no deleting in this repository" in tool_results(server)["c1"]


CLAUDE_PROTECT = f"""#!{sys.executable}
# Claude Code's documented file guard: it reads tool_input.file_path.
import json, sys
data = json.load(sys.stdin)
path = data["tool_input"].get("file_path", "")
if path.endswith(".lock"):
    print(f"{{path}} is generated; do not edit it", file=sys.stderr)
    sys.exit(2)
if path.endswith("draft.txt"):  # writes go to the final name instead
    final = path.replace("draft.txt", "final.txt")
    print(json.dumps({{"hookSpecificOutput": {{"hookEventName": "PreToolUse",
        "updatedInput": {{**data["tool_input"], "file_path": final}}}}}}))
"""

CLAUDE_RECORD = f"""#!{sys.executable}
import json, sys
data = json.load(sys.stdin)
with open(sys.argv[1], "a") as log:
    log.write(data["tool_input"]["file_path"] + "\\n")
"""


def test_a_users_claude_code_file_hooks_read_file_path_as_they_do_there(
    run_cli: RunCli, server: ScriptedServer, workspace: Path, tmp_path: Path, cli_home: Path
) -> None:
    protect = script(tmp_path / "hooks", "protect.py", CLAUDE_PROTECT)
    record = script(tmp_path / "hooks", "record.py", CLAUDE_RECORD)
    log = tmp_path / "written.log"
    settings = {
        "hooks": {
            "PreToolUse": [
                {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": str(protect)}]}
            ],
            "PostToolUse": [
                {
                    "matcher": "Write|Edit|MultiEdit",
                    "hooks": [{"type": "command", "command": f"{record} {log}"}],
                }
            ],
        }
    }
    (cli_home / ".claude").mkdir()
    (cli_home / ".claude" / "settings.json").write_text(json.dumps(settings))
    server.enqueue(
        Reply.tool_calls(
            [
                {
                    "id": "c1",
                    "name": "write_file",
                    "arguments": {"path": "uv.lock", "content": "x"},
                },
                {
                    "id": "c2",
                    "name": "write_file",
                    "arguments": {"path": "draft.txt", "content": "y"},
                },
            ]
        ),
        Reply.text(["ok"]),
    )
    result = run_cli(["run", "--yes", "go"], server=server)
    assert result.returncode == 4, result.stderr  # the hook refused uv.lock
    assert not (workspace / "uv.lock").exists()
    assert f"{workspace / 'uv.lock'} is generated; do not edit it" in tool_results(server)["c1"]
    assert not (workspace / "draft.txt").exists()
    assert (workspace / "final.txt").read_text() == "y"
    assert log.read_text().splitlines() == [str(workspace / "final.txt")]


@pytest.mark.parametrize(
    ("hook", "matcher", "refused"),
    [
        ({"type": "http", "url": "http://127.0.0.1:9/guard"}, "Bash", True),
        ({"type": "command", "command": "true", "timeout": "soon"}, "Bash", True),
        ({"type": "http", "url": "http://127.0.0.1:9/guard"}, "Write", False),
    ],
)
def test_a_claude_code_guard_agentcli_cannot_run_refuses_what_it_would_check(
    run_cli: RunCli,
    server: ScriptedServer,
    workspace: Path,
    cli_home: Path,
    hook: dict[str, Any],
    matcher: str,
    refused: bool,
) -> None:
    """A PreToolUse group of the user's settings.json that agentcli cannot run (an http
    hook, a timeout that is no number) was skipped silently in a headless run: the calls
    it guards ran unchecked. Now they are refused, saying why; others run."""
    settings = {"hooks": {"PreToolUse": [{"matcher": matcher, "hooks": [hook]}]}}
    path = cli_home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings), encoding="utf-8")
    marker = workspace / "ran.txt"
    server.enqueue(Reply.tool_calls([shell("touch ran.txt", "c1")]), Reply.text(["ok"]))
    result = run_cli(["run", "--yes", "go"], server=server)
    if refused:
        assert result.returncode == 4, result.stderr
        assert not marker.exists()
        said = tool_results(server)["c1"]
        assert "could not be read" in said and "a call its guard could not check" in said
    else:
        assert result.returncode == 0, result.stderr
        assert marker.exists()
