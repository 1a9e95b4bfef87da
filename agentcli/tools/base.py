"""The tool interface: name, description, JSON Schema, a risk function of the arguments,
an async execute, an optional preview and description for the approval prompt, and
optional examples (request → arguments) for the local model's router."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from agentcli.conversation.images import DEFAULT_MAX_BYTES
from agentcli.records import dataclass, field
from agentcli.risk import Assessment, Risk, Subjects
from agentcli.tools.content import Part, render_text
from agentcli.workspace.root import Workspace


@dataclass(slots=True)
class ToolOutput:
    """What a tool returns. `error` marks a failed call; the model sees `content` either way.
    `parts` keeps content that is more than text (images, structured JSON, resource links);
    `content` is then their text rendering, for the providers and outputs that need text."""

    content: str
    error: bool = False
    summary: str | None = None  # one line for the terminal, e.g. "42 lines"
    error_kind: str | None = (
        None  # agentcli.conversation.error_kinds.ERROR_KINDS; "failed" when unset
    )
    parts: list[Part] = field(default_factory=list)
    # What the result says as data, for clients that take it (`mcp serve`'s
    # structuredContent): a command's exit code and output, say. The model gets `content`.
    structured: dict[str, Any] | None = None

    @classmethod
    def failure(cls, message: str, kind: str = "failed") -> ToolOutput:
        return cls(content=message, error=True, summary=message, error_kind=kind)

    @classmethod
    def of_parts(cls, parts: list[Part], *, error: bool = False) -> ToolOutput:
        text = render_text(parts)
        summary = (text.splitlines() or [""])[0] if error else None
        return cls(content=text, error=error, summary=summary, parts=list(parts))


class ToolFailure(Exception):
    """Raised inside a tool for an expected failure; becomes an error result, not a crash.
    `kind` is the result's error kind ("failed", or "timeout" for a time limit)."""

    def __init__(self, message: str, kind: str = "failed") -> None:
        super().__init__(message)
        self.kind = kind


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
    processes: Any = None  # the run's LiveTrees (agentcli.process.run): its end stops them
    output_limit: int = 30_000  # characters of command output the model gets
    image_limit: int = DEFAULT_MAX_BYTES  # bytes of one image a model may get (images.max_bytes)
    python: str | None = None  # interpreter for run_python; None: the one on PATH
    ask: Callable[[str, list[str] | None], Awaitable[str]] | None = None  # a person, if any
    # What any tool may reach (agentcli.sandbox.boundary.Boundary); None: the workspace.
    boundary: Any = None
    # The one path beyond the boundary a person approved for this call (set per call).
    grant: Path | None = None
    # Approved as an ordinary call (inside the workspace, nothing sensitive): file tools
    # then open nothing else, whatever the file system looks like by the time they run.
    confine: bool = True
    sandbox: Any = None  # the session's agentcli.sandbox.Sandbox; None: commands run as they are
    profile: str = "none"  # the sandbox profile this call runs in (set per call)
    changes: Any = None  # the session's agentcli.workspace.changes.WorkspaceChanges, for /diff
    # The session (agentcli.sessions.session.Session): whether command outputs are still
    # saved in output_dir (saving.saves_outputs), and where a failure to is said once
    # (saving.output_failed). None: outputs are saved when output_dir is set.
    saving: Any = None
    # What the `task` tool hands a sub-task to (agentcli.assembly.subagents.Subagents,
    # made by the composition root for this agent); None: this agent may start none.
    subagents: Any = None

    def before_write(self, path: Path) -> None:
        """A file tool is about to write `path`: its content before is kept for /diff."""
        if self.changes is not None:
            self.changes.before_write(path)

    def after_write(self, path: Path) -> None:
        """A file tool wrote `path`: where it is a protected path (a person approved that
        one call), the sandbox's guard keeps the new state instead of undoing it."""
        if self.grant is not None and self.sandbox is not None:
            self.sandbox.accept_write(path)

    @property
    def reach(self) -> Any:
        """The boundary in force: the session's, or the workspace alone."""
        if self.boundary is None:
            from agentcli.sandbox.boundary import Boundary

            return Boundary(self.workspace.root)
        return self.boundary

    @property
    def sandboxed(self) -> bool:
        """Whether commands run confined by the OS (the classifier may then be less strict)."""
        return self.sandbox is not None and self.sandbox.active


class Tool:
    """Base class. Subclasses set `name`, `description`, `parameters` and implement
    `assess` and `execute`."""

    name: str = ""
    description: str = ""
    parameters: dict[str, Any] = {"type": "object", "properties": {}}  # noqa: RUF012
    source: str = "builtin"
    risk_summary: str = "high"  # for `agentcli tools list`: how risk depends on arguments
    runs_commands: bool = False  # True: it starts processes, which run in the sandbox
    network: bool = False  # True: it reaches the network itself (--yes alone never grants it)
    read_only: bool = False  # True: it changes nothing, whatever its arguments (MCP's readOnlyHint)
    writes_files: bool = False  # True: it may write the paths its rule subjects name
    # Arguments that name a file or directory: one holding a NUL byte, which no file name
    # can, is refused before anything resolves it (the executor checks).
    path_arguments: tuple[str, ...] = ()
    # Requests this tool serves, each with the arguments that serve it: how a small local
    # model routes to the tool (agentcli.providers.local.router). Optional; the built-in
    # tools' are in agentcli.tools.examples.
    examples: list[tuple[str, dict[str, Any]]] = []  # noqa: RUF012

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        return Assessment(Risk.HIGH, f"{self.name} has no risk rating")

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        raise NotImplementedError

    def requested_sandbox(self, args: dict[str, Any]) -> str | None:
        """A larger sandbox profile the call asks for (run_shell's `sandbox` argument)."""
        return args.get("sandbox") if self.runs_commands else None

    def policy_tool(self, args: dict[str, Any]) -> str:
        """The name rules and remembered choices use for this call (an adapter of a
        provider-defined tool answers with the agentcli tool it runs as)."""
        return self.name

    def rule_subjects(self, args: dict[str, Any], ctx: ToolContext) -> Subjects:
        """What `TOOL(PATTERN)` rules match for this call; by default only the tool's name."""
        return Subjects()

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        """What the approval prompt shows besides the arguments (a diff, say)."""
        return None

    def describe(self, args: dict[str, Any]) -> list[str] | None:
        """The lines the approval prompt shows for this call; None: the arguments as the
        prompt shows any call's (a command as a command, others as JSON)."""
        return None

    def spec(self) -> dict[str, Any]:
        spec = {"name": self.name, "description": self.description, "parameters": self.parameters}
        if self.examples:  # only the local provider reads them; the others send the three above
            spec["examples"] = [[request, dict(arguments)] for request, arguments in self.examples]
        return spec
