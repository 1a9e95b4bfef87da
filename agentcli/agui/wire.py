"""Between agentcli's events and messages and the `ag-ui-protocol` SDK's models: every event
that leaves the process is validated by the SDK's models and encoded by its encoder."""

from __future__ import annotations

from functools import cache
from typing import Any

from agentcli.conversation import events as ev
from agentcli.conversation.messages import Message, ToolCall

CONFIRM_TOOL = "confirm_tool_call"  # the frontend tool that answers approvals (serve)
CONFIRM_PREFIX = "confirm-"  # its call id: this prefix and the id of the call it approves

CONFIRM_SPEC: dict[str, Any] = {
    "name": CONFIRM_TOOL,
    "description": (
        "Ask the user to approve or deny a tool call the agent wants to run. Answer with "
        '{"approved": true} or {"approved": false, "reason": "..."}.'
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "toolCallId": {"type": "string", "description": "The call waiting for approval"},
            "tool": {"type": "string"},
            "arguments": {"type": "object"},
            "risk": {"type": "string", "enum": ["low", "medium", "high"]},
            "reason": {"type": "string", "description": "Why it needs approval"},
        },
        "required": ["toolCallId", "tool", "arguments", "risk", "reason"],
    },
}


@cache
def _event_adapter() -> Any:
    from ag_ui.core import Event
    from pydantic import TypeAdapter

    return TypeAdapter(Event)


def to_sdk(event: ev.Event) -> Any:
    """The SDK's model of `event` (raises pydantic's ValidationError when it is not valid)."""
    return _event_adapter().validate_python(event.to_wire())


@cache
def _encoder() -> Any:
    from ag_ui.encoder import EventEncoder

    return EventEncoder()


def encode(event: ev.Event) -> str:
    """One `data: ...` SSE record, as the SDK's encoder writes it."""
    return _encoder().encode(to_sdk(event))


def text_of(content: Any) -> str:
    """A message's text: a string, or the text parts of a multimodal content list."""
    if isinstance(content, str):
        return content
    parts = []
    for part in content or []:
        text = getattr(part, "text", None)
        if isinstance(text, str):
            parts.append(text)
    return "\n".join(parts)


def message_from_sdk(message: Any) -> Message | None:
    """An AG-UI message as agentcli's (user, assistant and tool messages; None otherwise)."""
    role = message.role
    if role == "user":
        return Message(role="user", content=text_of(message.content), id=message.id)
    if role == "assistant":
        calls = [
            ToolCall(id=c.id, name=c.function.name, arguments=c.function.arguments)
            for c in message.tool_calls or []
            if c.function.name != CONFIRM_TOOL
        ]
        return Message(
            role="assistant", content=message.content or "", tool_calls=calls, id=message.id
        )
    if role == "tool":
        result = Message.tool_result(
            message.tool_call_id, text_of(message.content), error=message.error
        )
        result.id = message.id  # the client's: its history and the thread's stay alike
        return result
    return None


def message_to_wire(message: Message) -> dict[str, Any]:
    """agentcli's message as AG-UI's (camelCase; optional fields omitted)."""
    wire: dict[str, Any] = {"id": message.id, "role": message.role}
    if message.role == "tool":
        wire["content"] = message.content
        wire["toolCallId"] = message.tool_call_id
        if message.error is not None:
            wire["error"] = message.error
        return wire
    if message.content or message.role != "assistant":
        wire["content"] = message.content
    if message.tool_calls:
        wire["toolCalls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in message.tool_calls
        ]
    return wire
