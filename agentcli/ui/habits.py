"""The REPL's side of the user's habits: `/skills` (each skill, where it came from, and why
one was skipped), `$name` to mention a skill (completed with Tab), and custom commands —
`/name ARGS` sends the command's prompt, with its own model and narrowed tools for that
turn — listed in /help and completed with Tab."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentcli.output.visible import one_line as visible

if TYPE_CHECKING:
    from agentcli.habits.commands import Commands
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
    lines = []
    names = max((len(s.name) for s in skills.found), default=0)
    origins = max((len(visible(s.origin)) for s in skills.found), default=0)
    for skill in skills.found:
        head = f"  {skill.name:<{names}}  {visible(skill.origin):<{origins}}  "
        said = " ".join(visible(skill.description).split())
        room = max(width - len(head), 10)
        lines.append(head + (said if len(said) <= room else said[: room - 1] + "…"))
    if not skills.found:
        lines.append(
            "  no skills: put one in .agents/skills/NAME/SKILL.md (the project's) or in "
            "the skills folder beside your config.toml"
        )
    lines += [f"  skipped {visible(s.path)}: {visible(s.why)}" for s in skills.skipped]
    lines += [
        f"  not read: {name} (this workspace is not trusted; `agentcli trust` trusts it)"
        for name in skills.untrusted
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
