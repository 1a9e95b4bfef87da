"""ask_user: the model asks the person a question (AG-UI's human-in-the-loop). Shown inline
like an approval; with nobody at a terminal it is an error result saying so, so the model
decides without it — it never waits and never gets an invented answer."""

from __future__ import annotations

from typing import Any

from agentcli.risk import Assessment, Risk
from agentcli.tools.base import Tool, ToolContext, ToolFailure, ToolOutput

NOBODY = (
    "nobody can answer: agentcli is running without a terminal (a script or CI). Decide "
    "without asking, and say what you assumed."
)


class AskUser(Tool):
    name = "ask_user"
    description = (
        "Ask the user a question and wait for the answer: free text, or one of `choices`. "
        "Use it when a decision is really the user's; it fails when nobody is at a terminal."
    )
    parameters = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "question": {"type": "string"},
            "choices": {"type": "array", "items": {"type": "string"}, "minItems": 2},
        },
        "required": ["question"],
        "additionalProperties": False,
    }
    risk_summary = "low"

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        return Assessment(Risk.LOW, "asks the user a question")

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        if ctx.ask is None:
            raise ToolFailure(NOBODY)
        answer = await ctx.ask(args["question"], args.get("choices"))
        return ToolOutput(content=f"The user answered: {answer}", summary=answer[:60])
