"""The user's habits as parts of a session: the skills found (agentcli.habits.skills) and
their folders as read-only places of the sandbox, so that tools and commands read them and
no tool writes them. (Subagents: agentcli.assembly.subagents.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentcli.habits.skills import Skills
    from agentcli.sandbox.boundary import Place
    from agentcli.settings import RunSettings

SKILL_PLACE = "a skill's folder"


def session_skills(settings: RunSettings) -> Skills:
    """The project's skills (when the workspace is trusted) and the user's."""
    from agentcli.habits.skills import find_skills

    return find_skills(settings.workspace, settings.config.trusted)


def skill_places(skills: Skills) -> list[Place]:
    from agentcli.sandbox.boundary import Place

    return [Place(str(skill.folder), False, kept=SKILL_PLACE) for skill in skills.found]
