"""The one table of provider types. A type is a ProviderSpec: its name, its defaults and how
it is made from a run's settings. The built-ins are registered through the same
`register_providers(register)` hook as an `agentcli.providers` plug-in
(agentcli.providers.builtin); plug-ins are looked up only for a type no built-in has, so
reading the table imports no provider module and scans no entry points."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from agentcli.records import dataclass, replace

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
    origin: str = "builtin"  # or the plug-in's package and version

    def model(self) -> str:
        return self.default_model() if callable(self.default_model) else self.default_model


class ProviderRegistrar:
    """The `register` a `register_providers` is given: `register(spec)`, or the short form
    `register(type, factory, *, default_model="")` with `factory(settings)` -> Provider."""

    def __init__(self, origin: str) -> None:
        self.origin = origin
        self.specs: dict[str, ProviderSpec] = {}

    def __call__(self, kind: str | ProviderSpec, factory: Callable[[Any], Any] | None = None,
                 *, default_model: str = "") -> ProviderSpec:  # fmt: skip
        if isinstance(kind, ProviderSpec):
            spec = replace(kind, origin=self.origin)
        elif factory is None:
            raise TypeError(f"register({kind!r}) needs a factory(settings) or a ProviderSpec")
        else:
            spec = ProviderSpec(kind, factory, default_model=default_model, origin=self.origin)
        self.specs.setdefault(spec.type, spec)  # the first registration of a type wins
        return spec


def builtin_specs() -> dict[str, ProviderSpec]:
    from agentcli.providers.builtin import register_providers

    registrar = ProviderRegistrar("builtin")
    register_providers(registrar)
    return registrar.specs


def provider_spec(kind: Any) -> ProviderSpec | None:
    """A type's spec: a built-in's, else an `agentcli.providers` plug-in's."""
    if not isinstance(kind, str):
        return None
    spec = builtin_specs().get(kind)
    if spec is not None:
        return spec
    from agentcli.plugins import provider_plugins

    return provider_plugins()[0].get(kind)


def connection(settings: RunSettings) -> dict[str, Any]:
    """What an HTTP provider is made with: its name, its server and its key."""
    config = settings.provider
    return {"name": config.name, "base_url": config.base_url, "api_key": settings.api_key,
            "api_key_env": config.api_key_env}  # fmt: skip
