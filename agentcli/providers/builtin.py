"""The built-in provider types, registered through the same hook as a plug-in's
(`register_providers(register)`, see agentcli.plugins). Each is made by its module's
`from_settings(settings)`, imported only when a provider is made: reading the defaults
here costs no HTTP client, event loop or model runtime."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from agentcli.providers.spec import ProviderSpec


def _made_by(module: str) -> Callable[[Any], Any]:
    def create(settings: Any) -> Any:
        return importlib.import_module(module).from_settings(settings)

    return create


def _anthropic_tools() -> Any:
    from agentcli.tools.provider_defined import PROVIDER_TOOLS

    return PROVIDER_TOOLS


def _local(name: str) -> Callable[[], Any]:
    def call() -> Any:
        from agentcli.providers import local

        return getattr(local, name)()

    return call


OPENAI = ProviderSpec(
    "openai",
    _made_by("agentcli.providers.openai"),
    default_model="gpt-4.1-mini",
    api_key_env="OPENAI_API_KEY",
    official_url="https://api.openai.com/v1",
    preset=True,
)
ANTHROPIC = ProviderSpec(
    "anthropic",
    _made_by("agentcli.providers.anthropic"),
    default_model="claude-sonnet-4-5",
    api_key_env="ANTHROPIC_API_KEY",
    official_url="https://api.anthropic.com",
    preset=True,
    client_tools=_anthropic_tools,
)


def _local_about(name: str) -> Any:
    def call() -> Any:
        from agentcli.providers.local import about

        return getattr(about, name)()

    return call


def _local_window(settings: Any) -> int | None:
    from agentcli.providers.local.provider import LocalOptions

    return LocalOptions.from_mapping(dict(settings.provider.options)).n_ctx


LOCAL = ProviderSpec(  # in-process: no key, no server; the best installed model by default
    "local",
    _made_by("agentcli.providers.local"),
    default_model=_local("default_model"),
    api_key_env="AGENTCLI_LOCAL_NO_KEY",
    preset=True,
    installed=_local("runtime_installed"),
    list_models=_local("listed_models"),
    context_window=_local_window,
    banner=_local_about("banner_line"),
    about=_local_about("about_lines"),
    overwrites_need_a_person=True,
)
AGUI = ProviderSpec("agui", _made_by("agentcli.agui.client"), configurable=False)  # --agent URL


def register_providers(register: Any) -> None:
    for spec in (OPENAI, ANTHROPIC, LOCAL, AGUI):
        register(spec)
