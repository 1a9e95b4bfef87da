"""The user's habits as parts of a session: the skills found (agentcli.habits.skills) and
their folders as read-only places of the sandbox, so that tools and commands read them and
no tool writes them; the hooks found (agentcli.habits.hooks) as steps around each tool call
and the part that runs the session's own events' hooks. (Subagents:
agentcli.assembly.subagents.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from agentcli.agent.call_steps import CallStep
    from agentcli.agent.session_hooks import SessionHooks
    from agentcli.conversation.events import Event
    from agentcli.habits.hooks import Hooks
    from agentcli.habits.skills import Skills
    from agentcli.sandbox.boundary import Place
    from agentcli.sessions.session import Session
    from agentcli.settings import RunSettings

    Emit = Callable[[Event], None]

SKILL_PLACE = "a skill's folder"


def session_skills(settings: RunSettings) -> Skills:
    """The project's skills (when the workspace is trusted) and the user's."""
    from agentcli.habits.skills import find_skills

    return find_skills(settings.workspace, settings.config.trusted)


def skill_places(skills: Skills) -> list[Place]:
    from agentcli.sandbox.boundary import Place

    return [Place(str(skill.folder), False, kept=SKILL_PLACE) for skill in skills.found]


def session_hooks(settings: RunSettings) -> Hooks:
    """agentcli's hooks (the project's when the workspace is trusted) and Claude Code's."""
    from agentcli.habits.hooks import find_hooks

    return find_hooks(settings.config, settings.workspace, settings.config.trusted)


def hook_parts(
    hooks: Hooks, root: Path, env: dict[str, str], session: Session, emit: Emit
) -> tuple[list[CallStep], SessionHooks | None]:
    """The steps around each tool call (PreToolUse, PostToolUse) and the part that runs the
    session's own events' hooks; none when there are no hooks."""
    if not hooks.found:
        return [], None
    from agentcli.agent.hook_runner import HookRunner
    from agentcli.agent.hook_steps import PostToolUseHooks, PreToolUseHooks
    from agentcli.agent.session_hooks import SessionHooks

    runner = HookRunner(
        hooks.found,
        cwd=root,
        env=env,
        session_id=lambda: session.id,
        transcript=lambda: None if session.unsaved else str(session.path),
        emit=emit,
    )
    steps: list[CallStep] = []
    if runner.of("PreToolUse"):
        steps.append(PreToolUseHooks(runner))
    if runner.of("PostToolUse"):
        steps.append(PostToolUseHooks(runner))
    return steps, SessionHooks(runner)
