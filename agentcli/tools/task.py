"""task: the model hands a self-contained sub-task to a subagent — a fresh agent with a
context of its own and the tools its definition names (agentcli.habits.subagents) — and
gets its final answer as the result. What runs the subagent is the composition root's
(`ToolContext.subagents`); this tool only names the choices and passes the task on.

The call itself runs nothing: each of the subagent's own calls is decided by the same
policy, in the same boundary and sandbox, as the session's."""

from __future__ import annotations

from typing import Any

from agentcli.risk import Assessment, Risk
from agentcli.tools.base import Tool, ToolContext, ToolFailure, ToolOutput

NAME = "task"
TOO_DEEP = (
    "a subagent cannot start another subagent here (agents.max_depth is {depth}); do the "
    "task yourself with the tools you have"
)


class Task(Tool):
    name = NAME
    risk_summary = "low (each of the subagent's calls is decided as the session's are)"

    def __init__(self, definitions: Any, default: str, max_depth: int) -> None:
        """`definitions`: the subagents found (agentcli.habits.subagents.Subagents), whose
        names and descriptions the model is offered."""
        self.definitions = definitions
        self.max_depth = max_depth
        self.default = default
        agents = [(d.name, d.description) for d in definitions.found.values()]
        listed = "\n".join(f"- {name}: {description}" for name, description in agents)
        self.description = (
            "Hand a self-contained task to a subagent: a fresh agent with its own context "
            "and its own tools, which sees only `prompt` (not this conversation) and whose "
            "final answer is this call's result. Use it for searches and work that would "
            "fill this conversation; say in `prompt` everything it needs and what to answer "
            f"with. Subagents:\n{listed}"
        )
        self.parameters = {
            "type": "object",
            "properties": {
                "description": {
                    "type": "string",
                    "description": "the task in a few words, for the person watching",
                },
                "prompt": {"type": "string", "description": "the whole task for the subagent"},
                "subagent_type": {
                    "type": "string",
                    "enum": [name for name, _ in agents],
                    "description": f"which subagent does it (default {default})",
                },
            },
            "required": ["prompt"],
            "additionalProperties": False,
        }

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        return Assessment(Risk.LOW, "hands a task to a subagent, whose calls are each decided")

    def describe(self, args: dict[str, Any]) -> list[str] | None:
        said = args.get("description") or args.get("prompt", "")
        return [f"{args.get('subagent_type') or self.default}: {said}"]

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        if ctx.subagents is None:
            raise ToolFailure(TOO_DEEP.format(depth=self.max_depth))
        name = args.get("subagent_type") or self.default
        return await ctx.subagents.run(name, args["prompt"], ctx.call_id)
