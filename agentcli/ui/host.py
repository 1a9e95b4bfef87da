"""What slash commands and the views they open may use of the REPL: a narrow host, so that
none of them reaches into the REPL's privates (and none imports it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, TextIO

if TYPE_CHECKING:
    from agentcli.agent.narrowed_tools import NarrowedTools
    from agentcli.agent.session import Agent
    from agentcli.habits.commands import Commands
    from agentcli.habits.hooks import Hooks
    from agentcli.habits.skills import Skills
    from agentcli.sessions.session import Session
    from agentcli.settings import RunSettings


class ReplHost(Protocol):
    agent: Agent  # the session's agent now (another after /clear or /resume)
    settings: RunSettings
    done: bool  # set: the REPL ends after this command
    out: TextIO
    renderer: Any  # agentcli.ui.render.ReplRenderer: for views that draw above the prompt
    skills: Skills | None  # found when the REPL started
    hooks: Hooks | None  # found when the REPL started
    commands: Commands  # the custom commands (found again when a name is not among them)
    commands_reserved: frozenset[str]  # the built-in commands' names
    narrowing: NarrowedTools  # a custom command's allowed-tools, for its turn

    def say(self, text: str) -> None:
        """A line for the person, above the prompt."""

    async def turn(self, text: str) -> None:
        """`text` sent as the person's next message."""

    async def switch_session(self, session: Session) -> None:
        """Another session's agent takes over (the old one is closed)."""

    def turns(self) -> int:
        """How many turns the conversation holds."""

    def expand(self, argument: str) -> None:
        """A folded item of the transcript shown in full (`/expand N`; the last if empty)."""

    def show_conversation(self) -> None:
        """The conversation so far, compactly (after /resume)."""
