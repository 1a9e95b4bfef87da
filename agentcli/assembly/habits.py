"""The user's habits as parts of a session: the skills found (agentcli.habits.skills) and
their folders as read-only places of the sandbox, so that tools and commands read them and
no tool writes them; the subagents the `task` tool offers, and what starts them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentcli.assembly.subagents import Lineage, Subagents
    from agentcli.habits.skills import Skills
    from agentcli.policy.engine import Approver
    from agentcli.sandbox.boundary import Place
    from agentcli.settings import RunSettings
    from agentcli.tools.base import Tool

SKILL_PLACE = "a skill's folder"


def session_skills(settings: RunSettings) -> Skills:
    """The project's skills (when the workspace is trusted) and the user's."""
    from agentcli.habits.skills import find_skills

    return find_skills(settings.workspace, settings.config.trusted)


def skill_places(skills: Skills) -> list[Place]:
    from agentcli.sandbox.boundary import Place

    return [Place(str(skill.folder), False, kept=SKILL_PLACE) for skill in skills.found]


def task_tool(config: Any, workspace: Path) -> Tool | None:
    """The `task` tool, naming the subagents found (None when agents.max_depth is 0)."""
    from agentcli.habits.subagents import GENERAL, find_subagents
    from agentcli.tools.task import Task

    max_depth = config.get("agents.max_depth")
    if max_depth < 1:
        return None
    return Task(find_subagents(workspace, config.trusted), GENERAL, max_depth)


def subagents_for(
    registry: Any, approver: Approver | None, skills: Skills, lineage: Lineage | None
) -> Subagents | None:
    """What the agent being made hands sub-tasks to; None when it may start none (no
    `task` tool, or agents.max_depth reached)."""
    from agentcli.assembly.subagents import Subagents
    from agentcli.tools.task import NAME, Task

    task = registry.get(NAME)
    depth = lineage.depth if lineage is not None else 0
    if not isinstance(task, Task) or depth >= task.max_depth:
        return None
    return Subagents(
        task.definitions, depth=depth, max_depth=task.max_depth, approver=approver, skills=skills
    )
