"""In process: the parts behind tests/test_e2e_local_edges.py that a run does not show on
its own — the front matter loader refusing YAML aliases (what bounds a "billion laughs"),
every habit file's `model` checked as `--model` is, a folder linked back into itself read
once, a Claude Code hook's infinite timeout, and a context window for a model whose name
holds a dot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.config.resolve import Config, Layer
from agentcli.habits.commands import find_commands
from agentcli.habits.front_matter import FrontMatterError, split_front_matter
from agentcli.habits.hooks import find_hooks
from agentcli.habits.skills import find_skills
from agentcli.habits.subagents import find_subagents
from agentcli.settings import context_window
from tests.test_e2e_local_edges import bomb, write
from tests.test_skills import home  # noqa: F401 - the fixture


def test_the_front_matter_loader_refuses_an_alias_and_builds_nothing() -> None:
    # 9**12 items for whatever walks it (str() does): refused before anything is built.
    with pytest.raises(FrontMatterError, match=r"YAML alias \(\*a, line 4\)"):
        split_front_matter(f"---\n{bomb(12)}\n---\n", required=True)
    fields, _ = split_front_matter("---\nname: &n x\n---\n", required=True)
    assert fields == {"name": "x"}  # an anchor alone builds nothing more


def test_every_habit_file_with_an_alias_is_skipped_with_one_line(home: Path) -> None:  # noqa: F811
    front = f"---\nname: bomb\ndescription: d\n{bomb(5)}\n---\nbody\n"
    write(home / ".claude" / "skills" / "bomb" / "SKILL.md", front)
    write(home / ".claude" / "commands" / "bomb.md", front)
    write(home / ".claude" / "agents" / "bomb.md", front)
    workspace = home / "ws"
    workspace.mkdir()
    skipped = [
        *find_skills(workspace, False).skipped,
        *find_commands(workspace, False, frozenset()).skipped,
        *find_subagents(workspace, False).skipped,
    ]
    assert [s.path for s in skipped] == [
        "~/.claude/skills/bomb/SKILL.md",
        "~/.claude/commands/bomb.md",
        "~/.claude/agents/bomb.md",
    ]
    assert all("YAML alias" in s.why and "\n" not in s.why for s in skipped)


def test_a_model_with_a_control_character_skips_its_command_and_its_subagent(home: Path) -> None:  # noqa: F811
    model = 'model: "openai:x\\e[31m"'
    write(home / ".claude" / "commands" / "c.md", f"---\n{model}\n---\nhi\n")
    write(home / ".claude" / "agents" / "a.md", f"---\nname: a\ndescription: d\n{model}\n---\nb\n")
    workspace = home / "ws"
    workspace.mkdir()
    commands = find_commands(workspace, False, frozenset())
    agents = find_subagents(workspace, False)
    assert "c" not in commands.found and "a" not in agents.found
    for skipped in (*commands.skipped, *agents.skipped):
        assert "control character" in skipped.why and "\x1b" not in skipped.why


def test_a_folder_linked_back_into_itself_is_read_once(home: Path) -> None:  # noqa: F811
    agents, commands = home / ".claude" / "agents", home / ".claude" / "commands"
    write(agents / "one.md", "---\nname: one\ndescription: d\n---\nbody\n")
    write(agents / "sub" / "two.md", "---\nname: two\ndescription: d\n---\nbody\n")
    write(commands / "c.md", "hi\n")
    (agents / "loopdir").symlink_to(".")
    (agents / "sub" / "up").symlink_to("..")
    (commands / "loop").symlink_to(".")
    workspace = home / "ws"
    workspace.mkdir()
    found = find_subagents(workspace, False)
    assert sorted(found.found) == ["general-purpose", "one", "two"]
    assert [s.path for s in found.skipped] == [
        "~/.claude/agents/loopdir",
        "~/.claude/agents/sub/up",
    ]
    listed = find_commands(workspace, False, frozenset())
    assert sorted(listed.found) == ["c"]
    assert [s.path for s in listed.skipped] == ["~/.claude/commands/loop"]
    assert all("link back" in s.why for s in (*found.skipped, *listed.skipped))


def test_a_claude_code_hook_with_an_infinite_timeout_is_refused(home: Path) -> None:  # noqa: F811
    hook = '{"type": "command", "command": "x", "timeout": 1e999}'  # JSON reads it as inf
    text = f'{{"hooks": {{"PreToolUse": [{{"matcher": "*", "hooks": [{hook}]}}]}}}}'
    assert json.loads(text)  # valid JSON
    write(home / ".claude" / "settings.json", text)
    config = Config([Layer("default", {})], home, False)
    hooks = find_hooks(config, home, False)
    [line] = hooks.skipped
    assert "PreToolUse #1 skipped: timeout must be a finite number" in line
    # The guard did not load: it stands as one that refuses every call it would check.
    [guard] = hooks.found
    assert guard.event == "PreToolUse" and guard.rules is None
    assert guard.unloaded is not None and "timeout must be a finite number" in guard.unloaded


def test_a_context_window_for_a_model_whose_name_holds_a_dot(tmp_path: Path) -> None:
    values = {"context.windows.openai:gpt-4.1": 5000}
    config = Config([Layer("default", {}), Layer("user", values, path=tmp_path)], tmp_path, True)
    assert context_window(config, "openai:gpt-4.1") == 5000
    assert context_window(config, "openai:gpt-4") == 128_000
