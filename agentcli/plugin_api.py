"""What a plug-in writes against: the provider and tool interfaces, typed, in one public
module. A plug-in imports from here only; the rest of agentcli is internal and may change.
docs/extending.md has a worked example, which a test installs as a package and runs.

A **provider** plug-in has an entry point in the group `agentcli.providers` naming a module
with `register_providers(register: ProviderRegister)`. Its factory gets the run's
`ProviderSettings` and returns an object that satisfies `Provider`: a `name`, a `model`,
`stream(request)` yielding the step's events then exactly one `StepEnd`, and `aclose()`.
agentcli checks the object when it is made and names what it lacks in one line.

A **tool** plug-in has an entry point in the group `agentcli.tools` naming a module with
`register_tools(register: ToolRegister)`: `register(fn, name=..., risk=..., examples=...)`
turns a typed function with a docstring (sync or async) into a tool.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from agentcli.conversation.events import (
    Event,
    StepEnd,
    TextMessageContent,
    TextMessageEnd,
    TextMessageStart,
    ToolCallArgs,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from agentcli.conversation.images import ImagePart
from agentcli.conversation.messages import Message, ToolCall
from agentcli.providers.base import ListedModel, ModelRequest
from agentcli.providers.spec import ProviderSpec

__all__ = [
    "Event",
    "ImagePart",
    "ListedModel",
    "Message",
    "ModelRequest",
    "Provider",
    "ProviderRegister",
    "ProviderSettings",
    "ProviderSpec",
    "StepEnd",
    "TextMessageContent",
    "TextMessageEnd",
    "TextMessageStart",
    "ToolCall",
    "ToolCallArgs",
    "ToolCallEnd",
    "ToolCallStart",
    "ToolRegister",
    "Usage",
]

Risk = Literal["low", "medium", "high"]


class ModelChoice(Protocol):
    """The model a run asked for: `work:big` is provider `work`, name `big`."""

    @property
    def provider(self) -> str: ...
    @property
    def name(self) -> str: ...


class ProviderTable(Protocol):
    """The provider's `[providers.NAME]` table, resolved."""

    @property
    def name(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def base_url(self) -> str | None: ...
    @property
    def api_key_env(self) -> str: ...
    @property
    def options(self) -> Mapping[str, Any]: ...  # the whole table, as written


class ProviderSettings(Protocol):
    """What a provider's factory is given (a read-only view of the run's settings)."""

    @property
    def model(self) -> ModelChoice: ...
    @property
    def provider(self) -> ProviderTable: ...
    @property
    def api_key(self) -> str | None: ...  # from the variable `api_key_env` names
    @property
    def workspace(self) -> Path: ...


@runtime_checkable
class Provider(Protocol):
    """One model behind one wire protocol. `stream` yields, for one model step, text as
    TextMessageStart / TextMessageContent / TextMessageEnd and tool calls as ToolCallStart /
    ToolCallArgs (the JSON arguments, in pieces or whole) / ToolCallEnd, then exactly one
    StepEnd (finish_reason "stop", or "tool_calls" when it asked for tools; usage when
    known). A failure raises an exception whose message is said to the user in one line.
    A provider that sees images also sets `takes_images = True`: its messages then carry
    `images` (ImagePart); otherwise only their descriptions, in the text."""

    name: str  # the provider's name, as the user wrote it in --model (settings.provider.name)
    model: str  # the model's name (settings.model.name)

    def stream(self, request: ModelRequest) -> AsyncIterator[Event | StepEnd]: ...

    async def aclose(self) -> None: ...


class ProviderRegister(Protocol):
    """`register` as `register_providers` gets it: the short form, or a whole spec."""

    def __call__(
        self,
        kind: str | ProviderSpec,
        factory: Callable[[ProviderSettings], Provider] | None = None,
        *,
        default_model: str = "",
    ) -> ProviderSpec: ...


class ToolRegister(Protocol):
    """`register` as `register_tools` gets it. The JSON Schema comes from the function's
    type hints, the description from its docstring (an `Args:` section describes the
    parameters); a `str` result is text, anything JSON is structured content, an exception
    is an error result. `examples`: (request, arguments) pairs the local model routes by."""

    def __call__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        risk: Risk = "medium",
        examples: list[tuple[str, dict[str, Any]]] | None = None,
    ) -> Any: ...
