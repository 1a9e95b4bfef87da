"""Builds the provider a run's settings name."""

from __future__ import annotations

from agentcli.errors import UsageError
from agentcli.providers.base import Provider
from agentcli.settings import RunSettings


def make_provider(settings: RunSettings) -> Provider:
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
    raise UsageError(f"provider type {config.type!r} is not available")
