"""A LangGraph graph served through `ag-ui-langgraph` (peers nobody here wrote) on
127.0.0.1:PORT. Its model is langchain-core's FakeMessagesListChatModel, which answers in
one piece (no token stream), as many chat models behind LangGraph do: the adapter then sends
a call whole, or only in its MESSAGES_SNAPSHOT. The model follows the user's message as a
script (`call TOOL {json}`, several joined by ` then `): a tool the client offers (the
client runs it), or the graph's own `lookup`; then it answers with every result it saw
since the user's message; `show context` answers with the context the client sent. The
graph's state keeps `visits` (a STATE_SNAPSHOT to the client).

    python langgraph_agent.py PORT
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import uvicorn
from ag_ui.core import RunAgentInput
from ag_ui.encoder import EventEncoder
from ag_ui_langgraph import LangGraphAgent
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route
from typing_extensions import TypedDict


@tool
def lookup(key: str) -> str:
    """The graph's own tool: a value only it knows."""
    return f"{key} is 42"


# The adapter puts the client's context in the state's "ag-ui" key (a name a class body
# cannot declare); the model reads it to answer `show context`.
State = TypedDict(
    "State",
    {
        "messages": Annotated[list[AnyMessage], add_messages],
        "tools": list,
        "visits": int,
        "ag-ui": dict,
    },
    total=False,
)


def decide(messages: list[BaseMessage], offered: set[str], context: list[Any]) -> AIMessage:
    prompt, said, prompts = "", [], 0
    for message in messages:
        if isinstance(message, HumanMessage) and isinstance(message.content, str):
            prompt, said, prompts = message.content, [], prompts + 1
        elif isinstance(message, ToolMessage):
            said.append(f"the tool said: {message.content}")
    if prompt == "show context":  # the adapter's Context models, or dicts from a checkpoint
        items = [c if isinstance(c, dict) else c.model_dump() for c in context]
        return AIMessage(content=" | ".join(f"{c['description']}: {c['value']}" for c in items))
    steps = [s.strip() for s in prompt.split(" then ")] if prompt.startswith("call ") else []
    if len(said) < len(steps):
        name, _, args = steps[len(said)][len("call ") :].partition(" ")
        if name in offered:
            call_id = f"lg_{prompts}_{len(said) + 1}"
            call = {"name": name, "args": json.loads(args or "{}"), "id": call_id}
            return AIMessage(content="", tool_calls=[call])
    if said:
        return AIMessage(content=" | ".join(said))
    return AIMessage(content=f"tools offered: {', '.join(sorted(offered))}")


def agent_node(state: State) -> dict[str, Any]:
    offered = {t["name"] for t in state.get("tools") or [] if isinstance(t, dict)} | {"lookup"}
    answer = decide(state["messages"], offered, (state.get("ag-ui") or {}).get("context") or [])
    model = FakeMessagesListChatModel(responses=[answer])
    return {"messages": [model.invoke(state["messages"])], "visits": state.get("visits", 0) + 1}


def route(state: State) -> str:
    last = state["messages"][-1]
    own = [c for c in getattr(last, "tool_calls", []) or [] if c["name"] == "lookup"]
    return "tools" if own else END


graph = StateGraph(State)
graph.add_node("agent", agent_node)
graph.add_node("tools", ToolNode([lookup]))
graph.add_edge(START, "agent")
graph.add_conditional_edges("agent", route, {"tools": "tools", END: END})
graph.add_edge("tools", "agent")
agent = LangGraphAgent(
    name="peer", graph=graph.compile(checkpointer=MemorySaver()), emit_raw_events=False
)


async def run(request: Request) -> StreamingResponse:
    run_input = RunAgentInput.model_validate(await request.json())
    encoder = EventEncoder(accept=request.headers.get("accept"))

    async def events() -> Any:
        async for event in agent.clone().run(run_input):
            yield encoder.encode(event)

    return StreamingResponse(events(), media_type=encoder.get_content_type())


app = Starlette(routes=[Route("/", run, methods=["POST"])])

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
