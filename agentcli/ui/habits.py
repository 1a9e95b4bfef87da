"""The REPL's side of the user's habits: `/skills` (each skill, where it came from, and why
one was skipped), `/hooks` (each hook, its event, matcher and file), `$name` to mention a
skill (completed with Tab), and custom commands — `/name ARGS` sends the command's prompt,
with its own model and narrowed tools for that turn — listed in /help and completed with
Tab."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from agentcli.output.visible import one_line as visible

if TYPE_CHECKING:
    from agentcli.habits.commands import Commands
    from agentcli.habits.hooks import Hooks
    from agentcli.habits.skills import Skills
    from agentcli.settings import RunSettings
    from agentcli.ui.host import ReplHost


def load_commands(settings: RunSettings, reserved: frozenset[str]) -> Commands:
    from agentcli.habits.commands import find_commands

    return find_commands(settings.workspace, settings.config.trusted, reserved)


def skills_lines(skills: Skills | None, width: int) -> list[str]:
    """/skills: a skill a line (name, where from, the start of its description), then what
    was skipped and why, one line each, then the folders an untrusted workspace keeps."""
    if skills is None:
        return ["  no skills in this session"]
    empty = (
        "  no skills: put one in .agents/skills/NAME/SKILL.md (the project's) or in "
        "the skills folder beside your config.toml"
    )
    return _listing(skills.found, skills.skipped, skills.untrusted, empty, width)


def agents_lines(task: Any, width: int) -> list[str]:
    """/agents: the subagents the `task` tool offers, listed as /skills lists skills."""
    if task is None:
        return ["  no subagents in this session (agents.max_depth is 0)"]
    found = task.definitions
    return _listing(list(found.found.values()), found.skipped, found.untrusted, "", width)


def _listing(
    found: list[Any], skipped: list[Any], untrusted: list[str], empty: str, width: int
) -> list[str]:
    lines = []
    names = max((len(s.name) for s in found), default=0)
    origins = max((len(visible(s.origin)) for s in found), default=0)
    for item in found:
        head = f"  {item.name:<{names}}  {visible(item.origin):<{origins}}  "
        said = " ".join(visible(item.description).split())
        room = max(width - len(head), 10)
        lines.append(head + (said if len(said) <= room else said[: room - 1] + "…"))
    if not found:
        lines.append(empty)
    lines += [f"  skipped {visible(s.path)}: {visible(s.why)}" for s in skipped]
    lines += [
        f"  not read: {name} (this workspace is not trusted; `agentcli trust` trusts it)"
        for name in untrusted
    ]
    return lines


def hooks_lines(hooks: Hooks | None) -> list[str]:
    """/hooks: a hook a line (event, matcher, command, where from), then what was skipped
    and why, then the project's hooks an untrusted workspace did not read."""
    found = hooks.found if hooks is not None else []
    lines = []
    events = max((len(hook.event) for hook in found), default=0)
    for hook in found:
        matcher = visible(hook.matcher or "*")
        line = f"  {hook.event:<{events}}  {matcher}  {visible(hook.command)}"
        line += f"  ({visible(hook.origin)})"
        if hook.unknown:
            line += f"  [no such tool here: {visible(', '.join(hook.unknown))}]"
        if hook.unloaded is not None:
            line += "  [not loaded: the calls it matches are refused]"
        lines.append(line)
    if not found:
        lines.append(
            "  no hooks: add [[hooks.PreToolUse]] with matcher and command to your "
            "config.toml (docs/habits.md#hooks)"
        )
    if hooks is not None:
        lines += [f"  skipped {visible(line)}" for line in hooks.skipped]
        lines += [
            f"  not read: {visible(name)} (this workspace is not trusted; `agentcli trust` "
            "trusts it)"
            for name in hooks.untrusted
        ]
    return lines


def help_lines(commands: Commands) -> list[str]:
    """/help's part: each custom command, then the files skipped and why."""
    lines = [
        f"  /{name}  {visible(command.describe())}  ({visible(command.origin)})"
        for name, command in commands.found.items()
    ]
    lines += [f"  skipped {visible(s.path)}: {visible(s.why)}" for s in commands.skipped]
    lines += [
        f"  not read: {name} (this workspace is not trusted; `agentcli trust` trusts it)"
        for name in commands.untrusted
    ]
    return lines


def skill_completions(word: str, skills: Skills | None) -> Iterator[tuple[str, str]]:
    """(completion, what it is) for a word that starts with `$`."""
    for skill in skills.found if skills is not None else []:
        if skill.name.startswith(word[1:]):
            yield f"${skill.name}", visible(skill.description)[:60]


async def run_custom(repl: ReplHost, name: str, argument: str) -> bool:
    """`/name ARGS` as a custom command's turn; False when there is no such command."""
    from agentcli.habits.commands import command_turn, unknown_tools_note

    if name not in repl.commands.found:
        repl.commands = load_commands(repl.settings, repl.commands_reserved)  # a new file
    expansion = command_turn(repl.commands, name, argument)
    if expansion is None:
        return False
    note = unknown_tools_note(name, expansion)
    if note is not None:
        repl.say(f"  {note}")
    with repl.narrowing.narrowed(expansion.rules, f"/{name}"):
        if expansion.model is None or expansion.model == str(repl.agent.model):
            await repl.turn(expansion.text)
            return True
        from agentcli.assembly import with_model
        from agentcli.assembly.session import model_for_one_turn

        settings = with_model(repl.settings, expansion.model)
        repl.say(f"  /{name}: this turn goes to {visible(str(settings.model))}")
        async with model_for_one_turn(repl.agent, settings):
            await repl.turn(expansion.text)
    return True
