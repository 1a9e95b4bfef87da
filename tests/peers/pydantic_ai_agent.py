"""A pydantic-ai AG-UI app (a peer nobody here wrote) on 127.0.0.1:PORT, its model a
FunctionModel: it calls the tool named by the user's message (`call TOOL {json}`) when the
client offers it, then answers with what the tool returned.

    python pydantic_ai_agent.py PORT
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from typing import Any

import uvicorn
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.ui.ag_ui import AGUIAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """What the model answers, whole; `stream` sends it in pieces."""
    last = messages[-1]
    parts = last.parts if isinstance(last, ModelRequest) else []
    for part in parts:
        if isinstance(part, ToolReturnPart):
            return ModelResponse(parts=[TextPart(f"the tool said: {part.content}")])
        if isinstance(part, RetryPromptPart):
            return ModelResponse(parts=[TextPart(f"the tool failed: {part.content}")])
    prompt = next((p.content for p in parts if isinstance(p, UserPromptPart)), "")
    offered = sorted(t.name for t in info.function_tools)
    if isinstance(prompt, str) and prompt.startswith("call "):
        name, _, args = prompt[len("call ") :].partition(" ")
        if name in offered:
            return ModelResponse(parts=[ToolCallPart(name, json.loads(args or "{}"))])
    return ModelResponse(parts=[TextPart(f"tools offered: {', '.join(offered)}")])


async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    for part in model(messages, info).parts:
        if isinstance(part, TextPart):
            words = part.content.split(" ")
            for i, word in enumerate(words):
                yield word if i == len(words) - 1 else word + " "
        elif isinstance(part, ToolCallPart):
            args = part.args_as_json_str()
            yield {0: DeltaToolCall(name=part.tool_name, json_args=args[:5], tool_call_id="pai_1")}
            yield {0: DeltaToolCall(json_args=args[5:])}


agent = Agent(FunctionModel(model, stream_function=stream))


async def run(request: Request) -> Response:
    return await AGUIAdapter.dispatch_request(request, agent=agent)


app = Starlette(routes=[Route("/", run, methods=["POST"])])

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
