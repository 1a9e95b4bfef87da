"""Builds the provider a run's settings name."""

from __future__ import annotations

from agentcli.errors import ConfigError, UsageError
from agentcli.providers.base import Provider
from agentcli.settings import RunSettings


def make_provider(settings: RunSettings) -> Provider:
    provider = _make(settings)
    if hasattr(provider, "max_wait"):  # an HTTP provider: how long to wait for a server
        config = settings.config
        provider.first_byte_timeout = _seconds(config, "requests.first_byte_timeout")
        provider.max_wait = _seconds(config, "requests.max_wait")
    return provider


def _seconds(config, key: str) -> float:  # type: ignore[no-untyped-def]
    value = float(config.get(key))
    if value <= 0:
        raise ConfigError(f"{key} must be a positive number of seconds, not {value:g}")
    return value


def _make(settings: RunSettings) -> Provider:
    config = settings.provider
    if config.type == "openai":
        from agentcli.providers.openai import OpenAIProvider

        return OpenAIProvider(
            settings.model.name,
            name=config.name,
            base_url=config.base_url,
            api_key=settings.api_key,
            api_key_env=config.api_key_env,
        )
    if config.type == "anthropic":
        from agentcli.providers.anthropic import DEFAULT_MAX_TOKENS, AnthropicProvider

        options = config.options
        server_tools = []
        if options.get("web_search"):  # provider-executed: Anthropic runs it, we only show it
            server_tools.append(
                {"type": "web_search_20250305", "name": "web_search",
                 "max_uses": int(options.get("web_search_max_uses", 5))}
            )  # fmt: skip
        return AnthropicProvider(
            settings.model.name,
            name=config.name,
            base_url=config.base_url,
            api_key=settings.api_key,
            api_key_env=config.api_key_env,
            max_tokens=int(options.get("max_tokens", DEFAULT_MAX_TOKENS)),
            server_tools=server_tools,
        )
    if config.type == "local":
        from agentcli.providers.local import install_hint, runtime_installed

        if not runtime_installed():
            raise ConfigError(f"the local model is not installed: {install_hint()}")
        from agentcli.providers.local import LocalProvider

        return LocalProvider(
            settings.model.name,
            name=config.name,
            options=dict(config.options),
            workspace=settings.workspace,
        )
    if config.type == "agui":
        from agentcli.agui.client import AguiProvider

        return AguiProvider(config.base_url or "", api_key=settings.api_key)
    from agentcli.settings import plugin_provider

    plugin = plugin_provider(config.type)  # an `agentcli.providers` plug-in
    if plugin is not None:
        return plugin.factory(settings)
    raise UsageError(f"provider type {config.type!r} is not available")
