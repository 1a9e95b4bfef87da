"""A provider type, as a ProviderSpec: its name, its defaults and how it is made from a
run's settings (agentcli.providers.table holds the table of them), and what an HTTP
provider is made with."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from agentcli.records import dataclass

if TYPE_CHECKING:
    from agentcli.providers.base import ListedModel, Provider
    from agentcli.settings import RunSettings


@dataclass(frozen=True, slots=True)
class ProviderSpec:
    type: str  # what `[providers.NAME] type = ...` names
    create: Callable[[RunSettings], Provider]
    default_model: str | Callable[[], str] = ""  # a function: looked up when asked
    api_key_env: str = ""  # the key's variable in its preset table
    official_url: str = ""  # the service's own URL: a call there needs a key
    preset: bool = False  # a [providers.TYPE] table exists without any configuration
    configurable: bool = True  # False: reached otherwise (the AG-UI client, by --agent)
    installed: Callable[[], bool] | None = None  # in-process: its runtime is installed
    list_models: Callable[[], list[ListedModel]] | None = None  # listed without a client
    # The provider-defined tools a `client_tools` list may enable: name -> Tool class.
    client_tools: Callable[[], Mapping[str, Callable[[], Any]]] | None = None
    # The model's context window from the provider's own settings (the local model's
    # n_ctx), when the provider decides it; None: look it up elsewhere.
    context_window: Callable[[RunSettings], int | None] | None = None
    # A small model's own words for the REPL: its banner line and `/status`'s lines of
    # what it can and cannot do (the embedded demo model says it is one).
    banner: Callable[[], str] | None = None
    about: Callable[[], list[str]] | None = None
    # Whole-file overwrites its model chooses are asked of a person, even under --yes.
    overwrites_need_a_person: bool = False
    origin: str = "builtin"  # or the plug-in's package and version

    def model(self) -> str:
        return self.default_model() if callable(self.default_model) else self.default_model


def connection(settings: RunSettings) -> dict[str, Any]:
    """What an HTTP provider is made with: its name, its server and its key."""
    config = settings.provider
    return {
        "name": config.name,
        "base_url": config.base_url,
        "api_key": settings.api_key,
        "api_key_env": config.api_key_env,
    }
