"""Dynamic tools: tools whose schema is known only at run time. Every such tool — command
tools from the configuration, MCP servers' tools and plug-ins' tools — is checked by
`check_spec` (its name and its JSON Schema), takes its risk
(unknown means high) and records where it came from for `agentcli tools list`."""

from __future__ import annotations

import re
import shlex
from collections.abc import Awaitable, Callable
from typing import Any

from agentcli.records import dataclass
from agentcli.risk import Assessment, Risk, Subjects
from agentcli.tools.base import Tool, ToolContext, ToolFailure, ToolOutput

NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
RISKS = {"low": Risk.LOW, "medium": Risk.MEDIUM, "high": Risk.HIGH}
Runner = Callable[[dict[str, Any], ToolContext], Awaitable[ToolOutput]]


class DynamicToolError(ValueError):
    """A dynamic tool's definition is unusable; the message says what to fix."""


@dataclass(frozen=True, slots=True)
class DynamicSpec:
    name: str
    description: str
    parameters: dict[str, Any]
    risk: str | None  # low | medium | high; anything else (or nothing) is high
    source: str  # e.g. "config", "mcp:github"
    run: Runner
    runs_commands: bool = False  # True: it starts processes, which run in the sandbox
    sandbox: str | None = None  # a profile beyond what the risk earns (the user's config)
    # (request, arguments) pairs: how a small local model routes to the tool (Tool.examples)
    examples: tuple[tuple[str, dict[str, Any]], ...] = ()


class DynamicTool(Tool):
    def __init__(self, spec: DynamicSpec) -> None:
        self.name = spec.name
        self.description = spec.description
        self.parameters = spec.parameters
        self.source = spec.source
        rated = str(spec.risk).strip().lower() in RISKS
        self._risk = RISKS[str(spec.risk).strip().lower()] if rated else Risk.HIGH
        self.risk_summary = self._risk.label + ("" if rated else " (unrated)")
        self._run = spec.run
        self.runs_commands = spec.runs_commands
        self._sandbox = spec.sandbox
        self.examples = list(spec.examples)

    def requested_sandbox(self, args: dict[str, Any]) -> str | None:
        return self._sandbox

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        rated = "rated" if self.risk_summary == self._risk.label else "not rated, so treated as"
        return Assessment(
            self._risk, f"{self.name} from {self.source} is {rated} {self._risk.label}"
        )

    def rule_subjects(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        return text_subjects(args)

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        return await self._run(args, ctx)


def text_subjects(args: dict[str, Any]) -> Any:
    """What `TOOL(PATTERN)` rules match for a tool without paths or commands: its values."""
    texts = tuple(str(v) for v in args.values() if isinstance(v, str | int | float))
    return Subjects("text", values=texts)


def check_spec(spec: DynamicSpec) -> None:
    """Raises DynamicToolError when the name or the JSON Schema cannot be used."""
    if not NAME.match(spec.name):
        raise DynamicToolError(
            f"tool name {spec.name!r} ({spec.source}) must be 1-64 letters, digits, _ or -"
        )
    schema = spec.parameters
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise DynamicToolError(f"{spec.name}: parameters must be a JSON Schema of type object")
    check_self_contained(spec.name, schema, "parameters")
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise DynamicToolError(f"{spec.name}: invalid parameters schema: {exc.message}") from None


_REFERENCES = ("$ref", "$dynamicRef", "$recursiveRef")


def check_self_contained(name: str, schema: Any, what: str) -> None:
    """Raises DynamicToolError for a schema (from a peer: an MCP server's) that refers to
    anything outside itself or nests past MAX_DEPTH. A `$ref` to a URL or a file would
    have jsonschema fetch or read it with agentcli's own reach, not the server's sandbox,
    and show what it found to the model; agentcli resolves only `#...` within the schema."""
    from agentcli.json_depth import MAX_DEPTH, too_deep

    if too_deep(schema):
        raise DynamicToolError(f"{name}: its {what} schema nests deeper than {MAX_DEPTH} levels")
    stack = [schema]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key in _REFERENCES:
                ref = item.get(key)
                if key in item and not (isinstance(ref, str) and ref.startswith("#")):
                    shown = ref[:80] if isinstance(ref, str) else ref
                    raise DynamicToolError(
                        f"{name}: its {what} schema refers outside itself ({key} {shown!r}); "
                        "agentcli fetches nothing a schema names, only #... within it"
                    )
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


# --- command tools from the configuration: [tools.NAME] command = "make deploy ENV={env}"

PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def command_argv(template: str, args: dict[str, Any]) -> list[str]:
    """Each word of the template becomes one argument; placeholders are replaced inside
    words, so a value never becomes several arguments or shell syntax (no shell runs)."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in args:
            raise ToolFailure(f"the command needs {name!r}, which was not given")
        return str(args[name])

    return [PLACEHOLDER.sub(value, word) for word in shlex.split(template)]


def command_runner(template: str, timeout: float) -> Runner:
    async def run(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        from agentcli.process.capture import OutputCapture
        from agentcli.process.run import run_command
        from agentcli.tools.shell import confine, format_result

        argv = command_argv(template, args)
        capture = OutputCapture(ctx.output_limit)
        cwd = str(ctx.workspace.root)
        try:
            result = await run_command(
                argv,
                cwd=cwd,
                env=ctx.child_env,
                timeout=timeout,
                capture=capture,
                confined=confine(ctx, argv, cwd),
                live=ctx.processes,
            )
        except FileNotFoundError:
            raise ToolFailure(f"program not found: {argv[0]}") from None
        return format_result("$ " + shlex.join(argv), result, timeout)

    return run


def _timeout(name: str, value: Any) -> float:
    """A command tool's `timeout`: seconds, finite, within a day."""
    from agentcli.config.schema import range_problem

    if isinstance(value, bool) or not isinstance(value, int | float):
        raise DynamicToolError(f"tools.{name}.timeout must be a number of seconds, not {value!r}")
    problem = range_problem(f"tools.{name}.timeout", value, 0.001, 86_400)
    if problem:
        raise DynamicToolError(problem)
    return float(value)


def command_tool_specs(table: dict[str, Any], source: str) -> list[DynamicSpec]:
    """`[tools.NAME]` tables (other than settings) as dynamic tool specs."""
    specs = []
    for name, definition in table.items():
        if not isinstance(definition, dict):
            continue  # a plain setting such as tools.concurrency
        command = definition.get("command")
        if not isinstance(command, str) or not command.strip():
            raise DynamicToolError(f'tools.{name}: give the command to run: command = "..."')
        names = list(dict.fromkeys(PLACEHOLDER.findall(command)))  # each once, in order
        sandbox = definition.get("sandbox")
        if sandbox is not None and sandbox not in (
            "read-only",
            "workspace-write",
            "network",
            "none",
        ):
            raise DynamicToolError(
                f"tools.{name}.sandbox must be read-only, workspace-write, network or none"
            )
        parameters = definition.get("parameters") or {
            "type": "object",
            "properties": {p: {"type": "string"} for p in names},
            "required": names,
        }
        specs.append(
            DynamicSpec(
                name=name,
                description=definition.get("description") or f"Runs: {command}",
                parameters=parameters,
                risk=definition.get("risk"),
                source=source,
                run=command_runner(command, _timeout(name, definition.get("timeout", 120))),
                runs_commands=True,
                sandbox=sandbox,
                examples=config_examples(name, definition.get("examples")),
            )
        )
    return specs


def config_examples(name: str, value: Any) -> tuple[tuple[str, dict[str, Any]], ...]:
    """`examples = [{ request = "deploy to staging", arguments = { env = "staging" } }]`."""
    if value is None:
        return ()
    shape = f'tools.{name}.examples: give a list of {{ request = "...", arguments = {{ ... }} }}'
    if not isinstance(value, list):
        raise DynamicToolError(shape)
    examples = []
    for item in value:
        request = item.get("request") if isinstance(item, dict) else None
        arguments = item.get("arguments", {}) if isinstance(item, dict) else None
        if not isinstance(request, str) or not request.strip() or not isinstance(arguments, dict):
            raise DynamicToolError(shape)
        examples.append((request, arguments))
    return tuple(examples)
