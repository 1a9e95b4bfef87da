"""The tool interface: name, description, JSON Schema, a risk function of the arguments,
an async execute, and an optional preview for the approval prompt."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path
from typing import Any

from agentcli.workspace import Workspace


class Risk(IntEnum):
    LOW = 1  # runs without asking
    MEDIUM = 2  # asks once per session
    HIGH = 3  # asks every time

    @property
    def label(self) -> str:
        return self.name.lower()


@dataclass(frozen=True, slots=True)
class Assessment:
    """A tool's risk for one set of arguments, with a short human reason."""

    risk: Risk
    reason: str
    # Outside the workspace or a sensitive target: only a rule that names the place
    # specifically may allow it (never a bare tool rule or a broad glob).
    protected: bool = False


@dataclass(slots=True)
class ToolOutput:
    """What a tool returns. `error` marks a failed call; the model sees `content` either way."""

    content: str
    error: bool = False
    summary: str | None = None  # one line for the terminal, e.g. "42 lines"

    @classmethod
    def failure(cls, message: str) -> ToolOutput:
        return cls(content=message, error=True, summary=message)


class ToolFailure(Exception):
    """Raised inside a tool for an expected failure; becomes an error result, not a crash."""


def _ignore_progress(value: dict[str, Any]) -> None:
    pass


@dataclass(slots=True)
class ToolContext:
    """What a running tool may use. The executor gives each call its own copy with
    `call_id` and `progress` bound to that call."""

    workspace: Workspace
    output_dir: Path | None = None  # where full command outputs are kept for the model
    progress: Callable[[dict[str, Any]], None] = _ignore_progress
    call_id: str = ""
    child_env: dict[str, str] = field(default_factory=dict)  # for processes tools start
    jobs: Any = None  # the run's JobManager (agentcli.process.jobs)
    output_limit: int = 30_000  # characters of command output the model gets
    python: str | None = None  # interpreter for run_python; None: the one on PATH
    ask: Callable[[str, list[str] | None], Awaitable[str]] | None = None  # a person, if any
    # File tools may open only inside the workspace (and agentcli's output directory)
    # unless this call was approved as one that reaches outside it or a sensitive file.
    confine: bool = True


class Tool:
    """Base class. Subclasses set `name`, `description`, `parameters` and implement
    `assess` and `execute`."""

    name: str = ""
    description: str = ""
    parameters: dict[str, Any] = {"type": "object", "properties": {}}  # noqa: RUF012
    source: str = "builtin"
    risk_summary: str = "high"  # for `agentcli tools list`: how risk depends on arguments

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        return Assessment(Risk.HIGH, f"{self.name} has no risk rating")

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        raise NotImplementedError

    def policy_tool(self, args: dict[str, Any]) -> str:
        """The name rules and remembered choices use for this call (an adapter of a
        provider-defined tool answers with the agentcli tool it runs as)."""
        return self.name

    def rule_subjects(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        """What `TOOL(PATTERN)` rules match for this call (agentcli.policy.rules.Subjects);
        by default only the tool's name."""
        from agentcli.policy.rules import Subjects

        return Subjects()

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        """What the approval prompt shows besides the arguments (a diff, say)."""
        return None

    def spec(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": self.parameters}
