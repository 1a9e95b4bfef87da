"""calculator: exact arithmetic for the model (agentcli.tools.arithmetic does the work)."""

from __future__ import annotations

from typing import Any

from agentcli.risk import Assessment, Risk
from agentcli.tools.base import Tool, ToolContext, ToolOutput


class Calculator(Tool):
    name = "calculator"
    read_only = True
    description = (
        "Evaluate an arithmetic expression exactly: integers of any size, fractions and "
        "decimals, + - * / // % ** (or ^), parentheses, and sqrt, abs, round, floor, ceil, "
        "exp, log, ln, log10, log2, sin, cos, tan, asin, acos, atan, degrees, radians, "
        "factorial, gcd, lcm, min, max; constants pi, e, tau."
    )
    parameters = {  # noqa: RUF012
        "type": "object",
        "properties": {"expression": {"type": "string"}},
        "required": ["expression"],
        "additionalProperties": False,
    }
    risk_summary = "low"

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        return Assessment(Risk.LOW, "arithmetic")

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        from agentcli.tools.arithmetic import calculate, describe

        shown = describe(calculate(args["expression"]))
        return ToolOutput(
            content=f"{args['expression']} = {shown}", summary=shown.splitlines()[0][:60]
        )
