"""A hook's answer read as Claude Code reads it (agentcli.habits.hook_answer), and its
matcher read as the policy's rules (agentcli.habits.hooks) — the cases the end-to-end tests
(tests/test_e2e_hooks.py) do not each run a program for."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.habits.hook_answer import read_answer
from agentcli.habits.hooks import Hook, matcher_rules
from agentcli.policy.command_reach import command_line_hidden
from agentcli.policy.shell_parse import parse_command
from agentcli.risk import Subjects


def answer(stdout: str, code: int = 0, event: str = "PreToolUse", stderr: str = ""):
    return read_answer(event, code, stdout, stderr, timed_out=False, timeout=60)


@pytest.mark.parametrize(
    ("stdout", "decision", "reason"),
    [
        ('{"decision": "approve", "reason": "fine"}', "allow", "fine"),
        ('{"decision": "block", "reason": "no"}', "block", "no"),
        ('{"hookSpecificOutput": {"permissionDecision": "defer"}}', "ask", ""),
        ('{"continue": false, "stopReason": "halt"}', "block", "halt"),
        (
            '{"hookSpecificOutput": {"permissionDecision": "deny", '
            '"permissionDecisionReason": "why"}, "reason": "older"}',
            "deny",
            "why",
        ),
        ("", None, ""),
        ("plain words", None, ""),
    ],
)
def test_answers_in_claude_codes_shapes(stdout: str, decision: str | None, reason: str) -> None:
    got = answer(stdout)
    assert (got.failure, got.decision, got.reason) == (None, decision, reason)


@pytest.mark.parametrize(
    ("stdout", "why"),
    [
        ("{not json", "not valid JSON"),
        # JSON, but not an object: meant as an answer, and not one (no longer plain text)
        ("[1]", "JSON but an array"),
        ('"text"', "JSON but a string"),
        ("null", "JSON but null"),
        ("5", "JSON but a number"),
        ('{"decision": "maybe"}', "decision 'maybe'"),
        ('{"hookSpecificOutput": {"permissionDecision": "yes"}}', "permissionDecision 'yes'"),
        ('{"hookSpecificOutput": {"updatedInput": "rm"}}', "updatedInput is not an object"),
        ('{"hookSpecificOutput": []}', "hookSpecificOutput is not an object"),
        ('{"continue": "false"}', "continue is not true or false"),
        ('{"continue": 0}', "continue is not true or false"),
        ('{"suppressOutput": "yes"}', "suppressOutput is not true or false"),
        ('{"reason": 3}', "reason is not a string"),
        ("not json at all", ""),  # plain text: no answer, as Claude Code reads it
    ],
)
def test_what_is_not_an_answer_is_the_hooks_failure(stdout: str, why: str) -> None:
    got = answer(stdout)
    if why:
        assert got.failure is not None and why in got.failure
    else:
        assert got.failure is None and got.decision is None


def test_exit_codes_and_context() -> None:
    blocked = answer("", 2, stderr="not here\n")
    assert (blocked.decision, blocked.reason) == ("block", "not here")
    failed = answer("", 1, stderr="Traceback (most recent call last):\nValueError: bad\n")
    assert failed.failure == "exited with 1: ValueError: bad"
    assert answer("", -11).failure == "was killed by SIGSEGV"
    assert answer("[1]", event="SessionStart").context == "[1]"  # plain text is context
    assert answer("use make", event="UserPromptSubmit").context == "use make"
    assert answer("use make", event="PreToolUse").context == ""
    updated = answer('{"hookSpecificOutput": {"updatedInput": {"command": "ls"}}}')
    assert updated.updated_input == {"command": "ls"}
    assert (
        answer('{"hookSpecificOutput": {"updatedInput": {}}}', event="Stop").updated_input is None
    )
    timed = read_answer("Stop", None, "", "", timed_out=True, timeout=2.5)
    assert timed.failure == "timed out after 2.5s and was stopped"


def test_matchers_are_the_policys_rules(tmp_path: Path) -> None:
    assert matcher_rules("") == (None, [])
    assert matcher_rules("*") == (None, [])
    rules, unknown = matcher_rules("Bash(git push:*)|Edit|Task|mcp__srv__.*|run_shell(a | b)")
    assert [rule.text for rule in rules or ()] == [
        "run_shell(git push *)",
        "edit_file",
        "mcp__srv__*",
        "run_shell(a | b)",
    ]
    assert unknown == ["Task"]
    hook = Hook("PreToolUse", "x", "here", "run_shell(rm *)", matcher_rules("run_shell(rm *)")[0])
    cases = [
        ("rm -rf x", True),
        ("sudo rm x", True),
        ("ls; rm x", True),
        ("ls", False),
        ("bash -c 'rm x'", True),
        ("find . -exec rm {} +", True),
    ]
    for line, seen in cases:
        parsed = parse_command(line)
        subjects = Subjects(
            "command",
            commands=tuple(parsed.commands),
            complete=parsed.plain,
            hidden=command_line_hidden(parsed),
        )
        assert hook.applies("run_shell", subjects, tmp_path) is seen, line


def test_a_long_command_is_shown_by_its_programs_name() -> None:
    from agentcli.agent.hook_runner import shown_command

    folder = "/very/long/" + "nested/" * 12 + "hooks"
    assert shown_command(f"{folder}/guard.sh --strict") == "…/hooks/guard.sh --strict"
    assert shown_command("a  b\n c") == "a b c"
    assert len(shown_command("x" * 200)) == 80


def test_claude_codes_switch_turns_a_files_hooks_off(tmp_path: Path, monkeypatch) -> None:
    import json

    from agentcli.config.resolve import load_config
    from agentcli.habits.hooks import find_hooks

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("AGENTCLI_HOME", str(tmp_path / "agentcli"))
    group = {"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [group]}}))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    found = find_hooks(load_config(workspace), workspace, trusted=False)
    assert [(h.event, h.command, h.origin) for h in found.found] == [
        ("PreToolUse", "guard.sh", "~/.claude/settings.json")
    ]
    settings.write_text(json.dumps({"disableAllHooks": True, "hooks": {"PreToolUse": [group]}}))
    found = find_hooks(load_config(workspace), workspace, trusted=False)
    assert found.found == []
    assert found.skipped == [
        "~/.claude/settings.json: disableAllHooks is set; its hooks are not run"
    ]
