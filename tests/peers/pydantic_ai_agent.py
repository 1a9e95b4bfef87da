"""A pydantic-ai AG-UI app (a peer nobody here wrote) on 127.0.0.1:PORT, its model a
FunctionModel that follows the user's message as a script: `call TOOL {json}`, or several
joined by ` then `, each called in turn (a tool the client offers, or one of the agent's
own: `lookup`, `remember`, `recall`), then an answer that repeats every result it saw since
the user's message. The agent's own tools keep AG-UI state: `remember` adds a note
(sent as a STATE_DELTA), `recall` returns the notes of the state the client sent.

    python pydantic_ai_agent.py PORT
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from typing import Any

import uvicorn
from ag_ui.core import EventType, StateDeltaEvent, StateSnapshotEvent
from pydantic import BaseModel
from pydantic_ai import Agent, RunContext, ToolReturn
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
from pydantic_ai.ui import StateDeps
from pydantic_ai.ui.ag_ui import AGUIAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route


class Notes(BaseModel):
    notes: list[str] = []


def script(messages: list[ModelMessage]) -> tuple[str, list[str], int]:
    """The last user prompt, what the tools said since, and how many prompts there were."""
    prompt, said, prompts = "", [], 0
    for message in messages:
        for part in message.parts if isinstance(message, ModelRequest) else []:
            if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                prompt, said, prompts = part.content, [], prompts + 1
            elif isinstance(part, ToolReturnPart):
                said.append(f"the tool said: {part.content}")
            elif isinstance(part, RetryPromptPart):
                said.append(f"the tool failed: {part.content}")
    return prompt, said, prompts


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """What the model answers, whole; `stream` sends it in pieces."""
    prompt, said, prompts = script(messages)
    offered = sorted(t.name for t in info.function_tools)
    steps = [s.strip() for s in prompt.split(" then ")] if prompt.startswith("call ") else []
    if len(said) < len(steps):
        name, _, args = steps[len(said)][len("call ") :].partition(" ")
        if name in offered:
            call_id = f"pai_{prompts}_{len(said) + 1}"
            return ModelResponse(parts=[ToolCallPart(name, json.loads(args or "{}"), call_id)])
    if said:
        return ModelResponse(parts=[TextPart(" | ".join(said))])
    return ModelResponse(parts=[TextPart(f"tools offered: {', '.join(offered)}")])


async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    for part in model(messages, info).parts:
        if isinstance(part, TextPart):
            words = part.content.split(" ")
            for i, word in enumerate(words):
                yield word if i == len(words) - 1 else word + " "
        elif isinstance(part, ToolCallPart):
            args = part.args_as_json_str()
            name, call_id = part.tool_name, part.tool_call_id
            yield {0: DeltaToolCall(name=name, json_args=args[:5], tool_call_id=call_id)}
            yield {0: DeltaToolCall(json_args=args[5:])}


agent = Agent(FunctionModel(model, stream_function=stream), deps_type=StateDeps[Notes])


@agent.tool_plain
def lookup(key: str) -> str:
    """The agent's own tool: a value only it knows."""
    return f"{key} is 42"


@agent.tool
def remember(ctx: RunContext[StateDeps[Notes]], note: str) -> ToolReturn:
    """Adds a note to the shared state: the first as a STATE_SNAPSHOT, later ones as a
    STATE_DELTA (JSON Patch) on the state the client sent."""
    notes = ctx.deps.state.notes
    if notes:
        delta = [{"op": "add", "path": "/notes/-", "value": note}]
        event: Any = StateDeltaEvent(type=EventType.STATE_DELTA, delta=delta)
    else:
        event = StateSnapshotEvent(type=EventType.STATE_SNAPSHOT, snapshot={"notes": [note]})
    notes.append(note)
    return ToolReturn(return_value=f"remembered {note}", metadata=[event])


@agent.tool
def recall(ctx: RunContext[StateDeps[Notes]]) -> str:
    """The notes of the state the client sent in this run."""
    return "notes: " + ", ".join(ctx.deps.state.notes)


async def run(request: Request) -> Response:
    return await AGUIAdapter.dispatch_request(request, agent=agent, deps=StateDeps(Notes()))


app = Starlette(routes=[Route("/", run, methods=["POST"])])

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
