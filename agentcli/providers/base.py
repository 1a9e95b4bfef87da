"""The provider interface every wire protocol implements."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol

from agentcli.conversation.encoded import EncodedMessages
from agentcli.conversation.events import Event, StepEnd
from agentcli.conversation.messages import Message
from agentcli.records import dataclass, field


@dataclass(slots=True)
class ModelRequest:
    system: str
    messages: list[Message]
    tools: list[dict[str, Any]] = field(default_factory=list)  # {name, description, parameters}
    max_tokens: int | None = None  # a cap for this request alone (an MCP server's sampling)
    # The conversation's kept encodings of its messages (Conversation.encodings), which a
    # provider reuses for what it sent before; None: the messages are encoded anew.
    encodings: dict[str, EncodedMessages] | None = None


@dataclass(frozen=True, slots=True)
class ListedModel:
    """A model a provider offers (`agentcli models`)."""

    id: str  # as the provider names it: the MODEL of PROVIDER:MODEL
    detail: str = ""  # a display name, size or owner, when the provider says


# What a provider's stream yields: an event, a list of the events that arrived together
# (one read of the network: handed on in one item, not one await apiece), or the StepEnd.
StreamItem = Event | StepEnd | list[Event]


def events_in(item: StreamItem) -> list[Event] | tuple[Event | StepEnd]:
    """The events of one stream item: a list as it came, anything else on its own."""
    return item if type(item) is list else (item,)  # type() is: the hot path of streaming


class Provider(Protocol):
    name: str  # e.g. "openai"
    model: str

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        """Yields the step's events (one at a time or in lists), then exactly one StepEnd.
        Raises ProviderError."""
        ...

    async def aclose(self) -> None: ...
