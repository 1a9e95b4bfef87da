"""Builds the provider a run's settings name."""

from __future__ import annotations

from agentcli.errors import UsageError
from agentcli.providers.base import Provider
from agentcli.settings import RunSettings


def make_provider(settings: RunSettings) -> Provider:
    if settings.model.provider == "openai":
        from agentcli.providers.openai import OpenAIProvider

        return OpenAIProvider(
            settings.model.name,
            base_url=settings.base_url,
            api_key=settings.api_key,
            api_key_env=settings.api_key_env,
        )
    raise UsageError(f"provider {settings.model.provider!r} is not available")
